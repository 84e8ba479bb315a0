#!/bin/bash
# faults.sh: the daemon keeps serving and keeps its history through odd
# /proc files, mounts vanishing in the middle of a walk or a sweep, a storm
# of SIGHUPs, and mount churn.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/big $M/churn
make_ext4 big 64 && mount -o loop,strictatime $T/big.img $M/big || bail mount
make_tree $M/big 20 200

# --- Odd /proc files, through the configurable paths.
cp /proc/self/mountinfo $T/mountinfo
printf 'garbage\n%s\n12 34\n99 1 0:99 / /cut rw,relatime - tmp' "$(head -c 5000 /dev/zero | tr '\0' x)" >>$T/mountinfo
printf '   8 0 sda 1 2 3\nnot numbers at all\n\n' >$T/diskstats
write_config "[mounts] mountinfo = $T/mountinfo" "[device] diskstats = $T/diskstats" '[sampler] walk_rate'
start_daemon
check "a mountinfo with garbage, an overlong and a truncated line: still serving" ctl status
like "its bad lines counted and logged" "$(cat $T/atimed.log)" "$T/mountinfo: skipped [0-9]+ malformed line"
is "the good lines are read" "$(mount_field $M/big fstype)" "ext4"
sleep 2 # not a wait: two intervals, after which rates from a readable diskstats would be there

is "its device rates are simply absent" "$(mount_field $M/big device.write_iops)" "null"
: >$T/mountinfo
mount -t tmpfs tmpfs $M/churn && umount $M/churn # a mount event: re-read
wait_until 10 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status | jq '.mounts | length')\" = 0 ]" ||
        diag "the empty table was not applied within 10 s"
check "an empty mountinfo: still serving" ctl status
rm -f $T/mountinfo
mount -t tmpfs tmpfs $M/churn && umount $M/churn
wait_until 10 grep -q "Failed to read mount table $T/mountinfo" $T/atimed.log || diag "no failed read logged within 10 s"
check "a missing mountinfo: still serving" ctl status
like "and the previous table kept" "$(cat $T/atimed.log)" "Failed to read mount table $T/mountinfo, keeping the previous one"
stop_daemon
is "exit 0" "$STOP_STATUS" "0"

# --- Mounts vanishing under a walk and under sweeps.
write_config '[sampler] walk_rate = 2000'
: >$T/atimed.log
start_daemon
wait_until 10 sh -c "$ATIMECTL --socket $T/sock --json status $M/big | jq -e '.mounts[0].progress | .stage == \"walking\" and .walked > 0' >/dev/null" ||
        diag "$M/big was not seen walking within 10 s"
umount -l $M/big
check "a filesystem unmounted in the middle of its walk: still serving" ctl status
check "and gone from status" wait_until 5 sh -c "[ -z \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/big\") | .target')\" ]"
mount -o loop,strictatime $T/big.img $M/big
check "mounted again, it is walked and measured again" wait_until 30 sh -c \
        "$ATIMECTL --socket $T/sock --json status $M/big | jq -e '.mounts[0].activity != null' >/dev/null"
for i in $(seq 1 15); do
        mount -t tmpfs tmpfs $M/churn
        make_tree $M/churn 1 30
        sleep 0.$((RANDOM % 9 + 1)) # not a wait: gone at a random point of a sweep
        umount -l $M/churn
done
check "fifteen mounts gone in the middle of sweeps: still serving" ctl status
is "no thread left stuck" "$(ctl --json status | jq .stuck_threads)" "0"

# --- A storm of SIGHUPs while clients ask.
(for i in $(seq 1 200); do kill -HUP $DAEMON_PID; sleep 0.01; done) & # (the storm's pace)
storm=$!
fails=0
for i in $(seq 1 100); do ctl status >/dev/null 2>&1 || fails=$((fails + 1)); done
wait $storm
is "200 SIGHUPs while 100 status calls: none failed" "$fails" "0"
check "still serving after the storm" ctl status
is "the configuration still applies" "$(ctl --json status | jq '[.mounts[] | select(.target == "/")] | length')" "0"

# --- Mount churn: a thousand mounts and unmounts in a few seconds.
for i in $(seq 1 1000); do mkdir -p $M/churn/$i; done
start=$(date +%s)
for i in $(seq 1 1000); do mount -t tmpfs tmpfs $M/churn/$i; done
for i in $(seq 1 1000); do umount $M/churn/$i; done
diag "1000 mounts and unmounts in $(($(date +%s) - start)) s"
check "through a thousand mounts and unmounts: still serving" ctl status
check "and back to the table before" wait_until 10 sh -c \
        "[ \$($ATIMECTL --socket $T/sock --json status | jq '[.mounts[] | select(.target | startswith(\"$M/churn/\"))] | length') = 0 ]"
stop_daemon
is "exit 0 after all of it" "$STOP_STATUS" "0"
done_testing
