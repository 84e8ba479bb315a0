#!/bin/bash
# usermounts.sh: user FUSE mounts cannot take the workers nor flood the
# log. Inside this test's namespace /dev/fuse is a 0666 node and fuse.conf
# has user_allow_other (as on many hosts). User nobody makes 100 bindfs
# mounts others may enter and stops their daemons (SIGSTOP: every access
# hangs), and 60 more with --no-allow-other (root gets EACCES). A root
# tmpfs must still be measured every interval, the threads stuck on the
# hung mounts stay within the bound, and the failing mounts cost a few log
# lines, not one per attempt. Another user's FUSE mount (user daemon's, an
# untrusted filesystem too, served by the same bounded share) must be
# measured all along as well: nobody's hung mounts take only nobody's share
# of the threads, and the share's jobs rotate (issue 36).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v bindfs >/dev/null || skip_all "bindfs is not installed"
command -v setpriv >/dev/null || skip_all "needs setpriv"
M=$T/mnt
N=100
NC=60
IV=2

fuse_for_users

mkdir -p $M/real $M/u $M/d
mount -t tmpfs -o strictatime tmpfs $M/real || bail "mount real"
for i in $(seq 1 20); do echo x >$M/real/f$i; done
chmod 0755 $T $M
chmod 1777 $M/u
as_nobody sh -c "mkdir -p $M/u/src && echo y >$M/u/src/f && for i in \$(seq 1 $N); do
        mkdir -p $M/u/open\$i && bindfs -o allow_other $M/u/src $M/u/open\$i || exit 1
done && for i in \$(seq 1 $NC); do
        mkdir -p $M/u/closed\$i && bindfs --no-allow-other $M/u/src $M/u/closed\$i || exit 1
done" || bail "nobody could not make the bindfs mounts"
# (mounted through fusermount, their type is plain "fuse")
is "nobody's mounts" "$(grep -c " - fuse .*user_id=65534" /proc/self/mountinfo)" "$((N + NC))"
chown daemon: $M/d
setpriv --reuid=daemon --regid=daemon --clear-groups sh -c "mkdir -p $M/d/src $M/d/open &&
        for i in \$(seq 1 20); do echo z >$M/d/src/f\$i; done && bindfs -o allow_other $M/d/src $M/d/open" ||
        bail "daemon could not make its bindfs mount"
is "user daemon's mount" "$(grep -c " $M/d/open .* - fuse .*user_id=1," /proc/self/mountinfo)" "1"
# Those others may enter: bindfs_stop stops them, bindfs_resume (and
# cleanup) resumes them.
FUSE_PIDS=$(pgrep -u nobody -f "bindfs -o allow_other $M/u/src" | tr '\n' ' ')

write_config '[daemon] worker_threads = 2' '[mounts] include_fstypes = tmpfs fuse' \
        "[mounts] exclude_paths += $HOST_EXCLUDE" '[probe] timeout = 1s' "[sampler] interval = ${IV}s" \
        '[sampler] timeout = 1s'
bindfs_stop
diag "stopped $(echo $FUSE_PIDS | wc -w) bindfs daemons"
start_daemon
check "the real tmpfs gets a figure" wait_until 30 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r --arg t $M/real '.mounts[] | select(.target == \$t) | .activity.at // empty')\" ]"

# Readers keep the real mount busy; every interval for 30 s must bring
# a new figure (a gap of three intervals at most). (The sleeps are the
# readers' pace and the sampling's period, not waits.)
( while :; do cat $M/real/f* $M/d/open/f* >/dev/null; sleep 0.2; done ) &
READER=$!
ats=() dats=() maxstuck=0 i=0
while [ $i -lt 60 ]; do
        s=$(ctl --json status)
        ats+=("$(printf '%s' "$s" | jq -r --arg t $M/real '.mounts[] | select(.target == $t) | .activity.at // 0')")
        dats+=("$(printf '%s' "$s" | jq -r --arg t $M/d/open '.mounts[] | select(.target == $t) | .activity.at // 0')")
        st=$(printf '%s' "$s" | jq -r '.stuck_threads')
        [ "$st" -gt "$maxstuck" ] && maxstuck=$st
        sleep 0.5
        i=$((i + 1))
done
kill $READER
wait $READER 2>/dev/null
distinct=$(printf '%s\n' "${ats[@]}" | sort -u | wc -l)
gap=$(printf '%s\n' "${ats[@]}" | sort -un | awk 'NR > 1 && $1 - p > g { g = $1 - p } { p = $1 } END { print g + 0 }')
diag "real mount: $distinct distinct intervals in 30 s, longest gap ${gap} s; stuck threads at most $maxstuck"
check "the real mount is measured all along ($distinct intervals of ${IV} s in 30 s)" test "$distinct" -ge 10
check "no gap over three intervals (${gap} s)" test "$gap" -le $((3 * IV))
check "stuck threads stay bounded ($maxstuck <= 4)" test "$maxstuck" -le 4
ddistinct=$(printf '%s\n' "${dats[@]}" | grep -vx 0 | sort -u | wc -l)
dgap=$(printf '%s\n' "${dats[@]}" | grep -vx 0 | sort -un | awk 'NR > 1 && $1 - p > g { g = $1 - p } { p = $1 } END { print g + 0 }')
diag "user daemon's FUSE mount: $ddistinct distinct intervals in 30 s, longest gap ${dgap} s"
check "another user's FUSE mount is measured all along ($ddistinct intervals of ${IV} s in 30 s)" test "$ddistinct" -ge 10
check "with no gap over three intervals either (${dgap} s)" test "$dgap" -le $((3 * IV))
fails=$(grep -c "sampling failed" $T/atimed.log)
diag "'sampling failed' lines: $fails"
check "the $NC denied mounts cost bounded log lines ($fails <= 25 in about 40 s)" test "$fails" -le 25
bindfs_resume
check "once bindfs runs again, a hung mount is measured" wait_until 120 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r --arg t $M/u/open1 '.mounts[] | select(.target == \$t) | .activity.at // empty')\" ]"
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"
done_testing
