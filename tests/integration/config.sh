#!/bin/bash
# config.sh: atimed --check-config on the shipped file, a golden file and
# a broken one; the shipped file documents every key at its default.
. "$top_srcdir/tests/integration/lib.sh"
T=$(mktemp -d /tmp/atimed-test.XXXXXX) || bail mktemp
trap 'rm -rf "$T"' EXIT
F=$top_srcdir/tests/fixtures/config
SHIPPED=$top_srcdir/etc/atimed.conf

"$ATIMED" --check-config --config "$SHIPPED" >"$T/shipped.out" 2>"$T/shipped.err"
is "the shipped etc/atimed.conf is valid" "$?" "0"
is "and says nothing on stderr" "$(cat $T/shipped.err)" ""

# Defaults as this build has them (paths depend on ./configure).
"$ATIMED" --check-config --config /dev/null >"$T/defaults.out" 2>&1
is "an empty file gives the defaults" "$?" "0"
is "the shipped file (all comments) gives the same as the defaults" \
        "$(sed 1d $T/shipped.out)" "$(sed 1d $T/defaults.out)"

# section.key = value, from the effective defaults and from the shipped
# file's commented-out lines (a commented [mount:...] example included).
keys() { awk '/^#?\[/ { gsub(/^#|[][]/, ""); sec = $0; next }
              /^#?[a-z_]+ = ?/ { sub(/^#/, ""); k = $1; v = $0; sub(/^[a-z_]+ = ?/, "", v); print sec "." k "=" v }' "$1"; }
keys "$T/defaults.out" | sort >"$T/defaults.keys"
keys "$SHIPPED" | grep -v '^mount:' | sort >"$T/shipped.keys"
is "every key is documented in etc/atimed.conf" \
        "$(comm -23 <(cut -d= -f1 $T/defaults.keys) <(cut -d= -f1 $T/shipped.keys) | tr '\n' ' ')" ""
# Path defaults follow ./configure; the file shows the distribution's.
is "at its real default" \
        "$(comm -3 <(grep -Ev '^(daemon.state_dir|control.socket)=' $T/defaults.keys) \
                   <(grep -Ev '^(daemon.state_dir|control.socket)=' $T/shipped.keys) | tr '\n' ' ')" ""
like "the per-mount section is documented" "$(keys "$SHIPPED" | grep '^mount:')" "^mount:/.*\.probe_dir="

# Uncommenting every key must give a valid file with the same values.
sed -E 's/^#([a-z_]+ = ?|\[)/\1/' "$SHIPPED" >"$T/uncommented.conf"
"$ATIMED" --check-config --config "$T/uncommented.conf" >"$T/uncommented.out" 2>&1
is "the documented defaults, uncommented, are valid" "$?" "0"

# Golden output: values normalized, lists rejoined, durations reformatted.
(cd "$F" && "$ATIMED" --check-config --config golden.conf) >"$T/golden.out" 2>&1
check "golden --check-config output" diff -u "$F/golden.out" "$T/golden.out"

(cd "$F" && "$ATIMED" --check-config --config broken.conf) >"$T/broken.out" 2>"$T/broken.err"
is "a broken file: exit 1" "$?" "1"
check "every error, with file:line and key (golden)" diff -u "$F/broken.err" "$T/broken.err"
is "nothing printed on stdout" "$(cat $T/broken.out)" ""

"$ATIMED" --check-config --config "$T/missing.conf" >/dev/null 2>"$T/missing.err"
is "a missing --config file: exit 1" "$?" "1"
like "and says so" "$(cat $T/missing.err)" "Failed to read configuration $T/missing.conf: No such file or directory"

"$ATIMED" --check-config --config "$T" >/dev/null 2>"$T/dir.err"
is "a directory as --config: exit 1" "$?" "1"

out=$("$ATIMED" --check-config --config /dev/null --socket /tmp/x.sock --state-dir /tmp/st)
like "--socket overrides the file" "$out" "^socket = /tmp/x.sock$"
like "--state-dir overrides the file" "$out" "^state_dir = /tmp/st$"

"$ATIMED" --socket relative.sock --check-config >/dev/null 2>&1
is "a relative --socket is a usage error (2)" "$?" "2"
"$ATIMED" --bogus >/dev/null 2>&1
is "an unknown option is a usage error (2)" "$?" "2"
"$ATIMED" extra-arg >/dev/null 2>&1
is "a stray argument is a usage error (2)" "$?" "2"
like "--version" "$("$ATIMED" --version)" "^atimed [0-9]+\.[0-9]+"
like "--help mentions --check-config" "$("$ATIMED" --help)" "--check-config"

done_testing
