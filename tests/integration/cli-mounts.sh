#!/bin/bash
# cli-mounts.sh: atimectl status tells mounts apart in an 80-column terminal
# on a container-like set of mounts: files bind-mounted under a run/host
# directory, long targets that share their start and their end, and one
# target mounted twice (over-mounted). Every row's target must print
# differently, keep its last component readable, and fit.
. "$top_srcdir/tests/integration/lib.sh"
command -v tmux >/dev/null || skip_all "needs tmux for the terminal test"
enter_namespace

H=$T/run/host
P=$T/srv/long-common-prefix-of-many-containers
mkdir -p $H/incoming $T/src $P/alpha/data $P/beta/data $T/stack $T/cov/a/b
echo 'ID=debian' >$T/src/os-release
: >$H/os-release
mount --bind $T/src/os-release $H/os-release &&
        mount -t tmpfs -o size=1m tmpfs $H/incoming &&
        mount -t tmpfs -o size=1m,noatime tmpfs $P/alpha/data &&
        mount -t tmpfs -o size=1m,strictatime tmpfs $P/beta/data || bail "container-like mounts"
# Stacked directly: only the top one is listed.
mount -t tmpfs -o size=1m tmpfs $T/stack && mount -t tmpfs -o size=1m,noatime tmpfs $T/stack || bail "stack"
# Over-mounted from above: cov/a/b, then cov/a over it, then a new cov/a/b
# on that: two mounts at one target, only the second reachable.
mount -t tmpfs -o size=1m tmpfs $T/cov/a/b && mount -t tmpfs -o size=1m tmpfs $T/cov/a &&
        mkdir $T/cov/a/b && mount -t tmpfs -o size=1m,noatime tmpfs $T/cov/a/b || bail "over-mount"

# Only the test's mounts are tracked. A long interval: the first figures
# take minutes, so the table shows long progress texts ("measuring ~1min 3s").
others=$(findmnt -rno TARGET | grep -v -e "^$T" -e '^/$' | sed -E 's|^(/[^/]+)/.*|\1|' | grep -vx /tmp | sort -u | tr '\n' ' ')
write_config "[mounts] exclude_paths += [/]run $others" '[sampler] interval = 2min' '[sampler] walk_rate' \
        '[store] rings = 2min:1h'
start_daemon

status_json() { ctl call io.atimed.GetStatus '{}'; }
check "the eight mounts are tracked" wait_until 20 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock call io.atimed.GetStatus '{}' | jq '.mounts | length')\" = 8 ]"
is "the mount stacked directly on another is the only one listed there" \
        "$(status_json | jq -c --arg t $T/stack '[.mounts[] | select(.target == $t) | .options]')" '["rw,noatime"]'
# Told apart by their options, not by id: mount ids are reused, lowest
# free first, so a mount made later can have the smaller id when tests
# beside this one umount theirs.
is "two mounts at cov/a/b: the first is not reachable, the second is" \
        "$(status_json | jq -c --arg t $T/cov/a/b '[.mounts[] | select(.target == $t) | "\(.options) \(.reachable)"] | sort')" \
        '["rw,noatime true","rw,relatime false"]'
is "every other mount is reachable" "$(status_json | jq '[.mounts[] | select(.reachable == false)] | length')" "1"
is "GetStatus of that target lists both, each with its flag" \
        "$(ctl call io.atimed.GetStatus "{\"target\":\"$T/cov/a/b\"}" | jq -c '[.mounts[] | "\(.options) \(.reachable)"] | sort')" \
        '["rw,noatime true","rw,relatime false"]'

check "tmux: atimectl status ran in an 80x40 terminal" tty_status 80 40
sed 's/^/# /' $T/pane
is "tmux: exit 0" "$(cat $T/tmux.rc)" "0"
widest=$(perl -CSD -ne 'chomp; $m = length if length > $m; END { print $m + 0 }' <$T/pane)
is "tmux: nothing wraps past 80 columns (wrapped lines joined)" "$([ "$widest" -le 80 ] && echo fits)" "fits"
# The TARGET cells: the header's columns, by characters (… is one).
perl -CSD -ne 'if (!defined $w) { /^(TARGET +)/ and $w = length $1; next } last if /^$/;
        $c = substr($_, 0, $w); $c =~ s/ +$//; print "$c\n"' <$T/pane >$T/targets
is "a row for every mount" "$(wc -l <$T/targets)" "8"
is "no two rows print the same target" "$(sort $T/targets | uniq -d)" ""
ends_with() { local n=0 line; while read -r line; do [[ $line == *"$1" ]] && n=$((n + 1)); done <$T/targets; echo $n; }
for end in /os-release /incoming /alpha/data /beta/data /stack /a "/b (over-mounted)" /b; do
        is "one row ends in '$end': its last component readable" "$(ends_with "$end")" "1"
done
like "the over-mounted one is marked so" "$(cat $T/targets)" "/b \\(over-mounted\\)\$"
width_of() { perl -CSD -ne "/^(.*?)$1/ and print length \$1" <<<"$(head -n 1 $T/pane)"; }
target_w=$(width_of FSTYPE)
is "TARGET keeps most of the line (UPDATES/MIN once took 21 of 80 and it 14)" "$([ "$target_w" -ge 30 ] && echo yes)" "yes"
like "the long progress texts give way first" "$(cat $T/pane)" "^TARGET .* UPDATES/MIN"
diag "TARGET is $target_w columns wide"

done_testing
