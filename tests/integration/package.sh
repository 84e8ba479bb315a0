#!/bin/bash
# package.sh: the Debian package, as a fleet gets it. Builds it with
# dpkg-buildpackage from a clean git clone of the tree under test (its
# HEAD), checks it with lintian, installs it with apt-get (dependencies
# resolved), runs the installed daemon and client, then removes and purges
# it and checks that nothing is left. tests/run.sh runs it after make check
# (it is not in TESTS: it builds the whole package, and installs it).
#
# It never touches a host that has atimed already: a host with the package
# installed, or with /usr/sbin/atimed, /etc/atimed or /var/lib/atimed from
# elsewhere, only gets the build and lintian checks.
. "$top_srcdir/tests/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (installs the package)"
for tool in git dpkg-buildpackage dh lintian fakeroot apt-get; do
        command -v $tool >/dev/null || skip_all "$tool not installed (tests/run.sh's dependencies: quickstart.sh --deps-only)"
done
src=$(cd "$top_srcdir" && pwd -P)
[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] ||
        skip_all "$src is not a git checkout (a release tarball, or distcheck): there is nothing to clone"

enter_namespace
# The build on disk, not on the test's tmpfs: a package build is large.
B=$(mktemp -d /var/tmp/atimed-package.XXXXXX) || bail mktemp
made_policy=""
pkg_cleanup() {
        [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d
        rm -rf "$B"
        cleanup
}
trap pkg_cleanup EXIT

# --- Build from a clean clone, as CI and a fleet's build host would.
. "$top_srcdir/tests/integration/deb.sh"
diag "building $(git -C "$src" log -1 --format='%h %s' HEAD)"
start=$(date +%s)
build_deb "$src" "$(git -C "$src" rev-parse HEAD)" "$B"
status=$?
diag "dpkg-buildpackage took $(($(date +%s) - start)) s"
is "git clone and dpkg-buildpackage -us -uc -b succeed, the unit tests on" "$status" "0"
[ "$status" -eq 0 ] || { grep -E '^(not ok|# +failed|FAIL:|ERROR:)' "$B/build.log" | head -20 | sed 's/^/#   /'; tail -30 "$B/build.log" | sed 's/^/#   /'; bail "no package"; }
# dh_auto_test ran them: a build that skipped them (nocheck) proves nothing.
like "dh_auto_test ran the unit tests in the build" "$(grep -E '^# (PASS|FAIL): ' "$B/build.log" | tr '\n' ' ')" "^# PASS: +[1-9][0-9]* # FAIL: +0 "
deb=$(ls "$B"/atimed_*.deb)
[ -f "$deb" ] || bail "no atimed_*.deb built"
keep_deb "$(git -C "$src" rev-parse HEAD)" "$B" || diag "could not keep the package in $(deb_cache)"

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libinih1 libjson-c5 libmount1 libsystemd0; do
        like "Depends names $lib (from shlibs)" "$depends" "(^|, )$lib( |,|$)"
done
is "/etc/atimed/atimed.conf is a conffile" "$(dpkg-deb -I "$deb" conffiles)" "/etc/atimed/atimed.conf"
postinst=$(dpkg-deb -I "$deb" postinst)
like "postinst enables atimed.socket" "$postinst" "deb-systemd-helper enable 'atimed.socket'"
like "postinst enables atimed.service" "$postinst" "deb-systemd-helper enable 'atimed.service'"
like "postrm purges /var/lib/atimed" "$(dpkg-deb -I "$deb" postrm)" "rm -rf /var/lib/atimed"

lintian "$deb" >"$B/lintian.out" 2>&1
is "lintian: no errors or warnings" "$(grep -E '^(E|W): ' "$B/lintian.out")" ""

# --- Install, run, remove, purge: only where that disturbs nothing.
reason=""
if dpkg-query -W -f='${Status}' atimed 2>/dev/null | grep -q 'installed\|config-files'; then
        reason="the atimed package is installed on this host"
elif [ -e /usr/sbin/atimed ] || [ -e /usr/bin/atimectl ]; then
        reason="/usr/sbin/atimed or /usr/bin/atimectl exists (make install, quickstart.sh)"
elif [ -e /etc/atimed ] || [ -e /var/lib/atimed ]; then
        reason="/etc/atimed or /var/lib/atimed exists (this host's atimed configuration or history)"
fi
if [ -n "$reason" ]; then
        diag "not installing the package: $reason"
        echo "ok $((TAP_N + 1)) # SKIP install, run, remove, purge: $reason"
        TAP_N=$((TAP_N + 1))
        done_testing
        exit
fi

# The package starts its units where systemd runs: not during a test.
if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
fi
APT=(apt-get -y -q -o DPkg::Lock::Timeout=600)
DEBIAN_FRONTEND=noninteractive "${APT[@]}" install "$deb" >"$B/install.log" 2>&1
status=$?
is "apt-get install ./atimed_*.deb succeeds" "$status" "0"
[ "$status" -eq 0 ] || { tail -20 "$B/install.log" | sed 's/^/#   /'; bail "not installed"; }
is "the package is installed" "$(dpkg-query -W -f='${Status}' atimed)" "install ok installed"
dpkg -L atimed >"$B/files"
diag "dpkg -L atimed: $(wc -l <"$B/files") paths, $(while read -r f; do [ -d "$f" ] || echo "$f"; done <"$B/files" | wc -l) files"
for f in /usr/sbin/atimed /usr/bin/atimectl /lib/systemd/system/atimed.service /lib/systemd/system/atimed.socket \
        /etc/atimed/atimed.conf /usr/share/man/man8/atimed.8.gz /usr/share/man/man8/atimectl.8.gz \
        /usr/share/man/man5/atimed.conf.5.gz /usr/share/man/man8/atimed-helper.8.gz /usr/share/doc/atimed/copyright \
        /usr/share/doc/atimed/examples/atimed.rules.yml /usr/share/doc/atimed/examples/atimed.json; do
        check "dpkg -L lists $f and it is there" sh -c "grep -qx '$f' '$B/files' && test -e '$f'"
done
check "the units are enabled" test -L /etc/systemd/system/sockets.target.wants/atimed.socket -a \
        -L /etc/systemd/system/multi-user.target.wants/atimed.service
like "the unit runs the installed daemon" "$(cat /lib/systemd/system/atimed.service)" "^ExecStart=/usr/sbin/atimed$"
check "the installed daemon accepts the installed configuration" /usr/sbin/atimed --check-config
if command -v systemd-analyze >/dev/null; then
        systemd-analyze verify /lib/systemd/system/atimed.socket /lib/systemd/system/atimed.service >"$B/verify.out" 2>&1
        is "systemd-analyze verify accepts the installed units" "$?: $(grep -v '^$' "$B/verify.out")" "0: "
fi

# PID 1 is not systemd here: the installed daemon, started by hand, with
# its default state dir (what purge must remove) and a socket of the test.
mkdir -p "$T/mnt/t" && mount -t tmpfs -o strictatime tmpfs "$T/mnt/t" || bail mount
write_config --bare "[mounts] exclude_paths = [/] [/]${T#/}" '[sampler] interval = 1s'
ATIMED=/usr/sbin/atimed
ATIMECTL=/usr/bin/atimectl
"$ATIMED" --config "$T/atimed.conf" --socket "$T/sock" 2>>"$T/atimed.log" &
DAEMON_PID=$!
DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
check "the installed daemon answers the installed client" wait_until 20 ctl status
like "atimectl status shows the test's mount" "$(ctl status --full)" "^$T/mnt/t +tmpfs .*strictatime"
check "atimectl metrics passes promtool" sh -c "$ATIMECTL --socket $T/sock metrics | promtool check metrics"
check "the daemon keeps its state in /var/lib/atimed" test -d /var/lib/atimed
stop_daemon
is "and stops cleanly" "$STOP_STATUS" "0"

DEBIAN_FRONTEND=noninteractive "${APT[@]}" remove atimed >"$B/remove.log" 2>&1
is "apt-get remove succeeds" "$?" "0"
is "remove keeps the configuration" "$(dpkg-query -W -f='${Status}' atimed)" "deinstall ok config-files"
check "and the conffile" test -f /etc/atimed/atimed.conf
check "the programs are gone" test ! -e /usr/sbin/atimed -a ! -e /usr/bin/atimectl

DEBIAN_FRONTEND=noninteractive "${APT[@]}" purge atimed >"$B/purge.log" 2>&1
is "apt-get purge succeeds" "$?" "0"
check "dpkg knows the package no more" sh -c "! dpkg-query -W -f='\${Status}' atimed 2>/dev/null | grep -q ok"
left=$(while read -r f; do
        # Directories other packages share (/usr/sbin, /lib/systemd/system) stay.
        if [ -d "$f" ]; then case $f in */atimed) [ -e "$f" ] && echo "$f" ;; esac; elif [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
done <"$B/files")
is "nothing dpkg -L listed is left" "$left" ""
check "/etc/atimed is gone" test ! -e /etc/atimed
check "/var/lib/atimed is gone" test ! -e /var/lib/atimed
is "no unit symlinks left" "$(find /etc/systemd/system -name 'atimed.*' 2>/dev/null)" ""
done_testing
