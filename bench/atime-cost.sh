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
#
# The images live in files on the host's disk (not on tmpfs) behind loop
# devices with direct I/O, so a cold pass reads from a real device.
# The difference A - B is the cost of one atime write per file: this is the
# table behind DESIGN.md section 2 and the advisor's built-in costs.
#
#   sudo make bench BENCH=atime-cost
#   (NFILES=20000 ROUNDS=10 PASSES=3 COLD_NFILES=5000 COLD_ROUNDS=10 FSTYPES="ext4 xfs btrfs tmpfs")
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
NFILES=${NFILES:-20000}
ROUNDS=${ROUNDS:-10}
PASSES=${PASSES:-3}
COLD_NFILES=${COLD_NFILES:-5000}
COLD_ROUNDS=${COLD_ROUNDS:-10}
FSTYPES=${FSTYPES:-ext4 xfs btrfs tmpfs}
IMGDIR=$(mktemp -d "${BENCH_IMGDIR:-/var/tmp}/atimed-bench-img.XXXXXX")
LOOPS=""
atime_cost_cleanup() {
        local l
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
header
: >"$B/rows"
for FS in $FSTYPES; do
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

echo
echo "A: the strictatime (or relatime) bind mount; B: the noatime bind mount of the same filesystem."
echo "ns: median wall time per file over all passes; A-B and ratio: median (min, max) of the per-round"
echo "differences and ratios, each round measuring both sides back to back (ABBA); A-B is the cost of"
echo "one atime write per file (none in rel-fresh). B/f: bytes the device wrote per file for a pass,"
echo "through sync (median). Both sides see the same cache state (drop_caches before each cold pass)."
