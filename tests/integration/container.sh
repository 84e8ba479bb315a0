# container.sh: sourced by the tests that boot a Debian 12 root under
# systemd-nspawn (nspawn.sh, ansible.sh), after lib.sh and deb.sh. The root
# made by debootstrap, and roots made from it with more packages, are kept
# in CACHE (build/systemd/ of the checkout, or ATIMED_SYSTEMD_CACHE); each
# run boots a fresh copy of one at ROOT, as MACHINE, with its console in T.
#
# The caller calls container_preflight (which sets CACHE), sets T, ROOT and
# MACHINE, and calls container_cleanup on exit (nspawn_cleanup in the
# callers' traps).

# container_preflight TOOL...: the test is skipped unless it runs as root
# with every TOOL, from a git checkout (the package is built from it). Sets
# src (the checkout), SUITE_START and CACHE.
container_preflight() {
        local tool
        [ "$(id -u)" -eq 0 ] || skip_all "needs root (boots a container)"
        for tool in "$@"; do
                command -v "$tool" >/dev/null ||
                        skip_all "$tool not installed (tests/run.sh's dependencies: quickstart.sh --deps-only)"
        done
        src=$(cd "$top_srcdir" && pwd -P)
        [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] ||
                skip_all "$src is not a git checkout (a release tarball, or distcheck): no package to build"
        SUITE_START=$(date +%s)
        CACHE=${ATIMED_SYSTEMD_CACHE:-$src/build/systemd}
}

NSPAWN_PID=""
LEADER=""
BOOTS=0
# More systemd-nspawn options for every boot (a --bind=, say).
NSPAWN_EXTRA=()
# Run on exit after the container is gone (a test's own host mounts).
CONTAINER_CLEANUP_MORE=""

# The packages of the base root: the package's libraries come in with it,
# so that installing it needs no network.
BASE_INCLUDE=systemd,systemd-sysv,dbus,libinih1,libjson-c5,libbtrfsutil1

# base_root: sets BASE_ROOT to the path of the Debian 12 root, made by
# debootstrap the first time (skips the test where the archive cannot be
# reached). Not to be run in a subshell: skip_all and bail end the test.
base_root() {
        local base=$CACHE/bookworm start
        if [ "$(cat "$base.stamp" 2>/dev/null)" != "$BASE_INCLUDE" ]; then
                rm -rf "$base" "$base.tmp" "$base.stamp"
                diag "debootstrap of Debian 12 into $base (once; kept for the next runs)"
                start=$(date +%s)
                if ! debootstrap --variant=minbase --include=$BASE_INCLUDE bookworm "$base.tmp" >"$CACHE/debootstrap.log" 2>&1; then
                        why=$(grep -E '^E: ' "$CACHE/debootstrap.log" | tail -1)
                        rm -rf "$base.tmp"
                        if grep -Eqi 'release file|resolv|connect|unreachable|timed out|network' "$CACHE/debootstrap.log"; then
                                skip_all "debootstrap cannot reach Debian's archive: ${why:-see $CACHE/debootstrap.log}"
                        fi
                        bail "debootstrap failed: ${why:-see $CACHE/debootstrap.log}"
                fi
                apt-get clean -o RootDir="$base.tmp" >/dev/null 2>&1 || rm -f "$base.tmp"/var/cache/apt/archives/*.deb
                mv "$base.tmp" "$base" && echo "$BASE_INCLUDE" >"$base.stamp" || bail "cannot keep $base"
                diag "debootstrap took $(($(date +%s) - start)) s"
        fi
        BASE_ROOT=$base
}

# layered_root NAME PACKAGE...: sets LAYERED_ROOT to the path of a root
# made from the base root with PACKAGES installed by its own apt-get (the
# first time; kept as CACHE/NAME, remade when the list or the base
# changes). Services the packages bring are enabled, not started: the root
# is not booted. Not to be run in a subshell, as base_root.
layered_root() {
        local name=$1 base dir stamp
        shift
        base_root
        base=$BASE_ROOT
        dir=$CACHE/$name
        stamp="$BASE_INCLUDE + $*"
        if [ "$(cat "$dir.stamp" 2>/dev/null)" != "$stamp" ] || [ "$base.stamp" -nt "$dir.stamp" ]; then
                rm -rf "$dir" "$dir.tmp" "$dir.stamp"
                diag "installing $* into a copy of $base as $dir (once; kept for the next runs)"
                cp -a "$base" "$dir.tmp" || bail "cannot copy $base"
                printf '#!/bin/sh\nexit 101\n' >"$dir.tmp/usr/sbin/policy-rc.d" && chmod 755 "$dir.tmp/usr/sbin/policy-rc.d"
                if ! systemd-nspawn -q -D "$dir.tmp" --register=no --keep-unit --pipe sh -c \
                        "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $* && apt-get clean" \
                        </dev/null >"$CACHE/$name.log" 2>&1; then
                        rm -rf "$dir.tmp"
                        if grep -Eqi 'temporary failure|could not resolve|unreachable|timed out' "$CACHE/$name.log"; then
                                skip_all "the container cannot reach Debian's archive: see $CACHE/$name.log"
                        fi
                        bail "installing $* failed: $(grep -E '^E: ' "$CACHE/$name.log" | tail -1)"
                fi
                rm -f "$dir.tmp/usr/sbin/policy-rc.d"
                mv "$dir.tmp" "$dir" && echo "$stamp" >"$dir.stamp" || bail "cannot keep $dir"
        fi
        LAYERED_ROOT=$dir
}

# fresh_root FROM: ROOT becomes a copy of FROM.
fresh_root() {
        rm -rf "$ROOT"
        cp -a "$1" "$ROOT" || bail "cannot copy $1"
}

# poweroff: SIGRTMIN+3 to the container's systemd; nspawn exits after it.
poweroff() {
        local i
        [ -n "$NSPAWN_PID" ] || return 0
        [ -z "$LEADER" ] || kill -RTMIN+3 "$LEADER" 2>/dev/null
        for ((i = 0; i < 600; i++)); do
                kill -0 "$NSPAWN_PID" 2>/dev/null || break
                sleep 0.1
        done
        kill -KILL "$NSPAWN_PID" 2>/dev/null
        wait "$NSPAWN_PID" 2>/dev/null
        NSPAWN_PID=""
        LEADER=""
}

# container_cleanup: powers the container off, removes T and ROOT
# (KEEP_TEST_DIR keeps a copy of T and leaves ROOT).
container_cleanup() {
        poweroff
        [ -z "$CONTAINER_CLEANUP_MORE" ] || eval "$CONTAINER_CLEANUP_MORE"
        [ -z "${KEEP_TEST_DIR:-}" ] || cp -r "$T" "$KEEP_TEST_DIR" 2>/dev/null
        rm -rf "$T"
        [ -n "${KEEP_TEST_DIR:-}" ] || rm -rf "$ROOT"
}

# C CMD...: runs CMD in the container (all its namespaces, its root).
C() { nsenter -t "$LEADER" -a "$@"; }
Csh() { nsenter -t "$LEADER" -a sh -c "$1"; }

# boot: boots ROOT; returns once its systemd is running (or degraded).
boot() {
        local i c state=""
        BOOTS=$((BOOTS + 1))
        systemd-nspawn -D "$ROOT" --boot --register=no --keep-unit --machine="$MACHINE" "${NSPAWN_EXTRA[@]}" \
                </dev/null >"$T/console.$BOOTS" 2>&1 &
        NSPAWN_PID=$!
        # The leader: nspawn's child that is PID 1 of its own namespace.
        for ((i = 0; i < 300; i++)); do
                [ -z "$LEADER" ] || break
                kill -0 "$NSPAWN_PID" 2>/dev/null || break
                for c in $(pgrep -P "$NSPAWN_PID"); do
                        grep -Eq '^NSpid:.*[[:space:]]1$' "/proc/$c/status" 2>/dev/null && LEADER=$c
                done
                [ -n "$LEADER" ] || sleep 0.1
        done
        [ -n "$LEADER" ] || return 1
        # Until its /run/systemd and its bus are up, systemctl cannot even
        # ask (--wait neither).
        for ((i = 0; i < 1200; i++)); do
                state=$(nsenter -t "$LEADER" -a systemctl is-system-running 2>&1)
                case $state in
                running | degraded) return 0 ;;
                initializing | starting | offline | unknown | *"connect to bus"* | *"not been booted"*) sleep 0.1 ;;
                *) break ;;
                esac
        done
        echo "system state: $state" | tee -a "$T/console.$BOOTS" >&2
        return 1
}

# boot_or_skip: boots, or skips the test saying why nspawn could not.
boot_or_skip() {
        local start
        start=$(date +%s)
        if ! boot; then
                tail -5 "$T/console.$BOOTS" | sed 's/^/# console: /'
                skip_all "systemd-nspawn cannot boot a container here: $(grep -v '^$' "$T/console.$BOOTS" | tail -1)"
        fi
        diag "the container booted in $(($(date +%s) - start)) s ($(C systemctl --version | head -1))"
}
