#!/bin/bash
# remountswap.sh: `atimectl remount` acts on the mount it checked (issue
# 36). Root remounts $U/p/m5, a tmpfs of root's below a directory of user
# nobody's, to noatime, again and again; meanwhile nobody swaps $U/p, as
# fast as it can, for a symlink to $T/many (where another m5, a tracked
# mount, lies) and back. Before, the path was resolved again at each step,
# so a swap between the check and the remount could change $T/many/m5
# instead. Every remount must act on root's mount or refuse (a path through
# a symlink is refused: root names the mount by its own path), $T/many/m5
# must never change, and root's status must be answered, within 3x its
# quiet median in a release build, with the watchdog fed (attack-lib.sh),
# 2,000 mounts tracked.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
. "$top_srcdir/tests/hostile/attack-lib.sh"
N=2000
U=$T/u

mkdir -p $U && chmod 1777 $U && chmod 0755 $T
many_mounts $N
mount -o remount,strictatime $T/many/m5 || bail "remount m5"
as_nobody mkdir -p $U/p/m5
mount -t tmpfs -o strictatime roots $U/p/m5 || bail "mount $U/p/m5"
write_config "${TMPFS_ONLY[@]}"
attack_daemon $N

# opts TARGET: the per-mount options of the mount on top at TARGET.
opts() { awk -v t="$1" '$5 == t { o = $6 } END { print o }' /proc/self/mountinfo; }

check "without the swaps, root's remount acts" ctl remount $U/p/m5 noatime
like "on root's mount" "$(opts $U/p/m5)" "noatime"
mount -o remount,strictatime $U/p/m5

attack_begin 8
# The swaps go on until root's remounts are done: 8 s, and 10 runs at
# least (a loaded host makes fewer in 8 s), 120 s at most.
as_nobody bash -c "while [ ! -e $T/swaps.stop ]; do
        mv -T $U/p $U/q && ln -s $T/many $U/p && rm $U/p && mv -T $U/q $U/p
done" 2>$T/swap.err &
SWAPS=$!
acted=0 refused=0 wrong=0 runs=0
end=$((SECONDS + 8)) last=$((SECONDS + 120))
while [ $SECONDS -lt $end ] || [ $runs -lt 10 -a $SECONDS -lt $last ]; do
        runs=$((runs + 1))
        if ctl remount $U/p/m5 noatime >/dev/null 2>>$T/remount.err; then
                acted=$((acted + 1))
        else
                refused=$((refused + 1))
        fi
        case $(opts $T/many/m5) in *noatime*) wrong=$((wrong + 1)); mount -o remount,strictatime $T/many/m5 ;; esac
        # root's own mount back to strictatime, for the next run to change
        # (by its mount id: wherever the swap has put the path)
        mount -o remount,strictatime "$(awk -v r=roots '$(NF - 1) == r || $0 ~ " - tmpfs roots " { print $5 }' /proc/self/mountinfo | head -1)" 2>/dev/null
done
touch $T/swaps.stop
wait $SWAPS
attack_end
attack_judge "a symlink swapped under root's atimectl remount"
diag "remount runs: $runs; acted $acted, refused $refused; $(sort $T/remount.err | uniq -c | sort -rn | head -3 | tr '\n' ';')"
check "root's remount ran many times against the swaps ($runs)" test "$runs" -ge 10
is "the mount the swapped path led to never changed" "$wrong" "0"
check "still serving" ctl status $T/many/m0
stop_daemon
is "clean exit" "$STOP_STATUS" "0"
attack_usage
attack_share_held $(id -u nobody)
done_testing
