#!/bin/bash
# hungvar.sh: history is written in a worker, so a hung /var never stalls
# the socket. The state dir is a bindfs mount whose daemon is stopped with
# SIGSTOP: 'atimectl status' keeps answering within 1 s; once bindfs runs
# again, the history written meanwhile is saved.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/tmp $T/state-src
mount -t tmpfs tmpfs $M/tmp || bail mount
echo x >$M/tmp/f
bindfs_start $T/state-src $T/state

write_config "${TMPFS_ONLY[@]}" '[store] rings = 1s:10min, 1min:1d' '[store] flush_interval = 1s'
start_daemon
journal_size() { stat -c %s $T/state-src/history.journal 2>/dev/null || echo 0; }
check "history is being written" wait_until 30 sh -c "[ \$(stat -c %s $T/state-src/history.journal 2>/dev/null || echo 0) -gt 100 ]"

bindfs_stop
diag "bindfs (pid $FUSE_PID) stopped"
before=$(journal_size)
# A loop stuck in a write would leave every call hanging until the 5 s
# timeout; a loaded machine makes a few slow ones: the median must be
# under 1 s, every call must answer.
lat=()
ok_all=0
for i in $(seq 1 10); do
        t0=$(date +%s%N)
        timeout 5 "$ATIMECTL" --socket $T/sock status >/dev/null || { ok_all=1; diag "status $i failed"; }
        lat+=($((($(date +%s%N) - t0) / 1000000)))
        sleep 0.5 # (the calls' pace: ten over some seconds of the hang)
done
sorted=$(printf '%s\n' "${lat[@]}" | sort -n | tr '\n' ' ')
median=$(printf '%s\n' "${lat[@]}" | sort -n | sed -n 5p)
diag "10 status calls over ~8 s with the state dir hung, ms: $sorted"
is "every status call answered" "$ok_all" "0"
check "within 1 s (median $median ms)" test "$median" -lt 1000
is "nothing could be written meanwhile" "$(journal_size)" "$before"
pts_hung=$(ctl --json history $M/tmp --since 10min | jq '[.points[] | select(.samples > 0)] | length')

bindfs_resume
diag "bindfs resumed"
check "the history is saved once the state dir answers" wait_until 30 sh -c "[ \$(stat -c %s $T/state-src/history.journal 2>/dev/null || echo 0) -gt $before ]"
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"
: >"$T/atimed.log"
start_daemon
pts=$(ctl --json history $M/tmp --since 10min | jq '[.points[] | select(.samples > 0)] | length')
check "after a restart, the points from while it hung are there ($pts >= $pts_hung)" test "$pts" -ge "$pts_hung"
stop_daemon
umount $T/state
done_testing
