#!/bin/bash
# varlink-idl.sh: generic Varlink tools can load the interfaces the daemon
# serves. Each description is asked of the running daemon over its socket,
# as such a tool asks it (org.varlink.service.GetInfo, then
# GetInterfaceDescription), and fed to an independent Varlink IDL parser:
# varlink-go's interface generator (Debian's varlink-go package).
. "$top_srcdir/tests/integration/lib.sh"
GEN=varlink-go-interface-generator
command -v $GEN >/dev/null || skip_all "needs $GEN (apt-get install varlink-go) to parse the Varlink interfaces"
enter_namespace

# Nothing to track: only the socket is under test.
write_config --bare '[mounts] exclude_paths = /'
start_daemon

raw() { printf '%s\0' "$1" | "$RAWSOCK" -n 1 "$T/sock"; }

# parse NAME FILE: runs the generator on FILE in a directory of its own
# (it writes NAME's Go bindings next to it); its output in $T/gen.out.
parse() {
        rm -rf "$T/gen" && mkdir "$T/gen" && cp "$2" "$T/gen/$1.varlink" &&
                (cd "$T/gen" && $GEN "$1.varlink") >"$T/gen.out" 2>&1
}

interfaces=$(raw '{"method":"org.varlink.service.GetInfo"}' | jq -r '.parameters.interfaces[]')
is "GetInfo lists both interfaces" "$(echo $interfaces)" "org.varlink.service io.atimed"
for i in $interfaces; do
        raw "{\"method\":\"org.varlink.service.GetInterfaceDescription\",\"parameters\":{\"interface\":\"$i\"}}" |
                jq -j .parameters.description >"$T/$i.varlink"
        is "$i: the description served declares that interface" "$(grep -v -e '^#' -e '^$' "$T/$i.varlink" | head -n 1)" "interface $i"
        is "$i: the description served is docs/$i.varlink" "$(cat "$T/$i.varlink")" "$(cat "$top_srcdir/docs/$i.varlink")"
        if parse "$i" "$T/$i.varlink"; then
                tap_result 0 "$i: $GEN parses the description served"
        else
                tap_result 1 "$i: $GEN parses the description served"
                sed 's/^/#   /' "$T/gen.out" | head -10
        fi
done

# The parser does refuse what Varlink forbids: a type and a method of the
# same name (io.atimed's type Probe before it became ProbeResult).
printf 'interface io.example\n\ntype Probe (ok: bool)\n\nmethod Probe() -> (probe: Probe)\n' >"$T/bad.varlink"
parse io.example "$T/bad.varlink"
isnt_zero=$?
is "the parser refuses a type and a method of the same name" "$([ $isnt_zero -ne 0 ] && echo refused)" "refused"
like "saying so" "$(cat "$T/gen.out")" "Probe. already defined"

done_testing
