#!/bin/bash
# cli.sh: atimectl's command line, exit statuses and failure messages.
. "$top_srcdir/tests/integration/lib.sh"
T=$(mktemp -d /tmp/atimed-test.XXXXXX) || bail mktemp
trap 'rm -rf "$T"' EXIT

"$ATIMECTL" --socket "$T/none.sock" status >"$T/out" 2>"$T/err"
is "no daemon: exit 1" "$?" "1"
is "no daemon: one line on stderr" "$(wc -l <"$T/err")" "1"
like "no daemon: says it is not running and where it looked" "$(cat $T/err)" \
        "^atimectl: atimed is not running \(nothing listens on $T/none.sock\)\.$"
is "no daemon: nothing on stdout" "$(cat $T/out)" ""

ATIMED_SOCKET=$T/env.sock "$ATIMECTL" status 2>"$T/err"
like "ATIMED_SOCKET is honoured" "$(cat $T/err)" "$T/env.sock"
ATIMED_SOCKET=$T/env.sock "$ATIMECTL" --socket "$T/opt.sock" status 2>"$T/err"
like "--socket wins over ATIMED_SOCKET" "$(cat $T/err)" "$T/opt.sock"

"$ATIMECTL" frobnicate >/dev/null 2>"$T/err"
is "unknown command: exit 2" "$?" "2"
like "unknown command: named" "$(cat $T/err)" "unknown command 'frobnicate'"
"$ATIMECTL" status a b >/dev/null 2>&1
is "too many arguments: exit 2" "$?" "2"
"$ATIMECTL" --frob >/dev/null 2>&1
is "unknown option: exit 2" "$?" "2"
"$ATIMECTL" --socket "$T/x" call io.atimed.GetStatus '{not json' >/dev/null 2>"$T/err"
is "call with bad JSON parameters: exit 2" "$?" "2"
like "call with bad JSON: says so" "$(cat $T/err)" "parameters must be a JSON object"
"$ATIMECTL" --help >"$T/out"
is "--help: exit 0" "$?" "0"
like "--help documents exit statuses" "$(cat $T/out)" "Exit status"
like "--version" "$("$ATIMECTL" --version)" "^atimectl [0-9]+\.[0-9]+"
like "--help documents the 'would change' status" "$("$ATIMECTL" --help)" "3 fstab --check: the file would change"

# The man pages render cleanly at 80 columns: no option run into its
# argument (--sinceDURATION), no JSON keys stripped of their quotes, no
# troff warnings.
if command -v man >/dev/null && MANWIDTH=80 man -l "$top_srcdir/man/atimectl.8" >/dev/null 2>&1; then
        for page in man/atimectl.8 man/atimed.8 man/atimed.conf.5; do
                out=$(MANWIDTH=80 man --warnings -l "$top_srcdir/$page" 2>"$T/warn")
                is "$page: no option glued to its argument" "$(echo "$out" | grep -cE -- '--[a-z][a-z-]*[A-Z]{3,}')" "0"
                is "$page: no JSON key lost its quotes" "$(echo "$out" | grep -cE '"[a-z_]+", [a-z_]+ ,')" "0"
                is "$page: no troff warnings" "$(cat "$T/warn")" ""
        done
        out=$(MANWIDTH=80 man -l "$top_srcdir/man/atimectl.8" 2>/dev/null)
        like "atimectl(8): history's options render apart" "$out" "history PATH \[--since DURATION\] \[--resolution DURATION\]"
        like "atimectl(8): fstab's options render apart" "$out" "fstab \[--file PATH\] \[--set MOUNT=POLICY \.\.\.\]"
        like "atimectl(8): exit status 3 documented" "$out" "fstab --check only: the file would change"
        like "atimectl(8): the sparkline's scale explained" "$out" "one scale shared by every row"
        like "atimectl(8): the chart's '?' explained" "$out" "[‘']\\?[’'] is a time atimed"
else
        diag "man not available: the rendering checks are skipped"
fi

done_testing
