#!/bin/bash
# walk: what atimed's first walk of a filesystem costs, in CPU per directory
# entry and entries per second. An ext4 image of WALK_INODES empty files
# (99 to a directory) is made once and kept (WALK_IMAGE), mounted once and
# its inodes brought into the cache (a warm walk: the same work each run).
# Each run starts a daemon that tracks nothing, waits until it is idle,
# reads its CPU (every thread's schedstat, in ns), bind-mounts the image's
# root where the daemon tracks it, and reads the CPU again the moment the
# log says "sample walk done" (polled every 10 ms). So the figure is the
# walk and what the daemon must do to start it (the mount table's change,
# the probe, the filesystem's identity, the sweep of the first step's
# partial sample), over every entry: an upper bound on the walk alone,
# within a few ms of it. Also printed: the main thread's share (the event
# loop: sweeps, timers, the mount table) and the worker threads' (where the
# walk runs).
#
#   sudo make bench BENCH=walk          (1,000,000 inodes, 3 runs at each rate)
#   sudo make bench BENCH=walk WALK_INODES=20000 WALK_RATES="10000000 50000" REPS=5
#   sudo make bench BENCH=walk WALK_BINARIES="old=/path/to/old/atimed new=/path/to/atimed"
#
# WALK_RATES: walk_rate values (entries/s); the highest walks in one step,
# 50000 paces it in one-second ticks as section 2 of BENCHMARKS.md did
# (idle_walk_rate is left at its default, 20000: below any rate here, it
# never takes over).
# WALK_BINARIES: name=path pairs, run in turn within each repetition (side
# by side on the same image, same cache). The image (about 600 bytes an
# inode) stays in BENCH_DIR (/var/tmp) for the next run: remove it by hand.
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
N=${WALK_INODES:-1000000}
RATES=${WALK_RATES:-"10000000 50000"}
REPS=${REPS:-3}
BINS=${WALK_BINARIES:-"this=$ATIMED"}
IMG=${WALK_IMAGE:-${BENCH_DIR:-/var/tmp}/atimed-walk-$N.img}

if [ ! -s "$IMG.done" ] || [ ! -f "$IMG" ]; then
        echo "making $IMG: $N empty files in directories of 99"
        rm -f "$IMG" "$IMG.done"
        truncate -s $((N * 600 / 1048576 + 256))M "$IMG"
        mkfs.ext4 -q -F -N $((N + 4096)) "$IMG"
        mkdir -p "$B/mk"
        mount -o loop "$IMG" "$B/mk"
        python3 - "$B/mk" "$N" <<'EOF'
import os, sys
top, n = sys.argv[1], int(sys.argv[2])
made = 0
d = 0
while made < n:
    dd = os.path.join(top, "d%d" % d)
    os.mkdir(dd)
    made += 1
    for j in range(min(99, n - made)):
        os.close(os.open(os.path.join(dd, "f%d" % j), os.O_CREAT | os.O_WRONLY, 0o644))
        made += 1
    d += 1
EOF
        umount "$B/mk"
        echo "$N" >"$IMG.done"
fi
mkdir -p "$B/img" "$B/mnt/walk"
mount -o loop "$IMG" "$B/img"
# Every inode in the cache, so that each run walks the same warm tree.
find "$B/img" -printf '' 2>/dev/null
du -s --inodes "$B/img" >/dev/null
CONF=$(bench_mounts_only ext4 "$B/mnt/walk")

machine_line
echo "walk of $N inodes ($IMG), warm cache, $REPS runs at each walk_rate of: $RATES"

# tid_cpu PID: "main_ns workers_ns" from every thread's schedstat.
tid_cpu() {
        local t m=0 w=0 v
        for t in /proc/"$1"/task/*; do
                v=$(cut -d' ' -f1 "$t/schedstat" 2>/dev/null) || continue
                if [ "${t##*/}" = "$1" ]; then m=$((m + v)); else w=$((w + v)); fi
        done
        echo "$m $w"
}

: >"$B/results"
for ((r = 1; r <= REPS; r++)); do
        for rate in $RATES; do
                for nb in $BINS; do
                        name=${nb%%=*}
                        ATIMED=${nb#*=}
                        rm -rf "$B/state" "$B/atimed.log" "$B/sock"
                        mkdir -p "$B/state"
                        BENCH_PIDS=""
                        start_atimed "$CONF
[daemon]
log_level = debug
[sampler]
walk_rate = $rate
interval = 10s"
                        sleep 1
                        read -r m_ w_ < <(tid_cpu $ATIMED_PID)
                        sleep 1
                        read -r m0 w0 < <(tid_cpu $ATIMED_PID)
                        tids0=$(ls /proc/$ATIMED_PID/task | sort | tr '\n' ' ')
                        s0=$(date +%s%N)
                        mount --bind "$B/img" "$B/mnt/walk"
                        done_line=""
                        for ((i = 0; i < 60000; i++)); do
                                done_line=$(grep -m1 "$B/mnt/walk: sample walk done" "$B/atimed.log" 2>/dev/null) && break
                                sleep 0.01
                        done
                        read -r m1 w1 < <(tid_cpu $ATIMED_PID)
                        s1=$(date +%s%N)
                        tids1=$(ls /proc/$ATIMED_PID/task | sort | tr '\n' ' ')
                        kill -TERM $ATIMED_PID
                        wait $ATIMED_PID 2>/dev/null
                        umount "$B/mnt/walk"
                        [ -n "$done_line" ] || { echo "bench: $name: no walk done line" >&2; continue; }
                        [ "$tids0" = "$tids1" ] || echo "bench: $name: threads came or went during the walk: CPU may be missing" >&2
                        entries=$(sed -n 's/.*sample walk done: \([0-9]*\) inodes.*/\1/p' <<<"$done_line")
                        echo "$name $rate $entries $((m1 - m0)) $((w1 - w0)) $((s1 - s0)) $((m0 + w0 - m_ - w_))" >>"$B/results"
                        awk -v n="$name" -v rate=$rate -v e=$entries -v m=$((m1 - m0)) -v w=$((w1 - w0)) -v s=$((s1 - s0)) -v idle=$((m0 + w0 - m_ - w_)) 'BEGIN {
                                printf "  run %d %-8s walk_rate %-9d %8d entries: %8.1f ms CPU (main %.1f, workers %.1f), %.3f us/entry, %.0f entries/s wall (idle before: %.2f ms/s)\n",
                                       '$r', n, rate, e, (m + w) / 1e6, m / 1e6, w / 1e6, (m + w) / 1e3 / e, e / (s / 1e9), idle / 1e6 }'
                done
        done
done

printf '\n%-10s %10s %9s | %-26s | %-12s | %-14s | %s\n' binary walk_rate entries "us CPU/entry min/med/max" "main us/entry" "entries/CPU s" "entries/s wall, mount to done (med)"
for nb in $BINS; do
        name=${nb%%=*}
        for rate in $RATES; do
                awk -v n="$name" -v r=$rate '$1 == n && $2 == r { print $3, ($4 + $5) / 1e3 / $3, $4 / 1e3 / $3, $3 / ($6 / 1e9) }' "$B/results" >"$B/sel"
                [ -s "$B/sel" ] || continue
                med=$(cut -d' ' -f2 "$B/sel" | median)
                printf '%-10s %10d %9d | %7.3f %7.3f %7.3f    | %12.3f | %14.0f | %.0f\n' "$name" "$rate" \
                        "$(cut -d' ' -f1 "$B/sel" | median)" \
                        "$(cut -d' ' -f2 "$B/sel" | minimum)" "$med" "$(cut -d' ' -f2 "$B/sel" | maximum)" \
                        "$(cut -d' ' -f3 "$B/sel" | median)" "$(awk -v u="$med" 'BEGIN { print 1e6 / u }')" "$(cut -d' ' -f4 "$B/sel" | median)"
        done
done
echo "(CPU: every thread's, from the mount to the walk's done line; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
