#!/bin/bash
# quickstart.sh (the test): quickstart.sh is safe on a production host. It
# installs test tools only with --deps-only, and then under a policy-rc.d
# that it removes on every way out (and only if it made it); it never
# touches a service but atimed's own. apt-get is replaced by a recorder,
# and /usr/sbin by a tmpfs of this test's mount namespace: the host's
# packages and policy-rc.d are not touched.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
QS=$top_srcdir/quickstart.sh
mkdir -p "$T/bin" "$T/sbin"
mount -t tmpfs tmpfs /usr/sbin || bail "cannot mount a tmpfs on /usr/sbin in the test's namespace"
cat >"$T/bin/apt-get" <<EOF
#!/bin/sh
# Records each call; on install, whether a policy-rc.d denied services then.
echo "apt-get \$*" >>"$T/apt.calls"
case " \$* " in
*" install "*)
        if [ -e /usr/sbin/policy-rc.d ]; then echo "policy-rc.d: \$(/usr/sbin/policy-rc.d; echo \$?)" >>"$T/apt.calls"; fi
        exit \${FAKE_APT_STATUS:-0} ;;
esac
exit 0
EOF
chmod +x "$T/bin/apt-get"
qs() { : >"$T/apt.calls"; PATH=$T/bin:$PATH bash "$QS" "$@" >"$T/qs.out" 2>&1; }

FAKE_APT_STATUS=100 qs --deps-only
isnt_zero=$?
check "--deps-only: a failed apt-get install fails quickstart" test "$isnt_zero" -ne 0
like "the test tools were installed under a policy-rc.d that denies starting services" "$(cat "$T/apt.calls")" "^policy-rc.d: 101$"
like "the test tools are asked for with --deps-only" "$(grep ' install ' "$T/apt.calls")" " prometheus-node-exporter( |$)"
like "Ansible and its linters too (the roles' test)" "$(grep ' install ' "$T/apt.calls")" " ansible-core ansible ansible-lint yamllint openssh-client( |$)"
check "and after the failure no policy-rc.d is left" test ! -e /usr/sbin/policy-rc.d

FAKE_APT_STATUS=0 qs --deps-only
is "--deps-only succeeds when apt-get does" "$?" "0"
check "and leaves no policy-rc.d either" test ! -e /usr/sbin/policy-rc.d

printf '#!/bin/sh\n# the host own\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
cp /usr/sbin/policy-rc.d "$T/host-policy"
FAKE_APT_STATUS=100 qs --deps-only
check "a policy-rc.d the host had is kept as it was" cmp /usr/sbin/policy-rc.d "$T/host-policy"
rm -f /usr/sbin/policy-rc.d

# The plain quick start (stopped here by a failing install, before it builds).
FAKE_APT_STATUS=100 qs
check "quickstart: a failed apt-get install fails it" test $? -ne 0
calls=$(grep ' install ' "$T/apt.calls")
like "it installs the build dependencies" "$calls" " debhelper( |$)"
is "and no test tool" "$(echo "$calls" | grep -oE ' (prometheus|prometheus-node-exporter|valgrind|clang|lintian|bindfs|ansible-core|ansible|ansible-lint|yamllint)( |$)')" ""
is "it made no policy-rc.d" "$(grep -c '^policy-rc.d' "$T/apt.calls")" "0"
check "and left none" test ! -e /usr/sbin/policy-rc.d

# Services: only atimed's own, ever.
is "every systemctl call in quickstart.sh names atimed's units only" \
        "$(grep -o 'systemctl [^;|&)]*' "$QS" | grep -vE '^systemctl (daemon-reload|(start|restart|enable( --now)?|status) (atimed\.(socket|service) ?)+) *$')" ""
done_testing
