#!/bin/bash
# scale-export: the Prometheus export with 100, 1,000 and 5,000 tmpfs mounts
# (bench/scale.sh's setup), [export] textfile set and [sampler] interval =
# 1s (INTERVAL), so the daemon exports every second. Per size:
#   export    the daemon's own export, from its debug line "Exported N
#             mounts": the snapshot taken on the event loop, then the text
#             written in a worker, wall time and CPU (the machine may be
#             shared: CPU is the work, wall time what waits for a core too),
#             median and max over EXPORT_SECONDS;
#   metrics   `atimectl metrics` end to end (GetStatus and GetRecommendations
#             over the socket, parsed, written), median of METRICS_CALLS;
#   status    `atimectl status MOUNT`'s request (GetStatus for one target, a
#             new connection each) every 20 ms for LAT_SECONDS while the
#             exports run: p50, p99 and max;
#   CPU       the daemon's CPU per second meanwhile;
#   without   the status figures again after a reload without [export]:
#             what the rest of the daemon (sweeps, advice, history at a 1 s
#             interval) costs them.
# The targets: export under 50 ms at 5,000 mounts and linear; status p99
# under 5 ms at 5,000 mounts.
#
#   sudo make bench BENCH=scale-export
#   (SIZES="100 1000 5000" EXPORT_SECONDS=20 LAT_SECONDS=20 METRICS_CALLS=5 WAIT=60
#    INTERVAL=1s: the sampler interval, so one export per INTERVAL;
#    BENCH_ATIMED=... BENCH_ATIMECTL=... to measure other builds, NO_EXPORT=1)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
SIZES=${SIZES:-100 1000 5000}
EXPORT_SECONDS=${EXPORT_SECONDS:-20}
LAT_SECONDS=${LAT_SECONDS:-20}
METRICS_CALLS=${METRICS_CALLS:-5}
WAIT=${WAIT:-60}
INTERVAL=${INTERVAL:-1s}
ATIMED=${BENCH_ATIMED:-$ATIMED}
ATIMECTL=${BENCH_ATIMECTL:-$ATIMECTL}
HELPER=$top_builddir/bench/scale-helper
D=$B/mnt/scale
mkdir -p "$D" "$B/tf"

echo "scale-export: the Prometheus export with N tmpfs mounts, one export every $INTERVAL"
machine_line
echo "atimed: $ATIMED"

CONF="$(bench_mounts_only tmpfs "$B/mnt")
[daemon]
log_level = debug
[sampler]
interval = $INTERVAL
[export]
textfile = $B/tf/atimed.prom"
# NO_EXPORT=1: without [export], for the cost of atimectl metrics alone on
# a build whose export would keep the loop busy.
[ "${NO_EXPORT:-0}" = 1 ] && CONF=${CONF%%\[export\]*}

ms() { date +%s%N; }
stat_cell() { # FILE: median (max), or - if empty
        [ -s "$1" ] && printf '%.2f (%.2f)' "$(median <"$1")" "$(maximum <"$1")" || printf -- '-'
}

printf '\n%6s %-16s %-16s %-16s %-16s %-16s %-12s %-28s %6s %s\n' mounts "export ms" "export CPU ms" "snapshot ms" \
        "snapshot CPU" "text CPU ms" "metrics ms" "status p50/p99/max ms" "CPU %" "without export"
for N in $SIZES; do
        "$HELPER" mount "$D" "$N" || exit 1
        rm -rf "$B/state" "$B/tf/atimed.prom"
        : >"$B/atimed.log"
        start_atimed "$CONF"
        for ((i = 0; i < WAIT * 10; i++)); do [ -s "$B/tf/atimed.prom" ] && break; sleep 0.1; done
        [ -s "$B/tf/atimed.prom" ] || echo "bench: no textfile after $WAIT s at $N mounts" >&2
        sleep 2

        # Exports and status requests side by side.
        l0=$(wc -l <"$B/atimed.log")
        c0=$(cpu_ns "$ATIMED_PID")
        s0=$(ms)
        read -r p50 p99 pmax calls < <("$HELPER" latency "$B/sock" "$D/m0" "$LAT_SECONDS")
        sleep $((EXPORT_SECONDS > LAT_SECONDS ? EXPORT_SECONDS - LAT_SECONDS : 0))
        c1=$(cpu_ns "$ATIMED_PID")
        s1=$(ms)
        cpu=$(awk -v c=$((c1 - c0)) -v s=$((s1 - s0)) 'BEGIN { printf "%.1f", c / s * 100 }')
        tail -n +$((l0 + 1)) "$B/atimed.log" | grep "Exported $N mounts" >"$B/exports"
        sed -n 's/.*snapshot \([0-9.]*\) ms.*/\1/p' "$B/exports" >"$B/e.snap"
        sed -n 's/.*snapshot [0-9.]* ms (CPU \([0-9.]*\)).*/\1/p' "$B/exports" >"$B/c.snap"
        sed -n 's/.*text written [0-9.]* ms (CPU \([0-9.]*\)).*/\1/p' "$B/exports" >"$B/c.text"
        paste -d' ' "$B/e.snap" <(sed -n 's/.*text written \([0-9.]*\) ms.*/\1/p' "$B/exports") |
                awk 'NF == 2 { print $1 + $2 }' >"$B/e.total"
        paste -d' ' "$B/c.snap" "$B/c.text" | awk 'NF == 2 { print $1 + $2 }' >"$B/c.total"

        : >"$B/m"
        for ((i = 0; i < METRICS_CALLS; i++)); do
                t0=$(ms)
                "$ATIMECTL" --socket "$B/sock" metrics >"$B/metrics.txt" || echo "bench: atimectl metrics failed" >&2
                echo $((($(ms) - t0) / 1000)) | awk '{ print $1 / 1000 }' >>"$B/m"
        done
        # The same without the export (a reload without [export]), for
        # what the rest of the daemon's work costs the status requests.
        printf '%s\n' "${CONF%%\[export\]*}" >"$B/atimed.conf"
        kill -HUP "$ATIMED_PID"
        sleep 3
        read -r q50 q99 qmax _ < <("$HELPER" latency "$B/sock" "$D/m0" "$LAT_SECONDS")
        printf '%6s %-16s %-16s %-16s %-16s %-16s %-12s %-28s %6s %s\n' "$N" "$(stat_cell "$B/e.total")" \
                "$(stat_cell "$B/c.total")" "$(stat_cell "$B/e.snap")" "$(stat_cell "$B/c.snap")" "$(stat_cell "$B/c.text")" \
                "$(printf '%.1f' "$(median <"$B/m")")" "$p50/$p99/$pmax ($calls)" "$cpu" "$q50/$q99/$qmax"
        kill -TERM "$ATIMED_PID"
        wait "$ATIMED_PID" 2>/dev/null
        "$HELPER" umount "$D" "$N"
done
echo
echo "export: one export, wall time and CPU (the snapshot on the loop + the text written in a worker);"
echo "snapshot: its wall time on the loop, and CPU; text: the worker's CPU. Each median (max) of the daemon's"
echo "exports over ${LAT_SECONDS}+ s ('-': a daemon without the debug line). metrics: atimectl metrics end"
echo "to end, median of $METRICS_CALLS; status: GetStatus for one mount, new connection each, every 20 ms"
echo "(calls in brackets); CPU: the daemon's, meanwhile (100% = one core); without export: the same"
echo "status figures after a reload without [export]."
