#!/bin/bash
# accuracy: the sampler and estimator (daemon/sampler.c, daemon/estimate.c,
# linked as the daemon links them) against known workloads: 20,000 files on
# a strictatime tmpfs; each trial gives a known random fraction of them a
# new atime and compares the estimate with the truth. Error and interval
# coverage per fraction (0.1% to 50%) and sample size (250 to 4,000): the
# data behind the default [sampler] sample_size.
#
#   sudo make bench BENCH=accuracy   (NFILES=20000 TRIALS=400 REWALK=20 SEED=1)
. "$top_srcdir/bench/lib.sh"
bench_enter_namespace
NFILES=${NFILES:-20000}
TRIALS=${TRIALS:-400}
REWALK=${REWALK:-20}
SEED=${SEED:-1}

mkdir -p "$B/mnt/acc"
mount -t tmpfs -o strictatime,size=256m,nr_inodes=$((NFILES + 1000)) bench-accuracy "$B/mnt/acc"
echo "accuracy: estimated vs true atime-written inodes per interval, sampler + estimator of this build"
machine_line
"$top_builddir/bench/accuracy" "$B/mnt/acc" "$NFILES" "$TRIALS" "$REWALK" "$SEED"
echo
echo "mean err, p90 err: |estimate - truth| / truth over the trials; coverage: share of trials whose"
echo "95% interval holds the truth (nominal 95%); ci95 +/-: mean half-width of the interval / truth."
