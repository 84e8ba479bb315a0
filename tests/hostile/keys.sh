#!/bin/bash
# keys.sh: history keys against names any user controls. A mount with a
# 3,033-byte path and a 1,500-byte source keeps its history across a
# restart, and so does every other mount; 'history /victim' never answers
# with the history of a mount at ".../evil target=/victim"; and right after
# a restart, a tracked mount without history yet gets an empty history with
# the reason, not "no tracked mount".
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/plain $M/victim "$M/evil target=$M/victim" $M/fresh
long=$M/long
while [ ${#long} -lt 2833 ]; do long=$long/$(head -c 199 /dev/zero | tr '\0' L); done
long=$long/$(head -c $((3032 - ${#long})) /dev/zero | tr '\0' E)
mkdir -p "$long" || bail "mkdir long"
diag "long mount point: ${#long} bytes"
mount -t tmpfs tmpfs $M/plain || bail mount
mount -t tmpfs "$(head -c 1500 /dev/zero | tr '\0' s)" "$long" || bail "mount long"
mount -t tmpfs evil "$M/evil target=$M/victim" || bail "mount evil"
echo x >$M/plain/f

write_config "${TMPFS_ONLY[@]}" '[sampler] interval = 5s' '[store] rings = 5s:10min, 1min:1d' \
        '[store] flush_interval = 5s'
points() { ctl --json history "$1" --since 10min 2>/dev/null | jq '.points | length'; }
has_points() { [ "$(points "$1")" -ge "${2:-1}" ]; }

start_daemon
check "history of $M/plain accrues" wait_until 60 has_points $M/plain 2
check "history of the long mount accrues" wait_until 30 has_points "$long" 2
check "history of the evil mount accrues" wait_until 30 has_points "$M/evil target=$M/victim" 2
like "the long mount's key is over 4,096 bytes" "$(ctl --json history "$long" | jq -r '.key | length')" '^(4[1-9]|[5-9])[0-9]{2}$'
ctl history $M/victim >$T/victim.out 2>&1
st=$?
check "history $M/victim is refused (exit $st)" test $st -ne 0
like "as no tracked mount" "$(cat $T/victim.out)" "(no tracked mount at $M/victim|$M/victim is on the mount at [^ ]*, which atimed does not track)"
umount "$M/evil target=$M/victim"
ctl --json history $M/victim >$T/victim.out 2>&1
st=$?
check "with the evil mount gone too, history $M/victim is refused (exit $st)" test $st -ne 0
n_plain=$(points $M/plain)
n_long=$(points "$long")

stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"
mount -t tmpfs tmpfs $M/fresh || bail mount
: >"$T/atimed.log"
start_daemon
if grep -E "moved aside|bad key|corrupt" "$T/atimed.log"; then
        tap_result 1 "the history file loads cleanly"
else
        tap_result 0 "the history file loads cleanly"
fi
check "the history of $M/plain survived the restart ($n_plain points)" has_points $M/plain $n_plain
check "so did the long mount's ($n_long points)" has_points "$long" $n_long
check "$M/fresh is tracked" wait_until 10 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/fresh\") | .target')\" ]"
fresh=$(ctl --json history $M/fresh 2>&1)
st=$?
is "history of $M/fresh right after the restart: exit 0" "$st" "0"
is "with no points" "$(echo "$fresh" | jq '.points | length')" "0"
like "and a reason" "$(echo "$fresh" | jq -r '.reason')" "identified|sampler intervals"
like "atimectl says so" "$(ctl history $M/fresh)" "No history in that period yet: "
stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
