/* tracker.c: runtime state of mounts and filesystems, and the schedule of
 * the blocking work done for them (see tracker.h). */
#include "tracker.h"

#include "protocol.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "advisor.h"
#include "fileio.h"
#include "hostload.h"
#include "kcount.h"
#include "log.h"
#include "store.h"
#include "string-table.h"
#include "time-util.h"

static const char *const activity_source_table[_SOURCE_MAX] = {
        [SOURCE_SAMPLE] = "sample",
        [SOURCE_SAMPLE_BOUNDED] = "sample_bounded",
        [SOURCE_KERNEL] = "kernel_count",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(activity_source, ActivitySource);

#define BACKOFF_MIN_USEC (10 * USEC_PER_SEC)
#define BACKOFF_MAX_USEC (3600 * USEC_PER_SEC)
#define WALK_TICK_USEC USEC_PER_SEC
/* What a walk step costs the tick's budget besides its entries (opening
 * the mount, a worker round trip): a thousand one-inode filesystems are
 * walked in a few ticks, not in a thousand. */
#define WALK_STEP_COST 16
/* The shortest time between two walks of a filesystem. */
#define WALK_REFRESH_MIN_USEC (60 * USEC_PER_SEC)
/* How often inodes that moved lately are looked at again (sampler.h). */
#define FINE_SWEEP_USEC USEC_PER_SEC
/* Jobs on untrusted filesystems (mount_is_users(), stalled ones) out at
 * once: they run in the pool's bounded class (worker_submit_bounded()),
 * one at a time, so one out never waits there behind another. */
#define BOUNDED_JOBS_MAX 1

/* A filesystem the tracked mounts are on, by device number: the tracker's
 * alone (others ask through the tracker_mount_*() accessors). */
struct Filesystem {
        dev_t devno;
        Tracker *tracker;
        TrackedMount **mounts; /* tracked mounts of it, rebuilt on update */
        size_t n_mounts;
        Sampler *sampler;
        char *place_root;      /* fs root of the mount the sampler walks */
        bool busy;             /* a walk or sweep job is out (possibly stuck) */
        bool sweep_pending;    /* a sweep is due as soon as it is not busy */
        bool stalled;
        unsigned failures;
        bool failing;          /* the last walk or sweep failed (not timed out): backing off */
        unsigned fail_count;   /* failures in a row, for the log line when it ends */
        uint64_t retry_at;     /* CLOCK_MONOTONIC usec; 0: now */
        uint64_t next_walk;    /* a refresh walk is due; 0: not scheduled */
        uint64_t walk_started; /* CLOCK_MONOTONIC usec the current walk began */
        uint64_t walk_took;    /* usec the last finished walk took */
        bool unexplained;      /* the kernel counted far more than the last sweep's sample can account for */
        bool count_jumped;     /* and more than twice its count of the interval before: something began */
        double count_prev;     /* the kernel's count over the last interval, per minute (its lower bound); <0: none */
        double count_ratio;    /* its transactions per update the sample sees (KcountVerdict.ratio); 0: none */
        unsigned count_ratio_age; /* intervals since that ratio was learnt (KcountVerdict.ratio_age) */
        bool walk_queued;
        bool orphaned;         /* no longer in the table; freed when its job returns */
        struct sweep_result last;
        DeviceInfo device;
        DeviceMeter disk;      /* its device's writes (device.h) */
        struct {               /* the sampler as its last job left it, for progress */
                bool walking, sampled;
                bool whole;        /* a sample of the whole filesystem (sampler_whole()) */
                uint64_t walked, inodes;
                uint64_t baseline_at; /* on the tracker's clock, usec; 0: no baseline */
        } seen;
        struct {               /* the kernel's count of its transactions (fscounter.h) */
                bool looked;       /* where it is kept was looked for */
                FsCounterKind kind;
                char *path;
                struct fs_count prev; /* at the last sweep */
                KcountEdge prev_edge; /* jbd2: prev, where it was read at an edge of a commit */
                uint64_t prev_mono;   /* CLOCK_MONOTONIC usec prev was read at (at its edge, or at its sweep) */
                KcountEdges edges;    /* jbd2: its readings before sweeps (kcount_poll()) */
        } counter;
        BtrfsMeter btrfs;      /* btrfs only: its snapshots and the bytes atime un-shares */
        bool probed;           /* a probe ran on one of its mounts since the last sweep */
        bool figured;          /* a sweep of this sampler measured an interval: the first figure came */
        uint64_t first_asked;  /* the baseline (seen.baseline_at) whose first figure's sweep was asked for */
        bool skip_said;        /* directories a walk had to skip were logged */
        bool identified;       /* the UUID lookup is done (whatever it found) */
        char *uuid;            /* the filesystem's UUID, if it has one */
        uint64_t place_subvol; /* btrfs: the subvolume to sample, as the last look chose it (0: none) */
        struct btrfs_place place_rank; /* and its rank */
        int place_said;        /* btrfs: why the place was chosen, as last logged (fs_say_place()); 0: not yet */
        uint64_t place_said_subvol;
};

struct Tracker {
        sd_event *event;
        const struct config *config;
        WorkerPool *pool;
        TrackedMount **mounts; /* sorted by id */
        size_t n_mounts;
        Filesystem **fss; /* sorted by devno */
        size_t n_fss;
        sd_event_source *sweep_timer;
        sd_event_source *probe_timer;
        sd_event_source *walk_timer;
        sd_event_source *fine_timer;
        size_t fine_next;             /* the filesystem the next fine pass offers a job first */
        sd_event_source *first_timer; /* the first figure's sweep: half an interval after a baseline */
        sd_event_source *edge_timer;  /* journals' counts read in the seconds before a sweep */
        uint64_t edge_until;          /* CLOCK_MONOTONIC usec: the sweep they are read for */
        uint64_t first_next;          /* CLOCK_MONOTONIC usec: the earliest first figure's sweep; 0: none */
        Filesystem *walking; /* whose walk step is out */
        size_t walk_cursor;  /* round robin: where the next walk step looks first */
        unsigned fs_jobs;    /* walk and sweep jobs out, stuck ones excluded */
        unsigned probe_jobs; /* probe jobs out, stuck ones excluded */
        unsigned bounded_jobs; /* jobs out in the pool's bounded class, stuck ones excluded */
        LogRatelimit fail_log; /* failures starting and ending: mount churn must not flood the log */
        uint64_t last_walk_step; /* CLOCK_MONOTONIC usec: when the current tick began */
        uint64_t tick_budget;    /* walk entries left to this tick */
        size_t sweep_cursor;     /* round robin: where the next sweep is looked for */
        /* What kick() may find to do; cleared when it found nothing more. */
        bool maybe_unidentified, maybe_sweeps, walks_changed, firsts_changed;
        TrackerHooks hooks;
        bool disk_warned;
        bool shutting_down;  /* no new jobs: the pool is being torn down */
        tracker_clock_fn clock; /* NULL: clock_gettime() */
        void *clock_userdata;
        tracker_job_hook_fn job_hook; /* a test's (tracker_set_job_hook()) */
        void *job_hook_userdata;
        HostLoad load;       /* the host's CPU time at the last look, for idle_walk_rate */
};

struct probe_waiter {
        tracker_probe_cb cb;
        void *userdata;
        struct probe_waiter *next;
};

struct probe_job {
        Tracker *tracker;
        bool bounded;       /* submitted in the pool's bounded class */
        int mount_id;
        char *target;
        char *dir;          /* where to probe first; NULL: the mount point */
        struct probe_result result;
        struct probe_waiter *waiters;
};

typedef enum FsJobKind {
        FS_JOB_WALK,
        FS_JOB_SWEEP,
        FS_JOB_FINE,
        FS_JOB_IDENTIFY,
        FS_JOB_LOOK, /* a btrfs no mount of which is sampled: looked at alone (fs_looks_only()) */
} FsJobKind;

struct fs_job {
        Filesystem *fs;
        FsJobKind kind;
        bool bounded;  /* submitted in the pool's bounded class */
        char *target;
        char *fs_root;
        int mount_id;
        uint64_t budget;
        struct sampler_writer *writers;
        char **writer_roots; /* the writers' fs_root, owned here */
        int *writer_ids;
        size_t n_writers;
        int r;
        struct sweep_result res;
        uint64_t at;  /* CLOCK_REALTIME usec when the sweep ran */
        uint64_t end_at; /* and when its interval ended: the count's and the interval clock's reading */
        uint64_t count_mono; /* CLOCK_MONOTONIC usec the count was read at (its edge's, or the sweep's) */
        uint64_t min_usec; /* the shortest interval the sweep measures */
        double commit_s;
        FsCounterKind counter_kind; /* FS_JOB_SWEEP: the kernel's count, read as the sweep begins, */
        KcountEdge edge;            /* or, for a journal, at its latest edge before (kcount_edge()) */
        tracker_clock_fn clock;     /* FS_JOB_SWEEP: the tracker's, for the sweep's time */
        void *clock_userdata;
        char *counter_path;
        struct fs_count count;
        tracker_job_hook_fn hook; /* the tracker's when the job was made: the thread reads no Tracker */
        void *hook_userdata;
        char *devname; /* FS_JOB_IDENTIFY, and btrfs sweeps and looks: the block device */
        char *uuid;    /* and what it found */
        BtrfsLook btrfs; /* FS_JOB_SWEEP on btrfs, and FS_JOB_LOOK: look at its subvolume and bytes */
};

/* The tracker's time (tracker_set_clock()). */
static uint64_t tracker_now(const Tracker *t, clockid_t clock) {
        return t->clock ? t->clock(clock, t->clock_userdata) : now_usec(clock);
}

/* A time on the tracker's clock as the system's, for a timer (never 0:
 * sd-event reads that as "off"). A clock of the caller's moves only when
 * it says so (tracker_set_clock()): what is due on it fires at once, what
 * is not never fires by itself (USEC_INFINITY: sd-event leaves it unarmed)
 * and is re-armed by the replan of the next move. */
static uint64_t timer_time(const Tracker *t, uint64_t when) {
        if (!t->clock)
                return MAX(when, (uint64_t) 1);
        return when <= tracker_now(t, CLOCK_MONOTONIC) ? 1 : USEC_INFINITY;
}

static uint64_t backoff(unsigned failures) {
        uint64_t b = BACKOFF_MIN_USEC;

        for (unsigned i = 1; i < failures && b < BACKOFF_MAX_USEC; i++)
                b *= 2;
        return MIN(b, BACKOFF_MAX_USEC);
}

static unsigned max_jobs(const Tracker *t) {
        return 2 * t->config->worker_threads;
}

bool tracker_mount_writes_atime(const TrackedMount *m) {
        return m->entry->policy.atime != ATIME_NOATIME && !m->entry->policy.read_only;
}

bool tracker_mount_sampled(const TrackedMount *m) {
        return !m->root_not_dir && m->entry->reachable;
}

/* A mount whose atime updates a sweep measures. */
static bool mount_measured(const TrackedMount *m) {
        return tracker_mount_sampled(m) && tracker_mount_writes_atime(m);
}

static bool fs_needs_sampling(const Filesystem *fs) {
        for (size_t i = 0; i < fs->n_mounts; i++)
                if (mount_measured(fs->mounts[i]))
                        return true;
        return false;
}

/* A mount some user other than root made and serves: FUSE's user_id=
 * (fusermount with user_allow_other lets it be seen by all). What it does
 * is that user's: its jobs get a bounded share of the workers, and its
 * history gives way to the system's. */
static uint32_t mount_owner(const MountEntry *e) {
        const char *o;

        if (!e->fstype || !startswith(e->fstype, "fuse") || !e->super_options)
                return 0;
        for (o = e->super_options; (o = strstr(o, "user_id=")); o += 8)
                if (o == e->super_options || o[-1] == ',')
                        return (uint32_t) strtoul(o + 8, NULL, 10);
        return 0;
}

bool tracker_mount_is_users(const MountEntry *e) {
        return mount_owner(e) != 0;
}

/* Who serves a filesystem: the user of a mount of it that a user made,
 * else root. Threads stuck on its jobs count against that owner's share
 * (worker_submit_bounded()). */
static uint32_t fs_owner(const Filesystem *fs) {
        for (size_t i = 0; i < fs->n_mounts; i++) {
                uint32_t o = mount_owner(fs->mounts[i]->entry);

                if (o != 0)
                        return o;
        }
        return 0;
}

static bool fs_bounded(const Filesystem *fs) {
        return fs->stalled || fs_owner(fs) != 0; /* it keeps timing out, or a user serves it */
}

static bool mount_bounded(const TrackedMount *m) {
        return m->probe.stalled || tracker_mount_is_users(m->entry) || (m->fs && fs_bounded(m->fs));
}

/* Submits a job in the class its filesystem deserves; the caller counts
 * it as *bounded says. */
static int submit_job(Tracker *t, bool bounded, uint32_t owner, worker_fn fn, worker_done_fn done, void *arg,
                      uint64_t timeout) {
        if (!bounded)
                return worker_submit(t->pool, fn, done, arg, timeout);
        if (t->bounded_jobs >= BOUNDED_JOBS_MAX)
                return -EBUSY;
        return worker_submit_bounded(t->pool, fn, done, arg, timeout, owner);
}

bool tracker_mount_stalled(const TrackedMount *m) {
        return m->probe.stalled || (m->fs && m->fs->stalled);
}

bool tracker_mount_activity(const TrackedMount *m, struct activity *ret) {
        if (!tracker_mount_writes_atime(m)) {
                /* No atime can be written through this mount: exactly zero. */
                *ret = (struct activity) {
                        .have = true,
                        .est = { .exact = true },
                        .updates = { .exact = true },
                        .seconds = m->fs && m->fs->last.valid ? m->fs->last.seconds : 0,
                        .population = m->fs ? m->fs->last.population : 0,
                };
                return true;
        }
        if (!tracker_mount_sampled(m))
                return false; /* nothing is known of what it writes */
        *ret = m->activity;
        return m->activity.have;
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

static TrackedMount *find_mount(Tracker *t, int id) {
        size_t i = t ? find_mount_index(t, id) : 0;

        return t && i < t->n_mounts ? t->mounts[i] : NULL;
}

const TrackedMount *tracker_find(const Tracker *t, int mount_id) {
        size_t i = t ? find_mount_index(t, mount_id) : 0;

        return t && i < t->n_mounts ? t->mounts[i] : NULL;
}

static bool on_btrfs(const TrackedMount *m) {
        return m->fs && m->entry->fstype && streq(m->entry->fstype, "btrfs");
}

bool tracker_mount_btrfs_model(const TrackedMount *m, BtrfsModel *ret) {
        if (!on_btrfs(m))
                return false;
        *ret = m->fs->btrfs.model;
        return true;
}

void tracker_mount_btrfs_seed(const TrackedMount *m, const BtrfsModel *saved) {
        if (on_btrfs(m))
                btrfs_meter_seed(&m->fs->btrfs, saved);
}

/* Whether any mount of the filesystem lets atime be written: where none
 * does, it is never sampled (a btrfs is looked at alone: fs_looks_only()). */
static bool fs_writes_atime(const Filesystem *fs) {
        for (size_t i = 0; i < fs->n_mounts; i++)
                if (tracker_mount_writes_atime(fs->mounts[i]))
                        return true;
        return false;
}

bool tracker_mount_btrfs(const TrackedMount *m, struct btrfs_status *ret) {
        if (!on_btrfs(m))
                return false;
        btrfs_meter_status(&m->fs->btrfs, m->entry->super_options, ret);
        if (!fs_writes_atime(m->fs))
                btrfs_status_no_atime(ret);
        return true;
}

const DeviceInfo *tracker_mount_device(const TrackedMount *m) {
        assert(m);
        return m->fs && m->fs->device.kind != DEVICE_NONE ? &m->fs->device : NULL;
}

bool tracker_mount_device_rate(const TrackedMount *m, struct device_rate *ret) {
        assert(m);
        assert(ret);
        if (!m->fs || !m->fs->disk.rate.valid)
                return false;
        *ret = m->fs->disk.rate;
        return true;
}

bool tracker_mount_device_totals(const TrackedMount *m, DiskStat *ret) {
        assert(m);
        assert(ret);
        if (!m->fs || m->fs->disk.last_at == 0)
                return false;
        *ret = m->fs->disk.last;
        return true;
}

uint64_t tracker_mount_population(const TrackedMount *m) {
        assert(m);
        return m->fs ? m->fs->last.population : 0;
}

void tracker_set_hooks(Tracker *t, const TrackerHooks *hooks) {
        t->hooks = *hooks;
}

const char *tracker_mount_key(const TrackedMount *m) {
        return m->key;
}

/* The mount's key from its entry and its filesystem's identity, or none
 * while that is not known (or without memory: asked again at the next
 * change of the table). */
static void mount_set_key(TrackedMount *m) {
        const MountEntry *e = m->entry;

        free(m->key);
        m->key = NULL;
        if (m->fs && m->fs->identified)
                (void) store_key_format(m->fs->uuid, e->source, e->fstype, e->root, e->target, &m->key);
}

static void mount_free(TrackedMount *m) {
        if (!m)
                return;
        free(m->key);
        free(m);
}

/* What it shows of a mount may have changed: whoever serves it from a
 * cache is told. */
static void tracker_changed(Tracker *t) {
        if (t->hooks.changed)
                t->hooks.changed(t->hooks.userdata);
}

unsigned tracker_stuck_threads(const Tracker *t) {
        return t ? worker_pool_stuck(t->pool) : 0;
}

unsigned tracker_jobs_out(const Tracker *t) {
        return t->fs_jobs + t->probe_jobs + t->bounded_jobs;
}

/* ---------------------------------------------------------------- probes */

static void probe_job_free(struct probe_job *j) {
        while (j->waiters) {
                struct probe_waiter *w = j->waiters;
                j->waiters = w->next;
                free(w);
        }
        free(j->target);
        free(j->dir);
        free(j);
}

static void probe_work(void *arg, const atomic_bool *cancel) {
        struct probe_job *j = arg;
        const char *dir = j->target;

        /* A configured directory that this mount lacks means the mount point. */
        if (j->dir && access(j->dir, F_OK) == 0)
                dir = j->dir;
        probe_run(dir, j->mount_id, &j->result);
        if (dir != j->target)
                j->result.not_directory = false; /* the configured directory is a file, not the mount's root */
}

static void rearm_probe_timer(Tracker *t);

static void probe_notify(struct probe_job *j, const TrackedMount *m) {
        for (struct probe_waiter *w = j->waiters; w; w = w->next)
                w->cb(m, &j->result, w->userdata);
        while (j->waiters) {
                struct probe_waiter *w = j->waiters;
                j->waiters = w->next;
                free(w);
        }
}

/* A probe missed its deadline: the mount is stalled, probed again after
 * its back-off; the waiters hear so now. */
static void probe_timed_out(Tracker *t, TrackedMount *m, struct probe_job *j, uint64_t now) {
        j->result = (struct probe_result) { .at = tracker_now(t, CLOCK_REALTIME) };
        snprintf(j->result.reason, sizeof j->result.reason, "timed out after %.1fs: the filesystem does not answer",
                 (double) t->config->probe_timeout_usec / 1e6);
        if (!m)
                return;
        m->probe.stalled = true;
        m->probe.failures++;
        m->probe.next_due = now + backoff(m->probe.failures);
        /* Said when it starts; probe_apply() says when it ends, with the
         * count: not at every attempt. */
        if (m->probe.failures == 1 && log_ratelimit_test(&t->fail_log, LOG_WARNING))
                log_mount_warning(m->entry->target, "%s: probe timed out; marked stalled, retrying with back-off up to an hour",
                                  m->entry->target);
}

/* Why the mount is not probed, in *r (false: it is). */
static bool unprobed_result(const Tracker *t, const TrackedMount *m, struct probe_result *r) {
        const char *why;

        if (m->root_not_dir)
                why = PROBE_REASON_NOT_DIRECTORY;
        else if (!m->entry->reachable)
                why = PROBE_REASON_OVERMOUNTED;
        else if (m->entry->policy.read_only)
                why = "read-only mount: no atime can be written, none was probed";
        else
                return false;
        *r = (struct probe_result) { .at = tracker_now(t, CLOCK_REALTIME), .not_directory = m->root_not_dir };
        snprintf(r->reason, sizeof r->reason, "%s", why);
        return true;
}

/* A mount found to have a file for its root: said once, and never probed,
 * walked or sampled again (its id cannot come to name a directory). */
static void mount_mark_not_dir(Tracker *t, TrackedMount *m) {
        if (m->root_not_dir)
                return;
        m->root_not_dir = true;
        m->activity = (struct activity) {};
        m->probe.have = true;
        m->probe.stalled = false;
        m->probe.failures = m->probe.fail_count = 0;
        m->probe.result = (struct probe_result) { .at = tracker_now(t, CLOCK_REALTIME), .not_directory = true };
        snprintf(m->probe.result.reason, sizeof m->probe.result.reason, "%s", PROBE_REASON_NOT_DIRECTORY);
        t->walks_changed = true;
        tracker_changed(t);
        log_mount_info(m->entry->target, "%s: %s", m->entry->target, PROBE_REASON_NOT_DIRECTORY);
}

/* A probe's result taken in; said in the log when it changed: a probe
 * that cannot verify the policy once when that starts, and once when it
 * ends, with how many probes it took; one that timed out likewise. */
static void probe_apply(Tracker *t, TrackedMount *m, const struct probe_result *r, uint64_t now) {
        bool changed = !m->probe.have || m->probe.result.verified != r->verified ||
                       m->probe.result.effective != r->effective;
        unsigned timeouts = m->probe.stalled ? m->probe.failures : 0;

        if (r->not_directory)
                mount_mark_not_dir(t, m);
        m->probe.running = false;
        if (unprobed_result(t, m, &m->probe.result)) {
                /* Its root is a file, or it was over-mounted while the
                 * probe ran: what it found is not the mount's. */
                m->probe.have = true;
                m->probe.stalled = false;
                m->probe.failures = 0;
                m->probe.next_due = now + t->config->probe_interval_usec;
                return;
        }
        m->probe.stalled = false;
        m->probe.failures = 0;
        m->probe.have = true;
        m->probe.result = *r;
        m->probe.next_due = now + t->config->probe_interval_usec;
        if (timeouts > 0 && log_ratelimit_test(&t->fail_log, LOG_INFO))
                log_mount_info(m->entry->target, "%s: probe answers again after %u timed out probe%s", m->entry->target,
                               timeouts, timeouts == 1 ? "" : "s");
        if (!r->verified) {
                if (m->probe.fail_count++ == 0 && log_ratelimit_test(&t->fail_log, LOG_INFO))
                        log_mount_info(m->entry->target, "%s: atime policy not verified: %s", m->entry->target, r->reason);
                return;
        }
        if (m->probe.fail_count > 0 && log_ratelimit_test(&t->fail_log, LOG_INFO))
                log_mount_info(m->entry->target, "%s: atime policy verified after %u probe%s that could not", m->entry->target,
                               m->probe.fail_count, m->probe.fail_count == 1 ? "" : "s");
        m->probe.fail_count = 0;
        if (!changed)
                return;
        if (r->effective != m->entry->policy.atime)
                log_mount_warning(m->entry->target, "%s: the mount table says %s but the probe finds %s in force", m->entry->target,
                            atime_mode_to_string(m->entry->policy.atime), atime_mode_to_string(r->effective));
        else
                log_mount_debug(m->entry->target, "%s: probe verified %s", m->entry->target, atime_mode_to_string(r->effective));
}

static void probe_done(void *arg, WorkerStatus status) {
        struct probe_job *j = arg;
        Tracker *t = j->tracker;
        TrackedMount *m = find_mount(t, j->mount_id);
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        tracker_changed(t);
        if (m && m->fs && status != WORKER_CANCELLED)
                m->fs->probed = true; /* its writes are no atime updates of anyone's */
        if (status != WORKER_LATE) {
                if (j->bounded)
                        t->bounded_jobs--;
                else
                        t->probe_jobs--;
        }
        if (m && m->probe.job == j && status != WORKER_TIMED_OUT)
                m->probe.job = NULL;

        switch (status) {
        case WORKER_TIMED_OUT:
                probe_timed_out(t, m, j, now);
                probe_notify(j, m);
                rearm_probe_timer(t);
                return; /* the thread still holds j: freed when it comes back */
        case WORKER_LATE:
                /* The hung filesystem answered at last; probe again soon. */
                if (m) {
                        m->probe.running = false;
                        m->probe.next_due = MIN(m->probe.next_due, now + BACKOFF_MIN_USEC);
                }
                probe_job_free(j);
                rearm_probe_timer(t);
                return;
        case WORKER_EXPIRED:
                /* Every thread was busy (stuck on other filesystems, or a
                 * loaded host) until its deadline: it never ran. */
                if (m) {
                        m->probe.running = false;
                        m->probe.next_due = MIN(m->probe.next_due, now + BACKOFF_MIN_USEC);
                }
                snprintf(j->result.reason, sizeof j->result.reason, "not probed: no worker thread was free in time");
                probe_notify(j, m);
                probe_job_free(j);
                rearm_probe_timer(t);
                return;
        case WORKER_CANCELLED:
                snprintf(j->result.reason, sizeof j->result.reason, "atimed is shutting down");
                probe_notify(j, m);
                probe_job_free(j);
                return;
        case WORKER_DONE:
                break;
        }
        if (m)
                probe_apply(t, m, &j->result, now);
        probe_notify(j, m);
        probe_job_free(j);
        rearm_probe_timer(t);
}

static int probe_submit(Tracker *t, TrackedMount *m, struct probe_waiter *waiter) {
        const struct mount_config *mc = config_find_mount(t->config, m->entry->target);
        struct probe_job *j;
        bool oom = false;
        int r;

        if (t->shutting_down)
                return -ESHUTDOWN;
        j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        j->tracker = t;
        j->mount_id = m->id;
        j->target = strdup(m->entry->target);
        if (mc && mc->probe_dir)
                oom = !(j->dir = strdup(mc->probe_dir));
        else if (t->config->probe_dir)
                oom = asprintf(&j->dir, "%s/%s", streq(m->entry->target, "/") ? "" : m->entry->target,
                               t->config->probe_dir) < 0;
        if (!j->target || oom) {
                j->dir = oom ? NULL : j->dir;
                probe_job_free(j);
                return -ENOMEM;
        }
        j->waiters = waiter;
        j->bounded = mount_bounded(m);
        r = submit_job(t, j->bounded, m->fs ? fs_owner(m->fs) : mount_owner(m->entry), probe_work, probe_done, j,
                       t->config->probe_timeout_usec);
        if (r < 0) {
                j->waiters = NULL;
                probe_job_free(j);
                return r;
        }
        m->probe.running = true;
        m->probe.job = j;
        if (m->fs)
                m->fs->probed = true;
        if (j->bounded)
                t->bounded_jobs++;
        else
                t->probe_jobs++;
        return 0;
}

static void run_due_probes(Tracker *t) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        for (size_t i = 0; i < t->n_mounts && t->probe_jobs < max_jobs(t); i++) {
                TrackedMount *m = t->mounts[i];

                if (m->probe.running || m->probe.next_due > now)
                        continue;
                if (unprobed_result(t, m, &m->probe.result)) {
                        m->probe.have = true;
                        m->probe.stalled = false;
                        m->probe.next_due = now + t->config->probe_interval_usec;
                        continue;
                }
                if (probe_submit(t, m, NULL) < 0)
                        m->probe.next_due = now + BACKOFF_MIN_USEC;
        }
}

static int on_probe_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;

        tracker_changed(t);
        run_due_probes(t);
        rearm_probe_timer(t);
        return 0;
}

static void rearm_probe_timer(Tracker *t) {
        uint64_t next = UINT64_MAX;

        if (t->probe_jobs < max_jobs(t))
                for (size_t i = 0; i < t->n_mounts; i++)
                        if (!t->mounts[i]->probe.running)
                                next = MIN(next, t->mounts[i]->probe.next_due);
        if (next == UINT64_MAX) {
                (void) sd_event_source_set_enabled(t->probe_timer, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_time(t->probe_timer, timer_time(t, next));
        (void) sd_event_source_set_enabled(t->probe_timer, SD_EVENT_ONESHOT);
}

int tracker_probe_now(Tracker *t, int mount_id, tracker_probe_cb cb, void *userdata) {
        TrackedMount *m = find_mount(t, mount_id);
        struct probe_waiter *w;
        int r;

        if (t)
                tracker_changed(t);
        if (!m)
                return -ENOENT;
        {
                struct probe_result res;

                if (unprobed_result(t, m, &res)) {
                        cb(m, &res, userdata);
                        return 0;
                }
        }
        if (m->probe.running && m->probe.stalled) {
                struct probe_result res = m->probe.result;

                res.verified = false;
                snprintf(res.reason, sizeof res.reason, "stalled: an earlier probe is still waiting on the filesystem");
                cb(m, &res, userdata);
                return 0;
        }
        w = calloc(1, sizeof *w);
        if (!w)
                return -ENOMEM;
        *w = (struct probe_waiter) { .cb = cb, .userdata = userdata };
        if (m->probe.running && m->probe.job) {
                /* A probe is under way: its result answers this request too. */
                w->next = m->probe.job->waiters;
                m->probe.job->waiters = w;
                return 0;
        }
        r = probe_submit(t, m, w);
        if (r < 0) {
                free(w);
                return r;
        }
        return 0;
}

/* ---------------------------------------------------------------- walks and sweeps */

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
                first = fs->sampler && !(fs->busy ? fs->seen.whole : sampler_whole(fs->sampler)) &&
                        fs_needs_sampling(fs);
        }
        if (!first) {
                hostload_forget(&t->load); /* a window begins at the next first walk */
                return c->walk_rate;
        }
        return hostload_look(&t->load, c->stat_path) ? c->idle_walk_rate : c->walk_rate;
}

static void fs_free(Filesystem *fs) {
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

/* The subvolume a btrfs mount shows (subvolid=); 0: unknown, or no
 * memory to tell. */
static uint64_t mount_subvol(const TrackedMount *m) {
        _cleanup_free_ char *path = NULL;
        uint64_t id = 0;

        return btrfs_subvol_from_options(m->entry->super_options, &id, &path) < 0 ? 0 : id;
}

/* The mount the sampler reaches the filesystem through: on btrfs, one of
 * the subvolume fs_choose_btrfs_place() chose (where atime costs space,
 * and what the model prices); else the one showing most of it (the
 * shortest root), the oldest on a tie; never one whose root is a file or
 * whose path leads to another mount. */
static const TrackedMount *fs_place_ranked(const Filesystem *fs, struct btrfs_place *ret) {
        const TrackedMount *best = NULL;
        struct btrfs_place best_rank = {}, r;

        for (size_t i = 0; i < fs->n_mounts; i++) {
                const TrackedMount *m = fs->mounts[i];

                if (!tracker_mount_sampled(m))
                        continue;
                r = (struct btrfs_place) { .root_len = strlen(m->entry->root) };
                if (fs->place_subvol != 0 && mount_subvol(m) == fs->place_subvol) {
                        r = fs->place_rank;
                        r.root_len = strlen(m->entry->root);
                }
                if (!best || btrfs_place_better(&r, &best_rank)) {
                        best = m;
                        best_rank = r;
                }
        }
        if (ret)
                *ret = best_rank;
        return best;
}

/* On btrfs, after each look: the subvolume to sample, of those mounted
 * (btrfs_place_rank(), by the look's facts), kept for fs_place(), which
 * runs often and must not go through every subvolume each time. A failed
 * look leaves the choice where it was, rather than moving the place back
 * and forth. */
static void fs_choose_btrfs_place(Filesystem *fs) {
        const struct btrfs_facts *f = &fs->btrfs.status.facts;
        struct btrfs_place best = {}, r;
        uint64_t best_id = 0;

        if (!fs->btrfs.status.have)
                return;
        for (size_t i = 0; i < fs->n_mounts && f->sight == BTRFS_SIGHT_ALL; i++) {
                const TrackedMount *m = fs->mounts[i];
                uint64_t id;

                /* Mounted noatime or read-only only, reads of it cost nothing. */
                if (!mount_measured(m) || (id = mount_subvol(m)) == 0)
                        continue;
                btrfs_place_rank(f, id, strlen(m->entry->root), &r);
                if (r.shares && (best_id == 0 || btrfs_place_better(&r, &best))) {
                        best = r;
                        best_id = id;
                }
        }
        fs->place_subvol = best_id;
        fs->place_rank = best;
}

static const TrackedMount *fs_place(const Filesystem *fs) {
        return fs_place_ranked(fs, NULL);
}

/* A btrfs no mount of which is sampled (each noatime or read-only): its
 * snapshots and metadata are looked at all the same, at the sweeps'
 * cadence, in a job of its own (FS_JOB_LOOK: no walk, no sweep), with the
 * sweeps' deadline and back-off. */
static bool fs_looks_only(const Filesystem *fs) {
        const TrackedMount *place;

        return !fs->orphaned && !fs_needs_sampling(fs) && (place = fs_place(fs)) && place->entry->fstype &&
               streq(place->entry->fstype, "btrfs");
}

/* On btrfs, once the first look is back and whenever the choice changes:
 * which subvolume is sampled, and why (atimed(8), BTRFS). */
static void fs_say_place(Filesystem *fs, const TrackedMount *place, const struct btrfs_place *r) {
        const struct btrfs_facts *f = &fs->btrfs.status.facts;
        const char *target = place->entry->target;
        uint64_t id = mount_subvol(place);
        int why = !fs->btrfs.status.have ? 0 : r->shares ? 1 : f->sight == BTRFS_SIGHT_ALL ? 2 : 3;

        if (why == 0 || (fs->place_said == why && fs->place_said_subvol == id))
                return;
        fs->place_said = why;
        fs->place_said_subvol = id;
        if (why == 1)
                log_mount_info(target, "%s: btrfs sampled through subvolume %llu (root %s): %u snapshot%s share its "
                               "tree; reads of the filesystem's other subvolumes count only in measured intervals",
                               target, (unsigned long long) id, place->entry->root, r->snapshots,
                               r->snapshots == 1 ? "" : "s");
        else if (why == 2)
                log_mount_info(target, "%s: btrfs sampled through subvolume %llu (root %s), the shortest root: no "
                               "subvolume mounted here has snapshots sharing its tree", target,
                               (unsigned long long) id, place->entry->root);
        else
                log_mount_info(target, "%s: btrfs sampled through subvolume %llu (root %s), the shortest root: the "
                               "snapshots of the filesystem's other subvolumes cannot be seen (atimed(8), BTRFS)",
                               target, (unsigned long long) id, place->entry->root);
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
                j->r = sampler_walk_step(j->fs->sampler, &pl, &j->budget, cancel);
        else if (j->kind == FS_JOB_FINE)
                j->r = sampler_fine_sweep(j->fs->sampler, &pl, cancel);
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

                j->r = sampler_sweep(j->fs->sampler, &pl, j->writers, j->n_writers, now, j->min_usec, cancel, &j->res);
                if (j->btrfs.on)
                        btrfs_look_since(&j->btrfs, j->fs->sampler);
                j->at = j->clock ? j->clock(CLOCK_REALTIME, j->clock_userdata) : now_usec(CLOCK_REALTIME);
        }
}

static void kick(Tracker *t);
static void plan_firsts(Tracker *t);
static void arm_edge_timer(Tracker *t);
static void rearm_walk_timer(Tracker *t, uint64_t when);
static void walk_next(Tracker *t, uint64_t now);
static uint64_t first_measuring_sweep(const Tracker *t, uint64_t since);

static void estimate_add(struct estimate *sum, const struct estimate *e) {
        sum->per_min += e->per_min;
        sum->lo += e->lo;
        sum->hi += e->hi;
        sum->exact = sum->exact && e->exact;
}

/* A writer's figures: each stratum of the sample estimated apart, then
 * added up (their bounds too: conservative). */
static int stratified_estimates(const struct sweep_result *res, const struct sampler_writer *w, struct activity *a) {
        /* A first walk's sample so far: the inodes it has not seen yet are
         * taken as like the rest stratum for the figure, and as anything
         * from none to all hot for its interval (estimate_unseen()); the
         * fresh and hot strata are what the walk found read, not scaled. */
        double unseen = res->partial && res->used_inodes > res->population
                                ? (double) (res->used_inodes - res->population) : 0;
        double tick_s = res->tick_ns > 0 ? (double) res->tick_ns / 1e9 : 0.004;
        bool any = false;

        a->est = a->updates = (struct estimate) { .exact = true };
        a->coverage = unseen > 0 ? (double) res->population / (double) res->used_inodes : 1;
        for (unsigned k = 0; k < _STRATUM_MAX; k++) {
                uint64_t n = res->stratum_sample[k], pop = MAX(res->stratum_population[k], n);
                double scale = k == STRATUM_REST && unseen > 0 ? (pop + unseen) / (double) pop : 1;
                struct estimate e;

                if (n == 0)
                        continue;
                if (estimate_activity(fmin(w->changed[k], (double) n), n, pop, res->seconds, &e) < 0)
                        return -EINVAL;
                if (k == STRATUM_REST)
                        estimate_unseen(&e, (double) pop, unseen, 60.0 / res->seconds);
                estimate_add(&a->est, &e);
                if (estimate_updates(&w->updates[k], n, pop, res->seconds, &e) < 0)
                        return -EINVAL;
                if (k == STRATUM_REST)
                        estimate_unseen(&e, (double) pop, unseen, 60.0 / tick_s);
                estimate_add(&a->updates, &e);
                a->writebacks_per_min += scale * estimate_per_min(w->updates[k].writebacks, n, pop, res->seconds);
                a->sets_per_min += scale * estimate_per_min(res->sets[k], n, pop, res->seconds);
                any = true;
        }
        a->tick_ns = res->tick_ns;
        return any ? 0 : -EINVAL;
}

/* Whether the filesystem did nothing but atime updates over the interval
 * that ended with 'res', as far as atimed can tell, its free space aside:
 * no sampled inode's mtime or ctime moved, no inode was allocated or
 * freed, and no probe of atimed's own wrote there. */
static bool fs_only_atime_but_space(const Filesystem *fs, const struct sweep_result *prev,
                                    const struct sweep_result *res) {
        return !fs->probed && res->modified == 0 && prev->have_statfs && res->have_statfs &&
               prev->free_inodes == res->free_inodes;
}

/* The same, and nothing was allocated or freed. (On btrfs an atime update
 * itself allocates, where it un-shares metadata from a snapshot: there
 * the data's bytes stand for the space instead, btrfs_interval().) */
static bool fs_only_atime(const Filesystem *fs, const struct sweep_result *prev, const struct sweep_result *res) {
        return fs_only_atime_but_space(fs, prev, res) && prev->free_blocks == res->free_blocks;
}

/* The kernel's count of the filesystem's transactions over the interval,
 * against the sample's figures for its n writers (acts): kcount.h. */
static void fs_apply_count(Filesystem *fs, const struct fs_job *j, const struct fs_count *before,
                           const KcountEdge *before_edge, uint64_t before_mono, const struct sweep_result *prev,
                           struct activity *acts, size_t n) {
        /* A journal's count between two edges: the handles made between
         * them, the figure's interval where it is the figure. */
        bool edges = j->edge.count.valid && before_edge->count.valid && j->edge.at > before_edge->at;
        KcountInput in = {
                .kind = j->counter_kind,
                .seconds = j->res.seconds,
                .commit_s = j->commit_s,
                .lazytime = fs->n_mounts > 0 && fs->mounts[0]->entry->policy.lazytime,
                .pure = fs_only_atime(fs, prev, &j->res),
                .prev_lo = fs->count_prev,
                .ratio = fs->count_ratio,
                .ratio_age = fs->count_ratio_age,
                .edges = edges,
        };
        KcountVerdict v;

        if (edges) {
                in.seconds = (double) (j->edge.at - before_edge->at) / 1e6;
                in.edge_lag = (double) (j->edge.lag + before_edge->lag) / 1e6;
        } else if (j->counter_kind == FS_COUNTER_JBD2 && (j->edge.count.valid || before_edge->count.valid) &&
                   before_mono > 0 && j->count_mono > before_mono)
                /* One end at an edge (up to EDGE_WINDOW_USEC before its
                 * sweep), the other read at its sweep: the count spans the
                 * stretch between the two readings, not the sweeps'
                 * interval (a quarter shorter or longer at 30 s). */
                in.seconds = (double) (j->count_mono - before_mono) / 1e6;
        if (!j->count.valid || !fscounter_delta(before, &j->count, &in.lo, &in.hi))
                in.kind = FS_COUNTER_NONE;
        v = kcount_apply(&in, acts, n);
        for (size_t w = 0; w < n && v.used && edges; w++)
                if (acts[w].source == SOURCE_KERNEL) {
                        acts[w].at = j->edge.real;
                        acts[w].seconds = in.seconds;
                }
        fs->unexplained = v.unexplained;
        fs->count_jumped = v.jumped;
        fs->count_prev = v.lo;
        fs->count_ratio = v.ratio;
        fs->count_ratio_age = v.ratio_age;
}

/* The btrfs look that came back with a sweep: the metadata's growth is
 * atime's cost where the interval was pure as the sample tells it
 * (fs_only_atime_but_space(), as for the kernel's counts), modelled
 * where it was not (btrfs-meter.h). prev NULL: a look without a sweep
 * (FS_JOB_LOOK), whose facts are kept and no interval measured. */
static void fs_apply_btrfs(Filesystem *fs, struct fs_job *j, const struct sweep_result *prev) {
        BtrfsSweep s = {
                .target = j->target,
                .pure = prev && j->res.valid && fs_only_atime_but_space(fs, prev, &j->res),
                .commit_s = j->commit_s,
                .now = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC),
                .prior = { atime_cost_unshare_bytes("btrfs", fs->tracker->config->costs.v, fs->tracker->config->costs.n),
                           atime_cost_unshare_dir_bytes("btrfs", fs->tracker->config->costs.v, fs->tracker->config->costs.n) },
        };

        if (prev)
                btrfs_meter_apply(&fs->btrfs, &j->btrfs, &s);
        else
                btrfs_meter_look(&fs->btrfs, &j->btrfs, &s);
        fs_choose_btrfs_place(fs);
}

/* What a sweep found, stratum by stratum, and what came of it: for
 * whoever asks why a figure is what it is (log_level = debug). */
static void fs_log_sweep(const Filesystem *fs, const struct fs_job *j, const struct activity *acts) {
        static const char *const name[_STRATUM_MAX] = { "rest", "fresh", "hot" };
        char buf[512], ratio[64] = "";
        size_t len = 0;

        if (fs->count_ratio > 0)
                snprintf(ratio, sizeof ratio, ", %.2f transactions an update%s", fs->count_ratio,
                         fs->count_ratio_age == 0 ? " (learnt now)" : "");
        for (unsigned k = 0; k < _STRATUM_MAX && len < sizeof buf; k++) {
                const struct sampler_writer *w = j->n_writers > 0 ? &j->writers[0] : NULL;
                int r = snprintf(buf + len, sizeof buf - len, "%s%s %llu of %llu, %.1f changed, %.1f updates",
                                 k ? "; " : "", name[k], (unsigned long long) j->res.stratum_sample[k],
                                 (unsigned long long) j->res.stratum_population[k], w ? w->changed[k] : 0.0,
                                 w ? w->updates[k].n : 0.0);

                if (r < 0)
                        return;
                len += (size_t) r;
        }
        log_mount_debug(j->target, "%s: sweep over %.1fs: %s; %.0f updates/min (%.0f-%.0f) over %.1fs, %s%s%s", j->target,
                        j->res.seconds, buf, j->n_writers ? acts[0].updates.per_min : 0.0,
                        j->n_writers ? acts[0].updates.lo : 0.0, j->n_writers ? acts[0].updates.hi : 0.0,
                        j->n_writers ? acts[0].seconds : 0.0,
                        fs->count_jumped ? "count jumped" : fs->unexplained ? "count unexplained" : "count explained",
                        j->edge.count.valid ? ", read at an edge of the journal's commits" : "", ratio);
}

/* When a figure from the whole walk's sample is due (Unix seconds), while
 * the first walk runs: the inodes left at the pace it has kept so far, then
 * the sweep that measures an interval of the finished sample. */
static uint64_t fs_walk_end(const Filesystem *fs, uint64_t used, uint64_t now) {
        const Tracker *t = fs->tracker;
        uint64_t walked = fs->seen.walked, took = now > fs->walk_started ? now - fs->walk_started : 0;

        if (used <= walked)
                return now;
        if (walked > 0 && took > 0)
                return now + (uint64_t) ((double) (used - walked) * (double) took / (double) walked);
        return now + (used - walked) * USEC_PER_SEC / MAX(t->config->walk_rate, 1u);
}

static int64_t fs_ready_at(const Filesystem *fs, const struct fs_job *j) {
        const Tracker *t = fs->tracker;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC), done = fs_walk_end(fs, j->res.used_inodes, now);

        return (int64_t) ((j->at + (first_measuring_sweep(t, done) - now)) / USEC_PER_SEC);
}

static void fs_apply_sweep(Filesystem *fs, struct fs_job *j) {
        Tracker *t = fs->tracker;
        _cleanup_free_ struct activity *acts = NULL;
        struct sweep_result prev = fs->last;

        struct fs_count before = fs->counter.prev;
        KcountEdge before_edge = fs->counter.prev_edge;
        uint64_t before_mono = fs->counter.prev_mono;

        fs->last = j->res;
        fs->counter.prev = j->count; /* a count that could not be read starts again */
        fs->counter.prev_edge = j->edge;
        fs->counter.prev_mono = j->count.valid ? j->count_mono : 0;
        fs_apply_btrfs(fs, j, &prev);
        if (!j->res.valid)
                goto done;
        fs->figured = true;
        acts = calloc(MAX(j->n_writers, (size_t) 1), sizeof *acts);
        if (!acts)
                goto done;
        for (size_t w = 0; w < j->n_writers; w++) {
                acts[w] = (struct activity) {
                        .have = true,
                        .seconds = j->res.seconds,
                        .sample = j->res.sample,
                        .population = j->res.population,
                        .at = j->end_at,
                        .shared = j->n_writers > 1,
                };
                if (stratified_estimates(&j->res, &j->writers[w], &acts[w]) < 0)
                        acts[w].have = false;
                if (j->res.partial)
                        acts[w].ready_at = fs_ready_at(fs, j);
        }
        fs_apply_count(fs, j, &before, &before_edge, before_mono, &prev, acts, j->n_writers);
        if (log_get_max_level() >= LOG_DEBUG)
                fs_log_sweep(fs, j, acts);
        for (size_t w = 0; w < j->n_writers; w++) {
                TrackedMount *m = find_mount(t, j->writer_ids[w]);

                if (!m || m->fs != fs || !acts[w].have)
                        continue;
                m->activity = acts[w];
                /* A figure from the part walked so far (the sample's,
                 * not the kernel's count) is shown, not kept: history and
                 * advice begin with the whole walk. */
                if (t->hooks.activity && !(acts[w].coverage < 1 && acts[w].source != SOURCE_KERNEL))
                        t->hooks.activity(m, &acts[w], t->hooks.userdata);
        }
done:
        fs->probed = false;
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
 * jumped: fs_apply_count()), and never before 20 s. Never, either, before
 * twice the last walk's length has passed since it ended (a third of the
 * time at most), and walks stay within walk_rate all the same. */
static void fs_rewalk_soon(Filesystem *fs, const struct sweep_result *res, uint64_t now) {
        uint64_t wait = res->woke_hot > 0 ? 0
                                          : MAX(fs->count_jumped ? 0 : 2 * fs->tracker->config->sampler_interval_usec,
                                                20 * USEC_PER_SEC);
        uint64_t soonest = fs->walk_started + MAX(wait, 3 * fs->walk_took);

        if ((res->woke_hot == 0 && !fs->unexplained && !fs->count_jumped) || !fs->sampler || fs->sampler->walk ||
            fs->sampler->next || fs->next_walk == 0)
                return;
        soonest = MAX(soonest, now);
        if (soonest < fs->next_walk) {
                fs->next_walk = soonest;
                fs->tracker->walks_changed = true;
        }
}

/* What the progress report needs of the sampler, copied when its job is
 * back: while a job is out the sampler is the worker's. */
static void fs_note_progress(Filesystem *fs) {
        const Sampler *s = fs->sampler;

        if (!s)
                return;
        fs->seen.walking = s->walk != NULL;
        fs->seen.walked = s->walk ? sampler_walk_seen(s) : s->current ? s->current->population : 0;
        fs->seen.inodes = sampler_walk_inodes_hint(s);
        fs->seen.sampled = s->current || s->next;
        fs->seen.whole = sampler_whole(s);
        /* Sweeps are timed on the tracker's clock (fs_work()). */
        fs->seen.baseline_at = s->current ? s->last_sweep : 0;
        if (!fs->figured && fs->seen.baseline_at > 0 && fs->first_asked != fs->seen.baseline_at)
                fs->tracker->firsts_changed = true;
}

/* A job missed its deadline: the filesystem is stalled and retried after
 * its back-off; it stays busy, its sampler the stuck thread's. */
static void fs_timed_out(Filesystem *fs, const struct fs_job *j, uint64_t now) {
        Tracker *t = fs->tracker;

        fs->stalled = true;
        fs->failures++;
        fs->retry_at = now + backoff(fs->failures);
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
        fs->retry_at = now + backoff(fs->failures);
        if (fs->fail_count++ > 0)
                return;
        fs->failing = true;
        /* The mount went away under us (ESTALE, ENOENT): the next table
         * update will say; until then it backs off like any other. */
        if (level <= log_get_max_level() && log_ratelimit_test(&t->fail_log, level))
                log_mount_full(level, j->r, j->target, "%s: sampling failed: %m; retrying in %llus, backing off to an hour",
                               j->target, (unsigned long long) (backoff(fs->failures) / USEC_PER_SEC));
}

/* What a walk or sweep's outcome says of the filesystem's health. */
static void fs_note_outcome(Filesystem *fs, const struct fs_job *j, uint64_t now) {
        Tracker *t = fs->tracker;

        if (j->r == -ENOTDIR) {
                /* No failure: the place's root is a file. That mount is
                 * never a place again; another of the filesystem, if any. */
                TrackedMount *m = find_mount(t, j->mount_id);

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
        Tracker *t = fs->tracker;
        bool first;
        uint64_t soonest;

        assert(fs->sampler && fs->sampler->next);
        first = !fs->sampler->current || fs->sampler->current->partial;
        soonest = first ? MIN(t->config->sampler_interval_usec / 2, (uint64_t) WALK_REFRESH_MIN_USEC)
                        : (uint64_t) WALK_REFRESH_MIN_USEC;
        fs->walk_took = now - fs->walk_started;
        fs->next_walk = now + CLAMP(10 * (now - fs->walk_started), soonest,
                                    MAX(t->config->walk_refresh_usec, (uint64_t) WALK_REFRESH_MIN_USEC));
        /* A first walk's: its sample replaces the partial one at once
         * (sampler_sweep() measures the partial one's interval first if it
         * is long enough). */
        if (first)
                t->maybe_sweeps = fs->sweep_pending = true;
        log_mount_debug(j->target, "%s: sample walk done: %llu inodes, %zu sampled", j->target,
                  (unsigned long long) fs->sampler->next->population, fs->sampler->next->n);
        /* Said once per filesystem: in a user namespace, or on a network
         * filesystem that squashes root, most of it may be out of reach. */
        if (fs->sampler->next->skipped > 0 && !fs->skip_said) {
                fs->skip_said = true;
                bool one = fs->sampler->next->skipped == 1;

                log_mount_info(j->target, "%s: the walk skipped %llu director%s it cannot open without changing %s "
                               "atime (owned by a user root cannot act for here): the figure leaves %s out",
                               j->target, (unsigned long long) fs->sampler->next->skipped, one ? "y" : "ies",
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
        else if (j->kind == FS_JOB_WALK && j->r == 0 && !fs->sampler->current)
                /* The first walk's first step: the part walked is swept for
                 * a baseline at once, so that the next sweep measures it
                 * (sampler_sweep()). */
                fs->tracker->maybe_sweeps = fs->sweep_pending = true;
        else if (j->kind == FS_JOB_SWEEP && j->r >= 0) {
                fs_apply_sweep(fs, j);
                fs_rewalk_soon(fs, &j->res, now);
        } else if (j->kind == FS_JOB_LOOK)
                fs_apply_btrfs(fs, j, NULL);
        if (j->kind == FS_JOB_WALK || j->kind == FS_JOB_SWEEP)
                fs_note_progress(fs);
}

static void fs_done(void *arg, WorkerStatus status) {
        struct fs_job *j = arg;
        Filesystem *fs = j->fs;
        Tracker *t = fs->tracker;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        assert(fs->busy);
        if (j->kind != FS_JOB_FINE || status != WORKER_DONE)
                tracker_changed(t); /* a fine sweep changes nothing shown until the next sweep */
        if (status != WORKER_LATE) {
                if (j->bounded)
                        t->bounded_jobs--;
                else
                        t->fs_jobs--;
        }
        /* A walk step back plans the next; so does any job of a
         * filesystem without a sampler yet: plan_walks() could not make
         * one while the job was out (fs_ensure_sampler()), and nothing
         * else would ask again before the next timed sweep (the first
         * walk of a filesystem with a device, whose UUID is looked up
         * first, waited up to an interval for it). */
        if (j->kind == FS_JOB_WALK || !fs->sampler)
                t->walks_changed = true;

        if (status == WORKER_TIMED_OUT) {
                fs_timed_out(fs, j, now);
                kick(t);
                return; /* the thread still holds j */
        }

        fs->busy = false;
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
        fs_job_free(j);
        if (status != WORKER_CANCELLED)
                kick(t);
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
static void fs_poll_journal(Filesystem *fs, uint64_t now) {
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
        fs_poll_journal(fs, now);
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
                          : fs->sampler && sampler_whole(fs->sampler) ? MIN(t->tick_budget, (uint64_t) t->config->walk_rate)
                                                                      : t->tick_budget,
                /* Timer slack and a late job must not skip an interval.
                 * While the first walk runs, and for the first figure,
                 * half an interval is enough (and six of ext4's journal
                 * commits at the default minute: its count can stand). */
                .min_usec = fs->sampler && (!sampler_whole(fs->sampler) || !fs->figured)
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
        /* btrfs: every mount's subvolume, looked up in the same pass (btrfs_look_want()). */
        for (size_t i = 0; i < fs->n_mounts && j->btrfs.on; i++)
                btrfs_look_want(&j->btrfs, mount_subvol(fs->mounts[i]), mount_measured(fs->mounts[i]));
        if (!j->target || !j->fs_root || fs_job_add_writers(j, fs) < 0 ||
            (kind == FS_JOB_IDENTIFY && !(j->devname = strdup(fs->device.name))))
                goto fail;
        *ret = j;
        return 0;
fail:
        fs_job_free(j);
        return -ENOMEM;
}

static int fs_submit(Filesystem *fs, FsJobKind kind) {
        Tracker *t = fs->tracker;
        const TrackedMount *place = fs_place(fs);
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
        r = submit_job(t, j->bounded, fs_owner(fs), fs_work, fs_done, j, t->config->sampler_timeout_usec);
        if (r < 0) {
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

/* The sampler for fs, created on first need; reset when the place moved. */
static int fs_ensure_sampler(Filesystem *fs) {
        struct btrfs_place rank;
        const TrackedMount *place = fs_place_ranked(fs, &rank);
        uint64_t seed;

        if (!place)
                return -ENOENT;
        if (streq(place->entry->fstype, "btrfs"))
                fs_say_place(fs, place, &rank);
        if (fs->sampler && fs->place_root && streq(fs->place_root, place->entry->root) &&
            fs->sampler->k == fs->tracker->config->sample_size)
                return 0;
        if (fs->busy)
                return -EBUSY; /* retried when its job is back */
        if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != sizeof seed)
                seed = now_usec(CLOCK_MONOTONIC) ^ (uint64_t) fs->devno;
        sampler_free(fs->sampler);
        fs->sampler = NULL;
        free(fs->place_root);
        fs->place_root = strdup(place->entry->root);
        if (!fs->place_root)
                return -ENOMEM;
        fs->next_walk = 0;
        fs->figured = false;
        fs->first_asked = 0;
        fs->tracker->walks_changed = true;
        return sampler_new(fs->tracker->config->sample_size, seed, &fs->sampler);
}

static bool fs_walk_due(const Filesystem *fs, uint64_t now) {
        const Sampler *s = fs->sampler;

        if (!s)
                return false;
        if (s->walk)
                return true; /* resume */
        if (!s->current && !s->next)
                return true; /* never walked */
        return !s->next && fs->next_walk > 0 && fs->next_walk <= now;
}

static bool fs_can_run(const Filesystem *fs, uint64_t now) {
        return !fs->busy && !fs->orphaned && (!(fs->stalled || fs->failing) || fs->retry_at <= now);
}

/* Who each filesystem is comes first: history is keyed by it. */
static void kick_identify(Tracker *t, uint64_t now) {
        bool left = false;

        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (fs->identified)
                        continue;
                left = true; /* until its job is back */
                if (t->fs_jobs < max_jobs(t) && fs_can_run(fs, now))
                        (void) fs_submit(fs, FS_JOB_IDENTIFY);
        }
        t->maybe_unidentified = left;
}

/* Sweeps, round robin from where the last kick stopped. */
static void kick_sweeps(Tracker *t, uint64_t now) {
        bool left = false;

        for (size_t k = 0; k < t->n_fss; k++) {
                size_t i = (t->sweep_cursor + k) % t->n_fss;
                Filesystem *fs = t->fss[i];

                if (!fs->sweep_pending)
                        continue;
                if (t->fs_jobs >= max_jobs(t)) {
                        t->sweep_cursor = i;
                        left = true;
                        break;
                }
                bool look = fs_looks_only(fs);

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
                        if (fs_submit(fs, FS_JOB_LOOK) < 0)
                                fs->sweep_pending = false; /* tried again at the next tick */
                        continue;
                }
                if (fs_ensure_sampler(fs) < 0 || !sampler_can_sweep(fs->sampler)) {
                        fs->sweep_pending = false;
                        continue;
                }
                if (fs_submit(fs, FS_JOB_SWEEP) < 0)
                        left = true;
        }
        t->maybe_sweeps = left;
}

/* The walk timer armed for the next walk due (or off if none is). When
 * that is changes only with a walk step, a new sampler or the table;
 * while a step is out, its return re-arms. */
static void plan_walks(Tracker *t, uint64_t now) {
        uint64_t next_walk = UINT64_MAX;

        if (!t->walks_changed || t->walking)
                return;
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (!fs_needs_sampling(fs) || fs->orphaned || fs_ensure_sampler(fs) < 0)
                        continue;
                if (fs_walk_due(fs, now))
                        next_walk = 0;
                else if (fs->next_walk > 0)
                        next_walk = MIN(next_walk, fs->next_walk);
        }
        t->walks_changed = false;
        if (next_walk == UINT64_MAX)
                (void) sd_event_source_set_enabled(t->walk_timer, SD_EVENT_OFF);
        else
                rearm_walk_timer(t, next_walk);
}

/* When fs's first figure is due: half an interval after its baseline,
 * the shortest a first figure measures (fs_submit()), on no timed sweep's
 * phase: the next timed sweep may come any time up to an interval and a
 * half after a baseline (next_sweep(); a sweep closer than half an
 * interval to it measures nothing), and a first walk that ends takes a
 * new baseline. Asked for once per baseline; 0: none due. */
static uint64_t fs_first_due(const Filesystem *fs) {
        if (fs->figured || fs->orphaned || fs->seen.baseline_at == 0 || fs->first_asked == fs->seen.baseline_at ||
            !fs_needs_sampling(fs))
                return 0;
        return fs->seen.baseline_at + fs->tracker->config->sampler_interval_usec / 2;
}

/* The first figures' timer armed for the earliest due, or off. When that
 * is changes only with a sweep or walk step back, or the clock. */
static void plan_firsts(Tracker *t) {
        uint64_t next = UINT64_MAX;

        if (!t->firsts_changed)
                return;
        t->firsts_changed = false;
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
        (void) sd_event_source_set_time(t->first_timer, timer_time(t, next));
        (void) sd_event_source_set_enabled(t->first_timer, SD_EVENT_ONESHOT);
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
                        fs->first_asked = fs->seen.baseline_at;
                        t->maybe_sweeps = fs->sweep_pending = true;
                }
        }
        t->firsts_changed = true;
        kick(t);
        return 0;
}

/* Submits what is due, within the in-flight limit. Called after every job,
 * so each part looks at every filesystem only while it may find something
 * to do: with thousands of filesystems, scanning them all after each job
 * made a sample cycle quadratic. */
static void kick(Tracker *t) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        if (t->shutting_down)
                return;
        if (t->maybe_unidentified)
                kick_identify(t, now);
        if (t->maybe_sweeps)
                kick_sweeps(t, now);
        /* Walks share walk_rate, the host's budget per tick: one step at a
         * time, to each filesystem in turn, so a huge one does not hold up
         * the rest; what a step leaves of the tick goes to the next one. */
        walk_next(t, now);
        plan_walks(t, now);
        plan_firsts(t);
}

/* Arms the walk tick for 'when' (0: due now), never sooner than one tick
 * after the last step, and never later than already armed. */
static void rearm_walk_timer(Tracker *t, uint64_t when) {
        int enabled = SD_EVENT_OFF;
        uint64_t cur = 0, at;

        if (t->walking)
                return; /* re-armed when the step out comes back */
        when = MAX(when, t->last_walk_step + WALK_TICK_USEC); /* walk_next() used up this tick */
        at = timer_time(t, when);
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

                if (!fs_needs_sampling(fs) || !fs_can_run(fs, now) || fs_ensure_sampler(fs) < 0 ||
                    !fs_walk_due(fs, now))
                        continue;
                if (!fs->sampler->walk)
                        fs->walk_started = now; /* a new walk: its first step */
                if (fs_submit(fs, FS_JOB_WALK) >= 0) {
                        t->walking = fs;
                        t->walk_cursor = i;
                }
        }
        if (!t->walking)
                t->tick_budget = 0; /* nothing can walk now: wait for the next tick */
}

static int on_walk_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        (void) s;
        (void) usec;
        tracker_changed(t);
        t->walks_changed = true; /* the timer is spent: kick() arms it again */
        if (!t->walking && (t->tick_budget == 0 || now >= t->last_walk_step + WALK_TICK_USEC)) {
                t->tick_budget = walk_budget(t);
                t->last_walk_step = now;
        }
        kick(t); /* which walks */
        return 0;
}

/* ---------------------------------------------------------------- devices */

/* Reads diskstats and updates the rates of every filesystem's device; with
 * only_new, just takes the first reading of those that have none. */
static void update_devices(Tracker *t, bool only_new) {
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

/* The next sweep, in the middle of the next wall-clock bucket of one
 * interval: history buckets by wall clock, and a sweep near a boundary could
 * land two in one bucket and none in the next. Re-aligned every time, so
 * clock adjustments never accumulate. */
static uint64_t next_sweep(const Tracker *t) {
        uint64_t real = tracker_now(t, CLOCK_REALTIME), iv = t->config->sampler_interval_usec;
        uint64_t target = (real / iv + 1) * iv + iv / 2;

        if (target - real > iv)
                target -= iv; /* still in the first half of this bucket */
        return tracker_now(t, CLOCK_MONOTONIC) + (target - real);
}

/* About every second: the inodes that moved lately are looked at again, on
 * each filesystem that has some and nothing else out. The pass begins where
 * the last one's jobs ran out, not at the first filesystem: with every job
 * taken (walks, and fine sweeps of files read once elsewhere), the same
 * filesystems got them every second, and one further down the list went a
 * whole interval without a look at its files turned hot (busy.sh's
 * xfs-mix: 20 files read flat out credited 20 updates in 30 s, one each). */
void tracker_fine_pass(Tracker *t) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);
        size_t n = t->n_fss, start = n > 0 ? t->fine_next % n : 0;

        for (size_t k = 0; k < n; k++) {
                size_t i = (start + k) % n;
                Filesystem *fs = t->fss[i];

                if (!fs_can_run(fs, now) || fs->stalled || fs->sweep_pending || !sampler_has_hot(fs->sampler) ||
                    !fs_needs_sampling(fs))
                        continue;
                if (t->fs_jobs >= max_jobs(t)) {
                        t->fine_next = i; /* first in line next time */
                        return;
                }
                (void) fs_submit(fs, FS_JOB_FINE);
        }
        t->fine_next = start;
}

static int on_fine_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        /* FINE_SWEEP_USEC on average, drawn afresh each time: a reader with
         * the sweep's own period is not always seen at the same point of it
         * (the estimator takes the looks' ages as drawn at random). */
        (void) sd_event_source_set_time(s, usec + jittered(FINE_SWEEP_USEC));
        tracker_fine_pass(userdata);
        return 0;
}

/* How long before a sweep journals' counts are read for their edges: a
 * commit period and its slack at ext4's default commit=5, so that a
 * stretch with no commit shows one (kcount_edge()); at most half an
 * interval, so that the figure's interval, which ends at its edge, stays
 * in the sweep's bucket of history. */
#define EDGE_WINDOW_USEC (7 * USEC_PER_SEC)

static void arm_edge_timer(Tracker *t) {
        uint64_t next = next_sweep(t), w = MIN(EDGE_WINDOW_USEC, t->config->sampler_interval_usec / 2);

        /* A first figure's sweep as well: the interval after it begins
         * there. */
        if (t->first_next > 0)
                next = MIN(next, t->first_next);

        t->edge_until = next;
        (void) sd_event_source_set_time(t->edge_timer, timer_time(t, next > w ? next - w : 1));
        (void) sd_event_source_set_enabled(t->edge_timer, SD_EVENT_ONESHOT);
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
                fs_poll_journal(fs, now);
                more = more || fs->sweep_pending;
        }
        if (more) {
                (void) sd_event_source_set_time(s, timer_time(t, now + KCOUNT_POLL_USEC));
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

/* The monotonic time of the first timed sweep at 'when' or after. */
static uint64_t first_sweep_after(const Tracker *t, uint64_t when) {
        uint64_t iv = t->config->sampler_interval_usec, next = next_sweep(t);

        while (next < when)
                next += iv;
        return next;
}

/* The monotonic time of the first sweep that measures an interval begun
 * at 'since' (a sweep closer than 9/10 of an interval is skipped). */
static uint64_t first_measuring_sweep(const Tracker *t, uint64_t since) {
        return first_sweep_after(t, since + t->config->sampler_interval_usec / 10 * 9);
}

bool tracker_mount_progress(const TrackedMount *m, struct progress *ret) {
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
        if (m->activity.have || !tracker_mount_writes_atime(m) || !t)
                return false;
        now = tracker_now(t, CLOCK_MONOTONIC);
        if (fs->stalled)
                ret->stage = STAGE_STALLED;
        else if (fs->seen.walking) {
                ret->stage = STAGE_WALKING;
                ret->walked = fs->seen.walked;
                ret->inodes = fs->seen.inodes;
                /* The first figure needs a part walked, not all: the
                 * sweep half an interval after the baseline the walk's
                 * first step brings (fs_first_due()); unknown until that
                 * step is back. */
                if (fs->seen.baseline_at > 0) {
                        uint64_t at = fs->seen.baseline_at + t->config->sampler_interval_usec / 2;

                        ret->eta_s = at > now ? (int64_t) ((at - now) / USEC_PER_SEC) : 0;
                }
        } else if (fs->seen.sampled && fs->seen.baseline_at == 0) {
                ret->stage = STAGE_BASELINE;
                ret->eta_s = (int64_t) (t->config->sampler_interval_usec / 2 / USEC_PER_SEC);
        } else if (fs->seen.sampled) {
                /* The first figure half an interval after the baseline;
                 * later ones at timed sweeps. */
                uint64_t at = fs->figured ? first_measuring_sweep(t, fs->seen.baseline_at)
                                          : fs->seen.baseline_at + t->config->sampler_interval_usec / 2;

                ret->stage = STAGE_MEASURING;
                ret->walked = fs->seen.walked;
                ret->eta_s = at > now ? (int64_t) ((at - now) / USEC_PER_SEC) : 0;
        }
        return true;
}

static int on_sweep_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Tracker *t = userdata;
        int64_t now_s = (int64_t) (tracker_now(t, CLOCK_REALTIME) / USEC_PER_SEC);

        tracker_changed(t);
        (void) sd_event_source_set_time(s, timer_time(t, next_sweep(t)));
        update_devices(t, false);
        if (t->hooks.tick)
                t->hooks.tick(now_s, t->hooks.userdata);
        for (size_t i = 0; i < t->n_fss; i++)
                if (fs_needs_sampling(t->fss[i]) || fs_looks_only(t->fss[i]))
                        t->maybe_sweeps = t->fss[i]->sweep_pending = true;
        kick(t);
        arm_edge_timer(t); /* the next sweep's: this one's sweeps took theirs in kick() */
        return 0;
}

/* ---------------------------------------------------------------- the table */

static int cmp_mount_devno(const void *a, const void *b) {
        const TrackedMount *x = *(TrackedMount *const *) a, *y = *(TrackedMount *const *) b;

        if (x->entry->devno != y->entry->devno)
                return x->entry->devno < y->entry->devno ? -1 : 1;
        return (x->id > y->id) - (x->id < y->id);
}

/* Index of the filesystem with devno in the sorted array, or n. */
static size_t find_fs(Filesystem *const *fss, size_t n, dev_t devno) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (fss[mid]->devno == devno)
                        return mid;
                if (fss[mid]->devno < devno)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return n;
}

/* The state for entry e of the new table: the mount's as it was if it was
 * tracked (its policy changed: verified and measured afresh), else new.
 * 'old' holds the previous list by id from *cursor on: what is passed
 * over is gone from the table and freed, what is found is taken. */
static TrackedMount *mount_for_entry(TrackedMount **old, size_t n_old, size_t *cursor, const MountEntry *e,
                                     uint64_t now) {
        TrackedMount *m;

        while (*cursor < n_old && old[*cursor]->id < e->id) {
                mount_free(old[*cursor]);
                old[(*cursor)++] = NULL;
        }
        if (*cursor < n_old && old[*cursor]->id == e->id) {
                m = TAKE_PTR(old[*cursor]);
                (*cursor)++;
                if (m->entry->policy.atime != e->policy.atime || m->entry->policy.read_only != e->policy.read_only ||
                    m->entry->reachable != e->reachable) {
                        m->probe.next_due = now;
                        m->activity = (struct activity) {};
                }
        } else {
                m = calloc(1, sizeof *m);
                if (!m)
                        return NULL;
                m->id = e->id;
                m->probe.next_due = now;
        }
        m->entry = e;
        m->fs = NULL; /* until the filesystems are grouped again */
        return m;
}

/* Mounts: the state of those still here (same id) kept, new ones added,
 * those gone freed. Without memory the tracker is left unusable: the
 * manager exits. */
static int update_mounts(Tracker *t, const MountTable *table, uint64_t now) {
        _cleanup_free_ TrackedMount **mounts = calloc(table->n ? table->n : 1, sizeof *mounts);
        size_t cursor = 0;

        if (!mounts)
                return -ENOMEM;
        for (size_t i = 0; i < table->n; i++) {
                assert(i == 0 || table->entries[i - 1].id < table->entries[i].id); /* sorted by id */
                mounts[i] = mount_for_entry(t->mounts, t->n_mounts, &cursor, &table->entries[i], now);
                if (!mounts[i]) {
                        for (size_t k = 0; k < i; k++)
                                mount_free(mounts[k]);
                        return -ENOMEM;
                }
        }
        for (; cursor < t->n_mounts; cursor++)
                mount_free(t->mounts[cursor]);
        free(t->mounts);
        t->mounts = TAKE_PTR(mounts);
        t->n_mounts = table->n;
        return 0;
}

/* The filesystem with device number d: the one tracked already (marked
 * taken), or a new one, its device resolved ('source' names it). */
static Filesystem *fs_for_devno(Tracker *t, dev_t d, const char *source, bool *taken, bool *ret_new) {
        size_t idx = find_fs(t->fss, t->n_fss, d);
        Filesystem *fs;

        if (idx < t->n_fss) {
                taken[idx] = true;
                return t->fss[idx];
        }
        fs = calloc(1, sizeof *fs);
        if (!fs)
                return NULL;
        fs->tracker = t;
        fs->devno = d;
        fs->count_prev = -1;
        (void) device_resolve(t->config->sysfs_path, "/dev", d, source, &fs->device);
        fs->identified = fs->device.kind == DEVICE_NONE; /* nothing to read a UUID from */
        *ret_new = true;
        return fs;
}

/* Gives fs its mounts (n of them, all on its device) and them their fs. */
static int fs_set_mounts(Filesystem *fs, TrackedMount *const *mounts, size_t n) {
        TrackedMount **list = malloc(n * sizeof *list);

        assert(n > 0);
        if (!list)
                return -ENOMEM;
        memcpy(list, mounts, n * sizeof *list);
        for (size_t i = 0; i < n; i++) {
                assert(mounts[i]->entry->devno == fs->devno);
                mounts[i]->fs = fs;
                mount_set_key(mounts[i]); /* its entry may have moved (mount --move) */
        }
        free(fs->mounts);
        fs->mounts = list;
        fs->n_mounts = n;
        return 0;
}

/* Filesystems no longer in the table: freed, or once their job is back. */
static void drop_filesystems(Tracker *t, const bool *taken) {
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (taken[i])
                        continue;
                if (t->walking == fs)
                        t->walking = NULL;
                if (fs->busy)
                        fs->orphaned = true; /* freed when its job returns */
                else
                        fs_free(fs);
        }
}

/* Filesystems: the mounts grouped by device number; the state of those
 * still here kept. *ret_new: some are new. Without memory, as for the
 * mounts, the tracker is left unusable and the manager exits. */
static int update_filesystems(Tracker *t, bool *ret_new) {
        size_t n = MAX(t->n_mounts, (size_t) 1), n_fss = 0;
        _cleanup_free_ TrackedMount **by_dev = malloc(n * sizeof *by_dev);
        _cleanup_free_ Filesystem **fss = calloc(n, sizeof *fss);
        _cleanup_free_ bool *taken = calloc(MAX(t->n_fss, (size_t) 1), sizeof *taken);

        if (!by_dev || !fss || !taken)
                return -ENOMEM;
        memcpy(by_dev, t->mounts, t->n_mounts * sizeof *by_dev);
        qsort(by_dev, t->n_mounts, sizeof *by_dev, cmp_mount_devno);
        for (size_t i = 0, k; i < t->n_mounts; i = k) {
                dev_t d = by_dev[i]->entry->devno;
                Filesystem *fs;

                for (k = i; k < t->n_mounts && by_dev[k]->entry->devno == d; k++)
                        ;
                fs = fs_for_devno(t, d, by_dev[i]->entry->source, taken, ret_new);
                if (!fs)
                        return -ENOMEM;
                if (fs_set_mounts(fs, by_dev + i, k - i) < 0)
                        return -ENOMEM;
                fss[n_fss++] = fs;
        }
        drop_filesystems(t, taken);
        free(t->fss);
        t->fss = TAKE_PTR(fss);
        t->n_fss = n_fss;
        return 0;
}

int tracker_update(Tracker *t, const MountTable *table) {
        bool new_fs = false;
        int r;

        assert(t);
        assert(table);
        tracker_changed(t);
        r = update_mounts(t, table, tracker_now(t, CLOCK_MONOTONIC));
        if (r < 0)
                return r;
        r = update_filesystems(t, &new_fs);
        if (r < 0)
                return r;
        if (new_fs)
                update_devices(t, true);
        t->maybe_unidentified = t->maybe_sweeps = t->walks_changed = true;
        t->sweep_cursor = 0;

        rearm_probe_timer(t);
        kick(t);
        return 0;
}

/* Everything's next time looked at again: the configuration or the
 * clock changed. */
static void replan(Tracker *t) {
        (void) sd_event_source_set_time(t->sweep_timer, timer_time(t, next_sweep(t)));
        arm_edge_timer(t);
        rearm_probe_timer(t);
        t->walks_changed = t->firsts_changed = true;
        kick(t);
}

void tracker_set_config(Tracker *t, const struct config *config) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        tracker_changed(t);
        t->config = config;
        for (size_t i = 0; i < t->n_mounts; i++)
                t->mounts[i]->probe.next_due = MIN(t->mounts[i]->probe.next_due, now + config->probe_interval_usec);
        replan(t); /* samplers of another size are rebuilt */
}

void tracker_set_clock(Tracker *t, tracker_clock_fn now, void *userdata) {
        assert(t);
        tracker_changed(t);
        t->clock = now;
        t->clock_userdata = userdata;
        /* On a clock of the caller's, fine passes come only when it asks
         * (tracker_fine_pass()): one of the system's second, drawn at
         * random, would take a filesystem just as the caller's clock makes
         * its walk step or sweep due. */
        (void) sd_event_source_set_enabled(t->fine_timer, now ? SD_EVENT_OFF : SD_EVENT_ON);
        replan(t);
}

void tracker_set_job_hook(Tracker *t, tracker_job_hook_fn hook, void *userdata) {
        assert(t);
        t->job_hook = hook;
        t->job_hook_userdata = userdata;
}

int tracker_new(sd_event *e, WorkerPool *pool, const struct config *config, Tracker **ret) {
        _cleanup_(tracker_freep) Tracker *t = calloc(1, sizeof *t);
        int r;

        if (!t)
                return -ENOMEM;
        t->event = sd_event_ref(e);
        t->config = config;
        t->pool = pool;
        /* Failures starting or ending: 20 lines a minute at most, whatever
         * the mount churn (the rest are counted in a "Suppressed" line). */
        t->fail_log = (LogRatelimit) LOG_RATELIMIT_INIT(60 * USEC_PER_SEC, 20);
        r = sd_event_add_time(e, &t->sweep_timer, CLOCK_MONOTONIC, next_sweep(t),
                              MIN(config->sampler_interval_usec / 100, USEC_PER_SEC / 10), on_sweep_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->sweep_timer, SD_EVENT_ON);
        (void) sd_event_source_set_description(t->sweep_timer, "sampler-sweep");
        r = sd_event_add_time(e, &t->probe_timer, CLOCK_MONOTONIC, 1, USEC_PER_SEC / 10, on_probe_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->probe_timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(t->probe_timer, "probe");
        r = sd_event_add_time(e, &t->walk_timer, CLOCK_MONOTONIC, 1, USEC_PER_SEC / 20, on_walk_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->walk_timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(t->walk_timer, "sampler-walk");
        r = sd_event_add_time(e, &t->first_timer, CLOCK_MONOTONIC, 1, USEC_PER_SEC / 10, on_first_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->first_timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(t->first_timer, "sampler-first");
        r = sd_event_add_time(e, &t->edge_timer, CLOCK_MONOTONIC, 1, USEC_PER_SEC / 100, on_edge_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(t->edge_timer, "journal-edges");
        arm_edge_timer(t);
        /* To the microsecond: with any slack, sd-event wakes at the place
         * in each quarter second that every timer of the host's shares
         * (from the boot id) wherever that falls in it, and a quarter of
         * the looks would come at the same point of any reader whose
         * period divides 250 ms (estimate.h). */
        r = sd_event_add_time_relative(e, &t->fine_timer, CLOCK_MONOTONIC, FINE_SWEEP_USEC, 1, on_fine_timer, t);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->fine_timer, SD_EVENT_ON);
        (void) sd_event_source_set_description(t->fine_timer, "sampler-fine");
        *ret = TAKE_PTR(t);
        return 0;
}

void tracker_shutdown(Tracker *t) {
        if (t)
                t->shutting_down = true; /* completions still arrive; nothing new starts */
}

Tracker *tracker_free(Tracker *t) {
        if (!t)
                return NULL;
        t->shutting_down = true;
        sd_event_source_disable_unref(t->sweep_timer);
        sd_event_source_disable_unref(t->probe_timer);
        sd_event_source_disable_unref(t->walk_timer);
        sd_event_source_disable_unref(t->fine_timer);
        sd_event_source_disable_unref(t->first_timer);
        sd_event_source_disable_unref(t->edge_timer);
        for (size_t i = 0; i < t->n_fss; i++)
                if (!t->fss[i]->busy)
                        fs_free(t->fss[i]);
        free(t->fss);
        for (size_t i = 0; i < t->n_mounts; i++)
                mount_free(t->mounts[i]);
        free(t->mounts);
        sd_event_unref(t->event);
        free(t);
        return NULL;
}
