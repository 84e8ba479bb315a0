#!/bin/bash
# run.sh SECONDS TARGET...: fuzzes each libFuzzer target for SECONDS, from a
# copy of its seed corpus (the tree is left alone), and prints one line per
# target. A crash leaves its input in $FUZZ_OUT (default: a temp dir) and
# fails the run: add it to tests/fuzz/crashes/TARGET-NAME once fixed.
# FUZZ_JOBS targets run at a time (default: one per CPU): each is a single
# process, so each keeps its SECONDS of a CPU, and the whole takes a
# FUZZ_JOBS-th of the time.
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
secs=$1
shift
jobs=${FUZZ_JOBS:-$(nproc)}
out=${FUZZ_OUT:-$(mktemp -d /tmp/atimed-fuzz.XXXXXX)}

# fuzz_one TARGET: runs it; its report line in $out/TARGET/report, and
# $out/TARGET/failed if it found a crash.
fuzz_one() {
        local t=$1 status runs cov
        mkdir -p "$out/$t/corpus" "$out/$t/artifacts"
        cp "$top_srcdir/tests/fuzz/corpus/$t"/* "$out/$t/corpus/"
        "$top_builddir/tests/fuzz/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
                -print_final_stats=1 -artifact_prefix="$out/$t/artifacts/" "$out/$t/corpus" >"$out/$t/log" 2>&1
        status=$?
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t/log")
        cov=$(grep -Eo 'cov: [0-9]+' "$out/$t/log" | tail -1)
        if [ $status -eq 0 ]; then
                echo "fuzz $t: ${runs:-?} runs in ${secs}s, ${cov:-cov: ?}, no crash" >"$out/$t/report"
        else
                {
                        echo "fuzz $t: FAILED (exit $status) after ${runs:-?} runs; input in $out/$t/artifacts/"
                        grep -E 'ERROR|SUMMARY|runtime error' "$out/$t/log" | head -5
                } >"$out/$t/report"
                : >"$out/$t/failed"
        fi
}

running=0
for t in "$@"; do
        if [ "$running" -ge "$jobs" ]; then
                wait -n
                running=$((running - 1))
        fi
        fuzz_one "$t" &
        running=$((running + 1))
done
wait
failed=0
for t in "$@"; do
        cat "$out/$t/report" 2>/dev/null || echo "fuzz $t: no report"
        if [ -e "$out/$t/failed" ] || [ ! -e "$out/$t/report" ]; then
                failed=$((failed + 1))
        fi
done
[ -n "${FUZZ_OUT:-}" ] || { [ $failed -eq 0 ] && rm -rf "$out"; }
[ $failed -eq 0 ]
