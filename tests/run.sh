#!/bin/bash
# tests/run.sh: the whole test suite, as CI runs it. A fresh build with
# AddressSanitizer, UndefinedBehaviorSanitizer and -Werror in build-test/,
# then every suite, and a ThreadSanitizer build in build-tsan/ for the
# tests that use worker threads; ends with one line "N passed, N failed".
#
# Needs root (the integration tests mount filesystems in private mount
# namespaces) and the packages of `./quickstart.sh --deps-only`.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
JOBS=$(nproc)
passed=0
failed=0
skipped=0
suite_start=$SECONDS
# Every script's and step's time, "seconds<TAB>name", for the slowest at
# the end (the suite's budget is 35 minutes on a 2-CPU machine).
times=$(mktemp)
trap 'rm -f "$times"' EXIT

# took NAME SINCE: records the time from SINCE ($SECONDS then) to now.
took() {
        printf '%s\t%s\n' "$((SECONDS - $2))" "$1" >>"$times"
}

# script_times DIR: records the time of every test script automake ran
# under DIR (the .time files tests/timed-driver.sh wrote).
script_times() {
        local f
        for f in $(find "$1" -name '*.time'); do
                printf '%s\t%s\n' "$(cat "$f")" "${f#"$1"/}" >>"$times"
        done
}

# count_trs DIR: adds the per-assertion results automake recorded.
count_trs() {
        local p f s
        p=$(cat $(find "$1" -name '*.trs') /dev/null | grep -c '^:test-result: PASS')
        f=$(cat $(find "$1" -name '*.trs') /dev/null | grep -Ec '^:test-result: (FAIL|ERROR|XPASS)')
        s=$(cat $(find "$1" -name '*.trs') /dev/null | grep -Ec '^:test-result: (SKIP|XFAIL)')
        passed=$((passed + p))
        failed=$((failed + f))
        skipped=$((skipped + s))
}

# step NAME COMMAND...: a whole step that passes or fails as one.
step() {
        local name=$1 since=$SECONDS
        shift
        echo "== $name"
        "$@"
        local status=$?
        took "$name" "$since"
        if [ $status -eq 0 ]; then
                passed=$((passed + 1))
        else
                echo "FAILED: $name"
                failed=$((failed + 1))
        fi
}

build() {
        [ -x configure ] || ./autogen.sh >/dev/null 2>&1 || return 1
        rm -rf build-test && mkdir build-test && cd build-test || return 1
        ../configure -q --enable-sanitizers --enable-werror \
                --prefix=/usr --sysconfdir=/etc --localstatedir=/var || return 1
        make -s -j"$JOBS" >/dev/null
}

step "build (ASan+UBSan, -Werror)" build || { echo "$passed passed, $failed failed"; exit 1; }

# An optimised build without sanitizers sees warnings the instrumented one
# does not (-O2 flow analysis): it must be clean too.
release_build() {
        rm -rf "$SRC/build-release" && mkdir "$SRC/build-release" && cd "$SRC/build-release" &&
                ../configure -q --enable-werror --prefix=/usr --sysconfdir=/etc --localstatedir=/var &&
                make -s -j"$JOBS" >/dev/null
}
( step_out=$(release_build 2>&1) || { echo "$step_out" | grep -E 'error|warning' | head -20; exit 1; } )
if [ $? -eq 0 ]; then
        echo "== build (-O2, -Werror, no sanitizers)"
        passed=$((passed + 1))
else
        echo "FAILED: build (-O2, -Werror, no sanitizers)"
        failed=$((failed + 1))
fi
cd "$SRC/build-test" || exit 1

echo "== make check"
since=$SECONDS
make -s -j"$JOBS" check >/dev/null 2>&1
check_status=$?
took "make check, in all (-j$JOBS)" "$since"
count_trs "$SRC/build-test"
if [ $check_status -ne 0 ]; then
        # Show what failed: the TAP lines and the log of each failing test.
        grep -l '^:test-result: \(FAIL\|ERROR\)' $(find . -name '*.trs') 2>/dev/null | while read -r trs; do
                log=${trs%.trs}.log
                echo "---- ${log#./}"
                grep -E '^(not ok|Bail out|#)' "$log" | head -40
        done
        [ "$failed" -gt 0 ] || failed=1 # a crash that left no TAP result
fi

# What only means something without ASan: valgrind and memory baselines.
echo "== make check (release build: valgrind, memory)"
release_tests=$(sed -n '/^release_tests = /,/^[^\t]/p' "$SRC/Makefile.am" | grep -o 'tests/[^ ]*\.sh' | tr '\n' ' ')
if [ -f "$SRC/build-release/atimed" ]; then
        since=$SECONDS
        (cd "$SRC/build-release" && make -s check TESTS="$release_tests" >/dev/null 2>&1)
        release_status=$?
        took "make check of the release build, in all" "$since"
        count_trs "$SRC/build-release/tests/hostile"
        if [ $release_status -ne 0 ]; then
                for t in $release_tests; do
                        grep -E '^(not ok|Bail out)' "$SRC/build-release/${t%.sh}.log" 2>/dev/null | head -20
                done
                [ "$failed" -gt 0 ] || failed=$((failed + 1))
        fi
fi

# alone TITLE TEST: one test run by itself after make check, its
# assertions counted, its failures shown.
alone() {
        local failed_before=$failed log="$SRC/build-test/${2%.sh}.log"
        rm -f "$SRC/build-test/${2%.sh}.time"
        echo "== $1"
        make -s check TESTS="$2" >/dev/null 2>&1
        local status=$?
        count_trs "$SRC/build-test/${2%.sh}.trs"
        if [ $status -ne 0 ]; then
                grep -E '^(not ok|Bail out|#)' "$log" 2>/dev/null | head -60
                [ "$failed" -gt "$failed_before" ] || failed=$((failed + 1))
        fi
}

# The estimate of atime updates judged against the kernel's own count: it
# measures, and other tests running beside it would take the CPU its
# readers need.
alone "atime updates, judged by the kernel" tests/integration/updates.sh
# Hard links counted once, judged by the kernel too: its paced readers get
# their looks right after their reads when make check's load leaves no CPU
# idle (a known gap of the estimator, issue 21), so it runs alone as well.
alone "hard links, judged by the kernel" tests/hostile/hardlinks.sh
# The same judge on a host with no idle CPU: readers flat out on ext4 and
# xfs, and apache2 under ab. Alone: it is the load.
alone "atime updates on a busy host, judged by the kernel" tests/integration/busy.sh
# Files read once, in bursts, on ext4: the journal's count judged where it
# is the figure (issue 35). Alone for the same reason.
alone "reads in bursts on ext4, judged by the kernel" tests/integration/bursts.sh
# ThreadSanitizer: the unit tests that start threads and the integration
# tests whose jobs time out, come back late or are asked for again while
# out (Makefile.am's tsan_tests), in a build of its own (it cannot run
# beside ASan). In the background, beside the steps below, which measure
# nothing and spend much of their time waiting (apt and dpkg, containers
# booting, ssh, the fuzzers' fixed time): the measuring tests above, which
# must run alone, are done by now. Its result is taken after distcheck.
tsan() {
        rm -rf "$SRC/build-tsan" && mkdir "$SRC/build-tsan" && cd "$SRC/build-tsan" &&
                ../configure -q --enable-tsan --enable-werror \
                        --prefix=/usr --sysconfdir=/etc --localstatedir=/var >/dev/null &&
                make -s -j"$JOBS" >/dev/null 2>&1 || { echo "the ThreadSanitizer build failed"; return 2; }
        make -s -j"$JOBS" check >/dev/null 2>&1
}
tsan_log=$(mktemp)
trap 'rm -f "$times" "$tsan_log"' EXIT
tsan_since=$SECONDS
tsan >"$tsan_log" 2>&1 &
tsan_pid=$!
cd "$SRC/build-test" || exit 1

# The Debian package: built from a clean clone, linted, installed, run,
# purged. The package build is long and would load the timing of others.
alone "Debian package" tests/integration/package.sh
# Under a real systemd: Debian 12 booted in systemd-nspawn (its root and the
# packages cached in build/systemd/), the previous release upgraded in place.
alone "under a real systemd (systemd-nspawn)" tests/integration/nspawn.sh
# The Ansible roles (contrib/ansible): linted, then run over ssh against the
# same container root with the package nspawn.sh built.
alone "the Ansible roles, against a container" tests/integration/ansible.sh

# libFuzzer: each target for a bounded time from its seed corpus (the
# corpora themselves were replayed by make check).
fuzz() {
        command -v clang >/dev/null || { echo "clang not installed"; return 1; }
        rm -rf "$SRC/build-fuzz" && mkdir "$SRC/build-fuzz" && cd "$SRC/build-fuzz" &&
                ../configure -q CC=clang --enable-fuzzing --enable-werror >/dev/null &&
                make -s -j"$JOBS" >/dev/null 2>&1 && make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
}
step "fuzzing (libFuzzer, ${FUZZ_SECONDS:-20} s per target)" fuzz
cd "$SRC/build-test" || exit 1

# The release tarball: it builds, installs and uninstalls cleanly, every
# test program builds from it, and the tests that read files from the
# source tree (fixtures, the corpora, docs/architecture.md) pass, so
# nothing the tests need is left out of it (Makefile.am's dist_tests). The
# rest, which make check above ran whole, is not run a second time on the
# tarball's build: the integration suite took a quarter of the suite's
# time for nothing new (the optimised binary is run for real by the
# release build's tests, package.sh and nspawn.sh), and a unit test that
# reads no file can fail there only as it fails here.
distcheck() {
        make -s -j"$JOBS" distcheck TESTS='$(dist_tests)' >distcheck.log 2>&1 ||
                { tail -40 distcheck.log; return 1; }
        # It ran them: a tarball whose tests did not run proves nothing.
        grep -Eq '^# PASS: +[1-9]' distcheck.log || { echo "distcheck ran no test"; return 1; }
}
step "make distcheck (the tarball: its build, install, and the tests that read its files)" distcheck

echo "== ThreadSanitizer (the tests that use worker threads)"
wait "$tsan_pid"
tsan_status=$?
took "ThreadSanitizer build and tests, in the background" "$tsan_since"
count_trs "$SRC/build-tsan"
if [ $tsan_status -ne 0 ]; then
        cat "$tsan_log"
        grep -l '^:test-result: \(FAIL\|ERROR\)' $(find "$SRC/build-tsan" -name '*.trs') 2>/dev/null | while read -r trs; do
                log=${trs%.trs}.log
                echo "---- ${log#"$SRC"/build-tsan/}"
                grep -E '^(not ok|Bail out|#)' "$log" | head -40
        done
        # The races themselves, of the tests and of the daemons they ran.
        for report in "$SRC"/build-tsan/tsan-report.*; do
                [ -f "$report" ] || continue
                echo "---- ${report#"$SRC"/}"
                head -60 "$report"
        done
        [ "$failed" -gt 0 ] || failed=$((failed + 1))
fi

script_times "$SRC/build-test"
script_times "$SRC/build-release"
script_times "$SRC/build-tsan"
echo "== the ten slowest scripts and steps (seconds; the whole suite: $(((SECONDS - suite_start) / 60)) min $(((SECONDS - suite_start) % 60)) s)"
sort -t"$(printf '\t')" -k1,1 -g -r "$times" | head -10 | sed 's/^/   /'
[ "$skipped" -eq 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
