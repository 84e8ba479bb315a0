#!/bin/bash
# impostor.sh: atimectl and a server that is not root's atimed (issue 43).
# User nobody serves a socket of its own that root's atimectl is pointed
# at (ATIMED_SOCKET in an environment root inherited, sudo -E, a script, or
# --socket): it advises noatime for /var/mail and lists no reader of atime
# anywhere. Root's changes on its word (fstab --write, fstab --set,
# remount, reload) are refused, naming the socket and its owner, and
# nothing changes; commands that change nothing work and say whose server
# it is. Under socket activation (systemd-socket-activate standing for
# PID 1), the listener is root, and root's changes go ahead.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is needed"
FAKE=$top_builddir/tests/helpers/fakeserver
M=$T/mnt
mkdir -p $M/spool $T/evil
mount -t tmpfs -o relatime tmpfs $M/spool || bail mount
chown nobody $T/evil
EVIL=$T/evil/io.atimed

# Its replies: the advice for /var/mail is noatime, nothing reads atime.
rec='{"target":"/var/mail","fstype":"tmpfs","current":{"atime":"relatime","lazytime":false,"nodiratime":false,"options":"relatime"},"recommended":{"atime":"noatime","lazytime":false,"nodiratime":false,"options":"noatime"},"action":"noatime","change":true,"reasons":["nothing reads atime here"],"consumers":[],"confidence":"high","basis":"measurement"}'
cat >$T/evil.table <<TABLE
io.atimed.GetRecommendations {"parameters":{"schema_version":2,"recommendations":[$rec]}}
io.atimed.GetConsumers {"parameters":{"schema_version":2,"target":"/","consumers":[]}}
io.atimed.GetStatus {"parameters":{"schema_version":2,"hostname":"evil","mounts":[]}}
io.atimed.Reload {"parameters":{"schema_version":2,"config":"/etc/atimed/atimed.conf"}}
TABLE
setpriv --reuid=nobody --regid=nogroup --clear-groups "$FAKE" $EVIL $T/evil.table >$T/evil.log 2>&1 &
BG_PIDS="$BG_PIDS $!"
wait_until 5 test -S $EVIL || bail "the fake server did not start"
is "the socket is nobody's" "$(stat -c %U $EVIL)" "nobody"

# A scratch fstab with a line for / and one for /var/mail.
printf 'tmpfs / tmpfs defaults 0 0\ntmpfs /var/mail tmpfs defaults 0 0\n' >$T/fstab
cp $T/fstab $T/fstab.orig
REFUSED="^atimectl: $EVIL is served by uid 65534 \\(nobody\\), not by root: atimectl changes nothing on its word\\.\$"
unchanged() { cmp -s $T/fstab $T/fstab.orig && echo unchanged; }

ATIMED_SOCKET=$EVIL "$ATIMECTL" fstab --file $T/fstab --write >$T/out 2>$T/err
is "fstab --write on its advice: exit 1" "$?" "1"
like "naming the socket and its owner" "$(cat $T/err)" "$REFUSED"
is "fstab unchanged (no noatime for /var/mail)" "$(unchanged)" "unchanged"
ATIMED_SOCKET=$EVIL "$ATIMECTL" fstab --file $T/fstab --set /=noatime --write >$T/out 2>$T/err
is "fstab --set /=noatime --write on its empty list of readers: exit 1" "$?" "1"
like "naming the socket and its owner" "$(head -n 1 $T/err)" "$REFUSED"
like "and that the guard could not be evaluated" "$(tail -n 1 $T/err)" \
        "^atimectl: who reads atime on / cannot be checked, so noatime is refused; nothing changed"
is "fstab unchanged" "$(unchanged)" "unchanged"
"$ATIMECTL" --socket $EVIL fstab --file $T/fstab --set /=noatime >$T/out 2>$T/err
is "fstab --set without --write, --socket given: exit 1" "$?" "1"
like "refused the same way" "$(head -n 1 $T/err)" "$REFUSED"
ATIMED_SOCKET=$EVIL "$ATIMECTL" fstab --file $T/fstab --write --force >$T/out 2>$T/err
is "--force does not make its advice one to act on: exit 1" "$?" "1"
is "fstab unchanged" "$(unchanged)" "unchanged"
before=$(findmnt -no VFS-OPTIONS --mountpoint $M/spool)
ATIMED_SOCKET=$EVIL "$ATIMECTL" remount $M/spool noatime >$T/out 2>$T/err
is "remount noatime on its word: exit 1" "$?" "1"
like "refused" "$(head -n 1 $T/err)" "$REFUSED"
is "the mount unchanged" "$(findmnt -no VFS-OPTIONS --mountpoint $M/spool)" "$before"
ATIMED_SOCKET=$EVIL "$ATIMECTL" remount $M/spool >$T/out 2>$T/err
is "remount on its advice: exit 1" "$?" "1"
ATIMED_SOCKET=$EVIL "$ATIMECTL" reload >$T/out 2>$T/err
is "reload: exit 1, not 'reloaded'" "$?" "1"
like "refused" "$(cat $T/err)" "$REFUSED"
is "nothing on stdout" "$(cat $T/out)" ""

# Commands that change nothing may ask it, and say whose it is.
ATIMED_SOCKET=$EVIL "$ATIMECTL" status >$T/out 2>$T/err
is "status works: exit 0" "$?" "0"
is "saying whose server it is, once" "$(cat $T/err)" "atimectl: $EVIL is served by uid 65534 (nobody), not by root."
ATIMED_SOCKET=$EVIL "$ATIMECTL" --json recommend >$T/out 2>$T/err
is "recommend works" "$(jq -r '.recommendations[0].recommended.atime' $T/out)" "noatime"
like "and says it" "$(cat $T/err)" "not by root\\.\$"
ATIMED_SOCKET=$EVIL "$ATIMECTL" fstab --file $T/fstab >$T/out 2>$T/err
is "fstab without --set or --write shows the diff: exit 0" "$?" "0"
like "its diff" "$(cat $T/out)" "^\\+tmpfs /var/mail tmpfs defaults,noatime 0 0\$"
is "and writes nothing" "$(unchanged)" "unchanged"

# A root listener: systemd-socket-activate makes the socket as PID 1 does.
if command -v systemd-socket-activate >/dev/null; then
        write_config --bare "[mounts] exclude_paths = [/] [/]${T#/}/state" "[mount:$M/spool] needs_atime = relatime"
        systemd-socket-activate -l $T/act.sock "$ATIMED" --config $T/atimed.conf --socket $T/unused.sock \
                --state-dir $T/state 2>>$T/act.log &
        DAEMON_PIDS="$DAEMON_PIDS $!"
        check "socket activation: served" wait_until 10 "$ATIMECTL" --socket $T/act.sock status
        "$ATIMECTL" --socket $T/act.sock reload >$T/out 2>$T/err
        is "socket activation: reload goes ahead (the listener is root)" "$?" "0"
        is "without a word about the server" "$(cat $T/err)" ""
        "$ATIMECTL" --socket $T/act.sock remount $M/spool noatime >$T/out 2>$T/err
        is "socket activation: the guard is evaluated (needs_atime refuses noatime)" "$?" "1"
        like "naming the declaration" "$(cat $T/err)" "breaks a reader of atime that needs relatime: .* \\[$T/atimed.conf:[0-9]+\\]"
else
        diag "systemd-socket-activate not installed"
        tap_result 1 "systemd-socket-activate is available"
fi
done_testing
