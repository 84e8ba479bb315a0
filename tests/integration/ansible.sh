#!/bin/bash
# ansible.sh: the Ansible roles of contrib/ansible, linted, then run against
# a Debian 12 container booted with systemd-nspawn (container.sh; the root
# of nspawn.sh with python3, python3-apt and openssh-server added, kept in
# build/systemd/) and reached as Ansible reaches any host: ssh, here on the
# loopback (the container shares the host's network; its sshd listens on
# 127.0.0.1 only, with a key made for this run). The package is this
# checkout's HEAD (deb.sh; the one nspawn.sh builds, kept per commit).
#
# What is run: the atimed role installs, configures (validated by atimed
# --check-config: a bad setting fails and leaves the file) and enables;
# the rollout playbook in check mode shows atimectl fstab's diff and
# touches nothing (the fstab's checksum, the live mount); applied, it
# writes fstab and remounts; a second converge changes nothing; a mount
# whose needs_atime is above the policy is refused, fails the canary and
# stops the rollout before the rest; --force on that mount goes ahead; odd
# names (a backslash, a newline, a byte that is not UTF-8...) stop nothing; a
# vanished mount with an fstab atimectl cannot parse, no history, and
# atimed stopped each fail the host, saying which and why, changing nothing.
#
# tests/run.sh runs it alone after make check, like nspawn.sh. It skips
# where ansible or systemd-nspawn is missing or cannot boot a container.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/deb.sh"
. "$top_srcdir/tests/integration/container.sh"
container_preflight systemd-nspawn debootstrap nsenter git dpkg-buildpackage ansible-playbook ansible-lint yamllint ssh \
        ssh-keygen jq
T=$(mktemp -d /var/tmp/atimed-ansible.XXXXXX) || bail mktemp
ROOT=$CACHE/run/ansible-root
MACHINE=atimed-ansible-$$
mkdir -p "$CACHE/run" || bail "cannot make $CACHE"
trap container_cleanup EXIT
ROLES=$src/contrib/ansible
# Nothing of this run in root's home: Ansible's and ansible-lint's caches
# and temporary files live in T.
export ANSIBLE_HOME=$T/ansible-home XDG_CACHE_HOME=$T/cache

# --- Lint: what a collection's CI runs.
lint_start=$(date +%s)
check "yamllint -s contrib/ansible" sh -c "cd '$ROLES' && yamllint -s ."
check "ansible-lint (production profile, offline) is clean" sh -c "cd '$ROLES' && ansible-lint -p --offline --nocolor"
check "ansible-playbook --syntax-check of the playbooks" sh -c "cd '$ROLES' && ANSIBLE_CONFIG=ansible.cfg ansible-playbook -i localhost, --syntax-check playbooks/site.yml playbooks/rollout.yml"
diag "lint took $(($(date +%s) - lint_start)) s"

# --- The host: a fresh copy of the root, sshd on a free loopback port.
layered_root bookworm-ansible python3 python3-apt openssh-server
start=$(date +%s)
DEB=$(cached_deb "$src" "$(git -C "$src" rev-parse HEAD)") || bail "the package of HEAD does not build"
diag "package ready in $(($(date +%s) - start)) s: ${DEB##*/}"
fresh_root "$LAYERED_ROOT"
PORT=""
for p in $(seq 2222 2299); do
        [ -n "$(ss -Hltn "sport = :$p")" ] || { PORT=$p; break; }
done
[ -n "$PORT" ] || bail "no free port in 2222-2299"
ssh-keygen -q -t ed25519 -N '' -f "$T/id" || bail ssh-keygen
install -d -m 700 "$ROOT/root/.ssh" && install -m 600 "$T/id.pub" "$ROOT/root/.ssh/authorized_keys" || bail "authorized_keys"
printf 'Port %s\nListenAddress 127.0.0.1\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n' "$PORT" \
        >"$ROOT/etc/ssh/sshd_config.d/test.conf"
echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$ROOT/etc/ssh/ssh_host_ed25519_key.pub")" >"$T/known_hosts"
# Two mounts of the host's own fstab, relatime, mounted at boot.
mkdir -p "$ROOT/srv/www" "$ROOT/srv/mail" "$ROOT/srv/strict"
printf '# /etc/fstab\ntmpfs\t/srv/www\ttmpfs\trelatime,size=16m\t0 0\ntmpfs\t/srv/mail\ttmpfs\trelatime,size=16m\t0 0\n' >"$ROOT/etc/fstab"
printf 'tmpfs\t/srv/strict\ttmpfs\tstrictatime,size=16m\t0 0\n' >>"$ROOT/etc/fstab"
boot_or_skip
opts() { C findmnt -no OPTIONS "$1" | tr ',' '\n' | grep -E '^(no|strict|rel)atime$'; }
is "/srv/www is mounted from fstab, relatime" "$(opts /srv/www)" "relatime"

# The inventory: the container is the canary; "later" is the same host
# again under another name, in the rest of the fleet, to show whether the
# rollout went on past the canaries (site.yml runs on box alone: two apt
# runs at once on one host would wait on each other's lock).
hostvars="ansible_host=127.0.0.1 ansible_port=$PORT ansible_user=root ansible_ssh_private_key_file=$T/id ansible_python_interpreter=/usr/bin/python3"
printf '[canaries]\nbox %s\n\n[rest]\nlater %s\n' "$hostvars" "$hostvars" >"$T/inventory"
export ANSIBLE_CONFIG=$ROLES/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_LOCAL_TEMP=$T/ansible-tmp \
        ANSIBLE_SSH_CONTROL_PATH_DIR=$T/cp ANSIBLE_PIPELINING=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
        ANSIBLE_SSH_ARGS="-o UserKnownHostsFile=$T/known_hosts -o StrictHostKeyChecking=yes -o ControlMaster=auto -o ControlPersist=60s"
check "ssh reaches the container" wait_until 30 ssh -o BatchMode=yes -o UserKnownHostsFile="$T/known_hosts" \
        -i "$T/id" -p "$PORT" root@127.0.0.1 true

# The variables of the fleet: a fast sampler, so that history accrues in
# seconds; /srv/mail declared as needing relatime.
cat >"$T/vars.yml" <<EOF
atimed_deb: $DEB
atimed_needs_atime:
  /srv/mail: relatime
atimed_exclude_paths: [/run/host]
atimed_config_extra:
  sampler: {interval: 1s, walk_rate: 100000}
  store: {flush_interval: 1s, rings: "1s:1h, 1min:6h"}
atimed_history_since: 1h
EOF
N=0
# play NAME PLAYBOOK [ARGS...]: runs ansible-playbook; its output in
# $T/NAME.out, its exit status in $RC; "changed failed" of host box in $RECAP.
play() {
        local name=$1 book=$2 t0
        shift 2
        t0=$(date +%s)
        (cd "$ROLES" && ansible-playbook -i "$T/inventory" -e @"$T/vars.yml" "$@" "$book") >"$T/$name.out" 2>&1
        RC=$?
        RECAP=$(sed -n 's/^box *: .*changed=\([0-9]*\).*failed=\([0-9]*\).*/\1 \2/p' "$T/$name.out")
        diag "$name: ansible-playbook ${book##*/} $* took $(($(date +%s) - t0)) s, exit $RC, changed/failed: $RECAP"
}
show() { grep -E 'fatal|FAILED|ERROR|msg' "$T/$1.out" | head -${2:-10} | sed 's/^/#   /'; }
fstab_sum() { C sha256sum /etc/fstab | cut -d' ' -f1; }

# --- Install and configure.
play install playbooks/site.yml -l box
is "site.yml installs and configures: exit 0" "$RC" "0"
[ "$RC" -eq 0 ] || show install 20
is "the package is installed" "$(C dpkg-query -W -f='${Status}' atimed)" "install ok installed"
is "its units are enabled and active" "$(C systemctl is-enabled atimed.socket atimed.service | tr '\n' ' ')$(C systemctl is-active atimed.socket atimed.service | tr '\n' ' ')" \
        "enabled enabled active active "
conf=$(C cat /etc/atimed/atimed.conf)
like "atimed.conf has the declaration of /srv/mail" "$(printf '%s\n' "$conf" | grep -A1 -F '[mount:/srv/mail]')" "needs_atime = relatime"
like "and the sampler's settings" "$conf" "^interval = 1s$"
check "atimed answers with it" wait_until 20 C atimectl status /srv/www
like "the handler reloaded atimed (atimectl reload)" "$(grep -A2 'RUNNING HANDLER \[atimed : Reload atimed\]' "$T/install.out")" "changed: \[box\]"

# A setting atimed refuses: the template's validate (atimed --check-config)
# fails the host before the file is in place.
sum=$(C sha256sum /etc/atimed/atimed.conf)
play badconf playbooks/site.yml -l box -e '{"atimed_config_extra": {"sampler": {"interval": "fast"}}}'
is "a configuration atimed --check-config refuses fails the host" "$RC|$RECAP" "2|0 1"
like "saying so, with atimed's words" "$(grep -F 'failed to validate' "$T/badconf.out")" "\[sampler\] interval: invalid value 'fast'"
is "the file in place is untouched" "$(C sha256sum /etc/atimed/atimed.conf)" "$sum"
is "atimed still runs" "$(C systemctl is-active atimed.service)" "active"

# History before the change: the rollout asks for some.
check "/srv/www has history" wait_until 60 sh -c "[ \"\$(nsenter -t $LEADER -a atimectl --json history /srv/www --since 1h | jq '[.points[] | select(.atime_updates_per_min != null)] | length')\" -ge 1 ]"

# --- Check mode: the diff, nothing touched.
POL='{"atimed_policies": {"/srv/www": "noatime"}}'
before=$(fstab_sum)
play checkmode playbooks/rollout.yml --check --diff -e "$POL"
is "rollout.yml --check --diff: exit 0, changed" "$RC|$RECAP" "0|1 0"
[ "$RC" -eq 0 ] || show checkmode 20
like "shows atimectl fstab's diff: the old line" "$(cat "$T/checkmode.out")" "^-tmpfs	/srv/www	tmpfs	relatime,size=16m	0 0$"
like "and the new one" "$(cat "$T/checkmode.out")" "^\+tmpfs	/srv/www	tmpfs	noatime,size=16m	0 0$"
like "and the remount to come" "$(cat "$T/checkmode.out")" "^remount /srv/www: relatime -> noatime$"
is "fstab's checksum is unchanged" "$(fstab_sum)" "$before"
is "the live mount is unchanged" "$(opts /srv/www)" "relatime"
is "no backup of fstab was made" "$(C sh -c 'ls /etc/fstab.atimectl-* 2>/dev/null')" ""

# --- Applied.
play apply playbooks/rollout.yml --diff -e "$POL"
is "rollout.yml: exit 0, changed" "$RC|$RECAP" "0|1 0"
[ "$RC" -eq 0 ] || show apply 20
like "fstab has noatime for /srv/www" "$(C cat /etc/fstab)" "^tmpfs	/srv/www	tmpfs	noatime,size=16m	0 0$"
like "and /srv/mail as it was" "$(C cat /etc/fstab)" "^tmpfs	/srv/mail	tmpfs	relatime,size=16m	0 0$"
is "the live mount is noatime" "$(opts /srv/www)" "noatime"
check "atimectl fstab --write kept a backup" C sh -c 'ls /etc/fstab.atimectl-*'
check "atimed sees the new policy" wait_until 20 sh -c "nsenter -t $LEADER -a atimectl --json status /srv/www | jq -e '.mounts[] | select(.target == \"/srv/www\") | .atime == \"noatime\"'"

# --- Following the advice where its confidence is high: /srv/strict,
# strictatime with no reader of atime, is advised relatime by rule.
advice() { C atimectl --json recommend | jq -r '.recommendations[] | select(.change) | "\(.target) \(.confidence) \(.recommended.options)"' | sort; }
diag "the advice to change: $(advice | tr '\n' ';')"
like "/srv/strict is advised relatime at confidence high" "$(advice)" "^/srv/strict high relatime"
# Of those, the ones fstab holds (not nspawn's /dev, /tmp, ...): the
# others are left alone, and said to be.
high=$(advice | awk '$2 == "high" { print $1 }' | while read -r m; do C findmnt -s -n "$m" >/dev/null && echo "$m"; done | tr '\n' ' ')
play advice playbooks/rollout.yml --diff -e '{"atimed_follow_advice": "high"}'
is "rollout.yml with atimed_follow_advice high: exit 0, changed" "$RC|$RECAP" "0|1 0"
[ "$RC" -eq 0 ] || show advice 20
is "/srv/strict is relatime" "$(opts /srv/strict)" "relatime"
like "and so is its fstab line" "$(C cat /etc/fstab)" "^tmpfs	/srv/strict	tmpfs	relatime,size=16m	0 0$"
is "the mounts advised at confidence high were changed, and no other" \
        "$(grep -E '^remount ' "$T/advice.out" | sed -n 's/^remount \([^:]*\):.*/\1/p' | sort -u | tr '\n' ' ')" "$high"
is "/srv/www as it was" "$(opts /srv/www)" "noatime"
like "the advice for a mount fstab lacks is skipped, saying so" "$(cat "$T/advice.out")" "skipped: not in /etc/fstab"

# --- A second converge: install, configure and apply again, nothing changes.
before=$(fstab_sum)
play again1 playbooks/site.yml -l box
is "site.yml again: changed=0" "$RC|$RECAP" "0|0 0"
play again2 playbooks/rollout.yml -e "$POL"
is "rollout.yml again: changed=0" "$RC|$RECAP" "0|0 0"
play again3 playbooks/rollout.yml -e '{"atimed_follow_advice": "high"}'
is "following the advice again: changed=0" "$RC|$RECAP" "0|0 0"
is "fstab untouched" "$(fstab_sum)" "$before"

# --- A reader that needs atime: refused, the canary fails, the rollout stops.
play refused playbooks/rollout.yml -e '{"atimed_policies": {"/srv/mail": "noatime"}}'
is "noatime on /srv/mail (needs_atime = relatime): the canary fails" "$RC|$RECAP" "2|0 1"
like "saying which mount and why, with the declaration's file:line" "$(grep -F 'msg' "$T/refused.out")" \
        "/srv/mail: refused: noatime on /srv/mail breaks a reader of atime that needs relatime.*/etc/atimed/atimed.conf:[0-9]+"
is "the rest of the fleet was not reached (max_fail_percentage: 0)" "$(grep -c '^later ' "$T/refused.out")" "0"
is "fstab untouched" "$(fstab_sum)" "$before"
is "/srv/mail still relatime" "$(opts /srv/mail)" "relatime"

# The outcome registered per host, as the role leaves it for a report.
cat >"$T/report.yml" <<'EOF'
---
- name: Apply and report
  hosts: canaries
  gather_facts: false
  tasks:
    - name: Apply
      ansible.builtin.import_role:
        name: atimed_apply
      ignore_errors: true  # noqa: ignore-errors
    - name: Report
      ansible.builtin.copy:
        content: "{{ atimed_apply_result | to_json }}"
        dest: /root/result.json
        mode: "0600"
EOF
play report "$T/report.yml" -e '{"atimed_policies": {"/srv/mail": "noatime"}}'
is "atimed_apply_result: changed false, failed, refused /srv/mail" \
        "$(jq -c '[.changed, .failed, .refused, (.why[0] | test("^/srv/mail: refused: "))]' "$ROOT/root/result.json")" '[false,true,["/srv/mail"],true]'

# --force for that mount: applied, saying so.
play forced playbooks/rollout.yml -e '{"atimed_policies": {"/srv/mail": "noatime"}, "atimed_force": ["/srv/mail"]}'
is "with atimed_force for /srv/mail: exit 0, changed" "$RC|$RECAP" "0|1 0"
is "/srv/mail is noatime" "$(opts /srv/mail)" "noatime"
like "and so is its fstab line" "$(C cat /etc/fstab)" "^tmpfs	/srv/mail	tmpfs	noatime,size=16m	0 0$"
like "the rest of the fleet followed" "$(grep '^later ' "$T/forced.out")" "failed=0"

# --- Odd names (issue 43): a mount named we\ird in fstab (\134 there), and
# mounts fstab lacks named with a space, a tab, a newline, a byte that is
# not UTF-8, a backslash that reads as atimed's own escape and '$HOME',
# each strictatime, so that atimed advises relatime for it. The policy for
# we\ird is applied; the advice for the others is skipped, each: no odd
# name stops the rollout.
ODD=("sp ace" $'tab\tx' $'nl\nx' "ff"$'\xff' 'esc\x41' '$HOME')
C mkdir -p '/srv/we\ird' && C mount -t tmpfs -o relatime,size=16m tmpfs '/srv/we\ird' || bail "mount we\\ird"
for n in "${ODD[@]}"; do
        C mkdir -p "/srv/$n" && C mount -t tmpfs -o strictatime,size=1m tmpfs "/srv/$n" || bail "mount /srv/$n"
done
C sh -c 'printf "tmpfs\t/srv/we\\\\134ird\ttmpfs\trelatime,size=16m\t0 0\n" >>/etc/fstab'
like "fstab has we\\ird, escaped" "$(C cat /etc/fstab)" "^tmpfs	/srv/we\\\\134ird	tmpfs	relatime,size=16m	0 0\$"
check "we\\ird has history" wait_until 60 sh -c "[ \"\$(nsenter -t $LEADER -a atimectl --json history '/srv/we\\ird' --since 1h | jq '[.points[] | select(.atime_updates_per_min != null)] | length')\" -ge 1 ]"
# (The other mounts of /srv: www, mail, strict and we\ird, whatever their
# advice: /srv/mail, forced to noatime, is advised relatime again.)
check "atimed advises relatime for each odd name" wait_until 30 sh -c "[ \"\$(nsenter -t $LEADER -a atimectl --json recommend | jq '[.recommendations[] | select(.change and .confidence == \"high\" and (.target | startswith(\"/srv/\")) and (.target | test(\"^/srv/(www|mail|strict|we)\") | not))] | length')\" = ${#ODD[@]} ]"
play odd playbooks/rollout.yml --diff -e '{"atimed_policies": {"/srv/we\\ird": "noatime"}, "atimed_follow_advice": "high"}'
is "the policy for we\\ird and the advice for the odd names: exit 0, changed" "$RC|$RECAP" "0|1 0"
[ "$RC" -eq 0 ] || show odd 20
is "we\\ird is noatime" "$(opts '/srv/we\ird')" "noatime"
like "and so is its fstab line" "$(C cat /etc/fstab)" "^tmpfs	/srv/we\\\\134ird	tmpfs	noatime,size=16m	0 0\$"
is "the advice for each odd name fstab lacks: skipped, saying so (on box, then later)" \
        "$(grep -c '"msg": "/srv/[^"]*(advice): skipped: not in /etc/fstab' "$T/odd.out")" "$((2 * ${#ODD[@]}))"
is "their mounts as they were (strictatime)" \
        "$(for n in "${ODD[@]}"; do C findmnt -no VFS-OPTIONS --mountpoint "/srv/$n"; done | grep -cE '(^|,)(no|rel)atime(,|$)')" "0"
like "the rest of the fleet followed" "$(grep '^later ' "$T/odd.out")" "failed=0"
for n in "${ODD[@]}" 'we\ird'; do C umount "/srv/$n"; done
C sed -i '/we\\134ird/d' /etc/fstab

# --- Hosts where nothing can be done: each says why, and nothing changes.
C sh -c 'echo "this line is no fstab entry" >>/etc/fstab'
before=$(fstab_sum)
play broken playbooks/rollout.yml -e '{"atimed_policies": {"/srv/www": "relatime", "/srv/gone": "noatime"}}'
is "a vanished mount and an fstab with a malformed line: the host fails" "$RC|$RECAP" "2|0 1"
like "naming the vanished mount" "$(grep -F 'msg' "$T/broken.out")" "/srv/gone: not mounted: the mount vanished"
like "and the fstab atimectl cannot parse" "$(grep -F 'msg' "$T/broken.out")" "/srv/www: /etc/fstab cannot be parsed: line 5: malformed entry"
is "nothing changed: fstab" "$(fstab_sum)" "$before"
is "nor /srv/www, which alone could have been changed" "$(opts /srv/www)" "noatime"
C sed -i '$d' /etc/fstab

play nohistory playbooks/rollout.yml -e '{"atimed_policies": {"/srv/www": "relatime"}, "atimed_min_history_points": 100000}'
is "too little history: the host fails" "$RC|$RECAP" "2|0 1"
like "saying how much there is" "$(grep -F 'msg' "$T/nohistory.out")" "/srv/www: no history: [0-9]+ measured point\(s\) in the last 1h, 100000 needed"
is "/srv/www unchanged" "$(opts /srv/www)" "noatime"

C systemctl stop atimed.socket atimed.service
play stopped playbooks/rollout.yml -e '{"atimed_policies": {"/srv/www": "relatime"}}'
is "atimed stopped: the host fails" "$RC|$RECAP" "2|0 1"
like "saying atimed is not running" "$(grep -F 'msg' "$T/stopped.out")" "atimed is not running or does not answer"
is "/srv/www unchanged" "$(opts /srv/www)" "noatime"

poweroff
diag "the Ansible suite took $(($(date +%s) - SUITE_START)) s"
done_testing
