# lib.sh: shared by the integration tests. Each test is a shell script
# speaking TAP; it runs as root in a private mount namespace of its own
# (re-executing itself under unshare), against the real daemon and client
# built in $top_builddir, on real mounts it makes under a temporary dir.

set -u

: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
ATIMED=$top_builddir/atimed
ATIMECTL=$top_builddir/atimectl
RAWSOCK=$top_builddir/tests/helpers/rawsock
NOTIFY_RECV=$top_builddir/tests/helpers/notify-recv

TAP_N=0
TAP_FAILED=0

tap_result() { # STATUS DESCRIPTION
        TAP_N=$((TAP_N + 1))
        if [ "$1" -eq 0 ]; then
                echo "ok $TAP_N - $2"
        else
                echo "not ok $TAP_N - $2"
                TAP_FAILED=$((TAP_FAILED + 1))
        fi
}

# check DESCRIPTION COMMAND...: passes if COMMAND exits 0.
check() {
        local desc=$1
        shift
        if "$@" >"$T/check.out" 2>&1; then
                tap_result 0 "$desc"
        else
                tap_result 1 "$desc"
                sed 's/^/#   /' "$T/check.out" | head -20
        fi
}

# is DESCRIPTION GOT EXPECTED
is() {
        if [ "$2" = "$3" ]; then
                tap_result 0 "$1"
        else
                tap_result 1 "$1"
                printf '#   got:      %s\n#   expected: %s\n' "$2" "$3"
        fi
}

# like DESCRIPTION TEXT PATTERN (grep -E)
like() {
        if printf '%s\n' "$2" | grep -Eq -- "$3"; then
                tap_result 0 "$1"
        else
                tap_result 1 "$1"
                printf '%s\n' "$2" | head -10 | sed 's/^/#   got: /'
                printf '#   expected to match: %s\n' "$3"
        fi
}

diag() { echo "# $*"; }

skip_all() {
        echo "1..0 # SKIP $*"
        exit 0
}

bail() {
        echo "Bail out! $*"
        exit 1
}

done_testing() {
        echo "1..$TAP_N"
        [ "$TAP_FAILED" -eq 0 ]
}

# Re-executes the calling script in a private mount namespace, as root.
enter_namespace() {
        [ "$(id -u)" -eq 0 ] || skip_all "needs root (mounts in a private namespace)"
        command -v unshare >/dev/null || skip_all "needs unshare(1)"
        command -v jq >/dev/null || bail "needs jq"
        if [ -z "${ATIMED_TEST_NS:-}" ]; then
                ATIMED_TEST_NS=1 exec unshare -m --propagation private "$SHELL" "$0" "$@"
        fi
        T=$(mktemp -d /tmp/atimed-test.XXXXXX) || bail "mktemp"
        # A tmpfs of its own: nothing the test mounts leaks into /tmp.
        mount -t tmpfs -o size=512m,mode=0755 atimed-test "$T" || bail "cannot mount tmpfs on $T"
        mkdir -p "$T/mnt" "$T/state"
        trap cleanup EXIT
}

DAEMON_PIDS=""
FUSE_PIDS=""
# A test's own background processes (readers, loads): cleanup ends them.
BG_PIDS=""
FUSE_DIRS=""

cleanup() {
        local p
        for p in $DAEMON_PIDS; do
                kill -CONT "$p" 2>/dev/null
                kill -KILL "$p" 2>/dev/null
        done
        for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
        for p in $BG_PIDS; do wait "$p" 2>/dev/null; done
        # A FUSE daemon left stopped would hang the unmount below.
        bindfs_resume
        judge_cleanup
        for p in $FUSE_DIRS; do
                umount -l "$p" 2>/dev/null
        done
        wait 2>/dev/null
        if [ "${KEEP_TEST_DIR:-}" != "" ]; then
                cp -r "$T" "$KEEP_TEST_DIR" 2>/dev/null
        fi
        # A loop device lets go of its image only once the filesystem on it
        # is gone (autoclear, asynchronously): the tmpfs holding the image
        # may still be busy a moment. Lazily at last: /tmp keeps no
        # directory of a test that ended.
        umount -R "$T" 2>/dev/null || { sleep 1; umount -R "$T" 2>/dev/null; } || umount -R -l "$T" 2>/dev/null
        rmdir "$T" 2>/dev/null
}

# wait_until SECONDS COMMAND...: polls every 50 ms until COMMAND succeeds.
# SECONDS is what it takes on a quiet host at most; the wait gives up only
# after twice that, and never before a minute, so a loaded host (a build
# beside it, two CPU hogs) makes a test slower, never red: no wait here
# judges speed (bench/ does). It returns as soon as COMMAND succeeds, so
# the bound costs a passing test nothing.
wait_until() {
        local limit=$(($1 * 2)) end
        shift
        [ "$limit" -ge 60 ] || limit=60
        end=$((SECONDS + limit))
        until "$@" >/dev/null 2>&1; do
                [ "$SECONDS" -lt "$end" ] || return 1
                sleep 0.05
        done
}

ctl() { "$ATIMECTL" --socket "$T/sock" "$@"; }

# A file the daemon rewrites in the background (the textfile, every
# interval; the history's journal and snapshot) is written to a temporary
# file beside it, ".NAME.<16 hex digits>.tmp" (common/fileio.c), then
# renamed over it: a listing taken between the two shows the temporary
# file of a write that is about to succeed. These wait for that rename;
# a temporary file that stays was left behind, and the wait gives up
# after its bound and prints what is there.
#
# only_entries DIR NAME...: DIR holds the NAMEs and nothing else.
only_entries() {
        local dir=$1 want
        shift
        want=$(printf '%s\n' "$@" | sort)
        wait_until 5 sh -c '[ "$(ls -A "$1" | sort)" = "$2" ]' - "$dir" "$want" && return 0
        ls -A "$dir"
        return 1
}
# no_temporary DIR: DIR holds no writer's temporary file.
no_temporary() {
        wait_until 5 sh -c '! ls -A "$1" | grep -q "\.[0-9a-f]\{16\}\.tmp$"' - "$1" && return 0
        ls -A "$1"
        return 1
}

# connections N: exactly N connections to $T/sock are open (the daemon's
# ends of them, accepted or in its listen backlog).
connections() { [ "$(ss -xHn src "$T/sock" | wc -l)" -eq "$1" ]; }

# start_daemon [ARGS...]: atimed on $T/sock with $T/atimed.conf if present;
# sets DAEMON_PID and waits until it answers. DAEMON_WRAPPER (an array, e.g.
# valgrind and its options) runs it, and START_TIMEOUT bounds the wait.
DAEMON_WRAPPER=()
start_daemon() {
        local conf=()
        [ -f "$T/atimed.conf" ] && conf=(--config "$T/atimed.conf")
        "${DAEMON_WRAPPER[@]}" "$ATIMED" "${conf[@]}" --socket "$T/sock" --state-dir "$T/state" "$@" 2>>"$T/atimed.log" &
        DAEMON_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $DAEMON_PID"
        wait_until "${START_TIMEOUT:-10}" ctl status || { sed 's/^/#   log: /' "$T/atimed.log"; bail "atimed did not start"; }
}

# start_second_daemon CONFIG: another atimed, on $T/sock-b with CONFIG and a
# state dir of its own, its log in $T/atimed-b.log; sets B_PID and waits
# until it answers.
start_second_daemon() {
        "$ATIMED" --config "$1" --socket $T/sock-b --state-dir $T/state-b 2>>$T/atimed-b.log &
        B_PID=$!
        DAEMON_PIDS="$DAEMON_PIDS $B_PID"
        wait_until 10 "$ATIMECTL" --socket $T/sock-b status || bail "the second atimed did not start"
}

# both_probed N: the daemons on $T/sock and $T/sock-b have each verified
# the policy of N mounts below $M.
both_probed() {
        local s
        for s in $T/sock $T/sock-b; do
                [ "$("$ATIMECTL" --socket $s --json status | jq --arg m $M/ \
                        '[.mounts[] | select(.target | startswith($m)) | select(.probe.verified == true)] | length')" = "$1" ] || return 1
        done
}

# sighup_reload: SIGHUP to the daemon, and a wait until it says the
# configuration was reloaded: the reload reads off the loop, so what it
# brings is in force once it says so, not when the signal is sent.
sighup_reload() {
        local n
        n=$(grep -c "Configuration reloaded" "$T/atimed.log")
        kill -HUP "$DAEMON_PID"
        wait_until 10 sh -c "[ \$(grep -c 'Configuration reloaded' '$T/atimed.log') -gt $n ]"
}

# stop_daemon: SIGTERM, and the exit status in STOP_STATUS.
stop_daemon() {
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        STOP_STATUS=$?
}

# mount_json TARGET: the GetStatus entry of one mount, or nothing.
mount_json() {
        ctl --json status | jq -c --arg t "$1" '.mounts[] | select(.target == $t)'
}

# swept_since TARGET UNIX_TIME: the daemon has published a figure of
# TARGET for an interval that ended at UNIX_TIME or later. A test waits on
# it for the daemon's own progress (so many sweeps done), not for the
# clock: on a loaded host the sweeps come later, and the wait with them.
swept_since() {
        ctl --json status | jq -e --arg t "$1" --argjson u "$2" \
                '.mounts[] | select(.target == $t) | .activity.at // 0 | . >= $u' >/dev/null
}

# mount_field TARGET FIELD
mount_field() {
        ctl --json status | jq -r --arg t "$1" ".mounts[] | select(.target == \$t) | .$2"
}

# make_ext4 NAME SIZE_MB: a loop-mountable ext4 image at $T/NAME.img.
make_ext4() {
        truncate -s "${2}M" "$T/$1.img" && mkfs.ext4 -q -F "$T/$1.img"
}

# make_tree DIR NDIRS FILES_PER_DIR: DIR/dN/fM with a little content each.
make_tree() {
        local d i j
        for ((i = 0; i < $2; i++)); do
                d=$1/d$i
                mkdir -p "$d"
                for ((j = 0; j < $3; j++)); do
                        printf 'atimed test file %d %d\n' "$i" "$j" >"$d/f$j"
                done
        done
}

# list_tree DIR NDIRS FILES_PER_DIR: the paths make_tree made, without
# reading any directory (which would change directory atimes).
list_tree() {
        local i j
        for ((i = 0; i < $2; i++)); do
                for ((j = 0; j < $3; j++)); do
                        echo "$1/d$i/f$j"
                done
        done
}

# activity TARGET: "at interval_s estimate lo hi exact sample population" of
# the mount's last interval, or nothing.
activity() {
        ctl --json status | jq -r --arg t "$1" '.mounts[] | select(.target == $t) | .activity |
                select(. != null) | "\(.at) \(.interval_s) \(.atime_inodes_per_min) \(.ci95[0]) \(.ci95[1]) \(.exact) \(.sample_size) \(.population)"'
}

# next_interval TARGET SECONDS: waits until a new interval completes for
# TARGET; prints its activity line.
next_interval() {
        local before now i=0
        before=$(activity "$1" | cut -d' ' -f1)
        while [ "$i" -lt $(($2 * 10)) ]; do
                now=$(activity "$1")
                if [ -n "$now" ] && [ "${now%% *}" != "$before" ] && [ "${now%% *}" != "null" ]; then
                        echo "$now"
                        return 0
                fi
                sleep 0.1
                i=$((i + 1))
        done
        return 1
}

# HOST_EXCLUDE: exclude_paths words for the host's own mounts below / (what
# is mounted on /dev and /run), for a test that tracks tmpfs: add it with
# '[mounts] exclude_paths += $HOST_EXCLUDE'.
HOST_EXCLUDE='[/]dev[/]* [/]run [/]run/*'
# TMPFS_ONLY: the config edits of a test that tracks its own tmpfs mounts
# and none of the host's: write_config "${TMPFS_ONLY[@]}" ...
TMPFS_ONLY=('[mounts] include_fstypes = tmpfs' "[mounts] exclude_paths += $HOST_EXCLUDE")

# config [EDIT...]: prints the tests' atimed.conf. The base is
#       [mounts]
#       exclude_paths = [/] [/]$T       (the host's root and the test's tmpfs)
#       [sampler]
#       interval = 1s
#       walk_rate = 100000
# and each EDIT changes it, in order:
#       '[SECTION] KEY = VALUE'   sets KEY (a new section goes at the end)
#       '[SECTION] KEY += WORDS'  appends WORDS to KEY's value
#       '[SECTION] KEY'           drops KEY (a section left empty is left out)
#       '[SECTION]'               the section, kept even when empty
# With --bare first, the edits start from an empty file instead.
config() {
        local re='^\[([^]]+)\][[:space:]]+([a-z_]+)([[:space:]]*(\+?=)[[:space:]]*(.*))?$'
        local -a sections=(mounts sampler) keys=(mounts.exclude_paths sampler.interval sampler.walk_rate)
        local -A val=([mounts.exclude_paths]="[/] [/]${T#/}" [sampler.interval]=1s [sampler.walk_rate]=100000) kept=()
        local e k s
        if [ "${1:-}" = --bare ]; then
                sections=() keys=() val=()
                shift
        fi
        for e in "$@"; do
                if [[ $e =~ ^\[([^]]+)\]$ ]]; then
                        s=${BASH_REMATCH[1]}
                        kept[$s]=1
                        [[ " ${sections[*]} " == *" $s "* ]] || sections+=("$s")
                        continue
                fi
                [[ $e =~ $re ]] || bail "config: cannot read the edit '$e'"
                s=${BASH_REMATCH[1]}
                k=$s.${BASH_REMATCH[2]}
                case ${BASH_REMATCH[4]} in
                "") unset "val[$k]" ;;
                +=) val[$k]="${val[$k]:-}${val[$k]:+ }${BASH_REMATCH[5]}" ;;
                *) val[$k]=${BASH_REMATCH[5]} ;;
                esac
                [[ " ${sections[*]} " == *" $s "* ]] || sections+=("$s")
                [[ " ${keys[*]} " == *" $k "* ]] || keys+=("$k")
        done
        for s in "${sections[@]}"; do
                e=""
                for k in "${keys[@]}"; do
                        [ "${k%.*}" = "$s" ] && [ -n "${val[$k]+set}" ] && e+="${k##*.} = ${val[$k]}"$'\n'
                done
                [ -z "$e" ] && [ -z "${kept[$s]:-}" ] || printf '[%s]\n%s' "$s" "$e"
        done
}

# write_config [EDIT...]: config's output into $T/atimed.conf.
write_config() {
        config "$@" >"$T/atimed.conf"
}

# bindfs_start SRC DIR: a FUSE mount of SRC on DIR served by a bindfs
# daemon, whose pid goes into FUSE_PID (and FUSE_PIDS, the test's own):
# stopped with SIGSTOP it is a filesystem that no longer answers (a dead
# NFS server, a hostile user's mount). cleanup resumes and unmounts it.
bindfs_start() {
        command -v bindfs >/dev/null || bail "bindfs is not installed"
        bindfs "$1" "$2" || bail "bindfs $1 $2"
        FUSE_PID=$(pgrep -nf "^bindfs $1 $2\$")
        [ -n "$FUSE_PID" ] || bail "the pid of bindfs $1 $2 not found"
        FUSE_PIDS="$FUSE_PIDS $FUSE_PID"
        FUSE_DIRS="$FUSE_DIRS $2"
}

# bindfs_stop, bindfs_resume: SIGSTOP and SIGCONT to every FUSE daemon in
# FUSE_PIDS.
bindfs_stop() {
        [ -z "${FUSE_PIDS// /}" ] || kill -STOP $FUSE_PIDS
}
bindfs_resume() {
        [ -z "${FUSE_PIDS// /}" ] || kill -CONT $FUSE_PIDS 2>/dev/null
}

# tty_status COLUMNS ROWS: 'atimectl status' in a terminal of that size (a
# tmux pane); the screen into $T/pane, the exit status into $T/tmux.rc.
# Fails if it never finished (wait_until's bound). (The pane's 'sleep' is no wait:
# it keeps the finished pane open to be captured; kill-server ends it.)
tty_status() {
        local rc
        rm -f $T/tmux.rc
        tmux -S $T/tmux.sock -f /dev/null new-session -d -x "$1" -y "$2" \
                "env -u COLUMNS LC_ALL=C.UTF-8 $ATIMECTL --socket $T/sock status; echo \$? >$T/tmux.rc; sleep 600"
        wait_until 10 test -s $T/tmux.rc
        rc=$?
        tmux -S $T/tmux.sock capture-pane -p -J >$T/pane
        tmux -S $T/tmux.sock kill-server
        return $rc
}

# poll_activity NAME SOCKET PREFIX UPDATES CI LAST: until killed, twice a
# second (the sleep is the poll's period, not a wait), a line per mount
# below PREFIX with a figure from the atimed on SOCKET: "NAME CASE at
# interval_s UPDATES CI[0] CI[1] LAST", CASE the target less PREFIX and the
# rest fields of its activity.
poll_activity() {
        while :; do
                "$ATIMECTL" --socket "$2" --json status 2>/dev/null | jq -r --arg n "$1" --arg m "$3" \
                        --arg u "$4" --arg ci "$5" --arg l "$6" '.mounts[] | select(.target | startswith($m)) |
                        select(.activity != null) | .activity as $a |
                        "\($n) \(.target | ltrimstr($m)) \($a.at) \($a.interval_s) \($a[$u]) \($a[$ci][0]?) \($a[$ci][1]?) \($a[$l])"'
                sleep 0.5
        done
}

# fuse_for_users: in this test's namespace, a /dev/fuse anyone may open and
# a fuse.conf with user_allow_other (as on many hosts; this one has 0600
# and no such line), so that nobody can make FUSE mounts others may enter.
fuse_for_users() {
        mknod -m 0666 $T/fuse c 10 229 || bail "mknod"
        mount --bind $T/fuse /dev/fuse || bail "bind /dev/fuse"
        printf 'user_allow_other\nmount_max = 1000\n' >$T/fuse.conf
        mount --bind $T/fuse.conf /etc/fuse.conf || bail "bind fuse.conf"
}

# as_nobody COMMAND...: runs it as user nobody, group nogroup.
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# --- The judge: the kernel's own count of atime updates, which every test
# that measures holds atimed's figures against. A tracefs instance of the
# test's own per thing judged (its buffer, clock and filter are no one
# else's) counts one event, filtered by device: ext4's
# ext4_mark_inode_dirty, xfs's xfs_update_time. Each event recorded counts,
# whether it is still in the small buffer or overwritten (entries + overrun
# over the CPUs), so nothing need read the events.
declare -A JUDGE_EVENT=([ext4]=events/ext4/ext4_mark_inode_dirty [xfs]=events/xfs/xfs_update_time
        [btrfs]=events/btrfs/btrfs_cow_block)
declare -A JUDGE_OF=() # NAME: the event its instance counts
JUDGE_INSTANCES=""
JUDGE_PIDS=""
TRACECOUNT=$top_builddir/tests/helpers/tracecount

# judge_init [FSTYPE...]: tracefs mounted on $T/tracing, with the event of
# each FSTYPE (ext4 if none is named); the test is skipped where the kernel
# lacks them. (--try: returns 1 instead, for a test that judges only where
# it can.)
judge_init() {
        local fs try=""
        [ "${1:-}" = --try ] && { try=1; shift; }
        _judge_lacks() { if [ -n "$try" ]; then return 1; else skip_all "$1"; fi; }
        grep -qw tracefs /proc/filesystems || { _judge_lacks "the kernel has no tracefs"; return; }
        mkdir -p "$T/tracing"
        mountpoint -q "$T/tracing" || mount -t tracefs nodev "$T/tracing" 2>/dev/null ||
                { _judge_lacks "cannot mount tracefs"; return; }
        for fs in ${@:-ext4}; do
                [ -d "$T/tracing/${JUDGE_EVENT[$fs]}" ] || { _judge_lacks "no ${JUDGE_EVENT[$fs]#events/} tracepoint"; return; }
        done
}

# judge_dev MOUNT: the tracefs filter that picks MOUNT's device.
judge_dev() {
        local d
        d=$(mountpoint -d "$1") || bail "no device for $1"
        echo "dev == $(((${d%%:*} << 20) | ${d##*:}))"
}

# judge_new NAME FSTYPE FILTER [BUFFER_KB]: a tracing instance counting
# FSTYPE's event where FILTER holds (judge_dev's, and more), not enabled
# yet; its directory is $(judge_dir NAME). cleanup removes it.
judge_new() {
        local i
        i=$(judge_dir "$1")
        mkdir "$i" || skip_all "cannot create a tracing instance"
        JUDGE_INSTANCES="$JUDGE_INSTANCES $i"
        echo "${4:-4}" >"$i/buffer_size_kb"
        echo "$3" >"$i/${JUDGE_EVENT[$2]}/filter" || bail "the filter '$3' was refused"
        JUDGE_OF[$1]=${JUDGE_EVENT[$2]}
}

# judge_dir NAME: the instance's directory.
judge_dir() { echo "$T/tracing/instances/atimed-$$-$1"; }

# judge_on NAME..., judge_off NAME...: the count starts, or stops.
judge_on() {
        local n
        for n in "$@"; do
                echo 1 >"$(judge_dir "$n")/${JUDGE_OF[$n]}/enable" || bail "cannot enable the event for $n"
        done
}
judge_off() {
        local n
        for n in "$@"; do
                echo 0 >"$(judge_dir "$n")/${JUDGE_OF[$n]}/enable"
        done
}

# judge_count NAME: the events counted so far.
judge_count() {
        cat "$(judge_dir "$1")"/per_cpu/cpu*/stats | awk '/^(entries|overrun):/ { s += $2 } END { print s + 0 }'
}

# judge_record NAME PERIOD_MS SECONDS FILE: in the background, the count
# every PERIOD_MS as "UNIX-TIME COUNT" lines into FILE, for SECONDS at
# most; cleanup stops it.
judge_record() {
        "$TRACECOUNT" "$(judge_dir "$1")" "$2" "$3" >"$4" &
        JUDGE_PIDS="$JUDGE_PIDS $!"
}

# judge_cleanup: every recorder stopped, every instance removed (the
# tracefs mount goes with the test's tmpfs).
judge_cleanup() {
        local p
        for p in $JUDGE_PIDS; do kill "$p" 2>/dev/null; done
        for p in $JUDGE_PIDS; do wait "$p" 2>/dev/null; done
        JUDGE_PIDS=""
        for p in $JUDGE_INSTANCES; do
                echo 0 >"$p/tracing_on" 2>/dev/null
                rmdir "$p" 2>/dev/null
        done
        JUDGE_INSTANCES=""
}

# btrfs: the metadata an atime update un-shares from a snapshot, judged by
# the tree blocks it copies away from. btrfs_cow_start NAME ROOT [OP]: an
# instance recording btrfs:btrfs_cow_block for subvolume tree ROOT (its
# id; with OP '>=', every subvolume's from ROOT up), or 1 where the kernel
# lacks it. btrfs_cow_bytes NAME NODESIZE FSID:
# the bytes of the blocks of filesystem FSID (its uuid: another btrfs's
# tree of the same id matches the filter too) copied away from, each
# counted once (a block copied again later in the pass was itself a copy
# of it), times the node size, so far (it goes on recording); it fails,
# saying so, where the buffer (some 150,000 events a CPU) overran.
btrfs_cow_start() {
        judge_init --try btrfs || return 1
        judge_new "$1" btrfs "root_objectid ${3:-==} $2" 16384
        judge_on "$1"
}
btrfs_cow_bytes() {
        if awk '/^overrun:/ && $2 > 0 { lost = 1 } END { exit !lost }' "$(judge_dir "$1")"/per_cpu/cpu*/stats; then
                echo "btrfs_cow_bytes: $1: the trace buffer overran, events were lost" >&2
                return 1
        fi
        awk -v node="$2" -v fs="$3:" '
                index($0, " " fs " ") == 0 { next }
                { for (i = 1; i <= NF; i++) { if ($i ~ /^orig_buf=/) o = substr($i, 10); if ($i ~ /^cow_buf=/) c = substr($i, 9) }
                  orig[o] = 1; copy[c] = 1 }
                END { n = 0; for (b in orig) if (!(b in copy)) n++; print n * node }' "$(judge_dir "$1")/trace"
}

# --- btrfs stretches judged by the kernel (btrfs-attacks.sh,
# btrfs-nested.sh). They read BTRFS_MOUNT (the mount whose figures are
# judged), INTERVAL (the sampler's, seconds), NODESIZE, and call judged
# (the test's: the kernel's bytes so far).

# btrfs_of TARGET: the btrfs part of the mount's GetStatus entry.
btrfs_of() { ctl --json status | jq -c --arg t "$1" '.mounts[] | select(.target == $t) | .btrfs'; }

# btrfs_helper_pid [PID]: the pid of the helper the daemon PID (default
# DAEMON_PID) forked: its child, atimed's image, CAP_SYS_ADMIN alone (the
# processes serving its connections are the helper's children, not the
# daemon's; other tests' daemons and helpers are no one's here).
btrfs_helper_pid() {
        local p me parent=${1:-$DAEMON_PID}
        me=$(readlink -f $ATIMED)
        for p in /proc/[0-9]*; do
                [ "$(readlink $p/exe 2>/dev/null)" = "$me" ] &&
                        [ "$(awk '/^PPid:/ { print $2 }' $p/status 2>/dev/null)" = "$parent" ] &&
                        grep -q '^CapEff:.0000000000200000$' $p/status 2>/dev/null && echo ${p#/proc/}
        done
}

# btrfs_helper_caps: the effective capabilities of the daemon's helper and
# of the processes serving its connections, one line for each set seen.
btrfs_helper_caps() {
        local h p
        h=$(btrfs_helper_pid)
        [ -n "$h" ] || return 0
        for p in /proc/[0-9]*; do
                case "$(awk '/^PPid:/ { print $2 }' $p/status 2>/dev/null)" in
                "$DAEMON_PID" | "$h")
                        [ "${p#/proc/}" = "$h" ] || [ "$(readlink $p/exe 2>/dev/null)" = "$(readlink -f $ATIMED)" ] || continue
                        sed -n 's/^CapEff:\t//p' $p/status ;;
                esac
        done | sort -u
}

# btrfs_counted: atimed's bytes, measured or modelled, since it started,
# with their interval ("bytes lo hi": GetHistory's mean times the seconds
# it covers).
btrfs_counted() {
        ctl --json history "$BTRFS_MOUNT" | jq -r '.btrfs // {} | (.observed_s // 0) as $s |
                [(.unshared_bytes_per_day // 0), (.unshared_bytes_per_day_lo // 0), (.unshared_bytes_per_day_hi // 0)] |
                map(. * $s / 86400) | @tsv'
}

# btrfs_settled [SLACK]: two sweeps past now, and the commit period and the
# slack that confirm a held interval (btrfs.h) after them.
btrfs_settled() {
        local t=$(($(date +%s) + 1))
        wait_until 60 sh -c "$ATIMECTL --socket $T/sock --json status | jq -e '.mounts[] | select(.target == \"$BTRFS_MOUNT\") | .activity.at // 0 | . >= $t + 3 * $INTERVAL + ${1:-7}' >/dev/null"
}

# btrfs_judge_stretch NAME J0 C0 [REASON]: atimed's bytes since C0 ("bytes
# lo hi" at its start) against the kernel's since J0: within 25% with the
# judge inside the interval, or an interval that holds it and says why it
# is wide (its reason matching REASON, by default any of the model's).
btrfs_judge_stretch() {
        local name=$1 j0=$2 c0=$3 why=${4:-modelled|cost table|sample} j c b g lo hi
        j=$(($(judged) - j0))
        c=$(btrfs_counted)
        b=$(btrfs_of "$BTRFS_MOUNT")
        set -- $c0
        g=$(awk -v a="$1" -v b="$(echo "$c" | cut -f1)" 'BEGIN { printf "%.0f", b - a }')
        lo=$(awk -v a="$2" -v b="$(echo "$c" | cut -f2)" 'BEGIN { printf "%.0f", b - a }')
        hi=$(awk -v a="$3" -v b="$(echo "$c" | cut -f3)" 'BEGIN { printf "%.0f", b - a }')
        diag "$name: the kernel's judge $j bytes; atimed $g ($lo-$hi); $(echo "$b" | jq -c '[.source, .rate_source, .bytes_per_inode, .table_bytes_per_inode, .model_intervals, .unseen.subvolumes]')"
        # (A node either way: atimed's probe may copy one; and a little
        # more, for the rate times the seconds it covers is not exact:
        # 10 nodes measured came back as 163,839 bytes.)
        local n=$((NODESIZE + 256))
        if awk -v g="$g" -v j="$j" -v n=$n 'BEGIN { exit !(g >= 0.75 * j - n && g <= 1.25 * j + n) }'; then
                check "$name: atimed's bytes within 25% of the kernel's" true
                check "$name: and the kernel's inside their interval" awk -v lo="$lo" -v hi="$hi" -v j="$j" -v n=$n \
                        'BEGIN { exit !(lo <= j + n && j <= hi + n) }'
        else
                check "$name: atimed's bytes ($g) not within 25% of the kernel's ($j), their interval holds it" \
                        awk -v lo="$lo" -v hi="$hi" -v j="$j" -v n=$n 'BEGIN { exit !(lo <= j + n && j <= hi + n) }'
                # Modelled: the sample's error times the model's (or the
                # cost table's, four times either way), or widened for
                # what the sample does not cover.
                like "$name: and says why it is wide" \
                        "$(echo "$b" | jq -r '.unseen.reason // (if .table_bytes_per_inode then "the cost table" else .rate_source end)')" \
                        "$why"
        fi
}

# judged_config INTERVAL SAMPLE_SIZE [EDIT...]: config's output for a
# daemon that tracks the test's ext4 mounts and nothing of the host's,
# probes once at start (its O_TMPFILE writes come before any workload),
# and sweeps every INTERVAL seconds over a sample of SAMPLE_SIZE.
judged_config() {
        local iv=$1 n=$2
        shift 2
        config '[mounts] exclude_paths = [/]' '[mounts] include_fstypes = ext4' '[probe] interval = 7d' \
                "[sampler] interval = ${iv}s" "[sampler] sample_size = $n" "$@"
}

# --- Workloads of the judged tests (busy.sh, bursts.sh). Each reader's pid
# goes to LOAD_PIDS; READLOAD is tests/helpers/readload; NREAD readers.

# flat_out LIST: NREAD readers of LIST flat out (readload paces nothing at
# a rate no reader reaches), each starting at its own place in the list.
# (--apart: each file read by one reader only, LIST dealt out among them.)
flat_out() {
        local r apart=""
        [ "$1" = --apart ] && { apart=1; shift; }
        for ((r = 0; r < NREAD; r++)); do
                if [ -n "$apart" ]; then
                        awk -v n=$NREAD -v r=$r '(NR - 1) % n == r' $1
                else
                        tail -n +$((r * 7 % $(wc -l <$1) + 1)) $1
                        head -n $((r * 7 % $(wc -l <$1))) $1
                fi | "$READLOAD" 1000000000 3600 >/dev/null &
                LOAD_PIDS="$LOAD_PIDS $!"
        done
}

# bursts DIR: find | xargs cat over the next BURST_DIRS of DIR's 60
# directories (d0 to d59) every BURST_S seconds, on the clock (a slow burst
# delays none after it), each file read once a round.
bursts() {
        (
                trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
                local dir=$1 n=0 i start
                start=$(date +%s.%N)
                while :; do
                        set --
                        for ((i = 0; i < BURST_DIRS; i++)); do set -- "$@" "$dir/d$(((n * BURST_DIRS + i) % 60))"; done
                        find "$@" -type f -print0 | xargs -0 cat >/dev/null &
                        wait $!
                        n=$((n + 1))
                        sleep "$(awk -v s=$start -v n=$n -v p=$BURST_S -v now=$(date +%s.%N) 'BEGIN { d = s + n * p - now; printf "%.3f", (d > 0 ? d : 0) }')" &
                        wait $!
                done
        ) &
        LOAD_PIDS="$LOAD_PIDS $!"
}
