#!/bin/bash
# plantedlink.sh: the consumer scan does not follow a symlink a user
# planted where a tmpfiles.d rule points (issue 36). A rule names
# $U/spool, in a directory anyone may write (as /tmp is); user nobody makes
# $U/spool a symlink to a tracked mount, $T/many/m7, and swaps it between
# that and a FUSE mount that never answers while the daemon scans again
# and again (SIGHUP). Before, realpath() followed it: the rule was
# credited to m7 (whose advice it would hold back), or the scan hung on
# the FUSE mount. The rule must not be credited to m7 (at the first scan,
# and after the swaps), a rule on a real directory of m8 is read too, and
# root's status must be answered throughout, within 3x its quiet median in
# a release build, with the watchdog fed (attack-lib.sh), 2,000 mounts
# tracked.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
. "$top_srcdir/tests/hostile/attack-lib.sh"
command -v fusermount3 >/dev/null || skip_all "needs fusermount3 (fuse3)"
FUSEHANG=$top_builddir/tests/helpers/fusehang
N=2000
U=$T/u

fuse_for_users
mkdir -p $U $T/tmpfiles.d && chmod 1777 $U && chmod 0755 $T
many_mounts $N
mkdir $T/many/m8/cache
printf 'd %s 1777 root root 10d\nD %s 0755 root root 10d\n' $U/spool $T/many/m8/cache >$T/tmpfiles.d/planted.conf
write_config "${TMPFS_ONLY[@]}" "[consumers] tmpfiles_dirs = $T/tmpfiles.d" "[consumers] mail_spools = $T/none"
as_nobody mkdir $U/hung
setpriv --reuid=nobody --regid=nogroup --clear-groups "$FUSEHANG" $U/hung nobody-hung >$T/fusehang.out 2>&1 &
HANG_PID=$!
DAEMON_PIDS="$DAEMON_PIDS $HANG_PID"
FUSE_DIRS="$FUSE_DIRS $U/hung"
wait_until 10 grep -qx mounted $T/fusehang.out || bail "fusehang: $(cat $T/fusehang.out)"
as_nobody ln -s $T/many/m7 $U/spool
attack_daemon $N

# credited MOUNT: the sources of the tmpfiles.d consumers credited to MOUNT.
credited() {
        ctl call io.atimed.GetRecommendations | jq -r --arg t "$1" '.recommendations[] | select(.target == $t) |
                .consumers[] | select(.kind == "tmpfiles") | .path'
}

# has_credit MOUNT PATH: the tmpfiles.d rule on PATH is credited to MOUNT.
has_credit() { credited "$1" | grep -qxF "$2"; }

# The first scan, the link to m7 in place since before the start: the rule
# on m8's real directory is credited to m8 (the scan is done), and the one
# on the planted link is not credited to m7. Before, realpath() followed
# the link, and this scan credited m7 (what the attack below then left
# standing or not depended on when the scans hung).
check "the scan credits the rule on a real directory to its mount (m8)" wait_until 30 has_credit $T/many/m8 $T/many/m8/cache
is "the planted link does not credit its rule to the mount it leads to (m7)" "$(credited $T/many/m7)" ""

attack_begin 8
( end=$((SECONDS + 8)); while [ $SECONDS -lt $end ]; do
        # (rm and ln -s: ln -f would stat the old link's target, the hung
        # mount, and hang this loop)
        as_nobody sh -c "rm -f $U/spool && ln -s $U/hung/x $U/spool"
        kill -HUP $DAEMON_PID
        sleep 0.5 # (the swaps' pace, not a wait)
        as_nobody sh -c "rm -f $U/spool && ln -s $T/many/m7 $U/spool"
        kill -HUP $DAEMON_PID
        sleep 0.5
done ) &
SWAPS=$!
attack_end
wait $SWAPS
attack_judge "a symlink planted for a tmpfiles.d path, swapped during scans"
scans=$(grep -c "Configuration reloaded" $T/atimed.log)
diag "reloads (each a scan): $scans"
is "the planted link never credits the rule to the mount it leads to" "$(credited $T/many/m7)" ""
check "and the rule on m8's real directory is still credited" has_credit $T/many/m8 $T/many/m8/cache
check "the daemon scanned again at each swap ($scans reloads)" test "$scans" -ge 8
check "still serving" ctl status $T/many/m0
kill $HANG_PID
wait $HANG_PID 2>/dev/null
stop_daemon
is "clean exit" "$STOP_STATUS" "0"
attack_usage
attack_share_held $(id -u nobody)
done_testing
