#!/bin/bash
# fleet.sh: what fleets consume. atimectl metrics passes promtool; the
# daemon's textfile is the same text, written atomically, 0644 under the
# unit's umask 077, and removed when atimed stops; a real node_exporter
# running as an unprivileged user (umask 077) serves it and a real
# Prometheus scrapes it and answers queries, counters included; every JSON
# reply matches the documented interface; the Grafana dashboard is valid
# JSON naming real metrics.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
# free_port: a random TCP port nothing listens on now.
free_port() {
        local p
        while :; do
                p=$((20000 + RANDOM % 30000))
                grep -qi ":$(printf %04X $p) [0-9A-F]*:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null || break
        done
        echo $p
}
SCHEMA="$top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink"
M=$T/mnt
mkdir -p $M/strict $M/noatime $T/textfile
make_ext4 a 32 || bail mkfs
mount -o loop,strictatime $T/a.img $M/strict && mount -t tmpfs -o noatime tmpfs $M/noatime || bail mount
make_tree $M/strict 2 20
write_config '[store] rings = 1s:10min, 10s:1h' "[export] textfile = $T/textfile/atimed.prom"
# The shipped unit's UMask=0077: the textfile must be readable all the same.
umask 077
start_daemon
umask 022
check "the strict mount is measured" wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json status $M/strict | jq -e '.mounts[0].activity != null' >/dev/null"
for i in 0 1 2 3 4; do cat $M/strict/d0/f$i >/dev/null; done
# The metrics below are of an interval with these reads in it, and of a probe.
next_interval $M/strict 10 >/dev/null && next_interval $M/strict 10 >/dev/null
wait_until 10 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status $M/strict | jq '.mounts[0].probe.verified')\" = true ]"

ctl metrics >$T/metrics.txt
is "atimectl metrics: exit 0" "$?" "0"
check "promtool check metrics accepts it" sh -c "promtool check metrics <$T/metrics.txt"
like "an info metric per mount with the policy as labels" "$(cat $T/metrics.txt)" \
        "^atimed_mount_info\\{mountpoint=\"$M/strict\",device=\"loop[0-9]+\",fstype=\"ext4\",atime=\"strictatime\",lazytime=\"false\",nodiratime=\"false\",read_only=\"false\",probe_verified=\"true\",probe_atime=\"strictatime\"\\} 1$"
like "the atime updates per second" "$(cat $T/metrics.txt)" "^atimed_atime_updates_per_second\\{mountpoint=\"$M/strict\"\\} [0-9.e+-]+$"
like "their interval bounds" "$(cat $T/metrics.txt)" "^atimed_atime_updates_upper_per_second\\{mountpoint=\"$M/strict\"\\} "
like "the distinct inodes per second" "$(cat $T/metrics.txt)" "^atimed_atime_inodes_per_second\\{mountpoint=\"$M/strict\"\\} [0-9.e+-]+$"
like "their interval bounds" "$(cat $T/metrics.txt)" "^atimed_atime_inodes_lower_per_second\\{mountpoint=\"$M/strict\"\\} "
like "atime updates as a counter" "$(cat $T/metrics.txt)" "^atimed_atime_updates_total\\{mountpoint=\"$M/strict\"\\} [0-9.e+-]+$"
like "device writes as counters" "$(cat $T/metrics.txt)" "^atimed_device_writes_total\\{mountpoint=\"$M/strict\",device=\"loop[0-9]+\"\\} [0-9.e+]+$"
like "and bytes" "$(cat $T/metrics.txt)" "^atimed_device_written_bytes_total\\{mountpoint=\"$M/strict\",device=\"loop[0-9]+\"\\} [0-9.e+]+$"
like "atimed_up" "$(cat $T/metrics.txt)" "^atimed_up 1$"
ts=$(awk '$1 == "atimed_last_export_timestamp_seconds" { print $2 }' $T/metrics.txt)
check "the time of the figures, within a minute of now" test "$(awk -v t="${ts:-0}" -v n="$(date +%s)" 'BEGIN { print (t > n - 60 && t <= n + 1) }')" = 1
like "the advice as a labelled gauge" "$(cat $T/metrics.txt)" "^atimed_recommendation\\{mountpoint=\"$M/noatime\",action=\"keep\",current=\"noatime\",recommended=\"noatime\",confidence=\"high\"\\} 1$"
like "the expected saving" "$(cat $T/metrics.txt)" "^atimed_recommendation_saving_cpu_seconds_per_second\\{mountpoint=\"$M/strict\"\\} "
like "stalled flags" "$(cat $T/metrics.txt)" "^atimed_mount_stalled\\{mountpoint=\"$M/strict\"\\} 0$"
like "build info and uptime" "$(cat $T/metrics.txt)" "^atimed_uptime_seconds [0-9]+$"
like "device writes in bytes" "$(cat $T/metrics.txt)" "^atimed_device_written_bytes_per_second\\{mountpoint=\"$M/strict\",device=\"loop[0-9]+\"\\} "
is "counters, and only counters, end in _total" \
        "$(awk '/^# TYPE/ && (($4 == "counter") != ($3 ~ /_total$/)) { print $3 }' $T/metrics.txt)" ""

check "the daemon writes the textfile" wait_until 5 test -s $T/textfile/atimed.prom
check "promtool accepts the textfile too" sh -c "promtool check metrics <$T/textfile/atimed.prom"
is "with the same metrics as atimectl" "$(grep '^# TYPE' $T/textfile/atimed.prom | sort)" "$(grep '^# TYPE' $T/metrics.txt | sort)"
is "and no temporary file left behind" "$(ls -A $T/textfile)" "atimed.prom"
is "the textfile is 0644 under umask 077" "$(stat -c %a $T/textfile/atimed.prom)" "644"
u1=$(awk '$1 ~ /^atimed_atime_updates_total/ && /strict/ { print $2 }' $T/textfile/atimed.prom)
for i in $(seq 0 19); do cat $M/strict/d1/f$i >/dev/null; done
check "the counter of atime updates grows with reads" wait_until 10 sh -c \
        "awk -v u=${u1:-0} '\$1 ~ /^atimed_atime_updates_total/ && /strict/ && \$2 > u { f = 1 } END { exit !f }' $T/textfile/atimed.prom"

# --- The documented JSON is the JSON produced.
for call in "GetStatus {}" "GetStatus {\"history_s\":600}" "GetRecommendations {}" \
        "GetHistory {\"target\":\"$M/strict\"}" "Probe {\"target\":\"$M/strict\"}"; do
        method=${call%% *}
        ctl call io.atimed.$method "${call#* }" >$T/reply.json
        check "$method ${call#* }: every field documented, every documented field there" \
                sh -c "$SCHEMA $method <$T/reply.json"
done
check "atimectl --json status is the documented GetStatus" sh -c "$ATIMECTL --socket $T/sock --json status | $SCHEMA GetStatus"
check "atimectl --json recommend is the documented GetRecommendations" \
        sh -c "$ATIMECTL --socket $T/sock --json recommend | $SCHEMA GetRecommendations"
check "atimectl --json history is the documented GetHistory" \
        sh -c "$ATIMECTL --socket $T/sock --json history $M/strict | $SCHEMA GetHistory"
is "every reply says its schema version" \
        "$(for m in GetStatus GetRecommendations; do ctl call io.atimed.$m | jq .schema_version; done | sort -u)" "2"
is "the served interface is the documented one" "$(ctl --json call org.varlink.service.GetInterfaceDescription '{"interface":"io.atimed"}' | jq -r .description)" \
        "$(cat $top_srcdir/docs/io.atimed.varlink)"
echo '{"schema_version":1,"mounts":[{"target":"/x","surprise":1}]}' >$T/bad.json
check "the schema check does catch an undocumented field" sh -c "! $SCHEMA GetStatus <$T/bad.json >/dev/null"

# --- The Grafana dashboard.
G=$top_srcdir/contrib/grafana/atimed.json
check "contrib/grafana/atimed.json is valid JSON" jq -e .panels $G
missing=""
for name in $(jq -r '.. | .expr? // empty' $G | grep -o 'atimed_[a-z_]*' | sort -u); do
        grep -q "^# TYPE $name " $T/metrics.txt || missing="$missing $name"
done
is "every metric the dashboard names exists" "$missing" ""

# --- A real node_exporter serving the textfile, and a real Prometheus.
if ! command -v prometheus-node-exporter >/dev/null || ! command -v curl >/dev/null; then
        skip_rest=1
        diag "prometheus-node-exporter or curl not installed"
        tap_result 1 "node_exporter and curl are installed"
else
        NE_PORT=$(free_port)
        # As Debian runs it: an unprivileged user; under umask 077 too.
        NE_USER=prometheus
        id -u $NE_USER >/dev/null 2>&1 || NE_USER=nobody
        (umask 077 && exec setpriv --reuid=$NE_USER --regid="$(id -g $NE_USER)" --clear-groups \
                prometheus-node-exporter --collector.disable-defaults --collector.textfile \
                --collector.textfile.directory=$T/textfile --web.listen-address=127.0.0.1:$NE_PORT) \
                >$T/ne.log 2>&1 &
        NE_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $NE_PID"
        check "node_exporter runs as $NE_USER" wait_until 5 sh -c \
                "awk '/^Uid:/ { exit \$2 != $(id -u $NE_USER) }' /proc/$NE_PID/status"
        check "node_exporter serves atimed's series over loopback" wait_until 15 sh -c \
                "curl -sf http://127.0.0.1:$NE_PORT/metrics | grep -q 'atimed_mount_info{.*mountpoint=\"$M/strict\"'"
        curl -sf http://127.0.0.1:$NE_PORT/metrics >$T/ne.txt
        is "without textfile errors" "$(grep '^node_textfile_scrape_error' $T/ne.txt)" "node_textfile_scrape_error 0"
        if command -v prometheus >/dev/null; then
                P_PORT=$(free_port)
                cat >$T/prometheus.yml <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
YML
                prometheus --config.file=$T/prometheus.yml --storage.tsdb.path=$T/prom-data \
                        --web.listen-address=127.0.0.1:$P_PORT >$T/prom.log 2>&1 &
                P_PID=$!
                DAEMON_PIDS="$DAEMON_PIDS $P_PID"
                q="http://127.0.0.1:$P_PORT/api/v1/query?query=atimed_mount_info%7Batime%3D%22strictatime%22%7D"
                check "Prometheus scrapes it and its query API returns the series" wait_until 60 sh -c \
                        "curl -sf '$q' | jq -e '.data.result[] | select(.metric.mountpoint == \"$M/strict\")' >/dev/null"
                q="http://127.0.0.1:$P_PORT/api/v1/query?query=atimed_atime_updates_total"
                check "the counters arrive too" wait_until 30 sh -c \
                        "curl -sf '$q' | jq -e '.data.result[] | select(.metric.mountpoint == \"$M/strict\")' >/dev/null"
                q="http://127.0.0.1:$P_PORT/api/v1/query?query=node_textfile_scrape_error"
                check "Prometheus has node_textfile_scrape_error 0" wait_until 30 sh -c \
                        "curl -sf '$q' | jq -e '.data.result[0].value[1] == \"0\"' >/dev/null"
                kill -TERM $P_PID && wait $P_PID
        else
                diag "prometheus not installed: the query step is not run"
                tap_result 1 "prometheus is installed"
        fi
        kill -TERM $NE_PID && wait $NE_PID
fi
stop_daemon
is "atimed stopped cleanly" "$STOP_STATUS" "0"
is "and removed its textfile: no stale figures served" "$(ls -A $T/textfile)" ""
done_testing
