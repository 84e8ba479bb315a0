/* worker.h: a small thread pool for everything that touches a filesystem.
 *
 * The event loop must never block on a dead NFS server or a stopped FUSE
 * daemon, so probes, sweeps and walks run here, each with a deadline. A job
 * past its deadline is reported at once: one still queued as expired (it
 * never ran, and is done with); one running as timed out, its thread written
 * off and replaced, and when (if ever) the thread comes back the job's
 * completion is delivered with WORKER_LATE so its owner can free what it
 * lent out. Completions are delivered in the event loop. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "macro.h"

typedef struct WorkerPool WorkerPool;
typedef struct WorkerJob WorkerJob;

typedef enum WorkerStatus {
        WORKER_DONE,      /* ran to completion in time */
        WORKER_TIMED_OUT, /* deadline passed while it ran: a WORKER_LATE follows */
        WORKER_EXPIRED,   /* deadline passed before a thread took it: it never ran, nothing follows */
        WORKER_LATE,      /* a timed-out job's thread finally returned */
        WORKER_CANCELLED, /* never ran: the pool is shutting down */
} WorkerStatus;

/* Runs in a worker thread. 'cancel' becomes true on shutdown or timeout;
 * long jobs should check it between steps. */
typedef void (*worker_fn)(void *arg, const atomic_bool *cancel);
/* Runs in the event loop. Called once with DONE, TIMED_OUT, EXPIRED or
 * CANCELLED, and a second time with LATE for a job that timed out while
 * running (and only then). */
typedef void (*worker_done_fn)(void *arg, WorkerStatus status);

int worker_pool_new(sd_event *e, unsigned n_threads, WorkerPool **ret);
/* Waits briefly for running jobs (they are asked to cancel), then leaves
 * behind any thread stuck in the kernel. */
WorkerPool *worker_pool_free(WorkerPool *p);
DEFINE_FREE_FUNC(WorkerPool, worker_pool_free);

/* A job with no deadline: it ends when it returns. */
#define WORKER_NO_DEADLINE UINT64_MAX
int worker_submit(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec);

/* Jobs on filesystems the pool must not be given to (mounts users own,
 * mounts that keep timing out): one of them runs at a time, on one of the
 * pool's threads when it has two or more, so the others stay free for
 * everyone else's jobs. Threads stuck on them are counted by 'owner' (the
 * uid that serves the filesystem: a FUSE mount's user_id=, 0 for root's):
 * at most WORKER_BOUNDED_STUCK for one owner, so one user's hung mounts
 * cannot stop the jobs of anyone else's, root's stalled NFS mount
 * included; and WORKER_BOUNDED_STUCK_ALL in all, so no number of hung
 * mounts exhausts the threads. Past either, submitting one fails with
 * -EBUSY (try again later). */
#define WORKER_BOUNDED_STUCK 2
#define WORKER_BOUNDED_STUCK_ALL 16
int worker_submit_bounded(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec,
                          uint32_t owner);
/* Threads stuck on bounded jobs, of every owner. */
unsigned worker_pool_bounded_stuck(WorkerPool *p);

/* Threads currently stuck past a deadline. */
unsigned worker_pool_stuck(WorkerPool *p);

/* A background job of which one at a time may be out: the mount table's
 * read (mounts.h), the history flush (store.h), the consumer scan
 * (consumers.h), the textfile export (export.h). The one contract for all:
 *
 * - Starting: worker_slot_start() asks 'make' for a job built from the
 *   owner's state now, and submits it with 'run' for the worker thread.
 *   While a job is out it makes none: the request is remembered, and once
 *   the job is back 'again' is called once (however many requests came
 *   meanwhile); an owner without 'again' has such requests dropped.
 * - If the pool refuses the job (no memory for it or its timer: a slot's
 *   job is never a bounded one, so no count of stuck threads refuses it),
 *   it is run here, on the loop, when the owner says so ('run_here'), else
 *   freed, and worker_slot_start() returns the error.
 * - Timing out: 'done' is called with WORKER_TIMED_OUT (the job is still
 *   the thread's: look, do not free); the slot stays busy until the thread
 *   returns and 'done' is called again with WORKER_LATE. A job that expired
 *   in the queue or was cancelled (the pool shutting down) gets 'done' once
 *   with WORKER_EXPIRED or WORKER_CANCELLED.
 * - After the final 'done' (any status but WORKER_TIMED_OUT) the slot frees
 *   the job with 'free'; 'done' may take what it wants out of it first.
 * - The owner going away: worker_slot_free() with a job out detaches it:
 *   when (if ever) it comes back, it is freed, and neither 'done' nor
 *   'again' is called. The pool must outlive the slot's jobs, not the
 *   slot. */
typedef struct WorkerSlot WorkerSlot;
typedef struct WorkerSlotOps {
        int (*make)(void *userdata, void **ret_job);            /* 0 with a job, or -errno; on the loop */
        worker_fn run;                                          /* (job, cancel) in a worker thread */
        void (*done)(void *userdata, void *job, WorkerStatus status); /* on the loop, the owner still there */
        void (*free)(void *job);
        void (*again)(void *userdata); /* may be NULL: requests while busy are dropped */
        bool run_here;                 /* run a refused job on the loop */
} WorkerSlotOps;

int worker_slot_new(WorkerPool *p, const WorkerSlotOps *ops, void *userdata, WorkerSlot **ret);
WorkerSlot *worker_slot_free(WorkerSlot *s);
DEFINE_FREE_FUNC(WorkerSlot, worker_slot_free);
/* 1 if a job was submitted (or, refused, run here), 0 if one is out (the
 * request remembered), -errno if none could be made or submitted. */
int worker_slot_start(WorkerSlot *s, uint64_t timeout_usec);
/* A job is out (timed out ones included). */
bool worker_slot_busy(const WorkerSlot *s);
