#!/bin/bash
# utimes.sh: atimes set with utimensat are not reads. On a root-owned
# relatime tmpfs of mode 1777 (a shared /tmp), user nobody runs
# 'touch -a' on 200 files of its own once a second (15k "updates"/min and
# a change of advice to noatime before this was fixed). The mount's atime
# updates stay near zero, the sets are reported apart
# (atime_sets_per_min), and the advice never becomes noatime.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v setpriv >/dev/null || skip_all "needs setpriv"
M=$T/mnt
mkdir -p $M/tmp
mount -t tmpfs -o relatime,mode=1777 tmpfs $M/tmp || bail mount
chmod 0755 $T $M
as_nobody sh -c "mkdir $M/tmp/x && for i in \$(seq 1 200); do echo y >$M/tmp/x/f\$i; done" || bail "nobody's files"
write_config "${TMPFS_ONLY[@]}" '[sampler] interval = 2s'
start_daemon
check "the mount is measured" wait_until 30 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r --arg t $M/tmp '.mounts[] | select(.target == \$t) | .activity.at // empty')\" ]"
# setpriv execs the shell: $! is the loop itself. (Its sleep is the
# workload's pace, as the one below is the sampling's: no waits.)
setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "while :; do touch -a $M/tmp/x/f*; sleep 1; done" &
TOUCHER=$!
trap 'kill $TOUCHER 2>/dev/null; cleanup' EXIT
maxu=0 maxs=0 i=0
while [ $i -lt 40 ]; do
        set -- $(ctl --json status | jq -r --arg t $M/tmp '.mounts[] | select(.target == $t) | .activity |
                "\(.atime_updates_per_min // 0) \(.atime_sets_per_min // 0)"')
        maxu=$(awk -v a=$maxu -v b=${1:-0} 'BEGIN { print (b > a) ? b : a }')
        maxs=$(awk -v a=$maxs -v b=${2:-0} 'BEGIN { print (b > a) ? b : a }')
        sleep 0.5
        i=$((i + 1))
done
advice=$(ctl --json recommend $M/tmp 2>/dev/null | jq -r '.recommendations[0].action // empty')
kill $TOUCHER
wait $TOUCHER 2>/dev/null
diag "over 20 s of touch -a on 200 files: updates/min at most $maxu, sets/min at most $maxs; advice: $advice"
check "the sets are seen and reported apart ($maxs/min)" awk -v s=$maxs 'BEGIN { exit !(s >= 1000) }'
check "they are no atime updates (at most $maxu/min, 12,000 sets a minute)" awk -v u=$maxu 'BEGIN { exit !(u < 300) }'
check "the advice is not noatime (action: $advice)" sh -c "[ -n '$advice' ] && ! printf '%s' '$advice' | grep -q noatime"
check "nor does the log say so" sh -c "! grep -q 'noatime' $T/atimed.log"
done_testing
