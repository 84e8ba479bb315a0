/* test-worker: the pool under a job that outlives its deadline: the
 * timeout is reported at once, the pool keeps its capacity, and the late
 * completion still arrives; a job whose deadline passes in the queue
 * expires, never runs, and nothing follows; completions of many jobs at
 * once are each delivered once; and the one-job-in-flight slot's
 * contract.
 *
 * No check depends on the machine's speed. A job that must overrun is
 * held in its thread until the test lets it go (hold()/release()), and the
 * loop (where deadlines fire) runs only once the job is seen running, so
 * its deadline finds it running however slowly a thread took it; a job
 * that must expire waits behind such a held job. Every wait for an event
 * returns as soon as it comes; its bound only ends a test that would hang. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../tap.h"
#include "loop-wait.h"
#include "worker.h"

#define WAIT_USEC LOOP_WAIT_USEC

/* The gate that held jobs wait at: one lock for all, a flag per job. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;

struct rec {
        WorkerStatus seen[4];
        unsigned n;
        bool held; /* waits at the gate until released (under gate_lock) */
        bool ran;  /* under gate_lock */
};

/* Runs in a worker thread: says it runs, then waits while held. */
static void gate_pass(bool *ran, const bool *held) {
        pthread_mutex_lock(&gate_lock);
        *ran = true;
        pthread_cond_broadcast(&gate_cond);
        while (*held)
                pthread_cond_wait(&gate_cond, &gate_lock);
        pthread_mutex_unlock(&gate_lock);
}

static void release(bool *held) {
        pthread_mutex_lock(&gate_lock);
        *held = false;
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
}

/* Waits, without running the loop (so no deadline can fire meanwhile),
 * until a thread runs the job. */
static bool wait_ran(const bool *ran) {
        struct timespec until;
        int r = 0;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += WAIT_USEC / USEC_PER_SEC;
        pthread_mutex_lock(&gate_lock);
        while (!*ran && r == 0)
                r = pthread_cond_timedwait(&gate_cond, &gate_lock, &until);
        r = *ran;
        pthread_mutex_unlock(&gate_lock);
        return r;
}

static bool ran(const struct rec *r) {
        bool b;

        pthread_mutex_lock(&gate_lock);
        b = r->ran;
        pthread_mutex_unlock(&gate_lock);
        return b;
}

static void work(void *arg, const atomic_bool *cancel) {
        struct rec *r = arg;

        gate_pass(&r->ran, &r->held);
}

static void done(void *arg, WorkerStatus st) {
        struct rec *r = arg;
        if (r->n < 4)
                r->seen[r->n++] = st;
}

/* The slot's owner: counts what the contract promises to call. */
struct owner {
        unsigned made, freed, again, late_seen;
        bool hold; /* its jobs are made held */
        WorkerStatus last;
        unsigned n_done;
        bool fail_make;
};

struct slot_job {
        struct owner *o;
        bool held, ran; /* under gate_lock */
};

/* The slot's last job made, for the test to release. */
static struct slot_job *last_job;

static int slot_make(void *userdata, void **ret) {
        struct owner *o = userdata;
        struct slot_job *j;

        if (o->fail_make)
                return -ENOMEM;
        j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        *j = (struct slot_job) { .o = o, .held = o->hold };
        o->made++;
        *ret = last_job = j;
        return 0;
}

static void slot_run(void *arg, const atomic_bool *cancel) {
        struct slot_job *j = arg;

        gate_pass(&j->ran, &j->held);
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
static void test_slot(sd_event *e, WorkerPool *p) {
        const WorkerSlotOps ops = { .make = slot_make, .run = slot_run, .done = slot_done, .free = slot_free,
                                    .again = slot_again };
        struct owner o = { .hold = true };
        struct slot_job *j;
        WorkerSlot *s = NULL;

        jobs_freed = 0;
        ok(worker_slot_new(p, &ops, &o, &s) == 0, "a slot on the pool");
        is_int(worker_slot_start(s, 60 * USEC_PER_SEC), 1, "a job goes out");
        j = last_job;
        ok(worker_slot_busy(s), "the slot is busy while it is out");
        is_int(worker_slot_start(s, 60 * USEC_PER_SEC), 0, "a second request while it runs makes no job");
        is_int(worker_slot_start(s, 60 * USEC_PER_SEC), 0, "nor does a third");
        is_int(o.made, 1, "one job made");
        o.hold = false; /* the job 'again' may make runs through */
        release(&j->held);
        RUN_LOOP_UNTIL(e, o.n_done > 0 && o.again > 0);
        ok(o.n_done == 1 && o.last == WORKER_DONE && jobs_freed == 1, "it comes back done, and is freed");
        is_int(o.again, 1, "the requests meanwhile are answered by one 'again'");
        ok(!worker_slot_busy(s), "the slot is free again");

        o = (struct owner) { .hold = true };
        is_int(worker_slot_start(s, 100 * USEC_PER_MSEC), 1, "a job that overruns its 100 ms deadline");
        j = last_job;
        ok(wait_ran(&j->ran), "it runs");
        RUN_LOOP_UNTIL(e, o.n_done > 0);
        ok(o.n_done == 1 && o.last == WORKER_TIMED_OUT, "its timeout is reported");
        ok(worker_slot_busy(s) && jobs_freed == 1, "the slot stays busy, the job not freed (the thread has it)");
        is_int(worker_slot_start(s, 100 * USEC_PER_MSEC), 0, "a request meanwhile waits for it");
        o.hold = false;
        release(&j->held);
        RUN_LOOP_UNTIL(e, o.n_done > 1 && o.again > 0);
        ok(o.n_done == 2 && o.late_seen == 1 && jobs_freed == 2, "then it is back late, and freed");
        ok(o.again == 1 && !worker_slot_busy(s), "and the request made meanwhile is answered");

        o = (struct owner) { .hold = true };
        is_int(worker_slot_start(s, 60 * USEC_PER_SEC), 1, "a job out when its owner goes away");
        j = last_job;
        s = worker_slot_free(s);
        release(&j->held);
        RUN_LOOP_UNTIL(e, jobs_freed == 3);
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

/* The bounded class: one runs at a time, beside ordinary jobs, and its hung
 * jobs take at most WORKER_BOUNDED_STUCK threads. */
static void test_bounded(sd_event *e) {
        struct rec hung[WORKER_BOUNDED_STUCK + 1] = {}, other = {}, plain = {}, last = {}, theirs = {};
        WorkerPool *two = NULL;

        ok(worker_pool_new(e, 2, &two) == 0, "a pool of two threads");
        for (unsigned i = 0; i <= WORKER_BOUNDED_STUCK; i++)
                hung[i].held = true;

        /* The first hung job's deadline is far enough behind the queued
         * one's that the loop, running all the while, takes the two apart. */
        ok(worker_submit_bounded(two, work, done, &hung[0], 2 * USEC_PER_SEC, 1000) == 0 && wait_ran(&hung[0].ran),
           "a bounded job runs");
        ok(worker_submit_bounded(two, work, done, &other, 100 * USEC_PER_MSEC, 1000) == 0,
           "a second bounded job queued behind it");
        ok(worker_submit(two, work, done, &plain, WAIT_USEC) == 0, "an ordinary job behind them");
        RUN_LOOP_UNTIL(e, plain.n > 0);
        ok(plain.n == 1 && plain.seen[0] == WORKER_DONE, "the ordinary one runs beside it");
        ok(!ran(&other), "one bounded job runs at a time");
        RUN_LOOP_UNTIL(e, other.n > 0);
        ok(other.n == 1 && other.seen[0] == WORKER_EXPIRED && !ran(&other), "the second bounded one waited, and expired");
        RUN_LOOP_UNTIL(e, worker_pool_bounded_stuck(two) == 1);
        for (unsigned i = 1; i < WORKER_BOUNDED_STUCK; i++) {
                /* The one bounded job running is stuck: the next may run. */
                (void) worker_submit_bounded(two, work, done, &hung[i], 100 * USEC_PER_MSEC, 1000);
                (void) wait_ran(&hung[i].ran);
                RUN_LOOP_UNTIL(e, worker_pool_bounded_stuck(two) == i + 1);
        }
        is_int(worker_pool_bounded_stuck(two), WORKER_BOUNDED_STUCK, "hung bounded jobs: stuck threads");
        is_int(worker_submit_bounded(two, work, done, &hung[WORKER_BOUNDED_STUCK], 100 * USEC_PER_MSEC, 1000), -EBUSY,
               "with that many stuck, a bounded job of the same owner is refused");
        /* Another owner's (root's stalled NFS mount, another user's) still
         * runs: one user's hung mounts hold only their own share. */
        ok(worker_submit_bounded(two, work, done, &theirs, WAIT_USEC, 0) == 0, "another owner's is not");
        RUN_LOOP_UNTIL(e, theirs.n > 0);
        ok(theirs.n == 1 && theirs.seen[0] == WORKER_DONE, "and runs");
        ok(worker_submit(two, work, done, &last, WAIT_USEC) == 0, "an ordinary one is not");
        RUN_LOOP_UNTIL(e, last.n > 0);
        ok(last.n == 1 && last.seen[0] == WORKER_DONE, "and runs");
        for (unsigned i = 0; i < WORKER_BOUNDED_STUCK; i++)
                release(&hung[i].held);
        RUN_LOOP_UNTIL(e, worker_pool_bounded_stuck(two) == 0);
        is_int(worker_pool_bounded_stuck(two), 0, "once they come back, none stuck");
        /* Their late completions in, before their records go. */
        for (unsigned i = 0; i < WORKER_BOUNDED_STUCK; i++)
                RUN_LOOP_UNTIL(e, hung[i].n == 2);
        worker_pool_free(two);
}

int main(void) {
        sd_event *e = NULL;
        WorkerPool *p = NULL;
        struct rec slow = { .held = true }, quick = {}, queued = {};

        ok(sd_event_new(&e) >= 0 && worker_pool_new(e, 1, &p) == 0, "a pool of one thread");
        ok(worker_submit(p, work, done, &slow, 100 * USEC_PER_MSEC) == 0, "a job that will overrun its 100 ms deadline");
        ok(worker_submit(p, work, done, &quick, WAIT_USEC) == 0, "a quick job behind it");
        ok(wait_ran(&slow.ran), "the first runs");
        RUN_LOOP_UNTIL(e, slow.n > 0 && quick.n > 0);
        ok(slow.n == 1 && slow.seen[0] == WORKER_TIMED_OUT, "the overrun is reported at its deadline");
        ok(quick.n == 1 && quick.seen[0] == WORKER_DONE, "a replacement thread ran the queued job meanwhile");
        is_int(worker_pool_stuck(p), 1, "one thread counted as stuck");

        release(&slow.held);
        RUN_LOOP_UNTIL(e, slow.n > 1);
        ok(slow.n == 2 && slow.seen[1] == WORKER_LATE, "its late completion arrives");
        is_int(worker_pool_stuck(p), 0, "no thread stuck any more");

        {
                struct rec busy = { .held = true }, behind = {};

                ok(worker_submit(p, work, done, &busy, WAIT_USEC) == 0 && wait_ran(&busy.ran) &&
                           worker_submit(p, work, done, &behind, 100 * USEC_PER_MSEC) == 0,
                   "a job queued behind a long one, with a 100 ms deadline");
                RUN_LOOP_UNTIL(e, behind.n > 0);
                ok(behind.n == 1 && behind.seen[0] == WORKER_EXPIRED && busy.n == 0,
                   "its deadline passes while it waits: expired, the long one still running");
                release(&busy.held);
                RUN_LOOP_UNTIL(e, busy.n > 0);
                ok(behind.n == 1 && !ran(&behind), "nothing follows, and it never ran");
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
                        submitted += worker_submit(four, work, done, &many[i], WAIT_USEC) == 0;
                for (uint64_t end = now_usec(CLOCK_MONOTONIC) + WAIT_USEC;
                     once < ELEMENTSOF(many) && now_usec(CLOCK_MONOTONIC) < end;) {
                        (void) sd_event_run(e, 10 * USEC_PER_MSEC);
                        once = 0;
                        for (size_t i = 0; i < ELEMENTSOF(many); i++)
                                once += many[i].n == 1 && many[i].seen[0] == WORKER_DONE;
                }
                is_int(submitted, ELEMENTSOF(many), "200 quick jobs submitted");
                is_int(once, ELEMENTSOF(many), "each completed once, in the loop, none lost");
                worker_pool_free(four);
        }
        ok(worker_submit(p, work, done, &queued, WAIT_USEC) == 0, "a job submitted before shutdown");
        test_bounded(e);
        test_slot(e, p);
        worker_pool_free(p);
        ok(queued.n == 1 && (queued.seen[0] == WORKER_DONE || queued.seen[0] == WORKER_CANCELLED),
           "shutdown completes or cancels it, never loses it");
        sd_event_unref(e);
        return tap_done();
}
