#!/bin/bash
# guard-paths.sh: the operator's word kept at any length (issue 43). A
# [mount:PATH] needs_atime guards its mount whatever PATH is: past the 50
# bytes inih keeps of a section name (its tail was cut without a word, so
# that the declaration guarded nothing and remount went ahead), 4,000
# bytes on one line, or bytes a line cannot hold raw (a tab, a newline,
# ']', a backslash, not UTF-8) in the escaped form of atimed.conf(5). The
# daemon lists each declaration with its file:line; atimectl remount below
# it is refused naming that line, and the mount is left as it was. A file
# with errors is refused at start, by --check-config and on reload (the
# running configuration stays, and keeps guarding), each error with its
# file:line; --check-config prints what reads back to the same.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
C=$T/atimed.conf

# The issue's path, below the test's directory: 69 bytes of its own.
ISSUE=$M/srv/www/a-rather-long-directory-name-for-width/served-static-content
# 4,000 bytes: components of 200 (a name may have 255), the last one shorter.
LONG=$M/long
while [ $((${#LONG} + 200)) -le 4000 ]; do LONG=$LONG/$(printf 'd%.0s' $(seq 199)); done
LONG=$LONG/$(printf 'e%.0s' $(seq $((4000 - ${#LONG} - 1))))
[ ${#LONG} -eq 4000 ] || bail "the long path is ${#LONG} bytes, not 4000"
# A tab, ']', '#', ';', '=', blanks, a newline and a blank at the end.
ODD=$M/odd$'\t'x']#;= y z'$'\n'' '
ODD_CONF="$M/odd\\x09x\\x5d#;= y\\040z\\x0a\\x20"
# A backslash and a byte that is not UTF-8.
WEIRD=$M/we'\'ird$'\xff'
WEIRD_CONF="$M/we\\\\ird\\xff"
for p in "$ISSUE" "$LONG" "$ODD" "$WEIRD"; do
        mkdir -p "$p" && mount -t tmpfs -o relatime,size=4m tmpfs "$p" || bail "cannot mount a tmpfs on a path of ${#p} bytes"
done

# write_conf SECTION...: the base configuration of the tests, and a
# [mount:SECTION] with needs_atime = relatime for each.
write_conf() {
        write_config "[mounts] exclude_paths += $HOST_EXCLUDE" "[consumers] mail_spools = $T/none" \
                "[consumers] tmpfiles_dirs = $T/none" "[consumers] tmpreaper_conf = $T/none" \
                "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none"
        for s in "$@"; do printf '\n[mount:%s]\nneeds_atime = relatime\n' "$s" >>"$C"; done
}
# line_of SECTION: the line of needs_atime in [mount:SECTION] of $C.
line_of() { S="[mount:$1]" awk '$0 == ENVIRON["S"] { n = NR + 1 } END { print n }' "$C"; }
opts() { findmnt -no OPTIONS -M "$1"; }
# The config reader atimed lists for the mount at $1: its source.
declared() { ctl --json recommend "$1" | jq -r '.recommendations[0].consumers[] | select(.kind == "config") | .source'; }
tracked() { [ "$(ctl --json recommend "$1" | jq '.recommendations | length')" = 1 ]; }

# --- 1. the issue: a section name of more than 50 bytes
write_conf "$ISSUE"
L_ISSUE=$(line_of "$ISSUE")
like "--check-config prints the section whole" "$("$ATIMED" --check-config --config "$C")" "^\\[mount:$ISSUE\\]\$"
start_daemon
check "the mount at the issue's path is tracked" wait_until 20 tracked "$ISSUE"
is "recommend lists the declared reader of atime, at its file:line" "$(declared "$ISSUE")" "$C:$L_ISSUE"
like "in words too" "$(ctl recommend "$ISSUE")" "needs_atime = relatime"
BEFORE_ISSUE=$(opts "$ISSUE")
ctl remount "$ISSUE" noatime >$T/out 2>$T/err
is "remount noatime under it: refused (exit 1)" "$?" "1"
like "naming the declaration's file:line" "$(cat $T/err)" "needs relatime: .* \\[$C:$L_ISSUE\\]\$"
is "the mount is left as it was (findmnt)" "$(opts "$ISSUE")" "$BEFORE_ISSUE"
like "relatime, as it was mounted" "$BEFORE_ISSUE" "(^|,)relatime(,|\$)"

# --- 2. 4,000 bytes on one line, and bytes no line holds raw: a reload
write_conf "$ISSUE" "$LONG" "$ODD_CONF" "$WEIRD_CONF"
L_LONG=$(line_of "$LONG") L_ODD=$(line_of "$ODD_CONF") L_WEIRD=$(line_of "$WEIRD_CONF")
ctl reload >$T/out 2>$T/err
is "reload with a 4,000-byte and two odd paths: exit 0" "$?" "0"
[ -s $T/err ] && sed 's/^/#   /' $T/err
for p in "$LONG" "$ODD" "$WEIRD"; do
        check "the mount at a path of ${#p} bytes is tracked" wait_until 20 tracked "$p"
done
is "the 4,000-byte path: its reader, at its file:line" "$(declared "$LONG")" "$C:$L_LONG"
is "tab, ']', newline, blanks: at its file:line" "$(declared "$ODD")" "$C:$L_ODD"
is "a backslash, not UTF-8: at its file:line" "$(declared "$WEIRD")" "$C:$L_WEIRD"
for p in "$LONG" "$ODD"; do
        before=$(opts "$p")
        ctl remount "$p" noatime >$T/out 2>$T/err
        is "remount noatime on the path of ${#p} bytes: refused (exit 1)" "$?" "1"
        like "naming its file:line" "$(tail -c 300 $T/err)" "\\[$C:$( [ "$p" = "$LONG" ] && echo $L_LONG || echo $L_ODD)\\]\$"
        is "the mount is left as it was (findmnt)" "$(opts "$p")" "$before"
done

# --- 3. what --check-config prints reads back to the same
"$ATIMED" --check-config --config "$C" >$T/printed 2>$T/err
is "--check-config: exit 0, nothing on stderr" "$?|$(cat $T/err)" "0|"
like "the odd path printed escaped" "$(cat $T/printed)" "^\\[mount:$M/odd\\\\x09x\\\\x5d\\\\x23\\\\x3b= y z\\\\x0a\\\\x20\\]\$"
like "and the one that is not UTF-8" "$(cat $T/printed)" "^\\[mount:$M/we\\\\\\\\ird\\\\xff\\]\$"
is "the 4,000-byte path printed whole" "$(grep -c -F "[mount:$LONG]" $T/printed)" "1"
"$ATIMED" --check-config --config $T/printed >$T/printed2 2>$T/err
is "the printed configuration reads back: the same, once printed" "$(sed 1d $T/printed2)" "$(sed 1d $T/printed)"

# --- 4. a file with errors: refused, with file:line, the running one kept
cp "$C" $T/good.conf
write_conf "$ISSUE/" "$M/long\\q" "$LONG" "$ODD_CONF"
printf '[mount:%s]\nneeds_atime = relatime\n' "$M/tab$(printf '\t')raw" >>"$C"
ctl reload >$T/out 2>$T/err
is "reload of a file with errors: exit 1" "$?" "1"
like "names each error with file:line: a '/' at the end" "$(cat $T/err)" "$C:$(($(line_of "$ISSUE/") - 1)): \\[mount:.*\\]: a mount point is written as the kernel names it"
like "an escape that is none" "$(cat $T/err)" "$C:$(($(line_of "$M/long\\q") - 1)): .*a backslash starts"
like "a raw tab" "$(cat $T/err)" "$C:$(($(wc -l <"$C") - 1)): .*a control character in a path is written as"
like "the log says so too, and that the running configuration stays" "$(cat $T/atimed.log)" "Configuration not reloaded; keeping the running one"
is "the running configuration still guards the issue's path, at its old line" "$(declared "$ISSUE")" "$C:$L_ISSUE"
ctl remount "$ISSUE" noatime >/dev/null 2>&1
is "and remount noatime there is still refused" "$?" "1"
is "the mount left as it was" "$(opts "$ISSUE")" "$BEFORE_ISSUE"
n=$(grep -c "Configuration not reloaded" $T/atimed.log)
kill -HUP "$DAEMON_PID"
check "SIGHUP with it: refused too" wait_until 10 sh -c "[ \$(grep -c 'Configuration not reloaded' $T/atimed.log) -gt $n ]"
like "logged with file:line" "$(tail -5 $T/atimed.log)" "$C:[0-9]+: \\[mount:.*"
is "the guard holds after it" "$(declared "$ISSUE")" "$C:$L_ISSUE"

# --- 5. at start and with --check-config: refused with file:line
"$ATIMED" --check-config --config "$C" >$T/out 2>$T/err
is "--check-config of the file with errors: exit 1, nothing printed" "$?|$(cat $T/out)" "1|"
is "three errors, each with file:line" "$(grep -c "^<3>$C:[0-9]*: " $T/err)" "3"
stop_daemon
"$ATIMED" --config "$C" --socket $T/sock2 --state-dir $T/state >$T/out 2>$T/err
is "atimed will not start with it (exit 1)" "$?" "1"
like "naming file:line" "$(cat $T/err)" "$C:[0-9]+: \\[mount:"
done_testing
