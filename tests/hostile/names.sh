#!/bin/bash
# names.sh: mount points any user could choose (an invalid UTF-8 byte, a
# newline followed by a forged log line, a terminal escape sequence, a bidi
# override, a backslash that looks like an escape). Every consumer still
# works: JSON stays valid UTF-8 (python3 json.loads), the names map back to
# their bytes, the raw path finds its mount, promtool accepts the metrics,
# the terminal output holds no control character, the suggested command
# lines are single shell words that give back the path, and the log has one
# line per message with nothing forged.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
command -v python3 >/dev/null || skip_all "python3 is needed"
M=$T/mnt
BAD="$M/bad"$'\xff'
NL="$M/nl"$'\n''<0>EMERGENCY: disk on fire'
ESC="$M/esc"$'\e]0;pwned\a\e[2J'
RTL="$M/rtl"$'\u202e''txt.exe'
C1="$M/c1"$'\u009b''31m'
BACK="$M/back\\xff"
NAMES=("$BAD" "$NL" "$ESC" "$RTL" "$C1" "$BACK")

write_config '[sampler] walk_rate' '[store] flush_interval = 1s' "[export] textfile = $T/atimed.prom"
start_daemon
# Mounted after the start: each is logged ("Tracking ...") at info level.
for n in "${NAMES[@]}"; do
        mkdir -p "$n" && mount -t tmpfs -o strictatime tmpfs "$n" || bail "mount $n"
        echo data >"$n/f"
done
six_tracked() { [ "$(ctl --json status | jq --arg m "$M/" '[.mounts[] | select(.target | startswith($m))] | length')" = 6 ]; }
check "all six are tracked" wait_until 15 six_tracked

# pycheck SCRIPT: runs python3 on stdin with the raw names in NAMES (bytes).
pycheck() {
        NAMES0=$(printf '%s\0' "${NAMES[@]}" | base64 -w0) python3 -c "
import base64, json, os, sys
names = base64.b64decode(os.environ['NAMES0']).split(b'\0')[:-1]
def unescape(s):
    out, b, i = bytearray(), s.encode('utf-8'), 0
    while i < len(b):
        if b[i:i+2] == b'\\\\\\\\': out += b'\\\\'; i += 2
        elif b[i:i+2] == b'\\\\x' and len(b) >= i + 4 and all(c in b'0123456789abcdefABCDEF' for c in b[i+2:i+4]) and b[i+2:i+4] != b'00':
            out.append(int(b[i+2:i+4], 16)); i += 4
        else: out.append(b[i]); i += 1
    return bytes(out)
data = sys.stdin.buffer.read()
$1"
}
# Terminal output: valid UTF-8, no C0 but newline, no DEL, no C1, no bidi.
SAFE='
text = data.decode("utf-8")
bad = [hex(ord(c)) for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
sys.exit("unsafe characters: %s" % bad[:10] if bad else 0)'

ctl --json status >"$T/status.json"
check "status --json: python3 json.loads reads it" pycheck 'json.loads(data)' <"$T/status.json"
check "status --json: C1 and bidi controls as \\uHHHH, safe on a terminal too" pycheck "$SAFE" <"$T/status.json"
check "and their targets are the mount points' bytes, exactly" pycheck '
got = {unescape(m["target"]) for m in json.loads(data)["mounts"]}
missing = [n for n in names if n not in got]
sys.exit("not found: %r" % missing if missing else 0)' <"$T/status.json"
is "a backslash in a name is doubled, an invalid byte is \\xff" \
        "$(jq -r '.mounts[].target' "$T/status.json" | grep -E '/(bad|back)' | sed 's|.*/||' | sort | tr '\n' ' ')" \
        'back\\xff bad\xff '

ctl status --full >"$T/status.txt"
check "status: no control character reaches the terminal" pycheck "$SAFE" <"$T/status.txt"
is "status: one line per mount (a newline in a name starts none)" "$(grep -c "^$M/" "$T/status.txt")" "6"
like "status: the newline shows as \\x0a" "$(cat "$T/status.txt")" 'nl\\x0a<0>EMERGENCY'
like "status: the bidi override shows as \\u202e" "$(cat "$T/status.txt")" 'rtl\\u202etxt'
like "status: C1 CSI shows as \\u009b" "$(cat "$T/status.txt")" 'c1\\u009b31m'

for n in "$BAD" "$NL" "$BACK"; do
        label=$(printf '%q' "${n#$M/}")
        out=$(ctl --json status "$n" | jq -r '.mounts | length')
        is "status with the raw path $label finds that mount" "$out" "1"
        check "history with the raw path $label works" wait_until 15 ctl history "$n"
        ctl history "$n" >"$T/history.txt" 2>&1
        check "history of $label: no control character" pycheck "$SAFE" <"$T/history.txt"
        check "history --json of $label: valid JSON naming that mount" \
                pycheck 'sys.exit(0 if unescape(json.loads(data)["target"]) in names else 1)' <<<"$(ctl --json history "$n")"
done
check "probe with the raw path \$'...\\xff' works" ctl probe "$BAD"
ctl recommend >"$T/rec.txt" 2>&1
check "recommend: no control character" pycheck "$SAFE" <"$T/rec.txt"
like "recommend: advises the strictatime mounts" "$(cat "$T/rec.txt")" 'bad\\xff \(tmpfs\): strictatime'
check "recommend --json: python3 json.loads reads it" pycheck 'json.loads(data)' <<<"$(ctl --json recommend)"

ctl metrics >"$T/metrics.txt"
check "metrics: valid UTF-8" pycheck 'data.decode("utf-8")' <"$T/metrics.txt"
if command -v promtool >/dev/null; then
        check "metrics: promtool check metrics accepts them" sh -c "promtool check metrics <$T/metrics.txt"
else
        diag "promtool not installed: skipped its check"
fi
textfile_has_six() { [ "$(grep -c "^atimed_mount_info{.*$M/" "$T/atimed.prom")" -ge 6 ]; }
if command -v promtool >/dev/null && wait_until 15 textfile_has_six; then
        check "the daemon's textfile: promtool check metrics accepts it" sh -c "promtool check metrics <$T/atimed.prom"
else
        check "the daemon's textfile names the six mounts" textfile_has_six
fi
like "metrics: the label holds the escaped name" "$(grep atimed_ "$T/metrics.txt" | grep -c 'bad\\\\xff')" '^[1-9]'

# fstab: none of them is in the file; the hints suggest commands.
: >"$T/fstab"
ctl fstab --file "$T/fstab" >"$T/fstab.out" 2>"$T/fstab.err"
check "fstab hints: no control character" pycheck "$SAFE" <"$T/fstab.err"
# (The host's own mounts may get hints too: only ours are counted.)
is "fstab hints: one line per mount" "$(grep 'is not in' "$T/fstab.err" | grep -cF "$M/")" "6"
# The word after "atimectl remount", evaluated by bash, is the path.
n_ok=0
while IFS= read -r line; do
        word=$(printf '%s' "$line" | sed -E 's/.*Now: atimectl remount (.*) (strictatime|relatime|noatime)[a-z,]* \(or mount.*/\1/')
        eval "path=$word"
        for n in "${NAMES[@]}"; do [ "$path" = "$n" ] && n_ok=$((n_ok + 1)); done
done < <(grep 'is not in' "$T/fstab.err")
is "each suggested command line names its mount in one quoted word" "$n_ok" "6"
like "a name with a newline is quoted \$'...'" "$(cat "$T/fstab.err")" "remount \\\$'$M/nl\\\\x0a<0>EMERGENCY: disk on fire'"
like "a printable name with a quote-free path is quoted '...'" "$(cat "$T/fstab.err")" "remount '$M/back\\\\xff'"

# The log: every message one line, nothing forged, no control character.
stop_daemon
check "the log: no control character" pycheck "$SAFE" <"$T/atimed.log"
is "the log: no line forged by a name" "$(grep -c '^<0>\|^EMERGENCY' "$T/atimed.log")" "0"
like "the log names the mount, escaped" "$(cat "$T/atimed.log")" 'Tracking .*nl\\x0a<0>EMERGENCY: disk on fire'
done_testing
