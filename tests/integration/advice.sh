#!/bin/bash
# advice.sh: from measurement to a safe change, end to end. A strictatime
# mount of a few hundred inodes under a read workload is advised relatime
# with the evidence (relatime ends the updates as noatime would, and keeps
# atime for what reads it: test-advisor has the rule's edge); mounts
# with atime consumers (a mail spool, a tmpfiles.d rule) never are; the
# advice is applied with atimectl remount (status shows it, the probe
# verifies it) and written to an fstab with atimectl fstab --write; a change
# of advice is announced on stderr and to a journald of our own.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
M=$T/mnt
mkdir -p $M/busy $M/mail $M/tmpclean $M/quiet $T/tmpfiles.d
make_ext4 busy 32 && make_ext4 clean 32 || bail mkfs
mount -o loop,strictatime $T/busy.img $M/busy &&
mount -t tmpfs -o noatime tmpfs $M/mail &&
mount -o loop,strictatime $T/clean.img $M/tmpclean &&
mount -t tmpfs -o relatime tmpfs $M/quiet || bail mount
make_tree $M/busy 2 100
echo "From alice@example.com" >$M/mail/alice
echo "D $M/tmpclean/cache 0755 root root 10d" >$T/tmpfiles.d/cache.conf

# A journald of our own: sd_journal_send() writes to this socket.
mount -t tmpfs tmpfs /run || bail "tmpfs on /run"
mkdir -p /run/systemd/journal
"$NOTIFY_RECV" /run/systemd/journal/socket >>$T/journal.out &
DAEMON_PIDS="$DAEMON_PIDS $!"

write_config '[mounts] exclude_paths += [/]run' '[store] rings = 1s:10min, 10s:1h' \
        "[consumers] tmpfiles_dirs = $T/tmpfiles.d" "[consumers] mail_spools = $M/mail" \
        "[consumers] tmpreaper_conf = $T/none" "[consumers] tmpwatch_cron = $T/none" \
        "[consumers] popcon_conf = $T/none" '[advisor] noatime_threshold = 100'
start_daemon
rec() { ctl --json recommend "$1" | jq -r ".recommendations[0] | $2"; }

check "the busy mount gets measured" wait_until 20 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status $M/busy | jq '.mounts[0].activity != null')\" = true ]"
list_tree $M/busy 2 100 >$T/busy.list
"$top_builddir/tests/helpers/readload" 100 6 <$T/busy.list >/dev/null
r=$(ctl --json recommend $M/busy)
diag "busy: $(echo "$r" | jq -c '.recommendations[0] | [.action, .reasons[0], .saving]')"
is "busy strictatime on few inodes, nothing reads atime: relatime" "$(rec $M/busy .action)" "relatime"
like "with the evidence in plain words" "$(rec $M/busy '.reasons[0]')" \
        "^strictatime: [0-9,]+ atime updates/min; relatime leaves at most [0-9.]+/min \\(each of [0-9,]+ inodes once a day\\), under the threshold for noatime \\(100/min\\), and keeps atime for what reads it$"
check "and the expected saving (writes, CPU, KiB/s)" sh -c "echo '$r' | jq -e '.recommendations[0].saving | .atime_writes_per_min > 100 and .cpu_us_per_s > 0 and .write_kib_per_s > 0' >/dev/null"
is "confidence is low after seconds of measurement" "$(rec $M/busy .confidence)" "low"
is "the saving is counted in updates, its basis the measurement" \
        "$(rec $M/busy '[(.saving.atime_updates_per_min > 100), .basis] | @tsv')" "$(printf 'true\tmeasurement')"

is "a noatime mail spool: relatime, never noatime" "$(rec $M/mail '.action + " " + .recommended.atime')" "relatime relatime"
like "because noatime breaks mail" "$(rec $M/mail '.reasons[0]')" "^noatime breaks it: mbox files in $M/mail"
is "the consumer is named" "$(rec $M/mail '.consumers[0] | .kind + " " + .need')" "mail relatime"
is "advice resting on a consumer says so" "$(rec $M/mail '.basis + " " + .confidence')" "consumers high"
is "a tmpfiles.d age rule on a strict mount: relatime" "$(rec $M/tmpclean '.recommended.atime')" "relatime"
like "citing the rule" "$(rec $M/tmpclean '.consumers[0].source')" "^$T/tmpfiles.d/cache.conf:1$"
is "a quiet relatime mount: keep" "$(rec $M/quiet .action)" "keep"
like "saying why" "$(rec $M/quiet '.reasons[0]')" "not worth noatime \\(threshold 100/min\\)"
text=$(ctl recommend)
like "atimectl recommend prints each mount's advice" "$text" "^$M/busy \\(ext4\\): strictatime -> relatime  \\[confidence low"
like "with its reasons" "$text" "    - strictatime: [0-9,]+ atime updates/min"
like "and the saving" "$text" "    saves about [0-9]+ atime updates/min"

# --- fstab: the change as a diff; only the options field changes.
cat >$T/fstab <<FSTAB
# <file system>  <mount point>  <type>  <options>  <dump>  <pass>
LABEL=busy	$M/busy	ext4	defaults,strictatime	0	2	# the busy one
UUID=1234-5678  $M/tmpclean  ext4  rw,strictatime,nodiratime  0  2
tmpfs  $M/mail  tmpfs  noatime,size=10m  0  0
/dev/sdz9 none swap sw 0 0
FSTAB
chmod 0640 $T/fstab
chown 1234:4321 $T/fstab
cp $T/fstab $T/fstab.orig
out=$(ctl fstab --file $T/fstab)
like "the diff changes the busy line to relatime, alignment and comment kept" "$out" \
        "^\\+LABEL=busy	$M/busy	ext4	defaults,relatime	0	2	# the busy one\$"
like "nodiratime stays with relatime" "$out" "^\\+UUID=1234-5678  $M/tmpclean  ext4  rw,relatime,nodiratime  0  2\$"
like "the mail spool line gets relatime" "$out" "^\\+tmpfs  $M/mail  tmpfs  relatime,size=10m  0  0\$"
is "nothing is written without --write" "$(cmp $T/fstab $T/fstab.orig && echo same)" "same"
like "a mount not in fstab is said so, with the equivalent commands" "$(ctl fstab --file $T/fstab --set $M/quiet=noatime 2>&1)" \
        "$M/quiet is not in $T/fstab. Now: atimectl remount '$M/quiet' noatime .*systemctl edit '.*quiet\.mount'"
# From noatime to relatime by the mount(8) line it gives: mount(8) adds the
# options to the mount's own, and the kernel keeps noatime beside relatime.
mkdir -p $M/back && mount -t tmpfs -o noatime tmpfs $M/back || bail "mount $M/back"
cmd=$(ctl fstab --file $T/fstab --set $M/back=relatime 2>&1 | sed -n 's/.*(or \(mount -o remount,[^ ]* [^)]*\)).*/\1/p')
is "noatime to relatime: the mount(8) line clears noatime first" "$cmd" "mount -o remount,atime,relatime '$M/back'"
eval "$cmd"
is "and run, it leaves the mount relatime" "$(findmnt -no VFS-OPTIONS $M/back)" "rw,relatime"
umount $M/back
# findmnt --verify is read as a program reads it: in the C locale, and by
# its exit status too. A findmnt of the test's own reports what the real
# one does but fails on the new file, as a later findmnt might on a problem
# worded in a way atimectl does not know.
mkdir -p $T/bin
cat >$T/bin/findmnt <<'SH'
#!/bin/sh
echo "LC_ALL=${LC_ALL:-unset}" >>"$FINDMNT_LOG"
/usr/bin/findmnt "$@"
case $(cat "$3") in *defaults,relatime*) exit 1 ;; esac
SH
chmod +x $T/bin/findmnt
PATH=$T/bin:$PATH FINDMNT_LOG=$T/findmnt.log LC_ALL=C.UTF-8 ctl fstab --file $T/fstab --write >$T/write.out 2>&1
is "findmnt failing on the new file only: nothing written, exit 1" "$?|$(cmp -s $T/fstab $T/fstab.orig && echo same)" "1|same"
like "and it says why" "$(cat $T/write.out)" "findmnt --verify fails on the new file \(exit status 1\), not on the old one"
is "findmnt ran twice, in the C locale" "$(sort -u $T/findmnt.log | tr '\n' ' ')" "LC_ALL=C "
ctl fstab --file $T/fstab --write >$T/write.out 2>&1
is "--write: exit 0" "$?" "0"
like "and says where the backup is" "$(cat $T/write.out)" "Wrote $T/fstab; the old one is $T/fstab.atimectl-[0-9]+"
is "mode kept" "$(stat -c %a $T/fstab)" "640"
is "owner kept" "$(stat -c %u:%g $T/fstab)" "1234:4321"
is "the backup is the old file" "$(cmp $T/fstab.atimectl-* $T/fstab.orig && echo same)" "same"
is "every other byte is the same" "$(diff <(sed -e 's/defaults,relatime/X/; s/rw,relatime,nodiratime/X/; s/relatime,size=10m/X/' $T/fstab) \
        <(sed -e 's/defaults,strictatime/X/; s/rw,strictatime,nodiratime/X/; s/noatime,size=10m/X/' $T/fstab.orig) && echo same)" "same"
like "the result parses (findmnt --verify)" "$(findmnt --verify --tab-file $T/fstab 2>&1)" "^0 parse errors"
like "a second run finds nothing to change" "$(ctl fstab --file $T/fstab)" "^Nothing to change in $T/fstab\\.$"
setpriv --reuid=65534 --regid=65534 --clear-groups "$ATIMECTL" --socket $T/sock fstab --file $T/fstab --set $M/busy=relatime --write >/dev/null 2>$T/nonroot
is "--write needs root" "$?" "1"

# --- remount: the advice applied to the live mount.
out=$(ctl remount $M/busy)
like "remount shows before and after" "$out" "$M/busy before: rw.*
$M/busy after:  rw,relatime"
like "and says fstab is needed to make it last" "$out" "atimectl fstab --set '$M/busy=relatime' --write"
check "status shows the new policy" wait_until 5 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json status $M/busy | jq -r '.mounts[0].atime')\" = relatime ]"
like "the probe verifies it" "$(ctl probe $M/busy)" "^$M/busy: relatime in force"
check "the advice is now to keep it (the strictatime history does not speak for relatime)" wait_until 5 sh -c "[ \"\$($ATIMECTL --socket $T/sock --json recommend $M/busy | jq -r '.recommendations[0].action')\" = keep ]"
check "the change of advice is logged" wait_until 5 grep -q "Recommendation for $M/busy changed from 'change to relatime' to 'keep relatime'" $T/atimed.log
check "and sent to the journal with its MESSAGE_ID" wait_until 5 sh -c "grep -q 'MESSAGE_ID=9a1f3c7e2b5d48e6a0c4f8d2e6b1a7c3' $T/journal.out && grep -q 'ATIMED_TARGET=$M/busy' $T/journal.out"
ctl remount $M/quiet lazytime >/dev/null
check "remount sets the superblock's lazytime (seen at the next rescan)" wait_until 5 sh -c "$ATIMECTL --socket $T/sock --json status $M/quiet | jq -e '.mounts[0].lazytime' >/dev/null"
is "a nonsense policy is a usage error" "$(ctl remount $M/quiet sometimes >/dev/null 2>&1; echo $?)" "2"

# --- fstab --set without a daemon: the guard cannot be asked, so only
# --force writes it (issue 43), saying what it did not check.
stop_daemon
cp $T/fstab.orig $T/fstab2
ctl fstab --file $T/fstab2 --set $M/tmpclean=noatime,lazytime --write >/dev/null 2>$T/err
is "--set without a daemon: refused" "$?" "1"
is "nothing written" "$(cmp $T/fstab.orig $T/fstab2 && echo same)" "same"
out=$(ctl fstab --file $T/fstab2 --set $M/tmpclean=noatime,lazytime --write --force 2>$T/err)
is "--set --force works without a daemon" "$?" "0"
like "saying the readers were not checked" "$(cat $T/err)" "going ahead with noatime on $M/tmpclean \\(--force\\) without checking"
like "noatime,lazytime, nodiratime dropped as redundant" "$(grep tmpclean $T/fstab2)" "  rw,noatime,lazytime  0  2\$"
done_testing
