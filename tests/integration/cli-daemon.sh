#!/bin/bash
# cli-daemon.sh: atimectl against the real daemon as operators use it:
# options anywhere on the line, per-command help, bash completion, errors
# that name what is valid, exit statuses, output that fits the terminal.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
LONG=$M/a-rather-long-directory-name/with-more-levels/and-a-mount-point-at-the-end
mkdir -p $M/alpha $M/beta "$LONG" $T/tmpfiles.d
mount -t tmpfs -o strictatime,size=8m tmpfs $M/alpha &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/beta &&
mount -t tmpfs -o noatime,size=8m tmpfs "$LONG" || bail mount
# Only the test's mounts are tracked: every other mount point is excluded.
others=$(findmnt -rno TARGET | grep -v -e "^$T" -e '^/$' | sed -E 's|^(/[^/]+)/.*|\1|' | grep -vx /tmp | sort -u | tr '\n' ' ')
cat >"$T/atimed.conf" <<CONF
[mounts]
exclude_paths = [/] [/]${T#/} $others
[sampler]
interval = 1s
[store]
rings = 1s:10min, 10s:1h
[consumers]
tmpfiles_dirs = $T/tmpfiles.d
mail_spools = $T/none
tmpreaper_conf = $T/none
tmpwatch_cron = $T/none
popcon_conf = $T/none
CONF
start_daemon

# --- 1. options anywhere, help per command
out=$(ctl status --json)
is "status --json: options after the command are parsed" "$?" "0"
is "status --json prints JSON" "$(echo "$out" | jq -r '.mounts | length')" "3"
is "status MOUNT --json: the one mount" "$(ctl status $M/alpha --json | jq -r '.mounts[0].target')" "$M/alpha"
is "--json between the command and its argument" "$(ctl recommend --json $M/beta | jq -r '.recommendations[0].target')" "$M/beta"
out=$(ctl status -h)
is "status -h: exit 0" "$?" "0"
like "status -h: status's own usage" "$out" "^Usage: atimectl \\[OPTIONS\\] status \\[PATH\\]"
like "status -h: its own options" "$out" "-o, --output LIST"
is "history --help = help history" "$(ctl history --help)" "$(ctl help history)"
like "history --help names --since" "$(ctl history --help)" "--since DURATION"
like "atimectl help lists every command" "$(ctl help)" "remount PATH \\[POLICY\\]"
ctl status --since 1h >/dev/null 2>$T/err
is "an option of another command: exit 2" "$?" "2"
like "and says which does not apply" "$(cat $T/err)" "--since does not apply to 'status'. Try 'atimectl status --help'"
ctl help frob >/dev/null 2>$T/err
is "help of an unknown command: exit 2" "$?" "2"
is "-- ends the options" "$(ctl --json -- status $M/alpha | jq -r '.mounts[0].target')" "$M/alpha"

# --- 1. bash completion, sourced and asked as bash asks it
comp() { # WORDS... : the completions for the last word
        PATH=$top_builddir:$PATH ATIMED_SOCKET=$T/sock bash -c '
                . "$1"; shift
                COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
                _atimectl
                printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' comp "$top_srcdir/completion/atimectl" "$@"
}
is "completion: the commands" "$(comp atimectl re)" "recommend remount "
is "completion: a command's options" "$(comp atimectl status --f)" "--full "
is "completion: common options after the command" "$(comp atimectl history --j)" "--json "
is "completion: history's own options" "$(comp atimectl history --s)" "--since --socket "
is "completion: tracked mounts from the daemon" "$(comp atimectl status '')" "$LONG $M/alpha $M/beta "
is "completion: mounts after options" "$(comp atimectl --json probe $M/al)" "$M/alpha "
is "completion: policies after remount MOUNT" "$(comp atimectl remount $M/alpha no)" "noatime noatime,lazytime nolazytime "
is "completion: --set MOUNT=" "$(comp atimectl fstab --set $M/b)" "$M/beta= "
is "completion: --set MOUNT=POLICY (bash splits at =)" "$(comp atimectl fstab --set $M/beta = re)" "relatime relatime,lazytime "
is "completion: -o columns, comma lists" "$(comp atimectl status -o TARGET,FS)" "TARGET,FSTYPE "
is "completion: --socket given on the line" "$(PATH=$top_builddir:$PATH bash -c '. "$1"; COMP_WORDS=(atimectl -s "$2" status ""); COMP_CWORD=4; _atimectl; echo ${#COMPREPLY[@]}' x "$top_srcdir/completion/atimectl" $T/sock)" "3"

done_testing
