#!/bin/bash
# rules.sh: what contrib/ ships for Prometheus and Grafana. The rules pass
# `promtool check rules` and their unit tests (`promtool test rules`,
# tests/fixtures/prometheus/atimed.rules.test.yml); every query of the
# Grafana dashboard is valid PromQL; tables with several queries merge
# them; and every series the rules and the dashboard name is one a running
# daemon exports (in `atimectl metrics` or its textfile).
. "$top_srcdir/tests/integration/lib.sh"
command -v promtool >/dev/null || skip_all "promtool not installed (package prometheus)"
enter_namespace
RULES=$top_srcdir/contrib/prometheus/atimed.rules.yml
G=$top_srcdir/contrib/grafana/atimed.json

check "promtool check rules accepts atimed.rules.yml" promtool check rules "$RULES"
# promtool reads rule_files next to the test file.
cp "$RULES" "$top_srcdir/tests/fixtures/prometheus/atimed.rules.test.yml" "$T/"
check "promtool test rules: the recording rules and alerts do what the test says" \
        promtool test rules "$T/atimed.rules.test.yml"
for alert in AtimedStrictatimeBusy AtimedProbeMismatch AtimedMountStalled AtimedExportStale AtimedDown AtimedFstabDrift \
        AtimedPolicyChangeUnderdelivered; do
        like "alert $alert is there" "$(cat "$RULES")" "^ *- alert: $alert$"
        like "and tested" "$(cat "$T/atimed.rules.test.yml")" "alertname: $alert$"
done

# --- The dashboard.
check "the dashboard is valid JSON" jq -e .panels "$G"
jq -r '.panels[] | .targets[]? | .expr' "$G" >"$T/exprs"
{
        echo "groups:"
        echo "  - name: dashboard"
        echo "    rules:"
        n=0
        while read -r e; do
                n=$((n + 1))
                printf '      - record: dashboard_query_%d\n        expr: %s\n' "$n" "$(e=${e//\$instance/.*}; printf '%s' "${e//\$mount/.*}" | jq -Rs .)"
        done <"$T/exprs"
} >"$T/exprs.rules.yml"
check "every dashboard query is valid PromQL ($(wc -l <"$T/exprs") queries)" promtool check rules "$T/exprs.rules.yml"
is "every table with several queries merges them into one" \
        "$(jq -r '.panels[] | select(.type == "table" and (.targets | length) > 1)
                | select([.transformations[]?.id] | index("merge") | not) | .title' "$G")" ""
like "Advised changes: a merge transformation" \
        "$(jq -r '.panels[] | select(.title == "Advised changes") | .transformations[0].id' "$G")" "^merge$"

# --- The names they use are the names a daemon exports.
M=$T/mnt
mkdir -p $M/strict $T/textfile
mount -t tmpfs -o strictatime tmpfs $M/strict || bail mount
make_tree $M/strict 2 5
write_config '[sampler] walk_rate' "[export] textfile = $T/textfile/atimed.prom"
start_daemon
check "the mount is measured" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock --json status $M/strict | jq -e '.mounts[0].activity != null'"
check "the textfile is written" wait_until 10 test -s "$T/textfile/atimed.prom"
{ ctl metrics; cat "$T/textfile/atimed.prom"; } | sed -n 's/^# TYPE \([a-z_:]*\) .*/\1/p' | sort -u >"$T/exported"
stop_daemon
diag "exported: $(tr '\n' ' ' <"$T/exported")"
check "the daemon exports metrics" test -s "$T/exported"

names_in() { grep -v '^ *#' "$1" | grep -o 'atimed_[a-z_]*' | sort -u; }
# Series the rules use that this build may not export yet: the fstab drift
# is exported where atimed knows it; atimed_up and the export timestamp come
# with the textfile's staleness marks. Any other name must be exported.
pending="atimed_fstab_drift atimed_up atimed_last_export_timestamp_seconds"
missing=""
for name in $(names_in "$RULES"); do
        if ! grep -qx "$name" "$T/exported"; then
                case " $pending " in
                *" $name "*) diag "the rules use $name, not exported by this build" ;;
                *) missing="$missing $name" ;;
                esac
        fi
done
is "every series the rules name is exported" "$missing" ""
missing=""
for name in $(names_in "$T/exprs"); do
        grep -qx "$name" "$T/exported" || missing="$missing $name"
done
is "every series the dashboard names is exported" "$missing" ""
done_testing
