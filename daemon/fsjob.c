/* fsjob.c: a filesystem's jobs: made with copies of what they need and
 * its lent sampler, run in a worker thread, and taken back on the loop
 * (see fsjob.h). */
#include "fsjob.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "kcount.h"
#include "log.h"
#include "place.h"
#include "schedule.h"
#include "time-util.h"

static void fs_job_free(struct fs_job *j) {
        for (size_t i = 0; i < j->n_writers; i++)
                free(j->writer_roots[i]);
        free(j->writer_roots);
        free(j->devname);
        btrfs_look_done(&j->btrfs);
        free(j->counter_path);
        free(j->uuid);
        free(j->target);
        free(j->fs_root);
        free(j->writers);
        free(j->writer_ids);
        free(j);
}

static void fs_work(void *arg, const atomic_bool *cancel) {
        struct fs_job *j = arg;
        struct sampler_place pl = { .target = j->target, .mount_id = j->mount_id, .fs_root = j->fs_root,
                                    .commit_s = j->commit_s };

        if (j->hook)
                j->hook(j->target, j->hook_userdata);
        if (j->kind == FS_JOB_IDENTIFY)
                j->r = device_read_uuid("/dev", j->devname, &j->uuid);
        else if (j->kind == FS_JOB_LOOK)
                btrfs_look_run(&j->btrfs, j->target, j->devname); /* its failure is the meter's to say */
        else if (j->kind == FS_JOB_WALK)
                j->r = sampler_walk_step(j->sampler, &pl, &j->budget, cancel);
        else if (j->kind == FS_JOB_FINE)
                j->r = sampler_fine_sweep(j->sampler, &pl, cancel);
        else {
                /* The count is read where the interval's time is taken:
                 * both measure the same stretch. */
                if (j->counter_kind != FS_COUNTER_NONE && !j->edge.count.valid) {
                        (void) fscounter_read(j->counter_kind, j->counter_path, &j->count);
                        j->count_mono = j->clock ? j->clock(CLOCK_MONOTONIC, j->clock_userdata)
                                                 : now_usec(CLOCK_MONOTONIC);
                }
                /* The interval published ends here, not after the sweep:
                 * a sweep on a busy host takes seconds, and reads in
                 * bursts (1,250 files every 4 s) put a burst in that
                 * stretch that the count leaves to the next interval. */
                j->end_at = j->clock ? j->clock(CLOCK_REALTIME, j->clock_userdata) : now_usec(CLOCK_REALTIME);
                if (j->btrfs.on)
                        btrfs_look_run(&j->btrfs, j->target, j->devname);
                /* On the tracker's clock, as the schedule that asked
                 * for it: a test's clock says how long the interval was. */
                uint64_t now = j->clock ? j->clock(CLOCK_MONOTONIC, j->clock_userdata) : now_usec(CLOCK_MONOTONIC);

                j->r = sampler_sweep(j->sampler, &pl, j->writers, j->n_writers, now, j->min_usec, cancel, &j->res);
                if (j->btrfs.on)
                        btrfs_look_since(&j->btrfs, j->sampler);
                j->at = j->clock ? j->clock(CLOCK_REALTIME, j->clock_userdata) : now_usec(CLOCK_REALTIME);
        }
}

/* Files that turned hot since the walk join the fresh strata at the next
 * walk. When a sweep finds some (idle inodes read again and again within
 * the looks after their first move: drawn from a stratum of files the walk
 * saw idle, so others like them may be hot unseen, and the one drawn
 * weighs for the whole stratum), the next walk comes at once: a first walk
 * now comes before a workload that begins after start-up, and one file
 * read ten times a second, drawn among 500 the walk saw alike, read 4,600
 * a minute against the kernel's 1,800 until the walk two intervals on. Where the
 * kernel counted far more than the sample accounts for, it comes after two
 * intervals rather than at its usual refresh (at once where the count
 * jumped: figures.c), and never before 20 s. Never, either, before
 * twice the last walk's length has passed since it ended (a third of the
 * time at most), and walks stay within walk_rate all the same. */
static void fs_rewalk_soon(Filesystem *fs, const struct sweep_result *res, uint64_t now) {
        uint64_t at;

        if (!fs->sampler || fs->seen.walking || fs->seen.next || fs->next_walk == 0)
                return;
        at = schedule_rewalk(fs->next_walk, res->woke_hot > 0, fs->unexplained, fs->count_jumped, fs->walk_started,
                             fs->walk_took, fs->tracker->config->sampler_interval_usec, now);
        if (at < fs->next_walk) {
                fs->next_walk = at;
                tracker_plan(fs->tracker, PLAN_WALKS);
        }
}

/* A walk or sweep back may have taken a new baseline: its first figure
 * is planned. */
static void fs_note_progress(Filesystem *fs) {
        uint64_t at = fs_baseline_at(fs);

        if (fs->sampler && !fs->figured && at > 0 && fs->first_asked != at)
                tracker_plan(fs->tracker, PLAN_FIRSTS);
}

/* A job missed its deadline: the filesystem is stalled and retried after
 * its back-off; it stays busy, its sampler the stuck thread's. */
static void fs_timed_out(Filesystem *fs, const struct fs_job *j, uint64_t now) {
        Tracker *t = fs->tracker;

        fs->stalled = true;
        fs->failures++;
        fs->retry_at = now + schedule_backoff(fs->failures);
        /* Said when it starts; fs_note_outcome() says when it ends. */
        if (!fs->orphaned && fs->failures == 1 && log_ratelimit_test(&t->fail_log, LOG_WARNING)) {
                const char *target = fs->n_mounts ? fs->mounts[0]->entry->target : "?";

                log_mount_warning(target, "%s: %s timed out; filesystem marked stalled, retrying with back-off up to an hour",
                                  target,
                                  j->kind == FS_JOB_WALK ? "sample walk" : j->kind == FS_JOB_FINE ? "fine sweep"
                                  : j->kind == FS_JOB_LOOK ? "btrfs look" : "sample sweep");
        }
        if (t->walking == fs) {
                t->walking = NULL; /* let the other filesystems walk meanwhile */
                t->tick_budget = 0;
        }
}

/* Without a UUID (no superblock blkid knows, no permission) the key falls
 * back on the source: still stable across restarts. */
static void fs_identified(Filesystem *fs, struct fs_job *j) {
        fs->identified = true;
        fs->uuid = TAKE_PTR(j->uuid);
        for (size_t i = 0; i < fs->n_mounts; i++)
                mount_set_key(fs->mounts[i]);
        if (j->r < 0 && j->r != -ENODATA && fs->n_mounts)
                log_mount_full(LOG_DEBUG, j->r, fs->mounts[0]->entry->target, "%s: no filesystem UUID: %m", j->devname);
}

/* A walk or sweep failed: the filesystem backs off as a stalled one does,
 * and costs no walk budget meanwhile. Said once when it starts and once
 * when it ends, never per attempt; and, as anyone can make mounts that
 * fail (a FUSE mount root may not enter), through a rate limit. */
static void fs_failed(Filesystem *fs, const struct fs_job *j, uint64_t now) {
        Tracker *t = fs->tracker;
        int level = j->r == -ESTALE || j->r == -ENOENT ? LOG_DEBUG : LOG_WARNING;

        fs->failures++;
        fs->retry_at = now + schedule_backoff(fs->failures);
        if (fs->fail_count++ > 0)
                return;
        fs->failing = true;
        /* The mount went away under us (ESTALE, ENOENT): the next table
         * update will say; until then it backs off like any other. */
        if (level <= log_get_max_level() && log_ratelimit_test(&t->fail_log, level))
                log_mount_full(level, j->r, j->target, "%s: sampling failed: %m; retrying in %llus, backing off to an hour",
                               j->target, (unsigned long long) (schedule_backoff(fs->failures) / USEC_PER_SEC));
}

/* What a walk or sweep's outcome says of the filesystem's health. */
static void fs_note_outcome(Filesystem *fs, const struct fs_job *j, uint64_t now) {
        Tracker *t = fs->tracker;

        if (j->r == -ENOTDIR) {
                /* No failure: the place's root is a file. That mount is
                 * never a place again; another of the filesystem, if any. */
                TrackedMount *m = tracker_lookup_mount(t, j->mount_id);

                if (m && m->fs == fs)
                        mount_mark_not_dir(t, m);
                return;
        }
        if (j->r < 0 && j->r != -ECANCELED && j->r != -EAGAIN) {
                fs_failed(fs, j, now);
                return;
        }
        if (fs->stalled && log_ratelimit_test(&t->fail_log, LOG_INFO))
                log_mount_info(j->target, "%s: filesystem answers again after %u timed out job%s", j->target, fs->failures,
                               fs->failures == 1 ? "" : "s");
        if (fs->failing && log_ratelimit_test(&t->fail_log, LOG_INFO))
                log_mount_info(j->target, "%s: sampling works again after %u failed attempt%s", j->target, fs->fail_count,
                               fs->fail_count == 1 ? "" : "s");
        fs->stalled = false;
        fs->failing = false;
        fs->fail_count = 0;
        fs->failures = 0;
}

/* A walk that finished a new reservoir: sweep it at once for its baseline
 * if nothing is being measured yet. Walked again before long where a walk
 * is short: that is how files that turned hot since join the fresh
 * stratum. Walking takes a tenth of the time at most, and never waits
 * longer than [sampler] refresh. A first walk that was short is walked
 * again half an interval on (a minute at most), when the first figure
 * comes: it ran at start-up, often before the host's workload began (at
 * boot, before the services), and its strata then hold none of the files
 * that workload reads: one drawn among hundreds the walk saw alike weighs
 * for all of them, one not drawn for none. */
static void fs_walk_done(Filesystem *fs, const struct fs_job *j, uint64_t now) {
        const struct config *c = fs->tracker->config;
        bool first;

        assert(fs->sampler && fs->seen.next);
        first = !fs->seen.current || fs->seen.current_partial;
        fs->walk_took = now - fs->walk_started;
        fs->next_walk = schedule_walk_refresh(first, fs->walk_took, c->sampler_interval_usec, c->walk_refresh_usec, now);
        /* A first walk's: its sample replaces the partial one at once
         * (sampler_sweep() measures the partial one's interval first if it
         * is long enough). */
        if (first)
                fs_want_sweep(fs);
        log_mount_debug(j->target, "%s: sample walk done: %llu inodes, %zu sampled", j->target,
                  (unsigned long long) fs->seen.next_population, fs->seen.next_sample);
        /* Said once per filesystem: in a user namespace, or on a network
         * filesystem that squashes root, most of it may be out of reach. */
        if (fs->seen.next_skipped > 0 && !fs->skip_said) {
                fs->skip_said = true;
                bool one = fs->seen.next_skipped == 1;

                log_mount_info(j->target, "%s: the walk skipped %llu director%s it cannot open without changing %s "
                               "atime (owned by a user root cannot act for here): the figure leaves %s out",
                               j->target, (unsigned long long) fs->seen.next_skipped, one ? "y" : "ies",
                               one ? "its" : "their", one ? "it" : "them");
        }
}

/* What a job that ran to its end brings back, applied to fs. */
static void fs_apply_job(Filesystem *fs, struct fs_job *j, uint64_t now) {
        if (j->kind == FS_JOB_IDENTIFY)
                fs_identified(fs, j);
        else
                fs_note_outcome(fs, j, now);
        if (j->kind == FS_JOB_WALK && j->r == 1)
                fs_walk_done(fs, j, now);
        else if (j->kind == FS_JOB_WALK && j->r == 0 && !fs->seen.current)
                /* The first walk's first step: the part walked is swept for
                 * a baseline at once, so that the next sweep measures it
                 * (sampler_sweep()). */
                fs_want_sweep(fs);
        else if (j->kind == FS_JOB_SWEEP && j->r >= 0) {
                figures_apply_sweep(fs, j);
                fs_rewalk_soon(fs, &j->res, now);
        } else if (j->kind == FS_JOB_LOOK)
                figures_apply_btrfs(fs, j, NULL);
        if (j->kind == FS_JOB_WALK || j->kind == FS_JOB_SWEEP)
                fs_note_progress(fs);
}

static void fs_done(void *arg, WorkerStatus status) {
        struct fs_job *j = arg;
        Filesystem *fs = j->fs;
        Tracker *t = fs->tracker;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);
        PlanWhat what;

        assert(fs->busy);
        if (j->kind != FS_JOB_FINE || status != WORKER_DONE)
                tracker_changed(t); /* a fine sweep changes nothing shown until the next sweep */
        if (status != WORKER_LATE) {
                if (j->bounded)
                        t->bounded_jobs--;
                else
                        t->fs_jobs--;
        }
        /* Any job back asks for a turn (a walk step may take what is left
         * of the tick). A walk step back plans the next walk; so does any
         * job of a filesystem without a sampler yet: plan_walks() could
         * not make one while the job was out (place_ensure_sampler()), and
         * nothing else would ask again before the next timed sweep (the
         * first walk of a filesystem with a device, whose UUID is looked
         * up first, waited up to an interval for it). */
        what = j->kind == FS_JOB_WALK || !fs->sampler ? PLAN_WALKS : 0;
        if (status == WORKER_TIMED_OUT) {
                fs_timed_out(fs, j, now);
                tracker_plan(t, what);
                return; /* the thread still holds j */
        }

        fs->busy = false;
        if (j->sampler)
                sampler_return(j->sampler, &fs->seen);
        if (t->walking == fs) {
                t->walking = NULL;
                /* A step that ended under budget (its walk done, or failed)
                 * leaves the rest of the tick to the next filesystem. */
                t->tick_budget = status == WORKER_DONE && j->budget > WALK_STEP_COST ? j->budget - WALK_STEP_COST : 0;
        }
        if (fs->orphaned) {
                fs_job_free(j);
                fs_free(fs);
                return;
        }
        if (status == WORKER_DONE)
                fs_apply_job(fs, j, now);
        if (status != WORKER_CANCELLED)
                tracker_plan(t, what);
        fs_job_free(j);
}

/* The mounts of fs that let atime be written, whose updates a sweep tells
 * apart: the job gets its own copies of their roots, as the mount table
 * may be replaced while it runs. */
static int fs_job_add_writers(struct fs_job *j, const Filesystem *fs) {
        size_t n = MAX(fs->n_mounts, (size_t) 1);

        assert(!j->writers && j->n_writers == 0);
        j->writers = calloc(n, sizeof *j->writers);
        j->writer_ids = calloc(n, sizeof *j->writer_ids);
        j->writer_roots = calloc(n, sizeof *j->writer_roots);
        if (!j->writers || !j->writer_ids || !j->writer_roots)
                return -ENOMEM;
        for (size_t i = 0; i < fs->n_mounts; i++) {
                char *root;

                if (!mount_measured(fs->mounts[i]))
                        continue;
                root = strdup(fs->mounts[i]->entry->root);
                if (!root)
                        return -ENOMEM;
                j->writer_roots[j->n_writers] = root;
                j->writers[j->n_writers] = (struct sampler_writer) {
                        .fs_root = root,
                        .relatime = fs->mounts[i]->entry->policy.atime == ATIME_RELATIME,
                        .nodiratime = fs->mounts[i]->entry->policy.nodiratime,
                };
                j->writer_ids[j->n_writers++] = fs->mounts[i]->id;
        }
        return 0;
}

/* Where the kernel keeps the filesystem's count of transactions, looked
 * for once (procfs and sysfs only: nothing that can hang). */
static int fs_find_counter(Filesystem *fs, const TrackedMount *place) {
        const struct config *c = fs->tracker->config;
        int r;

        if (fs->counter.looked)
                return 0;
        fs->counter.looked = true;
        if (fs->device.kind == DEVICE_NONE)
                return 0;
        r = fscounter_find(c->sysfs_path, c->jbd2_path, place->entry->fstype, fs->device.name, &fs->counter.path);
        if (r < 0)
                return r;
        fs->counter.kind = (FsCounterKind) r;
        log_mount_debug(place->entry->target, "%s: the kernel's count of transactions: %s", place->entry->target,
                        fs->counter.path ? fs->counter.path : "none");
        return 0;
}

/* A reading of a journal's count, for its edges (kcount.h). */
void fsjob_poll_journal(Filesystem *fs, uint64_t now) {
        struct fs_count r;

        (void) fscounter_read(FS_COUNTER_JBD2, fs->counter.path, &r);
        kcount_poll(&fs->counter.edges, &r, now, tracker_now(fs->tracker, CLOCK_REALTIME));
}

/* A sweep's count of a journal: its latest edge, read in the seconds
 * before (on_edge_timer()) and now, where it has one later than the last
 * sweep's and within half an interval (the figure's time stays in the
 * sweep's bucket of history); otherwise read as the sweep begins
 * (fs_work()). */
static void fs_journal_edge(Filesystem *fs, struct fs_job *j) {
        uint64_t now = tracker_now(fs->tracker, CLOCK_MONOTONIC);
        KcountEdge e;

        if (j->counter_kind != FS_COUNTER_JBD2)
                return;
        fsjob_poll_journal(fs, now);
        if (!kcount_edge(&fs->counter.edges, j->commit_s, &e) ||
            (fs->counter.prev_edge.count.valid && e.at <= fs->counter.prev_edge.at) ||
            e.at + fs->tracker->config->sampler_interval_usec / 2 < now)
                return;
        j->edge = e;
        j->count = e.count;
        j->count_mono = e.at;
}

/* A job of kind for fs, through place: what it needs, copied (the mount
 * table may be replaced while it runs). */
static int fs_job_make(Filesystem *fs, FsJobKind kind, const TrackedMount *place, struct fs_job **ret) {
        Tracker *t = fs->tracker;
        struct fs_job *j = calloc(1, sizeof *j);

        if (!j)
                return -ENOMEM;
        *j = (struct fs_job) {
                .fs = fs,
                .kind = kind,
                .mount_id = place->id,
                .target = strdup(place->entry->target),
                .fs_root = strdup(place->entry->root),
                /* Only a first walk gets more than walk_rate. */
                .budget = kind != FS_JOB_WALK ? 0
                          : fs->sampler && fs->seen.whole ? MIN(t->tick_budget, (uint64_t) t->config->walk_rate)
                                                                      : t->tick_budget,
                /* Timer slack and a late job must not skip an interval.
                 * While the first walk runs, and for the first figure,
                 * half an interval is enough (and six of ext4's journal
                 * commits at the default minute: its count can stand). */
                .min_usec = fs->sampler && (!fs->seen.whole || !fs->figured)
                                    ? t->config->sampler_interval_usec / 2
                                    : t->config->sampler_interval_usec / 10 * 9,
                .commit_s = mount_commit_seconds(place->entry->fstype, place->entry->super_options),
                .hook = t->job_hook,
                .hook_userdata = t->job_hook_userdata,
                .clock = t->clock,
                .clock_userdata = t->clock_userdata,
        };
        if (kind == FS_JOB_SWEEP && fs_find_counter(fs, place) == 0 && fs->counter.kind != FS_COUNTER_NONE) {
                j->counter_kind = fs->counter.kind;
                j->counter_path = strdup(fs->counter.path);
                if (!j->counter_path)
                        goto fail;
                fs_journal_edge(fs, j);
        }
        if ((kind == FS_JOB_SWEEP || kind == FS_JOB_LOOK) && streq(place->entry->fstype, "btrfs") &&
            (btrfs_look_prepare(&fs->btrfs, place->entry->super_options, t->config->sysfs_path, &j->btrfs) < 0 ||
             (fs->device.kind != DEVICE_NONE && !(j->devname = strdup(fs->device.name)))))
                goto fail;
        place_want_btrfs(fs, &j->btrfs);
        if (!j->target || !j->fs_root || fs_job_add_writers(j, fs) < 0 ||
            (kind == FS_JOB_IDENTIFY && !(j->devname = strdup(fs->device.name))))
                goto fail;
        *ret = j;
        return 0;
fail:
        fs_job_free(j);
        return -ENOMEM;
}

int fsjob_submit(Filesystem *fs, FsJobKind kind) {
        Tracker *t = fs->tracker;
        const TrackedMount *place = place_of(fs);
        struct fs_job *j;
        int r;

        /* Who the filesystem is comes from its device alone: any mount of
         * it names the job, a file bind mount too. */
        if (!place && kind == FS_JOB_IDENTIFY && fs->n_mounts > 0)
                place = fs->mounts[0];
        if (!place)
                return -ENOENT;
        if (t->shutting_down)
                return -ESHUTDOWN;
        r = fs_job_make(fs, kind, place, &j);
        if (r < 0)
                return r;
        j->bounded = fs_bounded(fs);
        /* Lent before the job may run; its thread's until fs_done(). */
        if (kind == FS_JOB_WALK || kind == FS_JOB_SWEEP || kind == FS_JOB_FINE) {
                assert(fs->sampler); /* made first (place_ensure_sampler()) */
                j->sampler = fs->sampler;
                sampler_lend(j->sampler);
        }
        r = tracker_submit_job(t, j->bounded, fs_owner(fs), fs_work, fs_done, j, t->config->sampler_timeout_usec);
        if (r < 0) {
                if (j->sampler)
                        sampler_return(j->sampler, &fs->seen);
                fs_job_free(j);
                return r;
        }
        fs->busy = true;
        if (j->bounded)
                t->bounded_jobs++;
        else
                t->fs_jobs++;
        if (kind == FS_JOB_SWEEP || kind == FS_JOB_LOOK)
                fs->sweep_pending = false;
        return 0;
}
