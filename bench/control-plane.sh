#!/bin/bash
# control-plane: the control socket under load, with 100 tmpfs mounts
# tracked (every one measured, so each status carries activity figures).
# bench/ctlbench speaks the protocol directly: GetStatus (all mounts) latency
# p50/p99/max over sequential calls on one connection and with a connection
# per call (as atimectl does); then throughput with 1, 16 and 64 concurrent
# connections, each calling back to back for a fixed time, in alternating
# order (1 16 64 64 16 1 ...). The load generator runs on the same cores.
#
#   sudo make bench BENCH=control-plane   (MOUNTS=100 CALLS=5000 SECONDS_EACH=5 REPS=4)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
MOUNTS=${MOUNTS:-100}
CALLS=${CALLS:-5000}
SECONDS_EACH=${SECONDS_EACH:-5}
REPS=${REPS:-4}
CTLBENCH=$top_builddir/bench/ctlbench

echo "control-plane: GetStatus over the control socket, $MOUNTS tmpfs mounts tracked"
machine_line
for ((i = 0; i < MOUNTS; i++)); do
        mkdir -p "$B/mnt/m$i"
        mount -t tmpfs -o size=1m,nr_inodes=64 bench-ctl "$B/mnt/m$i"
        echo x >"$B/mnt/m$i/f"
done
start_atimed "$(bench_mounts_only tmpfs "$B/mnt")
[control]
max_clients = 100
[sampler]
interval = 10s"
wait_measured "$B/mnt/m$((MOUNTS - 1))" 120 || echo "bench: $B/mnt/m$((MOUNTS - 1)) not measured after 120 s" >&2
n=$("$ATIMECTL" --socket "$B/sock" --json status | jq '.mounts | length')
echo "tracking $n mounts"

: >"$B/lat.keep"
: >"$B/lat.conn"
for ((r = 0; r < REPS; r++)); do
        for m in $( ((r % 2)) && echo "conn keep" || echo "keep conn"); do
                "$CTLBENCH" "$B/sock" latency "$CALLS" $([ $m = conn ] && echo connect) >>"$B/lat.$m"
        done
done
col() { awk -v c="$2" '{ print $c }' "$1"; }
cell() { printf '%s (%s-%s)' "$(col "$1" "$2" | median)" "$(col "$1" "$2" | minimum)" "$(col "$1" "$2" | maximum)"; }
printf '\n%-28s %-20s %-20s %-20s %8s\n' "GetStatus latency, us" p50 p99 max "bytes"
printf '%-28s %-20s %-20s %-20s %8s\n' "one connection" "$(cell "$B/lat.keep" 1)" "$(cell "$B/lat.keep" 2)" \
        "$(cell "$B/lat.keep" 3)" "$(col "$B/lat.keep" 4 | median)"
printf '%-28s %-20s %-20s %-20s %8s\n' "a connection per call" "$(cell "$B/lat.conn" 1)" "$(cell "$B/lat.conn" 2)" \
        "$(cell "$B/lat.conn" 3)" "$(col "$B/lat.conn" 4 | median)"
echo "(median (min-max) over $REPS runs of $CALLS sequential calls; target: p99 under 5 ms)"

for c in 1 16 64; do : >"$B/tp.$c"; done
c0=$(cpu_ns "$ATIMED_PID")
t0=$(date +%s.%N)
for ((r = 0; r < REPS; r++)); do
        for c in $( ((r % 2)) && echo "64 16 1" || echo "1 16 64"); do
                "$CTLBENCH" "$B/sock" throughput "$c" "$SECONDS_EACH" >>"$B/tp.$c"
        done
done
c1=$(cpu_ns "$ATIMED_PID")
t1=$(date +%s.%N)
printf '\n%-28s %-22s %-20s %-20s %7s\n' "GetStatus throughput" "requests/s" "p50 us" "p99 us" errors
for c in 1 16 64; do
        printf '%-28s %-22s %-20s %-20s %7s\n' "$c concurrent client(s)" "$(cell "$B/tp.$c" 1)" "$(cell "$B/tp.$c" 2)" \
                "$(cell "$B/tp.$c" 3)" "$(col "$B/tp.$c" 4 | awk '{ s += $1 } END { print s }')"
done
echo "(median (min-max) over $REPS runs of $SECONDS_EACH s each; target: at least 5,000 requests/s on 2 cores)"
awk -v ns=$((c1 - c0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "daemon CPU during the throughput runs: %.0f%% of one core\n", ns / 1e7 / (b - a) }'
echo "RSS after: $(rss_kib "$ATIMED_PID") KiB"
