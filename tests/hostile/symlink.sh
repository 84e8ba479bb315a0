#!/bin/bash
# symlink.sh: the sweep never follows a symlink. After the walk sampled
# a/b/f*, a user replaces a with a symlink into a FUSE mount whose daemon is
# stopped (as a hostile user can, with bindfs and SIGSTOP): the sweep must
# find the sampled inodes gone, not hang in the FUSE mount; the filesystem
# is not marked stalled and no worker thread is stuck.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/fs $M/src/b $M/fuse
mount -t tmpfs -o strictatime tmpfs $M/fs || bail mount
mkdir -p $M/fs/a/b
for i in 1 2 3 4 5; do echo x >$M/fs/a/b/f$i; echo x >$M/src/b/f$i; done
bindfs_start $M/src $M/fuse

# Only the tmpfs is tracked: the FUSE mount is where the symlink leads, not
# a mount atimed looks at.
write_config "${TMPFS_ONLY[@]}" '[sampler] timeout = 2s'
start_daemon
check "an interval of $M/fs is measured" next_interval $M/fs 20
is "with all of it sampled (top, a, b, 5 files)" "$(activity $M/fs | cut -d' ' -f8)" 8

mv $M/fs/a $M/fs/a.moved
ln -s $M/fuse $M/fs/a
bindfs_stop
diag "a is now a symlink to $M/fuse; bindfs (pid $FUSE_PID) stopped"
check "the next interval is measured (the sweep did not hang)" next_interval $M/fs 10
check "and the one after" next_interval $M/fs 10
is "the filesystem is not stalled" "$(mount_field $M/fs stalled)" "false"
is "no worker thread is stuck" "$(ctl --json status | jq .stuck_threads)" "0"
start=$(date +%s%N)
ctl status >/dev/null
diag "status in $((($(date +%s%N) - start) / 1000000)) ms"
if grep -q "$M/fs.*stall\|timed out" "$T/atimed.log"; then
        tap_result 1 "nothing timed out"
        grep "stall\|timed out" "$T/atimed.log" | sed 's/^/#   /' | head -5
else
        tap_result 0 "nothing timed out"
fi
bindfs_resume
stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
