#!/bin/bash
# units.sh: the generated systemd units pass systemd-analyze verify (with
# the man pages they cite) and their security exposure is reported.
. "$top_srcdir/tests/integration/lib.sh"
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed"
T=$(mktemp -d /tmp/atimed-test.XXXXXX) || bail mktemp
trap 'rm -rf "$T"' EXIT

mkdir -p "$T/units" "$T/man/man5" "$T/man/man8"
for u in atimed.service atimed.socket; do
        [ -f "$top_builddir/systemd/$u" ] || bail "systemd/$u not generated"
        # Point ExecStart at the binary just built: verify checks it exists.
        sed "s|^ExecStart=.*/atimed|ExecStart=$top_builddir/atimed|" "$top_builddir/systemd/$u" >"$T/units/$u"
done
cp "$top_srcdir/man/atimed.8" "$top_srcdir/man/atimectl.8" "$T/man/man8/"
cp "$top_srcdir/man/atimed.conf.5" "$T/man/man5/"

MANPATH=$T/man systemd-analyze verify "$T/units/atimed.socket" "$T/units/atimed.service" >"$T/verify.out" 2>&1
is "systemd-analyze verify passes" "$?" "0"
is "and prints nothing" "$(grep -v '^$' "$T/verify.out")" ""

like "Type=notify with a watchdog" "$(cat $T/units/atimed.service)" "^WatchdogSec="
like "reload by SIGHUP" "$(cat $T/units/atimed.service)" '^ExecReload=/bin/kill -HUP \$MAINPID$'
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

if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
        systemd-analyze security --offline=true "$T/units/atimed.service" >"$T/security.out" 2>&1
        score=$(sed -n 's/.*Overall exposure level for atimed.service: \([0-9.]*\).*/\1/p' "$T/security.out")
        diag "systemd-analyze security exposure: $score"
        check "exposure is 3.0 or below" awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.0) }'
fi
done_testing
