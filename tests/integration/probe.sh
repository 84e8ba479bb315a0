#!/bin/bash
# probe.sh: where the probe runs ([probe] dir, [mount:PATH] probe_dir), why
# it cannot (a mount point even root cannot write in), and a real
# disagreement with the mount table: an ext4 directory with the inheritable
# noatime attribute (chattr +A) under a strictatime mount.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v chattr >/dev/null || bail "chattr (e2fsprogs) is needed"
M=$T/mnt
mkdir -p $M/imm-sub $M/imm-bare $M/imm-override $M/noatime-attr
for n in 1 2 3 4; do make_ext4 i$n 16 || bail mkfs; done
mount -o loop,strictatime $T/i1.img $M/imm-sub &&
mount -o loop,strictatime $T/i2.img $M/imm-bare &&
mount -o loop,strictatime $T/i3.img $M/imm-override &&
mount -o loop,strictatime $T/i4.img $M/noatime-attr || bail mount
mkdir $M/imm-sub/probe-here $M/imm-override/scratch
# Immutable: not even root may create an inode there.
chattr +i $M/imm-sub $M/imm-bare $M/imm-override
# Inheritable noatime: every new inode below, the probe's included, has it.
chattr +A $M/noatime-attr
trap 'chattr -i $M/imm-sub $M/imm-bare $M/imm-override 2>/dev/null; cleanup' EXIT

write_config --bare '[probe] dir = probe-here' '[probe] interval = 1h' \
        "[mount:$M/imm-override] probe_dir = $M/imm-override/scratch"
start_daemon
probe_of() { ctl --json status | jq -r --arg t "$1" '.mounts[] | select(.target == $t) | .probe | "\(.verified) \(.effective) \(.matches_table)"'; }
check "every mount is probed" wait_until 10 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq '[.mounts[] | select(.probe == null)] | length')\" = 0 ]"

is "[probe] dir is used where the mount has it" "$(probe_of $M/imm-sub)" "true strictatime true"
is "elsewhere the mount point is, and an immutable one cannot be probed" "$(probe_of $M/imm-bare)" "false null null"
like "  with the reason" "$(mount_field $M/imm-bare probe.reason)" "permission denied"
is "[mount:PATH] probe_dir is used for that mount" "$(probe_of $M/imm-override)" "true strictatime true"

is "chattr +A: the probe finds noatime under a strictatime mount" "$(probe_of $M/noatime-attr)" "true noatime false"
like "the disagreement shows in the table" "$(ctl status --full -o TARGET,FSTYPE,DEVICE,ATIME,PROBE,UPDATES/MIN)" "^$M/noatime-attr +ext4 +loop[0-9]+ +strictatime +MISMATCH: noatime "
like "and is logged" "$(cat $T/atimed.log)" "$M/noatime-attr: the mount table says strictatime but the probe finds noatime"
like "atimectl probe says the table disagrees" "$(ctl probe $M/noatime-attr)" "noatime in force .*
.*mount table says otherwise"
like "and why: the directory's chattr +A" "$(ctl probe $M/noatime-attr)" "mount table says otherwise: the probed directory has the no-atime attribute \\(chattr \\+A\\)"
like "the table marks it (+A)" "$(ctl status --full -o TARGET,PROBE)" "^$M/noatime-attr +MISMATCH: noatime \\(\\+A\\)\$"

# An on-demand probe follows a change at once.
chattr -A $M/noatime-attr
like "after chattr -A, probing again finds strictatime" "$(ctl probe $M/noatime-attr)" "strictatime in force"
is "and status has the new verdict" "$(probe_of $M/noatime-attr)" "true strictatime true"

# A privileged method, refused to others (nobody has no privileged group).
if command -v setpriv >/dev/null; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$ATIMECTL" --socket $T/sock probe $M/imm-sub >/dev/null 2>$T/denied
        is "Probe as nobody: exit 1" "$?" "1"
        like "  permission denied" "$(cat $T/denied)" "permission denied"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$ATIMECTL" --socket $T/sock status >/dev/null 2>&1
        is "status as nobody works (read-only methods are open)" "$?" "0"
fi

stop_daemon
is "exit 0" "$STOP_STATUS" "0"
done_testing
