#!/bin/bash
# statusflood.sh: requests cost what they show (issue 36). User nobody
# connects, sends a GetStatus with parameters and closes without reading,
# in a loop from 8 processes: of every mount with history_s (each a
# different one), and of mounts that do not exist. Before, each was built
# afresh on the loop (history for 1,000 mounts, a re-read of mountinfo for
# a missing one), and root's status waited 4.5 s. Root's status must be
# answered throughout, within 3x its quiet median in a release build, the
# watchdog be fed, and nobody held to its share of the loop
# (attack-lib.sh), with 2,000 mounts tracked.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
. "$top_srcdir/tests/hostile/attack-lib.sh"
N=2000

many_mounts $N
write_config "${TMPFS_ONLY[@]}"
attack_daemon $N

# flood SECONDS WORKER: connect, send, close, as nobody, until SECONDS
# have passed; the number of requests sent into $T/flood.WORKER.
flood() {
        as_nobody bash -c '
                end=$((SECONDS + $1)) n=0
                while [ $SECONDS -lt $end ]; do
                        n=$((n + 1))
                        if [ $((n % 2)) = 0 ]; then
                                req="{\"method\":\"io.atimed.GetStatus\",\"parameters\":{\"history_s\":$((60 + (n * 7 + $2) % 86000))}}"
                        else
                                req="{\"method\":\"io.atimed.GetStatus\",\"parameters\":{\"target\":\"/nonexistent/$2/$n\",\"history_s\":600}}"
                        fi
                        printf "%s\0" "$req" | "$3" -c "$4" >/dev/null 2>&1
                done
                echo $n' _ "$1" "$2" "$RAWSOCK" "$T/sock" >$T/flood.$2
}

attack_begin 10
floods=""
for w in $(seq 8); do
        flood 10 $w &
        floods="$floods $!"
done
attack_end
wait $floods
sent=$(cat $T/flood.* | awk '{ s += $1 } END { print s }')
diag "requests sent by nobody in 10 s, each on a connection closed unread: $sent"
attack_judge "connect, send, close: GetStatus with history_s, and of missing mounts"
# In a cgroup of their own (attack-lib.sh) nobody's loops get a task's
# share of the CPUs, and the ASan build's clients start slowly: some tens
# of requests there, hundreds in a release build.
check "nobody's requests went out ($sent)" test "$sent" -ge 20
check "still serving" ctl status $T/many/m0
stop_daemon
is "clean exit" "$STOP_STATUS" "0"
attack_usage
attack_share_held $(id -u nobody)
done_testing
