#!/bin/bash
# guard.sh: atimectl remount and fstab --set honour the operator's word. A
# [mount:PATH] needs_atime in atimed.conf refuses a policy below it as a
# reader of atime found by the scan does, naming the file and line that
# declare it; --force overrides it, saying so. The daemon lists the
# declaration among the consumers of its advice (GetRecommendations), so
# every Varlink caller sees it, and a weaker reader found on the same mount
# does not hide it. Without atimed nothing is checked, and that is said.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/said $M/both $M/free $M/skip $T/tmpfiles.d
make_ext4 said 32 || bail mkfs
mount -o loop,relatime $T/said.img $M/said &&
mount -t tmpfs -o strictatime,size=8m tmpfs $M/both &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/free &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/skip || bail mount
# A reader the scan finds on 'both': systemd-tmpfiles ages its cache, for
# which relatime is enough; the operator declares strict there.
echo "D $M/both/cache 0755 root root 10d" >$T/tmpfiles.d/cache.conf
write_config "[mounts] exclude_paths += $HOST_EXCLUDE [/]${M#/}/skip" "[consumers] tmpfiles_dirs = $T/tmpfiles.d" \
        "[consumers] mail_spools = $T/none" "[consumers] tmpreaper_conf = $T/none" \
        "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none" \
        "[mount:$M/said] needs_atime = relatime" "[mount:$M/both] needs_atime = strict" \
        "[mount:$M/free] needs_atime = none"
# The line of each declaration, as the file has it.
line_of() { awk -v s="[mount:$1]" '$0 == s { in_s = 1; next } /^\[/ { in_s = 0 } in_s && /^needs_atime/ { print NR }' $T/atimed.conf; }
SAID="$T/atimed.conf:$(line_of $M/said)"
BOTH="$T/atimed.conf:$(line_of $M/both)"
[ "$SAID" != "$T/atimed.conf:" ] && [ "$BOTH" != "$T/atimed.conf:" ] || bail "no needs_atime lines in $T/atimed.conf"
start_daemon
# The mount's options as the kernel has them (mountinfo's field 6).
opts() { awk -v t="$1" '$5 == t { print $6 }' /proc/self/mountinfo; }
# The raw reply of GetRecommendations for one mount, as any Varlink caller gets it.
recs() { ctl call io.atimed.GetRecommendations "{\"target\":\"$1\"}"; }

# --- 1. the daemon lists the declaration, with its file:line
check "the tmpfiles.d rule on 'both' is known" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock call io.atimed.GetRecommendations '{\"target\":\"$M/both\"}' | jq -e '.recommendations[0].consumers | any(.kind == \"tmpfiles\")' >/dev/null"
is "GetRecommendations: the declaration on 'said', as a consumer" \
        "$(recs $M/said | jq -c '.recommendations[0].consumers | map([.kind, .need, .path, .source])')" \
        "[[\"config\",\"relatime\",\"$M/said\",\"$SAID\"]]"
like "its why names the section and key" "$(recs $M/said | jq -r '.recommendations[0].consumers[0].why')" \
        "\\[mount:$M/said\\] needs_atime = relatime"
is "'both': the declaration first, then the reader found" \
        "$(recs $M/both | jq -c '.recommendations[0].consumers | map([.kind, .need, .source])')" \
        "[[\"config\",\"strict\",\"$BOTH\"],[\"tmpfiles\",\"relatime\",\"$T/tmpfiles.d/cache.conf:1\"]]"
is "needs_atime = none declares nothing" "$(recs $M/free | jq '.recommendations[0].consumers | length')" "0"
check "the reply is the documented GetRecommendations" sh -c \
        "$ATIMECTL --socket $T/sock call io.atimed.GetRecommendations '{}' | $top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink GetRecommendations"
is "the metrics count it with the reader found" \
        "$(ctl metrics | awk -v m="mountpoint=\"$M/both\"" 'index($0, "atimed_atime_consumers{") == 1 && index($0, m) { print $2 }')" "2"
is "the advice keeps strictatime on 'both', by the declaration" "$(ctl --json recommend $M/both | jq -r '.recommendations[0].recommended.atime')" \
        "strictatime"

# --- 2. remount below the declaration: refused, nothing changed
before=$(opts $M/said)
like "'said' is relatime to begin with" "$before" "(^|,)relatime(,|\$)"
ctl remount $M/said noatime >$T/out 2>$T/err
is "remount noatime under needs_atime = relatime: exit 1" "$?" "1"
like "naming the declaration's file:line" "$(cat $T/err)" \
        "^atimectl: noatime on $M/said breaks a reader of atime that needs relatime: .*needs_atime = relatime\\) \\[$SAID\\]\$"
like "and --force" "$(cat $T/err)" "refused; nothing changed. --force sets noatime anyway."
is "the mount's options in mountinfo are unchanged" "$(opts $M/said)" "$before"
is "nothing on stdout" "$(cat $T/out)" ""
ctl remount $M/said/lost+found noatime >/dev/null 2>&1
is "a path on it: the mount holding it, refused too" "$?" "1"
is "relatime is allowed" "$(ctl remount $M/said relatime --json 2>$T/err | jq -r .target)" "$M/said"
is "without a word" "$(cat $T/err)" ""
is "strictatime too" "$(ctl remount $M/said strictatime --json | jq -c '[.changed, (.after.vfs_options | test("noatime"))]')" \
        "[true,false]"
out=$(ctl remount $M/said noatime --force 2>$T/err)
is "--force: done" "$?" "0"
like "the change shown" "$out" "$M/said after:  rw,noatime"
like "saying what it overrode" "$(cat $T/err)" "breaks a reader of atime that needs relatime: .* \\[$SAID\\]"
like "and that it goes ahead" "$(cat $T/err)" "^atimectl: going ahead with noatime on $M/said \\(--force\\)\\.\$"
like "mountinfo has noatime" "$(opts $M/said)" "(^|,)noatime(,|\$)"
ctl remount $M/said relatime >/dev/null || bail "remount said relatime"

# --- 3. a declaration stronger than the reader found: relatime refused too
before=$(opts $M/both)
ctl remount $M/both relatime >/dev/null 2>$T/err
is "relatime under needs_atime = strict (a relatime reader found too): exit 1" "$?" "1"
like "naming the declaration" "$(cat $T/err)" "relatime on $M/both breaks a reader of atime that needs strictatime: .* \\[$BOTH\\]"
is "and not the reader relatime satisfies" "$(grep -c cache.conf $T/err)" "0"
is "mountinfo unchanged" "$(opts $M/both)" "$before"
ctl remount $M/both noatime >/dev/null 2>$T/err
is "noatime there: exit 1" "$?" "1"
is "both named, the declaration first" "$(grep -o '\[[^]]*\]$' $T/err | tr '\n' ' ')" "[$BOTH] [$T/tmpfiles.d/cache.conf:1] "
is "a mount declared 'none' is not guarded" "$(ctl remount $M/free noatime --json 2>$T/err | jq -r .changed)" "true"
is "and nothing is said" "$(cat $T/err)" ""

# --- a mount atimed does not track: nothing to check, and that is said
ctl remount $M/skip noatime >/dev/null 2>$T/err
is "a mount excluded by exclude_paths: remount goes ahead" "$?" "0"
is "saying who reads atime there is not checked, and why" "$(cat $T/err)" \
        "atimectl: atimed does not track a mount at $M/skip (its path is excluded by exclude_paths in atimed.conf); who reads atime there is not checked."

# --- 4. fstab --set on a scratch fstab: the same guard
DEV=$(findmnt -no SOURCE $M/said)
printf '%s %s ext4 relatime 0 2\ntmpfs %s tmpfs strictatime 0 0\n' $DEV $M/said $M/both >$T/fstab
cp $T/fstab $T/fstab.orig
ctl fstab --file $T/fstab --set $M/said=noatime --write >$T/out 2>$T/err
is "fstab --set noatime under needs_atime = relatime: exit 1" "$?" "1"
like "naming the declaration's file:line" "$(cat $T/err)" "needs relatime: .* \\[$SAID\\]"
is "nothing written" "$(cmp $T/fstab $T/fstab.orig && echo same)" "same"
ctl fstab --file $T/fstab --set $M/both=relatime >/dev/null 2>$T/err
is "fstab --set relatime under needs_atime = strict, even without --write: exit 1" "$?" "1"
like "naming it" "$(cat $T/err)" "\\[$BOTH\\]"
ctl fstab --file $T/fstab --set $M/said=relatime,lazytime --write >/dev/null 2>$T/err
is "fstab --set relatime,lazytime where relatime is declared: allowed" "$?" "0"
like "and written" "$(cat $T/fstab)" "^$DEV $M/said ext4 relatime,lazytime 0 2\$"
ctl fstab --file $T/fstab --set $M/said=noatime --write --force >/dev/null 2>$T/err
is "fstab --set --force: exit 0" "$?" "0"
like "written" "$(cat $T/fstab)" "^$DEV $M/said ext4 noatime,lazytime 0 2\$"
like "saying so" "$(cat $T/err)" "going ahead with noatime on $M/said \\(--force\\)"

# --- 5. a reload that drops the declaration drops the refusal
write_config "[mounts] exclude_paths += $HOST_EXCLUDE [/]${M#/}/skip" "[consumers] tmpfiles_dirs = $T/tmpfiles.d" \
        "[consumers] mail_spools = $T/none" "[consumers] tmpreaper_conf = $T/none" \
        "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none"
ctl reload >/dev/null || bail "reload"
is "after a reload without it: no consumer on 'said'" "$(recs $M/said | jq '.recommendations[0].consumers | length')" "0"
is "and noatime goes ahead" "$(ctl remount $M/said noatime --json 2>$T/err | jq -r .changed)" "true"
is "without a word" "$(cat $T/err)" ""

# --- 6. without atimed nothing is checked, and that is said
stop_daemon
ctl remount $M/said relatime >/dev/null 2>$T/err
is "atimed stopped: remount goes ahead" "$?" "0"
is "saying the declarations are not checked either" "$(cat $T/err)" \
        "atimectl: atimed is not running: who reads atime on $M/said is not checked, nor any needs_atime its configuration declares."
done_testing
