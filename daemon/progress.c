/* progress.c: what a mount without a figure yet waits for, and when its
 * first figure comes (see progress.h). */
#include "progress.h"

#include <assert.h>

#include "protocol.h"
#include "schedule.h"

/* When a figure from the whole walk's sample is due (Unix seconds), while
 * the first walk runs: the inodes left at the pace it has kept so far, then
 * the sweep that measures an interval of the finished sample. */
static uint64_t progress_walk_end(const Filesystem *fs, uint64_t used, uint64_t now) {
        return schedule_walk_end(fs_walked(fs), used, now > fs->walk_started ? now - fs->walk_started : 0,
                                 fs->tracker->config->walk_rate, now);
}

int64_t progress_ready_at(const Filesystem *fs, const struct fs_job *j) {
        const Tracker *t = fs->tracker;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC), done = progress_walk_end(fs, j->res.used_inodes, now);

        return (int64_t) ((j->at + (tracker_first_measuring_sweep(t, done) - now)) / USEC_PER_SEC);
}

bool progress_of(const TrackedMount *m, struct progress *ret) {
        const Filesystem *fs = m->fs;
        const Tracker *t = fs ? fs->tracker : NULL;
        uint64_t now;

        assert(m);
        assert(ret);
        *ret = (struct progress) { .stage = STAGE_WAITING, .eta_s = -1 };
        if (m->root_not_dir || !m->entry->reachable) {
                ret->stage = m->root_not_dir ? STAGE_FILE_MOUNT : STAGE_OVERMOUNTED;
                return true;
        }
        if (m->activity.have || !mount_writes_atime(m) || !t)
                return false;
        now = tracker_now(t, CLOCK_MONOTONIC);
        if (fs->stalled)
                ret->stage = STAGE_STALLED;
        else if (fs->seen.walking) {
                ret->stage = STAGE_WALKING;
                ret->walked = fs_walked(fs);
                ret->inodes = fs->seen.walk_inodes_hint;
                /* The first figure needs a part walked, not all: the
                 * sweep half an interval after the baseline the walk's
                 * first step brings (planner.c); unknown until that
                 * step is back. */
                if (fs_baseline_at(fs) > 0) {
                        uint64_t at = fs_baseline_at(fs) + t->config->sampler_interval_usec / 2;

                        ret->eta_s = at > now ? (int64_t) ((at - now) / USEC_PER_SEC) : 0;
                }
        } else if (fs_sampled(fs) && fs_baseline_at(fs) == 0) {
                ret->stage = STAGE_BASELINE;
                ret->eta_s = (int64_t) (t->config->sampler_interval_usec / 2 / USEC_PER_SEC);
        } else if (fs_sampled(fs)) {
                /* The first figure half an interval after the baseline;
                 * later ones at timed sweeps. */
                uint64_t at = fs->figured ? tracker_first_measuring_sweep(t, fs_baseline_at(fs))
                                          : fs_baseline_at(fs) + t->config->sampler_interval_usec / 2;

                ret->stage = STAGE_MEASURING;
                ret->walked = fs_walked(fs);
                ret->eta_s = at > now ? (int64_t) ((at - now) / USEC_PER_SEC) : 0;
        }
        return true;
}
