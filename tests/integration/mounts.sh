#!/bin/bash
# mounts.sh: the policy atimed reports for each kind of real mount, and
# mounts coming and going while it runs.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace

M=$T/mnt
mkdir -p $M/tmpfs-strict $M/tmpfs-lazy $M/ext4-strict $M/ext4-noatime $M/ext4-relatime \
        $M/ext4-nodiratime $M/ext4-ro $M/ext4-lazy "$M/with space" $M/late
make_ext4 a 32 && make_ext4 b 32 && make_ext4 c 32 || bail "mkfs.ext4"

mount -t tmpfs -o strictatime,size=8m tmpfs $M/tmpfs-strict &&
mount -t tmpfs -o lazytime,size=8m tmpfs $M/tmpfs-lazy &&
mount -o loop,strictatime $T/a.img $M/ext4-strict &&
mount --bind $M/ext4-strict $M/ext4-noatime && mount -o remount,bind,noatime $M/ext4-noatime &&
mount --bind $M/ext4-strict $M/ext4-nodiratime && mount -o remount,bind,strictatime,nodiratime $M/ext4-nodiratime &&
mount -o loop $T/b.img $M/ext4-relatime &&
mount --bind $M/ext4-relatime $M/ext4-ro && mount -o remount,bind,ro $M/ext4-ro &&
mount -o loop,lazytime,relatime $T/c.img $M/ext4-lazy &&
mount -t tmpfs -o size=1m tmpfs "$M/with space" || bail "mounting the fixtures failed"

start_daemon

policy() { # TARGET -> "atime nodiratime lazytime read_only"
        ctl --json status | jq -r --arg t "$1" \
                '.mounts[] | select(.target == $t) | "\(.atime) \(.nodiratime) \(.lazytime) \(.read_only)"'
}

is "tmpfs strictatime" "$(policy $M/tmpfs-strict)" "strictatime false false false"
is "tmpfs lazytime (default relatime)" "$(policy $M/tmpfs-lazy)" "relatime false true false"
is "ext4 strictatime" "$(policy $M/ext4-strict)" "strictatime false false false"
is "noatime bind mount of the strict one" "$(policy $M/ext4-noatime)" "noatime true false false"
is "nodiratime bind mount" "$(policy $M/ext4-nodiratime)" "strictatime true false false"
is "ext4 with no option is relatime" "$(policy $M/ext4-relatime)" "relatime false false false"
is "read-only bind mount" "$(policy $M/ext4-ro)" "relatime false false true"
is "ext4 lazytime" "$(policy $M/ext4-lazy)" "relatime false true false"
is "a target with a space" "$(policy "$M/with space")" "relatime false false false"
is "source and fstype of the loop mount" "$(mount_field $M/ext4-strict fstype) $(mount_field $M/ext4-strict source)" \
        "ext4 $(findmnt -n -o SOURCE $M/ext4-strict)"
is "device numbers match the kernel's" \
        "$(mount_field $M/ext4-strict device.major):$(mount_field $M/ext4-strict device.minor)" \
        "$(findmnt -n -o MAJ:MIN $M/ext4-strict | tr -d ' ')"
is "mount id matches mountinfo" "$(mount_field $M/ext4-strict mount_id)" "$(findmnt -n -o ID $M/ext4-strict)"
is "pseudo filesystems are left out" "$(ctl --json status | jq '[.mounts[] | select(.fstype == "proc" or .fstype == "sysfs")] | length')" "0"

table=$(ctl status --full -o TARGET,FSTYPE,DEVICE,ATIME,PROBE)
like "the table shows the strict mount" "$table" "^$M/ext4-strict +ext4 +loop[0-9]+ +strictatime "
like "the table shows lazytime" "$table" "^$M/tmpfs-lazy +tmpfs +tmpfs +relatime,lazytime "
like "the table shows ro" "$table" "^$M/ext4-ro +ext4 +loop[0-9]+ +relatime,ro "
like "the summary counts mounts" "$table" "^[0-9]+ mounts: [1-9][0-9]* strictatime"
is "status MOUNT shows one mount" "$(ctl --no-legend status $M/ext4-noatime | wc -l)" "1"
"$ATIMECTL" --socket "$T/sock" status /nonexistent-mount >/dev/null 2>"$T/err"
is "status of an unknown mount fails with 1" "$?" "1"
like "and says so in one line" "$(cat $T/err)" "^atimectl: no tracked mount at /nonexistent-mount\.$"

# Changes while it runs: each shows at the table's next read, which the
# kernel's poll of mountinfo starts at once (milliseconds on a quiet host;
# the waits below judge that it happens, not how fast).
mount -t tmpfs -o noatime tmpfs $M/late
check "a new mount shows" wait_until 2 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/late\") | .atime')\" = noatime ]"
mount -o remount,strictatime $M/late
check "a remount's new policy shows" wait_until 2 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/late\") | .atime')\" = strictatime ]"
umount $M/late
check "an unmounted one goes" wait_until 2 sh -c "[ -z \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/late\") | .atime')\" ]"
like "the change is logged" "$(cat $T/atimed.log)" "Tracking $M/late \(tmpfs on tmpfs\): noatime"

# A mount stacked on another at the same target hides it.
mount -t tmpfs -o noatime tmpfs $M/ext4-relatime
check "a mount stacked on another replaces it" wait_until 2 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/ext4-relatime\") | .fstype')\" = tmpfs ]"
umount $M/ext4-relatime
check "and the one below returns when it goes" wait_until 2 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/ext4-relatime\") | .fstype')\" = ext4 ]"

stop_daemon
is "SIGTERM: exit status 0" "$STOP_STATUS" "0"
done_testing
