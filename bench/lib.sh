# bench/lib.sh: shared by the benchmarks: a private mount namespace, loop
# images, and a little arithmetic. Benchmarks print figures; they do not
# pass or fail. Run them on an optimised build (not the sanitizer build).
set -u
: "${top_builddir:?run through make bench}" "${top_srcdir:?run through make bench}"
ATIMED=$top_builddir/atimed
ATIMECTL=$top_builddir/atimectl
READBLOCK=$top_builddir/bench/readblock

bench_enter_namespace() {
        [ "$(id -u)" -eq 0 ] || { echo "bench: needs root (loop mounts in a private namespace)" >&2; exit 1; }
        if [ -z "${ATIMED_BENCH_NS:-}" ]; then
                ATIMED_BENCH_NS=1 exec unshare -m --propagation private "$SHELL" "$0" "$@"
        fi
        B=$(mktemp -d /tmp/atimed-bench.XXXXXX)
        mount -t tmpfs -o size=2g atimed-bench "$B"
        mkdir -p "$B/mnt" "$B/state"
        trap bench_cleanup EXIT
}

BENCH_PIDS=""
bench_cleanup() {
        local p
        for p in $BENCH_PIDS; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
        wait 2>/dev/null
        umount -R "$B" 2>/dev/null
        rmdir "$B" 2>/dev/null
}

# make_image NAME MB FSTYPE: an image file formatted with FSTYPE.
make_image() {
        truncate -s "${2}M" "$B/$1.img"
        case "$3" in
        ext4) mkfs.ext4 -q -F -N $((2 * ${NFILES:-20000} + 1000)) "$B/$1.img" ;;
        xfs) mkfs.xfs -q -f "$B/$1.img" ;;
        btrfs) mkfs.btrfs -q -f "$B/$1.img" >/dev/null ;;
        esac
}

# make_files DIR N: N files of 2 KiB in directories of 200.
make_files() {
        local i
        for ((i = 0; i < $2; i++)); do
                ((i % 200 == 0)) && mkdir -p "$1/d$((i / 200))"
                head -c 2048 /dev/zero >"$1/d$((i / 200))/f$((i % 200))"
        done
}

# list_files DIR N: their paths, without reading a directory.
list_files() {
        local i
        for ((i = 0; i < $2; i++)); do echo "$1/d$((i / 200))/f$((i % 200))"; done
}

# Statistics over numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -1; }
maximum() { sort -g | tail -1; }

# cpu_ns PID: CPU time of every thread of the process, in nanoseconds
# (schedstat is exact where /proc/PID/stat counts 10 ms ticks).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# start_atimed CONFIG_TEXT: the daemon on $B/sock; sets ATIMED_PID.
start_atimed() {
        printf '%s\n' "$1" >"$B/atimed.conf"
        "$ATIMED" --config "$B/atimed.conf" --socket "$B/sock" --state-dir "$B/state" 2>>"$B/atimed.log" &
        ATIMED_PID=$!
        BENCH_PIDS="$BENCH_PIDS $ATIMED_PID"
        for _ in $(seq 100); do "$ATIMECTL" --socket "$B/sock" status >/dev/null 2>&1 && return 0; sleep 0.1; done
        echo "bench: atimed did not start" >&2
        exit 1
}

# wait_measured TARGET SECONDS: until TARGET has an activity figure.
wait_measured() {
        local i
        for ((i = 0; i < $2 * 2; i++)); do
                [ -n "$("$ATIMECTL" --socket "$B/sock" --json status | jq -r --arg t "$1" '.mounts[] | select(.target == $t) | .activity // empty')" ] && return 0
                sleep 0.5
        done
        return 1
}

# bench_mounts_only FSTYPE DIR: a [mounts] section that tracks only the
# FSTYPE mounts at or below DIR: every other mount of that type is excluded
# by an exact glob ("/[d]ev/shm" matches /dev/shm alone, not what is below
# it), "[/]" the root. Keys may follow it in the same section.
bench_mounts_only() {
        local t excl="[/]"
        while read -r t; do
                case $t in "$2" | "$2"/* | /) continue ;; esac
                excl="$excl, /[${t:1:1}]${t:2}"
        done < <(awk -v f="$1" '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == f) print $5 }' /proc/self/mountinfo | sort -u)
        [ ${#excl} -lt 180 ] || echo "bench: too many $1 mounts to exclude on one config line" >&2
        printf '[mounts]\ninclude_fstypes = %s\nexclude_paths = %s\n' "$1" "$excl"
}

# machine_line: what the figures were measured on.
machine_line() {
        echo "machine: $(nproc) CPUs, $(uname -r), $(awk '/^model name/ { $1=$2=$3=""; print; exit }' /proc/cpuinfo | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
}
