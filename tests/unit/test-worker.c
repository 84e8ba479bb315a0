/* test-worker: the pool under a job that outlives its deadline: the
 * timeout is reported at once, the pool keeps its capacity, and the late
 * completion still arrives; a job whose deadline passes in the queue
 * expires, never runs, and nothing follows; completions of many jobs at
 * once are each delivered once; and the one-job-in-flight slot's
 * contract. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../tap.h"
#include "worker.h"

struct rec {
        WorkerStatus seen[4];
        unsigned n;
        unsigned sleep_ms;
        bool ran;
};

static void work(void *arg, const atomic_bool *cancel) {
        struct rec *r = arg;
        r->ran = true;
        usleep(r->sleep_ms * 1000);
}

static void done(void *arg, WorkerStatus st) {
        struct rec *r = arg;
        if (r->n < 4)
                r->seen[r->n++] = st;
}

/* Runs the loop for about 'ms' milliseconds. */
static void run_for(sd_event *e, unsigned ms) {
        uint64_t start, now;

        sd_event_now(e, CLOCK_MONOTONIC, &start);
        do {
                (void) sd_event_run(e, 10 * 1000);
                sd_event_now(e, CLOCK_MONOTONIC, &now);
        } while (now - start < (uint64_t) ms * 1000);
}

/* Runs the loop until pred(arg) holds, for 'limit_ms' at most (a loaded
 * machine may take its time; the checks are on what happened, not when). */
static bool run_until(sd_event *e, bool (*pred)(const void *arg), const void *arg, unsigned limit_ms) {
        uint64_t start, now;

        sd_event_now(e, CLOCK_MONOTONIC, &start);
        do {
                if (pred(arg))
                        return true;
                (void) sd_event_run(e, 10 * 1000);
                sd_event_now(e, CLOCK_MONOTONIC, &now);
        } while (now - start < (uint64_t) limit_ms * 1000);
        return pred(arg);
}

static bool rec_completed(const void *arg) {
        return ((const struct rec *) arg)->n > 0;
}

static bool rec_ran(const void *arg) {
        return ((const struct rec *) arg)->ran;
}

struct stuck_want {
        const WorkerPool *pool;
        unsigned n;
};

static bool stuck_is(const void *arg) {
        const struct stuck_want *w = arg;

        return worker_pool_bounded_stuck(w->pool) == w->n;
}

/* The slot's owner: counts what the contract promises to call. */
struct owner {
        unsigned made, freed, again, late_seen;
        unsigned sleep_ms;
        WorkerStatus last;
        unsigned n_done;
        bool fail_make;
};

struct slot_job {
        struct owner *o;
        unsigned sleep_ms;
        bool ran;
};

static int slot_make(void *userdata, void **ret) {
        struct owner *o = userdata;
        struct slot_job *j;

        if (o->fail_make)
                return -ENOMEM;
        j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        *j = (struct slot_job) { .o = o, .sleep_ms = o->sleep_ms };
        o->made++;
        *ret = j;
        return 0;
}

static void slot_run(void *arg, const atomic_bool *cancel) {
        struct slot_job *j = arg;

        j->ran = true;
        usleep(j->sleep_ms * 1000);
}

static void slot_done(void *userdata, void *job, WorkerStatus st) {
        struct owner *o = userdata;

        o->last = st;
        o->n_done++;
        o->late_seen += st == WORKER_LATE;
}

/* Freeing is counted through the job: the owner may be gone. */
static unsigned jobs_freed;
static void slot_free(void *job) {
        jobs_freed++;
        free(job);
}

static void slot_again(void *userdata) {
        ((struct owner *) userdata)->again++;
}

/* One job in flight, one contract: requests while busy coalesce into one
 * 'again'; a timeout keeps the slot busy until the late return; a job
 * refused by the pool runs here if asked; a detached job is freed when it
 * comes back, its owner not called. */
/* Runs the loop until 'cond' holds, or for about 'ms' milliseconds at least:
 * a loaded machine makes fixed waits flaky. */
#define RUN_UNTIL(e, cond, ms)                                                                     \
        for (unsigned _i = 0; _i < (ms) / 10 && !(cond); _i++)                                    \
                (void) sd_event_run((e), 10 * 1000)

static void test_slot(sd_event *e, WorkerPool *p) {
        const WorkerSlotOps ops = { .make = slot_make, .run = slot_run, .done = slot_done, .free = slot_free,
                                    .again = slot_again };
        struct owner o = { .sleep_ms = 200 };
        WorkerSlot *s = NULL;

        jobs_freed = 0;
        ok(worker_slot_new(p, &ops, &o, &s) == 0, "a slot on the pool");
        is_int(worker_slot_start(s, 10000 * 1000), 1, "a job goes out");
        ok(worker_slot_busy(s), "the slot is busy while it is out");
        is_int(worker_slot_start(s, 10000 * 1000), 0, "a second request while it runs makes no job");
        is_int(worker_slot_start(s, 10000 * 1000), 0, "nor does a third");
        is_int(o.made, 1, "one job made");
        RUN_UNTIL(e, o.n_done > 0 && o.again > 0, 5000);
        ok(o.n_done == 1 && o.last == WORKER_DONE && jobs_freed == 1, "it comes back done, and is freed");
        is_int(o.again, 1, "the requests meanwhile are answered by one 'again'");
        ok(!worker_slot_busy(s), "the slot is free again");

        o = (struct owner) { .sleep_ms = 2000 };
        is_int(worker_slot_start(s, 100 * 1000), 1, "a job that overruns its 100 ms deadline");
        RUN_UNTIL(e, o.n_done > 0, 1500);
        ok(o.n_done == 1 && o.last == WORKER_TIMED_OUT, "its timeout is reported");
        ok(worker_slot_busy(s) && jobs_freed == 1, "the slot stays busy, the job not freed (the thread has it)");
        is_int(worker_slot_start(s, 100 * 1000), 0, "a request meanwhile waits for it");
        RUN_UNTIL(e, o.n_done > 1 && o.again > 0, 10000);
        ok(o.n_done == 2 && o.late_seen == 1 && jobs_freed == 2, "then it is back late, and freed");
        ok(o.again == 1 && !worker_slot_busy(s), "and the request made meanwhile is answered");

        o = (struct owner) { .sleep_ms = 300 };
        is_int(worker_slot_start(s, 10000 * 1000), 1, "a job out when its owner goes away");
        s = worker_slot_free(s);
        RUN_UNTIL(e, jobs_freed == 3, 5000);
        ok(o.n_done == 0 && o.again == 0 && jobs_freed == 3, "back after: freed, its owner never called");

        o = (struct owner) { .fail_make = true };
        ok(worker_slot_new(p, &ops, &o, &s) == 0 && worker_slot_start(s, 1000) == -ENOMEM && !worker_slot_busy(s),
           "a job that cannot be made: the error, nothing out");
        s = worker_slot_free(s);

        {
                /* No pool (or a refusal): run here when the owner says so. */
                WorkerSlotOps here = ops;
                struct owner h = {};

                here.run_here = true;
                ok(worker_slot_new(NULL, &here, &h, &s) == 0 && worker_slot_start(s, 1000) == 1,
                   "a refused job with run_here");
                ok(h.n_done == 1 && h.last == WORKER_DONE && !worker_slot_busy(s) && jobs_freed == 4,
                   "ran on the loop, done at once, freed");
                s = worker_slot_free(s);
                here.run_here = false;
                ok(worker_slot_new(NULL, &here, &h, &s) == 0 && worker_slot_start(s, 1000) < 0 && h.n_done == 1 &&
                           jobs_freed == 5,
                   "without run_here: the error, the job freed, done not called");
                s = worker_slot_free(s);
        }
}

int main(void) {
        sd_event *e = NULL;
        WorkerPool *p = NULL;
        struct rec slow = { .sleep_ms = 600 }, quick = { .sleep_ms = 10 }, queued = { .sleep_ms = 10 };

        ok(sd_event_new(&e) >= 0 && worker_pool_new(e, 1, &p) == 0, "a pool of one thread");
        ok(worker_submit(p, work, done, &slow, 100 * 1000) == 0, "a job that will overrun its 100 ms deadline");
        ok(worker_submit(p, work, done, &quick, 2000 * 1000) == 0, "a quick job behind it");
        run_for(e, 400);
        ok(slow.n == 1 && slow.seen[0] == WORKER_TIMED_OUT, "the overrun is reported at its deadline");
        ok(quick.n == 1 && quick.seen[0] == WORKER_DONE, "a replacement thread ran the queued job meanwhile");
        is_int(worker_pool_stuck(p), 1, "one thread counted as stuck");

        run_for(e, 500);
        ok(slow.n == 2 && slow.seen[1] == WORKER_LATE, "its late completion arrives");
        is_int(worker_pool_stuck(p), 0, "no thread stuck any more");

        {
                struct rec busy = { .sleep_ms = 1500 }, behind = { .sleep_ms = 10 };

                ok(worker_submit(p, work, done, &busy, 5000 * 1000) == 0 &&
                           worker_submit(p, work, done, &behind, 100 * 1000) == 0,
                   "a job queued behind a long one, with a 100 ms deadline");
                run_for(e, 300);
                ok(behind.n == 1 && behind.seen[0] == WORKER_EXPIRED && busy.n == 0,
                   "its deadline passes while it waits: expired, the long one still running");
                run_for(e, 1600);
                ok(behind.n == 1 && !behind.ran, "nothing follows, and it never ran");
                ok(busy.n == 1 && busy.seen[0] == WORKER_DONE, "the long one completes");
                is_int(worker_pool_stuck(p), 0, "no thread written off for it");
        }
        {
                /* Completions coalesce (one wakeup of the loop per list of
                 * finished jobs): many quick jobs on several threads, each
                 * completed once, none lost. */
                WorkerPool *four = NULL;
                struct rec many[200] = {};
                unsigned once = 0, submitted = 0;

                ok(worker_pool_new(e, 4, &four) == 0, "a pool of four threads");
                for (size_t i = 0; i < ELEMENTSOF(many); i++)
                        submitted += worker_submit(four, work, done, &many[i], 10 * 1000 * 1000) == 0;
                for (unsigned k = 0; k < 500 && once < ELEMENTSOF(many); k++) {
                        (void) sd_event_run(e, 10 * 1000);
                        once = 0;
                        for (size_t i = 0; i < ELEMENTSOF(many); i++)
                                once += many[i].n == 1 && many[i].seen[0] == WORKER_DONE;
                }
                is_int(submitted, ELEMENTSOF(many), "200 quick jobs submitted");
                is_int(once, ELEMENTSOF(many), "each completed once, in the loop, none lost");
                worker_pool_free(four);
        }
        ok(worker_submit(p, work, done, &queued, 2000 * 1000) == 0, "a job submitted before shutdown");
        /* The bounded class: one runs at a time, beside ordinary jobs, and
         * its hung jobs take at most WORKER_BOUNDED_STUCK threads. */
        {
                struct rec hung[WORKER_BOUNDED_STUCK + 1], other = { .sleep_ms = 10 }, plain = { .sleep_ms = 10 },
                           last = { .sleep_ms = 10 };
                WorkerPool *two = NULL;

                ok(worker_pool_new(e, 2, &two) == 0, "a pool of two threads");

                /* Hung long enough to be stuck all at once, however slowly
                 * a loaded machine gets them there. */
                for (unsigned i = 0; i <= WORKER_BOUNDED_STUCK; i++)
                        hung[i] = (struct rec) { .sleep_ms = 6000 };
                ok(worker_submit_bounded(two, work, done, &hung[0], 100 * 1000) == 0 &&
                           worker_submit_bounded(two, work, done, &other, 60 * 1000) == 0,
                   "two bounded jobs queued");
                ok(worker_submit(two, work, done, &plain, 2000 * 1000) == 0, "an ordinary job behind them");
                ok(run_until(e, rec_completed, &plain, 5000) && plain.seen[0] == WORKER_DONE,
                   "the ordinary one runs beside it");
                ok(run_until(e, rec_ran, &hung[0], 5000) && !other.ran, "one bounded job runs at a time");
                ok(run_until(e, rec_completed, &other, 5000) && other.seen[0] == WORKER_EXPIRED && !other.ran,
                   "the second bounded one waited, and expired");
                for (unsigned i = 1; i < WORKER_BOUNDED_STUCK; i++) {
                        (void) worker_submit_bounded(two, work, done, &hung[i], 100 * 1000);
                        (void) run_until(e, stuck_is, &(struct stuck_want) { two, i + 1 }, 3000);
                }
                is_int(worker_pool_bounded_stuck(two), WORKER_BOUNDED_STUCK, "hung bounded jobs: stuck threads");
                is_int(worker_submit_bounded(two, work, done, &hung[WORKER_BOUNDED_STUCK], 100 * 1000), -EBUSY,
                       "with that many stuck, a bounded job is refused");
                ok(worker_submit(two, work, done, &last, 2000 * 1000) == 0, "an ordinary one is not");
                ok(run_until(e, rec_completed, &last, 5000) && last.seen[0] == WORKER_DONE, "and runs");
                ok(run_until(e, stuck_is, &(struct stuck_want) { two, 0 }, 20000), "once they come back, none stuck");
                worker_pool_free(two);
        }
        test_slot(e, p);
        worker_pool_free(p);
        ok(queued.n == 1 && (queued.seen[0] == WORKER_DONE || queued.seen[0] == WORKER_CANCELLED),
           "shutdown completes or cancels it, never loses it");
        sd_event_unref(e);
        return tap_done();
}
