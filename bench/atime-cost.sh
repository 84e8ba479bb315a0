#!/bin/bash
# atime-cost: what an atime write costs a reader. The readblock workload
# (open, read 1 KiB, close over 20,000 files) runs through two bind mounts of
# one filesystem that differ only in their atime policy (A: strictatime or
# relatime; B: noatime), one pass on each side in turn, in ABBA order. Per
# pass: ns per file, and the bytes the loop device wrote for it (sync before
# and after; /sys/block/loopN/stat). Cases, for ext4, xfs, btrfs and tmpfs:
#
#   strict         warm cache
#   strict+lazy    warm cache, lazytime on the superblock (both sides)
#   rel-stale      relatime; atime set older than mtime/ctime before each pass
#                  (the first read of a file in a day: written)
#   rel-fresh      relatime; atime newer than mtime and ctime (not written)
#   strict cold    echo 3 > drop_caches before each pass (both sides), over
#                  the first COLD_NFILES files (a cold pass is slow and
#                  noisy: more rounds of fewer files)
#   strict+lazy cold
#   hot            HOT_FILES files (20) read again and again for HOT_SECONDS
#                  through strictatime, then noatime, ABBA: the cost of one
#                  atime UPDATE (many per inode), counted by the kernel. As
#                  fast as it goes, a file is read many times per clock tick
#                  and updated once: the updates are a few % of the reads
#                  and their cost is within the noise of the reads'.
#   hot-tick       the same files, one pass every HOT_PAUSE_US (4 ms, a tick
#                  at HZ=250): nearly every read is an update, the same
#                  inodes dirtied again and again in one journal transaction
#   hot-tick+lazy  that with lazytime on the superblock
#   stream         all NFILES files read in passes as fast as they go for
#                  STREAM_SECONDS, after one untimed pass: every read an
#                  update of an inode already dirty in the journal
#                  transaction (pass and run end well inside ext4's 5 s
#                  commit, for STREAM_SECONDS up to 4), made by a reader that does
#                  nothing else: what find | xargs cat or grep -r pay per
#                  update, against hot-tick's reader that sleeps between
#                  passes and comes back to cold caches
#
# The hot case counts updates with a tracepoint, in a tracing instance of its
# own (tracefs mounted in the benchmark's namespace; BPF is refused here):
# ext4:ext4_mark_inode_dirty for ext4, xfs:xfs_update_time for xfs,
# writeback:writeback_mark_inode_dirty for lazytime on ext4 and for tmpfs
# (each filtered on the device and on the reader's name). btrfs dirties the
# inode in its own transaction without any of these: its updates are not
# counted (its CPU per read is). Journal commits: jbd2:jbd2_end_commit (ext4),
# xfs:xlog_iclog_write (xfs log buffer writes).
#
# The images live in files on the host's disk (not on tmpfs) behind loop
# devices with direct I/O, so a cold pass reads from a real device.
# The difference A - B is the cost of one atime write per file: this is the
# table behind DESIGN.md section 2 and the advisor's built-in costs.
#
#   sudo make bench BENCH=atime-cost
#   (NFILES=20000 ROUNDS=10 PASSES=3 COLD_NFILES=5000 COLD_ROUNDS=10 FSTYPES="ext4 xfs btrfs tmpfs"
#    CASES="files hot stream" HOT_FILES=20 HOT_SECONDS=5 HOT_ROUNDS=6 HOT_PAUSE_US=4000
#    STREAM_SECONDS=2)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
NFILES=${NFILES:-20000}
ROUNDS=${ROUNDS:-10}
PASSES=${PASSES:-3}
COLD_NFILES=${COLD_NFILES:-5000}
COLD_ROUNDS=${COLD_ROUNDS:-10}
FSTYPES=${FSTYPES:-ext4 xfs btrfs tmpfs}
CASES=${CASES:-files hot stream}
HOT_FILES=${HOT_FILES:-20}
HOT_SECONDS=${HOT_SECONDS:-5}
HOT_ROUNDS=${HOT_ROUNDS:-6}
HOT_PAUSE_US=${HOT_PAUSE_US:-4000}
STREAM_SECONDS=${STREAM_SECONDS:-2}
IMGDIR=$(mktemp -d "${BENCH_IMGDIR:-/var/tmp}/atimed-bench-img.XXXXXX")
LOOPS=""
atime_cost_cleanup() {
        local l
        [ -n "${TRACE_INST:-}" ] && { echo 0 >"$TRACE_INST/events/enable"; rmdir "$TRACE_INST"; } 2>/dev/null
        bench_cleanup
        for l in $LOOPS; do losetup -d "$l" 2>/dev/null; done
        rm -rf "$IMGDIR"
}
trap atime_cost_cleanup EXIT

for t in $FSTYPES; do
        case $t in
        xfs | btrfs)
                command -v "mkfs.$t" >/dev/null || {
                        echo "atime-cost: mkfs.$t missing (apt-get install ${t}progs); skipping $t" >&2
                        FSTYPES=$(echo " $FSTYPES " | sed "s/ $t / /")
                } ;;
        esac
done

echo "atime-cost: open + read 1 KiB + close over $NFILES files, strictatime/relatime vs noatime bind mounts of one filesystem"
machine_line
echo "warm: $ROUNDS ABBA rounds x $PASSES passes per side; cold: $COLD_ROUNDS rounds x 1 pass of $COLD_NFILES files per side;"
echo "images on $(df --output=source "$IMGDIR" | tail -1) via loop devices with direct I/O"

STAT=""                # /sys/block/loopN/stat of the filesystem under test, or empty (tmpfs)
sectors() { [ -n "$STAT" ] && awk '{ print $7 }' "$STAT" || echo 0; }

# setup FSTYPE: the filesystem at $B/mnt/base, its files, and three bind
# mounts of it: strict, rel and noat.
setup() {
        local dev
        umount -R "$B/mnt" 2>/dev/null
        for dev in $LOOPS; do losetup -d "$dev" 2>/dev/null; done
        LOOPS=""
        rm -f "$IMGDIR"/*.img
        mkdir -p "$B/mnt/base"
        STAT=""
        if [ "$1" = tmpfs ]; then
                mount -t tmpfs -o size=512m bench-tmpfs "$B/mnt/base"
        else
                truncate -s 512M "$IMGDIR/$1.img"
                case $1 in
                ext4) mkfs.ext4 -q -F -N $((2 * NFILES + 1000)) "$IMGDIR/$1.img" ;;
                xfs) mkfs.xfs -q -f "$IMGDIR/$1.img" ;;
                btrfs) mkfs.btrfs -q -f "$IMGDIR/$1.img" >/dev/null ;;
                esac
                dev=$(losetup -f --show --direct-io=on "$IMGDIR/$1.img" 2>/dev/null) ||
                        dev=$(losetup -f --show "$IMGDIR/$1.img")
                LOOPS="$dev"
                mount "$dev" "$B/mnt/base"
                STAT=/sys/block/${dev#/dev/}/stat
                DEVNO=$((($(stat -c '0x%t' "$dev") << 20) | $(stat -c '0x%T' "$dev")))
                BDI="$(($(stat -c '0x%t' "$dev"))):$(($(stat -c '0x%T' "$dev")))"
        fi
        make_files "$B/mnt/base" "$NFILES"
        for side in strict rel noat; do
                mkdir -p "$B/mnt/$side"
                mount --bind "$B/mnt/base" "$B/mnt/$side"
        done
        mount -o remount,bind,strictatime "$B/mnt/strict"
        mount -o remount,bind,relatime "$B/mnt/rel"
        mount -o remount,bind,noatime "$B/mnt/noat"
        for side in strict rel noat; do
                list_files "$B/mnt/$side" "$NFILES" >"$B/list.$side"
                head -n "$COLD_NFILES" "$B/list.$side" >"$B/list.$side.cold"
                head -n "$HOT_FILES" "$B/list.$side" >"$B/list.$side.hot"
        done
        list_files "$B/mnt/base" "$NFILES" >"$B/list.base"
        sync
}

# Every file's atime two days back: older than its mtime and ctime, so the
# next read through relatime writes it (utimensat also sets ctime to now).
make_stale() { xargs -a "$B/list.base" touch -a -d "@$(($(date +%s) - 2 * 86400))"; }

# pass SIDE PREP: one readblock pass through SIDE; prints "ns/file bytes".
pass() {
        local w0 ns
        case $2 in stale) make_stale ;; esac
        sync
        case $2 in cold) echo 3 >/proc/sys/vm/drop_caches ;; esac
        w0=$(sectors)
        ns=$("$READBLOCK" 1 <"$B/list.$1$([ "$2" = cold ] && echo .cold)")
        sync
        echo "$ns $((($(sectors) - w0) * 512))"
}

# measure LABEL SIDE PREP ROUNDS PASSES: SIDE against noat, ABBA; appends a
# row to $B/rows.
measure() {
        local label=$1 side=$2 prep=$3 rounds=$4 passes=$5 r s p out a b
        : >"$B/a"; : >"$B/b"; : >"$B/ratio"; : >"$B/diff"
        for ((r = 1; r <= rounds; r++)); do
                : >"$B/ra"; : >"$B/rb"
                for s in $( ((r % 2)) && echo "$side noat" || echo "noat $side"); do
                        for ((p = 0; p < passes; p++)); do
                                out=$(pass "$s" "$prep")
                                if [ "$s" = noat ]; then echo "$out" >>"$B/rb"; else echo "$out" >>"$B/ra"; fi
                        done
                done
                cat "$B/ra" >>"$B/a"
                cat "$B/rb" >>"$B/b"
                a=$(cut -d' ' -f1 "$B/ra" | median)
                b=$(cut -d' ' -f1 "$B/rb" | median)
                awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", a / b }' >>"$B/ratio"
                awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f\n", a - b }' >>"$B/diff"
        done
        local am bm
        am=$(cut -d' ' -f1 "$B/a" | median)
        bm=$(cut -d' ' -f1 "$B/b" | median)
        printf '%-6s %-17s %8.0f %8.0f %7.0f %7.0f %7.0f %6.3f %6.3f %6.3f %8s %8s\n' \
                "$FS" "$label" "$am" "$bm" \
                "$(median <"$B/diff")" "$(minimum <"$B/diff")" "$(maximum <"$B/diff")" \
                "$(median <"$B/ratio")" "$(minimum <"$B/ratio")" "$(maximum <"$B/ratio")" \
                "$(bytes "$B/a" "$prep")" "$(bytes "$B/b" "$prep")" | tee -a "$B/rows"
}
# bytes FILE PREP: median bytes written per pass, per file read.
bytes() {
        local n=$NFILES
        [ "$2" = cold ] && n=$COLD_NFILES
        [ -n "$STAT" ] && cut -d' ' -f2 "$1" | median | awk -v n="$n" '{ printf "%.0f", $1 / n }' || echo -
}

header() {
        printf '\n%-6s %-17s %8s %8s %7s %7s %7s %6s %6s %6s %8s %8s\n' \
                fs case "A ns" "B ns" "A-B" min max ratio min max "A B/f" "B B/f"
}
# ---------------------------------------------------------------- hot files
# A tracing instance of our own: other users of the tracepoints (tests
# counting updates on their own loop devices) keep theirs.
TRACE_INST=""
hot_trace_init() {
        mkdir -p "$B/tracing"
        mount -t tracefs nodev "$B/tracing" || return 1
        TRACE_INST=$B/tracing/instances/atimed-bench-$$
        mkdir "$TRACE_INST" || return 1
        echo 8192 >"$TRACE_INST/buffer_size_kb"
}

# hot_events FS LAZY: "update-event commit-event" for the filesystem, "-"
# where none is simple.
hot_events() {
        case $1:$2 in
        ext4:0) echo "ext4/ext4_mark_inode_dirty jbd2/jbd2_end_commit" ;;
        ext4:1) echo "writeback/writeback_mark_inode_dirty jbd2/jbd2_end_commit" ;;
        xfs:*) echo "xfs/xfs_update_time xfs/xlog_iclog_write" ;;
        tmpfs:*) echo "writeback/writeback_mark_inode_dirty -" ;;
        *) echo "- -" ;;
        esac
}

hot_filter() {
        case $1 in
        writeback/*) [ "$FS" = tmpfs ] && echo 'name == "(unknown)"' || echo "name == \"$BDI\"" ;;
        *) echo "dev == $DEVNO" ;;
        esac
}

# hot_pass SIDE LAZY PAUSE_US LIST SECONDS: one timed run through the files of
# $B/list.SIDE.LIST; prints "reads cpu_ns updates commits bytes" ("-" for what
# is not counted). Through all the files (LIST empty), one untimed pass
# first: the timed reads then find every inode dirty in the transaction.
hot_pass() {
        local ev cm out upd=- com=- w0 e
        read -r ev cm < <(hot_events "$FS" "$2")
        [ -n "$TRACE_INST" ] || { ev=-; cm=-; }
        sync
        [ -z "$4" ] && "$READBLOCK" 1 <"$B/list.$1" >/dev/null
        if [ "$ev" != - ]; then
                echo 0 >"$TRACE_INST/events/enable"
                : >"$TRACE_INST/trace"
                for e in $ev $cm; do
                        [ "$e" = - ] && continue
                        hot_filter "$e" >"$TRACE_INST/events/$e/filter"
                        echo 1 >"$TRACE_INST/events/$e/enable"
                done
        fi
        w0=$(sectors)
        out=$("$READBLOCK" -i "$3" -t "$5" <"$B/list.$1${4:+.$4}")
        sync
        if [ "$ev" != - ]; then
                echo 0 >"$TRACE_INST/events/enable"
                [ "$(cat "$TRACE_INST"/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')" = 0 ] ||
                        echo "atime-cost: trace buffer overrun: updates undercounted" >&2
                upd=$(grep -v '^#' "$TRACE_INST/trace" | grep -c "readblock-.*${ev#*/}:")
                [ "$cm" != - ] && com=$(grep -v '^#' "$TRACE_INST/trace" | grep -c "${cm#*/}:")
        fi
        echo "${out% *} $upd $com $((($(sectors) - w0) * 512))"
}

# measure_hot LABEL LAZY PAUSE_US [LIST SECONDS FILES]: strict against noat,
# ABBA, HOT_ROUNDS rounds, through the hot files (or LIST); appends a row to
# $B/hotrows.
measure_hot() {
        local list=${4-hot} t=${5:-$HOT_SECONDS} nf=${6:-$HOT_FILES}
        local r s out ra rb
        : >"$B/hot"
        for ((r = 1; r <= HOT_ROUNDS; r++)); do
                for s in $( ((r % 2)) && echo "strict noat" || echo "noat strict"); do
                        out=$(hot_pass "$s" "$2" "$3" "$list" "$t")
                        if [ "$s" = strict ]; then ra=$out; else rb=$out; fi
                done
                echo "$ra $rb" >>"$B/hot"
        done
        # per round: A reads cpu upd com bytes, B reads cpu upd com bytes
        awk -v fs="$FS" -v label="$1" -v t="$t" -v nf="$nf" '
        function med(a, n,   i, j, x, v) { for (i = 1; i <= n; i++) v[i] = a[i]
                for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
                return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
        {
                n++; ra[n] = $1 / t; rb[n] = $6 / t; na[n] = $2 / $1; nb[n] = $7 / $6
                bya[n] = $5; byb[n] = $10
                counted = $3 != "-" && $3 > 0; hascom = $4 != "-" && $4 > 0
                if (counted) { ups[n] = $3 / t; upr[n] = $3 / $1; cpu[n] = ($2 - $1 * $7 / $6) / $3 / 1000; bpu[n] = $5 / $3 }
                if (hascom) { com[n] = $4; bic[n] = $5 / ($4 * nf) }
        }
        END {
                lo = hi = cpu[1]; for (i = 1; i <= n; i++) { if (cpu[i] < lo) lo = cpu[i]; if (cpu[i] > hi) hi = cpu[i] }
                printf "%-6s %-13s %9.0f %9.0f %7.0f %7.0f %9s %9s %6s %-17s %9.0f %7.0f %7s %7s %9s\n", fs, label,
                        med(ra, n), med(rb, n), med(na, n), med(nb, n),
                        counted ? sprintf("%.0f", med(ups, n)) : "-",
                        counted ? sprintf("%.4f", med(upr, n)) : "-",
                        counted ? sprintf("%.2f", med(cpu, n)) : "-",
                        counted ? sprintf("(%.2f-%.2f)", lo, hi) : "-",
                        med(bya, n), med(byb, n),
                        hascom ? med(com, n) : "-",
                        counted ? sprintf("%.2f", med(bpu, n)) : "-",
                        hascom ? sprintf("%.0f", med(bic, n)) : "-"
        }' "$B/hot" | tee -a "$B/hotrows"
}
hot_header() {
        printf '\n%-6s %-13s %9s %9s %7s %7s %9s %9s %6s %-17s %9s %7s %7s %7s %9s\n' \
                fs case "A rd/s" "B rd/s" "A ns/rd" "B ns/rd" "A upd/s" "upd/read" "us/upd" "(min-max)" "A bytes" "B bytes" "commits" "B/upd" "B/ino/cmt"
}

case " $CASES " in *" hot "* | *" stream "*) hot_trace_init || echo "atime-cost: no tracefs: hot-file updates not counted" >&2 ;; esac

: >"$B/rows"
: >"$B/hotrows"
case " $CASES " in *" files "*) header ;; esac
for FS in $FSTYPES; do
        case " $CASES " in *" files "*) ;; *) break ;; esac
        setup "$FS"
        "$READBLOCK" 2 <"$B/list.noat" >/dev/null # warm the cache
        measure "strict" strict warm "$ROUNDS" "$PASSES"
        measure "rel-stale" rel stale "$ROUNDS" "$PASSES"
        "$READBLOCK" 1 <"$B/list.rel" >/dev/null # every atime newer than mtime and ctime
        measure "rel-fresh" rel warm "$ROUNDS" "$PASSES"
        [ "$FS" != tmpfs ] && measure "strict cold" strict cold "$COLD_ROUNDS" 1
        if mount -o remount,lazytime "$B/mnt/base" 2>/dev/null &&
                grep -q lazytime <(findmnt -no FS-OPTIONS "$B/mnt/strict"); then
                measure "strict+lazy" strict warm "$ROUNDS" "$PASSES"
                [ "$FS" != tmpfs ] && measure "strict+lazy cold" strict cold "$COLD_ROUNDS" 1
        else
                echo "$FS: lazytime not accepted (superblock options: $(findmnt -no FS-OPTIONS "$B/mnt/base"))"
        fi
done

if [ "${CASES#*hot}" != "$CASES" ] || [ "${CASES#*stream}" != "$CASES" ]; then
        hot_header
        for FS in $FSTYPES; do
                case " $CASES " in *" hot "*) ;; *) break ;; esac
                NFILES_SAVED=$NFILES
                NFILES=$HOT_FILES
                setup "$FS"
                NFILES=$NFILES_SAVED
                "$READBLOCK" 2 <"$B/list.noat.hot" >/dev/null
                measure_hot hot 0 0
                measure_hot hot-tick 0 "$HOT_PAUSE_US"
                if mount -o remount,lazytime "$B/mnt/base" 2>/dev/null &&
                        grep -q lazytime <(findmnt -no FS-OPTIONS "$B/mnt/strict"); then
                        measure_hot hot-tick+lazy 1 "$HOT_PAUSE_US"
                fi
        done
        # A streaming reader makes an update every few microseconds: a
        # bigger trace buffer holds them all.
        [ -n "$TRACE_INST" ] && echo 65536 >"$TRACE_INST/buffer_size_kb"
        for FS in $FSTYPES; do
                case " $CASES " in *" stream "*) ;; *) break ;; esac
                setup "$FS"
                "$READBLOCK" 2 <"$B/list.noat" >/dev/null
                measure_hot stream 0 0 "" "$STREAM_SECONDS" "$NFILES"
        done
        echo
        echo "hot: $HOT_FILES files read again and again for ${HOT_SECONDS}s per run, strictatime (A) then noatime (B), $HOT_ROUNDS ABBA rounds;"
        echo "hot-tick: a pass over them every ${HOT_PAUSE_US} us (about a clock tick: nearly every read an update)."
        echo "stream: passes over all $NFILES files as fast as they go for ${STREAM_SECONDS}s per run (an update of an inode already"
        echo "dirty in the transaction, by a reader that does nothing else)."
        echo "rd/s: files read per second; ns/rd: the reader's CPU (getrusage) per read; upd/s: atime updates the"
        echo "kernel made per second (tracepoint; '-': not counted); us/upd: the reader's CPU difference A - B"
        echo "divided by A's updates, median (min-max) over rounds: the cost of one atime UPDATE; bytes: what the"
        echo "device wrote per run through sync; commits: journal commits (ext4) or log buffer writes (xfs) per run;"
        echo "B/upd: bytes per update; B/ino/cmt: bytes per distinct inode per commit."
fi
case " $CASES " in *" files "*) ;; *) exit 0 ;; esac

echo
echo "A: the strictatime (or relatime) bind mount; B: the noatime bind mount of the same filesystem."
echo "ns: median wall time per file over all passes; A-B and ratio: median (min, max) of the per-round"
echo "differences and ratios, each round measuring both sides back to back (ABBA); A-B is the cost of"
echo "one atime write per file (none in rel-fresh). B/f: bytes the device wrote per file for a pass,"
echo "through sync (median). Both sides see the same cache state (drop_caches before each cold pass)."
