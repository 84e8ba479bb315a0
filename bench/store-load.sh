#!/bin/bash
# store-load: the time to load 90 days of history for 100 (and 1000) mounts.
. "$top_srcdir/bench/lib.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
echo "store-load: the snapshot of every mount's full 90-day history, written then loaded"
"$top_builddir/bench/store-load" "$d" 100 10
"$top_builddir/bench/store-load" "$d" 1000 3
