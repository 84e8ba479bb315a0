#!/bin/bash
# state.sh: the state dir and every file atimed reads, against what a user
# or a mistake can put there. A second daemon on the same state dir exits
# with a clear error and touches nothing; FIFOs in place of the history
# files, of the configuration on SIGHUP, and in a tmpfiles.d directory are
# refused without blocking, each with a log line naming the file; a state
# dir writable by others is made private.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/tmp $T/tmpfiles
mount -t tmpfs tmpfs $M/tmp || bail mount
echo "d $M/tmp 1777 root root 10d" >$T/tmpfiles/a.conf
mkfifo $T/tmpfiles/b.conf
echo "d $M/tmp/secret-name 1777 root root 4242d" >$T/tmpfiles/private.conf
chmod 0600 $T/tmpfiles/private.conf
write_config '[daemon] log_level = debug' "${TMPFS_ONLY[@]}" '[sampler] walk_rate' '[store] flush_interval = 1s' \
        "[consumers] tmpfiles_dirs = $T/tmpfiles"
chmod 0777 $T/state
start_daemon
is "a state dir writable by others is made private" "$(stat -c %a $T/state)" "755"
like "and that is logged" "$(cat $T/atimed.log)" "State directory $T/state was writable by group or others \(mode 0777\); made it 0755"
consumer() { ctl --json recommend $M/tmp | jq -r '.. | objects | select(has("kind") and has("source")) | .source' | head -1; }
check "the consumer scan finished despite a FIFO in the tmpfiles dir" wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json recommend $M/tmp | grep -q '$T/tmpfiles/a.conf'"
like "the FIFO is named as not a regular file" "$(cat $T/atimed.log)" "$T/tmpfiles/b.conf: not a regular file"
# A root-only file shaped like a tmpfiles line: what it says is not told
# to a user who could not read it.
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
rec_nobody=$(nobody "$ATIMECTL" --socket $T/sock --json recommend $M/tmp 2>&1)
rec_root=$(ctl --json recommend $M/tmp 2>&1)
check "the private file's consumer is used" sh -c "echo '$rec_root' | grep -q '$T/tmpfiles/private.conf'"
like "root sees its path" "$rec_root" "secret-name"
if printf '%s' "$rec_nobody" | grep -q "secret-name\|4242d"; then
        tap_result 1 "a user who cannot read it sees none of its fields"
        printf '%s\n' "$rec_nobody" | grep "secret-name\|4242d" | head -3 | sed 's/^/#   /'
else
        tap_result 0 "a user who cannot read it sees none of its fields"
fi
like "but where it comes from" "$rec_nobody" "$T/tmpfiles/private.conf"
check "history is saved" wait_until 20 test -s $T/state/history.journal
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"

# --- A second daemon on the same state dir.
start_daemon
# The first one stopped meanwhile (it keeps its lock), so that nothing but
# the second could change the files.
kill -STOP $DAEMON_PID
sum=$(cat $T/state/* | md5sum)
timeout 20 "$ATIMED" --config "$T/atimed.conf" --socket "$T/sock2" --state-dir "$T/state" 2>$T/second.log
st=$?
is "a second daemon on the same state dir exits with status 1" "$st" "1"
like "saying why" "$(cat $T/second.log)" "Another atimed is using the state directory $T/state"
check "it did not serve" test ! -e $T/sock2
is "and touched nothing there" "$(cat $T/state/* | md5sum)" "$sum"
kill -CONT $DAEMON_PID
check "the first one still serves" ctl status
stop_daemon
is "the first one exits 0" "$STOP_STATUS" "0"

# --- FIFOs in place of the history files.
for f in history.journal history; do
        rm -rf $T/state && mkdir -m 0700 $T/state && mkfifo $T/state/$f
        : >"$T/atimed.log"
        START_TIMEOUT=15 start_daemon
        check "a FIFO at STATE/$f: the daemon serves" ctl status
        like "and says what it did with it" "$(cat $T/atimed.log)" "$f: not a regular file .*moved aside"
        t0=$(date +%s%N)
        stop_daemon
        is "and stops on SIGTERM (in $((($(date +%s%N) - t0) / 1000000)) ms)" "$STOP_STATUS" "0"
done

# --- SIGHUP with the configuration replaced by a FIFO.
rm -rf $T/state && mkdir -m 0700 $T/state
: >"$T/atimed.log"
start_daemon
mv $T/atimed.conf $T/atimed.conf.real
mkfifo $T/atimed.conf
kill -HUP $DAEMON_PID
check "SIGHUP with a FIFO for a configuration: refused, logged" wait_until 10 grep -q "Failed to read configuration $T/atimed.conf: not a regular file" $T/atimed.log
t0=$(date +%s%N)
check "the daemon still answers" timeout 2 "$ATIMECTL" --socket $T/sock status
diag "status after the refused reload in $((($(date +%s%N) - t0) / 1000000)) ms"
stop_daemon
is "exit 0" "$STOP_STATUS" "0"
rm $T/atimed.conf && mv $T/atimed.conf.real $T/atimed.conf

# --- A state dir that is not ours.
rm -rf $T/state && mkdir -m 0700 $T/state && chown nobody $T/state
"$ATIMED" --config "$T/atimed.conf" --socket "$T/sock3" --state-dir "$T/state" 2>$T/third.log
is "a state dir owned by another user: refused (exit 1)" "$?" "1"
like "saying so" "$(cat $T/third.log)" "belongs to uid"
done_testing
