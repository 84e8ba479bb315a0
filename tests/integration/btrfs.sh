#!/bin/bash
# btrfs.sh: on a btrfs of its own (a loop device in the test's namespace),
# a subvolume with a read-only and a writable snapshot: what daemon/btrfs.c
# finds (held against btrfs-progs), what atimed says where it cannot look
# (root without CAP_SYS_ADMIN), and the metadata atime un-shares from the
# snapshot under relatime, with the kernel as judge: the filesystem's own
# allocation/metadata/bytes_used over the read pass, and where tracefs is
# there the tree blocks btrfs:btrfs_cow_block says were copied. Nothing
# through a noatime view. Then a pass the sample sees writes in: its bytes
# modelled (the inodes written since the snapshot times the bytes each, as
# the measured pass taught), the total since the snapshot judged by the
# kernel's growth, within 25% and inside its 95% interval; the advice
# turns to noatime for the space, and not where the configuration says
# atime is read; a writable snapshot read through a mount of its own; the
# filesystem sampled through the snapshotted subvolume, even where its
# root is the longer, and moved when another gets a newer snapshot. See
# atimed(8), BTRFS.
. "$top_srcdir/tests/integration/lib.sh"
command -v mkfs.btrfs >/dev/null || skip_all "needs mkfs.btrfs (btrfs-progs)"
enter_namespace
T0=$(date +%s)
FACTS=$top_builddir/tests/helpers/btrfs-facts
SCHEMA="$top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink"
M=$T/mnt
NDIRS=40
PER_DIR=100 # 4,000 files
INTERVAL=2

modprobe btrfs 2>/dev/null
truncate -s 1G $T/b.img && mkfs.btrfs -q -f $T/b.img >/dev/null 2>&1 || bail "mkfs.btrfs"
LOOP=$(losetup -f --show $T/b.img) || bail "losetup"
DEV=${LOOP#/dev/}
mkdir -p $M/top $M/vol $M/vol-noatime $M/lone
mount $LOOP $M/top || skip_all "cannot mount btrfs here"
btrfs -q subvolume create $M/top/vol >/dev/null && btrfs -q subvolume create $M/top/lone >/dev/null || bail "subvolume create"
make_tree $M/top/vol/a $NDIRS $PER_DIR # the measured pass's
make_tree $M/top/vol/b $NDIRS $PER_DIR # the modelled pass's
make_tree $M/top/lone $NDIRS $PER_DIR # the same, never snapshotted
list_tree $M/top/lone $NDIRS $PER_DIR | xargs touch -a -d '2 days ago' || bail "touch -a"
# A relatime "day": atimes set back before the snapshot is taken, so the
# next read writes each of them, and the leaves the snapshot shares are
# copied.
{ list_tree $M/top/vol/a $NDIRS $PER_DIR; list_tree $M/top/vol/b $NDIRS $PER_DIR; } | xargs touch -a -d '2 days ago' &&
        find $M/top/vol -type d -exec touch -a -d '2 days ago' {} + || bail "touch -a"
btrfs -q subvolume snapshot -r $M/top/vol $M/top/snap-ro >/dev/null &&
        btrfs -q subvolume snapshot $M/top/vol $M/top/snap-rw >/dev/null || bail "snapshot"
btrfs filesystem sync $M/top
FSID=$(ls /sys/fs/btrfs | while read -r d; do [ -e /sys/fs/btrfs/$d/devices/$DEV ] && echo $d; done)
[ -n "$FSID" ] || bail "no sysfs directory for $DEV"
META=/sys/fs/btrfs/$FSID/allocation/metadata/bytes_used

# --- The module against btrfs-progs, on the top level still mounted.
fact() { "$FACTS" $M/top/vol $DEV | sed -n "s/^$1=//p"; }
progs_snaps=$(btrfs subvolume show $M/top/vol | sed -n '/Snapshot(s):/,$p' | tail -n +2 | grep -c .)
is "the snapshots of the subvolume: as many as btrfs-progs lists" "$(fact snapshots)" "$progs_snaps"
is "and two of them" "$(fact snapshots)" 2
ro=0
for s in snap-ro snap-rw; do
        [ "$(btrfs property get -ts $M/top/$s ro)" = "ro=true" ] && ro=$((ro + 1))
done
is "read-only ones: as btrfs-progs says" "$(fact read_only)" "$ro"
otimes=$(for s in snap-ro snap-rw; do date -d "$(btrfs subvolume show $M/top/$s | sed -n 's/^[[:space:]]*Creation time:[[:space:]]*//p')" +%s; done | sort -n)
newest=$(echo "$otimes" | tail -1) oldest=$(echo "$otimes" | head -1)
is "the newest one's creation time: btrfs-progs' (to the second)" "$(fact newest_otime)" "$newest"
is "the subvolume's uuid: btrfs-progs'" "$(fact uuid)" "$(btrfs subvolume show $M/top/vol | sed -n 's/^[[:space:]]*UUID:[[:space:]]*//p')"
is "its metadata bytes: sysfs's" "$(fact metadata_bytes_used)" "$(cat $META)"
is "root with CAP_SYS_ADMIN sees every subvolume" "$(fact sight)" all
out=$(ATIMED_FACTS_LISTER=helper "$FACTS" $M/top/vol $DEV)
like "so does atimed's helper, forked as the daemon forks it" "$(echo "$out" | grep -E '^(sight|helper_error|snapshots|evidence)=' | tr '\n' ' ')" \
        'sight=all helper_error= snapshots=2 evidence=1'
like "libbtrfsutil, as root with it, too, but with no evidence" \
        "$(ATIMED_FACTS_LISTER=util "$FACTS" $M/top/vol $DEV | grep -E '^(sight|snapshots|evidence)=' | tr '\n' ' ')" \
        'sight=all snapshots=2 evidence=0'

out=$(capsh --drop=cap_sys_admin -- -c "$FACTS $M/top/vol $DEV")
like "root without CAP_SYS_ADMIN: no snapshot seen, and why" "$(echo "$out" | grep -E '^(sight|sight_error|snapshots)=' | tr '\n' ' ')" \
        'sight=none sight_error=Operation not permitted snapshots=0'
like "but the bytes all the same" "$out" "have_space=1"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$FACTS" $M/top/vol $DEV)
like "another user: only what lies beneath (no snapshot here)" "$(echo "$out" | grep -E '^(sight|snapshots)=' | tr '\n' ' ')" \
        'sight=beneath snapshots=0'
like "a missing sysfs: said, not fatal" "$("$FACTS" $M/top/vol $DEV $T/nosys)" "space_error=No such file or directory"

# --- The daemon, on the subvolume alone (relatime) and a noatime view of it.
umount $M/top
# A commit every 2 s (30 s by default): the writes of atimed's first
# probe are committed, and its taint lifted, within a few intervals.
mount -o relatime,subvol=vol,commit=2 $LOOP $M/vol && mount -o noatime,subvol=vol $LOOP $M/vol-noatime &&
        mount -o relatime,subvol=lone $LOOP $M/lone || bail "mount subvol"

# Without its helper ([btrfs] snapshot_search = no) atimed, which never
# keeps CAP_SYS_ADMIN, sees no snapshot, and says so.
write_config "[sampler] interval = ${INTERVAL}s" '[sampler] sample_size = 2000' '[probe] interval = 1h' \
        '[btrfs] snapshot_search = no'
start_daemon
btrfs_of() { ctl --json status | jq -c --arg t "$1" '.mounts[] | select(.target == $t) | .btrfs'; }
check "atimed looks at the subvolume" wait_until 30 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.metadata_bytes_used' >/dev/null"
b=$(btrfs_of $M/vol)
is "root without its helper: snapshots not seen" "$(echo "$b" | jq -r '[.snapshots.seen, (.snapshots.count | tostring)] | @tsv')" "$(printf 'none\tnull')"
like "and it says why" "$(echo "$b" | jq -r .snapshots.reason)" "snapshot_search = no.*CAP_SYS_ADMIN"
like "the log says so once" "$(grep -c 'snapshots not looked for' $T/atimed.log)" '^1$'
is "the bytes are there all the same" "$(echo "$b" | jq -r '.metadata_bytes_used | type')" number
is "the subvolume, from the mount" "$(echo "$b" | jq -r '[.subvolume.id, .subvolume.path] | @tsv')" "$(printf '256\t/vol')"
check "GetStatus still matches the interface description" sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetStatus '{}' | $SCHEMA GetStatus"
stop_daemon
is "that atimed stops cleanly" "$STOP_STATUS" 0
diag "the module and the first daemon done after $(($(date +%s) - T0))s"

# The default configuration from here on: the helper reads the subvolumes.
CONF=("[sampler] interval = ${INTERVAL}s" '[sampler] sample_size = 2000' '[probe] interval = 1h'
        "[mounts] exclude_paths += $T/hidden" "[store] rings = ${INTERVAL}s:1h, 1min:6h")
write_config "${CONF[@]}"
start_daemon
since=$(date +%s)
# Two looks make an interval; the walk and the probes come first.
check "by default: a measured interval" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.source == \"measured\"' >/dev/null"
b=$(btrfs_of $M/vol)
is "both snapshots seen, one read-only" "$(echo "$b" | jq -r '[.snapshots.seen, .snapshots.count, .snapshots.read_only] | @tsv')" \
        "$(printf 'all\t2\t1')"
age=$(echo "$b" | jq -r .snapshots.newest_age_s)
check "the newest one's age: since btrfs-progs' creation time (${age}s)" \
        test "$age" -ge $((since - newest - INTERVAL - 5)) -a "$age" -le $(($(date +%s) - newest + 1))
like "the uuid too" "$(echo "$b" | jq -r .subvolume.uuid)" '^[0-9a-f-]{36}$'

cap_eff=$(sed -n 's/^CapEff:\t//p' /proc/$DAEMON_PID/status)
is "and the daemon holds no CAP_SYS_ADMIN (bit 21) to see them" "$((0x$cap_eff >> 21 & 1))" 0
# measured_total: atimed's un-shared bytes so far. settle: sweeps past
# now, so that the interval holding the last commit is measured: it is
# held until two commits more, or a commit period and 5 s without one
# (nothing was left to commit) have confirmed it (btrfs.h).
measured_total() { btrfs_of $M/vol | jq -r .unshared_bytes; }
settle() {
        local t=$(($(date +%s) + 1))
        # (Bounded, but with room for a host whose CPUs are all taken: a
        # settle that gave up silently read the total before the interval
        # was measured, and a pass looked like nothing un-shared.)
        wait_until 120 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .activity.at // 0 | . >= $t + 3 * $INTERVAL + 7' >/dev/null" ||
                diag "settle: no interval ended past $((t + 3 * INTERVAL + 7)) within 120 s"
}
settle
diag "measuring from $(($(date +%s) - T0))s"

# A pass through the noatime view: nothing written, nothing un-shared.
j0=$(cat $META) a0=$(measured_total)
grep -r zzz $M/vol-noatime >/dev/null
btrfs filesystem sync $M/vol
settle
j1=$(cat $META) a1=$(measured_total)
is "noatime: the kernel's metadata did not grow" "$((j1 - j0))" 0
is "noatime: atimed measured nothing un-shared" "$(awk -v a=$a0 -v b=$a1 'BEGIN { print b - a }')" 0

# A second judge, where tracefs is there: the tree blocks of the
# subvolume (root 256) that the pass copied away from (lib.sh).
NODESIZE=$(cat /sys/fs/btrfs/$FSID/nodesize)
btrfs_cow_start pass 256 && cow=1 || { cow=0; diag "no tracefs event btrfs:btrfs_cow_block here: the bytes_used judge alone"; }

# The same pass under relatime: each file's and directory's atime is
# written once, and every leaf the snapshot shares is copied.
grep -r zzz $M/vol/a >/dev/null
btrfs filesystem sync $M/vol
[ $cow = 1 ] && judge_off pass && cowbytes=$(btrfs_cow_bytes pass $NODESIZE $FSID)
settle
j2=$(cat $META) a2=$(measured_total)
judge=$((j2 - j1))
got=$(awk -v a=$a1 -v b=$a2 'BEGIN { print b - a }')
diag "relatime pass over $((NDIRS * PER_DIR)) files: kernel +$judge bytes of metadata, atimed +$got"
diag "the model: $(btrfs_of $M/vol | jq -c '[.bytes_per_inode, .model_intervals, .since_newest_snapshot]')"
check "relatime: the kernel's metadata grew (the snapshot's leaves were copied)" test "$judge" -gt $((100 * NDIRS))
check "atimed's un-shared bytes within 25% of the kernel's" \
        awk -v g="$got" -v j="$judge" 'BEGIN { exit !(g >= 0.75 * j && g <= 1.25 * j) }'
if [ $cow = 1 ]; then
        diag "btrfs_cow_block: $cowbytes bytes of the subvolume's tree copied away from"
        check "and within 25% of the blocks btrfs_cow_block says were copied" \
                awk -v g="$got" -v j="$cowbytes" 'BEGIN { exit !(j > 0 && g >= 0.75 * j && g <= 1.25 * j) }'
fi
b=$(btrfs_of $M/vol)
check "and a rate per day beside them" test "$(echo "$b" | jq -r '.unshared_bytes_per_day | type')" = number
# Learnt once the reads' run is over: an interval without reads a commit
# period and the slack after them (btrfs-meter.h).
check "the model learned the bytes an inode costs here" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs | .bytes_per_inode > 0 and .model_intervals >= 1' >/dev/null"
# The same pass on a subvolume no snapshot shares: each leaf is copied
# too, and the old one freed at the commit: nothing stays.
grep -r zzz $M/lone >/dev/null
btrfs filesystem sync $M/lone
settle
j3=$(cat $META) a3=$(measured_total)
diag "relatime pass over the subvolume without snapshot: kernel $((j3 - j2)) bytes, atimed $(awk -v a=$a2 -v b=$a3 'BEGIN { print b - a }')"
check "no snapshot: the kernel's metadata did not grow (within a tenth of the snapshotted pass)" \
        test $((j3 - j2)) -le $((judge / 10)) -a $((j3 - j2)) -ge $((-judge / 10))
check "nor atimed's un-shared bytes" awk -v a=$a2 -v b=$a3 -v j=$judge 'BEGIN { exit !(b - a <= j / 10) }'
is "its mount: no snapshot of its own" "$(btrfs_of $M/lone | jq -r '[.snapshots.seen, .snapshots.count] | @tsv')" "$(printf 'all\t0')"
check "no space reason on the subvolume no snapshot shares" sh -c "$ATIMECTL --socket $T/sock --json recommend $M/lone | jq -e '.recommendations[0].reasons | all(test(\"un-share\") | not)' >/dev/null"
umount $M/lone
is "the noatime view shows the same filesystem's bytes" "$(btrfs_of $M/vol-noatime | jq -r .unshared_bytes)" "$(echo "$b" | jq -r .unshared_bytes)"

# judge_since SINCE JUDGE: atimed's since_newest_snapshot (JSON) against
# the kernel's metadata growth since the snapshot: modelled, within 25%,
# and inside its 95% interval.
judge_since() {
        is "the total since the snapshot is modelled" "$(echo "$1" | jq -r .rate_source)" modelled
        check "within 25% of the kernel's growth since the snapshot" \
                awk -v g="$(echo "$1" | jq -r .bytes)" -v j="$2" 'BEGIN { exit !(j > 0 && g >= 0.75 * j && g <= 1.25 * j) }'
        check "its 95% interval holds the kernel's" \
                awk -v lo="$(echo "$1" | jq -r .lo)" -v hi="$(echo "$1" | jq -r .hi)" -v j="$2" 'BEGIN { exit !(lo <= j && j <= hi) }'
}

# The second tree read between writes the sample sees (the mtimes of a
# hundred of its files, a quarter of them sampled): the interval that
# holds the reads is impure, and their bytes are the model's.
touch_b() { touch -m $M/vol/b/d0/f*; }
touch_b && grep -r zzz $M/vol/b >/dev/null && touch_b
btrfs filesystem sync $M/vol
settle
j4=$(cat $META)
since_judge=$((j2 - j1 + j4 - j3))
s=$(btrfs_of $M/vol | jq -c .since_newest_snapshot)
diag "since the snapshot: kernel +$since_judge bytes; atimed $s"
judge_since "$s" $since_judge

# The advice: noatime, for the space; not where atime is read.
r=$(ctl --json recommend $M/vol | jq -c .recommendations[0])
diag "advice: $(echo "$r" | jq -c '[.action, .reasons, .saving]')"
is "relatime on a snapshotted btrfs: noatime" "$(echo "$r" | jq -r .action)" noatime
like "for the space, in human units, per day" "$(echo "$r" | jq -r '.reasons[0]')" "un-share [0-9.]+ [KMG]iB/day .*of metadata"
check "the saving in bytes a day" sh -c "echo '$r' | jq -e '.saving.btrfs_metadata_bytes_per_day > 0' >/dev/null"
like "atimectl status says them in a line" "$(ctl status)" "^btrfs $M/vol: atime un-shares [0-9.]+ [KMG]?i?B/day .*since the newest \\(modelled\\)"
check "GetHistory carries the bytes a day, and matches its description" sh -c \
        "$ATIMECTL --socket $T/sock --json history $M/vol | tee $T/hist.json | $SCHEMA GetHistory && jq -e '.btrfs.unshared_bytes_per_day > 0 and .btrfs.observed_s > 0' $T/hist.json >/dev/null"
like "the metrics carry the bytes" "$(ctl metrics)" "^atimed_btrfs_unshared_since_snapshot_bytes\\{.*mountpoint=\"$M/vol\""

# Each history point carries its intervals' bytes, and a restart keeps
# them (the state file, format 3) and the model learned (history.changes).
pts_of() { jq -c --argjson l "$2" '[.points[] | select(.unshared_bytes_per_day != null and .t < $l) | [.t, .unshared_bytes_per_day, .unshared_source]]' "$1"; }
ctl --json history --resolution ${INTERVAL}s $M/vol >$T/hist1.json
last=$(jq '.points[-1].t' $T/hist1.json)
pts=$(pts_of $T/hist1.json $last)
diag "points with bytes before the restart: $(echo "$pts" | jq length)"
check "the history's points carry the bytes a day: measured ones, and the modelled pass" \
        sh -c "echo '$pts' | jq -e 'any(.[]; .[2] == \"measured\" and .[1] > 0) and any(.[]; .[2] == \"modelled\" and .[1] > 0)' >/dev/null"
like "atimectl history shows them" "$(ctl history --resolution ${INTERVAL}s $M/vol)" "btrfs metadata un-shared from snapshots by atime, per day"
model=$(btrfs_of $M/vol | jq -c '[.bytes_per_inode, .model_intervals]')
stop_daemon
is "a restart: atimed stops cleanly" "$STOP_STATUS" 0
start_daemon
# Its history is served once the filesystem is identified again.
check "after a restart, the history is there" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json history --resolution ${INTERVAL}s $M/vol >$T/hist2.json && jq -e '.points | length > 0' $T/hist2.json"
is "after it, the points keep their bytes" "$(pts_of $T/hist2.json $last)" "$pts"
check "and the model is the one learned before ($model), not learned again" wait_until 30 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -c '.mounts[] | select(.target == \"$M/vol\") | .btrfs | [.bytes_per_inode, .model_intervals]')\" = '$model' ]"
check "GetHistory after the restart matches its description" sh -c "$SCHEMA GetHistory <$T/hist2.json"
settle
write_config "${CONF[@]}" "[mount:$M/vol] needs_atime = relatime"
ctl reload >/dev/null || bail "reload"
r=$(ctl --json recommend $M/vol | jq -c .recommendations[0])
is "where atime is read: the consumer wins" "$(echo "$r" | jq -r '.action + " " + .recommended.atime')" "keep relatime"
like "and the advice says what keeping it costs" "$(echo "$r" | jq -r '.reasons | join(" ")')" "keeping atime costs [0-9.]+ [KMG]iB/day"
write_config "${CONF[@]}"
ctl reload >/dev/null || bail "reload"

# A writable snapshot read through a mount of its own: its leaves are
# un-shared from its origin's, and the filesystem's bytes measure it.
mkdir -p $M/rw && mount -o relatime,subvol=snap-rw $LOOP $M/rw || bail "mount the writable snapshot"
# Its probe writes: the intervals until that is committed are impure, and
# the sample (of the mount the filesystem is walked through) sees none of
# the snapshot's files, so the model could not price its reads.
check "the new mount is probed" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/rw\") | .probe.verified' >/dev/null"
settle
check "and an interval measured after it" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.source == \"measured\"' >/dev/null"
j5=$(cat $META) a5=$(measured_total)
grep -r zzz $M/rw/a >/dev/null
btrfs filesystem sync $M/rw
settle
j6=$(cat $META) a6=$(measured_total)
got=$(awk -v a=$a5 -v b=$a6 'BEGIN { print b - a }')
diag "a writable snapshot read: kernel +$((j6 - j5)) bytes, atimed +$got"
check "a writable snapshot read: the kernel's metadata grew" test $((j6 - j5)) -gt $((100 * NDIRS))
check "atimed's measured bytes within 25% of it" \
        awk -v g="$got" -v j="$((j6 - j5))" 'BEGIN { exit !(g >= 0.75 * j && g <= 1.25 * j) }'
like "its mount is a snapshot that shares" "$(ctl --json recommend $M/rw | jq -r '.recommendations[0].reasons[0]')" "un-share"
umount $M/rw

# A snapshot made mid-interval: said, and its interval not counted.
# (Inside the subvolume, as snapper does: a mount of the top level would
# be another mount for atimed to sample the filesystem through.)
btrfs -q subvolume snapshot -r $M/vol $M/vol/.snap-2 >/dev/null || bail "snapshot 2"
check "a snapshot made mid-interval is seen" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.snapshots.count == 3' >/dev/null"
like "and said in the log" "$(cat $T/atimed.log)" "a snapshot of a btrfs subvolume mounted here was made or deleted during the interval"
# The rhythm: the median of the gaps between the three snapshots' creations.
t3=$(date -d "$(btrfs subvolume show $M/vol/.snap-2 | sed -n 's/^[[:space:]]*Creation time:[[:space:]]*//p')" +%s)
want=$(( (t3 - oldest) / 2 ))
[ $want -gt 0 ] || want=null
is "the snapshot rhythm: the median gap between their creations" "$(btrfs_of $M/vol | jq -r .snapshots.period_s)" "$want"
check "GetStatus matches the interface description" sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetStatus '{}' | $SCHEMA GetStatus"

# The top level mounted too: it shows most of the filesystem, but atimed
# goes on sampling through the subvolume snapshots share (where atime
# costs space), and finds the top level's facts among the subvolumes it
# lists.
mount -o subvolid=5 $LOOP $M/top || bail "mount the top level"
check "the top level's own facts, from the list" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/top\") | .btrfs.subvolume.uuid != null' >/dev/null"
is "the subvolume's snapshots" "$(btrfs_of $M/vol | jq -r '[.snapshots.seen, .snapshots.count, .snapshots.read_only, .sampled] | @tsv')" \
        "$(printf 'all\t3\t2\ttrue')"
is "the top level has none of its own, is not deleted, and is not sampled" \
        "$(btrfs_of $M/top | jq -r '[.subvolume.id, .snapshots.seen, .snapshots.count, .subvolume.deleted, .sampled, (.model_note // "null")] | @tsv')" \
        "$(printf '5\tall\t0\tfalse\tfalse\tnull')"

# Quotas: off, atimed shows no qgroup and turns nothing on; on (by the
# operator), the subvolume's qgroup's exclusive bytes and its snapshots'
# as sysfs has them.
is "quotas off: no qgroups shown" "$(btrfs_of $M/vol | jq -r .qgroups)" null
check "and atimed did not turn them on" test ! -e /sys/fs/btrfs/$FSID/qgroups
btrfs quota enable $M/top && btrfs quota rescan -w $M/top >/dev/null || bail "quota enable"
Q=/sys/fs/btrfs/$FSID/qgroups
snap_excl() { local s=0 id; for id in $(btrfs subvolume list -s -o $M/top | awk '{ print $2 }'); do s=$((s + $(cat $Q/0_$id/exclusive))); done; echo $s; }
check "quotas on: the subvolume's exclusive bytes, as sysfs has them" wait_until 30 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/vol\") | .btrfs.qgroups.exclusive')\" = \"\$(cat $Q/0_256/exclusive)\" ]"
q=$(btrfs_of $M/vol | jq -c .qgroups)
diag "qgroups: $q; sysfs: vol $(cat $Q/0_256/exclusive), snapshots $(snap_excl)"
check "and its snapshots' together" sh -c "echo '$q' | jq -e '.snapshots_exclusive > 0' >/dev/null"

# A snapshot deleted, then the subvolume itself under its mount, through a
# mount of the top level atimed does not track: said, and nothing else
# changes (the mount lives on until unmounted).
umount $M/top && mkdir -p $T/hidden && mount -o subvolid=5 $LOOP $T/hidden || bail "mount the top level aside"
btrfs -q subvolume delete $M/vol/.snap-2 >/dev/null && btrfs -q subvolume delete $T/hidden/vol >/dev/null || bail "subvolume delete"
umount $T/hidden
check "a subvolume deleted under atimed: its mount says so" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/vol\") | .btrfs.subvolume.deleted' >/dev/null"
is "its snapshots stay: the two left" "$(btrfs_of $M/vol | jq -r .snapshots.count)" 2
like "the log says so, once" "$(grep -c 'btrfs subvolume (id 256) was deleted' $T/atimed.log)" '^1$'
check "the atime figures go on" wait_until 30 swept_since $M/vol $(($(date +%s) + 1))
hp=$(btrfs_helper_pid)
check "the helper is the daemon's child ($hp)" test -n "$hp"
stop_daemon
is "atimed stops cleanly" "$STOP_STATUS" 0
check "the helper it forked was reaped before it exited" sh -c "! kill -0 ${hp:-0} 2>/dev/null"
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"
umount $M/vol $M/vol-noatime

# A busy host: a writer touches files of the tree all along, so that no
# interval is pure and nothing teaches the model; a fresh atimed (no state
# kept) prices the reads with the cost table's starting value, modelled,
# with its wide interval, which holds the kernel's growth.
mkdir -p $T/top2 $M/busy && mount -o subvolid=5 $LOOP $T/top2 || bail "mount the top level"
btrfs -q subvolume create $T/top2/busy >/dev/null || bail "subvolume busy"
make_tree $T/top2/busy $NDIRS $PER_DIR
list_tree $T/top2/busy $NDIRS $PER_DIR | xargs touch -a -d '2 days ago' && find $T/top2/busy -type d -exec touch -a -d '2 days ago' {} + ||
        bail "touch -a"
btrfs -q subvolume snapshot -r $T/top2/busy $T/top2/busy-snap >/dev/null || bail "snapshot busy"
btrfs filesystem sync $T/top2
umount $T/top2
mount -o relatime,subvol=busy,commit=2 $LOOP $M/busy || bail "mount busy"
mv $T/state $T/state-before-busy
write_config "${CONF[@]}"
start_daemon
busy_of() { btrfs_of $M/busy; }
check "the busy subvolume is looked at, its snapshot seen" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/busy\") | .btrfs.snapshots.count == 1' >/dev/null"
# The writer: an mtime a file of each directory, all along (a load, not a wait).
(while :; do touch -m $M/busy/d*/f0; sleep 0.2; done) &
WRITER=$!
busy_swept() { $ATIMECTL --socket $T/sock --json status | jq -e --argjson t "$1" '.mounts[] | select(.target == "'$M/busy'") | .activity.at // 0 | . >= $t' >/dev/null; }
wait_until 30 busy_swept $(($(date +%s) + 2 * INTERVAL + 1))
j7=$(cat $META)
grep -r zzz $M/busy >/dev/null
btrfs filesystem sync $M/busy
wait_until 30 busy_swept $(($(date +%s) + 2 * INTERVAL + 1))
j8=$(cat $META)
b=$(busy_of)
kill $WRITER && wait $WRITER 2>/dev/null
diag "busy host: kernel +$((j8 - j7)) bytes; atimed $(echo "$b" | jq -c '[.source, .model_intervals, .table_bytes_per_inode, .since_newest_snapshot]')"
is "no interval was pure: the model learned nothing" "$(echo "$b" | jq -r '.model_intervals')" 0
is "the cost table's starting value is in use" "$(echo "$b" | jq -r '.table_bytes_per_inode')" 537
is "and its value for a directory" "$(echo "$b" | jq -r '.table_bytes_per_dir')" 1300
is "the total since the snapshot is modelled all the same" "$(echo "$b" | jq -r .since_newest_snapshot.rate_source)" modelled
check "its wide interval holds the kernel's growth" \
        awk -v lo="$(echo "$b" | jq -r .since_newest_snapshot.lo)" -v hi="$(echo "$b" | jq -r .since_newest_snapshot.hi)" -v j="$((j8 - j7))" \
        'BEGIN { exit !(j > 0 && lo <= j && j <= hi && hi >= 4 * lo) }'
check "the advice rests on it, said modelled" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json recommend $M/busy | jq -e '.recommendations[0].reasons[0] | test(\"un-share .*modelled\")'"
# A daemon killed outright cannot reap: its helper and the processes
# serving it are killed with it (PR_SET_PDEATHSIG), never left holding
# CAP_SYS_ADMIN for no one.
hp=$(btrfs_helper_pid)
check "the helper found before kill -9 ($hp)" test -n "$hp"
kids=$(pgrep -P ${hp:-0} | tr '\n' ' ')
kill -KILL $DAEMON_PID
wait $DAEMON_PID 2>/dev/null
check "kill -9 of the daemon: its helper goes with it" wait_until 10 sh -c "! kill -0 ${hp:-0} 2>/dev/null"
check "and so do the processes serving it (${kids:-none})" wait_until 10 sh -c "for k in $kids; do ! kill -0 \$k 2>/dev/null || exit 1; done"
start_daemon
stop_daemon
is "atimed stops cleanly after the busy host" "$STOP_STATUS" 0
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"
umount $M/busy

# nodiratime: many small directories, a snapshot, and a walk that reads
# the directories alone (find, as ls -R does): what atime un-shares is
# the directories' leaves, nodiratime saves all of it and keeps files'
# atime, so it is the advice; atimectl writes it to fstab and remounts.
NSMALL=1500
mount -o subvolid=5 $LOOP $T/top2 || bail "mount the top level"
btrfs -q subvolume create $T/top2/dirs >/dev/null || bail "subvolume dirs"
make_tree $T/top2/dirs $NSMALL 2
# The writer's 40 files, made last: their leaves are the tree's last, apart
# from the small directories' (see below).
make_tree $T/top2/dirs/w 1 40
# The files' atimes too: one made in the snapshot's second would count as
# written since it (the snapshot's creation time is in whole seconds).
{ list_tree $T/top2/dirs $NSMALL 2; list_tree $T/top2/dirs/w 1 40; } | xargs touch -a -d '2 days ago' &&
        find $T/top2/dirs -type d -exec touch -a -d '2 days ago' {} + || bail "touch -a"
btrfs -q subvolume snapshot -r $T/top2/dirs $T/top2/dirs-snap >/dev/null || bail "snapshot dirs"
btrfs filesystem sync $T/top2
umount $T/top2
mkdir -p $M/dirs && mount -o relatime,subvol=dirs,commit=2 $LOOP $M/dirs || bail "mount dirs"
printf 'UUID=%s\t%s\tbtrfs\trelatime,subvol=dirs\t0 0\n' "$(blkid -s UUID -o value $LOOP)" "$M/dirs" >$T/fstab
start_daemon
# A sweep ended after t, of the whole walk's sample (a first walk's part
# would extrapolate what it has not seen).
dirs_swept() { $ATIMECTL --socket $T/sock --json status | jq -e --argjson t "$1" '.mounts[] | select(.target == "'$M/dirs'") | .activity | (.at // 0) >= $t and (.coverage // 1) >= 1' >/dev/null; }
check "the subvolume of small directories is looked at, its snapshot seen" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/dirs\") | .btrfs.snapshots.count == 1' >/dev/null"
# A writer all along (the mtimes of 40 files, as on the busy host): no
# interval is pure, so the model learns nothing and the directories are
# priced at the cost table's starting value for a directory, which the
# kernel judges. (Its first writes un-share its files' leaves before the
# judge's start: those of a directory of their own, made last, so as few
# of the small directories' as can be.)
(while :; do touch -m $M/dirs/w/d0/f*; sleep 0.2; done) &
WRITER=$!
wait_until 30 dirs_swept $(($(date +%s) + 2 * INTERVAL + 1))
j9=$(cat $META)
find $M/dirs >/dev/null
btrfs filesystem sync $M/dirs
wait_until 30 dirs_swept $(($(date +%s) + 2 * INTERVAL + 1))
j10=$(cat $META)
b=$(btrfs_of $M/dirs)
kill $WRITER && wait $WRITER 2>/dev/null
d=$(echo "$b" | jq -c '[.source, .model_intervals, .table_bytes_per_inode, .since_newest_snapshot]')
diag "$NSMALL directories read by find: kernel +$((j10 - j9)) bytes; atimed $d"
check "the kernel's metadata grew: the directories' leaves were copied" test $((j10 - j9)) -gt $((100 * NSMALL))
is "no interval was pure: the model learned nothing" "$(echo "$b" | jq -r .model_intervals)" 0
# The cost table's bytes a directory (1,300), not a file's (537: 0.41 of
# the kernel's here).
judge_since "$(echo "$b" | jq -c .since_newest_snapshot)" $((j10 - j9))
check "the advice is nodiratime" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json recommend $M/dirs | jq -e '.recommendations[0].action == \"nodiratime\"'"
r=$(ctl --json recommend $M/dirs | jq -c .recommendations[0])
diag "advice: $(echo "$r" | jq -c '[.action, .recommended.options, .reasons, .saving.btrfs_metadata_bytes_per_day]')"
is "relatime kept, with nodiratime" "$(echo "$r" | jq -r '[.recommended.atime, .recommended.nodiratime, .recommended.options] | @tsv')" \
        "$(printf 'relatime\ttrue\trelatime,nodiratime')"
like "its reason: the directories' share, in bytes a day" "$(echo "$r" | jq -r '.reasons[0]')" \
        "directories are 100% of the inodes .*nodiratime saves their share .*[0-9.]+ [KMG]iB/day"
echo "$r" >$T/dirs-advice.json
check "the saving in bytes a day" jq -e '.saving.btrfs_metadata_bytes_per_day > 0' $T/dirs-advice.json
check "GetRecommendations matches its description" sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetRecommendations '{}' | $SCHEMA GetRecommendations"
check "atimectl fstab writes the advice" sh -c "$ATIMECTL --socket $T/sock fstab --file $T/fstab --write >$T/fstab.out 2>&1"
is "as relatime,nodiratime" "$(awk '{ print $4 }' $T/fstab)" "relatime,subvol=dirs,nodiratime"
check "atimectl remount applies it" sh -c "$ATIMECTL --socket $T/sock remount $M/dirs >$T/remount.out 2>&1"
like "the mount has nodiratime now" "$(findmnt -no VFS-OPTIONS $M/dirs)" "nodiratime"
check "and the advice turns to keep it" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json recommend $M/dirs | jq -e '.recommendations[0].action != \"nodiratime\" and .recommendations[0].current.nodiratime'"
stop_daemon
is "atimed stops cleanly after the directories" "$STOP_STATUS" 0
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"
umount $M/dirs

# The place: a snapper layout, / a subvolume deep in the tree that a
# snapshot shares, /home one no snapshot shares and the shorter root.
# atimed samples the filesystem through the snapshotted one, for that is
# where reads un-share bytes and what the model prices: a measured pass
# teaches it, a pass between writes the sample sees is modelled, judged by
# the kernel's growth as above. Then /home gets a newer snapshot: the
# place moves there, the model learned stays, and / says its bytes are no
# longer modelled.
mount -o subvolid=5 $LOOP $T/top2 || bail "mount the top level"
mkdir -p $T/top2/a/deeper && btrfs -q subvolume create $T/top2/a/deeper/root >/dev/null &&
        btrfs -q subvolume create $T/top2/home >/dev/null || bail "subvolumes a/deeper/root, home"
make_tree $T/top2/a/deeper/root/x $NDIRS $PER_DIR
make_tree $T/top2/a/deeper/root/y $NDIRS $PER_DIR
make_tree $T/top2/home $NDIRS $PER_DIR
{ list_tree $T/top2/a/deeper/root/x $NDIRS $PER_DIR; list_tree $T/top2/a/deeper/root/y $NDIRS $PER_DIR; } |
        xargs touch -a -d '2 days ago' && find $T/top2/a/deeper/root -type d -exec touch -a -d '2 days ago' {} + ||
        bail "touch -a"
btrfs -q subvolume snapshot -r $T/top2/a/deeper/root $T/top2/root-1 >/dev/null || bail "snapshot root"
btrfs filesystem sync $T/top2
ROOTID=$(btrfs inspect-internal rootid $T/top2/a/deeper/root) HOMEID=$(btrfs inspect-internal rootid $T/top2/home)
umount $T/top2
mkdir -p $M/root $M/home && mount -o relatime,subvol=a/deeper/root,commit=2 $LOOP $M/root &&
        mount -o relatime,subvol=home,commit=2 $LOOP $M/home || bail "mount root, home"
mv $T/state $T/state-before-place
write_config "${CONF[@]}"
start_daemon
check "the log says the snapshotted subvolume is sampled, and why" wait_until 30 sh -c \
        "grep -q 'btrfs sampled through subvolume $ROOTID (root /a/deeper/root): 1 snapshot share its tree' $T/atimed.log"
check "and a measured interval through it" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/root\") | .btrfs.source == \"measured\"' >/dev/null"
is "the snapshotted subvolume: its snapshot, sampled" "$(btrfs_of $M/root | jq -r '[.subvolume.id, .snapshots.seen, .snapshots.count, .sampled] | @tsv')" \
        "$(printf '%s\tall\t1\ttrue' $ROOTID)"
is "the other: no snapshot of its own, not sampled, no note" \
        "$(btrfs_of $M/home | jq -r '[.subvolume.id, .snapshots.seen, .snapshots.count, .sampled, (.model_note // "null")] | @tsv')" \
        "$(printf '%s\tall\t0\tfalse\tnull' $HOMEID)"
root_swept() { swept_since $M/root "$1"; }
wait_until 30 root_swept $(($(date +%s) + 2 * INTERVAL + 1))
p0=$(cat $META)
grep -r zzz $M/root/x >/dev/null
btrfs filesystem sync $M/root
wait_until 30 root_swept $(($(date +%s) + 2 * INTERVAL + 1))
p1=$(cat $META)
check "the measured pass taught the model" wait_until 30 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/root\") | .btrfs.model_intervals >= 1' >/dev/null"
touch_y() { touch -m $M/root/y/d0/f*; }
touch_y && grep -r zzz $M/root/y >/dev/null && touch_y
btrfs filesystem sync $M/root
wait_until 30 root_swept $(($(date +%s) + 2 * INTERVAL + 1))
p2=$(cat $META)
place_judge=$((p2 - p0))
s=$(btrfs_of $M/root | jq -c .since_newest_snapshot)
diag "the place: $((2 * NDIRS * PER_DIR)) files read through the longer root: kernel +$place_judge bytes; atimed $s; model $(btrfs_of $M/root | jq -c '[.bytes_per_inode, .model_intervals]')"
judge_since "$s" $place_judge
model=$(btrfs_of $M/root | jq -c '[.bytes_per_inode, .model_intervals]')
btrfs -q subvolume snapshot -r $M/home $M/home/.snap-1 >/dev/null || bail "snapshot home"
check "a newer snapshot of the other: the place moves there, said" wait_until 30 sh -c \
        "grep -q 'btrfs sampled through subvolume $HOMEID (root /home): 1 snapshot share its tree' $T/atimed.log"
check "its mount says it is sampled" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/home\") | .btrfs.sampled' >/dev/null"
b=$(btrfs_of $M/root)
is "the first keeps its own snapshot, no longer sampled" "$(echo "$b" | jq -r '[.snapshots.count, .sampled] | @tsv')" "$(printf '1\tfalse')"
like "and says its bytes are not modelled" "$(echo "$b" | jq -r .model_note)" "counted only in measured intervals, never modelled"
like "atimectl status says it too" "$(ctl status)" "^btrfs $M/root: the filesystem is sampled through another subvolume"
check "the advice too" sh -c "$ATIMECTL --socket $T/sock --json recommend $M/root | jq -e '.recommendations[0].reasons | any(test(\"not modelled\"))' >/dev/null"
is "the model learned of the filesystem stays" "$(btrfs_of $M/home | jq -c '[.bytes_per_inode, .model_intervals]')" "$model"
check "GetStatus matches the interface description" sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetStatus '{}' | $SCHEMA GetStatus"
stop_daemon
is "atimed stops cleanly after the place" "$STOP_STATUS" 0
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"
umount $M/root $M/home

# The filesystem mounted noatime alone: no read writes atime, so it is
# not sampled (no walk, no sweep), but looked at all the same, at the
# sampler's interval: its metadata bytes as the kernel has them, its
# snapshots as btrfs-progs lists them; its figure is exactly 0 bytes a
# day, and it says why. Remounted relatime, it is sampled again; noatime
# again, looked at alone again.
mount -o noatime,subvol=a/deeper/root $LOOP $M/root || bail "mount root noatime"
start_daemon
check "noatime alone: 0 bytes a day, a figure" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/root\") | .btrfs | .unshared_bytes_per_day == 0 and .rate_source == \"measured\"' >/dev/null"
# meta_as_kernel TARGET: the mount's metadata_bytes_used is sysfs's now
# (the looks follow it: a wait, not a clock).
meta_as_kernel() { [ "$(btrfs_of "$1" | jq -r .metadata_bytes_used)" = "$(cat $META)" ]; }
btrfs filesystem sync $M/root
check "noatime alone: looked at, its metadata bytes sysfs's" wait_until 30 meta_as_kernel $M/root
# (The same, as btrfs-progs reads it; a wait too: the cleaner may still
# be freeing what the sections above deleted.)
df_meta() { btrfs filesystem df -b $M/root | sed -n 's/^Metadata.*used=\([0-9]*\).*/\1/p'; }
meta_as_df() { [ "$(btrfs_of "$1" | jq -r .metadata_bytes_used)" = "$(df_meta)" ]; }
check "and btrfs filesystem df's" wait_until 30 meta_as_df $M/root
diag "metadata: atimed $(btrfs_of $M/root | jq -r .metadata_bytes_used), sysfs $(cat $META), btrfs filesystem df $(df_meta)"
is "its source is said, not waiting" "$(btrfs_of $M/root | jq -r .source)" no_atime
like "and why the bytes are 0" "$(btrfs_of $M/root | jq -r .model_note)" "no mount of this filesystem writes atime"
is "no walk, no sweep: no interval of its own" "$(mount_json $M/root | jq -r '[.activity.at // 0, .progress == null] | @tsv')" "$(printf '0\ttrue')"
# A snapshot made under it: the next looks see it, as btrfs-progs does.
btrfs -q subvolume snapshot -r $M/root $M/root/.snap-n >/dev/null || bail "snapshot under noatime"
tn=$(date -d "$(btrfs subvolume show $M/root/.snap-n | sed -n 's/^[[:space:]]*Creation time:[[:space:]]*//p')" +%s)
# (Quotas are on by now: subvolume show lists its qgroup after them.)
uuid=$(btrfs subvolume show $M/root | sed -n 's/^[[:space:]]*UUID:[[:space:]]*//p')
progs_snaps=$(btrfs subvolume list -s -q $M/root | grep -c "parent_uuid $uuid ")
check "the snapshot made is seen: as many as btrfs-progs lists ($progs_snaps)" wait_until 30 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/root\") | .btrfs.snapshots.count')\" = $progs_snaps ]"
b=$(btrfs_of $M/root)
age=$(echo "$b" | jq -r .snapshots.newest_age_s)
check "the newest is it: its age since btrfs-progs' creation time (${age}s)" test "$age" -ge 0 -a "$age" -le $(($(date +%s) - tn + 1))
is "both read-only, all seen" "$(echo "$b" | jq -r '[.snapshots.seen, .snapshots.read_only] | @tsv')" "$(printf 'all\t2')"
btrfs filesystem sync $M/root
check "the bytes follow the kernel's after it" wait_until 30 meta_as_kernel $M/root
is "still 0 bytes a day, not sampled" "$(btrfs_of $M/root | jq -r '[.unshared_bytes_per_day, .source, .sampled] | @tsv')" "$(printf '0\tno_atime\tfalse')"
check "GetStatus matches the interface description" sh -c "$ATIMECTL --socket $T/sock call io.atimed.GetStatus '{}' | $SCHEMA GetStatus"
# Remounted relatime: sampled again, its bytes the sweeps' once more.
# (atime: without it mount(8) keeps the noatime it finds.)
mount -o remount,atime,relatime,commit=2 $M/root && [ "$(findmnt -no VFS-OPTIONS $M/root)" = rw,relatime ] ||
        bail "remount relatime"
check "relatime again: sampled, a figure of a sweep" wait_until 30 swept_since $M/root $(($(date +%s) + 1))
check "and a measured interval of its bytes" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/root\") | .btrfs | .source == \"measured\" and .sampled and .model_note == null' >/dev/null"
# And noatime once more: looked at alone, 0 bytes a day again.
mount -o remount,noatime $M/root || bail "remount noatime"
check "noatime again: 0 bytes a day, said" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$M/root\") | .btrfs | .unshared_bytes_per_day == 0 and .source == \"no_atime\"' >/dev/null"
# Files made under it: the metadata moves, and the looks follow it (the
# sweeps' last facts would stand still).
make_tree $M/root/z 5 40
btrfs filesystem sync $M/root
check "and looked at still: its bytes follow the kernel's after files are made" wait_until 30 meta_as_kernel $M/root
stop_daemon
is "atimed stops cleanly after noatime alone" "$STOP_STATUS" 0
check "no sanitizer's report in the log" sh -c "! grep -q 'Sanitizer' $T/atimed.log"
umount $M/root
losetup -d $LOOP
diag "done after $(($(date +%s) - T0))s"
done_testing
