/* tracker-base.c: the facts read off the tracker's mounts and
 * filesystems, its clock, and the one call that makes its scheduler look
 * again (see tracker-base.h). */
#include "tracker-base.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "protocol.h"
#include "store.h"
#include "time-util.h"

/* What the sampler's view says of the walk and the baseline, for the
 * progress report and the first figure: the entries walked (or sampled,
 * once walked), whether there is a sample at all, and when its baseline
 * was taken (on the tracker's clock: fsjob.c; 0: none). */
uint64_t fs_walked(const Filesystem *fs) {
        return fs->seen.walking ? fs->seen.walk_seen : fs->seen.current ? fs->seen.current_population : 0;
}

bool fs_sampled(const Filesystem *fs) {
        return fs->seen.current || fs->seen.next;
}

uint64_t fs_baseline_at(const Filesystem *fs) {
        return fs->seen.current ? fs->seen.last_sweep : 0;
}

/* The tracker's time (tracker_set_clock()). */
uint64_t tracker_now(const Tracker *t, clockid_t clock) {
        return t->clock ? t->clock(clock, t->clock_userdata) : now_usec(clock);
}

/* A time on the tracker's clock as the system's, for a timer (never 0:
 * sd-event reads that as "off"). A clock of the caller's moves only when
 * it says so (tracker_set_clock()): what is due on it fires at once, what
 * is not never fires by itself (USEC_INFINITY: sd-event leaves it unarmed)
 * and is re-armed by the replan of the next move. */
uint64_t tracker_timer_time(const Tracker *t, uint64_t when) {
        return schedule_timer_time(t->clock, t->clock ? tracker_now(t, CLOCK_MONOTONIC) : 0, when);
}

unsigned tracker_max_jobs(const Tracker *t) {
        return 2 * t->config->worker_threads;
}

bool mount_writes_atime(const TrackedMount *m) {
        return m->entry->policy.atime != ATIME_NOATIME && !m->entry->policy.read_only;
}

bool mount_sampled(const TrackedMount *m) {
        return !m->root_not_dir && m->entry->reachable;
}

/* A mount whose atime updates a sweep measures. */
bool mount_measured(const TrackedMount *m) {
        return mount_sampled(m) && mount_writes_atime(m);
}

bool fs_needs_sampling(const Filesystem *fs) {
        for (size_t i = 0; i < fs->n_mounts; i++)
                if (mount_measured(fs->mounts[i]))
                        return true;
        return false;
}

/* A mount some user other than root made and serves: FUSE's user_id=
 * (fusermount with user_allow_other lets it be seen by all). What it does
 * is that user's: its jobs get a bounded share of the workers, and its
 * history gives way to the system's. */
uint32_t mount_owner(const MountEntry *e) {
        const char *o;

        if (!e->fstype || !startswith(e->fstype, "fuse") || !e->super_options)
                return 0;
        for (o = e->super_options; (o = strstr(o, "user_id=")); o += 8)
                if (o == e->super_options || o[-1] == ',')
                        return (uint32_t) strtoul(o + 8, NULL, 10);
        return 0;
}

bool mount_is_users(const MountEntry *e) {
        return mount_owner(e) != 0;
}

/* Who serves a filesystem: the user of a mount of it that a user made,
 * else root. Threads stuck on its jobs count against that owner's share
 * (worker_submit_bounded()). */
uint32_t fs_owner(const Filesystem *fs) {
        for (size_t i = 0; i < fs->n_mounts; i++) {
                uint32_t o = mount_owner(fs->mounts[i]->entry);

                if (o != 0)
                        return o;
        }
        return 0;
}

bool fs_bounded(const Filesystem *fs) {
        return fs->stalled || fs_owner(fs) != 0; /* it keeps timing out, or a user serves it */
}

bool mount_bounded(const TrackedMount *m) {
        return m->probe.stalled || mount_is_users(m->entry) || (m->fs && fs_bounded(m->fs));
}

/* Submits a job in the class its filesystem deserves; the caller counts
 * it as *bounded says. */
int tracker_submit_job(Tracker *t, bool bounded, uint32_t owner, worker_fn fn, worker_done_fn done, void *arg,
                      uint64_t timeout) {
        if (!bounded)
                return worker_submit(t->pool, fn, done, arg, timeout);
        if (t->bounded_jobs >= BOUNDED_JOBS_MAX)
                return -EBUSY;
        return worker_submit_bounded(t->pool, fn, done, arg, timeout, owner);
}

bool mount_stalled(const TrackedMount *m) {
        return m->probe.stalled || (m->fs && m->fs->stalled);
}

/* Index of the mount with 'id' in t->mounts, or t->n_mounts. */
static size_t find_mount_index(const Tracker *t, int id) {
        size_t lo = 0, hi = t->n_mounts;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (t->mounts[mid]->id == id)
                        return mid;
                if (t->mounts[mid]->id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return t->n_mounts;
}

TrackedMount *tracker_lookup_mount(const Tracker *t, int id) {
        size_t i = t ? find_mount_index(t, id) : 0;

        return t && i < t->n_mounts ? t->mounts[i] : NULL;
}

bool mount_on_btrfs(const TrackedMount *m) {
        return m->fs && m->entry->fstype && streq(m->entry->fstype, "btrfs");
}

/* Whether any mount of the filesystem lets atime be written: where none
 * does, it is never sampled (a btrfs is looked at alone: place_looks_only()). */
bool fs_writes_atime(const Filesystem *fs) {
        for (size_t i = 0; i < fs->n_mounts; i++)
                if (mount_writes_atime(fs->mounts[i]))
                        return true;
        return false;
}

/* The mount's key from its entry and its filesystem's identity, or none
 * while that is not known (or without memory: asked again at the next
 * change of the table). */
void mount_set_key(TrackedMount *m) {
        const MountEntry *e = m->entry;

        free(m->key);
        m->key = NULL;
        if (m->fs && m->fs->identified)
                (void) store_key_format(m->fs->uuid, e->source, e->fstype, e->root, e->target, &m->key);
}

/* What it shows of a mount may have changed: whoever serves it from a
 * cache is told. */
void tracker_changed(Tracker *t) {
        if (t->hooks.changed)
                t->hooks.changed(t->hooks.userdata);
}

/* The one way to make the scheduler look again: what to look at is
 * noted, and a turn of it (kick()) is due at the loop's next iteration,
 * once, however many ask before it comes. 0 asks for a turn that looks
 * only at what it always does (the walk step that may take what is left
 * of the tick) and at what the last turn left. */
void tracker_plan(Tracker *t, PlanWhat what) {
        t->plan |= what;
        if (t->replan && !t->shutting_down)
                (void) sd_event_source_set_enabled(t->replan, SD_EVENT_ONESHOT);
}

/* A sweep of fs is due as soon as it may run. */
void fs_want_sweep(Filesystem *fs) {
        fs->sweep_pending = true;
        tracker_plan(fs->tracker, PLAN_SWEEPS);
}

bool fs_can_run(const Filesystem *fs, uint64_t now) {
        return !fs->busy && !fs->orphaned && (!(fs->stalled || fs->failing) || fs->retry_at <= now);
}

/* A mount found to have a file for its root: said once, and never probed,
 * walked or sampled again (its id cannot come to name a directory). */
void mount_mark_not_dir(Tracker *t, TrackedMount *m) {
        if (m->root_not_dir)
                return;
        m->root_not_dir = true;
        m->activity = (struct activity) {};
        m->probe.have = true;
        m->probe.stalled = false;
        m->probe.failures = m->probe.fail_count = 0;
        m->probe.result = (struct probe_result) { .at = tracker_now(t, CLOCK_REALTIME), .not_directory = true };
        snprintf(m->probe.result.reason, sizeof m->probe.result.reason, "%s", PROBE_REASON_NOT_DIRECTORY);
        tracker_plan(t, PLAN_WALKS);
        tracker_changed(t);
        log_mount_info(m->entry->target, "%s: %s", m->entry->target, PROBE_REASON_NOT_DIRECTORY);
}

void fs_free(Filesystem *fs) {
        if (!fs)
                return;
        free(fs->uuid);
        btrfs_meter_done(&fs->btrfs);
        free(fs->counter.path);
        sampler_free(fs->sampler);
        free(fs->place_root);
        free(fs->mounts);
        device_info_done(&fs->device);
        free(fs);
}

/* The next sweep, in the middle of the next wall-clock bucket of one
 * interval: history buckets by wall clock, and a sweep near a boundary could
 * land two in one bucket and none in the next. Re-aligned every time, so
 * clock adjustments never accumulate. */
uint64_t tracker_next_sweep(const Tracker *t) {
        return schedule_next_sweep(tracker_now(t, CLOCK_REALTIME), tracker_now(t, CLOCK_MONOTONIC),
                                   t->config->sampler_interval_usec);
}

/* The monotonic time of the first sweep that measures an interval begun
 * at 'since' (a sweep closer than 9/10 of an interval is skipped). */
uint64_t tracker_first_measuring_sweep(const Tracker *t, uint64_t since) {
        return schedule_first_measuring_sweep(tracker_next_sweep(t), t->config->sampler_interval_usec, since);
}
