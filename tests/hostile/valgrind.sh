#!/bin/bash
# valgrind.sh: the daemon through a whole working life under valgrind's
# memcheck, zero errors and zero leaks: start-up on real mounts, probes,
# walks and sweeps under a read load, every method, bad requests, a reload,
# mounts coming and going, a flush and SIGTERM. Runs in the build without
# sanitizers (valgrind and ASan do not mix).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v valgrind >/dev/null || bail "needs valgrind (apt-get install valgrind)"
READLOAD=$top_builddir/tests/helpers/readload
M=$T/mnt
mkdir -p $M/strict $M/rel $M/extra
make_ext4 strict 32 && mount -o loop,strictatime $T/strict.img $M/strict || bail mount
mount -t tmpfs -o relatime tmpfs $M/rel || bail mount
make_tree $M/strict 5 100
make_tree $M/rel 3 50
find $M/strict -type f >$T/strict.list

write_config '[mounts] include_fstypes = ext4 tmpfs' "[mounts] exclude_paths += $HOST_EXCLUDE [/]${T#/}/state" \
        '[sampler] sample_size = 200' '[sampler] walk_rate = 5000' '[probe] interval = 2s' \
        '[store] flush_interval = 2s' "[export] textfile = $T/atimed.prom"

# Errors and leaks both fail the run with exit status 99; "possible" leaks
# count too, so a lost pointer into the middle of a block is not excused.
DAEMON_WRAPPER=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible
        --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes --log-file=$T/valgrind.log)
START_TIMEOUT=60
start_daemon
diag "valgrind $(valgrind --version), daemon pid $DAEMON_PID"

"$READLOAD" 200 8 <$T/strict.list >/dev/null &
load=$!
check "status under valgrind" ctl status
check "a probe on demand" ctl probe $M/strict
check "the strict mount is measured" wait_until 40 sh -c \
        "$ATIMECTL --socket $T/sock --json status $M/strict | jq -e '.mounts[0].activity != null' >/dev/null"
wait $load

check "history" ctl history $M/strict
check "recommendations" ctl recommend
check "who reads atime at a mount, and below one" ctl call io.atimed.GetConsumers "{\"target\":\"$M/strict\"}"
check "the guard of a remount asks it" ctl remount $M/rel relatime
check "metrics" ctl metrics
check "the interface description" ctl call org.varlink.service.GetInterfaceDescription '{"interface":"io.atimed"}'
printf '%s\0' '{"method":' '[1]' '{"method":"io.atimed.Nope"}' \
        '{"method":"io.atimed.GetStatus","parameters":{"history_s":1e400}}' \
        '{"method":"io.atimed.GetStatus","parameters":{"history_s":60}}' | "$RAWSOCK" -n 5 "$T/sock" >$T/raw.out
is "five bad and odd requests, five replies" "$(grep -c . $T/raw.out)" "5"
head -c 100000 /dev/zero | tr '\0' x | "$RAWSOCK" -t 5 "$T/sock" >/dev/null
"$RAWSOCK" -t 1 "$T/sock" </dev/null >/dev/null # connects, says nothing, goes

kill -HUP $DAEMON_PID
check "after a reload" wait_until 20 ctl status
# Each goes once the daemon has begun on it, and is gone from status
# before the next comes.
begun() { mount_json $M/extra | jq -e '.activity != null or (.progress.stage | IN("walking", "baseline", "measuring"))' >/dev/null; }
for i in 1 2 3 4 5; do
        mount -t tmpfs tmpfs $M/extra && make_tree $M/extra 1 20
        wait_until 20 begun
        umount $M/extra
        wait_until 20 sh -c "[ -z \"\$($ATIMECTL --socket $T/sock --json status | jq -c --arg t $M/extra '.mounts[] | select(.target == \$t)')\" ]"
done
check "after mounts came and went" ctl status
check "the textfile was written" test -s $T/atimed.prom
# A flush of the store: the journal grows.
journal() { stat -c %s $T/state/history.journal 2>/dev/null || echo 0; }
j0=$(journal)
wait_until 20 sh -c "[ \$(stat -c %s $T/state/history.journal 2>/dev/null || echo 0) -gt $j0 ]"

stop_daemon
is "exit status 0 under valgrind (99: errors or leaks)" "$STOP_STATUS" "0"
# What valgrind itself cannot follow is not the daemon's doing: the
# openat2() it does not know (the walk falls back to openat() then, as on
# kernels before 5.6) and libblkid's CD-ROM ioctl on loop devices.
grep -v -e '^--[0-9]*-- ' -e 'unhandled ioctl 0x5395' -e 'could cause spurious value errors' \
        -e 'README_MISSING_SYSCALL_OR_IOCTL' $T/valgrind.log >$T/valgrind.errors
is "valgrind reported nothing else" "$(grep -c . $T/valgrind.errors)" "0"
sed 's/^/# valgrind: /' $T/valgrind.log | head -60
done_testing
