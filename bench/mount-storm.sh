#!/bin/bash
# mount-storm: atimed's CPU per mount change on a container host's table
# (issue 47), by the kernel's events (fanotify, statmount) and by reading
# mountinfo again, side by side in one run.
#
# Per size, SIZE tmpfs mounts under $B/mnt/storm/b, excluded by path: in
# the table as a container host's secrets and overlays are, not tracked.
# For each way (events, mountinfo; ABBA over ROUNDS rounds) a daemon is
# started on that table, tracking one empty tmpfs alone (so that its own
# sampling, the same either way, does not drown the figure; each tracked
# mount adds one statmount to a burst's recheck on the event path), and
# left alone IDLE seconds (its own CPU then is the idle rate); then
# CHANGES changes, a tmpfs mounted and umounted on $B/mnt/storm/c
# (excluded too) GAP_MS apart, so that at the default rescan_delay of
# 200 ms each change is read alone. The figure: the CPU (schedstat, every
# thread) over the changes, less the idle rate over their length, per
# change. Median over the rounds, min-max beside it. Beside them, the
# floor: the same changes watched by the least a watcher can do (a child
# of mountstorm waiting on a fanotify group, one statmount per mount
# reported): what this machine's wakeups and kernel cost, which no daemon
# goes below.
#
# Then the storm of tests/integration/mount-storm.sh at STORM_BASE mounts
# (STORM_OPS operations in STORM_SECONDS: new, nested, bind, moved,
# remounted and lazily umounted mounts, at most 500 of them at a time,
# tracked), each way in turn, with a GetStatus of one mount every 20 ms on
# one connection: its latency (target: under 50 ms throughout) and the
# daemon's CPU over the storm.
#
#   sudo make bench BENCH=mount-storm
#   (SIZES="500 5000 20000" CHANGES=100 GAP_MS=250 ROUNDS=2 IDLE=10
#    STORM_BASE=5000 STORM_OPS=10000 STORM_SECONDS=60)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
SIZES=${SIZES:-500 5000 20000}
CHANGES=${CHANGES:-100}
GAP_MS=${GAP_MS:-250}
ROUNDS=${ROUNDS:-2}
IDLE=${IDLE:-10}
STORM_BASE=${STORM_BASE:-5000}
STORM_OPS=${STORM_OPS:-10000}
STORM_SECONDS=${STORM_SECONDS:-60}
STORM=$top_builddir/tests/helpers/mountstorm
D=$B/mnt/storm
mkdir -p "$D" "$B/mnt/fixed"
# The benchmark's mounts in a tmpfs of their own: one lazy umount at the
# end takes them all (umount -R would read the table once a mount).
mount -t tmpfs -o size=256m storm "$D" && mkdir -p "$D/b" || exit 1
trap 'umount -l "$D"; bench_cleanup' EXIT
mount -t tmpfs -o size=1m fixed "$B/mnt/fixed"
# Every tmpfs of the host's but ours, as exact globs ("/[d]ev/shm").
HOST_TMPFS=$(awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "tmpfs") print $5 }' /proc/self/mountinfo |
        grep -v "^$B" | sort -u | sed 's|^/\(.\)|/[\1]|' | paste -sd, -)
# conf EVENTS EXCLUDED...: tmpfs alone, the host's and EXCLUDED left out.
conf() {
        local ev=$1 IFS=,
        shift
        printf '[mounts]\ninclude_fstypes = tmpfs\nexclude_paths = [/], /[%s]%s%s, %s\nevents = %s\n' \
                "${B:1:1}" "${B:2}" "${HOST_TMPFS:+, $HOST_TMPFS}" "$*" "$ev"
}

machine_line
echo "changes: $CHANGES per run, $GAP_MS ms apart; idle $IDLE s before them; $ROUNDS rounds of each way (ABBA)"

now_ns() { date +%s%N; }

# one WAY: prints the CPU per change in microseconds.
one() {
        local way=$1 ev=yes c0 c1 c2 c3 t0 t1 t2 t3 src
        [ "$way" = mountinfo ] && ev=no
        start_atimed "$(conf "$ev" "$D")"
        src=$("$ATIMECTL" --socket "$B/sock" --json status | jq -r .mount_changes.source)
        [ "$src" = "$way" ] || echo "bench: asked for $way, the daemon follows $src" >&2
        sleep 2
        c0=$(cpu_ns "$ATIMED_PID") t0=$(now_ns)
        sleep "$IDLE"
        c1=$(cpu_ns "$ATIMED_PID") t1=$(now_ns)
        c2=$(cpu_ns "$ATIMED_PID") t2=$(now_ns)
        "$STORM" cost "$D" 0 "$CHANGES" "$GAP_MS"
        sleep 0.5 # the last change's read
        c3=$(cpu_ns "$ATIMED_PID") t3=$(now_ns)
        kill "$ATIMED_PID"
        wait "$ATIMED_PID" 2>/dev/null
        awk -v c0="$c0" -v c1="$c1" -v c2="$c2" -v c3="$c3" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v n="$CHANGES" \
                'BEGIN { idle = (c1 - c0) / (t1 - t0); printf "%.1f\n", ((c3 - c2) - idle * (t3 - t2)) / n / 1000 }'
}

have=0
printf '%-8s %-10s %-28s %-28s %-7s %s\n' mounts in-table "events us/change (min-max)" "mountinfo us/change (min-max)" ratio \
        "floor us/change"
for size in $SIZES; do
        if [ "$have" -lt "$size" ]; then
                "$STORM" base "$D" "$size" "$have" || exit 1 # more, numbered on from those there
                have=$size
        fi
        ev=() mi=()
        for ((r = 0; r < ROUNDS; r++)); do
                if ((r % 2 == 0)); then
                        ev+=("$(one events)") mi+=("$(one mountinfo)")
                else
                        mi+=("$(one mountinfo)") ev+=("$(one events)")
                fi
        done
        e=$(printf '%s\n' "${ev[@]}" | median) m=$(printf '%s\n' "${mi[@]}" | median)
        printf '%-8s %-10s %-28s %-28s %-7s %s\n' "$size" "$(wc -l </proc/self/mountinfo)" \
                "$e ($(printf '%s\n' "${ev[@]}" | minimum)-$(printf '%s\n' "${ev[@]}" | maximum))" \
                "$m ($(printf '%s\n' "${mi[@]}" | minimum)-$(printf '%s\n' "${mi[@]}" | maximum))" \
                "$(awk -v e="$e" -v m="$m" 'BEGIN { if (e > 0) printf "%.0fx", m / e; else print "-" }')" \
                "$("$STORM" floor "$D" 0 "$CHANGES" "$GAP_MS")"
done

# The storm, with a status every 20 ms.
echo
echo "storm: $STORM_OPS operations in $STORM_SECONDS s over $STORM_BASE base mounts"
[ "$have" -lt "$STORM_BASE" ] && { "$STORM" base "$D" "$STORM_BASE" "$have" || exit 1; }
printf '%-10s %-12s %-12s %-14s %s\n' way status-max status-p99 "CPU s (storm)" "table after"
for way in events mountinfo; do
        ev=yes
        [ "$way" = mountinfo ] && ev=no
        mkdir -p "$D/x" "$D/y" && mount -t tmpfs -o size=16m x "$D/x" && mount -t tmpfs -o size=16m y "$D/y" || exit 1
        start_atimed "$(conf "$ev" "$D/b" "$D/c")"
        sleep 2
        c0=$(cpu_ns "$ATIMED_PID")
        out=$("$STORM" storm "$D" "$STORM_BASE" "$STORM_OPS" "$STORM_SECONDS" "$B/sock" "$B/mnt/fixed")
        c1=$(cpu_ns "$ATIMED_PID")
        sleep 1
        k=$(findmnt -rn -o TARGET | grep -c "^$D/[xy]/")
        a=$("$ATIMECTL" --socket "$B/sock" --json status | jq --arg d "$D" '[.mounts[] | select((.target | startswith($d + "/x/")) or (.target | startswith($d + "/y/")))] | length')
        kill "$ATIMED_PID"
        wait "$ATIMED_PID" 2>/dev/null
        max=$(sed -n 's/.*status_max_ms=\([0-9.]*\).*/\1/p' <<<"$out")
        p99=$(sed -n 's/.*status_p99_ms=\([0-9.]*\).*/\1/p' <<<"$out")
        printf '%-10s %-12s %-12s %-14s %s\n' "$way" "$max ms" "$p99 ms" "$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" \
                "$a of $k mounts"
        umount -l "$D/x" "$D/y"
        rm -rf "$D/x" "$D/y"
done
