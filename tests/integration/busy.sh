#!/bin/bash
# busy.sh: atime updates per minute on a host with no idle CPU, judged by
# the kernel. Readers run flat out (one per CPU plus one: the observer,
# at Nice=10 and the idle I/O class as the unit runs it, gets what the
# scheduler leaves), and for each case on ext4 and on xfs, at the same
# time, the kernel's own count of atime updates on that filesystem's
# device (ext4:ext4_mark_inode_dirty, xfs:xfs_update_time, counted by a
# tracefs instance of each device's own) is compared with every figure
# atimed publishes over the same interval:
#
#   one       a filesystem of a handful of inodes, one file read flat out
#   few       20 of 200 files read flat out
#   many      2,000 of 2,500 files read flat out, round robin
#   distinct  files read once each, 300 a second, while the flat-out
#             readers run on another filesystem
#   burst     the same, at the same time, in bursts: a find | xargs cat of
#             the next 1,250 files every 4 s (issue 35); on xfs here, and
#             on ext4 in bursts.sh, alone and beside the same kind of busy
#             neighbour (the journal's count ended at an edge of its
#             commits, kcount.h), so this script does not run it twice
#   mix       20 hot files read flat out, distinct files at 300 a second,
#             and a writer appending to a log file 100 times a second (the
#             judge leaves the log's inode out): the hot files turn hot
#             after the walk, so the judged intervals are their first ones
#             in the fine sweep, and the filesystem writes, so its count
#             cannot stand as the figure while the sample sees the log.
#             On xfs each hot file has one reader of its own: readers of
#             one file on two CPUs in one tick each write it there, which
#             no atime shows (atimed(8), KERNEL COUNTS: learnt only where
#             the count stood before); the cases above have them, and
#             their counts stand. ext4 writes once a tick, and its files
#             are shared as theirs are
#   rel       relatime, 20 of 200 files read flat out: about 0
#
# and, where Debian's apache2 and ab are installed, the first seed's own
# experiment: apache2 serving one 1 KiB file to ab -c 4 on an ext4
# strictatime mount. Each figure must lie within 10% of the kernel's count
# (never 30% in any interval; for distinct and burst, never 10%; for mix,
# 15% over the intervals: judge()), and the kernel's count within its 95%
# interval; the figures are printed as TAP diagnostics.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
READLOAD=$top_builddir/tests/helpers/readload
M=$T/mnt
# 30 s: six of ext4's journal commits, over 5.5 of which its count of
# handles stands as the figure (atimed(8), KERNEL COUNTS).
IV=${BUSY_IV:-30}
NREAD=$(($(nproc) + 1))
FSTYPES=${BUSY_FSTYPES:-"ext4 xfs"}
CASES="one few many distinct burst mix rel"
DISTINCT_RATE=300
# burst: BURST_DIRS directories of 250 files every BURST_S seconds (312
# reads a second on average), a round of the 60 every 48 s.
BURST_DIRS=5 BURST_S=4
# fs_of CASE: the filesystems CASE runs on. burst's ext4 is bursts.sh's
# (the header).
fs_of() {
        local fs
        for fs in $FSTYPES; do
                [ "$1" = burst ] && [ $fs = ext4 ] && continue
                echo $fs
        done | xargs
}

command -v mkfs.ext4 >/dev/null || skip_all "needs mkfs.ext4"
command -v mkfs.xfs >/dev/null || skip_all "needs mkfs.xfs"
grep -qw xfs /proc/filesystems || modprobe xfs 2>/dev/null || true
grep -qw xfs /proc/filesystems || skip_all "the kernel has no xfs"
judge_init $FSTYPES

BG_PIDS="" LOAD_PIDS=""
busy_cleanup() {
        local p
        for p in $LOAD_PIDS $BG_PIDS; do kill "$p" 2>/dev/null; done
        judge_cleanup
        wait $LOAD_PIDS $BG_PIDS 2>/dev/null # not the daemon: cleanup stops it
        [ -n "${APACHE_CONF:-}" ] && /usr/sbin/apache2 -f "$APACHE_CONF" -k stop 2>/dev/null
}
trap 'busy_cleanup; cleanup' EXIT

# --- The filesystems. Trees are made on tmpfs; ext4 takes them at mkfs
# time, xfs by a copy and a fresh mount (so nothing is left dirty). Their
# images on a tmpfs of their own: xfs writes its log whole at mkfs.
mkdir -p $T/img && mount -t tmpfs -o size=3g,mode=0755 atimed-busy-img $T/img || bail "no tmpfs for the images"
make_tree $T/t-one 1 3
make_tree $T/t-few 10 20
make_tree $T/t-many 25 100
make_tree $T/t-distinct 60 250
make_tree $T/t-mix 60 250
# image FS CASE TREE OPTS
image() {
        local img=$T/img/$1-$2.img dir=$M/$1-$2
        mkdir -p $dir
        if [ $1 = ext4 ]; then
                truncate -s 128M $img && mkfs.ext4 -q -F -N 20000 -d $3 $img || bail "mkfs.ext4 $2"
        else
                truncate -s 320M $img && mkfs.xfs -q -f $img || bail "mkfs.xfs $2"
                mount -o loop $img $dir && cp -a $3/. $dir/ && umount $dir || bail "populate xfs $2"
        fi
        mount -o loop,$4 $img $dir || bail "mount $1 $2"
}
for c in $CASES; do
        for fs in $(fs_of $c); do
                tree=$T/t-$c
                [ $c = rel ] && tree=$T/t-few
                [ $c = burst ] && tree=$T/t-distinct
                opt=strictatime
                [ $c = rel ] && opt=relatime
                image $fs $c $tree $opt
        done
done
# Where the distinct case's flat-out readers read: a filesystem not judged.
mkdir -p $M/noise && mount -t tmpfs -o strictatime noise $M/noise && make_tree $M/noise 1 20
rm -rf $T/t-*

# relatime: one read of everything first, so that every atime is past
# its mtime and ctime; the flat-out reads then write nothing for a day.
declare -A LOGINO
for fs in $FSTYPES; do
        list_tree $M/$fs-rel 10 20 | xargs cat >/dev/null
        : >$M/$fs-mix/log
        LOGINO[$fs]=$(stat -c %i $M/$fs-mix/log)
done
sync

# --- The judge: a count per filesystem and case, of its device (the mix
# case without its log file), read ten times a second with the wall-clock
# time.
for c in $CASES; do
        for fs in $(fs_of $c); do
                f=$(judge_dev $M/$fs-$c)
                [ $c = mix ] && f="$f && ino != ${LOGINO[$fs]}"
                judge_new $fs-$c $fs "$f"
                judge_on $fs-$c
        done
done

# --- atimed, as the unit runs it, on these mounts alone.
write_config "[daemon] log_level = ${BUSY_LOG_LEVEL:-info}" '[mounts] include_fstypes = ext4 xfs' \
        '[probe] interval = 7d' "[sampler] interval = ${IV}s"
DAEMON_WRAPPER=(nice -n 10 ionice -c 3)
start_daemon
check "every mount is measured before the workloads" wait_until 120 sh -c "
        [ \"\$($ATIMECTL --socket $T/sock --json status | jq --arg m $M/ '[.mounts[] | select(.target | startswith(\$m)) |
          select(.activity != null)] | length')\" -ge $(for c in $CASES; do fs_of $c; done | wc -w) ]"

# Every figure published, polled twice a second: "name at interval_s
# updates lo hi source".
poll() {
        while :; do
                ctl --json status 2>/dev/null | jq -r --arg m "$M/" '.mounts[] | select(.target | startswith($m)) |
                        select(.activity != null and .activity.at != null) | .activity as $a |
                        "\(.target | ltrimstr($m)) \($a.at) \($a.interval_s) \($a.atime_updates_per_min) \($a.updates_ci95[0]) \($a.updates_ci95[1]) \($a.figure_source)"'
                sleep 0.5
        done >>$T/polled
}
poll &
BG_PIDS="$BG_PIDS $!"

# whole NAME SINCE: the intervals of NAME that began after SINCE.
whole() {
        sort -u $T/polled | awk -v n=$1 -v t=$2 '$1 == n && $2 - $3 >= t' | awk '{ print $2 }' | sort -u | wc -l
}

# run_case "NAME..." CMD...: the workload CMD (a function that starts the
# readers into LOAD_PIDS) on ext4 and xfs at once, until atimed has
# published two whole intervals on both, of each NAME (cases run side by
# side), that began an interval and 6 s or more after it started (a
# journal commits every 5 s; files that turn hot after the walk join the
# sample at a walk the first sweep that sees them asks for); then the
# judge.
run_case() {
        local cs=$1 c fs since t1 names=""
        shift
        for c in $cs; do
                for fs in $(fs_of $c); do
                        judge_record $fs-$c 100 3600 $T/count-$fs-$c
                        names="$names $fs-$c"
                done
        done
        t0=$(date +%s.%N)
        "$@"
        since=$(awk -v t=$t0 -v iv=$IV 'BEGIN { printf "%.3f", t + iv + 6 }')
        wait_until 300 sh -c "for n in $names; do [ \$(sort -u $T/polled | awk -v n=\$n -v t=$since '\$1 == n && \$2 - \$3 >= t' | awk '{ print \$2 }' | sort -u | wc -l) -ge 2 ] || exit 1; done"
        sleep 1.5 # the counts run on past the last interval's end
        kill $LOAD_PIDS 2>/dev/null
        wait $LOAD_PIDS 2>/dev/null
        LOAD_PIDS=""
        for n in $names; do
                judge $n $since
        done
}

# judge NAME SINCE: each whole interval of NAME beside the kernel's count
# over it (interpolated between the readings around each end). An
# interval ends at its sweep, during the Unix second "at" names: the count
# is taken over the window ending at at + 0.5, and its range over windows
# ending anywhere in that second.
judge() {
        local n=$1 t=$2 k=${1#*-}
        local fs=${1%%-*}
        sort -u $T/polled | awk -v n=$n -v t=$t '$1 == n && $2 - $3 >= t' | sort -k2,2n -u >$T/iv-$n
        awk -v counts=$T/count-$n '
                function at(x,   i) {
                        for (i = 2; i <= m; i++) if (ts[i] >= x) return cs[i - 1] + (cs[i] - cs[i - 1]) * (x - ts[i - 1]) / (ts[i] - ts[i - 1])
                        return -1
                }
                BEGIN { while ((getline l < counts) > 0) { split(l, f, " "); m++; ts[m] = f[1]; cs[m] = f[2] } }
                function rate(end,   a, b) { a = at(end - $3); b = at(end); return a < 0 || b < 0 ? -1 : (b - a) * 60 / $3 }
                { k = rate($2 + 0.5); lo = hi = k
                  for (s = 0; s <= 1; s += 0.25) { x = rate($2 + s); if (x < lo) lo = x; if (x > hi) hi = x }
                  if (lo < 0) next
                  printf "%s %.1f %.1f %.1f\n", $0, k, lo, hi }' $T/iv-$n >$T/judged-$n
        diag "$n: interval end, s, atimed/min, ci95 lo, hi, source, kernel/min (range)"
        sed 's/^/#   /' $T/judged-$n
        check "$n: two whole intervals judged" test "$(wc -l <$T/judged-$n)" -ge 2
        if [ "$k" = rel ]; then
                check "$n: relatime, the kernel writes under 1/s" awk '{ if ($8 >= 60) bad++ } END { exit bad > 0 || NR == 0 }' $T/judged-$n
                check "$n: relatime, every figure under 60/min" awk '{ if (!($4 ~ /^[0-9.e+-]+$/) || $4 >= 60) bad++ } END { exit bad > 0 || NR == 0 }' $T/judged-$n
                return
        fi
        # The mix case is the sample's figure for files read flat out on
        # a host with no idle CPU, where atimed(8) states a bias (MEASURING:
        # the observer at Nice=10 looks when a file's readers have just
        # been preempted): 0.82-1.05 of the kernel's count in runs of the
        # case (BENCHMARKS.md 11), so it is held to 15% over the intervals.
        # Every other case is the kernel's count, or files read once.
        local over=0.1 every=0.3
        case $k in
        distinct | burst) every=0.1 ;;
        mix) over=0.15 ;;
        esac
        check "$n: within $(awk -v e=$over 'BEGIN { print e * 100 }')% of the kernel's count over the intervals" awk -v o=$over '{ e += $4 * $3; k += $8 * $3 }
                END { if (NR == 0 || k <= 0) exit 1; printf "atimed %.0f, kernel %.0f/min: %.3f\n", e / 60, k / 60, e / k; d = e / k - 1; exit !(d <= o && d >= -o) }' $T/judged-$n
        # Files read once (issue 35): every interval within 10%. Of the
        # count over the interval, as far as the judge knows where it ended:
        # anywhere in the second "at" names ($9 to $10). A burst of 1,250
        # reads in a fraction of a second, every 4 s, falls on either side
        # of an end a second wide: 17,559 to 20,064/min in one interval,
        # the daemon's own count of it 17,559.
        check "$n: every interval within $(awk -v e=$every 'BEGIN { print e * 100 }')%" awk -v e=$every '{ if ($9 <= 0 || $4 > (1 + e) * $10 || $4 < (1 - e) * $9) bad++ } END { exit bad > 0 || NR == 0 }' $T/judged-$n
        check "$n: the kernel's count within the 95% interval" awk '{ if ($10 < $5 || $9 > $6) bad++ } END { exit bad > 0 || NR == 0 }' $T/judged-$n
}

# The workloads: flat_out and bursts (lib.sh), and these.
paced() { # RATE LIST
        "$READLOAD" $1 3600 <$2 >/dev/null &
        LOAD_PIDS="$LOAD_PIDS $!"
}
appender() { # FILE
        python3 -c 'import sys, time
f = open(sys.argv[1], "a")
while True:
    f.write("%.6f a line of the log\n" % time.time()); f.flush(); time.sleep(0.01)' "$1" &
        LOAD_PIDS="$LOAD_PIDS $!"
}
for fs in $FSTYPES; do
        list_tree $M/$fs-one 1 1 >$T/$fs-one.list
        list_tree $M/$fs-few 1 20 >$T/$fs-few.list
        list_tree $M/$fs-rel 1 20 >$T/$fs-rel.list
        list_tree $M/$fs-mix 1 20 >$T/$fs-mix-hot.list
        list_tree $M/$fs-many 20 100 >$T/$fs-many.list
        list_tree $M/$fs-distinct 60 250 >$T/$fs-distinct.list
        list_tree $M/$fs-mix 60 250 | tail -n +21 >$T/$fs-mix-distinct.list
done
list_tree $M/noise 1 20 >$T/noise.list

w_hot() { local fs; for fs in $FSTYPES; do flat_out $T/$fs-$1.list; done; }
# w_distinct CASE...: distinct, burst or both, beside the same busy
# neighbour.
w_distinct() {
        local fs c
        flat_out $T/noise.list
        for c in "$@"; do
                for fs in $(fs_of $c); do
                        case $c in
                        distinct) paced $DISTINCT_RATE $T/$fs-distinct.list ;;
                        burst) bursts $M/$fs-burst ;;
                        esac
                done
        done
}
w_mix() {
        local fs
        for fs in $FSTYPES; do
                flat_out $([ $fs = xfs ] && [ "${BUSY_MIX_APART:-1}" != 0 ] && echo --apart) $T/$fs-mix-hot.list
                paced $DISTINCT_RATE $T/$fs-mix-distinct.list
                appender $M/$fs-mix/log
        done
}
# (BUSY_CASES runs some only, BUSY_FSTYPES on some filesystems only,
# BUSY_IV=S with S-second intervals (issue 35's 10 s shows its bias),
# BUSY_WEB=0 without apache2, BUSY_MIX_APART=0 with the mix case's hot
# files shared among its readers on xfs too, BUSY_LOG=FILE keeps the
# daemon's log,
# BUSY_LOG_LEVEL=debug with each sweep's strata: to look at one.)
# (distinct and burst run side by side: one case's time for both.)
together=$(for c in ${BUSY_CASES:-$CASES}; do case $c in distinct | burst) echo $c ;; esac; done | xargs)
for c in ${BUSY_CASES:-$CASES}; do
        case $c in
        distinct | burst)
                [ -n "$together" ] && run_case "$together" w_distinct $together
                together=""
                ;;
        mix) run_case $c w_$c ;;
        *) run_case $c w_hot $c ;;
        esac
done

# --- The first seed's experiment: Debian's apache2 serving one 1 KiB file
# to ab -c 4.
if [ "${BUSY_WEB:-1}" = 0 ]; then
        diag "BUSY_WEB=0: the seed's experiment is not run"
elif [ -x /usr/sbin/apache2 ] && command -v ab >/dev/null && [ -d /usr/lib/apache2/modules ]; then
        FSTYPES=ext4
        mkdir -p $T/t-web
        image ext4 web $T/t-web strictatime
        head -c 1024 /dev/zero | tr '\0' a >$M/ext4-web/index.html
        sync
        chmod 755 $T $M $M/ext4-web
        judge_new ext4-web ext4 "$(judge_dev $M/ext4-web)"
        judge_on ext4-web
        mkdir -p $T/apache
        APACHE_CONF=$T/apache/httpd.conf
        mods=/usr/lib/apache2/modules
        cat >$APACHE_CONF <<CONF
ServerRoot $T/apache
Mutex file:$T/apache
PidFile $T/apache/httpd.pid
Listen 127.0.0.1:0
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
User www-data
Group www-data
ServerName localhost
DocumentRoot $M/ext4-web
ErrorLog $T/apache/error.log
<Directory $M/ext4-web>
Require all granted
</Directory>
CONF
        # A free port of its own on loopback.
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        sed -i "s/^Listen 127.0.0.1:0/Listen 127.0.0.1:$port/" $APACHE_CONF
        if /usr/sbin/apache2 -f $APACHE_CONF -k start 2>$T/apache/start.err &&
                wait_until 10 curl -sf -o /dev/null http://127.0.0.1:$port/index.html; then
                check "apache2 serves the file" curl -sf -o /dev/null http://127.0.0.1:$port/index.html
                wait_until 60 sh -c "ctl --json status | jq -e --arg t $M/ext4-web '.mounts[] | select(.target == \$t) | .activity != null'"
                w_apache() {
                        ab -q -c 4 -t 3600 -n 10000000 http://127.0.0.1:$port/index.html >$T/ab.out 2>&1 &
                        LOAD_PIDS="$LOAD_PIDS $!"
                }
                # (ab keeps a record of every request it may make: -n
                # bounds its memory, -t its time.)
                run_case web w_apache
                grep -E '^(Complete|Failed|Requests per second)' $T/ab.out | sed 's/^/# ab: /'
                /usr/sbin/apache2 -f $APACHE_CONF -k stop
        else
                diag "apache2 did not start: $(cat $T/apache/start.err $T/apache/error.log 2>/dev/null | head -3)"
                check "apache2 starts" false
        fi
else
        diag "apache2 or ab not installed: the seed's experiment is not run"
fi

stop_daemon
is "atimed exits 0" "$STOP_STATUS" "0"
[ -n "${BUSY_LOG:-}" ] && cp $T/atimed.log "$BUSY_LOG"
done_testing
