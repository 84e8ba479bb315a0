#!/bin/bash
# fusename.sh: a mount's source is not followed on the loop (issue 36).
# User nobody makes a FUSE mount that never answers (its server holds
# /dev/fuse unread, as a stopped one would) and a second one named
# -o fsname=/dev/../FIRST/x: a source under /dev whose path leads into the
# hung mount. Before, the table update stat'ed "/dev/" + that source on the
# event loop and the daemon hung there until the user let go. Inside this
# test's namespace /dev/fuse is a 0666 node and fuse.conf has
# user_allow_other (fuse_for_users; the host's file is left alone), so
# root's accesses hang too. While nobody mounts them, root's status must
# be answered throughout, within 3x its quiet median in a release build,
# and the watchdog be fed (attack-lib.sh), with 2,000 other mounts tracked.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
. "$top_srcdir/tests/hostile/attack-lib.sh"
command -v fusermount3 >/dev/null || skip_all "needs fusermount3 (fuse3)"
FUSEHANG=$top_builddir/tests/helpers/fusehang
N=2000
U=$T/u

fuse_for_users
mkdir -p $U && chmod 1777 $U
chmod 0755 $T
many_mounts $N
write_config '[mounts] include_fstypes = tmpfs fuse' "[mounts] exclude_paths += $HOST_EXCLUDE" \
        '[probe] timeout = 1s' '[sampler] timeout = 1s'
attack_daemon $N

# hang_mount DIR FSNAME: nobody's FUSE mount on DIR that never answers.
hang_mount() {
        as_nobody mkdir -p "$1"
        # (setpriv itself, not as_nobody: a function would run in a
        # subshell, and $! would not be the server's pid)
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$FUSEHANG" "$1" "$2" >$T/fusehang.out 2>&1 &
        HANG_PIDS="$HANG_PIDS $!"
        DAEMON_PIDS="$DAEMON_PIDS $!" # killed at cleanup, which lets the mount go
        FUSE_DIRS="$FUSE_DIRS $1"
        wait_until 10 grep -qx mounted $T/fusehang.out || bail "fusehang $1: $(cat $T/fusehang.out)"
}

HANG_PIDS=""
attack_begin 8
hang_mount $U/a nobody-hung
hang_mount $U/b "/dev/../$U/a/x"
attack_end
attack_judge "a FUSE mount named /dev/../HUNG_MOUNT/x"
is "the mount's source is the name nobody chose" \
        "$(awk -v t=$U/b '$5 == t { for (i = 7; $i != "-"; i++); print $(i + 2) }' /proc/self/mountinfo)" "/dev/../$U/a/x"
check "both FUSE mounts are listed" wait_until 10 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e --arg a $U/a --arg b $U/b \
        '[.mounts[] | select(.target == \$a or .target == \$b)] | length == 2'"
stuck=$(ctl --json status | jq -r .stuck_threads)
diag "worker threads stuck on the hung mounts: $stuck"
check "still serving" ctl status $T/many/m0
# Their servers gone, the mounts fail every access at once: the threads
# stuck on them come back (LeakSanitizer's check at exit could not stop
# a thread that waits on FUSE).
kill $HANG_PIDS
wait $HANG_PIDS 2>/dev/null
stop_daemon
is "clean exit" "$STOP_STATUS" "0"
attack_usage
attack_share_held $(id -u nobody)
done_testing
