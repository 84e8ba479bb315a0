#!/bin/bash
# bursts.sh: files read once each, in bursts (a find | xargs cat of the
# next 1,250 files every 4 s), on an ext4 strictatime loop mount, judged by
# the kernel (issue 35). The filesystem does nothing but atime updates, so
# its journal's count of handles stands as the figure; the journal counts
# a handle when its transaction commits, up to a commit (5 s) after it was
# made, and a count read at the sweep held a burst more or one fewer than
# the interval (15,064 and 20,180/min against the kernel's 20,077 and
# 17,669). atimed now ends the count's interval at an edge of the commits
# (kcount.h), and the figure's interval with it. Two cases, one after the
# other, on the same filesystem and daemon:
#
#   calm   the bursts alone
#   busy   the bursts beside a neighbour filesystem (tmpfs, not judged)
#          with a handful of files read flat out, one reader per CPU plus
#          one, so that no CPU is idle (the daemon at Nice=10 and the idle
#          I/O class, as its unit runs it)
#
# The kernel's count (ext4:ext4_mark_inode_dirty on the device, a tracefs
# instance of its own, read ten times a second) is compared with every
# figure atimed publishes over two whole intervals of each case: each
# within 10% of the count, and the count within its 95% interval.
# BURSTS_IV=S sets the interval (30 s by default; at 10 s see atimed(8),
# KERNEL COUNTS), BURSTS_CASES the cases, BURSTS_LOG=FILE keeps the log.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
READLOAD=$top_builddir/tests/helpers/readload
M=$T/mnt
IV=${BURSTS_IV:-30}
NREAD=$(($(nproc) + 1))
# BURST_DIRS directories of 250 files every BURST_S seconds (312 reads a
# second on average): a round of the 60 every 48 s, each file read once a
# round.
BURST_DIRS=5 BURST_S=4

command -v mkfs.ext4 >/dev/null || skip_all "needs mkfs.ext4"
judge_init ext4

LOAD_PIDS=""
bursts_cleanup() {
        local p
        for p in $LOAD_PIDS; do kill "$p" 2>/dev/null; done
        for p in $LOAD_PIDS; do wait "$p" 2>/dev/null; done # not a bare wait: the poller runs on
        judge_cleanup
}
trap 'bursts_cleanup; cleanup' EXIT

# --- The filesystem: the tree taken at mkfs time, its image on a tmpfs of
# its own; the neighbour a tmpfs.
mkdir -p $T/img $M/bursts $M/noise
mount -t tmpfs -o size=256m,mode=0755 atimed-bursts-img $T/img || bail "no tmpfs for the image"
make_tree $T/tree 60 250
truncate -s 128M $T/img/bursts.img && mkfs.ext4 -q -F -N 20000 -d $T/tree $T/img/bursts.img || bail "mkfs.ext4"
rm -rf $T/tree
mount -o loop,strictatime $T/img/bursts.img $M/bursts || bail "mount the ext4 image"
mount -t tmpfs -o strictatime noise $M/noise && make_tree $M/noise 1 20 || bail "the neighbour"
list_tree $M/noise 1 20 >$T/noise.list
sync

judge_new bursts ext4 "$(judge_dev $M/bursts)"
judge_on bursts

# --- atimed, as the unit runs it, on this mount alone (the neighbour is
# tmpfs, not tracked).
write_config "[daemon] log_level = ${BURSTS_LOG_LEVEL:-info}" '[mounts] include_fstypes = ext4' \
        '[probe] interval = 7d' "[sampler] interval = ${IV}s"
DAEMON_WRAPPER=(nice -n 10 ionice -c 3)
start_daemon
# Its first figures (a first walk's part, then half an interval after the
# baseline) come before the workloads, and the first timed one, a whole
# interval long: the intervals judged are timed ones.
check "the mount has a timed figure before the workloads" wait_until $((3 * IV + 60)) sh -c \
        "ctl --json status | jq -e --arg t $M/bursts --argjson iv $IV '.mounts[] | select(.target == \$t) |
          .activity.interval_s // 0 | . >= 0.8 * \$iv'"

# Every figure published, polled twice a second: "bursts CASE at
# interval_s updates lo hi source".
poll_activity bursts $T/sock $M/ atime_updates_per_min updates_ci95 figure_source >>$T/polled &
BG_PIDS="$BG_PIDS $!"

# The workloads (flat_out and bursts: lib.sh).
w_calm() { bursts $M/bursts; }
w_busy() { flat_out $T/noise.list; bursts $M/bursts; }

# intervals CASE SINCE: the whole intervals of the mount published while
# CASE ran that began at SINCE or later, "at interval_s updates lo hi
# source", one a line.
intervals() {
        sort -u $T/polled | awk -v t=$2 '$2 == "bursts" && $3 - $4 >= t' | cut -d' ' -f3- | sort -k1,1n -u
}

# judge CASE SINCE: each whole interval beside the kernel's count over it,
# interpolated between the readings around its ends. An interval ends
# during the Unix second "at" names: the count is taken over the window
# ending at at + 0.5, its range over windows ending anywhere in that
# second.
judge() {
        local c=$1
        intervals $c $2 | awk -v counts=$T/count-$c '
                function at(x,   i) {
                        for (i = 2; i <= m; i++) if (ts[i] >= x) return cs[i - 1] + (cs[i] - cs[i - 1]) * (x - ts[i - 1]) / (ts[i] - ts[i - 1])
                        return -1
                }
                function rate(end,   a, b) { a = at(end - $2); b = at(end); return a < 0 || b < 0 ? -1 : (b - a) * 60 / $2 }
                BEGIN { while ((getline l < counts) > 0) { split(l, f, " "); m++; ts[m] = f[1]; cs[m] = f[2] } }
                { k = rate($1 + 0.5); lo = hi = k
                  for (s = 0; s <= 1; s += 0.25) { x = rate($1 + s); if (x < lo) lo = x; if (x > hi) hi = x }
                  if (lo < 0) next
                  printf "%s %.1f %.1f %.1f\n", $0, k, lo, hi }' >$T/judged-$c
        diag "$c: interval end, s, atimed/min, ci95 lo, hi, source, kernel/min (range)"
        sed 's/^/#   /' $T/judged-$c
        check "$c: two whole intervals judged" test "$(wc -l <$T/judged-$c)" -ge 2
        check "$c: every interval within 10% of the kernel's count" awk '{ if ($7 <= 0 || $3 / $7 > 1.1 || $3 / $7 < 0.9) bad++ } END { exit bad > 0 || NR == 0 }' $T/judged-$c
        check "$c: the kernel's count within every 95% interval" awk '{ if ($9 < $4 || $8 > $5) bad++ } END { exit bad > 0 || NR == 0 }' $T/judged-$c
}

# run_case CASE: its workload until atimed has published two whole
# intervals that began 2 s or more after it started (its first bursts
# done), then the judge.
run_case() {
        local c=$1 t0 since p
        judge_record bursts 100 3600 $T/count-$c
        t0=$(date +%s.%N)
        w_$c
        since=$(awk -v t=$t0 'BEGIN { printf "%.3f", t + 2 }')
        wait_until $((4 * IV + 60)) sh -c "[ \$(sort -u $T/polled | awk -v t=$since '\$2 == \"bursts\" && \$3 - \$4 >= t' | awk '{ print \$3 }' | sort -u | wc -l) -ge 2 ]"
        sleep 1.5 # the count runs on past the last interval's end
        for p in $LOAD_PIDS; do kill "$p" 2>/dev/null; done
        for p in $LOAD_PIDS; do wait "$p" 2>/dev/null; done
        LOAD_PIDS=""
        judge_cleanup_recorders
        judge $c $since
}
# (The recorder of a case stops with it; the instance counts on.)
judge_cleanup_recorders() {
        local p
        for p in $JUDGE_PIDS; do kill "$p" 2>/dev/null; done
        for p in $JUDGE_PIDS; do wait "$p" 2>/dev/null; done
        JUDGE_PIDS=""
}

for c in ${BURSTS_CASES:-calm busy}; do
        run_case $c
done

stop_daemon
is "atimed exits 0" "$STOP_STATUS" "0"
[ -n "${BURSTS_LOG:-}" ] && cp $T/atimed.log "$BURSTS_LOG"
done_testing
