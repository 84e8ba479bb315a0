#!/bin/bash
# fleet.sh: what fleets consume. atimectl metrics passes promtool; the
# daemon's textfile is the same text, written atomically; a real
# node_exporter serves it and a real Prometheus scrapes it and answers a
# query; every JSON reply matches the documented interface; the Grafana
# dashboard is valid JSON naming real metrics.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
SCHEMA="$top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink"
M=$T/mnt
mkdir -p $M/strict $M/noatime $T/textfile
make_ext4 a 32 || bail mkfs
mount -o loop,strictatime $T/a.img $M/strict && mount -t tmpfs -o noatime tmpfs $M/noatime || bail mount
make_tree $M/strict 2 20
cat >"$T/atimed.conf" <<CONF
[mounts]
exclude_paths = [/] [/]${T#/}
[sampler]
interval = 1s
walk_rate = 100000
[store]
rings = 1s:10min, 10s:1h
[export]
textfile = $T/textfile/atimed.prom
CONF
start_daemon
check "the strict mount is measured" wait_until 20 sh -c "$ATIMECTL --socket $T/sock --json status $M/strict | jq -e '.mounts[0].activity != null' >/dev/null"
for i in 0 1 2 3 4; do cat $M/strict/d0/f$i >/dev/null; done
sleep 2

ctl metrics >$T/metrics.txt
is "atimectl metrics: exit 0" "$?" "0"
check "promtool check metrics accepts it" sh -c "promtool check metrics <$T/metrics.txt"
like "an info metric per mount with the policy as labels" "$(cat $T/metrics.txt)" \
        "^atimed_mount_info\\{mountpoint=\"$M/strict\",device=\"loop[0-9]+\",fstype=\"ext4\",atime=\"strictatime\",lazytime=\"false\",nodiratime=\"false\",read_only=\"false\",probe_verified=\"true\",probe_atime=\"strictatime\"\\} 1$"
like "the atime estimate per second" "$(cat $T/metrics.txt)" "^atimed_atime_updates_per_second\\{mountpoint=\"$M/strict\"\\} [0-9.e+-]+$"
like "its interval bounds" "$(cat $T/metrics.txt)" "^atimed_atime_updates_upper_per_second\\{mountpoint=\"$M/strict\"\\} "
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
is "and no temporary file left behind" "$(ls $T/textfile)" "atimed.prom"

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
        "$(for m in GetStatus GetRecommendations; do ctl call io.atimed.$m | jq .schema_version; done | sort -u)" "1"
is "the served interface is the documented one" "$(ctl call org.varlink.service.GetInterfaceDescription '{"interface":"io.atimed"}' | jq -r .description)" \
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
        NE_PORT=$((20000 + RANDOM % 10000))
        prometheus-node-exporter --collector.disable-defaults --collector.textfile \
                --collector.textfile.directory=$T/textfile --web.listen-address=127.0.0.1:$NE_PORT \
                >$T/ne.log 2>&1 &
        DAEMON_PIDS="$DAEMON_PIDS $!"
        check "node_exporter serves atimed's series over loopback" wait_until 15 sh -c \
                "curl -sf http://127.0.0.1:$NE_PORT/metrics | grep -q 'atimed_mount_info{.*mountpoint=\"$M/strict\"'"
        curl -sf http://127.0.0.1:$NE_PORT/metrics >$T/ne.txt
        is "without textfile errors" "$(grep '^node_textfile_scrape_error' $T/ne.txt)" "node_textfile_scrape_error 0"
        if command -v prometheus >/dev/null; then
                P_PORT=$((NE_PORT + 1))
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
                DAEMON_PIDS="$DAEMON_PIDS $!"
                q="http://127.0.0.1:$P_PORT/api/v1/query?query=atimed_mount_info%7Batime%3D%22strictatime%22%7D"
                check "Prometheus scrapes it and its query API returns the series" wait_until 60 sh -c \
                        "curl -sf '$q' | jq -e '.data.result[] | select(.metric.mountpoint == \"$M/strict\")' >/dev/null"
        else
                diag "prometheus not installed: the query step is not run"
                tap_result 1 "prometheus is installed"
        fi
fi
stop_daemon
done_testing
