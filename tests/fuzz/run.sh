#!/bin/bash
# run.sh SECONDS TARGET...: fuzzes each libFuzzer target for SECONDS, from a
# copy of its seed corpus (the tree is left alone), and prints one line per
# target. A crash leaves its input in $FUZZ_OUT (default: a temp dir) and
# fails the run: add it to tests/fuzz/crashes/TARGET-NAME once fixed.
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
secs=$1
shift
out=${FUZZ_OUT:-$(mktemp -d /tmp/atimed-fuzz.XXXXXX)}
failed=0
for t in "$@"; do
        mkdir -p "$out/$t/corpus" "$out/$t/artifacts"
        cp "$top_srcdir/tests/fuzz/corpus/$t"/* "$out/$t/corpus/"
        "$top_builddir/tests/fuzz/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
                -print_final_stats=1 -artifact_prefix="$out/$t/artifacts/" "$out/$t/corpus" >"$out/$t/log" 2>&1
        status=$?
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t/log")
        cov=$(grep -Eo 'cov: [0-9]+' "$out/$t/log" | tail -1)
        if [ $status -eq 0 ]; then
                echo "fuzz $t: ${runs:-?} runs in ${secs}s, ${cov:-cov: ?}, no crash"
        else
                echo "fuzz $t: FAILED (exit $status) after ${runs:-?} runs; input in $out/$t/artifacts/"
                grep -E 'ERROR|SUMMARY|runtime error' "$out/$t/log" | head -5
                failed=$((failed + 1))
        fi
done
[ -n "${FUZZ_OUT:-}" ] || { [ $failed -eq 0 ] && rm -rf "$out"; }
[ $failed -eq 0 ]
