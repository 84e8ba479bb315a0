#!/bin/bash
# verdict: what judging a change of policy costs per tick, a change a
# minute old beside one a year old (issue 43). CPU time per tick, then the
# same under callgrind: instructions, which no other load on the host
# changes.
. "$top_srcdir/bench/lib.sh"
B=$top_builddir/bench/verdict
"$B" 60 60
if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
        out=$(mktemp)
        trap 'rm -f "$out"' EXIT
        valgrind -q --tool=callgrind --callgrind-out-file="$out" "$B" 60 60 >/dev/null 2>&1
        callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk '
                /:judge_young / { gsub(",", "", $1); y = $1 }
                /:judge_old / { gsub(",", "", $1); o = $1 }
                END { if (y && o) printf "  callgrind, 60 ticks: a minute old %.0f instructions a tick, a year old %.0f (%.2fx)\n", y / 60, o / 60, o / y }'
else
        echo "  (valgrind's callgrind not installed: no instruction counts)"
fi
