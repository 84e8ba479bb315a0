#!/bin/bash
# sandbox.sh: the daemon as the shipped unit runs it, as far as can be done
# without systemd as PID 1. Under the unit's CapabilityBoundingSet= and
# UMask= (setpriv), it starts without a warning, keeps exactly those
# capabilities and serves. Under socket activation (systemd-socket-activate)
# it says that the configuration's socket_mode and socket_group are not
# applied, and where to set them instead.
. "$top_srcdir/tests/integration/lib.sh"
command -v setpriv >/dev/null || skip_all "setpriv not installed"
enter_namespace
UNIT=$top_builddir/systemd/atimed.service
[ -f "$UNIT" ] || bail "systemd/atimed.service not generated"

caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
umask_unit=$(sed -n 's/^UMask=//p' "$UNIT")
[ -n "$caps" ] && [ -n "$umask_unit" ] || bail "the unit has no CapabilityBoundingSet= or UMask="
# CAP_DAC_READ_SEARCH CAP_FOWNER -> +dac_read_search,+fowner
setpriv_caps=$(for c in $caps; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done)
# The mask the kernel shows in /proc/PID/status for exactly those.
expected_mask=$(for c in $caps; do echo "$c"; done | while read -r c; do
        case $c in
        CAP_DAC_OVERRIDE) echo 1 ;; CAP_DAC_READ_SEARCH) echo 2 ;; CAP_FOWNER) echo 3 ;;
        *) echo "unknown $c" ;;
        esac
done | awk '/unknown/ { print "x"; exit } { m += 2 ^ $1 } END { if (NR) printf "%016x\n", m }')
[ "$expected_mask" != x ] || bail "the unit names a capability this test does not know: $caps"
diag "unit: CapabilityBoundingSet=$caps UMask=$umask_unit"

mkdir -p $T/mnt/t && mount -t tmpfs -o strictatime tmpfs $T/mnt/t || bail mount
write_config '[sampler] walk_rate'

# --- The unit's capability set and umask.
(
        umask "$umask_unit"
        exec setpriv --bounding-set=-all"$setpriv_caps" --inh-caps=-all "$ATIMED" --config "$T/atimed.conf" \
                --socket "$T/sock" --state-dir "$T/unit-state"
) 2>"$T/atimed.log" &
DAEMON_PID=$!
DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
check "under the unit's bounding set the daemon serves" wait_until 20 ctl status
like "and measures the test's mount" "$(ctl status --full)" "^$T/mnt/t "
check "the probe works with the capabilities kept" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock --json status $T/mnt/t | jq -e '.mounts[0].probe.verified == true'"
is "no warning about dropping capabilities" "$(grep -i 'capabilit' "$T/atimed.log")" ""
is "no warning at all at start" "$(grep '^<[0-4]>' "$T/atimed.log")" ""
status=$(cat /proc/$DAEMON_PID/status)
is "effective capabilities: exactly the unit's" "$(echo "$status" | sed -n 's/^CapEff:\t//p')" "$expected_mask"
is "permitted: the same" "$(echo "$status" | sed -n 's/^CapPrm:\t//p')" "$expected_mask"
is "bounding set: the same" "$(echo "$status" | sed -n 's/^CapBnd:\t//p')" "$expected_mask"
is "no_new_privs set" "$(echo "$status" | sed -n 's/^NoNewPrivs:\t//p')" "1"
is "the state dir it made is private" "$(stat -c %a "$T/unit-state")" "700"
stop_daemon
is "it stops cleanly" "$STOP_STATUS" "0"

# --- Started as root with every capability (make install, no unit): the
# daemon drops to the same set itself.
: >"$T/atimed.log"
start_daemon
status=$(cat /proc/$DAEMON_PID/status)
is "from a full set it drops to the unit's: effective" "$(echo "$status" | sed -n 's/^CapEff:\t//p')" "$expected_mask"
is "and bounding set" "$(echo "$status" | sed -n 's/^CapBnd:\t//p')" "$expected_mask"
is "without a warning" "$(grep -i 'capabilit' "$T/atimed.log")" ""
stop_daemon

# --- Socket activation: the service manager's socket, not the config's.
if ! command -v systemd-socket-activate >/dev/null; then
        diag "systemd-socket-activate not installed"
        tap_result 1 "systemd-socket-activate is installed"
        done_testing
        exit
fi
# socket_activated CONFIG: atimed on $T/act.sock from systemd-socket-activate,
# the socket made 0666 as the shipped SocketMode= says; the log in $T/act.log.
socket_activated() {
        rm -f "$T/act.sock"
        : >"$T/act.log"
        systemd-socket-activate -l "$T/act.sock" "$ATIMED" --config "$1" --state-dir "$T/state" 2>"$T/act.log" &
        DAEMON_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
        # The daemon is started on the first connection, after the chmod.
        wait_until 10 test -S "$T/act.sock" && chmod 0666 "$T/act.sock" &&
                wait_until 20 "$ATIMECTL" --socket "$T/act.sock" status
}
config '[sampler] interval' '[sampler] walk_rate' "[control] socket = $T/act.sock" \
        '[control] socket_mode = 0660' '[control] socket_group = adm' >"$T/group.conf"
check "socket activated, it serves" socket_activated "$T/group.conf"
like "it says socket_mode and socket_group are not applied, and where to set them" "$(cat "$T/act.log")" \
        "^<5>The service manager passed the socket $T/act.sock \\(mode 0666, group 0\\): .*socket_mode = 0660 and socket_group = adm are not applied under socket activation. Set SocketMode=, SocketGroup="
is "the socket keeps the service manager's mode" "$(stat -c %a "$T/act.sock")" "666"
stop_daemon

sed -e '/^socket_mode/d' -e '/^socket_group/d' "$T/group.conf" >"$T/plain.conf"
check "socket activated with the socket keys at their defaults" socket_activated "$T/plain.conf"
is "nothing to say then" "$(grep -c 'not applied under socket activation' "$T/act.log")" "0"
stop_daemon
done_testing
