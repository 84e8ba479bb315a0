#!/bin/bash
# architecture.sh: docs/architecture.md held to the tree, in TAP. Every
# source file it names (in backticks: `tracker.c`, `common/report.h`,
# `tests/unit/test-schedule.c`) is there; every daemon source file is
# named in it (a header where its .c is named counts as named). A name
# with a directory of the project's is looked for there; a bare name in
# daemon/, common/, cli/ and tests/; a path elsewhere (the kernel's
# fs/inode.c) is not the project's and is left alone.
. "$top_srcdir/tests/integration/lib.sh" # its TAP alone: no namespace, no daemon
DOC=$top_srcdir/docs/architecture.md

[ -r "$DOC" ] || bail "cannot read $DOC"

# The names in backticks that end as a source file does.
names=$(grep -o '`[^`]*`' "$DOC" | tr -d '`' | grep -E '^[A-Za-z0-9_./-]+\.(c|h|sh)$' | sort -u)

# found NAME: the file NAME names is in the tree.
found() {
        case $1 in
        daemon/* | common/* | cli/* | tests/* | bench/* | docs/*)
                [ -f "$top_srcdir/$1" ] ;;
        */*)
                return 2 ;; # not the project's
        *)
                for d in daemon common cli tests tests/unit tests/helpers tests/integration tests/hostile; do
                        [ -f "$top_srcdir/$d/$1" ] && return 0
                done
                return 1 ;;
        esac
}

for name in $names; do
        found "$name"
        case $? in
        0) tap_result 0 "named in the document, and there: $name" ;;
        2) ;;
        *) tap_result 1 "named in the document, and there: $name (no such file)" ;;
        esac
done

# named FILE: its name, or where it is a header its .c's, is in $names.
named() {
        local base=${1##*/}
        printf '%s\n' "$names" | grep -qxF -e "$base" -e "daemon/$base" && return 0
        case $base in
        *.h) [ -f "${1%.h}.c" ] && printf '%s\n' "$names" | grep -qxF -e "${base%.h}.c" -e "daemon/${base%.h}.c" ;;
        *) return 1 ;;
        esac
}

for f in "$top_srcdir"/daemon/*.c "$top_srcdir"/daemon/*.h; do
        if named "$f"; then
                tap_result 0 "the document names daemon/${f##*/}"
        else
                tap_result 1 "the document names daemon/${f##*/} (it does not: say what it owns in section 3)"
        fi
done

done_testing
