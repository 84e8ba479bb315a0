#!/bin/bash
# observer-overhead: what atimed at its default settings costs a read-heavy
# workload. The readblock workload (open, read 1 KiB, close over 20,000
# files on a strictatime ext4 mount, warm cache) runs in alternating rounds
# with atimed running and with atimed stopped (SIGSTOP: no CPU, no I/O),
# in ABBA order; the ratio of each round's medians is reported. Then the
# daemon's CPU per sample sweep and per walked entry, and its RSS.
# With FIRST_WALK_INODES=N, a second ext4 of N empty files is tracked too,
# and the rounds run while atimed's first walk of it does (the walked share
# is printed before and after the rounds): the cost of a first walk.
#
#   sudo make bench BENCH=observer-overhead   (ROUNDS=20 PASSES=5 by default)
#   sudo make bench BENCH=observer-overhead FIRST_WALK_INODES=1000000
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
NFILES=${NFILES:-20000}
ROUNDS=${ROUNDS:-20}
PASSES=${PASSES:-5}

make_image a 256 ext4
mkdir -p "$B/mnt/strict"
mount -o loop,strictatime "$B/a.img" "$B/mnt/strict"
make_files "$B/mnt/strict" "$NFILES"
sync
list_files "$B/mnt/strict" "$NFILES" >"$B/list"
FIRST_WALK_INODES=${FIRST_WALK_INODES:-}
if [ -n "$FIRST_WALK_INODES" ]; then
        big=${BENCH_DIR:-/var/tmp}/atimed-oo-$$.img
        truncate -s $((FIRST_WALK_INODES * 600 / 1048576 + 256))M "$big"
        mkfs.ext4 -q -F -N $((FIRST_WALK_INODES + 4096)) "$big"
        trap 'bench_cleanup; rm -f "$big"' EXIT
        mkdir -p "$B/mnt/big"
        mount -o loop "$big" "$B/mnt/big"
        python3 - "$B/mnt/big" "$FIRST_WALK_INODES" <<'EOF'
import os, sys
top, n = sys.argv[1], int(sys.argv[2])
for d in range((n + 99) // 100):
    dd = os.path.join(top, "d%d" % d)
    os.mkdir(dd)
    for j in range(99):
        os.close(os.open(os.path.join(dd, "f%d" % j), os.O_CREAT | os.O_WRONLY, 0o644))
EOF
        umount "$B/mnt/big" && mount -o loop "$big" "$B/mnt/big" # its caches cold
fi
# walked_share: how much of the big filesystem the first walk has seen.
walked_share() {
        "$ATIMECTL" --socket "$B/sock" --json status | jq -r --arg t "$B/mnt/big" '.mounts[] | select(.target == $t) |
                if .activity then "figure resting on \(.activity.coverage * 100 | floor)%" else "\(.progress.stage) \(.progress.walked)/\(.progress.inodes)" end'
}

echo "observer-overhead: readblock over $NFILES files on strictatime ext4 (loop), warm cache"
echo "machine: $(nproc) CPUs, $(uname -r), $(awk '/^model name/ { $1=$2=$3=""; print; exit }' /proc/cpuinfo | sed 's/^ *//')"

# Default settings: an empty configuration file.
start_atimed ""
t0=$(date +%s)
wait_measured "$B/mnt/strict" 240 || { echo "bench: no measurement after 240 s" >&2; exit 1; }
echo "first measurement of the mount after $(($(date +%s) - t0)) s (walk at 1000 entries/s, then two 1 min sweeps)"

"$READBLOCK" 3 <"$B/list" >/dev/null # warm the cache
[ -n "$FIRST_WALK_INODES" ] && echo "first walk of $FIRST_WALK_INODES inodes before the rounds: $(walked_share)"
: >"$B/ratios"
: >"$B/with"
: >"$B/without"
run() { "$READBLOCK" "$PASSES" <"$B/list" | median; }
for ((r = 1; r <= ROUNDS; r++)); do
        for side in $( ((r % 2)) && echo "without with" || echo "with without"); do
                if [ "$side" = without ]; then
                        kill -STOP $ATIMED_PID
                        v=$(run)
                        kill -CONT $ATIMED_PID
                        echo "$v" >>"$B/without"
                        wo=$v
                else
                        v=$(run)
                        echo "$v" >>"$B/with"
                        w=$v
                fi
        done
        awk -v a="$w" -v b="$wo" 'BEGIN { printf "%.4f\n", a / b }' >>"$B/ratios"
done

[ -n "$FIRST_WALK_INODES" ] && echo "first walk of $FIRST_WALK_INODES inodes after the rounds: $(walked_share)"
printf '\n%-28s %10s %10s %10s\n' "" median min max
printf '%-28s %10.1f %10.1f %10.1f\n' "ns/file, atimed stopped" "$(median <$B/without)" "$(minimum <$B/without)" "$(maximum <$B/without)"
printf '%-28s %10.1f %10.1f %10.1f\n' "ns/file, atimed running" "$(median <$B/with)" "$(minimum <$B/with)" "$(maximum <$B/with)"
printf '%-28s %10.4f %10.4f %10.4f   (target: median <= 1.01)\n' "ratio running/stopped" "$(median <$B/ratios)" "$(minimum <$B/ratios)" "$(maximum <$B/ratios)"
echo "($ROUNDS rounds in ABBA order, each the median of $PASSES passes)"

# CPU per sweep: this bench's filesystems alone (every other ext4 mount of
# the host, other work's loop mounts included, excluded: bench_mounts_only),
# swept every second for 60 s.
kill -TERM $ATIMED_PID; wait $ATIMED_PID 2>/dev/null
ONLY_BENCH_FS=$(bench_mounts_only ext4 "$B/mnt")
start_atimed "$ONLY_BENCH_FS
[sampler]
interval = 1s
walk_rate = 1000000"
wait_measured "$B/mnt/strict" 60
nfs=$("$ATIMECTL" --socket "$B/sock" --json status | jq '[.mounts[] | select(.atime != "noatime" and .read_only == false) | "\(.device.major):\(.device.minor)"] | unique | length')
sleep 2
c0=$(cpu_ns $ATIMED_PID)
s0=$(date +%s.%N)
sleep 60
c1=$(cpu_ns $ATIMED_PID)
s1=$(date +%s.%N)
awk -v ns=$((c1 - c0)) -v s0=$s0 -v s1=$s1 -v nfs=$nfs 'BEGIN {
        cpu = ns / 1e9; secs = s1 - s0; sweeps = secs
        printf "\nCPU per sweep cycle: %.2f ms (%.0f cycles in %.0f s, %d sampled filesystems of 1000 inodes, %.2f ms each)\n",
               cpu * 1000 / sweeps, sweeps, secs, nfs, cpu * 1000 / sweeps / (nfs ? nfs : 1)
        printf "CPU per day at the default 1 min interval: %.1f s\n", cpu / sweeps * 1440 }'
echo "RSS: $(rss_kib $ATIMED_PID) KiB"

# The walk: entries per CPU second.
kill -TERM $ATIMED_PID; wait $ATIMED_PID 2>/dev/null
rm -f "$B/atimed.log"
start_atimed "$ONLY_BENCH_FS
[daemon]
log_level = debug
[sampler]
walk_rate = 50000"
for _ in $(seq 1200); do
        grep -q "$B/mnt/strict: sample walk done" "$B/atimed.log" 2>/dev/null && break
        sleep 0.1
done
# All the daemon's CPU since it started (start-up, the first probe, the
# wait for the walk and, with FIRST_WALK_INODES, the big filesystem's walk
# included): an upper bound for the walk. bench/walk.sh measures the walk
# alone, at 1,000,000 entries.
awk -v ns=$(cpu_ns $ATIMED_PID) -v n=$NFILES 'BEGIN {
        printf "walk of %d files (at up to 50000 entries/s): at most %.1f ms CPU, %.2f us per entry (an upper bound: see bench/walk.sh)\n", n, ns / 1e6, ns / 1e3 / n }'
