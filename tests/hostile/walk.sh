#!/bin/bash
# walk.sh: the walk's memory is bounded by configuration, not by what users
# create. Any user can make directories (on tmpfs they cost no quota); the
# walk must not keep a path per directory it has yet to visit. 200,000
# empty directories under a 3,000-byte path, and a chain deeper than
# PATH_MAX: the daemon's peak RSS stays under 32 MiB, every directory is
# counted, the chain stops at PATH_MAX. Runs in the build without
# sanitizers (ASan's shadow memory and quarantine are no measure of RSS).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
N=200000
mkdir -p $M/wide $M/chain
mount -t tmpfs -o size=64m,nr_inodes=400k tmpfs $M/wide || bail "mount"
mount -t tmpfs -o size=16m tmpfs $M/chain || bail "mount"

# 12 components of 249 bytes: a 3,000-byte path below the mount.
long=$(head -c 249 /dev/zero | tr '\0' l)
deep=$M/wide
for i in $(seq 1 12); do deep=$deep/$long; done
mkdir -p "$deep" || bail "mkdir $deep"
rel=${deep#$M/wide/}
diag "relative path of ${#rel} bytes"
t0=$(date +%s%N)
(cd "$deep" && seq -f 'd%06g' 1 $N | xargs mkdir) || bail "mkdir"
diag "$N directories made in $((($(date +%s%N) - t0) / 1000000)) ms"

# A chain of 2,100 directories "c/c/c/...": 4,200 bytes, past PATH_MAX.
c1000=$(printf 'c/%.0s' $(seq 1 1000))
c1100=$(printf 'c/%.0s' $(seq 1 1100))
(cd $M/chain && mkdir -p $c1000 && cd $c1000 && mkdir -p $c1100) || bail "chain"

write_config '[daemon] log_level = debug' "${TMPFS_ONLY[@]}" '[sampler] interval = 2s' '[sampler] walk_rate = 1000000'
start_daemon

vm() { awk -v k="$1:" '$1 == k { print $2 }' /proc/$DAEMON_PID/status; }
diag "at start: VmRSS $(vm VmRSS) KiB"
t0=$(date +%s%N)
check "the walk of $M/wide finishes" wait_until 300 grep -q "$M/wide: sample walk done" "$T/atimed.log"
check "the walk of $M/chain finishes" wait_until 60 grep -q "$M/chain: sample walk done" "$T/atimed.log"
diag "walks done in $((($(date +%s%N) - t0) / 1000000)) ms"
hwm=$(vm VmHWM)
diag "peak RSS (VmHWM) $hwm KiB, VmRSS now $(vm VmRSS) KiB"
check "peak RSS under 32 MiB ($hwm KiB)" test "$hwm" -lt 32768

population() { ctl --json status | jq -r --arg t "$1" '.mounts[] | select(.target == $t) | .activity.population // empty'; }
check "$M/wide has been swept" wait_until 20 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/wide\") | .activity.population // empty')\" ]"
# The top, the 12 long components, the N directories.
is "every directory counted" "$(population $M/wide)" $((1 + 12 + N))
# "c" at depth n has a path of 2n-1 bytes: the walk names depths 1 to 2,048.
check "$M/chain has been swept" wait_until 20 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/chain\") | .activity.population // empty')\" ]"
is "the chain counted down to PATH_MAX" "$(population $M/chain)" 2049
check "still serving" ctl status
stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
