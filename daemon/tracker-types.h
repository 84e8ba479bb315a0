/* tracker-types.h: the tracker's types as others see them (tracker.h)
 * and as its rooms share them (tracker-base.h): a tracked mount, its
 * probe's state, its progress, and the hooks and callbacks the tracker
 * calls. The functions are tracker.h's. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "activity.h"
#include "mounts.h"
#include "probe.h"

typedef struct Tracker Tracker;
typedef struct Filesystem Filesystem;
struct probe_job;

struct probe_state {
        struct probe_result result;
        bool have;       /* result holds a probe's outcome */
        bool running;    /* a job is out (possibly stuck) */
        bool stalled;    /* the last attempt missed its deadline */
        unsigned failures;
        unsigned fail_count; /* probes in a row that could not verify the policy, for the log */
        uint64_t next_due; /* CLOCK_MONOTONIC usec */
        struct probe_job *job; /* the job out, while running */
};

typedef struct TrackedMount {
        int id;
        const MountEntry *entry; /* in the table last given to tracker_update() */
        Filesystem *fs;          /* opaque: see the tracker_mount_*() accessors */
        struct probe_state probe;
        struct activity activity;
        char *key; /* the tracker's: see tracker_mount_key() */
        /* Its root is a file (a file bind mount, found by the first probe
         * or walk to open it): never probed, walked or sampled. */
        bool root_not_dir;
} TrackedMount;

/* What a mount without a figure yet is waiting for. */
struct progress {
        const char *stage; /* STAGE_* of protocol.h */
        uint64_t walked;   /* inodes the sample walk has seen */
        uint64_t inodes;   /* inodes in use on the filesystem; 0: unknown */
        int64_t eta_s;     /* seconds until the first figure, about; -1: unknown */
};

/* The tracker's clock (tracker_set_clock()): CLOCK_MONOTONIC or
 * CLOCK_REALTIME usec. */
typedef uint64_t (*tracker_clock_fn)(clockid_t clock, void *userdata);
/* A test's hook, called in a job's thread (tracker_set_job_hook()). */
typedef void (*tracker_job_hook_fn)(const char *target, void *userdata);
/* A probe's outcome, for whoever asked (tracker_probe_now()). */
typedef void (*tracker_probe_cb)(const TrackedMount *m, const struct probe_result *r, void *userdata);

/* Where measurements go as they are made (tracker_set_hooks()). */
typedef struct TrackerHooks {
        void (*tick)(int64_t t, void *userdata);
        void (*activity)(const TrackedMount *m, const struct activity *a, void *userdata);
        void (*changed)(void *userdata); /* what it knows may have changed: probes, sweeps, stalls, the table */
        void *userdata;
} TrackerHooks;
