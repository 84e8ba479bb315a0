/* progress.h: what a mount without a figure yet is waiting for, and about
 * when its first figure comes (tracker_mount_progress(), in tracker.h):
 * the walk's progress, the baseline, the sweep that measures.
 *
 * Owns nothing: reads the filesystem's sampler view (Filesystem.seen),
 * its walk's pace and the sweeps' schedule (schedule.h). Never fails: an
 * ETA that cannot be told is -1. */
#pragma once

#include "tracker-base.h"

/* When a figure from the whole walk's sample is due (Unix seconds), for a
 * figure of the part walked so far that the sweep 'j' brought. */
int64_t progress_ready_at(const Filesystem *fs, const struct fs_job *j);
/* What m waits for (tracker_mount_progress()). */
bool progress_of(const TrackedMount *m, struct progress *ret);
