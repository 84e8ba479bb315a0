/* tracker.h: what atimed knows about each tracked mount and filesystem
 * beyond the mount table, and the schedule that keeps it current: probes
 * per mount, reservoir walks and sweeps per filesystem, device rates. All
 * blocking work goes to the worker pool with a deadline; a filesystem or
 * mount whose job misses it is "stalled" and retried with backoff, with at
 * most one thread ever stuck on it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "btrfs-meter.h"
#include "config.h"
#include "device.h"
#include "activity.h"
#include "estimate.h"
#include "fscounter.h"
#include "mounts.h"
#include "probe.h"
#include "sampler.h"
#include "stats.h"
#include "tracker-types.h"
#include "worker.h"

const char *activity_source_to_string(ActivitySource s);

/* 'pool' is the caller's and must outlive the tracker's jobs: call
 * tracker_shutdown(), free the pool (its last completions still reach the
 * tracker), then tracker_free(). */
int tracker_new(sd_event *e, WorkerPool *pool, const struct config *config, Tracker **ret);
void tracker_shutdown(Tracker *t);
Tracker *tracker_free(Tracker *t);
DEFINE_FREE_FUNC(Tracker, tracker_free);

/* Where the tracker reads the time for its schedule (probes due, walk
 * ticks, back-off, sweep times): 'now' gives CLOCK_MONOTONIC or
 * CLOCK_REALTIME in usec; NULL: clock_gettime(), the default. A clock of
 * the caller's (a test's) moves when the caller says so, by calling this
 * again: then what has come due on it runs, and its timers wait for it,
 * not for the system's. The sweeps' times are on it too (the interval a
 * sweep measures, and what is due after a baseline: the first figure);
 * the atimes the sampler reads, and the deadlines of jobs, stay on the
 * system's clocks. The fine passes, about every second of the system's
 * clock by default, come on a clock of the caller's only when it calls
 * tracker_fine_pass(). */
void tracker_set_clock(Tracker *t, tracker_clock_fn now, void *userdata);
/* A fine pass now: each filesystem with inodes that moved lately and
 * nothing else out gets a fine sweep while job slots are free, offered in
 * turn from where the last pass's slots ran out. The fine timer's, about
 * every second; a test's own (with a clock of its own, the only ones). */
void tracker_fine_pass(Tracker *t);

/* A test's hook, called in the worker thread as each filesystem job (the
 * UUID read, a walk step, a sweep) begins, with the mount point the job
 * reaches the filesystem through. A hook that blocks holds the job there
 * as a stopped FUSE daemon would: how a test makes a job miss its deadline
 * on a machine of any speed. Jobs made after the call get it; NULL: none.
 * The daemon never sets one. */
void tracker_set_job_hook(Tracker *t, tracker_job_hook_fn hook, void *userdata);

/* The configuration changed (reload); 'config' must outlive the tracker. */
void tracker_set_config(Tracker *t, const struct config *config);
/* The mount table changed; 'table' must stay valid until the next call. */
int tracker_update(Tracker *t, const MountTable *table);

const TrackedMount *tracker_find(const Tracker *t, int mount_id);
/* A mount's activity as it should be reported: exact zero for mounts that
 * cannot write atime. False if nothing is known yet. */
bool tracker_mount_activity(const TrackedMount *m, struct activity *ret);
/* False when the mount has a figure (or cannot write atime). A mount
 * that is never sampled (a file bind mount, an over-mounted one) says why
 * in its stage, whatever its policy. */
bool tracker_mount_progress(const TrackedMount *m, struct progress *ret);

/* The mount's filesystem as the tracker knows it: its device (NULL if it
 * has none), the device's write rate over the last sampler interval and its
 * counters at the last reading (false: none yet), the inodes in use at the
 * last sweep (0: not swept yet). */
const DeviceInfo *tracker_mount_device(const TrackedMount *m);
bool tracker_mount_device_rate(const TrackedMount *m, struct device_rate *ret);
bool tracker_mount_device_totals(const TrackedMount *m, DiskStat *ret);
uint64_t tracker_mount_population(const TrackedMount *m);

/* A btrfs mount's snapshots and the metadata atime un-shares, as the last
 * sweep of its filesystem left them (btrfs-meter.h). False on other
 * filesystems. */
bool tracker_mount_btrfs(const TrackedMount *m, struct btrfs_status *ret);
/* The btrfs model of m's filesystem (btrfs-meter.h): false where m is not
 * on a btrfs. tracker_mount_btrfs_seed() gives it one kept from before a
 * restart (btrfs_meter_seed(): only while it has learned nothing). */
bool tracker_mount_btrfs_model(const TrackedMount *m, BtrfsModel *ret);
void tracker_mount_btrfs_seed(const TrackedMount *m, const BtrfsModel *saved);

/* Whether a mount lets atime be written at all (not noatime, not ro). */
bool tracker_mount_writes_atime(const TrackedMount *m);
bool tracker_mount_stalled(const TrackedMount *m);
/* Whether atimed looks at the mount's files at all: not when its root is
 * a file or it is over-mounted (its path leads to another mount). */
bool tracker_mount_sampled(const TrackedMount *m);
/* A mount a user other than root made and serves (FUSE user_id=): its jobs
 * get a bounded share of the workers, its history gives way first. */
bool tracker_mount_is_users(const MountEntry *e);

/* Probes the mount now and calls cb with the result (also when it is read
 * only, stalled, or times out). cb may be called before this returns. */
int tracker_probe_now(Tracker *t, int mount_id, tracker_probe_cb cb, void *userdata);

/* Worker threads stuck on hung filesystems, for the status line. */
unsigned tracker_stuck_threads(const Tracker *t);
/* The tracker's jobs out in the pool (probes, UUID reads, walk steps,
 * sweeps, fine sweeps), stuck ones left out: for a test that waits until
 * every job it caused is back, whatever the machine's speed. */
unsigned tracker_jobs_out(const Tracker *t);

/* A key for the mount's history that survives restarts, reboots and
 * remounts: its filesystem's UUID (or, without one, its source and type),
 * its root in the filesystem, and its mount point (store_key_format()).
 * NULL until the UUID lookup is done, or without memory. The tracker owns
 * it and formats it once, when the filesystem is identified or the table
 * changes: it is asked for per mount at every tick. */
const char *tracker_mount_key(const TrackedMount *m);

/* Where measurements go as they are made: 'tick' once per sampler interval
 * (t: Unix seconds, at the middle of the interval's bucket; the device
 * rates are new then), before that interval's sweeps are submitted;
 * 'activity' for every mount whose filesystem's sweep finished; 'changed'
 * whenever what it shows of a mount may have changed. */
void tracker_set_hooks(Tracker *t, const TrackerHooks *hooks);
