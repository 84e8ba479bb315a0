#!/bin/bash
# reload.sh: atimectl reload (the io.atimed.Reload method, which the unit's
# ExecReload runs). A good configuration is in force when the call returns
# (nothing is waited for after it); a bad one is refused naming file:line,
# and the running one stays; a caller that is not privileged is refused;
# SIGHUP still reloads.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace

M=$T/mnt
mkdir -p $M/a $M/b
mount -t tmpfs -o strictatime tmpfs $M/a && mount -t tmpfs -o noatime tmpfs $M/b || bail "mount"
tracked() { ctl --json status | jq -r --arg t "$1" '.mounts[] | select(.target == $t) | .target'; }

write_config --bare "[mounts] exclude_paths = $M/b"
start_daemon
is "at start: $M/a tracked, $M/b excluded" "$(tracked $M/a)|$(tracked $M/b)" "$M/a|"

# --- A good configuration: in force as soon as the call returns.
write_config --bare "[mounts] exclude_paths = $M/a"
out=$(ctl reload 2>&1)
is "atimectl reload: exit 0" "$?" "0"
is "and says from where" "$out" "Configuration reloaded from $T/atimed.conf."
is "in force when it returns: $M/a excluded, $M/b tracked" "$(tracked $M/a)|$(tracked $M/b)" "|$M/b"
is "the method's reply names the file" "$(ctl --json reload | jq -c '[.schema_version, .config]')" "[2,\"$T/atimed.conf\"]"
like "the daemon logs the reload" "$(cat $T/atimed.log)" "Configuration reloaded from $T/atimed.conf"

# --- A bad one: refused with file:line; the running one stays.
write_config --bare "[mounts] exclude_paths = $M/b" '[mounts] rescan_delay = soon' '[nonsense]'
ctl reload >"$T/out" 2>"$T/err"
is "a bad configuration: exit 1" "$?" "1"
is "nothing on stdout" "$(cat $T/out)" ""
like "stderr says the running configuration stays" "$(cat $T/err)" "^atimectl: the configuration was not reloaded; the running one stays in force:$"
like "and names file:line and key" "$(cat $T/err)" "^  $T/atimed.conf:3: \[mounts\] rescan_delay: invalid value 'soon'"
like "every error" "$(cat $T/err)" "^  $T/atimed.conf:4: unknown section \[nonsense\]"
is "the old configuration is still in force" "$(tracked $M/a)|$(tracked $M/b)" "|$M/b"
ctl --json reload >"$T/json" 2>/dev/null
is "--json: the error's parameters, exit 1" "$?|$(jq -r '.errors | length' "$T/json")" "1|2"
like "InvalidConfiguration through a generic call" "$(ctl call io.atimed.Reload 2>&1)" \
        "^atimectl: io.atimed.InvalidConfiguration errors="

rm "$T/atimed.conf"
ctl reload >/dev/null 2>"$T/err"
is "a configuration file gone: exit 1" "$?" "1"
like "says it cannot be read" "$(cat $T/err)" "Failed to read configuration $T/atimed.conf: No such file or directory"
is "the old configuration is still in force" "$(tracked $M/a)|$(tracked $M/b)" "|$M/b"

# --- Only root or the privileged group.
write_config --bare "[mounts] exclude_paths = $M/b"
if command -v setpriv >/dev/null; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$ATIMECTL" --socket "$T/sock" reload >/dev/null 2>"$T/err"
        is "an unprivileged caller: exit 1" "$?" "1"
        is "told it needs root" "$(cat $T/err)" "atimectl: permission denied: this needs root."
        is "and nothing was reloaded" "$(tracked $M/a)|$(tracked $M/b)" "|$M/b"
else
        echo "ok $((TAP_N + 1)) # SKIP setpriv not installed: the unprivileged caller is not tried"
        TAP_N=$((TAP_N + 1))
fi

# --- SIGHUP still reloads, for those who send it.
kill -HUP "$DAEMON_PID"
check "SIGHUP reloads too" wait_until 5 sh -c "[ -n \"\$($ATIMECTL --socket $T/sock --json status | jq -r '.mounts[] | select(.target == \"$M/a\") | .target')\" ]"
is "the file's configuration is in force" "$(tracked $M/a)|$(tracked $M/b)" "$M/a|"

stop_daemon
is "stops cleanly" "$STOP_STATUS" "0"

# --- Off the loop: a configuration file on a filesystem that stops
# answering (a FUSE daemon stopped) holds the reload, not the daemon. Its
# caller is told once the read's deadline passes; everyone else is
# answered meanwhile; the file back, the next reload goes through.
if command -v bindfs >/dev/null; then
        mkdir -p $T/confsrc $M/conf
        config --bare '[mounts] include_fstypes = tmpfs' "[mounts] exclude_paths = [/] $HOST_EXCLUDE $M/b" \
                '[sampler] timeout = 2s' >$T/confsrc/atimed.conf
        bindfs_start $T/confsrc $M/conf
        start_second_daemon $M/conf/atimed.conf
        bctl() { "$ATIMECTL" --socket $T/sock-b "$@"; }
        bindfs_stop
        start=$(date +%s%N)
        bctl reload >$T/hung.out 2>&1 &
        reload_pid=$!
        # While the read hangs: status answers, each call (a bound that
        # ends a hung test, not a speed).
        answered=0
        for i in 1 2 3; do timeout 10 "$ATIMECTL" --socket $T/sock-b status >/dev/null && answered=$((answered + 1)); done
        is "status answers while the reload's read hangs" "$answered" "3"
        wait $reload_pid
        is "the hung reload: exit 1" "$?" "1"
        like "told the read did not finish, the running configuration stays" "$(cat $T/hung.out)" \
                "did not finish in time; the running one stays"
        is "the running configuration is still in force" \
                "$(bctl --json status | jq -r --arg t $M/b '[.mounts[] | select(.target == $t)] | length')" "0"
        bindfs_resume
        config --bare '[mounts] include_fstypes = tmpfs' "[mounts] exclude_paths = [/] $HOST_EXCLUDE $M/a" \
                '[sampler] timeout = 2s' >$T/confsrc/atimed.conf
        # The written-off read comes back as the FUSE daemon resumes; a
        # new reload is a new read.
        check "the file back: reload goes through" wait_until 10 "$ATIMECTL" --socket $T/sock-b reload
        is "and its configuration is in force" \
                "$(bctl --json status | jq -r --arg t $M/b '[.mounts[] | select(.target == $t)] | length')" "1"
        kill -TERM $B_PID && wait $B_PID
        is "the second daemon stops cleanly" "$?" "0"
else
        echo "ok $((TAP_N + 1)) # SKIP bindfs not installed: the hung configuration file is not tried"
        TAP_N=$((TAP_N + 1))
fi
done_testing
