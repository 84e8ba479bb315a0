#!/bin/bash
# quickstart.sh: install atimed on this Debian 12 host the way a fleet
# would: build the Debian package from this checkout and install it with
# apt-get, which enables and starts atimed.socket and atimed.service under
# systemd. Then show `atimectl status`.
#
#   sudo ./quickstart.sh              build and install the package, start atimed
#   sudo ./quickstart.sh --deps-only  only install what building and testing need
#                                     (what .ci/run and tests/run.sh use)
#
# Without --deps-only it installs only what building and running atimed
# needs; the test tools (Prometheus, valgrind, clang, ...) come with
# --deps-only. It never enables, disables, starts or stops any service but
# atimed's own, and leaves no /usr/sbin/policy-rc.d behind.
set -euo pipefail
cd "$(dirname "$0")"

# What building the package needs (debian/control's Build-Depends, and
# dpkg-buildpackage itself).
BUILD_DEPS=(build-essential autoconf automake libtool pkg-config debhelper dpkg-dev fakeroot
            libsystemd-dev libmount-dev libblkid-dev libinih-dev libjson-c-dev libbtrfsutil-dev)
# What the test suite drives for real: loop-mounted filesystems, systemd's
# own tools, jq to read JSON replies, bindfs for a FUSE mount to stop,
# Prometheus and node_exporter to scrape the metrics, valgrind for leaks,
# clang for the libFuzzer targets, git and lintian for the package test,
# tmux for the terminal test, varlink-go to parse the served Varlink
# interfaces, apache2 and ab for the seed's own busy-host experiment,
# debootstrap and systemd-container (systemd-nspawn) for the suite under a
# real systemd, and Ansible (ansible-core, ansible for community.general,
# ansible-lint, yamllint) with an ssh client to run contrib/ansible's roles
# against that container (its sshd is the container's, not this host's).
TEST_DEPS=(jq curl python3 iproute2 tmux varlink-go e2fsprogs xfsprogs btrfs-progs util-linux mount systemd bindfs fuse3 prometheus
        prometheus-node-exporter valgrind clang libclang-rt-dev git lintian apache2 apache2-utils debootstrap
        systemd-container ansible-core ansible ansible-lint yamllint openssh-client)

if [ "$(id -u)" -ne 0 ]; then
        echo "quickstart.sh: run as root (sudo ./quickstart.sh): it installs packages and starts a service." >&2
        exit 1
fi

export DEBIAN_FRONTEND=noninteractive
APT=(apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600)

# The packages the tests install (prometheus, node_exporter) must not start
# services on this host: a policy-rc.d denies it while they install. It is
# removed on every way out, and only if this script made it.
made_policy=""
remove_policy() {
        if [ -n "$made_policy" ]; then
                rm -f /usr/sbin/policy-rc.d
                made_policy=""
        fi
}
trap remove_policy EXIT
trap 'exit 130' INT TERM HUP

if [ "${1:-}" = "--deps-only" ]; then
        apt-get update -qq
        if [ ! -e /usr/sbin/policy-rc.d ]; then
                made_policy=1
                printf '#!/bin/sh\n# quickstart.sh --deps-only: no service starts while test tools install.\nexit 101\n' \
                        >/usr/sbin/policy-rc.d
                chmod 755 /usr/sbin/policy-rc.d
        fi
        "${APT[@]}" "${BUILD_DEPS[@]}" "${TEST_DEPS[@]}" >/dev/null
        exit 0
fi

apt-get update -qq
"${APT[@]}" "${BUILD_DEPS[@]}" >/dev/null

# Build in a scratch copy of this checkout (with any local changes, without
# build directories): dpkg-buildpackage writes next to the source tree.
work=$(mktemp -d /var/tmp/atimed-quickstart.XXXXXX)
trap 'remove_policy; rm -rf "$work"' EXIT
mkdir "$work/atimed"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
        git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c 'for f; do if [ -e "$f" ] || [ -L "$f" ]; then printf "%s\0" "$f"; fi; done' sh |
                tar --null -T - -cf - | tar -C "$work/atimed" -xf -
else
        tar --exclude='./build' --exclude='./build-test' --exclude='./build-release' --exclude='./build-fuzz' \
                -cf - . | tar -C "$work/atimed" -xf -
fi
echo "Building the Debian package (dpkg-buildpackage; the log is build/deb/build.log)..."
mkdir -p build/deb
if ! (cd "$work/atimed" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
        >build/deb/build.log 2>&1; then
        tail -20 build/deb/build.log >&2
        exit 1
fi
rm -f build/deb/atimed_*.deb
cp "$work"/atimed_*.deb build/deb/
deb=$(ls build/deb/atimed_*.deb)
echo "Built $deb; installing it."

# An existing /etc/atimed/atimed.conf (edited, or from make install) is kept.
"${APT[@]}" -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "./$deb" >/dev/null

if [ -d /run/systemd/system ]; then
        # The package enabled and started both units, unless this host's
        # policy-rc.d says no: start them (atimed's own, nothing else).
        systemctl start atimed.socket atimed.service
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
