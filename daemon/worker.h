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

int worker_submit(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec);

/* Jobs on filesystems the pool must not be given to (mounts users own,
 * mounts that keep timing out): one of them runs at a time, on one of the
 * pool's threads when it has two or more, so the others stay free for
 * everyone else's jobs; and at most WORKER_BOUNDED_STUCK threads are ever
 * stuck on them: while that many are, submitting one fails with -EBUSY
 * (try again later), so no number of hung mounts exhausts the threads. */
#define WORKER_BOUNDED_STUCK 4
int worker_submit_bounded(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec);
/* Threads stuck on bounded jobs. */
unsigned worker_pool_bounded_stuck(const WorkerPool *p);

/* Threads currently stuck past a deadline. */
unsigned worker_pool_stuck(const WorkerPool *p);
