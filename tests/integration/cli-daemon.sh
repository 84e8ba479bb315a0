#!/bin/bash
# cli-daemon.sh: atimectl against the real daemon as operators use it:
# options anywhere on the line, per-command help, bash completion, errors
# that name what is valid, exit statuses, output that fits the terminal.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
# Mount points of a fixed name, so that the tables are the same every run:
# a tmpfs on /srv in this namespace (the host's /srv is not touched).
M=/srv
LONG=$M/a-rather-long-directory-name/with-more-levels/and-a-mount-point-at-the-end
mkdir -p /srv && mount -t tmpfs -o size=1m,mode=0755 atimed-test /srv || bail "tmpfs on /srv"
mkdir -p $M/alpha $M/beta "$LONG" $T/tmpfiles.d
mount -t tmpfs -o strictatime,size=8m tmpfs $M/alpha &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/beta &&
mount -t tmpfs -o noatime,size=8m tmpfs "$LONG" || bail mount
# An fstab of the test's own over /etc/fstab (in this namespace only), so
# that the host's entries show no drift in the tables.
: >$T/etc-fstab
[ -f /etc/fstab ] && mount --bind $T/etc-fstab /etc/fstab || bail "bind mount over /etc/fstab"
# A reader of atime on the long one: systemd-tmpfiles ages its cache.
echo "D $LONG/cache 0755 root root 10d" >$T/tmpfiles.d/cache.conf
# And a mail spool configured as a symlink on beta that points into it.
mkdir -p "$LONG/mail" && echo "From alice@example.com" >"$LONG/mail/alice" && ln -s "$LONG/mail" $M/beta/spool-link
# Only the test's mounts are tracked: every other mount point is excluded.
others=$(findmnt -rno TARGET | grep -v -e "^$T" -e '^/$' -e '^/srv' | sed -E 's|^(/[^/]+)/.*|\1|' | grep -vx /tmp | sort -u | tr '\n' ' ')
write_config "[mounts] exclude_paths += [/]srv [/]run $others" '[sampler] walk_rate' \
        '[store] rings = 1s:10min, 10s:1h' "[consumers] tmpfiles_dirs = $T/tmpfiles.d" \
        "[consumers] mail_spools = $M/beta/spool-link" "[consumers] tmpreaper_conf = $T/none" \
        "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none"
start_daemon

# --- 1. options anywhere, help per command
out=$(ctl status --json)
is "status --json: options after the command are parsed" "$?" "0"
is "status --json prints JSON" "$(echo "$out" | jq -r '.mounts | length')" "3"
is "status MOUNT --json: the one mount" "$(ctl status $M/alpha --json | jq -r '.mounts[0].target')" "$M/alpha"
is "--json between the command and its argument" "$(ctl recommend --json $M/beta | jq -r '.recommendations[0].target')" "$M/beta"
out=$(ctl status -h)
is "status -h: exit 0" "$?" "0"
like "status -h: status's own usage" "$out" "^Usage: atimectl \\[OPTIONS\\] status \\[PATH\\]"
like "status -h: its own options" "$out" "-o, --output LIST"
is "history --help = help history" "$(ctl history --help)" "$(ctl help history)"
like "history --help names --since" "$(ctl history --help)" "--since DURATION"
like "atimectl help lists every command" "$(ctl help)" "remount PATH \\[POLICY\\]"
ctl status --since 1h >/dev/null 2>$T/err
is "an option of another command: exit 2" "$?" "2"
like "and says which does not apply" "$(cat $T/err)" "--since does not apply to 'status'. Try 'atimectl status --help'"
ctl help frob >/dev/null 2>$T/err
is "help of an unknown command: exit 2" "$?" "2"
is "-- ends the options" "$(ctl --json -- status $M/alpha | jq -r '.mounts[0].target')" "$M/alpha"

# --- 1. bash completion, sourced and asked as bash asks it
comp() { # WORDS... : the completions for the last word
        PATH=$top_builddir:$PATH ATIMED_SOCKET=$T/sock bash -c '
                . "$1"; shift
                COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
                _atimectl
                printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' comp "$top_srcdir/completion/atimectl" "$@"
}
is "completion: the commands" "$(comp atimectl re)" "recommend reload remount "
is "completion: a command's options" "$(comp atimectl status --f)" "--full "
is "completion: common options after the command" "$(comp atimectl history --j)" "--json "
is "completion: history's own options" "$(comp atimectl history --s)" "--since --socket "
is "completion: tracked mounts from the daemon" "$(comp atimectl status '')" "$LONG $M/alpha $M/beta "
is "completion: mounts after options" "$(comp atimectl --json probe $M/al)" "$M/alpha "
is "completion: policies after remount MOUNT" "$(comp atimectl remount $M/alpha no)" "noatime noatime,lazytime nodiratime nolazytime "
is "completion: --set MOUNT=" "$(comp atimectl fstab --set $M/b)" "$M/beta= "
is "completion: --set MOUNT=POLICY (bash splits at =)" "$(comp atimectl fstab --set $M/beta = re)" "relatime relatime,lazytime relatime,nodiratime "
is "completion: -o columns, comma lists" "$(comp atimectl status -o TARGET,FS)" "TARGET,FSTYPE "
is "completion: --socket given on the line" "$(PATH=$top_builddir:$PATH bash -c '. "$1"; COMP_WORDS=(atimectl -s "$2" status ""); COMP_CWORD=4; _atimectl; echo ${#COMPREPLY[@]}' x "$top_srcdir/completion/atimectl" $T/sock)" "3"

# --- 3. output that fits: 80 columns, in a real terminal too
# Deterministic values: wait until every mount has been probed, measured
# and has history for its sparkline (a mount's samples are recorded once it
# has been seen at two ticks, which can come after its first figure).
check "every mount probed, measured and in history" wait_until 30 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock call io.atimed.GetStatus '{\"history_s\":3600}' | jq '[.mounts[] | select(.probe != null and .activity != null and ((.history // []) | length) > 0)] | length')\" = 3 ]"
# What varies: the sparkline's cells (how long the daemon has run) and the
# length of the last interval in the legend (a sweep that comes too soon
# after a late one is skipped, so a 1 s interval can measure 2 s).
normalise() { perl -CSD -pe 's/[\x{b7}\x{2581}-\x{2588}]/~/g; s/(per minute, last )[1-9][0-9]*s\./$1Ns./'; }
F=$top_srcdir/tests/fixtures/cli
golden() { # NAME COMMAND...: the output against tests/fixtures/cli/NAME
        local name=$1
        shift
        "$@" | normalise >$T/$name.out
        if [ -n "${ATIMED_UPDATE_GOLDEN:-}" ]; then cp $T/$name.out $F/$name; fi
        if diff -u $F/$name $T/$name.out >$T/$name.diff; then
                tap_result 0 "golden: $name"
        else
                tap_result 1 "golden: $name"
                sed 's/^/#   /' $T/$name.diff | head -30
        fi
}
export LC_ALL=C.UTF-8
golden status-80 env COLUMNS=80 "$ATIMECTL" --socket $T/sock status
like "the legend names the last interval's length, in whole seconds" "$(COLUMNS=80 ctl status)" \
        "per minute, last [1-9][0-9]*s\.\$"
golden status-80-no-legend env COLUMNS=80 "$ATIMECTL" --socket $T/sock status --no-legend
golden status-80-output env COLUMNS=80 "$ATIMECTL" --socket $T/sock status -o TARGET,ATIME,DEVICE,DEV-WRITES
golden status-80-plus env COLUMNS=80 "$ATIMECTL" --socket $T/sock status -o +DEVICE
golden status-full env COLUMNS=80 "$ATIMECTL" --socket $T/sock status --full -o TARGET,ATIME
golden status-ascii env LC_ALL=C COLUMNS=80 "$ATIMECTL" --socket $T/sock status -o TARGET,FSTYPE,ATIME,PROBE
widest() { perl -CSD -ne 'chomp; $m = length if length > $m; END { print $m + 0 }'; }
is "COLUMNS=80: no line over 80" "$(COLUMNS=80 ctl status | widest)" "$(COLUMNS=80 ctl status | widest | awk '$1 <= 80 { print }')"
like "the long target is shortened in the middle, its last component whole" "$(COLUMNS=80 ctl status)" \
        "^/srv/a-r[^ ]*…/and-a-mount-point-at-the-end +tmpfs"
is "--full never shortens" "$(COLUMNS=80 ctl status --full -o TARGET --no-legend | grep -c -- "^$LONG\$")" "1"
is "COLUMNS=70: no line over 70" "$(COLUMNS=70 ctl status --no-legend | widest | awk '{ print ($1 <= 70) }')" "1"
is "without COLUMNS or a tty: 80" "$(env -u COLUMNS "$ATIMECTL" --socket $T/sock status | widest | awk '{ print ($1 <= 80 && $1 > 60) }')" "1"
if command -v tmux >/dev/null; then
        check "tmux: atimectl status ran in an 80x24 terminal" tty_status 80 24
        is "tmux: exit 0" "$(cat $T/tmux.rc)" "0"
        is "tmux: the tty's width is used: no line over 80 (wrapped lines joined)" "$(widest <$T/pane | awk '{ print ($1 <= 80) }')" "1"
        # LAST-HOUR gives way before the long target would have to lose
        # its last component.
        like "tmux: the header is one line, LAST-HOUR left out for the long target" "$(cat $T/pane)" \
                "^TARGET +FSTYPE +ATIME +PROBE +UPDATES/MIN\$"
        is "tmux: the same table as COLUMNS=80" "$(grep -v '^$' $T/pane | normalise)" "$(grep -v '^$' $F/status-80)"
else
        diag "no tmux: the terminal test is skipped"
fi

# One scale for every row's sparkline: reads on alpha only.
for i in $(seq 1 40); do echo "file $i" >$M/alpha/f$i; done
# status --json has no history unless asked: ask as the table does.
spark_peak() { ctl call io.atimed.GetStatus "{\"target\":\"$1\",\"history_s\":3600}" | jq -r '[.mounts[0].history[] | select(. != null)] | max // 0'; }
check "reads on alpha show in its last hour" wait_until 30 sh -c "cat $M/alpha/f* >/dev/null; \
        $ATIMECTL --socket $T/sock call io.atimed.GetStatus '{\"target\":\"$M/alpha\",\"history_s\":3600}' | \
        jq -e '[.mounts[0].history[] | select(. != null)] | max > 0' >/dev/null"
out=$(COLUMNS=160 ctl status) # wide enough for the long target and LAST-HOUR
like "the legend gives the common scale" "$out" "^LAST-HOUR: one scale for all rows, full block = [0-9.k]+/min\\.\$"
like "the busy row reaches a full block" "$(echo "$out" | grep "^$M/alpha ")" "█"
is "the idle row draws no block above the baseline" "$(echo "$out" | grep "^$M/beta " | grep -c '[▂▃▄▅▆▇█]')" "0"
diag "alpha peak $(spark_peak $M/alpha)/min, beta $(spark_peak $M/beta)/min"

# --- 4. any path: the mount that holds it, as findmnt -T; why one is not tracked
mkdir -p $M/alpha/sub/dir $M/beta/x && ln -s $M/beta/x /srv/to-beta
is "status PATH: the mount holding it" "$(ctl status $M/alpha/sub/dir --json | jq -r '.mounts[0].target')" "$M/alpha"
is "a symlink is resolved" "$(ctl status /srv/to-beta --json | jq -r '.mounts[0].target')" "$M/beta"
is "history PATH" "$(ctl history $M/alpha/sub --json | jq -r '.target')" "$M/alpha"
is "recommend PATH" "$(ctl recommend $M/alpha/sub/dir --json | jq -r '.recommendations[0].target')" "$M/alpha"
is "probe PATH" "$(ctl probe $M/beta/x --json | jq -r '.target')" "$M/beta"
is "remount PATH POLICY: the mount holding it" "$(ctl remount $M/beta/x strictatime --json | jq -c '[.target, .after.vfs_options]')" \
        "[\"$M/beta\",\"rw\"]"
ctl remount $M/beta relatime >/dev/null
ctl status /proc >/dev/null 2>$T/err
is "status /proc: exit 1" "$?" "1"
is "and why: a pseudo filesystem" "$(cat $T/err)" \
        "atimectl: atimed does not track the mount at /proc: its type (proc) is a pseudo filesystem, whose atimes mean nothing."
ctl status /etc >/dev/null 2>$T/err
is "status /etc: exit 1" "$?" "1"
is "names the mount holding it and why it is left out" "$(cat $T/err)" \
        "atimectl: /etc is on the mount at /, which atimed does not track: its path is excluded by exclude_paths in atimed.conf."
ctl status /proc/self/fd >/dev/null 2>$T/err
like "a path under /proc: the proc mount and why" "$(cat $T/err)" "/proc/self/fd is on the mount at /proc, which atimed does not track: its type \\(proc\\)"
ctl status $M/nothing-here >/dev/null 2>$T/err
is "a path that does not exist: no tracked mount" "$(cat $T/err)" "atimectl: no tracked mount at $M/nothing-here."
ctl remount $M/nothing-here noatime >/dev/null 2>$T/err
is "remount of a path that does not exist: exit 1" "$?" "1"
like "never the mount above it" "$(cat $T/err)" "cannot find the mount that holds $M/nothing-here: No such file"

# --- 5. manual changes respect the readers of atime
check "the tmpfiles.d rule is known" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock --json recommend '$LONG' | jq -e '.recommendations[0].consumers[0].source' >/dev/null"
ctl remount "$LONG" relatime >/dev/null || bail "remount relatime"
ctl remount "$LONG" noatime >$T/out 2>$T/err
is "remount below a reader's need: refused, exit 1" "$?" "1"
like "naming the reader and its file:line" "$(cat $T/err)" \
        "noatime on $LONG breaks a reader of atime that needs relatime: .*\\[$T/tmpfiles.d/cache.conf:1\\]"
like "and --force" "$(cat $T/err)" "refused; nothing changed. --force sets noatime anyway."
is "the mount is unchanged" "$(findmnt -no OPTIONS "$LONG" | tr , '\n' | grep -c -x -e noatime)" "0"
is "remount --force: done" "$(ctl remount "$LONG" noatime --force --json 2>/dev/null | jq -r .changed)" "true"
is "relatime or more is never refused" "$(ctl remount "$LONG" strictatime --json | jq -r .changed)" "true"
printf 'tmpfs %s tmpfs strictatime 0 0\n' "$LONG" >$T/fstab.consumer
ctl fstab --file $T/fstab.consumer --set "$LONG=noatime" --write >/dev/null 2>$T/err
is "fstab --set below a reader's need: refused, exit 1" "$?" "1"
like "naming the reader" "$(cat $T/err)" "cache.conf:1"
like "nothing written" "$(cat $T/fstab.consumer)" "strictatime"
ctl fstab --file $T/fstab.consumer --set "$LONG=noatime" --write --force >/dev/null 2>&1
is "fstab --set --force: written" "$(cat $T/fstab.consumer)" "tmpfs $LONG tmpfs noatime 0 0"
ctl fstab --file $T/fstab.consumer --set "$LONG=relatime,lazytime" --write >/dev/null 2>&1
is "fstab --set relatime: allowed" "$?" "0"
ctl remount "$LONG" noatime --force >/dev/null 2>&1

# --- 6. consumers on the mount that really holds their files
is "a spool symlinked from beta into the long mount: the long mount's reader" \
        "$(ctl recommend "$LONG" --json | jq -r '[.recommendations[0].consumers[].kind] | sort | join(" ")')" "mail tmpfiles"
is "not the mount that holds the symlink" "$(ctl recommend $M/beta --json | jq '.recommendations[0].consumers | length')" "0"

# --- 6. drift: the live policy differs from fstab, either way
printf 'tmpfs %s tmpfs defaults 0 0\ntmpfs %s tmpfs noatime 0 0\n' $M/beta $M/alpha >$T/etc-fstab
ctl remount $M/beta noatime >/dev/null || bail "remount beta"
check "the daemon sees beta noatime" wait_until 10 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status $M/beta | jq -r '.mounts[0].atime')\" = noatime ]"
out=$(ctl status)
like "status: a live change the next mount undoes" "$out" \
        "^Drift: $M/beta is noatime live but /etc/fstab says relatime: the next mount brings that back\\. Keep the live one: atimectl fstab --set $M/beta=noatime --write; or undo it: atimectl remount $M/beta relatime\\.\$"
like "status: and the other way, fstab asks for more than is live" "$out" "^Drift: $M/alpha is strictatime live but /etc/fstab says noatime"
is "status: a mount whose fstab entry matches has none" "$(echo "$out" | grep -c "Drift: $LONG")" "0"
like "recommend says it too" "$(ctl recommend $M/beta)" "    - drift: $M/beta is noatime live but /etc/fstab says relatime"
ctl fstab --check >/dev/null 2>$T/err
like "fstab says it (from the kernel's table)" "$(cat $T/err)" "^Drift: $M/beta is noatime live but /etc/fstab says relatime"
is "fstab --json lists both" "$(ctl fstab --check --json 2>/dev/null | jq '.drift | length')" "2"
ctl remount $M/beta relatime >/dev/null
: >$T/etc-fstab

# --- 2. errors name what is valid; exit statuses
ctl history $M/alpha --resolution 5min >/dev/null 2>$T/err
is "a resolution not kept: exit 1" "$?" "1"
is "and the kept ones are named" "$(cat $T/err)" \
        "atimectl: --resolution 5min: atimed keeps 1s and 10s (the rings in atimed.conf, [store] rings)."
ctl history $M/alpha --since soon >/dev/null 2>$T/err
is "a bad duration: exit 2" "$?" "2"
like "with examples of durations" "$(cat $T/err)" "--since soon: expected a duration .* such as 30min, 6h"
ctl fstab --file /dev/null --set /=bogus >/dev/null 2>$T/err
is "fstab --set /=bogus: exit 2" "$?" "2"
like "and the policies are named" "$(cat $T/err)" "'bogus' is not a policy. A POLICY is noatime, relatime or strictatime"
ctl remount $M/alpha sometimes >/dev/null 2>$T/err
like "remount names the policies too" "$(cat $T/err)" "'sometimes' is not a policy. A POLICY is noatime"
ctl status -o TARGET,BOGUS >/dev/null 2>$T/err
is "-o with an unknown column: exit 2" "$?" "2"
like "and the columns are named" "$(cat $T/err)" "unknown column 'BOGUS'; the columns are: TARGET,FSTYPE,DEVICE,ATIME,PROBE"
is "metrics --json: refused (exit 2)" "$(ctl metrics --json >/dev/null 2>$T/err; echo $?)" "2"
like "saying it is Prometheus text" "$(cat $T/err)" "metrics prints the Prometheus text format, not JSON"
like "call prints a string reply as text" "$(ctl call org.varlink.service.GetInterfaceDescription '{"interface":"io.atimed"}')" \
        "^interface io.atimed\$"

# fstab: a 3-field line, a symlinked file, --check, --json, a mount that is nowhere
printf 'tmpfs\t%s\ttmpfs\n# comment\ntmpfs %s tmpfs relatime 0 0\n' $M/alpha $M/beta >$T/fstab.real
ln -s fstab.real $T/fstab
cp $T/fstab.real $T/fstab.orig
out=$(ctl fstab --file $T/fstab --set $M/alpha=noatime 2>$T/err)
like "a 3-field line is edited: the options field added" "$out" "^\+tmpfs	$M/alpha	tmpfs	noatime\$"
is "and not called malformed" "$(grep -c malformed $T/err)" "0"
like "the symlink is followed, and said so" "$out" "^$T/fstab is a symbolic link to $T/fstab.real; working on that"
ctl fstab --file $T/fstab --set $M/alpha=noatime --check >/dev/null 2>&1
is "--check when fstab would change: exit 3" "$?" "3"
is "--check writes nothing" "$(cmp $T/fstab.real $T/fstab.orig && echo same)" "same"
ctl fstab --file $T/fstab --set $M/beta=relatime --check >/dev/null 2>&1
is "--check when fstab already matches: exit 0" "$?" "0"
is "--check --write: a usage error" "$(ctl fstab --file $T/fstab --check --write >/dev/null 2>&1; echo $?)" "2"
out=$(ctl fstab --file $T/fstab --set $M/alpha=noatime --write --json 2>/dev/null)
is "--write --json: exit 0" "$?" "0"
is "--write --json: changed and written" "$(echo "$out" | jq -c '[.changed, .written, .changes[0].target, .changes[0].new_options]')" \
        "[true,true,\"$M/alpha\",\"noatime\"]"
is "the symlink stays a symlink" "$(readlink $T/fstab)" "fstab.real"
like "the file it points to is written" "$(cat $T/fstab.real)" "^tmpfs	$M/alpha	tmpfs	noatime"
is "the backup is next to the real file" "$(cmp "$(echo "$out" | jq -r .backup)" $T/fstab.orig && echo same)" "same"
is "a second --write --json: changed false" "$(ctl fstab --file $T/fstab --set $M/alpha=noatime --write --json | jq -c '[.changed, .written]')" "[false,false]"
ctl fstab --file $T/fstab --set /nonexist=noatime >$T/out 2>$T/err
is "fstab --set on a path neither in fstab nor mounted: exit 1" "$?" "1"
like "saying so" "$(cat $T/err)" "/nonexist is neither in $T/fstab.real nor mounted"
ctl fstab --file $T/fstab --set $M/beta=noatime --set /nonexist=noatime --write >$T/out 2>$T/err
is "one --set that cannot be done: exit 1" "$?" "1"
like "and nothing written" "$(cat $T/err)" "not every --set could be done; nothing written"
like "the file still has relatime for beta" "$(cat $T/fstab.real)" "$M/beta tmpfs relatime 0 0"

# remount --json: changed true, then false
is "remount --json: changed" "$(ctl remount $M/beta noatime --json | jq -c '[.changed, .before.vfs_options, .after.vfs_options]')" \
        '[true,"rw,relatime","rw,noatime"]'
is "remount --json again: not changed" "$(ctl remount $M/beta noatime --json | jq -c '[.changed]')" '[false]'

# a systemd host: the daemon-reload hint after --write
mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system || bail "tmpfs on /run"
like "--write on a systemd host says to daemon-reload" "$(ctl fstab --file $T/fstab --set $M/beta=noatime --write 2>/dev/null)" \
        "run systemctl daemon-reload"

done_testing
