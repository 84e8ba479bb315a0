#!/bin/bash
# replybudget.sh: the replies a user leaves unread are bounded (issue 36).
# User nobody opens 7 connections to a root daemon tracking 2,000 mounts,
# asks GetStatus with an hour of history (as `atimectl status` does) on
# each and reads none of the replies (of a few MB each): before, the
# daemon held them all, and with every user's connections up to 56 such
# replies. Now past the user's budget ([control] user_reply_memory,
# default 4M) a request is answered io.atimed.ReplyBudgetExceeded, and
# asking again on the refused connections, in a loop, gets the same; so
# does nobody's own `atimectl status` on the eighth connection a user may
# hold, saying why, while root's succeeds. Throughout, root's status is
# answered, within 3x its quiet median in a release build, and the
# watchdog is fed (attack-lib.sh); the daemon's resident memory is
# printed.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
. "$top_srcdir/tests/hostile/attack-lib.sh"
PY=/usr/bin/python3
[ -x $PY ] || skip_all "needs $PY"
N=2000
BUDGET=$((4 * 1024 * 1024))
REQ='{"method":"io.atimed.GetStatus","parameters":{"history_s":3600}}'

many_mounts $N
write_config "${TMPFS_ONLY[@]}"
attack_daemon $N

# The size of the reply, as root reads it whole.
SIZE=$(printf '%s\0' "$REQ" | "$RAWSOCK" -n 1 "$T/sock" | wc -c)
diag "GetStatus with history_s 3600 at $N mounts: $SIZE bytes"
check "a reply larger than a socket's buffer ($SIZE bytes)" test "$SIZE" -gt 1000000

rss_anon() { awk '/^RssAnon:/ { print $2 }' /proc/$DAEMON_PID/status; }
vm_rss() { awk '/^VmRSS:/ { print $2 }' /proc/$DAEMON_PID/status; }

# The user's client: 7 connections, a request on each before reading any;
# then the first bytes of each answer: "served S refused R other O" on a
# line (and the refusal's text on the next); then, until SECONDS pass, asks
# again on the refused ones (reading those answers whole) and never reads
# the served ones. Its last line: the refusals counted in that loop. It
# holds its connections until the file RELEASE exists.
cat >"$T/client.py" <<'EOF'
import os, select, socket, sys, time
path, req, seconds, release = sys.argv[1], sys.argv[2].encode() + b"\0", float(sys.argv[3]), sys.argv[4]
end = time.monotonic() + seconds

def answer(s):
    data = b""
    while b"\0" not in data and select.select([s], [], [], 30)[0]:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
        if data.startswith(b'{"parameters"'):
            break  # a reply is read no further: held unread
    return data

socks = []
for i in range(7):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(req)
    socks.append(s)
served, refused, text = [], [], ""
for s in socks:
    a = answer(s)
    if a.startswith(b'{"parameters"'):
        served.append(s)
    elif b"io.atimed.ReplyBudgetExceeded" in a:
        refused.append(s)
        text = a.rstrip(b"\0").decode()
print("served", len(served), "refused", len(refused), "other", 7 - len(served) - len(refused))
print(text, flush=True)
again = 0
while refused and time.monotonic() < end:
    for s in refused:
        s.sendall(req)
        if b"io.atimed.ReplyBudgetExceeded" in answer(s):
            again += 1
print(again, flush=True)
while not os.path.exists(release):
    time.sleep(0.05)  # the client's own pace, not a wait for the daemon
EOF

RSS0=$(vm_rss) ANON0=$(rss_anon)
attack_begin 8
as_nobody $PY "$T/client.py" "$T/sock" "$REQ" 8 "$T/release" >"$T/client.out" 2>&1 &
CLIENT=$!
# While nobody's replies are held: their own atimectl status is refused,
# root's full one is not.
wait_until 30 grep -q served $T/client.out
as_nobody "$ATIMECTL" --socket "$T/sock" status >$T/nobody.out 2>&1
NOBODY_RC=$?
ctl status >$T/root.out 2>&1
ROOT_RC=$?
attack_end
# The client holds its replies (unread) until released: the daemon's
# memory with them held.
wait_until 30 test -n "$(sed -n 3p $T/client.out)"
RSS1=$(vm_rss) ANON1=$(rss_anon)
touch $T/release
wait $CLIENT
read -r _ SERVED _ REFUSED _ OTHER <<<"$(sed -n 1p $T/client.out)"
AGAIN=$(sed -n 3p $T/client.out)
diag "nobody's 7 requests: $SERVED served, $REFUSED refused, $OTHER other; asked again $AGAIN times, refused each"
diag "daemon memory: VmRSS $RSS0 KiB before, $RSS1 KiB with the replies held; RssAnon $ANON0 -> $ANON1 KiB"
attack_judge "7 connections of nobody asking $SIZE-byte replies, reading none"
like "a request past the budget: ReplyBudgetExceeded, saying the limit" "$(sed -n 2p $T/client.out)" \
        "\"error\":\"io.atimed.ReplyBudgetExceeded\",\"parameters\":\\{\"limit\":$BUDGET,\"reason\":\"[^\"]*user_reply_memory"
check "a reply is served ($SERVED), as many as the budget holds ($BUDGET bytes)" \
        test "$SERVED" -ge 1 -a $(((SERVED - 1) * SIZE)) -le "$BUDGET"
is "the rest refused" "$REFUSED" "$((7 - SERVED))"
check "asking again is refused again ($AGAIN times)" test "${AGAIN:-0}" -ge 1
is "nobody's atimectl status meanwhile fails" "$NOBODY_RC" "1"
like "saying why" "$(cat $T/nobody.out)" "^atimectl: atimed refused: this user's connections hold unread replies up to user_reply_memory"
is "root's atimectl status of every mount meanwhile succeeds" "$ROOT_RC" "0"
# The memory is printed, not judged: the heap the daemon's earlier builds
# of such replies left free (kept by malloc) takes the held ones without
# growing, so its growth does not tell 7 replies held from 3 (and ASan's
# quarantine keeps freed memory). The counts above are the judge.
check "root's status still answers" ctl status $T/many/m0
stop_daemon
is "clean exit" "$STOP_STATUS" "0"
attack_usage
attack_share_held $(id -u nobody)
done_testing
