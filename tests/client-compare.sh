#!/bin/bash
# client-compare.sh: two atimectl builds, the same replies, the same text.
# A real atimed runs on real mounts (tmpfs of each policy, a read-only one,
# an over-mounted one, names with a tab and a byte that is not UTF-8, an
# ext4 on a loop device, a file bind mount) and a policy change; every
# command atimectl has is run once through a recording proxy in front of
# it, then both builds are run against the recorded replies, so that what
# the daemon measured in between cannot make them differ. Prints TAP, one
# line per command: its stdout, stderr and exit status must be the same.
#
#   top_builddir=BUILD top_srcdir=SRC BEFORE=OLD-ATIMECTL [RECORD_TO=DIR] \
#       bash tests/client-compare.sh
# AFTER defaults to $top_builddir/atimectl; RECORD_TO keeps the recorded
# replies (NAME.json: {"method", "parameters", "reply"}) for fixtures.
# Not part of make check: it compares builds, it asserts nothing of atimed.
. "$top_srcdir/tests/integration/lib.sh"
: "${BEFORE:?the atimectl to compare with}"
AFTER=${AFTER:-$top_builddir/atimectl}
enter_namespace
command -v python3 >/dev/null || skip_all "needs python3 for the replay proxy"

M=/srv
LONG=$M/a-rather-long-directory-name/with-more-levels/and-a-mount-point-at-the-end
BAD=$M/$'bad\xffname\there'
mkdir -p /srv && mount -t tmpfs -o size=1m,mode=0755 atimed-test /srv || bail "tmpfs on /srv"
mkdir -p $M/alpha $M/beta "$LONG" $M/ro $M/stack $M/ext "$BAD" $T/tmpfiles.d && touch $M/file $T/file-src
mount -t tmpfs -o strictatime,size=8m tmpfs $M/alpha && mount -t tmpfs -o relatime,size=8m tmpfs $M/beta &&
mount -t tmpfs -o noatime,size=8m tmpfs "$LONG" && mount -t tmpfs -o ro,size=1m tmpfs $M/ro &&
mount -t tmpfs -o size=1m tmpfs $M/stack && mount -t tmpfs -o size=1m,lazytime tmpfs $M/stack &&
mount -t tmpfs -o size=1m tmpfs "$BAD" && mount --bind $T/file-src $M/file || bail mount
make_ext4 ext 16 && mount -o loop,relatime "$T/ext.img" $M/ext || bail "ext4 on a loop device"
# Drift: alpha is strictatime live; beta, remounted noatime below, matches.
printf 'tmpfs %s tmpfs noatime 0 0\ntmpfs %s tmpfs relatime,lazytime 0 0\n' $M/beta $M/alpha >$T/etc-fstab
mount --bind $T/etc-fstab /etc/fstab || bail "bind mount over /etc/fstab"
echo "D $LONG/cache 0755 root root 10d" >$T/tmpfiles.d/cache.conf
others=$(findmnt -rno TARGET | grep -v -e "^$T" -e '^/$' -e '^/srv' | sed -E 's|^(/[^/]+)/.*|\1|' | grep -vx /tmp | sort -u | tr '\n' ' ')
write_config "[mounts] exclude_paths += [/]srv [/]run $others" '[sampler] walk_rate' \
        '[store] rings = 1s:10min, 10s:1h' "[consumers] tmpfiles_dirs = $T/tmpfiles.d" \
        "[consumers] mail_spools = $T/none" "[consumers] tmpreaper_conf = $T/none" \
        "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none"
start_daemon

# Figures, history and a change of policy to show.
check "alpha and beta measured, with history" wait_until 30 sh -c \
        "[ \"\$($ATIMECTL --socket $T/sock call io.atimed.GetStatus '{\"history_s\":3600}' | jq '[.mounts[] | select(.target == \"$M/alpha\" or .target == \"$M/beta\") | select(.probe != null and .activity != null and ((.history // []) | length) > 0)] | length')\" = 2 ]"
for i in $(seq 1 20); do echo "file $i" >$M/alpha/f$i; done
cat $M/alpha/f* >/dev/null
# Points of 10 s on either side of the change: marks from point to point.
points() { # TARGET POLICY: how many of TARGET's points were under POLICY
        "$ATIMECTL" --socket $T/sock call io.atimed.GetHistory "{\"target\":\"$1\",\"resolution\":10}" |
                jq --arg p "$2" '[.points[] | select(.atime == $p)] | length'
}
at_least() { [ "$(points "$1" "$2")" -ge "$3" ]; } # TARGET POLICY N
check "beta has history under relatime" wait_until 60 at_least $M/beta relatime 2
mount -o remount,noatime $M/beta || bail "remount beta"
check "beta's change of policy is in its history" wait_until 60 at_least $M/beta noatime 2

# The proxy: records each call's reply (mode record), or serves it again
# (mode replay); a call is its method and parameters, "since" left out (it
# moves with the clock).
cat >$T/proxy.py <<'EOF'
import json, os, socket, sys, threading
mode, listen, upstream, store = sys.argv[1:5]
recs = json.load(open(store)) if mode == "replay" else {}
seen = {}
lock = threading.Lock()
def key(req):
    p = dict(req.get("parameters") or {})
    p.pop("since", None)
    return req.get("method", "") + " " + json.dumps(p, sort_keys=True)
def read_msg(s):
    buf = b""
    while not buf.endswith(b"\0"):
        c = s.recv(65536)
        if not c:
            return None
        buf += c
    return buf[:-1]
def serve(c):
    with c:
        while True:
            m = read_msg(c)
            if m is None:
                return
            req = json.loads(m.decode("utf-8", "surrogateescape"))
            k = key(req)
            with lock:
                n = seen[k] = seen.get(k, -1) + 1
            if mode == "record":
                with socket.socket(socket.AF_UNIX) as u:
                    u.connect(upstream)
                    u.sendall(m + b"\0")
                    rep = read_msg(u)
                with lock:
                    raw = rep.decode("utf-8", "surrogateescape")
                    recs.setdefault(k, []).append({"method": req.get("method"), "parameters": req.get("parameters"),
                                                   "raw": raw, "reply": json.loads(raw)})
                    json.dump(recs, open(store, "w"), indent=1, sort_keys=True)
            elif k in recs:
                rep = recs[k][min(n, len(recs[k]) - 1)]["raw"].encode("utf-8", "surrogateescape")
            else:
                rep = b'{"error":"io.atimed.NotRecorded","parameters":{}}'
            c.sendall(rep + b"\0")
if os.path.exists(listen):
    os.unlink(listen)
s = socket.socket(socket.AF_UNIX)
s.bind(listen)
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
proxy() { # MODE: the proxy on $T/proxy-sock
        python3 $T/proxy.py "$1" $T/proxy-sock $T/sock $T/replies.json >$T/proxy.out 2>&1 &
        PROXY_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $PROXY_PID"
        wait_until 10 grep -q ready $T/proxy.out || bail "the proxy did not start"
}
proxy_stop() { kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; : >$T/proxy.out; }

# Each command: a name, then what to run (env settings, then atimectl's
# words). The broken configuration comes last, as reload's failing case.
COMMANDS=(
        "status|COLUMNS=80 status"
        "status-no-legend|COLUMNS=80 status --no-legend"
        "status-plus|COLUMNS=80 status -o +DEVICE"
        "status-all-full|COLUMNS=80 status --full -o TARGET,FSTYPE,DEVICE,ATIME,PROBE,UPDATES/MIN,LAST-HOUR,DEV-WRITES"
        "status-60|COLUMNS=60 status"
        "status-200|COLUMNS=200 status"
        "status-ascii|LC_ALL=C COLUMNS=120 status"
        "status-alpha|COLUMNS=120 status $M/alpha"
        "status-path|COLUMNS=120 status $M/alpha/f1"
        "status-json|COLUMNS=120 status --json"
        "status-untracked|COLUMNS=120 status /proc"
        "history-alpha|COLUMNS=100 history $M/alpha"
        "history-beta|COLUMNS=100 history $M/beta"
        "history-beta-ascii|LC_ALL=C COLUMNS=70 history $M/beta"
        "history-ext|COLUMNS=100 history $M/ext"
        "history-res|COLUMNS=100 history --resolution 10s $M/alpha"
        "history-bad-res|COLUMNS=100 history --resolution 7s $M/alpha"
        "history-json|COLUMNS=100 history --json $M/beta"
        "recommend|recommend"
        "recommend-beta|recommend $M/beta"
        "recommend-no-legend|recommend --no-legend"
        "recommend-json|recommend --json"
        "metrics|metrics"
        "probe-alpha|probe $M/alpha"
        "probe-ro|probe $M/ro"
        "probe-json|probe --json $M/beta"
        "reload|reload"
        "fstab|fstab"
        "fstab-check|fstab --check"
        "fstab-set-reader|fstab --set $LONG=noatime"
        "remount-reader|remount $LONG noatime"
        "remount-reader-json|remount --json $LONG noatime"
        "call|call io.atimed.GetRecommendations"
        "reload-broken|reload"
)
run_one() { # ATIMECTL OUTDIR NAME WORDS: leading WORDS of NAME=VALUE are the environment
        local -a w envs=() args=()
        local x
        set -f
        read -r -a w <<<"$4"
        set +f
        for x in "${w[@]}"; do
                if [ ${#args[@]} -eq 0 ] && [[ $x =~ ^[A-Z_]+= ]]; then envs+=("$x"); else args+=("$x"); fi
        done
        env TZ=UTC LC_ALL=C.UTF-8 "${envs[@]}" "$1" --socket $T/proxy-sock "${args[@]}" >"$2/$3.out" 2>"$2/$3.err"
        echo $? >"$2/$3.rc"
}
run_all() { # MODE ATIMECTL OUTDIR: every command through a proxy of its own
        local c name
        mkdir -p "$3"
        proxy "$1"
        for c in "${COMMANDS[@]}"; do
                name=${c%%|*}
                [ "$name" = reload-broken ] && echo "[sampler] interval = never" >>$T/atimed.conf
                run_one "$2" "$3" "$name" "${c#*|}"
                [ "$name" = reload-broken ] && sed -i '$d' $T/atimed.conf
        done
        proxy_stop
}

run_all record "$BEFORE" $T/recorded
run_all replay "$BEFORE" $T/before
run_all replay "$AFTER" $T/after
for c in "${COMMANDS[@]}"; do
        name=${c%%|*}
        if diff -u $T/before/$name.out $T/after/$name.out >$T/$name.diff &&
                diff -u $T/before/$name.err $T/after/$name.err >>$T/$name.diff &&
                diff -u $T/before/$name.rc $T/after/$name.rc >>$T/$name.diff; then
                tap_result 0 "same: $name (exit $(cat $T/after/$name.rc), $(wc -l <$T/after/$name.out) lines)"
        else
                tap_result 1 "same: $name"
                sed 's/^/#   /' $T/$name.diff | head -40
        fi
done
is "every call was recorded" "$(cat $T/before/*.err $T/after/*.err | grep -c NotRecorded)" "0"
if [ -n "${RECORD_TO:-}" ]; then
        mkdir -p "$RECORD_TO" && cp $T/replies.json $T/etc-fstab "$RECORD_TO/" && cp -r $T/before "$RECORD_TO/outputs"
        diag "replies kept in $RECORD_TO"
fi
done_testing
