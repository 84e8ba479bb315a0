#!/bin/bash
# journal.sh: under systemd (stderr is the journal's stream, JOURNAL_STREAM
# names it), a message about a mount goes to journald's native socket with
# the mount point as a field of its own, ATIMED_MOUNT, holding its bytes as
# they are (a newline, an invalid UTF-8 byte), while the MESSAGE shows it
# escaped: `journalctl ATIMED_MOUNT=...` finds every message about a mount
# whatever its name, and no name can forge an entry. A journald of the
# test's own listens on the socket; stderr is a file whose device:inode is
# given as JOURNAL_STREAM.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v python3 >/dev/null || skip_all "python3 is needed"
M=$T/mnt
NL="$M/nl"$'\n''<0>EMERGENCY: disk on fire'
BAD="$M/bad"$'\xff'
PLAIN="$M/plain"

mount -t tmpfs tmpfs /run || bail "tmpfs on /run"
mkdir -p /run/systemd/journal
"$NOTIFY_RECV" /run/systemd/journal/socket >>$T/journal.out &
DAEMON_PIDS="$DAEMON_PIDS $!"
wait_until 5 test -S /run/systemd/journal/socket || bail "no journal socket"

write_config --bare "[mounts] exclude_paths = [/] [/]${T#/} [/]run"
: >"$T/atimed.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/atimed.log") start_daemon
for n in "$NL" "$BAD" "$PLAIN"; do
        mkdir -p "$n" && mount -t tmpfs tmpfs "$n" || bail "mount $n"
done
three() { [ "$(ctl --json status | jq --arg m "$M/" '[.mounts[] | select(.target | startswith($m))] | length')" = 3 ]; }
check "the three mounts are tracked" wait_until 15 three

# journal_has NAME: an entry whose ATIMED_MOUNT is NAME's bytes (a value
# with a newline is framed with its length, as the native protocol has it)
# and whose MESSAGE is one line about it.
journal_has() {
        NAME="$1" python3 -c '
import os, struct, sys
name = os.fsencode(os.environ["NAME"])
data = open(sys.argv[1], "rb").read()
field = b"ATIMED_MOUNT\n" + struct.pack("<Q", len(name)) + name + b"\n" if b"\n" in name else b"ATIMED_MOUNT=" + name + b"\n"
i = data.find(field)
sys.exit(0 if i >= 0 else 1)' "$T/journal.out"
}
check "a name with a newline reaches the journal byte for byte" wait_until 10 journal_has "$NL"
check "a name that is not UTF-8 reaches the journal byte for byte" wait_until 10 journal_has "$BAD"
check "a plain name too" wait_until 10 journal_has "$PLAIN"
check "each entry has a priority and atimed's identifier" \
        sh -c "grep -aq '^PRIORITY=6\$' $T/journal.out && grep -aq '^SYSLOG_IDENTIFIER=atimed\$' $T/journal.out"
check "nothing is filed at priority 0, in the journal or the stream" \
        sh -c "! grep -aq '^PRIORITY=0\$' $T/journal.out && ! grep -aq '^<0>' $T/atimed.log"
check "the MESSAGE shows the newline escaped" grep -aqF 'MESSAGE=Tracking '"$M"'/nl\x0a<0>EMERGENCY' $T/journal.out
check "the stream got no line of those messages (one entry each, not two)" sh -c "! grep -aq 'Tracking $M/' $T/atimed.log"
check "messages about no mount still go to the stream" grep -aq 'Serving on' $T/atimed.log
stop_daemon
is "atimed exits cleanly" "$STOP_STATUS" 0
done_testing
