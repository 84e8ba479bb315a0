#!/bin/bash
# btrfs-snapshots: the pattern of btrfs-progs issue #377 at a size this
# machine holds (issue 31). Two btrfs filesystems on loop images, each with
# a subvolume of BTRFS_FILES files (100,000; 100 to a directory, 64 bytes
# each), one mounted relatime (the default), the other noatime. Each
# simulated "day", for BTRFS_DAYS days (7): every atime is set back two
# days (as a day under relatime would leave them), a read-only snapshot is
# taken, and the whole tree is read (grep -r). The judge is the kernel's
# allocation/metadata/bytes_used: its growth over each day's reading pass,
# and over the week.
#
# A third filesystem, "mix", is the relatime one again, but from the
# second day on its reading pass runs between writes the sample sees (the
# mtimes of 3,000 files, before and after the grep): atimed cannot
# measure those intervals, and its bytes are modelled from what day 1's
# pure pass taught it (the inodes written since the snapshot, from the
# sample, times the bytes each one un-shares).
#
# atimed tracks the three mounts ([btrfs] snapshot_search = yes). Its
# prediction is made after the first day: the bytes un-shared since the
# newest snapshot (GetStatus btrfs.since_newest_snapshot, measured or
# modelled), which is one snapshot period's cost, times the days. Printed
# beside the week's measured growth, with the ratio.
#
#   sudo make bench BENCH=btrfs-snapshots
#   sudo make bench BENCH=btrfs-snapshots BTRFS_FILES=20000 BTRFS_DAYS=3
#
# Setting atimes back (utimensat) is the simulation's, not atime's: on the
# relatime filesystem it un-shares nothing after the first day (the leaves
# the day's pass copied belong to the live subvolume alone until the next
# snapshot shares them); on the noatime one, where no pass un-shared them,
# it does. So each day's figure is taken from the snapshot on: the pass.
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
N=${BTRFS_FILES:-100000}
DAYS=${BTRFS_DAYS:-7}
PER_DIR=100
INTERVAL=5

ctl() { "$ATIMECTL" --socket "$B/sock" "$@"; }
btrfs_of() { ctl --json status | jq -c --arg t "$1" '.mounts[] | select(.target == $t) | .btrfs'; }

# make_tree DIR: N files of 64 bytes, PER_DIR to a directory (bash's own
# printf: no process per file).
make_tree() {
        local i line
        printf -v line '%063d\n' 0
        for ((i = 0; i < N; i++)); do
                ((i % PER_DIR == 0)) && mkdir -p "$1/d$((i / PER_DIR))"
                printf '%s' "$line" >"$1/d$((i / PER_DIR))/f$((i % PER_DIR))"
        done
}

# The images (a GiB or so each by the week's end: metadata is DUP) on
# disk, not in the benchmark's tmpfs; removed at exit.
IMGDIR=$(mktemp -d "${BENCH_DIR:-/var/tmp}/atimed-btrfs-snapshots.XXXXXX")
LOOPS=""
images_cleanup() {
        local l
        umount -R "$B/mnt" "$B"/top-* 2>/dev/null
        for l in $LOOPS; do losetup -d "$l" 2>/dev/null; done
        rm -rf "$IMGDIR"
        bench_cleanup
}
trap images_cleanup EXIT

# fs NAME OPTION: a filesystem of its own, its subvolume mounted with OPTION.
fs() {
        truncate -s 4G "$IMGDIR/$1.img"
        mkfs.btrfs -q -f "$IMGDIR/$1.img" >/dev/null || exit 1
        local loop
        loop=$(losetup -f --show "$IMGDIR/$1.img") || exit 1
        LOOPS="$LOOPS $loop"
        mkdir -p "$B/top-$1" "$B/mnt/$1"
        mount "$loop" "$B/top-$1" && btrfs -q subvolume create "$B/top-$1/data" >/dev/null || exit 1
        make_tree "$B/top-$1/data"
        umount "$B/top-$1"
        # Commits every 5 s: an impure interval's writes are committed soon.
        mount -o "$2,subvol=data,commit=5" "$loop" "$B/mnt/$1" || exit 1
        mount -o subvolid=5 "$loop" "$B/top-$1" || exit 1
        local d
        for d in /sys/fs/btrfs/*/; do
                [ -e "$d/devices/${loop#/dev/}" ] && echo "${d}allocation/metadata/bytes_used" >"$B/$1.meta"
        done
}

meta() { cat "$(cat "$B/$1.meta")"; }
declare -A before week week0 predict predict_lo predict_hi model_vs

# settle TARGET: two sweeps past now, then an interval measured as pure.
# (atimed does not sample a noatime mount: nothing to wait for there.)
settle() {
        local t=$(($(date +%s) + 1)) i
        [ "$1" = "$B/mnt/noa" ] && return 0
        for ((i = 0; i < 120; i++)); do
                ctl --json status | jq -e --arg m "$1" --argjson t $((t + 2 * INTERVAL)) \
                        '.mounts[] | select(.target == $m) | (.activity.at // 0) >= $t' >/dev/null && break
                sleep 1
        done
        for ((i = 0; i < 120; i++)); do
                [ "$(btrfs_of "$1" | jq -r .source)" = measured ] && return 0
                sleep 1
        done
        echo "bench: $1: no pure interval in 2 min" >&2
}

echo "btrfs-snapshots: $N files of 64 bytes in a subvolume, $DAYS days: atimes set back, a snapshot, a grep -r"
fs rel relatime
fs noa noatime
fs mix relatime
# The top levels, where the snapshots are made, are not atimed's to track.
start_atimed "$(bench_mounts_only btrfs "$B/mnt")
[sampler]
interval = ${INTERVAL}s
walk_rate = 100000
[probe]
interval = 7d
[btrfs]
snapshot_search = yes"
machine_line
# The count of inodes written since a snapshot needs the whole walk's sample.
for f in rel mix; do
        wait_measured "$B/mnt/$f" 300 || { echo "bench: not measured" >&2; exit 1; }
        for ((i = 0; i < 300; i++)); do
                ctl --json status | jq -e --arg m "$B/mnt/$f" '.mounts[] | select(.target == $m) | .activity.coverage >= 1' \
                        >/dev/null && break
                sleep 1
        done
done

printf '%-4s %-5s %16s %34s %10s\n' day mount "kernel: pass" "atimed: since (95%)" source
for ((day = 1; day <= DAYS; day++)); do
        for f in rel noa mix; do
                find "$B/mnt/$f" -exec touch -a -d '2 days ago' {} +
                btrfs -q subvolume snapshot -r "$B/top-$f/data" "$B/top-$f/snap-$day" >/dev/null
                btrfs filesystem sync "$B/mnt/$f"
                settle "$B/mnt/$f"
                before[$f]=$(meta $f)
                [ $day = 1 ] && week0[$f]=${before[$f]}
                if [ $f = mix ] && [ $day -gt 1 ]; then
                        touch -m "$B/mnt/$f"/d{0..29}/* && grep -r zzz "$B/mnt/$f" >/dev/null &&
                                touch -m "$B/mnt/$f"/d{0..29}/*
                else
                        grep -r zzz "$B/mnt/$f" >/dev/null
                fi
                btrfs filesystem sync "$B/mnt/$f"
                settle "$B/mnt/$f"
                after=$(meta $f)
                s=$(btrfs_of "$B/mnt/$f" | jq -c '.since_newest_snapshot // {}')
                [ $f = mix ] && [ $day -gt 1 ] && model_vs[$f]="${model_vs[$f]:-} $(echo "$s" | jq -r --argjson k $((after - before[$f])) '(.bytes // 0) / $k')"
                growth=$((after - before[$f]))
                week[$f]=$((${week[$f]:-0} + growth))
                printf '%-4s %-5s %16d %34s %10s\n' $day $f $growth \
                        "$(echo "$s" | jq -r 'if .bytes then "\(.bytes) (\(.lo)-\(.hi))" else "-" end')" \
                        "$(echo "$s" | jq -r '.rate_source // "-"')"
                if [ $day = 1 ]; then
                        predict[$f]=$(echo "$s" | jq -r --argjson d $DAYS '(.bytes // 0) * $d')
                        predict_lo[$f]=$(echo "$s" | jq -r --argjson d $DAYS '(.lo // 0) * $d')
                        predict_hi[$f]=$(echo "$s" | jq -r --argjson d $DAYS '(.hi // 0) * $d')
                        echo "     $f: atimed after day 1: $(btrfs_of "$B/mnt/$f" | jq -c '{bytes_per_inode, model_intervals, since_newest_snapshot}')"
                        echo "     $f: advice: $(ctl --json recommend "$B/mnt/$f" | jq -c '.recommendations[0] | [.action, .reasons[0]]')"
                fi
        done
done
echo
echo "mix, days 2-$DAYS: atimed's modelled bytes since the snapshot over the kernel's growth:${model_vs[mix]:-}"
for f in rel noa mix; do
        echo "$f: the $DAYS days' reading passes grew the metadata by ${week[$f]} bytes" \
                "(from $(numfmt --to=iec ${week0[$f]}) to $(numfmt --to=iec $(meta $f)) over the $DAYS days, snapshots' own included);" \
                "atimed's prediction after day 1: ${predict[$f]} bytes (${predict_lo[$f]}-${predict_hi[$f]})" \
                "$(awk -v p=${predict[$f]} -v w=${week[$f]} 'BEGIN { if (w > 0) printf "= %.2f of it", p / w }')"
done
