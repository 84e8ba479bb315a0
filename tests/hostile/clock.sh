#!/bin/bash
# clock.sh: the wall clock jumping back an hour and forward two, in the
# daemon alone (an LD_PRELOAD shim offsets its CLOCK_REALTIME). Intervals
# are measured on the monotonic clock and stay right; history refuses
# samples older than what it holds, records the jump forward as a gap, and
# loses nothing that was written.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
SHIM=$top_builddir/tests/helpers/clockshift.so
[ -f "$SHIM" ] || bail "clockshift.so not built"
M=$T/mnt
mkdir -p $M/s
mount -t tmpfs -o strictatime tmpfs $M/s || bail mount
make_tree $M/s 1 20
write_config '[sampler] walk_rate' '[store] rings = 1s:1h, 1min:1d' '[store] flush_interval = 1s'
echo 0 >$T/shift
start_shifted() {
        CLOCKSHIFT_FILE=$T/shift LD_PRELOAD=$SHIM ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
                "$ATIMED" --config "$T/atimed.conf" --socket "$T/sock" --state-dir "$T/state" 2>>"$T/atimed.log" &
        DAEMON_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
        wait_until 10 ctl status || bail "atimed did not start"
}
start_shifted
# points RES SINCE: the bucket starts that hold samples, at one resolution.
points() { ctl --json history $M/s --since "$2" --resolution "$1" | jq -c '[.points[] | select(.samples > 0) | .t]'; }
check "history accrues" wait_until 15 sh -c "[ \$($ATIMECTL --socket $T/sock --json history $M/s --since 10min --resolution 1 | jq '[.points[] | select(.samples > 0)] | length') -ge 4 ]"
next_interval $M/s 10 >/dev/null
# intervals N: N more intervals of $M/s are measured (by the shifted clock).
intervals() { local i; for ((i = 0; i < $1; i++)); do next_interval $M/s 10 >/dev/null || return 1; done; }
# Samples keep landing while this reads, and until the clock is shifted:
# what the checks compare is what was there at the read, the points up to
# its newest one.
secs=$(points 1 1h)
newest=$(echo "$secs" | jq '.[-1]')
mins=$(points 60 1d | jq -c "map(select(. <= $newest))")
diag "before the jumps: 1 s points $secs, 1 min points $mins"

echo -3600 >$T/shift
intervals 3 || diag "fewer than 3 intervals in 30 s"
check "an hour back: still serving" ctl status
intervals=$(ctl --json status $M/s | jq '.mounts[0].activity.interval_s')
check "intervals are still about a second (monotonic): $intervals" awk -v v="$intervals" 'BEGIN { exit !(v > 0.5 && v < 2) }'
is "the 1 s points from before the jump are untouched" "$(points 1 1h | jq -c "map(select(. <= $newest))")" "$secs"
is "no sample went into the past" "$(ctl --json history $M/s --since 1d --resolution 60 | jq "[.points[] | select(.t < $newest - 120 and .samples > 0)] | length")" \
        "$(echo "$mins" | jq "[.[] | select(. < $newest - 120)] | length")"

echo 7200 >$T/shift
intervals 3 || diag "fewer than 3 intervals in 30 s"
check "two hours forward: still serving" ctl status
check "new points accrue at the new time" wait_until 10 sh -c "[ \$($ATIMECTL --socket $T/sock --json history $M/s --since 10min --resolution 1 | jq '[.points[] | select(.samples > 0)] | length') -ge 2 ]"
is "the 1 min points from before the jump are untouched" "$(ctl --json history $M/s --since 1d --resolution 60 | jq -c "[.points[] | select(.samples > 0 and .t <= $newest) | .t]")" "$mins"
h=$(ctl --json history $M/s --since 1d --resolution 60)
gap=$(echo "$h" | jq "[.points[] | select(.t > $newest + 60 and .t < $newest + 7140)] | (map(select(.samples == 0)) | length) / (length + 0.001)")
check "the two hours are a gap, not zeros (share of empty minutes $gap)" awk -v g="$gap" 'BEGIN { exit !(g > 0.98) }'
check "the history still validates against the documented schema" sh -c \
        "$ATIMECTL --socket $T/sock --json history $M/s --since 1d | $top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink GetHistory"
stop_daemon
echo 0 >$T/shift
start_shifted
is "after a restart no point written before the jumps is lost" \
        "$(ctl --json history $M/s --since 1d --resolution 60 | jq -c "[.points[] | select(.samples > 0 and .t <= $newest) | .t]")" "$mins"
stop_daemon
done_testing
