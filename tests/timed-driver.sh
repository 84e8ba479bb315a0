#!/bin/sh
# tests/timed-driver.sh: runs automake's test driver ("$@") and writes how
# long the test took, in seconds, to the .time file beside its .trs, so
# tests/run.sh can print the slowest scripts and the suite's budget stays
# visible. The driver's exit status is passed on unchanged.
trs=
prev=
for a in "$@"; do
        [ "$prev" = "--trs-file" ] && trs=$a
        prev=$a
done
start=$(date +%s.%N)
"$@"
status=$?
if [ -n "$trs" ]; then
        end=$(date +%s.%N)
        awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", e - s }' >"${trs%.trs}.time" 2>/dev/null || :
fi
exit $status
