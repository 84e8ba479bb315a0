/* planner.c: the tracker's schedule in time: every event source it has
 * is made here, and each turn of the scheduler submits what is due (see
 * planner.h). */
#include "planner.h"

#include <errno.h>
#include <stdlib.h>

#include "fsjob.h"
#include "hostload.h"
#include "log.h"
#include "place.h"
#include "prober.h"
#include "schedule.h"
#include "time-util.h"

/* The walk budget of the next tick: idle_walk_rate while a first walk is
 * under way and the host is idle, walk_rate otherwise. */
static uint64_t walk_budget(Tracker *t) {
        const struct config *c = t->config;
        bool first = false;

        if (c->idle_walk_rate <= c->walk_rate)
                return c->walk_rate;
        for (size_t i = 0; i < t->n_fss && !first; i++) {
                const Filesystem *fs = t->fss[i];

                /* The sampler is its job's while one is out: what the
                 * last job left is read instead. */
                first = fs->sampler && !fs->seen.whole &&
                        fs_needs_sampling(fs);
        }
        if (!first) {
                hostload_forget(&t->load); /* a window begins at the next first walk */
                return c->walk_rate;
        }
        return hostload_look(&t->load, c->stat_path) ? c->idle_walk_rate : c->walk_rate;
}

/* By the view, not the sampler: plan_walks() asks while a sweep may hold
 * it (a sweep moves 'next' into 'current'). */
static bool fs_walk_due(const Filesystem *fs, uint64_t now) {
        return fs->sampler && schedule_walk_due(&fs->seen, fs->next_walk, now);
}

/* Arms the walk tick for 'when' (0: due now), never sooner than one tick
 * after the last step, and never later than already armed. */
static void rearm_walk_timer(Tracker *t, uint64_t when) {
        int enabled = SD_EVENT_OFF;
        uint64_t cur = 0, at;

        if (t->walking)
                return; /* re-armed when the step out comes back */
        when = MAX(when, t->last_walk_step + WALK_TICK_USEC); /* walk_next() used up this tick */
        at = tracker_timer_time(t, when);
        (void) sd_event_source_get_enabled(t->walk_timer, &enabled);
        if (enabled != SD_EVENT_OFF && sd_event_source_get_time(t->walk_timer, &cur) >= 0 && cur <= at)
                return;
        (void) sd_event_source_set_time(t->walk_timer, at);
        (void) sd_event_source_set_enabled(t->walk_timer, SD_EVENT_ONESHOT);
}

/* Submits the next due walk step after the last filesystem served, with
 * what is left of the tick's budget. */
static void walk_next(Tracker *t, uint64_t now) {
        if (t->walking || t->tick_budget == 0)
                return;
        if (now >= t->last_walk_step + WALK_TICK_USEC) {
                t->tick_budget = 0; /* that tick is over: the walk timer starts the next */
                return;
        }
        for (size_t k = 1; k <= t->n_fss && !t->walking; k++) {
                size_t i = (t->walk_cursor + k) % t->n_fss;
                Filesystem *fs = t->fss[i];

                if (!fs_needs_sampling(fs) || !fs_can_run(fs, now) || place_ensure_sampler(fs) < 0 ||
                    !fs_walk_due(fs, now))
                        continue;
                if (!fs->seen.walking)
                        fs->walk_started = now; /* a new walk: its first step */
                if (fsjob_submit(fs, FS_JOB_WALK) >= 0) {
                        t->walking = fs;
                        t->walk_cursor = i;
                }
        }
        if (!t->walking)
                t->tick_budget = 0; /* nothing can walk now: wait for the next tick */
}

/* Journals' counts read for their edges in the seconds before the next
 * sweep (schedule_edges_from()). */
static void arm_edge_timer(Tracker *t) {
        uint64_t next = tracker_next_sweep(t);

        /* A first figure's sweep as well: the interval after it begins
         * there. */
        if (t->first_next > 0)
                next = MIN(next, t->first_next);

        t->edge_until = next;
        next = schedule_edges_from(next, t->config->sampler_interval_usec);
        (void) sd_event_source_set_time(t->edge_timer, tracker_timer_time(t, next));
        (void) sd_event_source_set_enabled(t->edge_timer, SD_EVENT_ONESHOT);
}

static void rearm_probe_timer(Tracker *t) {
        uint64_t next = UINT64_MAX;

        if (t->probe_jobs < tracker_max_jobs(t))
                for (size_t i = 0; i < t->n_mounts; i++)
                        if (!t->mounts[i]->probe.running)
                                next = MIN(next, t->mounts[i]->probe.next_due);
        if (next == UINT64_MAX) {
                (void) sd_event_source_set_enabled(t->probe_timer, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_time(t->probe_timer, tracker_timer_time(t, next));
        (void) sd_event_source_set_enabled(t->probe_timer, SD_EVENT_ONESHOT);
}

/* Who each filesystem is comes first: history is keyed by it. */
static void kick_identify(Tracker *t, uint64_t now) {
        bool left = false;

        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (fs->identified)
                        continue;
                left = true; /* until its job is back */
                if (t->fs_jobs < tracker_max_jobs(t) && fs_can_run(fs, now))
                        (void) fsjob_submit(fs, FS_JOB_IDENTIFY);
        }
        if (left)
                t->plan |= PLAN_IDENTIFY; /* for the turn a job back asks for */
}

/* Sweeps, round robin from where the last kick stopped. */
static void kick_sweeps(Tracker *t, uint64_t now) {
        bool left = false;

        for (size_t k = 0; k < t->n_fss; k++) {
                size_t i = (t->sweep_cursor + k) % t->n_fss;
                Filesystem *fs = t->fss[i];

                if (!fs->sweep_pending)
                        continue;
                if (t->fs_jobs >= tracker_max_jobs(t)) {
                        t->sweep_cursor = i;
                        left = true;
                        break;
                }
                bool look = place_looks_only(fs);

                if (!look && !fs_needs_sampling(fs)) {
                        fs->sweep_pending = false;
                        continue;
                }
                if (!fs_can_run(fs, now)) {
                        if (fs->stalled || fs->failing)
                                fs->sweep_pending = false; /* retried at a tick after its back-off */
                        else
                                left = true; /* a walk step is out: when it is back */
                        continue;
                }
                if (look) {
                        if (fsjob_submit(fs, FS_JOB_LOOK) < 0)
                                fs->sweep_pending = false; /* tried again at the next tick */
                        continue;
                }
                if (place_ensure_sampler(fs) < 0 || !fs->seen.can_sweep) {
                        fs->sweep_pending = false;
                        continue;
                }
                if (fsjob_submit(fs, FS_JOB_SWEEP) < 0)
                        left = true;
        }
        if (left)
                t->plan |= PLAN_SWEEPS; /* for the turn a job back asks for */
}

/* The walk timer armed for the next walk due (or off if none is). When
 * that is changes only with a walk step, a new sampler or the table;
 * while a step is out, its return re-arms. */
static void plan_walks(Tracker *t, uint64_t now) {
        uint64_t next_walk = UINT64_MAX;

        if (t->walking) {
                t->plan |= PLAN_WALKS; /* the step's return asks again */
                return;
        }
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (!fs_needs_sampling(fs) || fs->orphaned || place_ensure_sampler(fs) < 0)
                        continue;
                if (fs_walk_due(fs, now))
                        next_walk = 0;
                else if (fs->next_walk > 0)
                        next_walk = MIN(next_walk, fs->next_walk);
        }
        if (next_walk == UINT64_MAX)
                (void) sd_event_source_set_enabled(t->walk_timer, SD_EVENT_OFF);
        else
                rearm_walk_timer(t, next_walk);
}

/* When fs's first figure is due: half an interval after its baseline,
 * the shortest a first figure measures (fsjob_submit()), on no timed sweep's
 * phase: the next timed sweep may come any time up to an interval and a
 * half after a baseline (tracker_next_sweep(); a sweep closer than half an
 * interval to it measures nothing), and a first walk that ends takes a
 * new baseline. Asked for once per baseline; 0: none due. */
static uint64_t fs_first_due(const Filesystem *fs) {
        if (fs->figured || fs->orphaned || !fs_needs_sampling(fs))
                return 0;
        return schedule_first_due(fs_baseline_at(fs), fs->first_asked, fs->tracker->config->sampler_interval_usec);
}

/* The first figures' timer armed for the earliest due, or off. When that
 * is changes only with a sweep or walk step back, or the clock. */
static void plan_firsts(Tracker *t) {
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; i < t->n_fss; i++) {
                uint64_t due = fs_first_due(t->fss[i]);

                if (due > 0)
                        next = MIN(next, due);
        }
        t->first_next = next == UINT64_MAX ? 0 : next;
        arm_edge_timer(t);
        if (next == UINT64_MAX) {
                (void) sd_event_source_set_enabled(t->first_timer, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_time(t->first_timer, tracker_timer_time(t, next));
        (void) sd_event_source_set_enabled(t->first_timer, SD_EVENT_ONESHOT);
}

/* A turn of the scheduler (tracker_plan()): submits what is due, within
 * the in-flight limit, and arms the timers for what comes due later. Each
 * part looks at every filesystem only where it was asked to. */
static void kick(Tracker *t) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);
        PlanWhat what = t->plan;

        if (t->shutting_down)
                return;
        t->plan = 0;
        if (what & PLAN_IDENTIFY)
                kick_identify(t, now);
        if (what & PLAN_SWEEPS)
                kick_sweeps(t, now);
        /* Walks share walk_rate, the host's budget per tick: one step at a
         * time, to each filesystem in turn, so a huge one does not hold up
         * the rest; what a step leaves of the tick goes to the next one. */
        walk_next(t, now);
        if (what & PLAN_WALKS)
                plan_walks(t, now);
        if (what & PLAN_FIRSTS)
                plan_firsts(t);
        if (what & PLAN_PROBES)
                rearm_probe_timer(t);
}

static int on_replan(sd_event_source *s, void *userdata) {
        (void) s;
        kick(userdata);
        return 0;
}

static int on_first_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        (void) s;
        (void) usec;
        tracker_changed(t);
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];
                uint64_t due = fs_first_due(fs);

                if (due > 0 && due <= now) {
                        fs->first_asked = fs_baseline_at(fs);
                        fs_want_sweep(fs);
                }
        }
        tracker_plan(t, PLAN_FIRSTS);
        return 0;
}

static int on_walk_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        (void) s;
        (void) usec;
        tracker_changed(t);
        if (!t->walking && (t->tick_budget == 0 || now >= t->last_walk_step + WALK_TICK_USEC)) {
                t->tick_budget = walk_budget(t);
                t->last_walk_step = now;
        }
        tracker_plan(t, PLAN_WALKS); /* which walks; the timer is spent: armed again */
        return 0;
}

/* Reads diskstats and updates the rates of every filesystem's device; with
 * only_new, just takes the first reading of those that have none. */
void planner_update_devices(Tracker *t, bool only_new) {
        _cleanup_(diskstats_freep) DiskStats *ds = NULL;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);
        int r;

        r = diskstats_read(t->config->diskstats_path, &ds);
        if (r < 0) {
                if (!t->disk_warned)
                        log_warning_errno(r, "Cannot read %s; no device I/O figures: %m", t->config->diskstats_path);
                t->disk_warned = true;
                return;
        }
        t->disk_warned = false;
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (fs->device.kind == DEVICE_NONE || (only_new && fs->disk.last_at > 0))
                        continue;
                device_meter_update(&fs->disk, diskstats_find(ds, fs->device.major, fs->device.minor), now);
        }
}

/* About every second: the inodes that moved lately are looked at again, on
 * each filesystem that has some and nothing else out. The pass begins where
 * the last one's jobs ran out, not at the first filesystem: with every job
 * taken (walks, and fine sweeps of files read once elsewhere), the same
 * filesystems got them every second, and one further down the list went a
 * whole interval without a look at its files turned hot (busy.sh's
 * xfs-mix: 20 files read flat out credited 20 updates in 30 s, one each). */
void planner_fine_pass(Tracker *t) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);
        size_t n = t->n_fss, start = n > 0 ? t->fine_next % n : 0;

        for (size_t k = 0; k < n; k++) {
                size_t i = (start + k) % n;
                Filesystem *fs = t->fss[i];

                if (!fs_can_run(fs, now) || fs->stalled || fs->sweep_pending || !fs->sampler || !fs->seen.has_hot ||
                    !fs_needs_sampling(fs))
                        continue;
                if (t->fs_jobs >= tracker_max_jobs(t)) {
                        t->fine_next = i; /* first in line next time */
                        return;
                }
                (void) fsjob_submit(fs, FS_JOB_FINE);
        }
        t->fine_next = start;
}

static int on_fine_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        /* FINE_SWEEP_USEC on average, drawn afresh each time: a reader with
         * the sweep's own period is not always seen at the same point of it
         * (the estimator takes the looks' ages as drawn at random). */
        (void) sd_event_source_set_time(s, usec + jittered(FINE_SWEEP_USEC));
        planner_fine_pass(userdata);
        return 0;
}

/* Every KCOUNT_POLL_USEC until the sweep, and after while one waits: each
 * journal's count read (a few hundred bytes of procfs). */
static int on_edge_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);
        bool more = now < t->edge_until;

        (void) usec;
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (fs->counter.kind != FS_COUNTER_JBD2 || !fs->counter.path || fs->orphaned ||
                    !fs_needs_sampling(fs))
                        continue;
                fsjob_poll_journal(fs, now);
                more = more || fs->sweep_pending;
        }
        if (more) {
                (void) sd_event_source_set_time(s, tracker_timer_time(t, now + KCOUNT_POLL_USEC));
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

static int on_sweep_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;
        int64_t now_s = (int64_t) (tracker_now(t, CLOCK_REALTIME) / USEC_PER_SEC);

        tracker_changed(t);
        (void) sd_event_source_set_time(s, tracker_timer_time(t, tracker_next_sweep(t)));
        planner_update_devices(t, false);
        if (t->hooks.tick)
                t->hooks.tick(now_s, t->hooks.userdata);
        for (size_t i = 0; i < t->n_fss; i++)
                if (fs_needs_sampling(t->fss[i]) || place_looks_only(t->fss[i]))
                        fs_want_sweep(t->fss[i]);
        arm_edge_timer(t); /* the next sweep's: this one's sweeps take theirs as they are made (fs_job_make()) */
        return 0;
}

static int on_probe_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;

        tracker_changed(t);
        prober_run_due(t);
        rearm_probe_timer(t);
        return 0;
}

/* Everything's next time looked at again: the configuration or the
 * clock changed. */
void planner_replan(Tracker *t) {
        (void) sd_event_source_set_time(t->sweep_timer, tracker_timer_time(t, tracker_next_sweep(t)));
        arm_edge_timer(t);
        tracker_plan(t, PLAN_ALL);
}

static int add_timer(Tracker *t, sd_event_source **ret, uint64_t usec, uint64_t accuracy, sd_event_time_handler_t cb,
                     int enabled, const char *description) {
        int r = sd_event_add_time(t->event, ret, CLOCK_MONOTONIC, usec, accuracy, cb, t);

        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(*ret, enabled);
        (void) sd_event_source_set_description(*ret, description);
        return 0;
}

int planner_start(Tracker *t) {
        uint64_t iv = t->config->sampler_interval_usec;
        int r;

        r = add_timer(t, &t->sweep_timer, tracker_next_sweep(t), MIN(iv / 100, USEC_PER_SEC / 10), on_sweep_timer,
                      SD_EVENT_ON, "sampler-sweep");
        if (r >= 0)
                r = add_timer(t, &t->probe_timer, 1, USEC_PER_SEC / 10, on_probe_timer, SD_EVENT_OFF, "probe");
        if (r >= 0)
                r = add_timer(t, &t->walk_timer, 1, USEC_PER_SEC / 20, on_walk_timer, SD_EVENT_OFF, "sampler-walk");
        if (r >= 0)
                r = add_timer(t, &t->first_timer, 1, USEC_PER_SEC / 10, on_first_timer, SD_EVENT_OFF, "sampler-first");
        if (r >= 0)
                r = add_timer(t, &t->edge_timer, 1, USEC_PER_SEC / 100, on_edge_timer, SD_EVENT_ONESHOT,
                              "journal-edges");
        if (r < 0)
                return r;
        arm_edge_timer(t);
        /* To the microsecond: with any slack, sd-event wakes at the place
         * in each quarter second that every timer of the host's shares
         * (from the boot id) wherever that falls in it, and a quarter of
         * the looks would come at the same point of any reader whose
         * period divides 250 ms (estimate.h). */
        r = sd_event_add_time_relative(t->event, &t->fine_timer, CLOCK_MONOTONIC, FINE_SWEEP_USEC, 1, on_fine_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->fine_timer, SD_EVENT_ON);
        (void) sd_event_source_set_description(t->fine_timer, "sampler-fine");
        /* The scheduler's turn, when tracker_plan() asks for one. */
        r = sd_event_add_defer(t->event, &t->replan, on_replan, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->replan, SD_EVENT_OFF);
        (void) sd_event_source_set_description(t->replan, "tracker-replan");
        return 0;
}

void planner_stop(Tracker *t) {
        sd_event_source_disable_unref(t->sweep_timer);
        sd_event_source_disable_unref(t->probe_timer);
        sd_event_source_disable_unref(t->walk_timer);
        sd_event_source_disable_unref(t->fine_timer);
        sd_event_source_disable_unref(t->first_timer);
        sd_event_source_disable_unref(t->edge_timer);
        sd_event_source_disable_unref(t->replan);
        t->sweep_timer = t->probe_timer = t->walk_timer = t->fine_timer = NULL;
        t->first_timer = t->edge_timer = t->replan = NULL;
}

void planner_set_clock(Tracker *t) {
        /* On a clock of the caller's, fine passes come only when it asks
         * (tracker_fine_pass()): one of the system's second, drawn at
         * random, would take a filesystem just as the caller's clock makes
         * its walk step or sweep due. */
        (void) sd_event_source_set_enabled(t->fine_timer, t->clock ? SD_EVENT_OFF : SD_EVENT_ON);
        planner_replan(t);
}
