#!/bin/bash
# protocol.sh: the control socket under requests atimectl would never send:
# unknown methods, malformed JSON, repeated keys, NUL in strings, "more",
# pipelining, oneway, oversize messages,
# slow and idle clients, too many clients.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace

write_config --bare '[control] max_clients = 4' '[control] idle_timeout = 2s' '[control] max_message_size = 4K'
start_daemon

raw() { "$RAWSOCK" "$@" "$T/sock"; }
nul() { printf '%s\0' "$@"; }

out=$(nul '{"method":"io.atimed.NoSuchThing"}' '{"method":"org.varlink.service.GetInfo"}' | raw -n 2)
like "unknown method: MethodNotFound naming it" "$(echo "$out" | sed -n 1p)" \
        '^\{"error":"org.varlink.service.MethodNotFound","parameters":\{"method":"io.atimed.NoSuchThing"\}\}$'
like "the connection stays usable after it" "$(echo "$out" | sed -n 2p)" '"product":"atimed"'

out=$(nul '{"method":' '{"method":"io.atimed.GetStatus"}' | raw -n 2)
like "malformed JSON: InvalidRequest" "$(echo "$out" | sed -n 1p)" '^\{"error":"io.atimed.InvalidRequest"'
like "and the next request on the connection is answered" "$(echo "$out" | sed -n 2p)" '"mounts":\['

out=$(nul '[1,2,3]' '{"parameters":{}}' '{"method":7}' | raw -n 3)
is "non-object, missing method, non-string method: three InvalidRequest errors" \
        "$(echo "$out" | grep -c '"error":"io.atimed.InvalidRequest"')" "3"

out=$(nul '{"method":"io.atimed.GetStatus","parameters":[]}' \
        '{"method":"io.atimed.GetStatus","parameters":{"target":false}}' \
        '{"method":"io.atimed.GetStatus","parameters":{"verbose":true}}' \
        '{"method":"io.atimed.GetStatus","oneway":"yes"}' | raw -n 4)
is "wrong parameter types and extra parameters: InvalidParameter each" \
        "$(echo "$out" | grep -c '"error":"org.varlink.service.InvalidParameter"')" "4"
like "the error names the extra parameter" "$out" '"parameter":"verbose"'

out=$(nul '{"method":"io.atimed.Probe","method":"io.atimed.GetStatus"}' \
        '{"method":"io.atimed.GetStatus","parameters":{"target":"/","target":"/x"}}' \
        '{"method":"io.atimed.GetHistory","parameters":{"target":"/\u0000/etc"}}' \
        '{"method":"io.atimed.GetStatus","more":true}' \
        '{"method":"io.atimed.GetStatus","extra":1}' \
        '{"method":"io.atimed.GetStatus","more":false}' | raw -n 6)
like "a repeated key: InvalidRequest saying so" "$(echo "$out" | sed -n 1p)" \
        '^\{"error":"io.atimed.InvalidRequest","parameters":\{"reason":"an object in the message repeats a key"\}\}$'
like "a repeated parameter too" "$(echo "$out" | sed -n 2p)" '"error":"io.atimed.InvalidRequest".*repeats a key'
like "\\u0000 in a string: InvalidRequest saying so" "$(echo "$out" | sed -n 3p)" '"error":"io.atimed.InvalidRequest".*holds a NUL'
like "\"more\": true (no method streams): InvalidParameter more" "$(echo "$out" | sed -n 4p)" \
        '^\{"error":"org.varlink.service.InvalidParameter","parameters":\{"parameter":"more"\}\}$'
like "an unknown top-level field: InvalidRequest" "$(echo "$out" | sed -n 5p)" '"error":"io.atimed.InvalidRequest".*unknown key'
like "\"more\": false is a plain call" "$(echo "$out" | sed -n 6p)" '"mounts":\['

deep=$(printf '%.0s[' $(seq 1 40))1$(printf '%.0s]' $(seq 1 40))
out=$(nul '{"method":"io.atimed.GetStatus","parameters":{"history_s":99999999999999999999}}' \
        '{"method":"io.atimed.GetStatus","parameters":{"history_s":-99999999999999999999}}' \
        '{"method":"io.atimed.GetStatus","parameters":{"history_s":1e400}}' \
        '{"method":"io.atimed.GetStatus","parameters":{"history_s":3600.5}}' \
        '{"method":"io.atimed.GetHistory","parameters":{"target":"/","since":9223372036854775807}}' | raw -n 5)
is "numbers out of range, non-integers and overflowing exponents: InvalidParameter each" \
        "$(echo "$out" | grep -c '"error":"org.varlink.service.InvalidParameter"')" "5"
out=$(nul "{\"method\":\"io.atimed.GetStatus\",\"parameters\":{\"target\":$deep}}" '{"method":"org.varlink.service.GetInfo"}' | raw -n 2)
like "nesting 40 deep: InvalidRequest" "$(echo "$out" | sed -n 1p)" '^\{"error":"io.atimed.InvalidRequest"'
like "and the connection still answers" "$(echo "$out" | sed -n 2p)" '"product":"atimed"'

out=$(nul '{"method":"com.example.Other"}' | raw -n 1)
like "an unknown interface: InterfaceNotFound" "$out" '"error":"org.varlink.service.InterfaceNotFound","parameters":\{"interface":"com.example"\}'

out=$(nul '{"method":"io.atimed.GetStatus","oneway":true}' '{"method":"org.varlink.service.GetInfo"}' | raw -n 2 -t 3)
is "oneway: no reply, the next request answered" "$(echo "$out" | grep -c .)" "1"
like "oneway: the answer is the GetInfo one" "$out" '"vendor":"atimed"'

out=$(nul '{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.atimed"}}' | raw -n 1)
like "GetInterfaceDescription serves the IDL" "$out" 'interface io.atimed\\nmethod|interface io.atimed\\n'

big=$(head -c 5000 /dev/zero | tr '\0' 'x')
out=$( (printf '{"method":"io.atimed.GetStatus","parameters":{"target":"%s"}}\0' "$big"; nul '{"method":"org.varlink.service.GetInfo"}') | raw -t 5)
status=$?
like "oversize: RequestTooLarge with the limit" "$out" '^\{"error":"io.atimed.RequestTooLarge","parameters":\{"limit":4096\}\}$'
is "oversize: then the connection is closed (no more replies)" "$(echo "$out" | grep -c .)/$status" "1/0"
check "the daemon serves others after an oversize request" ctl status

# A slow client (a byte every 40 ms: 1.6 s for its request, within the
# 2 s idle_timeout that counts whole requests) does not delay anyone else.
nul '{"method":"org.varlink.service.GetInfo"}' | raw -d 40 -n 1 >"$T/slow.out" &
slow=$!
wait_until 5 connections 1
# Timed from connect to the reply (a client's own start-up under ASan on a
# loaded machine can take longer than the bound).
read -r _ calls _ fails _ p50 _ max <<<"$("$top_builddir/tests/helpers/connhold" -m -t 1 "$T/sock")"
diag "fast clients while the slow one trickles: $calls calls, $fails failed, p50 ${p50} ms, max ${max} ms"
check "fast clients do not wait for the slow one (< 500 ms)" \
        awk -v c="$calls" -v f="$fails" -v m="$max" 'BEGIN { exit !(c > 0 && f == 0 && m < 500) }'
check "atimectl is served while the slow one trickles" ctl status
wait $slow
like "the slow client gets its answer too" "$(cat $T/slow.out)" '"vendor":"atimed"'

# Idle clients are dropped after idle_timeout.
start=$(date +%s)
: | raw -k -t 10
is "an idle connection is closed by the daemon (exit 0, not timeout)" "$?" "0"
check "after about idle_timeout" test $(($(date +%s) - start)) -le 4

# max_clients: the one over the limit is told so.
for i in 1 2 3 4; do
        : | raw -k -t 30 >/dev/null &
        holders="${holders:-} $!"
done
wait_until 5 connections 4
out=$(nul '{"method":"org.varlink.service.GetInfo"}' | raw -t 5)
like "a client over max_clients gets TooManyClients" "$out" '"error":"io.atimed.TooManyClients"'
like "the refusal is logged" "$(cat $T/atimed.log)" "Refusing control connection .*4 clients already connected"
kill $holders 2>/dev/null
wait $holders 2>/dev/null
check "slots are freed when clients go" wait_until 3 ctl status

# A client that never reads: its replies pile up in its own socket buffer,
# not in anyone's way.
(for i in $(seq 1 2000); do printf '{"method":"io.atimed.GetStatus"}\0'; done) | raw -k -t 1 -n 0 >/dev/null 2>&1 &
hog=$!
wait_until 5 connections 1
check "a client that does not read its replies does not block others" ctl status
kill $hog 2>/dev/null
wait $hog 2>/dev/null

stop_daemon
is "exit 0 after all that" "$STOP_STATUS" "0"
done_testing
