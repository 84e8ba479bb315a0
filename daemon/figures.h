/* figures.h: a sweep's result turned into figures. Each writer (a mount
 * of the filesystem that lets atime be written) gets its activity from
 * the sample's strata (estimate_strata()); the kernel's count of the
 * filesystem's transactions bounds it or stands for it (kcount.h); a
 * btrfs look's bytes go to the meter (btrfs-meter.h). Each mount's new
 * activity goes to the tracker's 'activity' hook.
 *
 * Owns: Filesystem.last (the last sweep's result), its counter's last
 * reading and what kcount_apply() keeps of it (count_*, unexplained),
 * figured, probed; TrackedMount.activity. Borrows: the job's result (its
 * thread is done with it), the configuration's cost table. Failure: a
 * writer whose figures cannot be estimated keeps its last; a sweep that
 * measured nothing (a baseline) changes no figure. */
#pragma once

#include "tracker-base.h"

/* A sweep job back with its result: every writer's figures. */
void figures_apply_sweep(Filesystem *fs, struct fs_job *j);
/* The btrfs look that came back with a sweep (its interval, 'prev' the
 * sweep's before), or alone (FS_JOB_LOOK: 'prev' NULL, its facts kept and
 * no interval measured); then the place chosen again. */
void figures_apply_btrfs(Filesystem *fs, struct fs_job *j, const struct sweep_result *prev);
