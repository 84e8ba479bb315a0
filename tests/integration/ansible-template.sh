#!/bin/bash
# ansible-template.sh: the atimed role's atimed.conf, rendered by Ansible's
# own templating on this host (a play on localhost, connection local, no
# container) and validated by this build's atimed --check-config, as the
# role validates it on a host. Mount points of any length and of any bytes
# (the issue's 69 bytes, 4,000 bytes, a tab, a newline, ']', '#', ';', a
# backslash, a blank at the end, a byte that is not UTF-8) come out in the
# escaped form that atimed reads back to exactly those bytes; a path atimed
# would refuse fails the task, naming it, and leaves the file alone.
# ansible.sh runs the whole role against a booted host; this is its
# template alone, in seconds.
. "$top_srcdir/tests/integration/lib.sh"
command -v ansible-playbook >/dev/null || skip_all "needs ansible-playbook"
T=$(mktemp -d /tmp/atimed-test.XXXXXX) || bail mktemp
trap 'rm -rf "$T"' EXIT
export ANSIBLE_HOME=$T/ansible-home ANSIBLE_LOCAL_TEMP=$T/tmp ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
        ANSIBLE_ROLES_PATH=$top_srcdir/contrib/ansible/roles ANSIBLE_RETRY_FILES_ENABLED=0 \
        ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3

# The play: the role imported for its defaults and its filter (none of its
# tasks run), then its template written as its configure task writes it.
cat >"$T/render.yml" <<EOF
- name: Render the atimed role's atimed.conf
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Load the role, running none of its tasks
      ansible.builtin.import_role:
        name: atimed
      when: false
    - name: Write atimed.conf, checked by atimed --check-config first
      ansible.builtin.template:
        src: $top_srcdir/contrib/ansible/roles/atimed/templates/atimed.conf.j2
        dest: "{{ out }}"
        mode: "0644"
        validate: $ATIMED --check-config --config %s
EOF
# render NAME VARS...: the play with those variables (files) into
# $T/NAME.conf; its output in $T/NAME.out, its exit status in RC.
render() {
        local name=$1 v=()
        shift
        for f in "$@"; do v+=(-e "@$f"); done
        ansible-playbook -i localhost, -e out="$T/$name.conf" "${v[@]}" "$T/render.yml" >"$T/$name.out" 2>&1
        RC=$?
}

# The issue's path, one of 4,000 bytes, and odd ones. A byte that is not
# UTF-8 (0xff) is given as Ansible's facts carry it, the surrogate escape
# U+DCFF: JSON can hold it, YAML cannot.
ISSUE=/srv/www/a-rather-long-directory-name-for-width/served-static-content
LONG=/srv
while [ $((${#LONG} + 200)) -le 4000 ]; do LONG=$LONG/$(printf 'd%.0s' $(seq 199)); done
LONG=$LONG/$(printf 'e%.0s' $(seq $((4000 - ${#LONG} - 1))))
cat >"$T/vars.yml" <<EOF
atimed_needs_atime:
  $ISSUE: relatime
  # A YAML key of more than 1024 characters is written explicitly.
  ? $LONG
  : strict
  "/srv/odd\\tx]#;= y\\nz ": relatime
  /srv/mail: relatime
atimed_exclude_paths: [/run/host]
atimed_config_extra:
  sampler: {interval: 30s}
EOF
cat >"$T/vars.json" <<'EOF'
{"atimed_ignore": ["/srv/mail", "/srv/caf\u00e9 ", "/srv/we\\ird\udcff"]}
EOF
render good "$T/vars.yml" "$T/vars.json"
is "the template renders, and atimed --check-config accepts it: exit 0" "$RC" "0"
[ "$RC" -eq 0 ] || cut -c1-200 "$T/good.out" | tail -20 | sed 's/^/#   /'
conf=$(cat "$T/good.conf")
like "the issue's path, whole" "$conf" "^\\[mount:$ISSUE\\]\$"
is "the 4,000-byte path, whole, on one line" "$(grep -cxF "[mount:$LONG]" "$T/good.conf")" "1"
like "tab, ']', '#', ';', newline and the blank at the end, escaped" "$conf" \
        '^\[mount:/srv/odd\\x09x\\x5d\\x23\\x3b= y\\x0az\\x20\]$'
like "a backslash doubled, the byte that is not UTF-8 as \\xff" "$conf" '^\[mount:/srv/we\\\\ird\\xff\]$'
is "a mount both declared and ignored: one section with both" "$(grep -A2 -xF '[mount:/srv/mail]' "$T/good.conf")" \
        "$(printf '[mount:/srv/mail]\nneeds_atime = relatime\nignore = yes')"
like "an ignored one: UTF-8 as it is" "$conf" '^\[mount:/srv/caf'$'\xc3\xa9''\\x20\]$'

# What atimed reads from it: the same bytes, printed back the same way.
"$ATIMED" --check-config --config "$T/good.conf" >"$T/printed" 2>"$T/err"
is "atimed reads it without a word" "$?|$(cat "$T/err")" "0|"
is "and prints its mount sections as the template wrote them" \
        "$(sed -n '/^\[mount:/,$p' "$T/printed" | grep -v '^$')" "$(sed -n '/^\[mount:/,$p' "$T/good.conf" | grep -v '^$')"
# The escapes stand for the path's bytes: bash's printf reads \xHH alike.
want=$(printf '/srv/odd\tx]#;= y\nz ' | od -An -tx1 | tr -d ' \n')
got=$(printf '%b' "$(sed -n 's/^\[mount:\(\/srv\/odd.*\)\]$/\1/p' "$T/printed")" | od -An -tx1 | tr -d ' \n')
is "the odd path's escapes stand for its bytes" "$got" "$want"

# --- What atimed refuses, the role refuses: the task fails, no file.
cat >"$T/bad.yml" <<EOF
atimed_needs_atime:
  /srv/www/: relatime
EOF
render bad "$T/bad.yml"
is "a mount point with a '/' at the end: the task fails" "$RC" "2"
like "with atimed's own words" "$(cat "$T/bad.out")" "a mount point is written as the kernel names it"
is "and writes no file" "$(test -e "$T/bad.conf" && echo written)" ""
cat >"$T/rel.yml" <<EOF
atimed_ignore: [srv/www]
EOF
render rel "$T/rel.yml"
is "a relative path: the task fails" "$RC" "2"
like "saying so" "$(cat "$T/rel.out")" "atimed_conf_path: 'srv/www' is not an absolute path"
done_testing
