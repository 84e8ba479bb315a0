#!/bin/bash
# ansible-names.sh: the atimed_apply module of contrib/ansible and mount
# points of any name, without a container (ansible.sh runs the roles over
# ssh; this is the fast test of the module's own code). tmpfs mounts named
# with a space, a tab, a newline, backslashes (one that reads as the
# protocol's own escape), a byte that is not UTF-8 and a '$': the module's
# decodings of mountinfo and of atimed's names, run under the system's
# python3 on this namespace's mountinfo and the real daemon's GetStatus,
# find every one as the kernel has it and agree with atimed's form both
# ways; then the module itself, run as Ansible runs it (its arguments in a
# file), applies policies to a plain mount and to "we\ird" and follows
# atimed's advice for the rest: the odd names stop nothing (issue 43).
. "$top_srcdir/tests/integration/lib.sh"
PY=/usr/bin/python3
MODULE=$top_srcdir/contrib/ansible/roles/atimed_apply/library/atimed_apply.py
$PY -c 'import ansible.module_utils.basic' 2>/dev/null || skip_all "needs Ansible's python3 modules (ansible-core)"
enter_namespace
M=$T/mnt
NAMES=("www" 'we\ird' "sp ace" $'tab\tx' $'nl\nx' "ff"$'\xff' 'esc\x41' '$HOME')
for n in "${NAMES[@]}"; do
        mkdir -p "$M/$n" && mount -t tmpfs -o strictatime,size=1m tmpfs "$M/$n" || bail "mount $n"
done
printf '%s\0' "${NAMES[@]/#/$M/}" >$T/names
# A reader of atime on "sp ace" (relatime is enough for it), for --force.
mkdir -p $T/tmpfiles.d
echo "D \"$M/sp ace/cache\" 0755 root root 10d" >$T/tmpfiles.d/cache.conf
write_config "${TMPFS_ONLY[@]}" "[mounts] exclude_paths += [/]${T#/}/state" "[consumers] tmpfiles_dirs = $T/tmpfiles.d"
start_daemon
check "atimed tracks the ${#NAMES[@]} mounts" wait_until 20 sh -c \
        "[ \$($ATIMECTL --socket $T/sock --json status | jq --arg m $M/ '[.mounts[] | select(.target | startswith(\$m))] | length') = ${#NAMES[@]} ]"
ctl --json status >$T/status.json || bail "status"

# --- The decodings, each against the other source of the same names.
cat >$T/names.py <<'PYTHON'
import json, os, random, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import atimed_apply as a

def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)

names = [n for n in open(sys.argv[2], "rb").read().split(b"\0") if n]
points = a.mount_points()
check(all(n in points for n in names), "mountinfo, decoded, holds each name as made (%d)" % len(names))
prefix = os.path.dirname(names[0]) + b"/"
status = json.load(open(sys.argv[3], encoding="utf-8"))
targets = [m["target"] for m in status["mounts"] if a.name_decode(m["target"]).startswith(prefix)]
check(sorted(a.name_decode(t) for t in targets) == sorted(names), "atimed's targets, decoded, are the names as made")
check(all(a.name_encode(a.name_decode(t)) == t for t in targets), "and encoded again, atimed's form exactly")
check(a.name_encode(prefix + b"ff\xff") in targets and a.name_encode(prefix + b"we\\ird") in targets,
      "a byte not UTF-8 as \\xff, a backslash doubled, as atimed writes them")
random.seed(43)
samples = [bytes([b]) for b in range(1, 256)] + [bytes(random.randrange(1, 256) for _ in range(random.randrange(1, 24)))
                                                 for _ in range(20000)]
check(all(a.name_decode(a.name_encode(s)) == s for s in samples), "decode(encode(b)) == b for 20,255 byte strings")
def utf8(s):
    try:
        return s.encode("utf-8", "strict").decode("utf-8") == s
    except UnicodeError:
        return False
check(all(utf8(a.name_encode(s)) for s in samples), "every encoded name is valid UTF-8")
check([a.name_decode(s) for s in ["a\\qb", "\\x00", "\\xFF", "\\x4", "\\", "\\\\\\x41"]] ==
      [b"a\\qb", b"\\x00", b"\xff", b"\\x4", b"\\", b"\\A"],
      "a lone backslash is itself, \\x00 is no byte, hex in either case, as escape.c reads them")
check(a.octal_decode(b"/a\\040b\\011c\\012d\\134e\\101\\777") == b"/a b\tc\nd\\eA\\777",
      "mountinfo: any \\ooo up to \\377 decoded, as libmount does")
PYTHON
$PY $T/names.py "$MODULE" $T/names $T/status.json >$T/names.out 2>&1 || true
while IFS= read -r line; do
        case $line in
        "ok - "*) tap_result 0 "${line#ok - }" ;;
        "not ok - "*) tap_result 1 "${line#not ok - }" ;;
        *) diag "$line" ;;
        esac
done <$T/names.out
is "every check of the decodings ran" "$(grep -c '^\(not \)\?ok - ' $T/names.out)" "8"

# --- The module, as Ansible runs it: policies for www and we\ird, the
# advice (relatime for strictatime, by rule, at high confidence) for the
# others, which the scratch fstab does not hold.
printf 'tmpfs %s tmpfs strictatime,size=1m 0 0\ntmpfs %s tmpfs strictatime,size=1m 0 0\ntmpfs %s tmpfs strictatime,size=1m 0 0\n' \
        "$M/www" "$M/we\\134ird" "$M/sp\\040ace" >$T/fstab
check "atimed advises the odd names" wait_until 20 sh -c \
        "[ \$($ATIMECTL --socket $T/sock --json recommend | jq --arg m $M/ '[.recommendations[] | select(.target | startswith(\$m)) | select(.change and .confidence == \"high\")] | length') = ${#NAMES[@]} ]"
jq -n --arg www "$M/www" --arg weird "$M/we\\ird" --arg fstab $T/fstab --arg ctl "$ATIMECTL" \
        '{ANSIBLE_MODULE_ARGS: {policies: {($www): "noatime", ($weird): "noatime"}, follow_advice: "high",
          min_history_points: 0, fstab: $fstab, atimectl: $ctl}}' >$T/args.json
ATIMED_SOCKET=$T/sock $PY "$MODULE" $T/args.json >$T/module.json 2>$T/module.err
is "the module: exit 0" "$?" "0"
result() { jq -r "$1" $T/module.json 2>/dev/null; }
is "changed, no problem" "$(result '[.changed, .failed // false, (.problems | length)] | @json')" "[true,false,0]"
[ "$(result .failed)" = true ] && diag "$(result .msg)"
opts() { findmnt -no VFS-OPTIONS --mountpoint "$1" | tail -n 1; }
like "www is noatime" "$(opts "$M/www")" "(^|,)noatime(,|\$)"
like "we\\ird is noatime" "$(opts "$M/we\\ird")" "(^|,)noatime(,|\$)"
like "sp ace, in fstab, followed the advice: relatime" "$(opts "$M/sp ace")" "(^|,)relatime(,|\$)"
is "and the three fstab lines say so" "$(cat $T/fstab)" \
        "tmpfs $M/www tmpfs noatime,size=1m 0 0
tmpfs $M/we\\134ird tmpfs noatime,size=1m 0 0
tmpfs $M/sp\\040ace tmpfs relatime,size=1m 0 0"
is "we\\ird is reported in atimed's form" "$(result '.mounts[] | select(.source == "policies") | .target' | sort | tr '\n' ' ')" \
        "$M/we\\\\ird $M/www "
is "the advice for the names fstab lacks: skipped, each" \
        "$(result '[.mounts[] | select(.source == "advice") | select(.skipped) | .target] | length')" "$((${#NAMES[@]} - 3))"
is "the byte that is not UTF-8 among them, as \\xff" "$(result '.mounts[] | select(.target | endswith("ff\\xff")) | .why')" \
        "skipped: not in $T/fstab, so the advice would not outlast the mount"
is "their mounts are as they were (strictatime)" "$(opts "$M/ff"$'\xff')|$(opts "$M/\$HOME")" "rw|rw"

# --- noatime on "sp ace", where a reader needs relatime: refused, then
# forced (the reader named on the way is overridden, not a refusal).
module() { # POLICIES_JSON FORCE_JSON
        jq -n --argjson p "$1" --argjson f "$2" --arg fstab $T/fstab --arg ctl "$ATIMECTL" \
                '{ANSIBLE_MODULE_ARGS: {policies: $p, force: $f, min_history_points: 0, fstab: $fstab, atimectl: $ctl}}' >$T/args.json
        ATIMED_SOCKET=$T/sock $PY "$MODULE" $T/args.json >$T/module.json 2>$T/module.err
}
SP=$(jq -n --arg m "$M/sp ace" '{($m): "noatime"}')
module "$SP" '[]'
is "noatime on sp ace: the host fails" "$?|$(result '.mounts[0].refused')" "1|true"
like "naming the reader" "$(result '.mounts[0].why')" "^refused: noatime on $M/sp ace breaks a reader of atime that needs relatime"
like "sp ace is still relatime" "$(opts "$M/sp ace")" "(^|,)relatime(,|\$)"
module "$SP" "$(jq -n --arg m "$M/sp ace" '[$m]')"
is "with force for it: exit 0, changed" "$?|$(result .changed)" "0|true"
like "sp ace is noatime" "$(opts "$M/sp ace")" "(^|,)noatime(,|\$)"
done_testing
