#!/bin/bash
# quickstart.sh: on a fresh Debian 12, install what atimed needs, build and
# install it, start the daemon on this host, and show `atimectl status`.
#
#   sudo ./quickstart.sh              everything
#   sudo ./quickstart.sh --deps-only  only the packages (build and test)
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DEPS=(build-essential autoconf automake libtool pkg-config
            libsystemd-dev libmount-dev libinih-dev libjson-c-dev)
# What the test suite drives for real: loop-mounted filesystems, systemd's
# own tools, jq to read JSON replies, bindfs for a FUSE mount to stop,
# Prometheus and node_exporter to scrape the metrics, valgrind for leaks,
# clang for the libFuzzer targets.
TEST_DEPS=(jq curl tmux e2fsprogs xfsprogs util-linux mount systemd bindfs fuse3 prometheus prometheus-node-exporter
        valgrind clang libclang-rt-dev)

if [ "$(id -u)" -ne 0 ]; then
        echo "quickstart.sh: run as root (sudo ./quickstart.sh): it installs packages and starts a service." >&2
        exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The tests run prometheus and node_exporter themselves, on loopback: keep
# the packages from starting (or enabling) services on this host.
had_policy=$(test -e /usr/sbin/policy-rc.d && echo yes || true)
[ -n "$had_policy" ] || { printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; }
apt-get install -y -qq --no-install-recommends "${BUILD_DEPS[@]}" "${TEST_DEPS[@]}" >/dev/null
status=$?
[ -n "$had_policy" ] || rm -f /usr/sbin/policy-rc.d
if [ -d /run/systemd/system ]; then
        systemctl disable --quiet prometheus.service prometheus-node-exporter.service 2>/dev/null || true
fi
[ $status -eq 0 ] || exit $status
[ "${1:-}" = "--deps-only" ] && exit 0

./autogen.sh >/dev/null 2>&1
mkdir -p build
cd build
../configure -q --prefix=/usr --sysconfdir=/etc --localstatedir=/var
make -s -j"$(nproc)"
make -s install >/dev/null

if [ -d /run/systemd/system ]; then
        systemctl daemon-reload
        systemctl enable --now atimed.socket atimed.service
        systemctl restart atimed.service
else
        # No systemd as PID 1 (a container, say): run it in the background.
        if [ -f /run/atimed.pid ]; then
                kill "$(cat /run/atimed.pid)" 2>/dev/null || true
                sleep 0.5
        fi
        nohup /usr/sbin/atimed >>/var/log/atimed.log 2>&1 &
        echo $! >/run/atimed.pid
        echo "atimed started without systemd (pid $!, log /var/log/atimed.log)."
fi

for _ in $(seq 50); do
        atimectl status >/dev/null 2>&1 && break
        sleep 0.1
done
atimectl status
