#!/bin/bash
# hardlinks.sh: hard links do not multiply the figure. Two strictatime ext4
# loop mounts hold the same tree of 500 files and a file 'f', and see the
# same paced reads (f 10 times a second, the tree's first 60 files round
# robin at 20 a second). On 'links', user nobody has given f 499 more
# names, and root has made a 'cp -al' copy of the tree (a backup of hard
# links): three times the names of 'plain'. The kernel counts every atime
# update of each device (ext4:ext4_mark_inode_dirty, a tracefs instance per
# device, entries + overrun: an exact count); two daemons measure, one
# sampling everything, one a sample of 300 names. Each figure must be the
# kernel's, and 'links' the same as 'plain'.
. "$top_srcdir/tests/integration/lib.sh"
enter_namespace
READLOAD=$top_builddir/tests/helpers/readload
M=$T/mnt
IV=10
command -v mkfs.ext4 >/dev/null || skip_all "needs mkfs.ext4"
command -v setpriv >/dev/null || skip_all "needs setpriv"
judge_init ext4


make_tree $T/src/tree 10 50
echo "the file with many names" >$T/src/f
for c in plain links; do
        truncate -s 64M $T/$c.img && mkfs.ext4 -q -F -N 4000 -d $T/src $T/$c.img || bail "mkfs $c"
        mkdir -p $M/$c
        mount -o loop,strictatime $T/$c.img $M/$c || bail "mount $c"
done
chmod 0755 $T $M
mkdir -m 1777 $M/links/u
as_nobody sh -c "cp $M/links/f $M/links/u/f && for i in \$(seq 1 499); do ln $M/links/u/f $M/links/u/l\$i || exit 1; done" ||
        bail "nobody could not make 499 hard links"
cp -al $M/links/tree $M/links/backup || bail "cp -al"
is "f on 'links' has 500 names" "$(stat -c %h $M/links/u/f)" "500"
sync

# The same reads on both: f through one of its names, the tree's first 60.
echo $M/plain/f >$T/plain-f.list
echo $M/links/u/l77 >$T/links-f.list
for c in plain links; do list_tree $M/$c/tree 10 50 | head -60 >$T/$c-tree.list; done

judged_config $IV 20000 >$T/atimed.conf
judged_config $IV 300 >$T/b.conf
start_daemon
start_second_daemon $T/b.conf
check "both daemons have probed both mounts" wait_until 60 both_probed 2

for c in plain links; do
        "$READLOAD" 10 3600 <$T/$c-f.list >/dev/null &
        BG_PIDS="$BG_PIDS $!"
        "$READLOAD" 20 3600 <$T/$c-tree.list >/dev/null &
        BG_PIDS="$BG_PIDS $!"
done

# The judge: a count per device.
for c in plain links; do judge_new $c ext4 "$(judge_dev $M/$c)"; done
sleep 2 # not a wait: the readers get under way before the trace starts
ta=$(date +%s.%N)
judge_on plain links

# "daemon case at interval_s updates lo hi population" of every interval
# published, polled twice a second.
poll() { poll_activity $1 $2 $M/ atime_updates_per_min updates_ci95 population >>$T/polled; } # NAME SOCKET
poll a $T/sock &
BG_PIDS="$BG_PIDS $!"
poll b $T/sock-b &
BG_PIDS="$BG_PIDS $!"
# Intervals wholly inside the traced window, per daemon and case.
inside() { # DAEMON CASE
        sort -u $T/polled | awk -v d=$1 -v c=$2 -v ta=$ta '$1 == d && $2 == c && $3 != "null" && $3 - $4 >= ta' |
                awk '{ print $3 }' | sort -u | wc -l
}
enough() {
        local d c
        for d in a b; do for c in plain links; do [ "$(inside $d $c)" -ge 3 ] || return 1; done; done
}
diag "reading; waiting for three whole ${IV} s intervals of each daemon (up to 3 min)"
wait_until 180 enough
tb=$(date +%s.%N)
kp=$(judge_count plain)
kl=$(judge_count links)
judge_off plain links
rate() { awk -v k=$1 -v a=$ta -v b=$tb 'BEGIN { printf "%.0f", k * 60 / (b - a) }'; }
Kp=$(rate $kp)
Kl=$(rate $kl)
diag "kernel: plain $kp updates in $(awk -v a=$ta -v b=$tb 'BEGIN { printf "%.0f", b - a }') s = $Kp/min, links $kl = $Kl/min"

# mean DAEMON CASE: "updates lo hi population" averaged over the whole
# intervals inside the window (their last report each).
mean() {
        sort -u $T/polled | awk -v d=$1 -v c=$2 -v ta=$ta -v tb=$tb '$1 == d && $2 == c && $3 != "null" && $3 - $4 >= ta && $3 <= tb { last[$3] = $0 }
                END { for (k in last) { split(last[k], p, " "); n++; u += p[5]; lo += p[6]; hi += p[7]; pop = p[8]
                        if (p[6] > K || p[7] < K) out++ }
                      if (n) printf "%.0f %.0f %.0f %d %d %d\n", u / n, lo / n, hi / n, pop, n, out }' K=$3
}
ma_p=$(mean a plain $Kp); ma_l=$(mean a links $Kl); mb_p=$(mean b plain $Kp); mb_l=$(mean b links $Kl)
diag "figures/min (mean, mean ci95 lo hi, population, intervals, intervals whose ci95 missed the kernel):"
diag "  whole sample:  plain $ma_p | links $ma_l"
diag "  300 sampled:   plain $mb_p | links $mb_l"
within() { # EST KERNEL FRACTION
        awk -v e="$1" -v k="$2" -v f="$3" 'BEGIN { d = e - k; if (d < 0) d = -d; exit !(k > 100 && d <= f * k) }'
}
# Against the kernel, a factor of two: without each inode counted once,
# 'links' read hundreds of times the kernel's. (The figures here are now
# 0.98-1.31 of the kernel's; before the mean age settled regular readers,
# f's figure alone strayed by 65% from run to run, and 'links' against
# 'plain' at 30% failed about one run in five.)
factor2() { # EST KERNEL
        awk -v e="$1" -v k="$2" 'BEGIN { exit !(k > 100 && e >= k / 2 && e <= 2 * k) }'
}
check "the kernel saw the same reads on both (plain $Kp/min, links $Kl/min, within 10%)" within "$Kl" "$Kp" 0.1
check "whole sample, plain: ${ma_p%% *}/min, within a factor 2 of the kernel's $Kp" factor2 "${ma_p%% *}" "$Kp"
check "whole sample, links: ${ma_l%% *}/min, within a factor 2 of the kernel's $Kl" factor2 "${ma_l%% *}" "$Kl"
check "whole sample: links ${ma_l%% *}/min as plain ${ma_p%% *}/min, within 30%" within "${ma_l%% *}" "${ma_p%% *}" 0.3
set -- $ma_l
pop_plain=$(echo "$ma_p" | cut -d' ' -f4)
# links holds plain's inodes, u, u/f (500 names: one inode) and the
# backup's 11 directories (its 500 files are the tree's).
check "whole sample, links: population $4 counts each inode once (plain's $pop_plain + 13)" \
        test "$4" -eq $((pop_plain + 13))
check "300 sampled, plain: ${mb_p%% *}/min, within a factor 2 of the kernel's $Kp" factor2 "${mb_p%% *}" "$Kp"
check "300 sampled, links: ${mb_l%% *}/min, within a factor 2 of the kernel's $Kl" factor2 "${mb_l%% *}" "$Kl"
set -- $mb_l
check "300 sampled, links: the mean 95% interval $2-$3 holds the kernel's $Kl" awk -v lo=$2 -v hi=$3 -v k=$Kl \
        'BEGIN { exit !(lo <= k && k <= hi) }'
done_testing
