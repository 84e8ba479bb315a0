#!/bin/bash
# containers.sh: the daemon where a container puts it. Started without
# CAP_SETPCAP in a larger bounding set (a container's manager took it), it
# still holds the three capabilities alone with no_new_privs, and says so
# once at info level, not as a failure. In an unprivileged user namespace
# (unshare -Urm as nobody) it serves, measures the tmpfs mounted there,
# and says once, plainly, what it cannot do.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is needed"
M=$T/mnt
mkdir -p $M/data
mount -t tmpfs -o strictatime tmpfs $M/data || bail mount
echo x >$M/data/f

write_config --bare "[mounts] exclude_paths = [/] [/]${T#/}/state" '[sampler] interval = 1s'
DAEMON_WRAPPER=(setpriv --bounding-set -setpcap)
start_daemon
pid=$DAEMON_PID
caps=$(for t in /proc/$pid/task/*; do awk '/^Cap(Prm|Eff|Inh|Amb)/ { printf "%s%s ", $1, $2 }' $t/status; echo; done | sort -u)
is "without CAP_SETPCAP: every thread holds the three alone" "$caps" \
        "CapInh:0000000000000000 CapPrm:000000000000000e CapEff:000000000000000e CapAmb:0000000000000000 "
is "no_new_privs is set" "$(awk '/^NoNewPrivs/ { print $2 }' /proc/$pid/status)" "1"
check "the bounding set is left as it was (more than the three)" \
        test "$(awk '/^CapBnd/ { print $2 }' /proc/$pid/status)" != 000000000000000e
check "it measures" wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e --arg t $M/data '.mounts[] | select(.target == \$t) | .activity.at'"
stop_daemon
is "SIGTERM: exit 0" "$STOP_STATUS" "0"
like "said once at info level, with what it means" "$(grep -c '^<6>The capability bounding set is left as it is (no CAP_SETPCAP' $T/atimed.log)" "^1$"
check "no failure logged about capabilities" sh -c "! grep -qi 'failed to drop' $T/atimed.log"
DAEMON_WRAPPER=()

# An unprivileged user namespace: nobody's, with a mount namespace of its
# own where it mounts a tmpfs for its socket, state and a filesystem to
# measure.
U=$T/uns
mkdir -p $U
chmod 0755 $T $M
config --bare '[mounts] include_fstypes = tmpfs' "[mounts] exclude_paths = $HOST_EXCLUDE $U/state" \
        '[sampler] interval = 1s' >$T/inner.conf
cat >$T/inner.sh <<'INNER'
set -u
U=$1 ATIMED=$2 ATIMECTL=$3 CONF=$4
mount -t tmpfs -o mode=0755 uns $U || { echo "mount=failed"; exit 0; }
mkdir -p $U/state $U/m
mount -t tmpfs -o strictatime inner $U/m && echo x >$U/m/f
$ATIMED --config $CONF --socket $U/sock --state-dir $U/state 2>$U/log &
pid=$!
i=0
while [ $i -lt 200 ] && ! $ATIMECTL --socket $U/sock status >/dev/null 2>&1; do sleep 0.05; i=$((i + 1)); done
echo "serves=$($ATIMECTL --socket $U/sock status >/dev/null 2>&1 && echo yes || echo no)"
i=0
while [ $i -lt 400 ]; do
        at=$($ATIMECTL --socket $U/sock --json status | jq -r --arg t $U/m '.mounts[] | select(.target == $t) | .activity.at // empty')
        [ -n "$at" ] && break
        sleep 0.05
        i=$((i + 1))
done
echo "figure=${at:-none}"
echo "probe=$($ATIMECTL --socket $U/sock --json status | jq -r --arg t $U/m '.mounts[] | select(.target == $t) | .probe.effective // "none"')"
kill -TERM $pid
wait $pid
echo "exit=$?"
echo "notices=$(grep -c '^<5>Running in a user namespace' $U/log)"
echo "errors=$(grep -c '^<[0-3]>' $U/log)"
echo "skips=$(grep -c "^<6>$(dirname $U): the walk skipped [0-9]* director" $U/log)"
grep -v '^<7>' $U/log | sed 's/^/log: /'
INNER
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -Urm bash $T/inner.sh $U "$ATIMED" "$ATIMECTL" $T/inner.conf 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
field() { printf '%s\n' "$out" | sed -n "s/^$1=//p"; }
[ "$(field mount)" = failed ] && { diag "no tmpfs in an unprivileged user namespace here"; done_testing; exit; }
is "user namespace: it serves" "$(field serves)" yes
check "user namespace: the tmpfs mounted there gets a figure" test "$(field figure)" != none
is "user namespace: and its policy verified" "$(field probe)" strictatime
is "user namespace: SIGTERM: exit 0" "$(field exit)" 0
is "user namespace: what it cannot do said once" "$(field notices)" 1
is "user namespace: no error logged" "$(field errors)" 0
is "user namespace: the directories of root outside, skipped, said once" "$(field skips)" 1
done_testing
