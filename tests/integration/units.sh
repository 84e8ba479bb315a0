#!/bin/bash
# units.sh: the generated systemd units pass systemd-analyze verify (with
# the man pages they cite) and their security exposure is reported.
. "$top_srcdir/tests/integration/lib.sh"
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed"
T=$(mktemp -d /tmp/atimed-test.XXXXXX) || bail mktemp
trap 'rm -rf "$T"' EXIT

mkdir -p "$T/units" "$T/man/man5" "$T/man/man8"
for u in atimed.service atimed.socket atimed-helper.service atimed-helper.socket; do
        [ -f "$top_builddir/systemd/$u" ] || bail "systemd/$u not generated"
        # Point ExecStart and ExecReload at the binaries just built: verify
        # checks they exist.
        sed -e "s|^ExecStart=.*/atimed-helper$|ExecStart=$top_builddir/atimed-helper|" \
                -e "s|^ExecStart=.*/atimed$|ExecStart=$top_builddir/atimed|" \
                -e "s|^ExecReload=.*/atimectl |ExecReload=$top_builddir/atimectl |" "$top_builddir/systemd/$u" >"$T/units/$u"
done
cp "$top_srcdir/man/atimed.8" "$top_srcdir/man/atimectl.8" "$top_srcdir/man/atimed-helper.8" "$T/man/man8/"
cp "$top_srcdir/man/atimed.conf.5" "$T/man/man5/"

MANPATH=$T/man systemd-analyze verify "$T/units/atimed.socket" "$T/units/atimed.service" "$T/units/atimed-helper.socket" \
        "$T/units/atimed-helper.service" >"$T/verify.out" 2>&1
is "systemd-analyze verify passes" "$?" "0"
is "and prints nothing" "$(grep -v '^$' "$T/verify.out")" ""

like "Type=notify with a watchdog" "$(cat $T/units/atimed.service)" "^WatchdogSec="
# Synchronous, and with nothing a minimal system lacks (no /bin/kill).
like "reload by atimectl reload" "$(cat $T/units/atimed.service)" "^ExecReload=$top_builddir/atimectl reload$"
like "the installed unit runs the installed atimectl" "$(cat $top_builddir/systemd/atimed.service)" \
        "^ExecReload=/[^ @]*/atimectl reload$"
like "the socket unit listens where the daemon would" "$(cat $T/units/atimed.socket)" \
        "^ListenStream=$("$ATIMED" --check-config --config /dev/null | sed -n 's/^socket = //p')$"

# atimed must see the host's mount options: nothing may give it a mount
# namespace of its own (PrivateNetwork= implies one since systemd 254 unless
# PrivateMounts=no).
ns=$(grep -E '^(ProtectSystem|ProtectHome|PrivateTmp|PrivateDevices|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|TemporaryFileSystem|BindPaths|BindReadOnlyPaths|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectProc|ProcSubset|RootDirectory|RootImage|MountAPIVFS)=' "$T/units/atimed.service")
is "no setting that creates a mount namespace" "$ns" ""
if grep -q '^PrivateNetwork=yes' "$T/units/atimed.service"; then
        like "PrivateNetwork= comes with PrivateMounts=no" "$(cat $T/units/atimed.service)" "^PrivateMounts=no$"
fi
like "the bounding set is exactly what the code needs" "$(grep ^CapabilityBoundingSet= $T/units/atimed.service)" \
        "^CapabilityBoundingSet=CAP_DAC_READ_SEARCH CAP_FOWNER CAP_DAC_OVERRIDE$"

# The helper: CAP_SYS_ADMIN and nothing else, its socket root's alone,
# and atimed.service asks it rather than holding the capability.
like "the helper's bounding set: CAP_SYS_ADMIN alone" "$(grep ^CapabilityBoundingSet= $T/units/atimed-helper.service)" \
        "^CapabilityBoundingSet=CAP_SYS_ADMIN$"
like "as a user of its own" "$(cat $T/units/atimed-helper.service)" "^DynamicUser=yes$"
like "its socket is root's alone" "$(cat $T/units/atimed-helper.socket)" "^SocketMode=0600$"
like "it listens where the daemon looks for it" "$(cat $T/units/atimed-helper.socket)" \
        "^ListenSequentialPacket=$("$ATIMED" --check-config --config /dev/null | sed -n 's/^helper_socket = //p')$"
like "atimed.service wants it" "$(cat $T/units/atimed.service)" "^Wants=atimed-helper.socket$"

if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
        for u in atimed.service atimed-helper.service; do
                systemd-analyze security --offline=true "$T/units/$u" >"$T/security.out" 2>&1
                score=$(sed -n "s/.*Overall exposure level for $u: \([0-9.]*\).*/\1/p" "$T/security.out")
                diag "systemd-analyze security exposure of $u: $score"
                check "$u: exposure is 3.0 or below" awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.0) }'
        done
fi
done_testing
