/* tracker-base.h: the tracker's own base, shared by its rooms and by no
 * other module (they see tracker.h alone, whose functions tracker.c
 * defines, over the rooms below it). The tracker is one module in
 * rooms, each with one job, each above the ones it uses:
 *
 *   tracker.c      the registry and the life: mounts and filesystems kept
 *                  in step with the table, the accessors of tracker.h
 *   planner.c      time: every event source of the tracker, and the turn
 *                  of the scheduler (kick()) that submits what is due
 *   fsjob.c        a filesystem's jobs: made, run in a worker, taken back
 *   prober.c       each mount's probe of its policy, and its waiters
 *   figures.c      a sweep's result turned into each mount's figures
 *   progress.c     what a mount waits for, and when its figure comes
 *   place.c        where a filesystem is sampled, and its sampler made
 *   tracker-base.c (here) the types, the facts read off them, the clock,
 *                  the one way to make the scheduler look again
 *   schedule.c     the schedule's rules, pure (no Tracker at all)
 *
 * Ownership. Everything here is the event loop's: the Tracker, its
 * Filesystems and TrackedMounts, and what they hold. A job (struct fs_job,
 * prober.c's probe_job) is made on the loop with copies of what it needs;
 * in its worker thread it touches only those copies and, for a walk or a
 * sweep, the one Sampler lent to it (sampler_lend(): the loop reads only
 * Filesystem.seen until the job is back). A job's thread never reads the
 * Tracker or a Filesystem.
 *
 * Failure. Nothing here fails but for memory, which tracker_update()
 * reports (the manager exits). A job's failure is the filesystem's or the
 * mount's state (stalled, failing, backing off: fsjob.c, prober.c), said
 * in the log once as it starts and once as it ends, never fatal. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "btrfs-meter.h"
#include "config.h"
#include "device.h"
#include "fscounter.h"
#include "hostload.h"
#include "kcount.h"
#include "log.h"
#include "sampler.h"
#include "schedule.h"
#include "tracker-types.h"
#include "worker.h"

/* The walks' tick: walk_rate is a budget of entries per tick. */
#define WALK_TICK_USEC USEC_PER_SEC

/* What a walk step costs the tick's budget besides its entries (opening
 * the mount, a worker round trip): a thousand one-inode filesystems are
 * walked in a few ticks, not in a thousand. */
#define WALK_STEP_COST 16

/* How often inodes that moved lately are looked at again (sampler.h). */
#define FINE_SWEEP_USEC USEC_PER_SEC

/* Jobs on untrusted filesystems (mount_is_users(), stalled ones) out at
 * once: they run in the pool's bounded class (worker_submit_bounded()),
 * one at a time, so one out never waits there behind another. */
#define BOUNDED_JOBS_MAX 1

/* What the scheduler looks at again at its next turn (kick()). Whatever
 * changes what is due says so through tracker_plan() (or fs_want_sweep()),
 * which also schedules that turn: no writer can set a flag and forget the
 * turn, or schedule a turn that looks at nothing. With thousands of
 * filesystems a turn scans them only for what it was asked to look at: a
 * full scan after every job made a sample cycle quadratic. */
typedef enum PlanWhat {
        PLAN_IDENTIFY = 1 << 0, /* filesystems whose UUID is not known yet */
        PLAN_SWEEPS = 1 << 1,   /* sweeps asked for (Filesystem.sweep_pending) */
        PLAN_WALKS = 1 << 2,    /* when the next walk is due */
        PLAN_FIRSTS = 1 << 3,   /* when the next first figure is due */
        PLAN_PROBES = 1 << 4,   /* when the next probe is due */
        PLAN_ALL = PLAN_IDENTIFY | PLAN_SWEEPS | PLAN_WALKS | PLAN_FIRSTS | PLAN_PROBES,
} PlanWhat;

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
        bool orphaned;         /* no longer in the table; freed when its job returns */
        struct sweep_result last;
        DeviceInfo device;
        DeviceMeter disk;      /* its device's writes (device.h) */
        /* The sampler as it was made or its last job left it: all the loop
         * reads of it, lent or not (sampler_lend()). */
        SamplerView seen;
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
        uint64_t first_asked;  /* the baseline (fs_baseline_at()) whose first figure's sweep was asked for */
        bool skip_said;        /* directories a walk had to skip were logged */
        bool identified;       /* the UUID lookup is done (whatever it found) */
        char *uuid;            /* the filesystem's UUID, if it has one */
        uint64_t place_subvol; /* btrfs: the subvolume to sample, as the last look chose it (0: none) */
        struct btrfs_place place_rank; /* and its rank */
        int place_said;        /* btrfs: why the place was chosen, as last logged (place_say()); 0: not yet */
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
        /* What the next kick() looks at again (tracker_plan()); what it
         * leaves (jobs' slots full, a walk step out) stays for the one
         * after. */
        PlanWhat plan;
        sd_event_source *replan; /* kick(), deferred: armed by tracker_plan() alone */
        TrackerHooks hooks;
        bool disk_warned;
        bool shutting_down;  /* no new jobs: the pool is being torn down */
        tracker_clock_fn clock; /* NULL: clock_gettime() */
        void *clock_userdata;
        tracker_job_hook_fn job_hook; /* a test's (tracker_set_job_hook()) */
        void *job_hook_userdata;
        HostLoad load;       /* the host's CPU time at the last look, for idle_walk_rate */
};

typedef enum FsJobKind {
        FS_JOB_WALK,
        FS_JOB_SWEEP,
        FS_JOB_FINE,
        FS_JOB_IDENTIFY,
        FS_JOB_LOOK, /* a btrfs no mount of which is sampled: looked at alone (place_looks_only()) */
} FsJobKind;

struct fs_job {
        Filesystem *fs;
        FsJobKind kind;
        Sampler *sampler; /* walks and sweeps: lent to the job (sampler_lend()), its thread's until it is back */
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

/* What the sampler's view says of the walk and the baseline, for the
 * progress report and the first figure: the entries walked (or sampled,
 * once walked), whether there is a sample at all, and when its baseline
 * was taken (on the tracker's clock: fsjob.c; 0: none). */
uint64_t fs_walked(const Filesystem *fs);
bool fs_sampled(const Filesystem *fs);
uint64_t fs_baseline_at(const Filesystem *fs);

/* The tracker's time (tracker_set_clock()): CLOCK_MONOTONIC or
 * CLOCK_REALTIME usec. */
uint64_t tracker_now(const Tracker *t, clockid_t clock);
/* A time on the tracker's clock, for a timer (schedule_timer_time()). */
uint64_t tracker_timer_time(const Tracker *t, uint64_t when);
/* The next timed sweep, and the first that measures an interval begun at
 * 'since' (schedule.h), on the tracker's clock. */
uint64_t tracker_next_sweep(const Tracker *t);
uint64_t tracker_first_measuring_sweep(const Tracker *t, uint64_t since);

/* Walk, sweep and probe jobs out at once at most, each kind. */
unsigned tracker_max_jobs(const Tracker *t);
/* Submits a job in the class its filesystem deserves: the pool's bounded
 * class where 'bounded' (at most BOUNDED_JOBS_MAX out: -EBUSY); the caller
 * counts it as 'bounded' says. */
int tracker_submit_job(Tracker *t, bool bounded, uint32_t owner, worker_fn fn, worker_done_fn done, void *arg,
                       uint64_t timeout);

/* Whether a mount lets atime be written at all (not noatime, not ro);
 * whether atimed looks at its files at all (not when its root is a file
 * or it is over-mounted); both: whether a sweep measures its updates.
 * Whether a job of its, or of its filesystem, timed out last. */
bool mount_writes_atime(const TrackedMount *m);
bool mount_sampled(const TrackedMount *m);
bool mount_measured(const TrackedMount *m);
bool mount_stalled(const TrackedMount *m);
/* A mount some user other than root made and serves (FUSE's user_id=): its
 * uid, else 0. */
uint32_t mount_owner(const MountEntry *e);
bool mount_is_users(const MountEntry *e);
/* Whether its jobs go to the pool's bounded class: it stalled, or a user
 * serves it. */
bool mount_bounded(const TrackedMount *m);
bool mount_on_btrfs(const TrackedMount *m);
/* The mount's history key from its entry and its filesystem's identity,
 * or none while that is not known (tracker_mount_key()). */
void mount_set_key(TrackedMount *m);
/* A mount found to have a file for its root: said once, and never
 * probed, walked or sampled again (its id cannot come to name a
 * directory). */
void mount_mark_not_dir(Tracker *t, TrackedMount *m);
/* The mount with that id in the table last given, or NULL. */
TrackedMount *tracker_lookup_mount(const Tracker *t, int id);

/* Whether any mount of the filesystem is measured, or lets atime be
 * written at all (where none does, a btrfs is looked at alone: place.h). */
bool fs_needs_sampling(const Filesystem *fs);
bool fs_writes_atime(const Filesystem *fs);
/* Who serves the filesystem: the user of a mount of it a user made, else
 * root (0). Threads stuck on its jobs count against that owner's share. */
uint32_t fs_owner(const Filesystem *fs);
bool fs_bounded(const Filesystem *fs);
/* Whether a job of the filesystem may start now: none out, not gone, and
 * past its back-off. */
bool fs_can_run(const Filesystem *fs, uint64_t now);
/* Frees a filesystem no job of which is out (its sampler is not lent). */
void fs_free(Filesystem *fs);

/* What it shows of a mount may have changed: whoever serves it from a
 * cache is told (TrackerHooks.changed). */
void tracker_changed(Tracker *t);
/* The one way to make the scheduler look again: what to look at is noted,
 * and a turn of it (planner.c's kick()) is due at the loop's next
 * iteration, once, however many ask before it comes. 0 asks for a turn
 * that looks only at what it always does (the walk step that may take
 * what is left of the tick) and at what the last turn left. */
void tracker_plan(Tracker *t, PlanWhat what);
/* A sweep of fs is due as soon as it may run: the one way to ask for one. */
void fs_want_sweep(Filesystem *fs);
