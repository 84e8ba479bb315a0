#!/bin/bash
# history.sh: history that survives SIGTERM, kill -9, remounts and every
# kind of damaged state file; gaps while down; a state dir that is full or
# read-only; bounded state while mounts come and go; the history chart.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
S=$T/state-fs
mkdir -p $M/strict $S
make_ext4 a 32 || bail mkfs
mount -o loop,strictatime $T/a.img $M/strict || bail mount
make_tree $M/strict 2 50
# The state dir on a small tmpfs of its own, to fill it and make it read-only.
mount -t tmpfs -o size=2m tmpfs $S || bail mount
STATE=$S/atimed

write_config "[daemon] state_dir = $STATE" "[mounts] exclude_paths += $S" \
        '[store] rings = 1s:10min, 10s:1h, 1min:1d' '[store] flush_interval = 1s' '[store] max_mounts = 20'
start() { "$ATIMED" --config "$T/atimed.conf" --socket "$T/sock" 2>>"$T/atimed.log" & DAEMON_PID=$!; DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"; wait_until 10 ctl status || bail "no start"; }
hist() { ctl --json history "$1" --since "${2:-10min}" ${3:+--resolution $3}; }
# point T: "samples per_min atime probe" of the 1 s point at T
point() { hist $M/strict 10min | jq -r --argjson t "$1" '.points[] | select(.t == $t) | "\(.samples) \(.atime_updates_per_min) \(.atime) \(.probe)"'; }

start
check "history accrues" wait_until 20 sh -c "[ \$($ATIMECTL --socket $T/sock --json history $M/strict --since 10min | jq '[.points[] | select(.atime_updates_per_min != null)] | length') -ge 3 ]"
# 30 reads: 30 updates, whichever intervals they fall in (a sweep may come
# in the middle of them, and an interval's length is the sweeps' own, a
# little over or under a second on a loaded host: so the count is judged,
# not a per-minute figure of one second).
total() { mount_field $M/strict atime_updates_total; }
t_reads=$(date +%s)
u0=$(total)
for i in $(seq 0 29); do cat $M/strict/d0/f$i >/dev/null; done
check "the reads counted: atime_updates_total grows by 30" wait_until 10 sh -c \
        "awk -v a=$u0 -v b=\$($ATIMECTL --socket $T/sock --json status $M/strict | jq '.mounts[0].atime_updates_total') 'BEGIN { exit !(b - a >= 29.5) }'"
# (Two intervals on: nothing more is counted for them.)
wait_until 10 swept_since $M/strict $(($(date +%s) + 2))
check "and by no more than 30" awk -v a=$u0 -v b=$(total) 'BEGIN { d = b - a; printf "grew by %.2f\n", d; exit !(d >= 29.5 && d <= 30.5) }'
# sum_points FROM: the 1 s points' updates since FROM, each point's
# per-minute figure over its second.
sum_points() { hist $M/strict 10min | jq --argjson t "$1" '[.points[] | select(.t >= $t) | .atime_updates_per_min // 0] | add / 60'; }
check "the reads show in history" wait_until 10 sh -c "[ \$(echo \"\$($ATIMECTL --socket $T/sock --json history $M/strict --since 10min | jq --argjson t $((t_reads - 1)) '[.points[] | select(.t >= \$t) | .atime_updates_per_min // 0] | add / 60')\" | cut -d. -f1) -ge 27 ]"
h=$(hist $M/strict)
like "the key names the filesystem UUID and mount point" "$(echo "$h" | jq -r .key)" \
        "^uuid=$(blkid -o value -s UUID $(findmnt -n -o SOURCE $M/strict)) target=$M/strict\$"
is "points are at the finest resolution for 10 min" "$(echo "$h" | jq .resolution_s)" "1"
is "each point is one sample" "$(echo "$h" | jq '[.points[] | select(.samples > 1)] | length')" "0"
is "and carries the policy and the probe's verdict" "$(echo "$h" | jq -r '.points[-1] | "\(.atime) \(.probe)"')" "strictatime strictatime"
busiest=$(echo "$h" | jq '[.points[] | select(.atime_updates_per_min != null)] | max_by(.atime_updates_per_min) | .t')
before=$(point $busiest)
diag "busiest point $busiest: $before"
like "the busiest second has one sample, strictatime, probe verified" "$before" "^1 [0-9.]+ strictatime strictatime$"
# Each point an interval of about a second: their sum within a tenth.
check "and the points since the reads hold the 30 (each a second's figure)" \
        awk -v v="$(sum_points $((t_reads - 1)))" 'BEGIN { printf "%.2f\n", v; exit !(v >= 27 && v <= 33) }'
ten=$(hist $M/strict 10min 10s)
is "10 s points exist too" "$(echo "$ten" | jq .resolution_s)" "10"
busiest_v=$(echo "$before" | cut -d' ' -f2)
check "and average the 1 s ones: the busiest second's, with quieter ones" sh -c "echo '$ten' | jq -e --argjson t $((busiest - busiest % 10)) --argjson v $busiest_v '.points[] | select(.t == \$t) | .samples > 1 and .atime_updates_per_min > 0 and .atime_updates_per_min < \$v'"

# --- SIGTERM and start again: earlier points served, the down time a gap.
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"
check "a snapshot is written on the way out" test -s $STATE/history -a ! -e $STATE/history.journal
sleep 4 # not a wait: atimed is down for 4 s, the gap measured below
start
restarted=$(date +%s)
is "after a restart the earlier point is served unchanged" "$(point $busiest)" "$before"
check "new points accrue after it" wait_until 10 sh -c "[ \$($ATIMECTL --socket $T/sock --json history $M/strict --since 10min | jq '.points[-1].t') -gt $(($(date +%s) - 3)) ]"
gaps=$(hist $M/strict | jq '[.points[] | select(.samples == 0)] | length')
diag "gap points after a 4 s stop: $gaps"
check "the time it was down is a gap, not zeros" test "$gaps" -ge 3
like "atimectl history says so" "$(ctl history $M/strict --since 10min)" "gaps? \\(atimed not running\\)"

# --- kill -9: everything up to the last flush survives. First, points
# since the restart that are older than 2 s (flush_interval = 1s) and so in
# the journal.
flushed_since() {
        [ -s $STATE/history.journal ] && [ "$(hist $M/strict | jq --argjson s "$1" --argjson n $(($(date +%s) - 2)) \
                '[.points[] | select(.t > $s and .t < $n and .samples > 0)] | length')" -ge 1 ]
}
wait_until 10 flushed_since $restarted
snap=$(hist $M/strict | jq -c "[.points[] | select(.t < $(($(date +%s) - 2)) and .samples > 0) | [.t, .atime_updates_per_min]]")
kill -KILL $DAEMON_PID
wait $DAEMON_PID 2>/dev/null
start
after=$(hist $M/strict | jq -c "[.points[] | select(.t <= $(echo "$snap" | jq '.[-1][0]') and .samples > 0) | [.t, .atime_updates_per_min]]")
is "after kill -9, every point up to the last flush is there" "$after" "$snap"
like "the journal was replayed" "$(cat $T/atimed.log)" "History of [0-9]+ mounts loaded \\([1-9][0-9]* journal samples replayed\\)"

# --- A remount (new mount id, maybe a new loop device): the same history.
umount $M/strict
mount -o loop,strictatime $T/a.img $M/strict
check "after a remount the earlier points are still there" wait_until 10 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json history $M/strict --since 10min | jq -r --argjson t $busiest '.points[] | select(.t == \$t) | .atime_updates_per_min')\" = $(echo "$before" | cut -d' ' -f2) ]"

# --- The policy changes: marked in history and in the chart.
mount -o remount,noatime $M/strict
check "a policy change is recorded" wait_until 10 sh -c "$ATIMECTL --socket $T/sock --json history $M/strict --since 10min | jq -e '.points[-1].atime == \"noatime\"' >/dev/null"
chart=$(LANG=C.UTF-8 COLUMNS=100 ctl history $M/strict --since 5min)
like "the chart labels its axes" "$chart" "^ +[0-9.k]+ [┤|]"
like "and lists the policy change" "$chart" "policy strictatime -> noatime"
like "and marks it under the chart" "$chart" "▲"
like "status has a sparkline of the last hour" "$(LANG=C.UTF-8 COLUMNS=200 ctl status $M/strict)" "LAST-HOUR"
mount -o remount,strictatime $M/strict

# --- Damaged state files: moved aside with a reason; never fatal.
corrupt_and_restart() { # DESCRIPTION EXPECTED-LOG COMMAND...
        local what=$1 expect=$2
        shift 2
        stop_daemon
        "$@"
        : >"$T/atimed.log"
        start
        like "$what: logged" "$(cat $T/atimed.log)" "$expect"
        check "$what: the file is moved aside" sh -c "ls $STATE | grep -q 'corrupt-'"
        check "$what: the daemon serves" ctl status
        rm -f $STATE/*.corrupt-*
}
corrupt_and_restart "a flipped byte" "checksum mismatch" \
        sh -c "printf '\\377' | dd of=$STATE/history bs=1 seek=100 conv=notrunc 2>/dev/null"
corrupt_and_restart "a truncated file" "checksum mismatch" sh -c "truncate -s 200 $STATE/history"
corrupt_and_restart "a zero-length file" "empty file" sh -c ": >$STATE/history"
corrupt_and_restart "a garbage journal" "not an atimed journal" sh -c "echo garbage >$STATE/history.journal"
corrupt_and_restart "a torn journal" "journal damaged or cut short" \
        sh -c "printf 'ATIMEDHJ\\001\\000\\000\\000JBLK\\377\\377' >$STATE/history.journal"
# --- A snapshot of a newer format (after a downgrade): refused, left as it
# is, never overwritten, not even by the snapshot written at exit.
stop_daemon
printf '\004' | dd of=$STATE/history bs=1 seek=8 conv=notrunc 2>/dev/null
cp $STATE/history $T/newer.copy
: >"$T/atimed.log"
start
like "a newer format: the log says so plainly" "$(cat $T/atimed.log)" \
        "history was written by a newer atimed \(format version 4; this one reads up to 3\): left as it is"
check "a newer format: the daemon serves" ctl status
stop_daemon
check "a newer format: the file is left byte for byte, after the exit's flush" cmp $STATE/history $T/newer.copy
check "a newer format: nothing moved aside" sh -c "! ls $STATE | grep -q 'corrupt-'"
printf '\003' | dd of=$STATE/history bs=1 seek=8 conv=notrunc 2>/dev/null
start
check "history accrues again after all that" wait_until 10 sh -c "[ \$($ATIMECTL --socket $T/sock --json history $M/strict --since 1min | jq '[.points[] | select(.samples > 0)] | length') -ge 2 ]"

# --- A full state dir, then a read-only one: logged, retried, recovered.
: >"$T/atimed.log"
head -c 3M /dev/zero >$S/filler 2>/dev/null
check "a full state dir is logged" wait_until 10 grep -q "Cannot write history to $STATE" "$T/atimed.log"
check "and the daemon keeps serving" ctl status
rm -f $S/filler
check "when space returns, history is written again" wait_until 10 grep -q "History written to $STATE again" "$T/atimed.log"
: >"$T/atimed.log"
mount -o remount,ro $S
check "a read-only state dir is logged" wait_until 10 grep -q "Cannot write history to $STATE.*Read-only" "$T/atimed.log"
mount -o remount,rw $S
check "and recovered from" wait_until 10 grep -q "History written to $STATE again" "$T/atimed.log"

# --- Mounts coming and going: the state stays bounded (max_mounts = 20).
# measured N PATTERN: N mounts whose target matches PATTERN have a figure.
measured() { [ "$(ctl --json status | jq --arg p "$2" '[.mounts[] | select((.target | test($p)) and .activity != null)] | length')" -eq "$1" ]; }
for round in 1 2 3; do
        for i in $(seq 1 15); do mkdir -p $M/churn-$round-$i; mount -t tmpfs tmpfs $M/churn-$round-$i; done
        wait_until 20 measured 15 "/churn-$round-" || diag "round $round: not all 15 mounts measured"
        for i in $(seq 1 15); do umount $M/churn-$round-$i; done
done
wait_until 10 sh -c "! $ATIMECTL --socket $T/sock --json status | grep -q /churn-"
stop_daemon
keys=$(strings $STATE/history | grep -c 'target=')
diag "histories kept after 45 mounts came and went: $keys; state file $(stat -c %s $STATE/history) bytes"
check "no more than max_mounts histories are kept" test "$keys" -le 20
done_testing
