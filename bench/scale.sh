#!/bin/bash
# scale: atimed with 10, 100, 1,000 and 5,000 tmpfs mounts in a private
# namespace (each its own filesystem, so each has its own probe, walk and
# sample). Per size:
#   ready     start-up to READY=1 (sd_notify, received on a NOTIFY_SOCKET of
#             our own), from just before exec, empty state dir;
#   absorb    from just before mount(2) of one more tmpfs until the daemon
#             shows it: its "Tracking PATH (" log line (inotify on the log),
#             and a GetStatus for PATH that is no longer an error (polled
#             every 100 us), with [mounts] rescan_delay = 0 (the default
#             200 ms debounce is a deliberate wait, not work). The two
#             differ: the status polls wake the event loop, which then runs
#             the re-read as soon as it is due, so "status" is the work;
#             "log" (nothing else wakes the loop) adds the slack of the
#             rescan timer, what an operator would see;
#   parse     libmount's own parse of that mount table (mnt_table_parse_file,
#             median of 20), and atimed's mount_table_load (the same parse,
#             its filter and copies): the absorb target is at most 2x parse;
#   CPU       per sample cycle ([sampler] interval = 1s, 30 s), from
#             schedstat, once every mount has an activity figure or after
#             MEASURE_WAIT seconds, whichever comes first ("measured" says
#             how many had one: atimed walks one filesystem per second, so
#             N filesystems take about N seconds to be measured first);
#   RSS       VmRSS then (target: under 16 MiB at 1,000 mounts), with
#             [store] flush_interval = 5s: 5 cycles per flush, as at the
#             defaults (1 min, 5 min).
#
#   sudo make bench BENCH=scale
#   (SIZES="10 100 1000 5000" STARTS=3 ABSORBS=6 CPU_SECONDS=30 MEASURE_WAIT=150)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
SIZES=${SIZES:-10 100 1000 5000}
STARTS=${STARTS:-3}
ABSORBS=${ABSORBS:-6}
CPU_SECONDS=${CPU_SECONDS:-30}
MEASURE_WAIT=${MEASURE_WAIT:-150}
HELPER=$top_builddir/bench/scale-helper
D=$B/mnt/scale
mkdir -p "$D"

echo "scale: atimed with N tmpfs mounts in a private mount namespace"
machine_line

CONF="$(bench_mounts_only tmpfs "$B/mnt")
rescan_delay = 0
[sampler]
interval = 1s
[store]
flush_interval = 5s"
# flush_interval keeps the default's 5 sample cycles per flush: history
# waiting for a flush is held in memory, and at interval = 1s with the
# default 5 min flush that would be 300 samples per mount, not 5.

# start: atimed through the helper; sets ATIMED_PID; the ms to READY=1 in
# $B/ready ("timeout" if it never came).
start() {
        rm -rf "$B/state" "$B/ready" "$B/notify"
        : >"$B/atimed.log"
        printf '%s\n' "$CONF" >"$B/atimed.conf"
        "$HELPER" ready "$B/notify" "$ATIMED" --config "$B/atimed.conf" --socket "$B/sock" --state-dir "$B/state" \
                >"$B/ready" 2>>"$B/atimed.log" &
        ATIMED_PID=$!
        BENCH_PIDS="$BENCH_PIDS $ATIMED_PID"
        for _ in $(seq 3000); do
                [ -s "$B/ready" ] && break
                sleep 0.1
        done
}
stop() {
        kill -TERM "$ATIMED_PID"
        wait "$ATIMED_PID" 2>/dev/null
}
status_has() { "$ATIMECTL" --socket "$B/sock" status "$1" >/dev/null 2>&1; }
unmeasured() { "$ATIMECTL" --socket "$B/sock" --json status | jq '[.mounts[] | select(.activity == null)] | length'; }
cell() { printf '%.1f (%.1f-%.1f)' "$(median <"$1")" "$(minimum <"$1")" "$(maximum <"$1")"; }

printf '\n%6s %-20s %-24s %-22s %8s %8s %7s %-12s %9s %9s %8s\n' mounts "ready ms" "absorb ms (log)" "absorb ms (status)" \
        "parse ms" "load ms" "abs/prs" "measured" "CPU ms/c" "us/mount" "RSS MiB"
for N in $SIZES; do
        "$HELPER" mount "$D" "$N" || exit 1
        : >"$B/r.ready"
        for ((i = 0; i < STARTS; i++)); do
                start
                ms=$(cat "$B/ready")
                [ "$ms" = timeout ] || [ -z "$ms" ] && { echo "bench: atimed not ready with $N mounts" >&2; exit 1; }
                echo "$ms" >>"$B/r.ready"
                ((i < STARTS - 1)) && stop
        done
        for _ in $(seq 300); do status_has "$D/m0" && break; sleep 0.1; done
        w0=$(date +%s)
        while :; do
                u=$(unmeasured)
                [ "$u" = 0 ] || (($(date +%s) - w0 >= MEASURE_WAIT)) && break
                sleep 1
        done
        waited=$(($(date +%s) - w0))

        # CPU per sample cycle, RSS.
        sleep 2
        c0=$(cpu_ns "$ATIMED_PID")
        s0=$(date +%s.%N)
        sleep "$CPU_SECONDS"
        c1=$(cpu_ns "$ATIMED_PID")
        s1=$(date +%s.%N)
        cpu=$(awk -v ns=$((c1 - c0)) -v s0="$s0" -v s1="$s1" 'BEGIN { printf "%.2f", ns / 1e6 / (s1 - s0) }')
        rss=$(awk -v k="$(rss_kib "$ATIMED_PID")" 'BEGIN { printf "%.1f", k / 1024 }')

        # One more mount, then away again; log and status alternately.
        read -r parse load < <("$HELPER" parse /proc/self/mountinfo 20)
        : >"$B/r.log"
        : >"$B/r.status"
        for ((i = 0; i < 2 * ABSORBS; i++)); do
                t=$D/extra$i
                mkdir -p "$t"
                mode=$( ((i % 4 == 0 || i % 4 == 3)) && echo log || echo status)
                if [ "$mode" = log ]; then
                        "$HELPER" absorb log "$B/atimed.log" "$t" >>"$B/r.log"
                else
                        "$HELPER" absorb status "$B/sock" "$t" >>"$B/r.status"
                fi
                umount "$t"
                for _ in $(seq 300); do status_has "$t" || break; sleep 0.05; done
                sleep 0.2
        done
        absorb=$(median <"$B/r.status")
        printf '%6s %-20s %-24s %-22s %8s %8s %7s %-12s %9s %9s %8s\n' "$N" "$(cell "$B/r.ready")" "$(cell "$B/r.log")" \
                "$(cell "$B/r.status")" "$parse" "$load" \
                "$(awk -v a="$absorb" -v p="$parse" 'BEGIN { printf "%.2f", a / p }')" "$((N - u))/$N@${waited}s" "$cpu" \
                "$(awk -v c="$cpu" -v n="$N" 'BEGIN { printf "%.1f", c * 1000 / n }')" "$rss"
        stop
        "$HELPER" umount "$D" "$N"
done
echo
echo "ready: median (min-max) of $STARTS start-ups; absorb: of $ABSORBS each; parse and load: medians of 20;"
echo "abs/prs: absorb (status) / libmount parse (target <= 2); CPU ms/c: daemon CPU per 1 s sample cycle"
echo "(sweeps, the per-cycle mount table re-read, history, advice), over $CPU_SECONDS s; measured: mounts"
echo "with an activity figure / mounts, after waiting that long for them."
