#!/bin/bash
# validate: the seeds' experiments, run with their own software, atimed's
# prediction against the measured difference. For each workload, on an ext4
# loop mount (an image file on the host's disk, loop device with direct I/O):
#
#   1. predict: atimed at its default settings (a temp config that only
#      limits what it tracks to the benchmark's mounts; its own socket and
#      state dir) watches while the workload runs again and again through a
#      strictatime bind mount (relatime for bonnie++, as in the seed) until
#      it has a figure and EXTRA_INTERVALS more sampler intervals have gone
#      by; then its advice and predicted saving for that mount
#      (`atimectl recommend --json`: saving.atime_updates_per_min where the
#      daemon has it, else saving.atime_writes_per_min; saving.cpu_us_per_s)
#      and its activity figure (`status --json`).
#   2. measure: the same workload through that mount (A) and a noatime bind
#      mount of the same filesystem (B), ABBA, ROUNDS rounds: the workload's
#      CPU time per operation (getrusage of its processes through
#      bench/cputime; for apache the httpd processes' CPU from
#      /proc/PID/task/*/schedstat), its throughput, and the sectors the loop
#      device wrote (/sys/block/loopN/stat, sync before and after).
#
# Predicted CPU saving per operation = saving.cpu_us_per_s / operations per
# second during the prediction; measured = CPU per operation A - B (mean over
# rounds, with a 95% t interval: "above noise" when it excludes 0).
#
# Workloads (WORKLOADS, in this order by default):
#   apache-one   Apache httpd serving a 44-byte index.html, `ab -n AB_N -c CONC`
#                on that one URL (seed 1)
#   apache-many  the same server, WWW_FILES files, `h2load --h1 -i URLS`
#   find-warm    find + readblock over FIND_FILES files, warm cache (seed 2)
#   find-cold    the same after drop_caches before every run (both sides),
#                over the first COLD_FILES of the files
#   depth        open/close at directory depths 1 to 10, 3 entries per level
#                as in seed 3, 3^min(d-1,4) files per depth, DEPTH_PASSES each
#   tar          tar cf /dev/null of a source tree (a copy of /usr/include)
#   tar-read     tar cf - of it into a pipe (GNU tar does not read the files
#                it archives to /dev/null)
#   grep         grep -r for a string found nowhere, over the same tree
#   bonnie       bonnie++ under relatime (A) and noatime (B) (seed 4)
#
# ATIMED_BUILDS: build directories whose atimed and atimectl predict, side by
# side on the same workload (default: this build). SAMPLER_INTERVAL: set
# [sampler] interval in the temp config (default: none, atimed's 1min).
#
#   sudo make bench BENCH=validate      (about 50 minutes)
#   (WORKLOADS="..." ROUNDS=4 EXTRA_INTERVALS=1 FIND_FILES=100000 COLD_FILES=10000
#    WWW_FILES=20000 AB_N=10000 H2_N=40000 CONC=100 DEPTH_PASSES=1000 SRC_COPIES=2 BONNIE_MB=512
#    BONNIE_FILES=8:4096:1024:16 BONNIE_ROUNDS=2 PORT=18080 MEASURE_MAX=900
#    ATIMED_BUILDS="/path/build1 /path/build2" SAMPLER_INTERVAL=
#    VALIDATE_OUT=DIR: keep each workload's raw figures and atimed's replies there)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
WORKLOADS=${WORKLOADS:-apache-one apache-many find-warm find-cold depth tar tar-read grep bonnie}
ROUNDS=${ROUNDS:-4}
EXTRA_INTERVALS=${EXTRA_INTERVALS:-1}
MEASURE_MAX=${MEASURE_MAX:-900}
FIND_FILES=${FIND_FILES:-100000}
COLD_FILES=${COLD_FILES:-10000}
WWW_FILES=${WWW_FILES:-20000}
AB_N=${AB_N:-10000}
H2_N=${H2_N:-40000}
CONC=${CONC:-100}
DEPTH_PASSES=${DEPTH_PASSES:-1000}
SRC_COPIES=${SRC_COPIES:-2}
BONNIE_MB=${BONNIE_MB:-512}
BONNIE_FILES=${BONNIE_FILES:-8:4096:1024:16}
BONNIE_ROUNDS=${BONNIE_ROUNDS:-2}
PORT=${PORT:-18080}
ATIMED_BUILDS=${ATIMED_BUILDS:-$top_builddir}
SAMPLER_INTERVAL=${SAMPLER_INTERVAL:-}
CPUTIME=$top_builddir/bench/cputime
IMGDIR=$(mktemp -d "${BENCH_IMGDIR:-/var/tmp}/atimed-bench-img.XXXXXX")
LOOP=""
APACHE_PID=""

validate_cleanup() {
        apache_stop
        bench_cleanup
        [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
        rm -rf "$IMGDIR"
}
trap validate_cleanup EXIT

need() {
        command -v "$1" >/dev/null || { echo "validate: $1 missing (apt-get install $2); skipping $3" >&2; return 1; }
}
now_ns() { date +%s%N; }
sectors() { awk '{ print $7 }' "$STAT"; }

# ---------------------------------------------------------------- the filesystem
# fs_setup MB INODES: a fresh ext4 image at $B/mnt/base (relatime, the
# default), bind mounts strict (strictatime), rel (relatime), noat (noatime).
fs_setup() {
        local s
        umount -R "$B/mnt" 2>/dev/null
        [ -n "$LOOP" ] && losetup -d "$LOOP"
        rm -f "$IMGDIR/fs.img"
        truncate -s "${1}M" "$IMGDIR/fs.img"
        mkfs.ext4 -q -F -N "$2" "$IMGDIR/fs.img"
        LOOP=$(losetup -f --show --direct-io=on "$IMGDIR/fs.img" 2>/dev/null) || LOOP=$(losetup -f --show "$IMGDIR/fs.img")
        mkdir -p "$B/mnt/base"
        mount "$LOOP" "$B/mnt/base"
        STAT=/sys/block/${LOOP#/dev/}/stat
        for s in strict rel noat; do
                mkdir -p "$B/mnt/$s"
                mount --bind "$B/mnt/base" "$B/mnt/$s"
        done
        mount -o remount,bind,strictatime "$B/mnt/strict"
        mount -o remount,bind,relatime "$B/mnt/rel"
        mount -o remount,bind,noatime "$B/mnt/noat"
}

# write_files DIR N SIZE: N files of SIZE bytes in directories of 200,
# without a process per file.
write_files() {
        local i blob
        blob=$(head -c "$3" /dev/zero | tr '\0' x)
        for ((i = 0; i < $2; i++)); do
                ((i % 200 == 0)) && mkdir -p "$1/d$((i / 200))"
                printf '%s' "$blob" >"$1/d$((i / 200))/f$((i % 200))"
        done
}

# ---------------------------------------------------------------- apache
apache_cpu() {
        local p sum=0
        for p in $APACHE_PID $(pgrep -P "$APACHE_PID"); do sum=$((sum + $(cpu_ns "$p"))); done
        echo "$sum"
}

apache_start() {
        local mods=/usr/lib/apache2/modules
        mkdir -p "$B/apache"
        cat >"$B/apache/httpd.conf" <<EOF
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile $B/apache/httpd.pid
DefaultRuntimeDir $B/apache
ErrorLog $B/apache/error.log
LogLevel warn
User www-data
Group www-data
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule mime_module $mods/mod_mime.so
TypesConfig /etc/mime.types
StartServers 2
ServerLimit 2
ThreadsPerChild 64
MaxRequestWorkers 128
MinSpareThreads 1
MaxSpareThreads 128
MaxConnectionsPerChild 0
DocumentRoot $B/mnt
<Directory />
    Require all denied
</Directory>
<Directory $B/mnt>
    Require all granted
</Directory>
EOF
        apache2 -f "$B/apache/httpd.conf" -DFOREGROUND 2>>"$B/apache/error.log" &
        APACHE_PID=$!
        for _ in $(seq 100); do
                curl -sf -o /dev/null "http://127.0.0.1:$PORT/strict/www/index.html" 2>/dev/null && return 0
                sleep 0.1
        done
        echo "validate: apache did not start:" >&2
        cat "$B/apache/error.log" >&2
        return 1
}

apache_stop() {
        [ -n "$APACHE_PID" ] || return 0
        kill -TERM "$APACHE_PID" 2>/dev/null
        wait "$APACHE_PID" 2>/dev/null
        APACHE_PID=""
}

# ---------------------------------------------------------------- workloads
# Each run_WORKLOAD SIDE does one run through $B/mnt/SIDE and prints
# "operations cpu_ns wall_ns".
run_apache-one() {
        local c0 t0 out
        c0=$(apache_cpu)
        t0=$(now_ns)
        out=$(ab -q -n "$AB_N" -c "$CONC" "http://127.0.0.1:$PORT/$1/www/index.html" 2>&1)
        echo "$(awk '/^Complete requests:/ { c = $3 } /^Failed requests:/ { f = $3 } END { print c - f }' <<<"$out") $(($(apache_cpu) - c0)) $(($(now_ns) - t0))"
}

run_apache-many() {
        local c0 t0 out
        c0=$(apache_cpu)
        t0=$(now_ns)
        out=$(h2load --h1 -n "$H2_N" -c "$CONC" -i "$B/urls.$1" 2>&1)
        echo "$(awk '/^requests:/ { print $8 }' <<<"$out") $(($(apache_cpu) - c0)) $(($(now_ns) - t0))"
}

# cputime_run OPS COMMAND...: "OPS cpu_ns wall_ns" of the command.
cputime_run() {
        local ops=$1 out
        shift
        out=$("$CPUTIME" "$@" 3>&1 >/dev/null 2>/dev/null)
        echo "$ops ${out% *}"
}

run_find-warm() { cputime_run "$FIND_FILES" sh -c "find '$B/mnt/$1/files' -type f | '$READBLOCK' 1"; }
# cold: the first COLD_FILES files (a cold pass reads a real device: slow)
run_find-cold() {
        local dirs=$(((COLD_FILES + 199) / 200)) d list=""
        for ((d = 0; d < dirs; d++)); do list="$list '$B/mnt/$1/files/d$d'"; done
        sync
        echo 3 >/proc/sys/vm/drop_caches
        cputime_run $((dirs * 200)) sh -c "find $list -type f | '$READBLOCK' 1"
}

# depth: per depth, DEPTH_PASSES open/close passes over its files; the
# per-depth figures go to $DEPTH_LOG when set.
run_depth() {
        local d out ops=0 cpu=0 wall=0 n c w
        for d in 1 2 3 4 5 6 7 8 9 10; do
                n=$(wc -l <"$B/depth.$1.$d")
                out=$(cputime_run $((n * DEPTH_PASSES)) "$READBLOCK" -b 0 "$DEPTH_PASSES" <"$B/depth.$1.$d")
                [ -n "${DEPTH_LOG:-}" ] && echo "$1 $d $out" >>"$DEPTH_LOG"
                read -r n c w <<<"$out"
                ops=$((ops + n)) cpu=$((cpu + c)) wall=$((wall + w))
        done
        echo "$ops $cpu $wall"
}

run_tar() { cputime_run "$SRC_FILES" tar cf /dev/null -C "$B/mnt/$1" src; }
run_tar-read() { cputime_run "$SRC_FILES" sh -c "tar cf - -C '$B/mnt/$1' src | cat >/dev/null"; }
run_grep() { cputime_run "$SRC_FILES" grep -rq zq9Xq7-found-nowhere "$B/mnt/$1/src"; }

# bonnie: one run is one operation; its own figures go to $BONNIE_LOG.
run_bonnie() {
        local out
        rm -rf "$B/mnt/$1/bonnie"
        mkdir -p "$B/mnt/$1/bonnie"
        out=$("$CPUTIME" bonnie++ -d "$B/mnt/$1/bonnie" -s "$BONNIE_MB" -r $((BONNIE_MB / 2)) -n "$BONNIE_FILES" \
                -f -u root -q 3>"$B/bonnie.cpu" 2>/dev/null)
        [ -n "${BONNIE_LOG:-}" ] && echo "$1 $(tail -1 <<<"$out")" >>"$BONNIE_LOG"
        echo "1 $(cut -d' ' -f1,2 "$B/bonnie.cpu")"
}

# ---------------------------------------------------------------- set-ups
setup_apache() {
        local s
        fs_setup 512 $((WWW_FILES + 2000))
        mkdir -p "$B/mnt/base/www"
        printf '<html><body>atimed validate</body></html>\n' >"$B/mnt/base/www/index.html" # 44 bytes, as the seed's
        write_files "$B/mnt/base/www" "$WWW_FILES" 2048
        for s in strict rel noat; do
                list_files "http://127.0.0.1:$PORT/$s/www" "$WWW_FILES" >"$B/urls.$s"
        done
        sync
        apache_start
}

setup_find() {
        fs_setup 1024 $((FIND_FILES + FIND_FILES / 200 + 2000))
        mkdir -p "$B/mnt/base/files"
        write_files "$B/mnt/base/files" "$FIND_FILES" 2048
        sync
}

# The seed's tree: depth 10, 3 directories per level, a file in each.
setup_depth() {
        local d s k prefix
        fs_setup 512 70000
        (
                cd "$B/mnt/base" || exit 1
                mkdir nest
                # every directory path of up to 9 levels under nest, then a file in each
                awk 'BEGIN { n = 1; p[1] = "nest"; for (l = 1; l <= 9; l++) { m = 0
                        for (i = 1; i <= n; i++) for (j = 0; j < 3; j++) q[++m] = p[i] "/" j
                        for (i = 1; i <= m; i++) { p2[i] = q[i]; print q[i] }
                        n = m; delete p; for (i = 1; i <= n; i++) p[i] = p2[i] } }' >"$B/dirs"
                xargs mkdir -p <"$B/dirs"
                { echo nest/file; sed 's|$|/file|' "$B/dirs"; } | xargs touch
        )
        for s in strict rel noat; do
                for d in 1 2 3 4 5 6 7 8 9 10; do
                        # depth d: d-1 directory levels, the first ones 0, the last min(d-1,4) any
                        k=$((d - 1 < 4 ? d - 1 : 4))
                        prefix="$B/mnt/$s/nest"
                        for ((i = 0; i < d - 1 - k; i++)); do prefix="$prefix/0"; done
                        awk -v k="$k" -v p="$prefix" 'BEGIN { n = 1; f[1] = p; for (l = 0; l < k; l++) { m = 0
                                for (i = 1; i <= n; i++) for (j = 0; j < 3; j++) g[++m] = f[i] "/" j
                                n = m; for (i = 1; i <= n; i++) f[i] = g[i] }
                                for (i = 1; i <= n; i++) print f[i] "/file" }' >"$B/depth.$s.$d"
                done
        done
        sync
}

setup_src() {
        local c
        fs_setup 2048 $((20000 * SRC_COPIES + 2000))
        for ((c = 0; c < SRC_COPIES; c++)); do
                mkdir -p "$B/mnt/base/src/$c"
                cp -a /usr/include/. "$B/mnt/base/src/$c/"
        done
        SRC_FILES=$(find "$B/mnt/base/src" -type f | wc -l)
        sync
}

setup_bonnie() {
        fs_setup $((BONNIE_MB * 3 + 512)) 200000
        write_files "$B/mnt/base/other" 100 2048 # something to walk and sample
        sync
}

# ---------------------------------------------------------------- predict
# predict WORKLOAD SIDE: atimed (each build) watches the workload through
# $B/mnt/SIDE; writes $B/pred.WORKLOAD.I (one per build): "advice confidence
# updates_per_min cpu_us_per_s kib_per_s activity ops_per_s".
predict() {
        local w=$1 side=$2 target="$B/mnt/$2" i b loop start first t iv=60 ok
        local -a pids=()
        i=0
        for b in $ATIMED_BUILDS; do
                rm -rf "$B/p$i"
                mkdir -p "$B/p$i/state"
                {
                        bench_mounts_only ext4 "$B/mnt"
                        [ -n "$SAMPLER_INTERVAL" ] && printf '[sampler]\ninterval = %s\n' "$SAMPLER_INTERVAL"
                } >"$B/p$i/atimed.conf"
                "$b/atimed" --config "$B/p$i/atimed.conf" --socket "$B/p$i/sock" --state-dir "$B/p$i/state" 2>>"$B/p$i/log" &
                pids[i]=$!
                BENCH_PIDS="$BENCH_PIDS ${pids[i]}"
                i=$((i + 1))
        done
        [ -n "$SAMPLER_INTERVAL" ] && iv=$(awk -v s="$SAMPLER_INTERVAL" 'BEGIN { v = s + 0; if (s ~ /min$/) v *= 60; else if (s ~ /ms$/) v /= 1000; else if (s ~ /h$/) v *= 3600; print v }')
        rm -f "$B/pred.stop"
        : >"$B/pred.runs"
        start=$(date +%s)
        (while [ ! -e "$B/pred.stop" ]; do "run_$w" "$side" >>"$B/pred.runs"; done) &
        loop=$!
        # until every build has a figure for the mount
        first=""
        for ((t = 0; t < MEASURE_MAX; t++)); do
                ok=1
                i=0
                for b in $ATIMED_BUILDS; do
                        [ -n "$("$b/atimectl" --socket "$B/p$i/sock" --json status 2>/dev/null |
                                jq -r --arg t "$target" '.mounts[] | select(.target == $t) | .activity | select(. != null) | "y"')" ] || ok=0
                        i=$((i + 1))
                done
                [ "$ok" = 1 ] && { first=$(($(date +%s) - start)); break; }
                sleep 1
        done
        [ -n "$first" ] || echo "validate: $w: no figure from atimed after ${MEASURE_MAX}s" >&2
        sleep $(awk -v n="$EXTRA_INTERVALS" -v iv="$iv" 'BEGIN { print n * iv }')
        i=0
        for b in $ATIMED_BUILDS; do
                "$b/atimectl" --socket "$B/p$i/sock" --json recommend >"$B/p$i/rec.json" 2>/dev/null
                "$b/atimectl" --socket "$B/p$i/sock" --json status >"$B/p$i/status.json" 2>/dev/null
                i=$((i + 1))
        done
        touch "$B/pred.stop"
        wait "$loop"
        for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
        local rate
        rate=$(awk '{ o += $1; w += $3 } END { printf "%.3f", (w > 0 ? o / (w / 1e9) : 0) }' "$B/pred.runs")
        i=0
        for b in $ATIMED_BUILDS; do
                {
                        jq -r --arg t "$target" '.recommendations[] | select(.target == $t) |
                                [(.current.options + "->" + .recommended.options), .confidence,
                                 (.saving.atime_updates_per_min // .saving.atime_writes_per_min // 0),
                                 (.saving.cpu_us_per_s // 0), (.saving.write_kib_per_s // 0)] | map(tostring) | join(" ")' "$B/p$i/rec.json"
                } | head -1 | tr '\n' ' ' >"$B/pred.$w.$i"
                jq -r --arg t "$target" '.mounts[] | select(.target == $t) | .activity |
                        if . == null then "-" else ((.atime_updates_per_min // .atime_inodes_per_min) | tostring) end' \
                        "$B/p$i/status.json" | head -1 | tr '\n' ' ' >>"$B/pred.$w.$i"
                echo "$rate ${first:--}" >>"$B/pred.$w.$i"
                i=$((i + 1))
        done
}

# ---------------------------------------------------------------- measure
# run_one WORKLOAD SIDE: "ops cpu_ns wall_ns bytes".
run_one() {
        local w0 out
        sync
        w0=$(sectors)
        out=$("run_$1" "$2")
        sync
        echo "$out $((($(sectors) - w0) * 512))"
}

# abba WORKLOAD SIDE ROUNDS: $B/abba.WORKLOAD, one line per round: A's
# "ops cpu wall bytes" then B's (noat).
abba() {
        local r s out a b
        : >"$B/abba.$1"
        for ((r = 1; r <= $3; r++)); do
                for s in $( ((r % 2)) && echo "$2 noat" || echo "noat $2"); do
                        out=$(run_one "$1" "$s")
                        if [ "$s" = noat ]; then b=$out; else a=$out; fi
                done
                echo "$a $b" >>"$B/abba.$1"
        done
}

# seed figures, for the table
seed_of() {
        case $1 in
        apache-one) echo "880.8 -> 900.3 req/s (+2.2%)" ;;
        apache-many) echo "-" ;;
        find-warm) echo "-" ;;
        find-cold) echo "7m29s -> 6m54s (-8%)" ;;
        depth) echo "8.4 s (d5) vs 11 s (d10)" ;;
        bonnie) echo "no significant diff" ;;
        *) echo "-" ;;
        esac
}

# report WORKLOAD: one row per build.
report() {
        local w=$1 i=0 b
        for b in $ATIMED_BUILDS; do
                awk -v w="$w" -v seed="$(seed_of "$w")" -v build="$i" -v pred="$(cat "$B/pred.$w.$i")" '
                function tq(df) { return df >= 30 ? 2.04 : df == 1 ? 12.71 : df == 2 ? 4.30 : df == 3 ? 3.18 : df == 4 ? 2.78 : df == 5 ? 2.57 : df == 6 ? 2.45 : df == 7 ? 2.36 : df <= 9 ? 2.26 : df <= 14 ? 2.14 : 2.09 }
                function med(a, n,   i, j, x, v) { for (i = 1; i <= n; i++) v[i] = a[i]
                        for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
                        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
                {
                        n++; ca[n] = $2 / $1 / 1000; cb[n] = $6 / $5 / 1000; d[n] = ca[n] - cb[n]; s += d[n]
                        ta[n] = $1 / ($3 / 1e9); tb[n] = $5 / ($7 / 1e9); ba[n] = $4 / $1; bb[n] = $8 / $5
                }
                END {
                        m = s / n; for (i = 1; i <= n; i++) ss += (d[i] - m) ^ 2
                        hw = n > 1 ? tq(n - 1) * sqrt(ss / (n - 1)) / sqrt(n) : 1e9
                        above = (m - hw > 0 || m + hw < 0)
                        split(pred, p, " ")   # advice confidence upd/min cpu_us/s kib/s activity ops/s first_s
                        pu = p[7] > 0 ? p[4] / p[7] : 0
                        ratio = (above && m != 0) ? sprintf("%.2f", pu / m) : "-"
                        split(p[1], adv, "->")
                        if (above && m > 0) dir = adv[1] != adv[2] ? "right" : "WRONG: no change advised"
                        else if (above) dir = "(B slower)"
                        else dir = (pu <= m + hw) ? "right (noise)" : "WRONG: predicts more than measured"
                        printf "%-11s b%d | %-26s | A %8.3f B %8.3f us/op, A-B %+8.4f +-%.4f %-5s | %9.1f %9.1f op/s | %7.1f %7.1f B/op | %-28s %-6s upd/min %9s act %9s cpu %9s us/s %8.4f us/op | ratio %5s | %s | first %ss\n",
                                w, build, seed, med(ca, n), med(cb, n), m, hw, above ? "" : "noise",
                                med(ta, n), med(tb, n), med(ba, n), med(bb, n), p[1], p[2], p[3], p[6], p[4], pu, ratio, dir, p[8]
                }' "$B/abba.$w" | tee -a "$B/rows"
                i=$((i + 1))
        done
}

# ---------------------------------------------------------------- main
echo "validate: the seeds' experiments, atimed's predicted saving against the measured difference"
machine_line
echo "images on $(df --output=source "$IMGDIR" | tail -1) via loop devices with direct I/O; $ROUNDS ABBA rounds ($BONNIE_ROUNDS for bonnie)"
i=0
for b in $ATIMED_BUILDS; do
        echo "b$i: $b ($(git -C "$(sed -n 's/^abs_top_srcdir = //p' "$b/Makefile" 2>/dev/null)" log -1 --format='%h %s' 2>/dev/null || echo "source not a git tree"))"
        i=$((i + 1))
done
: >"$B/rows"
SETUP=""
for w in $WORKLOADS; do
        case $w in
        apache-one | apache-many)
                need apache2 apache2 "$w" && need ab apache2-utils "$w" || continue
                [ "$w" = apache-many ] && { need h2load nghttp2-client "$w" || continue; }
                [ "$SETUP" = apache ] || { apache_stop; setup_apache || continue; SETUP=apache; } ;;
        find-warm | find-cold) apache_stop; [ "$SETUP" = find ] || { setup_find; SETUP=find; } ;;
        depth) apache_stop; setup_depth; SETUP=depth ;;
        tar | tar-read | grep) apache_stop; [ "$SETUP" = src ] || { setup_src; SETUP=src; } ;;
        bonnie) apache_stop; need bonnie++ bonnie++ "$w" || continue; setup_bonnie; SETUP=bonnie ;;
        *) echo "validate: unknown workload $w" >&2; continue ;;
        esac
        side=strict
        rounds=$ROUNDS
        [ "$w" = bonnie ] && { side=rel; rounds=$BONNIE_ROUNDS; }
        echo "== $w: predicting ($(date -u +%H:%M:%S))" >&2
        "run_$w" "$side" >/dev/null # warm-up
        predict "$w" "$side"
        echo "== $w: measuring ($(date -u +%H:%M:%S))" >&2
        [ "$w" = depth ] && { DEPTH_LOG=$B/depth.log; : >"$DEPTH_LOG"; }
        [ "$w" = bonnie ] && { BONNIE_LOG=$B/bonnie.log; : >"$BONNIE_LOG"; }
        abba "$w" "$side" "$rounds"
        DEPTH_LOG=""
        BONNIE_LOG=""
        report "$w"
        if [ -n "${VALIDATE_OUT:-}" ]; then
                mkdir -p "$VALIDATE_OUT/$w"
                cp "$B/abba.$w" "$B"/pred.$w.* "$B/pred.runs" "$VALIDATE_OUT/$w/"
                i=0
                for b in $ATIMED_BUILDS; do
                        cp "$B/p$i/rec.json" "$VALIDATE_OUT/$w/rec.b$i.json"
                        cp "$B/p$i/status.json" "$VALIDATE_OUT/$w/status.b$i.json"
                        cp "$B/p$i/log" "$VALIDATE_OUT/$w/atimed.b$i.log"
                        i=$((i + 1))
                done
        fi
        if [ "$w" = depth ]; then
                echo "depth: CPU ns per open/close, median over rounds (A $side, B noatime):"
                for d in 1 2 3 4 5 6 7 8 9 10; do
                        printf '  depth %2d: A %6.0f  B %6.0f\n' "$d" \
                                "$(awk -v d="$d" '$1 != "noat" && $2 == d { print $4 / $3 }' "$B/depth.log" | median)" \
                                "$(awk -v d="$d" '$1 == "noat" && $2 == d { print $4 / $3 }' "$B/depth.log" | median)"
                done
        fi
        if [ "$w" = bonnie ]; then
                echo "bonnie++ (CSV fields: block out K/s, block in K/s, seq create/s, seq read/s, random read/s):"
                awk -F'[ ,]' '{ print "  " $1 ": " $13, $19, $28, $30, $36 }' "$B/bonnie.log"
        fi
done
apache_stop

echo
echo "A: the strictatime bind mount (relatime for bonnie); B: the noatime bind mount of the same filesystem."
echo "us/op: the workload's CPU per operation (request, file, open, run), median over rounds; A-B: mean"
echo "of the per-round differences +- its 95% t interval ('noise' where that includes 0); op/s: throughput;"
echo "B/op: bytes the loop device wrote per operation through sync. Then, per atimed build (b0, b1...):"
echo "its advice for A, confidence, predicted atime updates avoided per minute (saving), its activity figure,"
echo "predicted CPU saving per second and per operation (us/s divided by the operations per second while it"
echo "watched), predicted/measured, and whether the advice goes the right way; 'first': seconds from"
echo "start-up to its first figure for the mount."
