/* fsjob.h: a filesystem's jobs: its UUID read, a walk step, a sweep, a
 * fine sweep, a btrfs look alone. A job is made on the loop with copies
 * of everything it needs (the place's path and root, the writers' roots
 * and policies, the counter's path, the btrfs look's inputs, the test's
 * hook and clock) and, for a walk or a sweep, the filesystem's sampler,
 * lent (sampler_lend()); its thread touches nothing else. Back on the
 * loop, the sampler is returned with its view (Filesystem.seen), and what
 * the job found is applied: the UUID, the figures (figures.h), the walk's
 * schedule, the filesystem's health.
 *
 * Owns: the jobs (freed when back, or when a timed-out one's thread
 * returns), Filesystem.busy, the walk's times (walk_started, walk_took,
 * next_walk), the failure state (stalled, failing, failures, retry_at) and
 * the counter's location. Failure: a job past its deadline stalls the
 * filesystem (its sampler stays lent to the stuck thread), one that fails
 * backs it off; both said once as they start and end. */
#pragma once

#include "tracker-base.h"

/* Sends a job of kind for fs through its place. -ENOENT: no place;
 * -ESHUTDOWN: the tracker is stopping; -EBUSY or -errno from the pool. */
int fsjob_submit(Filesystem *fs, FsJobKind kind);
/* A reading of a journal's count, for its edges (kcount.h). */
void fsjob_poll_journal(Filesystem *fs, uint64_t now);
