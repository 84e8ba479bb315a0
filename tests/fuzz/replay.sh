#!/bin/bash
# replay.sh: every fuzz target's seed corpus, and every input that once
# crashed one (tests/fuzz/crashes/TARGET-*), replayed under the build's
# sanitizers. A crash, a sanitizer report or a hang fails the target.
set -u
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
n=0
failed=0
for replay in "$top_builddir"/tests/fuzz/replay-*; do
        t=${replay##*/replay-}
        crashes=$(find "$top_srcdir/tests/fuzz/crashes" -maxdepth 1 -type f -name "$t-*" | sort)
        count=$(find "$top_srcdir/tests/fuzz/corpus/$t" -maxdepth 1 -type f | wc -l)
        n=$((n + 1))
        # shellcheck disable=SC2086 # one argument per crash file
        if out=$(timeout 120 "$replay" "$top_srcdir/tests/fuzz/corpus/$t" $crashes 2>&1); then
                echo "ok $n - $t: $count corpus inputs and $(echo "$crashes" | grep -c .) past crashes replayed cleanly"
        else
                echo "not ok $n - $t: replay failed"
                echo "$out" | tail -30 | sed 's/^/#   /'
                failed=$((failed + 1))
        fi
        [ "$count" -gt 0 ] || { n=$((n + 1)); echo "not ok $n - $t: empty corpus"; failed=$((failed + 1)); }
done
[ "$n" -gt 0 ] || { echo "Bail out! no replay programs built"; exit 1; }
echo "1..$n"
[ "$failed" -eq 0 ]
