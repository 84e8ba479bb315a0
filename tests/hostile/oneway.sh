#!/bin/bash
# oneway.sh: oneway calls count like any other (issue 36). User nobody
# writes 800 {"method":"io.atimed.GetRecommendations","oneway":true}
# messages in one write, again and again, at a root daemon tracking 2,000
# mounts. A oneway call queues no reply; before, the daemon went on to the
# next one at once and handled the whole buffer in one wakeup (root's
# status waited 6.6 s at 1,000 mounts). Root's status must be answered
# throughout, within 3x its quiet median in a release build, the watchdog
# be fed, and nobody held to its share of the loop (attack-lib.sh).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
. "$top_srcdir/tests/hostile/attack-lib.sh"
N=2000

many_mounts $N
write_config "${TMPFS_ONLY[@]}"
attack_daemon $N

for i in $(seq 800); do printf '{"method":"io.atimed.GetRecommendations","oneway":true}\0'; done >$T/oneway
attack_begin 8
# The flood: each rawsock run is one write of the 800 messages; it ends
# when the daemon has handled them all and closed (or after 10 s).
( end=$((SECONDS + 8)); n=0; while [ $SECONDS -lt $end ]; do
        as_nobody "$RAWSOCK" -t 10 "$T/sock" <$T/oneway >/dev/null 2>&1; n=$((n + 1)); done; echo $n >$T/writes ) &
FLOOD=$!
attack_end
wait $FLOOD
diag "writes of 800 oneway calls handled in 8 s: $(cat $T/writes)"
attack_judge "800 oneway GetRecommendations per write"
check "still serving" ctl status
stop_daemon
is "clean exit" "$STOP_STATUS" "0"
attack_usage
attack_share_held $(id -u nobody)
done_testing
