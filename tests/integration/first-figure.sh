#!/bin/bash
# first-figure.sh: the first figure of a 100,000-inode filesystem within two
# minutes of the daemon's start at its default settings, and honest: on
# ext4 the kernel's count of atime updates (a tracefs instance of the
# device's own, as busy.sh) lies within its 95% interval; on tmpfs (no
# kernel count: the sample alone) the hot files read in a corner 30
# directories deep, where the walk may not have been yet, are within it
# too. While the figure rests on part of a filesystem, status says how much
# and when it will rest on all of it, and recommend says it is too early.
# Then every figure until the one from the whole walk (within 7 minutes)
# holds the truth too, each interval no wider than the one before.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
READLOAD=$top_builddir/tests/helpers/readload
M=$T/mnt
N=100000
HOT_RATE=1000 # reads a second over the 20 hot files: each read 20 ms after the last of its file, an update each

command -v mkfs.ext4 >/dev/null || skip_all "needs mkfs.ext4"
command -v python3 >/dev/null || skip_all "needs python3 to make 100,000 files quickly"

LOAD_PIDS="" INST=""
ff_cleanup() {
        local p
        for p in $LOAD_PIDS; do kill "$p" 2>/dev/null; done
        cleanup
}
trap ff_cleanup EXIT

# populate DIR: N inodes: directories of 100 empty files, and 20 hot files
# of 1 KiB 30 directories deep, listed in DIR.hot.
populate() {
        python3 - "$1" "$N" <<'EOF'
import os, sys
top, n = sys.argv[1], int(sys.argv[2])
deep = os.path.join(top, *["c%d" % i for i in range(30)])
os.makedirs(deep)
hots = []
for i in range(20):
    p = os.path.join(deep, "hot%d" % i)
    with open(p, "wb") as f:
        f.write(b"x" * 1024)
    hots.append(p)
made, d = 50, 0
while made < n:
    dd = os.path.join(top, "d%d" % d)
    os.mkdir(dd)
    for j in range(min(99, n - made - 1)):
        os.close(os.open(os.path.join(dd, "f%d" % j), os.O_CREAT | os.O_WRONLY, 0o644))
    made += 100
    d += 1
with open(top + ".hot", "w") as f:
    f.write("\n".join(hots) + "\n")
EOF
}

mkdir -p $M/ext4 $M/tmpfs
truncate -s 256M $T/a.img && mkfs.ext4 -q -F -N $((N + 10000)) $T/a.img || bail "mkfs"
mount -o loop,strictatime $T/a.img $M/ext4 || bail "mount ext4"
mount -t tmpfs -o strictatime,size=64m,nr_inodes=$((N + 10000)) tmpfs $M/tmpfs || bail "mount tmpfs"
diag "creating 2 x $N inodes"
populate $M/ext4/t || bail "populate ext4"
populate $M/tmpfs/t || bail "populate tmpfs"
umount $M/ext4 && mount -o loop,strictatime $T/a.img $M/ext4 || bail "remount ext4" # its caches cold

# The kernel's count on ext4, where tracefs is there (lib.sh's judge).
if judge_init --try ext4; then
        INST=ext4
        judge_new ext4 ext4 "$(judge_dev $M/ext4)"
        judge_on ext4
        judge_record ext4 1000 600 $T/count
fi
"$READLOAD" $HOT_RATE 600 <$M/ext4/t.hot >/dev/null &
LOAD_PIDS="$LOAD_PIDS $!"
"$READLOAD" $HOT_RATE 600 $T/tmpfs.times <$M/tmpfs/t.hot >/dev/null &
LOAD_PIDS="$LOAD_PIDS $!"

# Default settings but for the mounts tracked: these two, and the host's
# small ext4 and tmpfs mounts ("[/]" and "[/]${T#/}" are globs matching /
# and $T exactly).
write_config --bare '[mounts] include_fstypes = ext4 tmpfs' "[mounts] exclude_paths = [/] [/]${T#/}"
begin=$(date +%s)
start_daemon

has_figure() { [ -n "$(mount_field "$1" 'activity // empty')" ]; }

# holds FS ACTIVITY_JSON: whether the truth over the figure's interval lies
# within its 95% interval. On ext4 the kernel's count; on tmpfs the reads
# of the hot files, each an update (20 ms apart per file, several ticks),
# the truth or a little above it where the reader's pace slipped two reads
# of a file into one tick.
holds() {
        local lo hi at iv truth
        lo=$(jq -r '.updates_ci95[0]' <<<"$2") hi=$(jq -r '.updates_ci95[1]' <<<"$2")
        at=$(jq -r '.at' <<<"$2") iv=$(jq -r '.interval_s' <<<"$2")
        if [ $1 = ext4 ]; then
                truth=$(awk -v e="$at" -v s="$iv" '{ if ($1 <= e - s) b = $2; if ($1 <= e) f = $2 }
                        END { printf "%.0f", (f - b) * 60 / s }' $T/count)
        else
                truth=$(awk -v e="$at" -v s="$iv" '$1 > e - s && $1 <= e { n++ } END { printf "%.0f", n * 60 / s }' $T/tmpfs.times)
        fi
        diag "$1: truth $truth/min over the interval, which is $lo-$hi"
        awk -v t="$truth" -v l="$lo" -v h="$hi" -v fs=$1 'BEGIN { exit !(l <= t * 1.05 && t * (fs == "ext4" ? 0.98 : 0.75) <= h) }'
}
# The metrics' share of the filesystem and wait, of a first figure that
# rests on part of it (unless the walk ended since: then status says so).
metrics_share() {
        local cov wait
        ctl metrics >$T/metrics.$1 || return 1
        cov=$(sed -n "s|^atimed_atime_sample_coverage_ratio{mountpoint=\"$M/$1\"} ||p" $T/metrics.$1)
        wait=$(sed -n "s|^atimed_atime_sample_complete_in_seconds{mountpoint=\"$M/$1\"} ||p" $T/metrics.$1)
        diag "$1: metrics: coverage ratio $cov, complete in ${wait:-(none)} s"
        case $cov in
        0.*) [[ $wait =~ ^[0-9]+$ ]] ;;
        1) [ -z "$wait" ] && [ "$(mount_field $M/$1 activity.coverage)" = 1 ] ;;
        *) false ;;
        esac
}
for fs in ext4 tmpfs; do
        check "$fs: a first figure within 2 minutes of the start" wait_until $((begin + 120 - $(date +%s))) has_figure $M/$fs
        a=$(mount_field $M/$fs activity)
        diag "$fs: after $(($(date +%s) - begin)) s: $(jq -c '{atime_updates_per_min, updates_ci95, coverage, ready_in_s, figure_source, population}' <<<"$a")"
        cov=$(jq -r '.coverage' <<<"$a")
        like "$fs: it says how much of the filesystem it rests on" "$cov" '^(0(\.[0-9]+)?|1)$'
        if awk -v c="$cov" 'BEGIN { exit !(c < 1) }'; then
                like "$fs: and when it will rest on all of it" "$(jq -r '.ready_in_s' <<<"$a")" '^[0-9]+$'
                like "$fs: the table shows the share and the time" "$(ctl status --full $M/$fs | sed -n 2p)" '[0-9]+% ~[0-9]'
                like "$fs: a narrow one the share" "$(COLUMNS=60 ctl status $M/$fs | sed -n 2p)" ' [0-9]+%'
                # The sample alone behind it: its top is every unwalked
                # inode written at every tick, so the table shows the lower
                # bound, rising; the JSON keeps the interval.
                if [ "$(jq -r '.figure_source' <<<"$a")" = sample ]; then
                        like "$fs: the table shows the lower bound, rising" "$(ctl status --full $M/$fs | sed -n 2p)" \
                                '(≥|>=)[0-9][^ ]*, rising [0-9]+% ~[0-9]'
                        check "$fs: the JSON keeps the interval" jq -e '.updates_ci95 | length == 2 and .[1] > .[0]' <<<"$a"
                fi
                check "$fs: the metrics carry the share and the wait" metrics_share $fs
                rec=$(ctl --json recommend $M/$fs)
                if [ "$(mount_field $M/$fs activity.coverage)" != 1 ]; then
                        like "$fs: recommend says it is too early, and for how long" "$rec" 'too early: the figure so far rests on [0-9]+% of the filesystem; advice in about [0-9]'
                fi
        else
                is "$fs: a figure on the whole filesystem has no wait" "$(jq -r '.ready_in_s' <<<"$a")" null
                ctl metrics >$T/metrics.$fs
                is "$fs: the metrics say the share is whole, and no wait" \
                        "$(grep -c "^atimed_atime_sample_coverage_ratio{mountpoint=\"$M/$fs\"} 1\$" $T/metrics.$fs)/$(grep -c "^atimed_atime_sample_complete_in_seconds{mountpoint=\"$M/$fs\"}" $T/metrics.$fs)" "1/0"
        fi
        if [ $fs = tmpfs ] || [ -n "$INST" ]; then
                check "$fs: the truth lies within the first figure's interval" holds $fs "$a"
        fi
done

# Every figure after, until the one from the whole walk.
declare -A LAST_AT LAST_HI BAD NARROW WHOLE
for fs in ext4 tmpfs; do
        a=$(mount_field $M/$fs activity)
        LAST_AT[$fs]=$(jq -r '.at' <<<"$a") LAST_HI[$fs]=inf BAD[$fs]="" NARROW[$fs]="" WHOLE[$fs]=""
        [ "$(jq -r '.figure_source' <<<"$a")" = kernel_count ] || LAST_HI[$fs]=$(jq -r '.updates_ci95[1]' <<<"$a")
done
while [ $(($(date +%s) - begin)) -lt 420 ] && { [ -z "${WHOLE[ext4]}" ] || [ -z "${WHOLE[tmpfs]}" ]; }; do
        for fs in ext4 tmpfs; do
                a=$(mount_field $M/$fs activity)
                at=$(jq -r '.at' <<<"$a")
                [ "$at" = "${LAST_AT[$fs]}" ] || [ -n "${WHOLE[$fs]}" ] && continue
                LAST_AT[$fs]=$at
                diag "$fs: after $(($(date +%s) - begin)) s: $(jq -c '{atime_updates_per_min, updates_ci95, coverage, figure_source}' <<<"$a")"
                if [ $fs = tmpfs ] || [ -n "$INST" ]; then holds $fs "$a" || BAD[$fs]="${BAD[$fs]} $at"; fi
                # The sample's figures narrower as the walk goes on: the
                # part not walked shrinks (a kernel count, where it stands
                # as the figure, is another matter).
                if [ "$(jq -r '.figure_source' <<<"$a")" != kernel_count ]; then
                        hi=$(jq -r '.updates_ci95[1]' <<<"$a")
                        [ "${LAST_HI[$fs]}" = inf ] || awk -v h="$hi" -v p="${LAST_HI[$fs]}" 'BEGIN { exit !(h <= p * 1.3) }' ||
                                NARROW[$fs]="${NARROW[$fs]} $at"
                        LAST_HI[$fs]=$hi
                fi
                [ "$(jq -r '.coverage' <<<"$a")" = 1 ] && WHOLE[$fs]=$(($(date +%s) - begin))
        done
        sleep 1
done
for fs in ext4 tmpfs; do
        check "$fs: a figure from the whole walk within 7 minutes${WHOLE[$fs]:+ (after ${WHOLE[$fs]} s)}" test -n "${WHOLE[$fs]}"
        [ $fs = tmpfs ] || [ -n "$INST" ] && check "$fs: every figure's interval held the truth${BAD[$fs]:+ (not at${BAD[$fs]})}" test -z "${BAD[$fs]}"
        check "$fs: and narrowed as the walk went on${NARROW[$fs]:+ (not at${NARROW[$fs]})}" test -z "${NARROW[$fs]}"
done
stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
