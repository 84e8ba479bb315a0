/* store-flush.c: the history's writes, kept off the event loop (see
 * store.h, StoreFlusher). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store.h"
#include "time-util.h"

struct StoreFlusher {
        Store *store;       /* borrowed */
        WorkerSlot *slot;
        char *dir;          /* for log lines */
        bool snapshot;      /* what the next write is: a snapshot, or the journal */
        int last_error;     /* logged once until it changes or clears */
        void (*idle)(void *userdata);
        void *idle_userdata;
};

typedef struct FlushJob {
        StoreWrite *w;
} FlushJob;

static int64_t now_seconds(void) {
        return (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC);
}

/* A failure to write history is logged once (until it changes) and
 * retried at the next flush: the daemon keeps everything in memory
 * meanwhile. */
static void flush_report(StoreFlusher *f, int r) {
        if (r < 0 && r != f->last_error)
                log_warning_errno(r, "Cannot write history to %s, keeping it in memory and retrying: %m", f->dir);
        else if (r >= 0 && f->last_error < 0)
                log_info("History written to %s again.", f->dir);
        f->last_error = r < 0 ? r : 0;
}

static void flush_job_free(void *job) {
        FlushJob *j = job;

        store_write_free(j->w);
        free(j);
}

static int flush_make(void *userdata, void **ret) {
        StoreFlusher *f = userdata;
        FlushJob *j;
        StoreWrite *w;
        int r;

        r = store_flush_begin(f->store, now_seconds(), f->snapshot, &w);
        if (r < 0)
                return r;
        if (!w)
                return -ENODATA; /* nothing to write */
        j = calloc(1, sizeof *j);
        if (!j) {
                store_write_free(w);
                return -ENOMEM;
        }
        j->w = w;
        *ret = j;
        return 0;
}

static void flush_work(void *arg, const atomic_bool *cancel) {
        FlushJob *j = arg;

        store_write_run(j->w);
}

static void flush_done(void *userdata, void *job, WorkerStatus status) {
        StoreFlusher *f = userdata;
        FlushJob *j = job;
        void (*idle)(void *) = f->idle;

        if (status == WORKER_TIMED_OUT)
                return; /* never: a write has no deadline */
        flush_report(f, store_flush_end(f->store, TAKE_PTR(j->w)));
        f->idle = NULL;
        if (idle && status != WORKER_CANCELLED)
                idle(f->idle_userdata);
}

static const WorkerSlotOps flush_ops = {
        .make = flush_make,
        .run = flush_work,
        .done = flush_done,
        .free = flush_job_free,
        /* No 'again': a flush asked for while one is out is skipped. */
        .run_here = true, /* refused by the pool: written here */
};

int store_flusher_new(Store *s, WorkerPool *pool, const char *dir, StoreFlusher **ret) {
        _cleanup_(store_flusher_freep) StoreFlusher *f = calloc(1, sizeof *f);
        int r;

        if (!f)
                return -ENOMEM;
        f->store = s;
        if (!(f->dir = strdup(dir)))
                return -ENOMEM;
        r = worker_slot_new(pool, &flush_ops, f, &f->slot);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

void store_flusher_request(StoreFlusher *f, bool snapshot) {
        int r;

        if (worker_slot_busy(f->slot)) {
                log_debug("History write still out; this flush is skipped.");
                return;
        }
        f->snapshot = snapshot;
        r = worker_slot_start(f->slot, WORKER_NO_DEADLINE);
        if (r < 0)
                flush_report(f, r == -ENODATA ? 0 : r); /* -ENODATA: nothing was pending */
}

bool store_flusher_busy(const StoreFlusher *f) {
        return worker_slot_busy(f->slot);
}

void store_flusher_now(StoreFlusher *f, bool snapshot) {
        flush_report(f, store_flush(f->store, now_seconds(), snapshot));
}

void store_flusher_when_idle(StoreFlusher *f, void (*cb)(void *userdata), void *userdata) {
        if (!worker_slot_busy(f->slot)) {
                cb(userdata);
                return;
        }
        f->idle = cb;
        f->idle_userdata = userdata;
}

StoreFlusher *store_flusher_free(StoreFlusher *f) {
        if (!f)
                return NULL;
        worker_slot_free(f->slot);
        free(f->dir);
        free(f);
        return NULL;
}
