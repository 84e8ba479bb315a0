#!/bin/bash
# utimes-judged.sh: atimes set with utimensat are not reads, judged by the
# kernel. On a strictatime ext4, a reader reads 40 files once a second each
# while user nobody runs 'touch -a' on 200 files of its own once a second.
# The kernel's count of atime updates on the read files alone (the
# ext4_mark_inode_dirty tracepoint, filtered to their inodes, counted by a
# tracefs instance of the test's own) is the truth: atimed's figure against
# it must be the same, within 25%, with nobody's sets as without them, and
# within 30% of the count either way; the sets are reported apart.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v setpriv >/dev/null || skip_all "needs setpriv"
command -v mkfs.ext4 >/dev/null || skip_all "needs mkfs.ext4"
judge_init ext4
READLOAD=$top_builddir/tests/helpers/readload
IV=10
M=$T/mnt
mkdir -p $T/tree/r $T/tree/s $M/fs
for i in $(seq 1 40); do echo read >$T/tree/r/f$i; done
for i in $(seq 1 200); do echo set >$T/tree/s/f$i; done
truncate -s 64M $T/fs.img && mkfs.ext4 -q -F -d $T/tree $T/fs.img || bail mkfs
mount -o loop,strictatime $T/fs.img $M/fs || bail mount
chown -R nobody:nogroup $M/fs/s
chmod 0755 $T $M
find $M/fs/r -type f | sort >$T/r.list

# The read files' inodes: one range, apart from the set ones.
read rmin rmax < <(stat -c %i $M/fs/r/* | sort -n | awk 'NR == 1 { a = $1 } { b = $1 } END { print a, b }')
read smin smax < <(stat -c %i $M/fs/s/* | sort -n | awk 'NR == 1 { a = $1 } { b = $1 } END { print a, b }')
[ "$smax" -lt "$rmin" ] || [ "$smin" -gt "$rmax" ] || bail "the read and set files' inodes interleave"
judge_new reads ext4 "$(judge_dev $M/fs) && ino >= $rmin && ino <= $rmax"
judge_on reads

write_config '[mounts] exclude_paths = [/]' '[mounts] include_fstypes = ext4' "[sampler] interval = ${IV}s"
start_daemon
LOAD_PIDS=""
utimes_cleanup() {
        kill $LOAD_PIDS 2>/dev/null
        wait $LOAD_PIDS 2>/dev/null
        judge_cleanup
}
trap 'utimes_cleanup; cleanup' EXIT
check "the mount is measured" wait_until 60 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r --arg t $M/fs '.mounts[] | select(.target == \$t) | .activity.at // empty')\" ]"

judge_record reads 100 600 $T/count
"$READLOAD" 40 600 <$T/r.list >/dev/null &
LOAD_PIDS="$LOAD_PIDS $!"

# Every figure published, as "at interval_s updates lo hi sets".
poll() {
        ctl --json status 2>/dev/null | jq -r --arg t $M/fs '.mounts[] | select(.target == $t) | .activity |
                select(. != null and .at != null) |
                "\(.at) \(.interval_s) \(.atime_updates_per_min) \(.updates_ci95[0]) \(.updates_ci95[1]) \(.atime_sets_per_min // 0)"'
}
# intervals FROM [TO]: the published intervals that began at FROM or later
# (and ended before TO).
intervals() { sort -u $T/polled | awk -v t=$1 -v u=${2:-1e12} '$1 - $2 >= t && $1 < u' | sort -n -u -k1,1; }
# three_whole FROM: polls, and succeeds once three intervals that began
# at FROM or later have been published.
three_whole() {
        poll >>$T/polled
        sleep 0.2
        [ "$(intervals $1 | wc -l)" -ge 3 ]
}
later() { awk -v t=$(date +%s.%N) -v iv=$IV 'BEGIN { printf "%.3f", t + iv + 1 }'; }

# Reads alone, then reads and sets.
since_a=$(later)
check "three whole intervals of reads alone" wait_until 120 three_whole $since_a
: >$T/rounds && chown nobody $T/rounds
t0=$(date +%s.%N)
# setpriv execs the shell: $! is the loop itself. Each round counted.
setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "while :; do touch -a $M/fs/s/f*; echo >>$T/rounds; sleep 1; done" &
LOAD_PIDS="$LOAD_PIDS $!"
since_b=$(later)
check "three whole intervals of reads and sets" wait_until 120 three_whole $since_b
sleep 1.5 # the count runs on past the last interval's end
rounds=$(wc -l <$T/rounds)
elapsed=$(awk -v t=$t0 -v n=$(date +%s.%N) 'BEGIN { print n - t }')
utimes_cleanup
trap cleanup EXIT

# judge NAME FROM [TO]: each whole interval beside the kernel's count over
# it (interpolated between the readings around each end; the interval ends
# during the second "at" names: its count taken to at + 0.5).
judge() {
        intervals $2 ${3:-} | awk -v counts=$T/count '
                function at(x,   i) {
                        for (i = 2; i <= m; i++) if (ts[i] >= x) return cs[i - 1] + (cs[i] - cs[i - 1]) * (x - ts[i - 1]) / (ts[i] - ts[i - 1])
                        return -1
                }
                BEGIN { while ((getline l < counts) > 0) { split(l, f, " "); m++; ts[m] = f[1]; cs[m] = f[2] } }
                { a = at($1 + 0.5 - $2); b = at($1 + 0.5); if (a >= 0 && b >= 0) printf "%s %.1f\n", $0, (b - a) * 60 / $2 }' >$T/judged-$1
        diag "$1: interval end, s, atimed updates/min, ci95 lo, hi, sets/min, kernel's updates/min of the read files"
        sed 's/^/#   /' $T/judged-$1
        check "$1: three intervals judged" test "$(wc -l <$T/judged-$1)" -ge 3
        # A reader at a steady pace, here each file once a second, is the
        # case the ages' histogram is for (atimed(8)): every interval's
        # 95% interval holds the count.
        check "$1: the kernel's count inside every interval" \
                awk '{ if ($7 < $4 * 0.98 || $7 > $5 * 1.02) bad++ } END { exit bad > 0 }' $T/judged-$1
}
# ratio NAME: atimed's figure over the kernel's count, over NAME's intervals.
ratio() { awk '{ e += $3 * $2; k += $7 * $2 } END { printf "%.3f", (k > 0 ? e / k : -1) }' $T/judged-$1; }
judge reads $since_a $t0
judge both $since_b
ra=$(ratio reads) rb=$(ratio both)
diag "atimed against the kernel's count of reads: $ra with reads alone, $rb with 200 sets a second besides"
# Within 30% (issue 21's bound; its goal is 10%): the reads alone begin
# with the readers' first minute, while the rates are learnt afresh.
for x in "reads alone:$ra" "reads and sets:$rb"; do
        check "${x%%:*}: within 30% of the kernel's count (${x#*:})" awk -v r=${x#*:} 'BEGIN { exit !(r >= 0.7 && r <= 1.3) }'
done
# Counted as reads, the sets would add 12,000/min to 2,400: five times
# the figure. Within a quarter, what the estimator's own noise leaves.
check "the sets add nothing to the figure (within 25% of the reads alone: $rb against $ra)" \
        awk -v a=$ra -v b=$rb 'BEGIN { exit !(a > 0 && b / a >= 0.75 && b / a <= 1.25) }'
# Each inode set is counted once per interval (a look sees the last set
# only): 200 inodes, every interval.
check "the sets reported apart: 200 inodes each interval" awk -v iv=$IV '{ x += $6 * $2; t += $2 } END { x /= t; e = 200 * 60 / iv;
        printf "%.0f inodes set/min reported, %.0f expected\n", x, e; exit !(x >= 0.9 * e && x <= 1.1 * e) }' $T/judged-both
check "the reads alone have no sets" awk '{ if ($6 > 0) bad++ } END { exit bad > 0 }' $T/judged-reads
diag "the toucher: $rounds rounds of 200 in $elapsed s"
stop_daemon
is "atimed exits 0" "$STOP_STATUS" "0"
done_testing
