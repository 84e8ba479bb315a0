#!/bin/bash
# oddmounts.sh: a container's odd mounts over a minute of 1 s intervals.
# Files bind-mounted as nspawn and Docker do (os-release, hosts,
# resolv.conf, hostname: their filesystem not mounted otherwise, and one of
# a filesystem that is), and a target mounted twice, the first over-mounted
# from above. None of them is probed or walked, status says what each is,
# and each costs one log line at most. Failures that end are said twice,
# when they start and when they end with their count, never per attempt: a
# probe that cannot write its temporary file (a full tmpfs, later emptied),
# and a FUSE filesystem that stops answering (SIGSTOP, later SIGCONT).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
FILES="os-release hosts resolv.conf hostname"

# File bind mounts: their source tmpfs is then detached, as a container
# sees only the files.
mkdir -p $T/host $M/etc $M/data $M/cov/a/b $M/full
mount -t tmpfs -o size=1m,strictatime hostfs $T/host || bail "host tmpfs"
for f in $FILES; do
        echo "$f" >$T/host/$f
        : >$M/etc/$f
        mount --bind $T/host/$f $M/etc/$f || bail "bind $f"
done
umount -l $T/host
# One of a filesystem that is also mounted as a directory (sampled there).
mount -t tmpfs -o size=1m,strictatime datafs $M/data || bail "data tmpfs"
echo d >$M/data/file
: >$M/etc/data-file
mount --bind $M/data/file $M/etc/data-file || bail "bind data-file"
# cov/a/b, then cov/a over it, then a new cov/a/b: two mounts at one
# target, only the second reachable.
mount -t tmpfs -o size=1m,strictatime lower $M/cov/a/b && echo x >$M/cov/a/b/f &&
        mount -t tmpfs -o size=1m tmpfs $M/cov/a && mkdir $M/cov/a/b &&
        mount -t tmpfs -o size=1m,noatime upper $M/cov/a/b || bail "over-mount"
LOWER_ID=$(awk -v t="$M/cov/a/b" '$5 == t { print $1; exit }' /proc/self/mountinfo)
# A tmpfs so full that the probe cannot write its one byte.
mount -t tmpfs -o size=64k,strictatime fullfs $M/full || bail "full tmpfs"
dd if=/dev/zero of=$M/full/filler bs=4k count=100 2>/dev/null
FUSE_PID=
if command -v bindfs >/dev/null; then
        mkdir -p $T/fsrc $M/fuse
        echo y >$T/fsrc/f
        bindfs_start $T/fsrc $M/fuse
fi

write_config --bare '[daemon] log_level = debug' '[mounts] include_fstypes = tmpfs fuse' \
        "[mounts] exclude_paths = [/] $HOST_EXCLUDE [/]${T#/}/state" '[probe] interval = 1s' '[probe] timeout = 1s' \
        '[sampler] interval = 1s' '[sampler] timeout = 1s'
[ -n "$FUSE_PID" ] && kill -STOP $FUSE_PID
start_daemon
START=$(date +%s)

st() { ctl --json status; }
# stage TARGET [MOUNT_ID]: the progress stage of the mount at TARGET.
stage() {
        st | jq -r --arg t "$1" --arg id "${2:-}" '.mounts[] | select(.target == $t) |
                select($id == "" or (.mount_id | tostring) == $id) | .progress.stage // "none"'
}
all_files_marked() {
        local f
        for f in $FILES data-file; do
                [ "$(stage $M/etc/$f)" = file_mount ] || return 1
        done
}
check "the file bind mounts are told apart as such" wait_until 20 all_files_marked
for f in $FILES data-file; do
        like "$f: the probe's reason says what it is" "$(mount_field $M/etc/$f probe.reason)" "file bind mount"
done
is "a file bind mount has no figure" "$(mount_field $M/etc/hosts activity)" "null"
is "the over-mounted mount: not reachable" \
        "$(st | jq -r --arg id "$LOWER_ID" '.mounts[] | select((.mount_id | tostring) == $id) | .reachable')" "false"
is "the over-mounted mount: its stage says so" "$(stage $M/cov/a/b $LOWER_ID)" "overmounted"
like "the over-mounted mount: its probe's reason says so" \
        "$(st | jq -r --arg id "$LOWER_ID" '.mounts[] | select((.mount_id | tostring) == $id) | .probe.reason')" "over-mounted"
# Its recent history is its own, not that of the mount its target leads to
# (noatime, measured: zeros).
check "the over-mounted mount's recent history is its own (nothing measured)" sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetStatus '{\"history_s\":3600}' |
        jq -e --arg id $LOWER_ID '[.mounts[] | select((.mount_id | tostring) == \$id) | .history // [] | .[] | select(. != null)] | length == 0'"
check "while the reachable one at that target has measured points" wait_until 20 sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetStatus '{\"history_s\":3600}' |
        jq -e --arg t $M/cov/a/b --arg id $LOWER_ID '[.mounts[] | select(.target == \$t and (.mount_id | tostring) != \$id) | .history // [] | .[] | select(. != null)] | length > 0'"
check "the filesystem of a file bind mount is still sampled where it is a directory" \
        wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e --arg t $M/data '.mounts[] | select(.target == \$t) | .activity.at'"
out=$(COLUMNS=100 ctl status)
like "atimectl: a file mount in words" "$out" "etc/hosts +tmpfs +strictatime +n/a \(file\) +file mount"
like "atimectl: the over-mounted one in words" "$out" "b \(over-mounted\) +tmpfs +strictatime +n/a \(hidden\) +over-mounted"

# The full tmpfs: not verified, several times; then emptied.
check "the full tmpfs cannot be probed" wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json status |
        jq -e --arg t $M/full '.mounts[] | select(.target == \$t) | .probe.reason | test(\"no space\")'"
at0=$(mount_field $M/full probe.at)
wait_until 20 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r --arg t $M/full '.mounts[] | select(.target == \$t) | .probe.at')\" -gt $((at0 + 1)) ]"
rm -f $M/full/filler
check "emptied, the tmpfs is probed again" wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json status |
        jq -e --arg t $M/full '.mounts[] | select(.target == \$t) | .probe.verified'"

if [ -n "$FUSE_PID" ]; then
        check "the stopped FUSE mount is stalled" wait_until 20 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status |
                jq -r --arg t $M/fuse '.mounts[] | select(.target == \$t) | .stalled')\" = true ]"
        # Its job stays out, stuck on it: nothing more is tried until it
        # returns (at most one thread stuck per filesystem).
        # (Until the daemon has swept 20 s from its start: its sweeps, not the
        # clock, are what must pass the stuck job by.)
        check "the daemon sweeps on beside it" wait_until 40 swept_since $M/data $((START + 20))
        bindfs_resume
        check "bindfs answers again: the mount gets a figure" wait_until 60 sh -c "$ATIMECTL --socket $T/sock --json status |
                jq -e --arg t $M/fuse '.mounts[] | select(.target == \$t) | .activity.at'"
fi
# A minute of 1 s intervals in all.
check "a minute of sweeps" wait_until 90 swept_since $M/data $((START + 62))
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"

# lines TARGET: log lines above debug about the mount at TARGET.
lines() { grep -v '^<7>' $T/atimed.log | grep -c -F "$1:"; }
for f in $FILES data-file; do
        n=$(lines $M/etc/$f)
        check "$f: $n log line(s) in a minute, at most one" test "$n" -le 1
        check "$f: never walked, swept or probed" sh -c "! grep -F '$M/etc/$f: sample walk
$M/etc/$f: probe verified
$M/etc/$f: sampling failed
$M/etc/$f: atime policy' $T/atimed.log"
done
n=$(lines $M/cov/a/b)
check "the over-mounted target: $n log line(s) in a minute, at most one" test "$n" -le 1
check "nothing failed as 'Not a directory'" sh -c "! grep -q 'Not a directory' $T/atimed.log"

# The failures that ended: each said once as it began, once as it ended.
is "full tmpfs: said once as it began" "$(grep -c -E "$M/full: atime policy not verified: .*no space" $T/atimed.log)" 1
like "full tmpfs: said once as it ended, with the count" \
        "$(grep -F "$M/full: atime policy verified after" $T/atimed.log)" "verified after ([2-9]|[0-9]{2,}) probes"
if [ -n "$FUSE_PID" ]; then
        fuse_lines=$(grep -v '^<7>' $T/atimed.log | grep -F "$M/fuse:")
        printf '%s\n' "$fuse_lines" | sed 's/^/# /'
        is "stalled FUSE: the walk's timeout said once" "$(printf '%s\n' "$fuse_lines" | grep -c "timed out; filesystem marked stalled")" 1
        is "stalled FUSE: the probe's timeout said once" "$(printf '%s\n' "$fuse_lines" | grep -c "probe timed out")" 1
        like "stalled FUSE: the probe's end said once with the count" \
                "$(printf '%s\n' "$fuse_lines" | grep "probe answers again")" "probe answers again after [0-9]+ timed out probes?"
        like "stalled FUSE: the end said once with the count" \
                "$(printf '%s\n' "$fuse_lines" | grep "answers again")" "filesystem answers again after [0-9]+ timed out jobs?"
        check "stalled FUSE: at most five lines in all" test "$(printf '%s\n' "$fuse_lines" | wc -l)" -le 5
        kill $FUSE_PID 2>/dev/null
        umount $M/fuse 2>/dev/null
fi
done_testing
