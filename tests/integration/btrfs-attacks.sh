#!/bin/bash
# btrfs-attacks.sh: no user can make atimed's btrfs figure (issue 44).
# One btrfs, the default configuration, the daemon started as root (it
# keeps its three capabilities, and forks the helper that alone holds
# CAP_SYS_ADMIN): a subvolume with a read-only snapshot (vol) and one no
# snapshot shares (other), each mounted on its own, and user nobody with a
# directory of his own in the second. The kernel is the judge: the tree
# blocks of vol btrfs:btrfs_cow_block says were copied away from its
# snapshot (lib.sh), against atimed's total of the bytes atime un-shared
# (measured or modelled: GetHistory's mean times the seconds it covers)
# over each stretch, within 25% with the judge inside its interval, or an
# interval that holds it and says why it is wide.
#  - a read pass, pure: measured, and the bytes an inode learnt;
#  - inflation: nobody makes 11,700 empty files in other and reads nothing
#    (the figure stays, the model learns nothing), then goes on making
#    files while reading 20 of vol's files a second (the figure holds the
#    reads, the model is not moved by the files);
#  - suppression: nobody makes (and deletes, user_subvol_rm_allowed) a
#    subvolume every interval while reading: no interval is taken for a
#    snapshot change of vol, the reads are modelled;
#  - blinding: nobody makes 100,000 subvolumes: vol's snapshot is still
#    seen, every look still ends, the reads are still counted and advised
#    on;
#  - the defaults: the same filesystem at the default commit (30 s) and
#    sampler interval (1 min): the inflation again, and a read pass.
# Each of these failed on a7f37d2 (see the commit that added this test).
. "$top_srcdir/tests/integration/lib.sh"
command -v mkfs.btrfs >/dev/null || skip_all "needs mkfs.btrfs (btrfs-progs)"
enter_namespace
T0=$(date +%s)
M=$T/mnt
INTERVAL=2
NDIRS=40
PER_DIR=100 # 4,000 files: ten passes of 400
MKSUBVOLS=$top_builddir/tests/helpers/mksubvols

modprobe btrfs 2>/dev/null
# 100,000 subvolumes take 1.6 GB of metadata: a filesystem of its own size,
# in memory, metadata not duplicated.
mkdir -p $T/big && mount -t tmpfs -o size=5g atimed-btrfs-attacks $T/big || bail "tmpfs for the image"
truncate -s 4G $T/big/b.img && mkfs.btrfs -q -f -m single $T/big/b.img >/dev/null 2>&1 || bail "mkfs.btrfs"
LOOP=$(losetup -f --show $T/big/b.img) || bail "losetup"
mkdir -p $T/top $M/vol $M/other
mount $LOOP $T/top || skip_all "cannot mount btrfs here"
btrfs -q subvolume create $T/top/vol >/dev/null && btrfs -q subvolume create $T/top/other >/dev/null || bail "subvolumes"
make_tree $T/top/vol $NDIRS $PER_DIR
# A relatime "day": the next read of each file writes its atime.
list_tree $T/top/vol $NDIRS $PER_DIR | xargs touch -a -d '2 days ago' &&
        find $T/top/vol -type d -exec touch -a -d '2 days ago' {} + || bail "touch -a"
mkdir $T/top/other/nobody && chown nobody:nogroup $T/top/other/nobody || bail "nobody's directory"
btrfs -q subvolume snapshot -r $T/top/vol $T/top/vol-snap >/dev/null || bail "snapshot"
btrfs filesystem sync $T/top
FSID=$(ls /sys/fs/btrfs | while read -r d; do [ -e /sys/fs/btrfs/$d/devices/${LOOP#/dev/} ] && echo $d; done)
[ -n "$FSID" ] || bail "no sysfs directory for $LOOP"
META=/sys/fs/btrfs/$FSID/allocation/metadata/bytes_used
NODESIZE=$(cat /sys/fs/btrfs/$FSID/nodesize)
VOLID=$(btrfs inspect-internal rootid $T/top/vol)
umount $T/top
btrfs_cow_start vol $VOLID || skip_all "no tracefs event btrfs:btrfs_cow_block: nothing to judge by"
mount_both() { # COMMIT: vol and other, each on its own, relatime (the first mount's options are the filesystem's)
        mount -o relatime,subvol=vol,user_subvol_rm_allowed${1:+,commit=$1} $LOOP $M/vol &&
                mount -o relatime,subvol=other,user_subvol_rm_allowed${1:+,commit=$1} $LOOP $M/other || bail "mount"
}
mount_both 2

# The default configuration but for the interval, and a history fine
# enough to see it (and the test's own filesystems alone).
write_config "[sampler] interval = ${INTERVAL}s" '[probe] interval = 1h' '[mounts] exclude_paths = [/]' \
        "[mounts] include_fstypes = btrfs" "[store] rings = ${INTERVAL}s:1h, 1min:6h" ${ATIMED_TEST_EXTRA_CONF:+"$ATIMED_TEST_EXTRA_CONF"}
start_daemon

BTRFS_MOUNT=$M/vol
# judged: the bytes the kernel says reads un-shared from vol's snapshot
# since the test began.
judged() { btrfs_cow_bytes vol $NODESIZE $FSID || kill -TERM $$; }
counted() { btrfs_counted; }
settled() { btrfs_settled "$@"; }
judge_stretch() { btrfs_judge_stretch "$@"; }
# during_reads FROM TO PAUSE SCRIPT: SCRIPT (with $i its round) run over
# and over, PAUSE seconds apart, while nobody reads FROM..TO-1; then a
# commit, and the sweeps that confirm what it held.
during_reads() {
        local pid script=$4
        (
                i=0
                while :; do
                        eval "$script"
                        i=$((i + 1))
                        sleep "$3"
                done
        ) &
        pid=$!
        BG_PIDS="$BG_PIDS $pid"
        reads "$1" "$2"
        kill $pid && wait $pid 2>/dev/null
        btrfs filesystem sync $M/vol
        settled
}
reads() { # FROM TO: each file of directories FROM..TO-1 read once, by nobody, 20 a second
        local i j
        for ((i = $1; i < $2; i++)); do
                for ((j = 0; j < PER_DIR; j++)); do echo "$M/vol/d$i/f$j"; done
        done | as_nobody "$top_builddir/tests/helpers/readload" 20 $((($2 - $1) * PER_DIR / 20)) >/dev/null
}

# --- The helper: seen by default, no CAP_SYS_ADMIN in the daemon.
check "by default: vol's snapshot seen" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.snapshots | .seen == \"all\" and .count == 1' >/dev/null"
cap_eff=$(sed -n 's/^CapEff:\t//p' /proc/$DAEMON_PID/status)
is "the daemon holds no CAP_SYS_ADMIN (bit 21)" "$((0x$cap_eff >> 21 & 1))" 0
helper=$(btrfs_helper_caps)
like "its helper process holds CAP_SYS_ADMIN and nothing else" "$helper" '^0000000000200000$'
check "a measured interval" wait_until 60 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.source == \"measured\"' >/dev/null"
settled

# --- A read pass, pure: measured, and learnt from.
j0=$(judged) c0=$(counted)
reads 0 4
settled
judge_stretch "a pure read pass" "$j0" "$c0"
check "the bytes an inode were learnt" wait_until 60 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.model_intervals >= 1' >/dev/null"
model=$(btrfs_of $M/vol | jq -r .bytes_per_inode)
diag "learnt: $model bytes an inode"

# --- Inflation: 11,700 empty files in other, nothing read.
j0=$(judged) c0=$(counted) m0=$(cat $META) u0=$(btrfs_of $M/vol | jq -r .unshared_bytes)
as_nobody sh -c "cd $M/other/nobody && mkdir f && cd f && seq 11700 | xargs touch" || bail "nobody's files"
btrfs filesystem sync $M/other
settled
m1=$(cat $META)
diag "11,700 files: the kernel's metadata +$((m1 - m0)) bytes, $(($(judged) - j0)) of them un-shared from the snapshot"
check "inflation: the files grew the metadata" test $((m1 - m0)) -gt 1000000
is "inflation: nothing was un-shared from the snapshot" "$(($(judged) - j0))" 0
u1=$(btrfs_of $M/vol | jq -r .unshared_bytes)
check "inflation: atimed's measured total did not move ($u0 -> $u1)" \
        awk -v a="$u0" -v b="$u1" -v n="$NODESIZE" 'BEGIN { exit !(b - a <= 2 * n) }'
judge_stretch "inflation" "$j0" "$c0"
is "inflation: the model did not move" "$(btrfs_of $M/vol | jq -r .bytes_per_inode)" "$model"

# The same, files made all along, while nobody reads 20 files a second.
j0=$(judged) c0=$(counted)
during_reads 4 10 0.5 'as_nobody sh -c "cd $M/other/nobody && mkdir g$i && cd g$i && seq 500 | xargs touch"'
judge_stretch "inflation with reads" "$j0" "$c0"
now=$(btrfs_of $M/vol | jq -r .bytes_per_inode)
check "inflation with reads: the model moved at most a step ($model -> $now)" \
        awk -v a="$model" -v b="$now" 'BEGIN { exit !(b <= 2 * a && b >= a / 2) }'

# --- Suppression: a subvolume made (and one deleted) each interval.
j0=$(judged) c0=$(counted)
# (a7f37d2 said "a btrfs snapshot was made or deleted during the interval")
made() { grep -c 'snapshot.* was made or deleted during the interval' $T/atimed.log; }
n0=$(made)
during_reads 10 16 $INTERVAL 'as_nobody btrfs -q subvolume create $M/other/nobody/sv$i >/dev/null
        [ $i -eq 0 ] || as_nobody btrfs -q subvolume delete $M/other/nobody/sv$((i - 1)) >/dev/null'
judge_stretch "suppression" "$j0" "$c0"
is "suppression: no interval was taken for a snapshot of vol" "$(made)" "$n0"

# --- Blinding: 100,000 subvolumes.
s0=$(date +%s.%N)
as_nobody "$MKSUBVOLS" $M/other/nobody 100000 b || bail "nobody's 100,000 subvolumes"
diag "100,000 subvolumes made in $(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"
btrfs filesystem sync $M/other
settled
b=$(btrfs_of $M/vol)
is "blinding: vol's snapshot still seen, all of them looked at" "$(echo "$b" | jq -r '[.snapshots.seen, .snapshots.count] | @tsv')" \
        "$(printf 'all\t1')"
j0=$(judged) c0=$(counted)
t0=$(date +%s)
reads 16 22
btrfs filesystem sync $M/vol
settled
judge_stretch "blinding" "$j0" "$c0"
check "blinding: looks kept their pace (every sweep of the stretch came)" sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .activity.at >= $t0' >/dev/null"
check "blinding: the advice still prices the space" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json recommend $M/vol | jq -e '.recommendations[0].reasons | any(test(\"un-share\"))' >/dev/null"
diag "blinding: the daemon's high-water memory $(sed -n 's/^VmHWM:[[:space:]]*//p' /proc/$DAEMON_PID/status)"

# --- A helper that does not answer (stopped, as an ioctl that never
# returns would hold one of its processes): the daemon is not held, each
# look gives up at its deadline and says so, the sweeps go on; answering
# again, the next look sees everything.
HELPER=$(btrfs_helper_pid)
check "the helper's process found" test -n "$HELPER"
kill -STOP ${HELPER:-no-helper}
t=$(($(date +%s) + 1))
check "a stopped helper: the snapshots said not seen, and why" wait_until 60 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.snapshots | .seen == \"none\" and (.reason | test(\"helper\"))' >/dev/null"
s0=$(date +%s%N)
ctl status >/dev/null
ms=$((($(date +%s%N) - s0) / 1000000))
check "the daemon answers meanwhile (GetStatus in ${ms} ms)" test $ms -lt 2000
check "and its sweeps go on" wait_until 60 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .activity.at >= $t + 12' >/dev/null"
like "the log says so, once" "$(grep -c "helper could not read the btrfs subvolumes (Connection timed out)" $T/atimed.log)" '^1$'
kill -CONT ${HELPER:-no-helper}
check "answering again: every subvolume seen" wait_until 60 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.snapshots | .seen == \"all\" and .count == 1' >/dev/null"
stop_daemon
is "atimed stops cleanly" "$STOP_STATUS" 0
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"

# --- The defaults: commit 30 s, a sampler interval of a minute.
umount $M/vol $M/other || bail "umount"
mount_both ""
mv $T/state $T/state-short
write_config '[probe] interval = 1h' '[mounts] exclude_paths = [/]' "[mounts] include_fstypes = btrfs" \
        ${ATIMED_TEST_EXTRA_CONF:+"$ATIMED_TEST_EXTRA_CONF"}
INTERVAL=60
start_daemon
check "defaults: a measured interval" wait_until 300 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.source == \"measured\"' >/dev/null"
j0=$(judged) c0=$(counted) u0=$(btrfs_of $M/vol | jq -r .unshared_bytes)
as_nobody sh -c "cd $M/other/nobody && mkdir h && cd h && seq 11700 | xargs touch" || bail "nobody's files"
reads 22 28
settled 35
judge_stretch "defaults: files made and read" "$j0" "$c0"
stop_daemon
is "atimed stops cleanly at the defaults" "$STOP_STATUS" 0
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"
umount $M/vol $M/other
losetup -d $LOOP
diag "done after $(($(date +%s) - T0))s"
done_testing
