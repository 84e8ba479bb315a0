#!/bin/bash
# stalled.sh: a FUSE mount (bindfs) whose daemon is stopped with SIGSTOP,
# as a dead NFS server would be. atimed must keep answering, mark the mount
# stalled, keep at most one thread stuck on it, and recover when it returns.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/src $M/fuse $M/tmp
make_tree $M/src 2 10
mount -t tmpfs -o strictatime tmpfs $M/tmp || bail mount
bindfs_start $M/src $M/fuse

# The host's own mounts are left out: on a busy machine a walk of / can
# itself take longer than the 2 s timeout.
write_config "[mounts] exclude_paths = [/] $HOST_EXCLUDE [/]mnt/*" '[sampler] timeout = 2s' \
        '[probe] interval = 2s' '[probe] timeout = 1s'
start_daemon
check "the FUSE mount is tracked" wait_until 10 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/fuse\") | .fstype')\" ]"
is "and not stalled while its daemon runs" "$(mount_field $M/fuse stalled)" "false"

bindfs_stop
diag "bindfs (pid $FUSE_PID) stopped"
check "it is marked stalled" wait_until 10 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/fuse\") | .stalled')\" = true ]"

start=$(date +%s%N)
for i in 1 2 3 4 5; do timeout 2 "$ATIMECTL" --socket $T/sock status >/dev/null || break; done
elapsed=$((($(date +%s%N) - start) / 1000000))
diag "5 status calls while stalled: ${elapsed} ms"
check "the socket keeps answering while the mount hangs" test "$i" -eq 5 -a "$elapsed" -lt 5000
is "other mounts are still measured" "$(mount_field $M/tmp stalled)" "false"
like "the status table says stalled" "$(ctl status --full)" "$M/fuse +fuse(\.bindfs)? .* stalled"
like "and the summary line counts it" "$(ctl status)" "1 stalled"
timeout 5 "$ATIMECTL" --socket $T/sock probe $M/fuse >$T/probe.out 2>&1
is "an on-demand probe of the stalled mount answers at once" "$?" "0"
like "saying it is stalled or timed out" "$(cat $T/probe.out)" "not verified .*(stalled|timed out)"
# Three timeouts (2 s) of the stalled mount, in which stuck threads would
# pile up: until the daemon has swept the tmpfs 6 s on.
check "the daemon sweeps on beside the stalled mount" wait_until 12 swept_since $M/tmp $(($(date +%s) + 6))
stuck=$(ctl --json status | jq .stuck_threads)
diag "stuck worker threads after three timeouts stalled: $stuck"
check "at most one stuck thread for the filesystem and one per mount" test "$stuck" -le 2
like "the stall is logged" "$(cat $T/atimed.log)" "$M/fuse: .*timed out.*stalled"

bindfs_resume
diag "bindfs resumed"
check "it recovers once its daemon resumes" wait_until 40 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/fuse\") | .stalled')\" = false ]"
is "no thread stays stuck" "$(ctl --json status | jq .stuck_threads)" "0"

stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
