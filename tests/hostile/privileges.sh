#!/bin/bash
# privileges.sh: least privilege, and who may do what. Every thread keeps
# only the three capabilities the work needs; the walk still reads
# directories root does not own without changing their atimes; socket mode
# and group restrict who may connect; privileged methods are refused to
# anyone but root and the privileged group (SO_PEERCRED, SO_PEERGROUPS).
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is needed"
M=$T/mnt
mkdir -p $M/private $M/view
mount -t tmpfs -o strictatime tmpfs $M/private || bail mount
# Looked at through a noatime view: reading directories there moves nothing.
mount --bind $M/private $M/view && mount -o remount,bind,noatime $M/view || bail mount
# A tree owned by someone else, closed to others: only CAP_DAC_READ_SEARCH
# reads it, only CAP_FOWNER opens it with O_NOATIME.
make_tree $M/private/home 3 10
chown -R 1234:1234 $M/private/home
chmod -R go-rwx $M/private/home
touch -a -d '3 days ago' $(find $M/private/home -type d)
snap() { (cd $M/view/home && find . -type d -printf '%A@ %p\n' | sort); }
snap >$T/before

write_config "[mounts] exclude_paths += $M/view" '[control] privileged_group = adm'
start_daemon
pid=$DAEMON_PID
caps=$(for t in /proc/$pid/task/*; do awk '/^Cap(Prm|Eff|Bnd|Inh|Amb)/ { printf "%s%s ", $1, $2 }' $t/status; echo; done | sort -u)
diag "capabilities of every thread: $caps"
is "every thread: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, nothing else" "$caps" \
        "CapInh:0000000000000000 CapPrm:000000000000000e CapEff:000000000000000e CapBnd:000000000000000e CapAmb:0000000000000000 "
is "no_new_privs is set" "$(awk '/^NoNewPrivs/ { print $2 }' /proc/$pid/status)" "1"
check "with them the walk reads a tree closed to root by permission" wait_until 20 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock --json status $M/private | jq '.mounts[0].activity.population')\" = 35 ]"
snap >$T/after
check "and changes no directory's atime there (O_NOATIME on directories root does not own)" diff $T/before $T/after
is "the probe works too" "$(mount_field $M/private probe.effective)" "strictatime"

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody "$ATIMECTL" --socket $T/sock status >/dev/null 2>&1
is "read-only methods are open to any local user" "$?" "0"
nobody "$ATIMECTL" --socket $T/sock probe $M/private >/dev/null 2>$T/err
is "Probe is refused to nobody" "$?" "1"
like "with a clear message" "$(cat $T/err)" "permission denied"
like "and the refusal is logged with the uid" "$(cat $T/atimed.log)" "Refused io.atimed.Probe to uid 65534"
adm=$(getent group adm | cut -d: -f3)
if [ -n "$adm" ]; then
        setpriv --reuid=65534 --regid=65534 --groups=$adm "$ATIMECTL" --socket $T/sock probe $M/private >$T/out 2>&1
        is "a member of privileged_group (supplementary) may probe" "$?" "0"
fi
stop_daemon

# A socket closed to others.
write_config '[sampler] interval' '[sampler] walk_rate' '[control] socket_mode = 0600'
start_daemon
is "socket_mode 0600 is applied" "$(stat -c %a $T/sock)" "600"
nobody "$ATIMECTL" --socket $T/sock status >/dev/null 2>$T/err
is "then others cannot connect" "$?" "1"
like "and are told so" "$(cat $T/err)" "permission denied connecting to $T/sock"
stop_daemon
done_testing
