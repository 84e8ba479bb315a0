#!/bin/bash
# lifecycle.sh: sd_notify (READY, STATUS, RELOADING, WATCHDOG) read from a
# NOTIFY_SOCKET of our own, SIGHUP reloads good and broken, SIGTERM, socket
# activation through systemd-socket-activate, stale and live sockets.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace

M=$T/mnt
mkdir -p $M/a $M/b
mount -t tmpfs -o strictatime tmpfs $M/a && mount -t tmpfs -o noatime tmpfs $M/b || bail "mount"

# --- READY=1 only once the socket serves; STATUS=; the watchdog.
"$NOTIFY_RECV" "$T/notify" >>"$T/notify.out" &
DAEMON_PIDS="$DAEMON_PIDS $!"
wait_until 5 test -S "$T/notify" || bail "notify-recv"
write_config --bare "[mounts] exclude_paths = $M/b"
# exec keeps the pid, so WATCHDOG_PID names the daemon itself.
NOTIFY_SOCKET=$T/notify sh -c "WATCHDOG_PID=\$\$ WATCHDOG_USEC=400000 exec $ATIMED --config $T/atimed.conf --socket $T/sock --state-dir $T/state" 2>>"$T/atimed.log" &
DAEMON_PID=$!
DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
check "READY=1 arrives" wait_until 10 grep -qx READY=1 "$T/notify.out"
check "the socket answers as soon as READY=1 is sent" ctl status
like "STATUS= says what is tracked" "$(cat $T/notify.out)" "^STATUS=Tracking [0-9]+ mounts: [1-9][0-9]* strictatime"
sleep 1 # not a wait: a second of the daemon's life, in which the pings are counted
is "the watchdog is fed at least every WATCHDOG_USEC/2" "$( [ "$(grep -c '^WATCHDOG=1' $T/notify.out)" -ge 3 ] && echo yes)" "yes"
is "exclude_paths from the file applies" "$(mount_json $M/b)" ""

# --- SIGHUP with a good new config.
write_config --bare "[mounts] exclude_paths = $M/a"
: >"$T/notify.out"
kill -HUP $DAEMON_PID
check "reload: RELOADING=1 then READY=1" wait_until 5 sh -c "grep -n . $T/notify.out | grep -E ':(RELOADING|READY)=1' | tr '\n' ' ' | grep -Eq 'RELOADING=1 .*READY=1'"
check "reload: the new exclude_paths applies" wait_until 3 sh -c "[ -z \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/a\") | .target')\" ]"
is "reload: the mount excluded before is back" "$(mount_field $M/b atime)" "noatime"
like "reload: MONOTONIC_USEC sent with RELOADING=1" "$(cat $T/notify.out)" "^MONOTONIC_USEC=[0-9]+$"

# --- SIGHUP with a broken config: logged with file:line, old one kept.
write_config --bare "[mounts] exclude_paths = $M/b" '[mounts] rescan_delay = soon' '[nonsense]'
: >"$T/notify.out"
kill -HUP $DAEMON_PID
check "broken reload still ends with READY=1" wait_until 5 grep -qx READY=1 "$T/notify.out"
like "broken reload: the error names file:line and key" "$(cat $T/atimed.log)" "^<3>$T/atimed.conf:3: \[mounts\] rescan_delay: invalid value 'soon'"
like "broken reload: the unknown section too" "$(cat $T/atimed.log)" "^<3>$T/atimed.conf:4: unknown section \[nonsense\]"
like "broken reload: says the running config is kept" "$(cat $T/atimed.log)" "keeping the running one"
check "broken reload: still serving" ctl status
is "broken reload: the old config still applies" "$(mount_json $M/a)$(mount_field $M/b atime)" "noatime"

# --- A second daemon on a live socket refuses and leaves the first alone.
"$ATIMED" --socket "$T/sock" --state-dir "$T/state" 2>"$T/second.log"
is "a second atimed on the same socket exits 1" "$?" "1"
like "and says why" "$(cat $T/second.log)" "Another atimed is serving $T/sock"
check "the first still serves" ctl status

# --- SIGTERM: orderly, exit 0, socket removed.
stop_daemon
is "SIGTERM: exit status 0" "$STOP_STATUS" "0"
like "SIGTERM: STOPPING=1 sent" "$(cat $T/notify.out)" "^STOPPING=1$"
check "SIGTERM: the socket is removed" test ! -e "$T/sock"
rm -f "$T/atimed.conf"

# --- SIGINT is as orderly.
start_daemon
kill -INT $DAEMON_PID
wait $DAEMON_PID
is "SIGINT: exit status 0" "$?" "0"

# --- A stale socket (its daemon killed) is replaced.
start_daemon
kill -KILL $DAEMON_PID
wait $DAEMON_PID 2>/dev/null
check "kill -9 leaves the socket behind" test -S "$T/sock"
start_daemon
check "a new daemon replaces the stale socket" ctl status
stop_daemon

# --- Something that is not a socket is never removed.
echo precious >"$T/sock"
"$ATIMED" --socket "$T/sock" --state-dir "$T/state" 2>"$T/notsock.log"
is "a file in the socket's place: exit 1" "$?" "1"
is "and the file is untouched" "$(cat $T/sock)" "precious"
rm -f "$T/sock"

# --- The directory of the socket is created.
"$ATIMED" --socket "$T/run/deep/sock" --state-dir "$T/state" 2>>"$T/atimed.log" &
DAEMON_PID=$!
DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
check "missing socket directories are created" wait_until 5 "$ATIMECTL" --socket "$T/run/deep/sock" status
is "the socket is mode 0666 by default" "$(stat -c %a $T/run/deep/sock)" "666"
stop_daemon

# --- Socket activation: the daemon serves the socket it is given.
if command -v systemd-socket-activate >/dev/null; then
        systemd-socket-activate -l "$T/act.sock" "$ATIMED" --socket "$T/unused.sock" --state-dir "$T/state" \
                2>>"$T/act.log" &
        ACT_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $ACT_PID"
        check "socket activation: served on the passed socket" wait_until 10 "$ATIMECTL" --socket "$T/act.sock" status
        like "socket activation: logged" "$(cat $T/act.log)" "Serving on the socket passed by the service manager"
        check "socket activation: --socket path not bound" test ! -e "$T/unused.sock"
        kill -TERM $ACT_PID
        wait $ACT_PID
        is "socket activation: exit 0" "$?" "0"
else
        diag "systemd-socket-activate not installed"
        tap_result 1 "systemd-socket-activate is available"
fi

# --- LISTEN_FDS that are not a listening Unix stream socket are refused.
LISTEN_PID=0 sh -c "LISTEN_PID=\$\$ LISTEN_FDS=1 exec $ATIMED --socket $T/x.sock --state-dir $T/state 3</dev/null" 2>"$T/badfd.log"
is "a bogus passed fd: exit 1" "$?" "1"
like "and a clear message" "$(cat $T/badfd.log)" "Invalid socket passed by the service manager"

done_testing
