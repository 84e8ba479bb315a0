#!/bin/bash
# textfile.sh: the Prometheus textfile against a user who can write to its
# directory (or who planted things there before). Nothing planted at a name
# atimed could have used (the old PATH.<pid>.tmp, PATH.tmp, .PATH.tmp) is
# opened, followed or overwritten: a FIFO there blocks no worker, a hard
# link there is not written through, a symlink at the target is replaced,
# not followed; workers never pile up; a directory anyone may write without
# the sticky bit is refused; the mode is the configured one; a directory on
# a filesystem that hangs costs one thread, not one per export.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
D=$T/tf
P=$D/atimed.prom
mkdir -p $D $T/outside $T/mnt/a
chmod 0755 $D
mount -t tmpfs -o strictatime tmpfs $T/mnt/a || bail mount
echo "precious, not atimed's" >$T/outside/secret
echo "the symlink's target" >$T/outside/target
write_config "[mounts] exclude_paths += [/]${T#/}/outside" '[mounts] include_fstypes = tmpfs' \
        '[sampler] walk_rate' '[sampler] timeout = 2s' '[daemon] worker_threads = 2' \
        "[export] textfile = $P" '[export] textfile_mode = 0640'

# export_time: atimed_last_export_timestamp_seconds in the textfile, or 0.
export_time() { awk '$1 == "atimed_last_export_timestamp_seconds" { t = $2 } END { print t + 0 }' $P 2>/dev/null || echo 0; }
# exports_go_on: the textfile is rewritten, with later figures, twice more.
exports_go_on() {
        local t0
        t0=$(export_time)
        wait_until 10 sh -c "[ \$(awk '\$1 == \"atimed_last_export_timestamp_seconds\" { print \$2 }' $P) -gt $t0 ]" &&
                t0=$(export_time) &&
                wait_until 10 sh -c "[ \$(awk '\$1 == \"atimed_last_export_timestamp_seconds\" { print \$2 }' $P) -gt $t0 ]"
}
threads() { awk '/^Threads:/ { print $2 }' /proc/$DAEMON_PID/status; }

start_daemon
check "the textfile is written" wait_until 10 test -s $P
is "with the configured mode" "$(stat -c %a $P)" "640"
threads0=$(threads)

# --- Traps at every name an attacker could predict. First a hard link at
# the name atimed used to write (PATH.<pid>.tmp), then a FIFO there.
mkfifo $D/.atimed.prom.tmp $D/atimed.prom.$((DAEMON_PID + 1)).tmp
ln $T/outside/secret $D/atimed.prom.$DAEMON_PID.tmp
ln $T/outside/secret $D/atimed.prom.tmp
ln $T/outside/secret $D/.atimed.prom.$DAEMON_PID.tmp
rm -f $P && ln -s $T/outside/target $P
check "exports go on past hard links at the predictable names" exports_go_on
is "the file they link to is untouched" "$(cat $T/outside/secret)" "precious, not atimed's"
is "and still has its four links" "$(stat -c %h $T/outside/secret)" "4"
check "the symlink at the target was replaced by a regular file" sh -c "test -f $P && ! test -L $P"
is "and its target is untouched" "$(cat $T/outside/target)" "the symlink's target"
rm $D/atimed.prom.$DAEMON_PID.tmp $D/atimed.prom.tmp
mkfifo $D/atimed.prom.$DAEMON_PID.tmp $D/atimed.prom.tmp
check "exports go on past FIFOs at the predictable names" exports_go_on
check "the FIFOs are still FIFOs" sh -c "test -p $D/atimed.prom.$DAEMON_PID.tmp && test -p $D/.atimed.prom.tmp"
check "promtool accepts what is there" sh -c "command -v promtool >/dev/null || exit 0; promtool check metrics <$P"
is "no worker stuck" "$(ctl --json status | jq .stuck_threads)" "0"
is "no mount marked stalled" "$(ctl --json status | jq '[.mounts[] | select(.stalled)] | length')" "0"
check "no thread pile-up (threads now $(threads), at start $threads0)" test "$(threads)" -le "$threads0"
check "no temporary left behind" no_temporary $D

# --- A directory anyone may write is refused; with the sticky bit it is fine.
chmod 0777 $D
check "a world-writable directory without the sticky bit is refused, and said so" wait_until 10 \
        grep -q "Cannot write $P: Operation not permitted" $T/atimed.log
t0=$(export_time)
sleep 2.5 # not a wait: two intervals and more in which nothing may be written
is "and nothing is written there" "$(export_time)" "$t0"
chmod 1777 $D
check "with the sticky bit, exports resume" exports_go_on
check "and it is said so" grep -q "Writing $P again" $T/atimed.log

# --- The textfile's directory on a filesystem that stops answering (a
# SIGSTOPped bindfs): one export is stuck, none follows it until it returns.
if command -v bindfs >/dev/null; then
        mkdir -p $T/fsrc $T/fuse
        bindfs_start $T/fsrc $T/fuse
        sed -i "s|^textfile = .*|textfile = $T/fuse/atimed.prom|" $T/atimed.conf
        check "reloaded" sighup_reload
        check "the textfile moves to the FUSE directory on reload" wait_until 10 test -s $T/fuse/atimed.prom
        threads1=$(threads)
        bindfs_stop
        check "a write that hangs is reported once it misses its deadline" wait_until 10 \
                grep -q "Writing $T/fuse/atimed.prom timed out" $T/atimed.log
        sleep 6 # not a wait: three more deadlines (timeout = 2s), in which no new export may start
        is "one thread written off, no pile-up (threads $(threads), before $threads1)" \
                "$(($(threads) <= threads1 + 1))" "1"
        is "the timeout logged once" "$(grep -c "Writing $T/fuse/atimed.prom timed out" $T/atimed.log)" "1"
        check "status answers meanwhile" timeout 2 "$ATIMECTL" --socket $T/sock status
        bindfs_resume
        t0=$(awk '$1 == "atimed_last_export_timestamp_seconds" { print $2 }' $T/fuse/atimed.prom)
        check "exports resume when it answers again" wait_until 20 sh -c \
                "[ \$(awk '\$1 == \"atimed_last_export_timestamp_seconds\" { print \$2 }' $T/fuse/atimed.prom) -gt ${t0:-0} ]"
        sed -i "s|^textfile = .*|textfile = $P|" $T/atimed.conf
        # ($P is there from before: the reload itself is waited for.)
        check "reloaded back" sighup_reload
        check "back to the first directory" wait_until 10 test -s $P
else
        diag "bindfs not installed: the hanging directory is not tried"
        tap_result 1 "bindfs is installed"
fi

stop_daemon
is "a clean stop" "$STOP_STATUS" "0"
check "removes the textfile" test ! -e $P
check "and nothing else" test -p $D/.atimed.prom.tmp
done_testing
