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

done_testing
