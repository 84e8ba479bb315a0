#!/bin/bash
# userhistory.sh: when history slots run short, the system's history stays.
# With max_mounts = 20, a root tmpfs lives a few intervals and is unmounted;
# then user nobody makes 30 short-lived FUSE mounts (bindfs through
# fusermount, user_allow_other in this test's namespace as on many hosts),
# each living long enough to have a history. Past the cap, the users'
# histories must go before root's, although root's was seen longest ago.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v bindfs >/dev/null || skip_all "bindfs is not installed"
command -v setpriv >/dev/null || skip_all "needs setpriv"
command -v fusermount >/dev/null || skip_all "needs fusermount"
M=$T/mnt
N=30
BATCH=10

fuse_for_users
chmod 0755 $T $M
mkdir -p $M/root $M/u
chmod 1777 $M/u
as_nobody sh -c "mkdir -p $M/u/src && echo y >$M/u/src/f" || bail "nobody's source dir"

write_config --bare '[mounts] include_fstypes = tmpfs fuse' "[mounts] exclude_paths = [/] $HOST_EXCLUDE [/]${T#/}" \
        '[sampler] interval = 1s' '[store] max_mounts = 20'
start_daemon

history_points() { # TARGET: how many points GetHistory has for it
        ctl call io.atimed.GetHistory "{\"target\":\"$1\"}" 2>/dev/null | jq -r '.points | length'
}
has_history() { [ "$(history_points "$1")" -gt 0 ] 2>/dev/null; }

mount -t tmpfs -o strictatime roottmp $M/root || bail "mount the root tmpfs"
echo x >$M/root/f
check "root's tmpfs gets a history" wait_until 30 has_history $M/root
umount $M/root || bail "umount the root tmpfs"
wait_until 10 sh -c "! $ATIMECTL --socket $T/sock --json status | jq -e --arg t $M/root '.mounts[] | select(.target == \$t)'" ||
        bail "the root tmpfs is still listed"

# 30 user mounts, ten at a time, each kept until the daemon has its history.
made=0
for ((b = 0; b < N / BATCH; b++)); do
        as_nobody sh -c "for i in \$(seq $((b * BATCH + 1)) $(((b + 1) * BATCH))); do
                mkdir -p $M/u/m\$i && bindfs -o allow_other $M/u/src $M/u/m\$i || exit 1
        done" || bail "nobody could not make the bindfs mounts"
        [ $b -eq 0 ] && is "they are nobody's (user_id=65534)" "$(grep -c " - fuse .*user_id=65534" /proc/self/mountinfo)" "$BATCH"
        for ((i = b * BATCH + 1; i <= (b + 1) * BATCH; i++)); do
                wait_until 30 has_history $M/u/m$i && made=$((made + 1))
        done
        as_nobody sh -c "for i in \$(seq $((b * BATCH + 1)) $(((b + 1) * BATCH))); do fusermount -u $M/u/m\$i; done" ||
                bail "nobody could not unmount"
done
is "the $N user mounts each had a history" "$made" "$N"

# The cap is applied when the snapshot is written: at shutdown.
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"
start_daemon
check "root's unmounted tmpfs keeps its history past the cap" has_history $M/root
kept=0
for ((i = 1; i <= N; i++)); do
        has_history $M/u/m$i && kept=$((kept + 1))
done
diag "user mounts' histories kept: $kept of $N"
check "the user mounts' histories gave way ($kept kept, fewer than 20)" test "$kept" -lt 20
stop_daemon
done_testing
