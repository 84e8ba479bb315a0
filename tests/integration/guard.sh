#!/bin/bash
# guard.sh: atimectl remount and fstab --set honour the operator's word. A
# [mount:PATH] needs_atime in atimed.conf refuses a policy below it as a
# reader of atime found by the scan does, naming the file and line that
# declare it; --force overrides it, saying so. The daemon lists the
# declaration among the consumers of its advice (GetRecommendations), so
# every Varlink caller sees it, and a weaker reader found on the same mount
# does not hide it. The guard asks GetConsumers, which answers for any
# path: a mount excluded, ignored or not mounted keeps its readers, and a
# name of any bytes goes over the wire in the protocol's form. The guard
# fails closed (issue 43): without atimed, or with a server that resets,
# hangs, errs or talks nonsense, the change is refused and nothing
# changes; --force goes ahead, saying what it did not check.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
# Mounts whose names are no plain words: a backslash that reads as the
# protocol's own escape (sent raw, it would name $M/escA), and a byte
# that is not UTF-8.
ESC="$M/esc\\x41"
FF="$M/ff"$'\xff'
mkdir -p $M/said $M/both $M/free $M/skip $M/scan $M/ign $M/gone $M/adv "$ESC" "$FF" $T/tmpfiles.d
make_ext4 said 32 || bail mkfs
mount -o loop,relatime $T/said.img $M/said &&
mount -t tmpfs -o strictatime,size=8m tmpfs $M/both &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/free &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/skip &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/scan &&
mount -t tmpfs -o relatime,size=8m tmpfs $M/ign &&
mount -t tmpfs -o strictatime,size=8m tmpfs $M/adv &&
mount -t tmpfs -o relatime,size=8m tmpfs "$ESC" &&
mount -t tmpfs -o relatime,size=8m tmpfs "$FF" || bail mount
# A reader the scan finds on 'both': systemd-tmpfiles ages its cache, for
# which relatime is enough; the operator declares strict there. Others on
# 'scan' (a mount atimed does not track) and on the odd names.
{
        echo "D $M/both/cache 0755 root root 10d"
        echo "D $M/scan/cache 0755 root root 10d"
        echo "D $ESC/cache 0755 root root 10d"
        echo "D $FF/cache 0755 root root 10d"
} >$T/tmpfiles.d/cache.conf
# 'skip' and 'scan' are excluded, 'ign' ignored, 'gone' not mounted at all:
# the operator's word holds there all the same.
write_config "[mounts] exclude_paths += $HOST_EXCLUDE [/]${M#/}/skip [/]${M#/}/scan" \
        "[consumers] tmpfiles_dirs = $T/tmpfiles.d" \
        "[consumers] mail_spools = $T/none" "[consumers] tmpreaper_conf = $T/none" \
        "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none" \
        "[mount:$M/said] needs_atime = relatime" "[mount:$M/both] needs_atime = strict" \
        "[mount:$M/free] needs_atime = none" "[mount:$M/skip] needs_atime = relatime" \
        "[mount:$M/ign] needs_atime = relatime" "[mount:$M/ign] ignore = yes" \
        "[mount:$M/gone] needs_atime = strict" "[mount:$M/adv/dir] needs_atime = strict"
# The line of each declaration, as the file has it.
line_of() { awk -v s="[mount:$1]" '$0 == s { in_s = 1; next } /^\[/ { in_s = 0 } in_s && /^needs_atime/ { print NR }' $T/atimed.conf; }
SAID="$T/atimed.conf:$(line_of $M/said)"
BOTH="$T/atimed.conf:$(line_of $M/both)"
SKIP="$T/atimed.conf:$(line_of $M/skip)"
IGN="$T/atimed.conf:$(line_of $M/ign)"
GONE="$T/atimed.conf:$(line_of $M/gone)"
ADV="$T/atimed.conf:$(line_of $M/adv/dir)"
for d in "$SAID" "$BOTH" "$SKIP" "$IGN" "$GONE" "$ADV"; do
        [ "$d" != "$T/atimed.conf:" ] || bail "a needs_atime line is missing in $T/atimed.conf"
done
start_daemon
# The mount's options as the kernel has them (the top mount at that point).
opts() { findmnt -no VFS-OPTIONS --mountpoint "$1" | tail -n 1; }
# The raw reply of GetRecommendations for one mount, as any Varlink caller gets it.
recs() { ctl call io.atimed.GetRecommendations "{\"target\":\"$1\"}"; }

# --- 1. the daemon lists the declaration, with its file:line
check "the tmpfiles.d rule on 'both' is known" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock call io.atimed.GetRecommendations '{\"target\":\"$M/both\"}' | jq -e '.recommendations[0].consumers | any(.kind == \"tmpfiles\")' >/dev/null"
is "GetRecommendations: the declaration on 'said', as a consumer" \
        "$(recs $M/said | jq -c '.recommendations[0].consumers | map([.kind, .need, .path, .source])')" \
        "[[\"config\",\"relatime\",\"$M/said\",\"$SAID\"]]"
like "its why names the section and key" "$(recs $M/said | jq -r '.recommendations[0].consumers[0].why')" \
        "\\[mount:$M/said\\] needs_atime = relatime"
is "'both': the declaration first, then the reader found" \
        "$(recs $M/both | jq -c '.recommendations[0].consumers | map([.kind, .need, .source])')" \
        "[[\"config\",\"strict\",\"$BOTH\"],[\"tmpfiles\",\"relatime\",\"$T/tmpfiles.d/cache.conf:1\"]]"
is "needs_atime = none declares nothing" "$(recs $M/free | jq '.recommendations[0].consumers | length')" "0"
check "the reply is the documented GetRecommendations" sh -c \
        "$ATIMECTL --socket $T/sock call io.atimed.GetRecommendations '{}' | $top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink GetRecommendations"
is "the metrics count it with the reader found" \
        "$(ctl metrics | awk -v m="mountpoint=\"$M/both\"" 'index($0, "atimed_atime_consumers{") == 1 && index($0, m) { print $2 }')" "2"
is "the advice keeps strictatime on 'both', by the declaration" "$(ctl --json recommend $M/both | jq -r '.recommendations[0].recommended.atime')" \
        "strictatime"

# --- 2. remount below the declaration: refused, nothing changed
before=$(opts $M/said)
like "'said' is relatime to begin with" "$before" "(^|,)relatime(,|\$)"
ctl remount $M/said noatime >$T/out 2>$T/err
is "remount noatime under needs_atime = relatime: exit 1" "$?" "1"
like "naming the declaration's file:line" "$(cat $T/err)" \
        "^atimectl: noatime on $M/said breaks a reader of atime that needs relatime: .*needs_atime = relatime\\) \\[$SAID\\]\$"
like "and --force" "$(cat $T/err)" "refused; nothing changed. --force sets noatime anyway."
is "the mount's options in mountinfo are unchanged" "$(opts $M/said)" "$before"
is "nothing on stdout" "$(cat $T/out)" ""
ctl remount $M/said/lost+found noatime >/dev/null 2>&1
is "a path on it: the mount holding it, refused too" "$?" "1"
is "relatime is allowed" "$(ctl remount $M/said relatime --json 2>$T/err | jq -r .target)" "$M/said"
is "without a word" "$(cat $T/err)" ""
is "strictatime too" "$(ctl remount $M/said strictatime --json | jq -c '[.changed, (.after.vfs_options | test("noatime"))]')" \
        "[true,false]"
out=$(ctl remount $M/said noatime --force 2>$T/err)
is "--force: done" "$?" "0"
like "the change shown" "$out" "$M/said after:  rw,noatime"
like "saying what it overrode" "$(cat $T/err)" "breaks a reader of atime that needs relatime: .* \\[$SAID\\]"
like "and that it goes ahead" "$(cat $T/err)" "^atimectl: going ahead with noatime on $M/said \\(--force\\)\\.\$"
like "mountinfo has noatime" "$(opts $M/said)" "(^|,)noatime(,|\$)"
ctl remount $M/said relatime >/dev/null || bail "remount said relatime"

# --- 3. a declaration stronger than the reader found: relatime refused too
before=$(opts $M/both)
ctl remount $M/both relatime >/dev/null 2>$T/err
is "relatime under needs_atime = strict (a relatime reader found too): exit 1" "$?" "1"
like "naming the declaration" "$(cat $T/err)" "relatime on $M/both breaks a reader of atime that needs strictatime: .* \\[$BOTH\\]"
is "and not the reader relatime satisfies" "$(grep -c cache.conf $T/err)" "0"
is "mountinfo unchanged" "$(opts $M/both)" "$before"
ctl remount $M/both noatime >/dev/null 2>$T/err
is "noatime there: exit 1" "$?" "1"
is "both named, the declaration first" "$(grep -o '\[[^]]*\]$' $T/err | tr '\n' ' ')" "[$BOTH] [$T/tmpfiles.d/cache.conf:1] "
is "a mount declared 'none' is not guarded" "$(ctl remount $M/free noatime --json 2>$T/err | jq -r .changed)" "true"
is "and nothing is said" "$(cat $T/err)" ""

# --- 4. the operator's word holds whatever atimed makes of the mount
check "the reader on 'scan' (excluded) is found" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock call io.atimed.GetConsumers '{\"target\":\"$M/scan\"}' | jq -e '.consumers | any(.kind == \"tmpfiles\")' >/dev/null"
is "'skip' is excluded: GetStatus has no mount there" "$(ctl --json status | jq --arg t $M/skip '[.mounts[] | select(.target == $t)] | length')" "0"
is "GetConsumers: the declaration on 'skip', as a consumer" \
        "$(ctl call io.atimed.GetConsumers "{\"target\":\"$M/skip\"}" | jq -c '.consumers | map([.kind, .need, .path, .source])')" \
        "[[\"config\",\"relatime\",\"$M/skip\",\"$SKIP\"]]"
check "the reply is the documented GetConsumers" sh -c \
        "$ATIMECTL --socket $T/sock call io.atimed.GetConsumers '{\"target\":\"$M/skip\"}' | $top_builddir/tests/helpers/schema-check $top_srcdir/docs/io.atimed.varlink GetConsumers"
before=$(opts $M/skip)
ctl remount $M/skip noatime >$T/out 2>$T/err
is "a mount excluded by exclude_paths, needs_atime = relatime declared: remount noatime, exit 1" "$?" "1"
like "naming the declaration's file:line" "$(cat $T/err)" \
        "^atimectl: noatime on $M/skip breaks a reader of atime that needs relatime: .* \\[$SKIP\\]\$"
is "the mount's options are unchanged" "$(opts $M/skip)" "$before"
is "relatime there goes ahead, without a word" "$(ctl remount $M/skip relatime --json 2>$T/err | jq -r .target)" "$M/skip"
is "(nothing said)" "$(cat $T/err)" ""
ctl remount $M/scan noatime >/dev/null 2>$T/err
is "an excluded mount with a reader the scan found: exit 1" "$?" "1"
like "naming the reader" "$(cat $T/err)" "noatime on $M/scan breaks a reader of atime that needs relatime: .* \\[$T/tmpfiles.d/cache.conf:2\\]"
ctl remount $M/ign noatime >/dev/null 2>$T/err
is "a mount with ignore = yes and needs_atime = relatime: exit 1" "$?" "1"
like "naming the declaration" "$(cat $T/err)" "\\[$IGN\\]"
before=$(opts "$ESC")
ctl remount "$ESC" noatime >/dev/null 2>$T/err
is "a mount point with a backslash in its name: the reader found there refuses noatime" "$?" "1"
like "named, with the mount point in the protocol's form" "$(cat $T/err)" \
        "^atimectl: noatime on $M/esc\\\\\\\\x41 breaks a reader of atime that needs relatime: .* \\[$T/tmpfiles.d/cache.conf:3\\]\$"
is "its options are unchanged" "$(opts "$ESC")" "$before"
before=$(opts "$FF")
ctl remount "$FF" noatime >/dev/null 2>$T/err
is "a mount point with a byte that is not UTF-8: noatime refused" "$?" "1"
like "naming the reader" "$(cat $T/err)" "^atimectl: noatime on $M/ff\\\\xff breaks .* \\[$T/tmpfiles.d/cache.conf:4\\]\$"
is "its options are unchanged" "$(opts "$FF")" "$before"

# --- 4b. advice is guarded too: 'adv' is strictatime, and advised relatime
# by rule; the advice weighs only a declaration at the mount point itself,
# the guard one at a directory on it too ([mount:PATH/dir]).
check "'adv' is advised relatime" wait_until 20 sh -c \
        "$ATIMECTL --socket $T/sock --json recommend $M/adv | jq -e '.recommendations[0].recommended.atime == \"relatime\"'"
before=$(opts $M/adv)
ctl remount $M/adv >/dev/null 2>$T/err
is "remount as advised, below a declaration on the mount: exit 1" "$?" "1"
like "naming it" "$(cat $T/err)" "^atimectl: relatime on $M/adv breaks a reader of atime that needs strictatime: .* \\[$ADV\\]\$"
is "the mount's options are unchanged" "$(opts $M/adv)" "$before"
printf 'tmpfs %s tmpfs strictatime,size=8m 0 0\n' $M/adv >$T/fstab-adv
cp $T/fstab-adv $T/fstab-adv.orig
ctl fstab --file $T/fstab-adv --write >/dev/null 2>$T/err
is "fstab --write of that advice: exit 1" "$?" "1"
like "naming it" "$(cat $T/err)" "\\[$ADV\\]"
is "nothing written" "$(cmp $T/fstab-adv $T/fstab-adv.orig && echo same)" "same"
ctl fstab --file $T/fstab-adv >$T/out 2>$T/err
is "the diff alone, written nowhere, is shown as before" "$?|$(grep -c "^+tmpfs $M/adv tmpfs relatime" $T/out)" "0|1"

# --- 5. fstab --set on a scratch fstab: the same guard
DEV=$(findmnt -no SOURCE $M/said)
printf '%s %s ext4 relatime 0 2\ntmpfs %s tmpfs strictatime 0 0\n' $DEV $M/said $M/both >$T/fstab
cp $T/fstab $T/fstab.orig
ctl fstab --file $T/fstab --set $M/said=noatime --write >$T/out 2>$T/err
is "fstab --set noatime under needs_atime = relatime: exit 1" "$?" "1"
like "naming the declaration's file:line" "$(cat $T/err)" "needs relatime: .* \\[$SAID\\]"
is "nothing written" "$(cmp $T/fstab $T/fstab.orig && echo same)" "same"
ctl fstab --file $T/fstab --set $M/both=relatime >/dev/null 2>$T/err
is "fstab --set relatime under needs_atime = strict, even without --write: exit 1" "$?" "1"
like "naming it" "$(cat $T/err)" "\\[$BOTH\\]"
ctl fstab --file $T/fstab --set $M/said=relatime,lazytime --write >/dev/null 2>$T/err
is "fstab --set relatime,lazytime where relatime is declared: allowed" "$?" "0"
like "and written" "$(cat $T/fstab)" "^$DEV $M/said ext4 relatime,lazytime 0 2\$"
ctl fstab --file $T/fstab --set $M/said=noatime --write --force >/dev/null 2>$T/err
is "fstab --set --force: exit 0" "$?" "0"
like "written" "$(cat $T/fstab)" "^$DEV $M/said ext4 noatime,lazytime 0 2\$"
like "saying so" "$(cat $T/err)" "going ahead with noatime on $M/said \\(--force\\)"

# --- 5b. fstab --set where nothing is mounted: the declaration holds
printf 'tmpfs %s tmpfs defaults 0 0\n' $M/gone >$T/fstab-gone
cp $T/fstab-gone $T/fstab-gone.orig
ctl fstab --file $T/fstab-gone --set $M/gone=relatime --write >/dev/null 2>$T/err
is "fstab --set relatime for a mount point not mounted, needs_atime = strict declared: exit 1" "$?" "1"
like "naming the declaration" "$(cat $T/err)" "relatime on $M/gone breaks a reader of atime that needs strictatime: .* \\[$GONE\\]"
is "nothing written" "$(cmp $T/fstab-gone $T/fstab-gone.orig && echo same)" "same"

# --- 6. a reload that drops the declaration drops the refusal
write_config "[mounts] exclude_paths += $HOST_EXCLUDE [/]${M#/}/skip" "[consumers] tmpfiles_dirs = $T/tmpfiles.d" \
        "[consumers] mail_spools = $T/none" "[consumers] tmpreaper_conf = $T/none" \
        "[consumers] tmpwatch_cron = $T/none" "[consumers] popcon_conf = $T/none"
ctl reload >/dev/null || bail "reload"
is "after a reload without it: no consumer on 'said'" "$(recs $M/said | jq '.recommendations[0].consumers | length')" "0"
is "and noatime goes ahead" "$(ctl remount $M/said noatime --json 2>$T/err | jq -r .changed)" "true"
is "without a word" "$(cat $T/err)" ""

# --- 7. the guard fails closed: without atimed nothing changes
stop_daemon
before=$(opts $M/said)
ctl remount $M/said relatime >$T/out 2>$T/err
is "atimed stopped: remount relatime refused, exit 1" "$?" "1"
is "saying why, and what --force does" "$(cat $T/err)" \
        "atimectl: atimed is not running (nothing listens on $T/sock).
atimectl: who reads atime on $M/said cannot be checked, so relatime is refused; nothing changed. --force sets it without that check."
is "the mount's options are unchanged" "$(opts $M/said)" "$before"
cp $T/fstab $T/fstab.before
ctl fstab --file $T/fstab --set $M/said=relatime --write >/dev/null 2>$T/err
is "fstab --set --write refused too" "$?" "1"
is "nothing written" "$(cmp $T/fstab $T/fstab.before && echo same)" "same"
ctl fstab --file $T/fstab --set $M/said=relatime >/dev/null 2>$T/err
is "and fstab --set without --write" "$?" "1"
is "strictatime breaks no reader: it needs no check" "$(ctl remount $M/said strictatime --json 2>$T/err | jq -r .changed)" "true"
is "(nothing said)" "$(cat $T/err)" ""
out=$(ctl remount $M/said noatime --force 2>$T/err)
is "--force: done" "$?" "0"
like "the change shown" "$out" "$M/said after:  rw,noatime"
like "saying what was not checked" "$(cat $T/err)" \
        "^atimectl: going ahead with noatime on $M/said \\(--force\\) without checking who reads atime there\\.\$"
ctl remount $M/said relatime --force >/dev/null 2>&1 || bail "remount said relatime"

# --- 8. a server that cannot answer the guard: refused, whatever went wrong
# (a root server, so that only its answers are under test). Each case
# answers GetRecommendations the same way, as an older atimectl asked it.
FAKE=$top_builddir/tests/helpers/fakeserver
fake_case() { # NAME REPLY (a reply line of fakeserver's table)
        printf 'io.atimed.GetConsumers %s\nio.atimed.GetRecommendations %s\n' "$2" "$2" >$T/fake-$1.table
        "$FAKE" $T/fake.sock $T/fake-$1.table >>$T/fake.log 2>&1 &
        FAKE_PID=$!
        BG_PIDS="$BG_PIDS $FAKE_PID"
        wait_until 5 test -S $T/fake.sock || bail "fakeserver $1"
        before=$(opts $M/said)
        "$ATIMECTL" --socket $T/fake.sock remount $M/said noatime >/dev/null 2>$T/err
        is "$1: remount noatime refused, exit 1" "$?" "1"
        like "$1: saying why" "$(head -n 1 $T/err)" "$3"
        like "$1: and that nothing changed" "$(tail -n 1 $T/err)" \
                "^atimectl: who reads atime on $M/said cannot be checked, so noatime is refused; nothing changed"
        is "$1: the mount's options are unchanged" "$(opts $M/said)" "$before"
        kill $FAKE_PID
        wait $FAKE_PID 2>/dev/null
        rm -f $T/fake.sock
}
fake_case reset "@close" "^atimectl: atimed closed the connection without answering\\.\$"
fake_case garbage "this is no JSON" "^atimectl: malformed reply from atimed to io\\.atimed\\.(GetConsumers|GetRecommendations)\\.\$"
fake_case error '{"error":"io.atimed.InternalError","parameters":{"reason":"out of memory"}}' \
        "^atimectl: io\\.atimed\\.InternalError reason=out of memory\$"
fake_case unknown-need "{\"parameters\":{\"schema_version\":2,\"target\":\"$M/said\",\"consumers\":[{\"kind\":\"config\",\"need\":\"weekly\",\"path\":\"$M/said\",\"why\":\"x\",\"source\":\"y\"}],\"recommendations\":[]}}" \
        "^atimectl: malformed reply from atimed to io\\.atimed\\.(GetConsumers|GetRecommendations)\\.\$"
fake_case other-target "{\"parameters\":{\"schema_version\":2,\"target\":\"/elsewhere\",\"consumers\":[],\"recommendations\":[]}}" \
        "^atimectl: malformed reply from atimed to io\\.atimed\\.(GetConsumers|GetRecommendations)\\.\$"
printf 'io.atimed.GetStatus {"parameters":{"schema_version":2,"mounts":[]}}\n' >$T/fake-old.table
"$FAKE" $T/fake.sock $T/fake-old.table >>$T/fake.log 2>&1 &
FAKE_PID=$!
BG_PIDS="$BG_PIDS $FAKE_PID"
wait_until 5 test -S $T/fake.sock || bail "fakeserver old"
"$ATIMECTL" --socket $T/fake.sock remount $M/said noatime >/dev/null 2>$T/err
is "an atimed without GetConsumers: refused, exit 1" "$?" "1"
like "saying so" "$(head -n 1 $T/err)" "^atimectl: atimed does not answer io\\.atimed\\.GetConsumers: it is older than this atimectl\\.\$"
kill $FAKE_PID
wait $FAKE_PID 2>/dev/null
rm -f $T/fake.sock
# A server that never answers: atimectl gives up after its 30 s.
fake_case hang "@hang" "^atimectl: atimed did not answer within 30s\\.\$"
done_testing
