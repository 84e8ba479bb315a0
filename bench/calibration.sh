#!/bin/bash
# calibration: is atimed's figure of atime updates right, and does its 95%
# interval hold the truth, on every workload, idle or saturated? A matrix
# of cells, each a workload on a filesystem, judged interval by interval
# against the kernel's own count of the atime updates its readers made
# (a tracefs instance per cell, tests/integration/lib.sh's judge):
#
#   hot       20 of 200 files read flat out
#   distinct  15,000 files read once each in turn, 300 a second
#   mix       20 hot files flat out, the rest at 300 a second, and a writer
#             appending to a log 100 times a second (no interval pure)
#   bursts    a find | xargs cat of the next 1,250 files every 4 s
#   relatime  a relatime mount of 200 files, 20 of them read 100 times a
#             second each, one of those written every second (relatime
#             writes the atime once after each write)
#   shared    xfs: 20 hot files each read by every one of nproc + 1
#             readers flat out (two readers of a file in one tick on two
#             CPUs write it twice), beside a writer, so that no interval is
#             pure and no ratio learnt first
#   hidden    issue 46's acceptance scenario: hot readers flat out (nproc
#             + 1 of them) on one ext4, distinct files at 300 a second on
#             another, and a relatime ext4 beside with 20 files read flat
#             out and one written every second; its own load
#
# on ext4, xfs and tmpfs (shared: xfs; hidden: ext4), each idle (the
# workload alone; its flat-out files have one reader between them, so a
# CPU stays free on two) and saturated (nproc CPU hogs beside, at the
# daemon's own priority less ten: no CPU is ever idle). The cells of a
# load run at once, in one daemon, as its unit runs it (Nice=10, the idle
# I/O class), tracking the cells' mounts alone, started once the
# workloads run (its first walk finds the files they read, as on a host
# it is started on); judged from its first figures on.
#
# The kernel's count: ext4:ext4_mark_inode_dirty and xfs:xfs_update_time
# on the cell's device, writeback:writeback_mark_inode_dirty of the
# cell's inodes on tmpfs, each only in the readers (a writer's own
# updates of the same inodes are not atime's). Per cell: the intervals
# judged, the median and the worst ratio atimed / kernel (1 where the
# figure lies within the count's range over windows ending anywhere in
# the second atimed says the interval ended), the share of intervals
# whose 95% interval holds the count, the median half-width of that
# interval over the count, the share of figures that are the kernel's own
# count (xfs's, or ext4's journal, where the interval was pure), and the
# daemon's CPU over the load's judged intervals (the cells of a load share
# it).
#
#   sudo make bench BENCH=calibration        (about an hour: five loads of
#                                             about 12 minutes at 30 s)
#   CALIB_CELLS="hot mix"      the workloads to run (all by default)
#   CALIB_FS="ext4 tmpfs"      the filesystems (ext4 xfs tmpfs)
#   CALIB_LOADS=saturated      the loads (idle saturated)
#   CALIB_IV=30 CALIB_N=20     the sampler interval (s) and the intervals
#                              judged a cell (under 30 s, ext4 commits
#                              every IV/6 s, so that its journal's count
#                              stands as it does at the default minute)
#   CALIB_HIDDEN_IV=60 CALIB_HIDDEN_N=10   the same for the hidden
#                              scenario (the daemon's default interval)
#   CALIB_COUNTS=0             the daemon blind to the kernel's counts
#                              (xfs stats, ext4's journal): the sample's
#                              figure judged alone
#   CALIB_KEEP=DIR             each load's daemon log (debug), polled
#                              figures and counts kept in DIR
. "$top_srcdir/bench/lib.sh"
. "$top_srcdir/tests/integration/lib.sh" # the judge
bench_enter_namespace
T=$B # where lib.sh's judge keeps its tracefs
IV=${CALIB_IV:-30}
N=${CALIB_N:-20}
HIDDEN_IV=${CALIB_HIDDEN_IV:-60} HIDDEN_N=${CALIB_HIDDEN_N:-10}
CELLS=${CALIB_CELLS:-hot distinct mix bursts relatime shared hidden}
FSTYPES=${CALIB_FS:-ext4 xfs tmpfs}
LOADS=${CALIB_LOADS:-idle saturated}
COUNTS=${CALIB_COUNTS:-1}
KEEP=${CALIB_KEEP:-}
HOGS=$(nproc)
NREAD=$(($(nproc) + 1))
READLOAD=$top_builddir/tests/helpers/readload
BURST_DIRS=5 BURST_S=4 # lib.sh's bursts: 1,250 files every 4 s
M=$B/mnt
CTL() { "$ATIMECTL" --socket "$B/sock" "$@"; }

[ -x "$READLOAD" ] && [ -x "$TRACECOUNT" ] || { echo "bench: build tests/helpers/readload and tracecount first" >&2; exit 1; }
for fs in $FSTYPES; do
        [ $fs = tmpfs ] || command -v mkfs.$fs >/dev/null || { echo "bench: needs mkfs.$fs" >&2; exit 1; }
done
judge_init $(for fs in $FSTYPES; do echo $fs; done | sort -u)

LOAD_PIDS="" RPIDS="" HOG_PIDS=""
calib_cleanup() {
        local p
        for p in $LOAD_PIDS $HOG_PIDS $BG_PIDS; do kill "$p" 2>/dev/null; done
        for p in $LOAD_PIDS $HOG_PIDS $BG_PIDS; do wait "$p" 2>/dev/null; done
        judge_cleanup
        umount -R "$M" 2>/dev/null
        bench_cleanup
}
trap calib_cleanup EXIT

# The trees, made once on the bench's tmpfs: taken by ext4 at mkfs time,
# copied onto xfs and tmpfs.
make_tree $B/t-small 10 20
make_tree $B/t-large 60 250
mkdir -p $B/img $M

# cells_of PHASE: the cells that run in PHASE (main, shared, hidden),
# "workload-fstype".
cells_of() {
        local w fs
        for w in $CELLS; do
                case $1-$w in
                shared-shared) [[ " $FSTYPES " == *" xfs "* ]] && echo shared-xfs ;;
                hidden-hidden) echo hidden-hot hidden-distinct hidden-rel ;;
                main-shared | main-hidden | shared-* | hidden-*) ;;
                *) for fs in $FSTYPES; do echo $w-$fs; done ;;
                esac
        done | xargs
}

# tmpfs_skip DIR: the tmpfs on DIR numbers its inodes on from where the
# last one made numbered them to: the judge tells tmpfs cells apart by
# their inodes' numbers (judge_tmpfs_filter), and each tmpfs counts from 1.
TMPFS_NEXT=0
tmpfs_skip() {
        python3 -c 'import os, sys
for i in range(int(sys.argv[2])):
    p = "%s/.skip%d" % (sys.argv[1], i); open(p, "w").close(); os.unlink(p)' "$1" $TMPFS_NEXT
        TMPFS_NEXT=$((TMPFS_NEXT + 20000))
}

# make_fs CELL: its filesystem, populated and mounted on $M/CELL.
make_fs() {
        local c=$1 fs=${1##*-} tree=$B/t-large opt=strictatime img=$B/img/$1.img dir=$M/$1
        case $c in hot-* | relatime-* | shared-* | hidden-hot | hidden-rel) tree=$B/t-small ;; esac
        case $c in relatime-* | hidden-rel) opt=relatime ;; esac
        case $c in hidden-*) fs=ext4 ;; esac
        # The journal's count stands over 5.5 commits (kcount.h): at the
        # default minute and commit=5 it does; at a shorter interval the
        # journal commits as much more often.
        [ $fs = ext4 ] && [ "$CUR_IV" -lt 30 ] && opt=$opt,commit=$((CUR_IV / 6 > 0 ? CUR_IV / 6 : 1))
        mkdir -p $dir
        case $fs in
        ext4) truncate -s 128M $img && mkfs.ext4 -q -F -N 20000 -d $tree $img && mount -o loop,$opt $img $dir ;;
        xfs) truncate -s 320M $img && mkfs.xfs -q -f $img && mount -o loop,$opt $img $dir && cp -a $tree/. $dir/ ;;
        tmpfs) mount -t tmpfs -o $opt,size=256m,nr_inodes=40000 $1 $dir && tmpfs_skip $dir && cp -a $tree/. $dir/ ;;
        esac || { echo "bench: cannot make $c" >&2; exit 1; }
        case $c in mix-* | shared-*) : >$dir/log ;; esac
        # relatime: every atime past its mtime and ctime, so that a read
        # writes one only after a write.
        case $c in relatime-* | hidden-rel) list_tree $dir 10 20 | xargs cat >/dev/null ;; esac
}

# The workloads. Each reader's pid goes to RPIDS (the judge counts what
# they do), every process's to LOAD_PIDS.
reader() { # RATE LIST...
        local rate=$1
        shift
        cat "$@" | "$READLOAD" $rate 36000 >/dev/null &
        LOAD_PIDS="$LOAD_PIDS $!" RPIDS="$RPIDS $!"
}
appender() { # FILE: a line 100 times a second
        python3 -c 'import sys, time
f = open(sys.argv[1], "a")
while True:
    f.write("%.6f a line of the log\n" % time.time()); f.flush(); time.sleep(0.01)' "$1" &
        LOAD_PIDS="$LOAD_PIDS $!"
}
rewriter() { # DIR: a line appended to one of DIR's 20 files every second, in turn
        python3 -c 'import sys, time
n = 0
while True:
    with open("%s/f%d" % (sys.argv[1], n % 20), "a") as f: f.write("written\n")
    n += 1; time.sleep(1)' "$1" &
        LOAD_PIDS="$LOAD_PIDS $!"
}
# (lib.sh's flat_out and bursts start readers into LOAD_PIDS.)
readers_of() { # COMMAND...: runs it; the pids it added to LOAD_PIDS are readers
        local before=$LOAD_PIDS
        "$@"
        RPIDS="$RPIDS ${LOAD_PIDS#"$before"}"
}

# start_workloads CELL...: every cell's workload, the flat-out files of
# the hot and mix cells read by one reader between them.
start_workloads() {
        local c dir hot=()
        for c in "$@"; do
                dir=$M/$c
                list_tree $dir 1 20 >$B/$c.hot
                case $c in mix-*) list_tree $dir 60 250 | tail -n +21 >$B/$c.rest ;; esac
                case $c in
                hot-* | mix-*) hot+=($B/$c.hot) ;;
                esac
                case $c in
                distinct-* | hidden-distinct) list_tree $dir 60 250 >$B/$c.rest && reader 300 $B/$c.rest ;;
                mix-*) reader 300 $B/$c.rest && appender $dir/log ;;
                bursts-*) readers_of bursts $dir ;;
                relatime-*) reader 2000 $B/$c.hot && rewriter $dir/d0 ;;
                shared-*) readers_of flat_out $B/$c.hot && appender $dir/log ;;
                hidden-hot) readers_of flat_out $B/$c.hot ;;
                hidden-rel) reader 1000000000 $B/$c.hot && rewriter $dir/d0 ;;
                esac
        done
        [ ${#hot[@]} -eq 0 ] || reader 1000000000 "${hot[@]}"
}

# hogs: one CPU hog a CPU, at the daemon's priority less ten (nice 0).
hogs() {
        local i
        for ((i = 0; i < HOGS; i++)); do
                sh -c 'while :; do :; done' &
                HOG_PIDS="$HOG_PIDS $!"
        done
}

# The figures, polled twice a second: "PHASE CELL at interval_s updates
# lo hi source" (lib.sh's poll_activity).
# judged PHASE CELL SINCE: the cell's intervals that began at SINCE or
# later, the last figure polled of each, with the kernel's count.
judged() {
        awk -v p=$1 -v c=$2 -v t=$3 '$1 == p && $2 == c && $3 - $4 >= t && $5 ~ /^[0-9.e+]+$/ { last[$3] = $0 }
                END { for (a in last) print last[a] }' $B/polled | sort -k3,3n | judge_windows $B/count-$2 3
}

# intervals_done PHASE SINCE CELL...: each cell has N judged intervals.
intervals_done() {
        local p=$1 t=$2 c
        shift 2
        for c in "$@"; do
                [ "$(awk -v p=$p -v c=$c -v t=$t '$1 == p && $2 == c && $3 - $4 >= t { print $3 }' $B/polled | sort -u | wc -l)" -ge $N ] || return 1
        done
}

# cell_line PHASE LOAD CELL CPU N: the cell's figures, one line (see the
# header), "done" if it meets the issue's bar over N intervals or more.
cell_line() {
        awk -v cell=$3 -v load=$2 -v cpu=$4 -v want=$5 '
                function med(a, n,   i, j, t) {
                        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
                }
                {
                        e = $5; k = $9; klo = $10; khi = $11
                        if (e >= klo && e <= khi) r = 1
                        else if (e > khi) r = khi > 0 ? e / khi : 99
                        else r = e / klo
                        n++; ratio[n] = r; width[n] = k > 0 ? ($7 - $6) / 2 / k : 0
                        d = r > 0 ? log(r) : 99; if (d < 0) d = -d
                        if (n == 1 || d > worst_d) { worst_d = d; worst = r }
                        covered += $6 <= khi && $7 >= klo
                        counted += $8 == "kernel_count"
                        se += e * $4; sk += k * $4
                }
                END {
                        if (n == 0) { printf "%-16s %-9s %3d\n", cell, load, 0; exit }
                        m = med(ratio, n)
                        ok = m >= 0.95 && m <= 1.05 && worst >= 0.9 && worst <= 1.1 && covered / n >= 0.93 && n >= want
                        printf "%-16s %-9s %3d %7.3f %7.3f %6.2f %7.3f %6.2f %7.3f %6s %s\n", cell, load, n, m, worst,
                               covered / n, med(width, n), counted / n, (sk > 0 ? se / sk : 0), cpu, (ok ? "ok" : "NO")
                }'
}

header() {
        printf "%-16s %-9s %3s %7s %7s %6s %7s %6s %7s %6s %s\n" cell load n median worst cover "+-" kernel "sum" "cpu%" done
}

# cpu_between FILE FROM TO: the daemon's CPU over [FROM, TO] (Unix times)
# from "TIME CPU_NS" lines, in percent of a CPU.
cpu_between() {
        awk -v a=$2 -v b=$3 '$1 >= a && !t0 { t0 = $1; c0 = $2 } $1 <= b { t1 = $1; c1 = $2 }
                END { if (t1 > t0) printf "%.1f", (c1 - c0) / 1e9 / (t1 - t0) * 100; else print "-" }' $1
}

# run_phase PHASE LOAD: PHASE's cells under LOAD, judged; their lines go
# to $B/results.
run_phase() {
        local p=$1 load=$2 cells c since end iv=$IV n=$N
        cells=$(cells_of $p)
        [ -n "$cells" ] || return 0
        [ $p = hidden ] && iv=$HIDDEN_IV n=$HIDDEN_N
        CUR_IV=$iv
        echo "== $p, $load: $cells; interval ${iv}s; $(uptime | sed 's/^ *//')"
        for c in $cells; do make_fs $c; done
        sync
        # The workloads first, and the judge (one instance a cell,
        # counting the readers alone): the daemon's first walk finds the
        # files they read, as on a host it is started on.
        RPIDS=""
        start_workloads $cells
        [ $load = saturated ] && hogs
        for c in $cells; do
                case $c in
                *-tmpfs) judge_new $c tmpfs "$(judge_tmpfs_filter $M/$c)" ;;
                *-xfs | shared-*) judge_new $c xfs "$(judge_dev $M/$c)" ;;
                *) judge_new $c ext4 "$(judge_dev $M/$c)" ;;
                esac
                judge_pids $c $RPIDS
                judge_on $c
                judge_record $c 100 36000 $B/count-$c
        done
        # The daemon, as the unit runs it, on these mounts alone.
        ATIMED_WRAPPER=(nice -n 10 ionice -c 3)
        start_atimed "$(bench_mounts_only "ext4 xfs tmpfs" "$M")
[daemon]
log_level = $([ -n "$KEEP" ] && echo debug || echo info)
[probe]
interval = 7d
[sampler]
interval = ${iv}s
walk_rate = 20000
$([ "$COUNTS" = 0 ] && printf '[device]\njbd2 = %s\nsysfs = %s\n' $B/none $B/none)"
        poll_activity $p $B/sock $M/ atime_updates_per_min updates_ci95 figure_source >>$B/polled &
        BG_PIDS="$BG_PIDS $!"
        wait_until $((3 * iv + 120)) sh -c "[ \"\$($ATIMECTL --socket $B/sock --json status | jq --arg m $M/ '[.mounts[] |
                select(.target | startswith(\$m)) | select(.activity != null)] | length')\" -ge $(echo $cells | wc -w) ]" ||
                echo "bench: not every mount had a figure in time; going on" >&2
        # Judged: the intervals that began once every mount had its first
        # figure (half an interval after its first walk's baseline).
        since=$(date +%s.%N)
        while :; do echo "$(date +%s.%N) $(cpu_ns $ATIMED_PID)"; sleep 2; done >$B/cpu-$p-$load &
        BG_PIDS="$BG_PIDS $!"
        N=$n wait_until $(((n + 4) * iv)) intervals_done $p $since $cells ||
                echo "bench: fewer than $n intervals in some cell; judging what there is" >&2
        sleep 1.5 # the counts run on past the last interval's end
        end=$(date +%s.%N)
        for c in $cells; do
                judged $p $c $since >$B/judged-$p-$load-$c
                cell_line $p $load $c "$(cpu_between $B/cpu-$p-$load $since $end)" $n <$B/judged-$p-$load-$c
        done | tee -a $B/results
        echo "   (uptime at the end: $(uptime | sed 's/^ *//'))"
        [ -n "$KEEP" ] && { mkdir -p "$KEEP"; cp $B/atimed.log "$KEEP/atimed-$p-$load.log"; cp $B/judged-$p-$load-* "$KEEP/"
                for c in $cells; do cp $B/count-$c "$KEEP/count-$p-$load-$c"; done; }
        end_phase
}

# end_phase: the workloads, the hogs, the judge and the daemon stopped,
# the cells' filesystems gone.
end_phase() {
        local p
        for p in $LOAD_PIDS $HOG_PIDS $BG_PIDS; do kill "$p" 2>/dev/null; done
        for p in $LOAD_PIDS $HOG_PIDS $BG_PIDS; do wait "$p" 2>/dev/null; done
        LOAD_PIDS="" HOG_PIDS="" BG_PIDS="" RPIDS=""
        judge_cleanup
        kill -TERM $ATIMED_PID 2>/dev/null
        wait $ATIMED_PID 2>/dev/null
        : >$B/atimed.log
        rm -f $B/polled $B/count-* $B/judged-*
        umount -R $M/* 2>/dev/null
        rm -rf $M/* $B/img/*
}

echo "calibration: atimed's updates per minute against the kernel's count, per interval"
machine_line
echo "interval ${IV}s, $N intervals a cell, counts $([ "$COUNTS" = 0 ] && echo "hidden from the daemon" || echo "as the daemon reads them"); $HOGS hogs when saturated"
: >$B/results
for load in $LOADS; do
        run_phase main $load
        run_phase shared $load
done
run_phase hidden own
echo
echo "median, worst: atimed / kernel (1 where within the count's range); cover: share of 95% intervals holding"
echo "the count; +-: median half-width of the 95% interval over the count; kernel: share of figures that are"
echo "the kernel's count; sum: atimed / kernel over all intervals; cpu%: the daemon's, shared by its load's cells"
echo "done: median 0.95-1.05, worst within 10%, cover >= 0.93, n >= 20"
header
cat $B/results
