#!/bin/bash
# memory.sh: mount churn, a thousand mounts and unmounts in a few seconds,
# three times over, with the daemon's memory back to its baseline after
# each: what a mount costs is given back when it goes, and a mount that did
# not last a sampler interval leaves no history behind. Runs in the build
# without sanitizers (ASan keeps freed memory in quarantine on purpose).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
N=1000
mkdir -p $M/churn
for i in $(seq 1 $N); do mkdir -p $M/churn/$i; done

write_config --bare '[daemon] log_level = debug' "${TMPFS_ONLY[@]}" "[mounts] exclude_paths += [/]${T#/}"
start_daemon

# rss: resident KiB of the daemon; anon: its private anonymous (heap) KiB.
rss() { awk '/^VmRSS:/ { print $2 }' /proc/$DAEMON_PID/status; }
anon() { awk '/^RssAnon:/ { print $2 }' /proc/$DAEMON_PID/status; }
tracked_is() { [ "$(ctl --json status | jq --arg p $M/churn/ '[.mounts[] | select(.target | startswith($p))] | length')" = "$1" ]; }

# The baseline: with the few mounts it watches probed and walked once.
settled() {
        ctl --json status | jq -e '[.mounts[] | select(.probe == null or
                (.progress != null and (.progress.stage | IN("waiting", "walking", "stalled"))))] | length == 0' >/dev/null
}
wait_until 30 settled || diag "the mounts at start were not all probed and walked within 30 s"
base=$(anon)
diag "baseline: RssAnon $base KiB, VmRSS $(rss) KiB"

peak=0
for round in 1 2 3; do
        t0=$(date +%s%N)
        for i in $(seq 1 $N); do mount -t tmpfs -o size=1m tmpfs $M/churn/$i; done
        t1=$(date +%s%N)
        check "round $round: all $N tracked" wait_until 20 tracked_is $N
        p=$(anon)
        [ "$p" -gt "$peak" ] && peak=$p
        t2=$(date +%s%N)
        given="Memory given back after the mount table shrank from [0-9]* to $(($(wc -l </proc/self/mountinfo) - N)) mounts"
        given_before=$(grep -c "$given" $T/atimed.log)
        for i in $(seq 1 $N); do umount $M/churn/$i; done
        diag "round $round: $N mounts in $(((t1 - t0) / 1000000)) ms, tracked $(((t2 - t1) / 1000000)) ms later," \
                "unmounted in $((($(date +%s%N) - t2) / 1000000)) ms; RssAnon $p KiB with them"
        check "round $round: all $N gone from status" wait_until 20 tracked_is 0
        # The trim after churn: on a timer 2 s after the table last shrank
        # (TRIM_DELAY_USEC, daemon/manager.c), said in the debug log with
        # the table's size: the one from before the round.
        check "round $round: the memory given back" wait_until 20 sh -c \
                "[ \$(grep -c '$given' $T/atimed.log) -gt $given_before ]"
        after[$round]=$(anon)
        diag "round $round: RssAnon $((after[round])) KiB after"
done

check "the thousand mounts were tracked at the peak (RssAnon $peak KiB > baseline $base KiB)" test "$peak" -gt "$base"
# Back to the baseline: within 1 MiB of it, where the thousand mounts held
# several. What stays is the allocator's (per-thread caches, pages a live
# block pins), not the daemon's: valgrind.sh shows no live growth; so it
# must not grow round after round either.
check "memory back to its baseline after churn (${after[3]} KiB vs $base KiB, at most +1024 KiB)" \
        test "${after[3]}" -le $((base + 1024))
check "no growth across rounds (${after[1]} -> ${after[3]} KiB, at most +512 KiB of allocator caches)" \
        test "${after[3]}" -le $((after[1] + 512))
check "still serving" ctl status
stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
