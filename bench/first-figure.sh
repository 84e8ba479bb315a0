#!/bin/bash
# first-figure: how long an operator waits for the first figure of a big
# filesystem, and whether that figure is honest. For each size, an ext4
# image of that many inodes (directories of 100 empty files, and a corner
# 30 directories deep holding the hot files), mounted strictatime, a known
# read workload on it from before atimed starts (HOT files in the deep
# corner read RATE_HOT times a second between them, SPREAD files drawn at
# random over the tree read RATE_SPREAD times a second), the kernel's count
# of atime updates on its device (ext4:ext4_mark_inode_dirty, a tracefs
# instance of its own, as tests/integration/busy.sh), and atimed started at
# its default settings (only this mount tracked). Printed per size: the
# seconds to the first figure, every figure with its 95% interval, its
# coverage and the kernel's count over the same interval, and the seconds
# until the interval lies within 25% of the final figure (the figure once
# the walk is done, the median of the last FINAL intervals).
#
#   sudo make bench BENCH=first-figure   (SIZES="100000 400000 2000000")
#   SIZES=100000 MAX_S=2400 FINAL=3 BENCH_DIR=/var/tmp
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
SIZES=${SIZES:-100000 400000 2000000}
MAX_S=${MAX_S:-2400}
FINAL=${FINAL:-3}
HOT=${HOT:-20}
RATE_HOT=${RATE_HOT:-2000}
SPREAD=${SPREAD:-1000}
RATE_SPREAD=${RATE_SPREAD:-100}
BENCH_DIR=${BENCH_DIR:-/var/tmp}
READLOAD=$top_builddir/tests/helpers/readload
TRACECOUNT=$top_builddir/tests/helpers/tracecount
CTL() { "$ATIMECTL" --socket "$B/sock" "$@"; }

[ -x "$READLOAD" ] && [ -x "$TRACECOUNT" ] || { echo "bench: build tests/helpers/readload and tracecount first (make check TESTS= builds them)" >&2; exit 1; }
mkdir -p "$B/tracing"
mount -t tracefs nodev "$B/tracing" || { echo "bench: cannot mount tracefs" >&2; exit 1; }
EV=events/ext4/ext4_mark_inode_dirty
IMGS=""
ff_cleanup() {
        local i
        for i in "$B"/tracing/instances/atimed-ff-$$-*; do
                [ -d "$i" ] && { echo 0 >"$i/tracing_on"; rmdir "$i"; }
        done 2>/dev/null
        bench_cleanup
        for i in $IMGS; do rm -f "$i"; done
}
trap ff_cleanup EXIT

# populate DIR N: N inodes in all, the hot corner and the spread list.
populate() {
        python3 - "$1" "$2" "$HOT" "$SPREAD" <<'EOF'
import os, random, sys
top, n, hot, spread = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(25)
deep = os.path.join(top, *["corner%d" % i for i in range(30)])
os.makedirs(deep)
made = 30
hots = []
for i in range(hot):
    p = os.path.join(deep, "hot%d" % i)
    with open(p, "wb") as f:
        f.write(b"x" * 1024)
    hots.append(p)
made += hot
files = []
d = 0
while made < n:
    dd = os.path.join(top, "d%d" % (d // 100), "e%d" % (d % 100))
    os.makedirs(dd, exist_ok=(d % 100 != 0))
    made += 1 + (d % 100 == 0)
    for j in range(min(100, n - made)):
        p = os.path.join(dd, "f%d" % j)
        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
        files.append(p)
        made += 1
    d += 1
pick = random.sample(files, min(spread, len(files)))
for p in pick:
    with open(p, "wb") as f:
        f.write(b"y" * 1024)
with open(os.path.join(os.path.dirname(top), os.path.basename(top) + ".hot"), "w") as f:
    f.write("\n".join(hots) + "\n")
with open(os.path.join(os.path.dirname(top), os.path.basename(top) + ".spread"), "w") as f:
    f.write("\n".join(pick) + "\n")
EOF
}

echo "first-figure: ext4 (loop, strictatime) of SIZES inodes, atimed at default settings"
machine_line
echo "workload: $HOT hot files 30 directories deep read $RATE_HOT/s in all; $SPREAD files at random over the tree read $RATE_SPREAD/s"
SUMMARY=""
for n in $SIZES; do
        img=$BENCH_DIR/atimed-ff-$$-$n.img
        IMGS="$IMGS $img"
        mnt=$B/mnt/ff$n
        mb=$((n * 600 / 1048576 + 256))
        truncate -s "${mb}M" "$img"
        mkfs.ext4 -q -F -N $((n + n / 20 + 4096)) -I 256 "$img"
        mkdir -p "$mnt"
        mount -o loop,strictatime "$img" "$mnt"
        t=$(date +%s)
        populate "$mnt/t" "$n"
        umount "$mnt"
        mount -o loop,strictatime "$img" "$mnt" # the filesystem's caches cold, as after a boot
        inodes=$(df --output=iused "$mnt" | tail -1 | tr -d ' ')
        echo
        echo "== $n: $inodes inodes in use (made in $(($(date +%s) - t)) s)"
        d=$(mountpoint -d "$mnt")
        inst=$B/tracing/instances/atimed-ff-$$-$n
        mkdir "$inst"
        echo 4 >"$inst/buffer_size_kb"
        echo "dev == $(((${d%%:*} << 20) | ${d##*:}))" >"$inst/$EV/filter"
        echo 1 >"$inst/$EV/enable"
        "$TRACECOUNT" "$inst" 1000 $((MAX_S + 300)) >"$B/count.$n" &
        tc=$!
        "$READLOAD" "$RATE_HOT" $((MAX_S + 300)) <"$mnt/t.hot" >/dev/null &
        rh=$!
        "$READLOAD" "$RATE_SPREAD" $((MAX_S + 300)) <"$mnt/t.spread" >/dev/null &
        rs=$!
        BENCH_PIDS="$BENCH_PIDS $tc $rh $rs"
        sleep 5 # the workload under way before atimed starts
        t0=$(date +%s.%N)
        start_atimed "$(bench_mounts_only ext4 "$mnt")"
        : >"$B/fig.$n"
        first="" final_walk=""
        while :; do
                now=$(date +%s.%N)
                el=$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.0f", a - b }')
                j=$(CTL --json status 2>/dev/null | jq -c --arg t "$mnt" '.mounts[] | select(.target == $t)')
                a=$(jq -c '.activity // empty' <<<"$j")
                if [ -n "$a" ]; then
                        at=$(jq -r '.at' <<<"$a")
                        if ! grep -q "^$at " "$B/fig.$n"; then
                                [ -z "$first" ] && first=$el
                                cov=$(jq -r '.coverage // 1' <<<"$a")
                                # the kernel's count over the figure's interval
                                k=$(awk -v e="$at" -v s="$(jq -r .interval_s <<<"$a")" '
                                        { t[NR] = $1; c[NR] = $2 }
                                        END { for (i = 1; i <= NR; i++) { if (t[i] <= e - s) b = c[i]; if (t[i] <= e) f = c[i] }
                                              printf "%.0f", (f - b) * 60 / s }' "$B/count.$n")
                                echo "$at $el $(jq -r '"\(.atime_updates_per_min) \(.updates_ci95[0]) \(.updates_ci95[1]) \(.figure_source // "sample")"' <<<"$a") $cov $k" >>"$B/fig.$n"
                                tail -1 "$B/fig.$n" | awk '{ printf "  %5d s  %10.0f/min  (%.0f-%.0f)  %-14s coverage %5.1f%%  kernel %10.0f/min  %s\n",
                                        $2, $3, $4, $5, $6, $7 * 100, $8, ($4 <= $8 && $8 <= $5) ? "in" : "OUT" }'
                                if [ -z "$final_walk" ] && awk -v c="$cov" 'BEGIN { exit !(c >= 1) }'; then final_walk=$el; fi
                        fi
                else
                        p=$(jq -r '.progress // empty | "\(.stage) \(.walked)/\(.inodes) eta \(.eta_s)"' <<<"$j")
                        [ -n "$p" ] && [ $((el % 30)) -lt 2 ] && echo "  $el s: $p"
                fi
                if [ -n "$final_walk" ] && [ "$(awk '$7 >= 1' "$B/fig.$n" | wc -l)" -ge $((FINAL + 1)) ]; then break; fi
                [ "$el" -ge "$MAX_S" ] && { echo "  (stopped after $MAX_S s)"; break; }
                sleep 2
        done
        # The final figure: the median of the last FINAL whole-coverage
        # figures (if the walk did not finish within MAX_S, of the last
        # FINAL figures, marked so).
        final=$(awk '$7 >= 1 { print $3 }' "$B/fig.$n" | tail -n "$FINAL" | median)
        if [ -z "$final" ] && [ -s "$B/fig.$n" ]; then
                final=$(awk '{ print $3 }' "$B/fig.$n" | tail -n "$FINAL" | median)
                echo "  (the walk was not done after $MAX_S s: the final figure is that of the last $FINAL intervals)"
                final="$final*"
        fi
        narrow=$(awk -v f="${final%\*}" 'f > 0 && $4 >= 0.75 * f && $5 <= 1.25 * f { print $2; exit }' "$B/fig.$n")
        inside=$(awk '$4 <= $8 && $8 <= $5' "$B/fig.$n" | wc -l)
        total=$(wc -l <"$B/fig.$n")
        line=$(printf '%9s %9s %10s %12s %11s %12s %10s' "$n" "$inodes" "${first:--}" "${final:--}" \
                "$(awk 'NR == 1 { printf "%.0f", $8 }' "$B/fig.$n")" "${narrow:--}" "$inside/$total")
        echo "  first figure after ${first:--} s; final ${final:--}/min; within 25% after ${narrow:--} s; kernel count inside the interval in $inside of $total"
        SUMMARY="$SUMMARY$line
"
        kill $tc $rh $rs 2>/dev/null
        kill -TERM $ATIMED_PID 2>/dev/null
        wait $ATIMED_PID 2>/dev/null
        echo 0 >"$inst/tracing_on"
        rmdir "$inst"
        umount "$mnt"
        rm -f "$img"
done
echo
printf '%9s %9s %10s %12s %11s %12s %10s\n' size inodes first_s final/min kernel/min within25%_s ci_holds
printf '%s' "$SUMMARY"
