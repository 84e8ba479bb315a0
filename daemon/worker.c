/* worker.c: thread pool with deadlines (see worker.h). */
#include "worker.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Threads written off at once at most; past this, new jobs wait. */
#define WORKER_MAX_STUCK 64

typedef enum JobState {
        JOB_QUEUED,
        JOB_RUNNING,
        JOB_FINISHED, /* on the completion list */
} JobState;

struct WorkerJob {
        WorkerPool *pool;
        WorkerJob *next;
        worker_fn fn;
        worker_done_fn done;
        void *arg;
        sd_event_source *timer;
        JobState state;
        bool timed_out;
        bool bounded;   /* worker_submit_bounded()'s */
        uint32_t owner; /* a bounded job's owner */
        atomic_bool cancel;
};

/* One per thread, for joining it once it has left. */
typedef struct WorkerThread {
        WorkerPool *pool;
        pthread_t id;
        struct WorkerThread *next;
} WorkerThread;

struct WorkerPool {
        sd_event *event;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        WorkerJob *queue_head, *queue_tail;
        WorkerJob *finished;   /* completion list, LIFO */
        int efd;
        sd_event_source *efd_source;
        unsigned target;       /* threads that should be available */
        unsigned threads;      /* threads alive, stuck ones included */
        unsigned stuck;        /* threads running a timed-out job */
        unsigned running;      /* jobs being run (stuck ones included) */
        unsigned bounded_running; /* bounded jobs being run, stuck ones excluded */
        unsigned bounded_stuck;   /* threads stuck on a bounded job */
        struct {
                uint32_t owner;
                unsigned stuck;
        } owners[WORKER_BOUNDED_STUCK_ALL]; /* bounded_stuck by owner: those with any */
        unsigned n_owners;
        WorkerThread *exited;  /* threads that left their loop, to be joined */
        bool shutdown;
};

static void job_free(WorkerJob *j) {
        sd_event_source_disable_unref(j->timer);
        free(j);
}

static int spawn_thread_locked(WorkerPool *p);

/* Waits for the threads that said they are leaving: an exit is complete,
 * stack and thread-local storage freed, only once joined. */
static void join_exited(WorkerPool *p) {
        WorkerThread *list;

        pthread_mutex_lock(&p->lock);
        list = p->exited;
        p->exited = NULL;
        pthread_mutex_unlock(&p->lock);
        while (list) {
                WorkerThread *t = list;

                list = t->next;
                (void) pthread_join(t->id, NULL);
                free(t);
        }
}

/* Threads stuck on bounded jobs of 'owner'. */
static unsigned owner_stuck_locked(const WorkerPool *p, uint32_t owner) {
        for (unsigned i = 0; i < p->n_owners; i++)
                if (p->owners[i].owner == owner)
                        return p->owners[i].stuck;
        return 0;
}

/* One more (delta 1) or one fewer (-1) thread stuck on a bounded job of
 * 'owner'. Never more owners than WORKER_BOUNDED_STUCK_ALL, as submit()
 * refuses past that many threads. */
static void owner_count_locked(WorkerPool *p, uint32_t owner, int delta) {
        unsigned i;

        for (i = 0; i < p->n_owners && p->owners[i].owner != owner; i++)
                ;
        if (i == p->n_owners) {
                if (delta < 0 || i == ELEMENTSOF(p->owners))
                        return;
                p->owners[p->n_owners++].owner = owner;
                p->owners[i].stuck = 0;
        }
        p->owners[i].stuck += (unsigned) delta;
        if (p->owners[i].stuck == 0)
                p->owners[i] = p->owners[--p->n_owners];
}

/* Whether a bounded job may start now: none running, and with two threads
 * or more, one of them left for the rest. */
static bool bounded_may_run(const WorkerPool *p) {
        return p->bounded_running == 0;
}

/* Takes the first queued job that may run now, or NULL. */
static WorkerJob *take_job_locked(WorkerPool *p) {
        WorkerJob *prev = NULL;

        for (WorkerJob *j = p->queue_head; j; prev = j, j = j->next) {
                if (j->bounded && !bounded_may_run(p))
                        continue;
                if (prev)
                        prev->next = j->next;
                else
                        p->queue_head = j->next;
                if (p->queue_tail == j)
                        p->queue_tail = prev;
                return j;
        }
        return NULL;
}

static void *thread_main(void *userdata) {
        WorkerThread *self = userdata;
        WorkerPool *p = self->pool;
        uint64_t one = 1;

        pthread_mutex_lock(&p->lock);
        for (;;) {
                WorkerJob *j;

                while (!(j = take_job_locked(p)) && !p->shutdown)
                        pthread_cond_wait(&p->wake, &p->lock);
                if (!j)
                        break; /* shutting down, nothing left to run */
                j->state = JOB_RUNNING;
                p->running++;
                p->bounded_running += j->bounded;
                pthread_mutex_unlock(&p->lock);

                j->fn(j->arg, &j->cancel);

                pthread_mutex_lock(&p->lock);
                p->running--;
                if (j->bounded && !j->timed_out) {
                        p->bounded_running--;
                        if (p->queue_head)
                                pthread_cond_signal(&p->wake); /* a bounded job may wait for this one */
                }
                j->state = JOB_FINISHED;
                /* The loop takes the whole list at each wakeup: only the
                 * first job of a list needs to wake it (a syscall and an
                 * epoll wakeup per job cost the loop at thousands a second). */
                if (!p->finished)
                        (void) write(p->efd, &one, sizeof one);
                j->next = p->finished;
                p->finished = j;
                if (j->timed_out) {
                        p->stuck--;
                        if (j->bounded) {
                                p->bounded_stuck--;
                                owner_count_locked(p, j->owner, -1);
                        }
                        /* A replacement took this thread's place. */
                        if (p->threads - p->stuck > p->target || p->shutdown)
                                break;
                }
        }
        p->threads--;
        self->next = p->exited;
        p->exited = self;
        (void) write(p->efd, &one, sizeof one); /* to be joined */
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

static int spawn_thread_locked(WorkerPool *p) {
        WorkerThread *t = calloc(1, sizeof *t);
        pthread_attr_t attr;
        sigset_t all, old;
        int r;

        if (!t)
                return -ENOMEM;
        t->pool = p;
        pthread_attr_init(&attr);
        /* Jobs do little recursion: a small stack keeps RSS low. */
        pthread_attr_setstacksize(&attr, 256 * 1024);
        /* Signals belong to the event loop's thread. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        /* Joinable: it cannot leave before we unlock, so t->id is set by
         * then. */
        r = pthread_create(&t->id, &attr, thread_main, t);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                free(t);
                return -r;
        }
        p->threads++;
        return 0;
}

static int on_completion(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        WorkerPool *p = userdata;
        WorkerJob *list;
        uint64_t n;

        (void) read(p->efd, &n, sizeof n);
        pthread_mutex_lock(&p->lock);
        list = p->finished;
        p->finished = NULL;
        pthread_mutex_unlock(&p->lock);

        while (list) {
                WorkerJob *j = list;

                list = j->next;
                j->done(j->arg, j->timed_out ? WORKER_LATE : WORKER_DONE);
                job_free(j);
        }
        join_exited(p);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        WorkerJob *j = userdata;
        WorkerPool *p = j->pool;

        pthread_mutex_lock(&p->lock);
        if (j->state == JOB_FINISHED) {
                /* Finished just now; its completion is on the way. */
                pthread_mutex_unlock(&p->lock);
                return 0;
        }
        if (j->state == JOB_QUEUED) {
                WorkerJob **q = &p->queue_head, *prev = NULL;

                while (*q && *q != j) {
                        prev = *q;
                        q = &(*q)->next;
                }
                if (*q)
                        *q = j->next;
                if (p->queue_tail == j)
                        p->queue_tail = prev;
                pthread_mutex_unlock(&p->lock);
                /* No thread holds it: no WORKER_LATE will follow. */
                j->done(j->arg, WORKER_EXPIRED);
                job_free(j);
                return 0;
        }

        /* Running past its deadline: write the thread off, keep capacity. */
        j->timed_out = true;
        atomic_store(&j->cancel, true);
        p->stuck++;
        if (j->bounded) {
                p->bounded_running--;
                p->bounded_stuck++;
                owner_count_locked(p, j->owner, 1);
                if (p->queue_head)
                        pthread_cond_signal(&p->wake);
        }
        if (p->threads - p->stuck < p->target && p->stuck <= WORKER_MAX_STUCK) {
                int r = spawn_thread_locked(p);
                if (r < 0)
                        log_warning_errno(r, "Failed to start a replacement worker thread: %m");
        }
        pthread_mutex_unlock(&p->lock);
        j->timer = sd_event_source_disable_unref(j->timer);
        j->done(j->arg, WORKER_TIMED_OUT);
        return 0;
}

static int submit(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec, bool bounded,
                  uint32_t owner) {
        WorkerJob *j;
        int r;

        if (bounded) {
                bool full;

                pthread_mutex_lock(&p->lock);
                full = p->bounded_stuck >= WORKER_BOUNDED_STUCK_ALL || owner_stuck_locked(p, owner) >= WORKER_BOUNDED_STUCK;
                pthread_mutex_unlock(&p->lock);
                if (full)
                        return -EBUSY;
        }
        j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        *j = (WorkerJob) { .pool = p, .fn = fn, .done = done, .arg = arg, .state = JOB_QUEUED, .bounded = bounded,
                           .owner = owner };
        atomic_init(&j->cancel, false);
        /* A deadline a tenth late is fine; coalescing wakeups is welcome. */
        r = timeout_usec == WORKER_NO_DEADLINE
                    ? 0
                    : sd_event_add_time_relative(p->event, &j->timer, CLOCK_MONOTONIC, timeout_usec,
                                                 MAX(MIN(timeout_usec / 10, USEC_PER_SEC), USEC_PER_MSEC), on_deadline, j);
        if (r < 0) {
                free(j);
                return r;
        }
        pthread_mutex_lock(&p->lock);
        if (p->queue_tail)
                p->queue_tail->next = j;
        else
                p->queue_head = j;
        p->queue_tail = j;
        pthread_mutex_unlock(&p->lock);
        /* After the unlock: a thread woken with the lock still held would
         * only wait for it again. */
        pthread_cond_signal(&p->wake);
        return 0;
}

int worker_submit(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec) {
        return submit(p, fn, done, arg, timeout_usec, false, 0);
}

int worker_submit_bounded(WorkerPool *p, worker_fn fn, worker_done_fn done, void *arg, uint64_t timeout_usec,
                          uint32_t owner) {
        return submit(p, fn, done, arg, timeout_usec, true, owner);
}

/* The counts are the threads' to change, under the lock: read under it
 * too (the loop asks for the status line while a thread comes back). */
unsigned worker_pool_bounded_stuck(WorkerPool *p) {
        unsigned n;

        if (!p)
                return 0;
        pthread_mutex_lock(&p->lock);
        n = p->bounded_stuck;
        pthread_mutex_unlock(&p->lock);
        return n;
}

unsigned worker_pool_stuck(WorkerPool *p) {
        unsigned n;

        if (!p)
                return 0;
        pthread_mutex_lock(&p->lock);
        n = p->stuck;
        pthread_mutex_unlock(&p->lock);
        return n;
}

int worker_pool_new(sd_event *e, unsigned n_threads, WorkerPool **ret) {
        WorkerPool *p = calloc(1, sizeof *p);
        int r;

        if (!p)
                return -ENOMEM;
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->wake, NULL);
        p->event = sd_event_ref(e);
        p->target = MAX(n_threads, 1u);
        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0) {
                r = -errno;
                goto fail;
        }
        r = sd_event_add_io(e, &p->efd_source, p->efd, EPOLLIN, on_completion, p);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_description(p->efd_source, "worker-completions");
        pthread_mutex_lock(&p->lock);
        for (unsigned i = 0; i < p->target && r >= 0; i++)
                r = spawn_thread_locked(p);
        pthread_mutex_unlock(&p->lock);
        if (r < 0)
                goto fail;
        *ret = p;
        return 0;
fail:
        worker_pool_free(p);
        return r;
}

WorkerPool *worker_pool_free(WorkerPool *p) {
        struct timespec deadline;
        WorkerJob *queued, *finished;

        if (!p)
                return NULL;

        pthread_mutex_lock(&p->lock);
        p->shutdown = true;
        queued = p->queue_head;
        p->queue_head = p->queue_tail = NULL;
        pthread_cond_broadcast(&p->wake);

        /* Give running jobs a moment to notice; a thread stuck in the kernel
         * is left behind (it holds only its own job). */
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 2;
        while (p->threads > p->stuck) {
                if (pthread_cond_timedwait(&p->wake, &p->lock, &deadline) == ETIMEDOUT)
                        break;
        }
        finished = p->finished;
        p->finished = NULL;
        pthread_mutex_unlock(&p->lock);

        while (queued) {
                WorkerJob *j = queued;
                queued = j->next;
                j->done(j->arg, WORKER_CANCELLED);
                job_free(j);
        }
        while (finished) {
                WorkerJob *j = finished;
                finished = j->next;
                j->done(j->arg, j->timed_out ? WORKER_LATE : WORKER_DONE);
                job_free(j);
        }

        join_exited(p);
        sd_event_source_disable_unref(p->efd_source);
        /* With threads still alive (stuck) the pool's memory stays theirs. */
        if (p->threads > 0)
                return NULL;
        safe_close(p->efd);
        sd_event_unref(p->event);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->wake);
        free(p);
        return NULL;
}

/* ---------------------------------------------------------------- one job in flight */

/* A job out and the slot it belongs to: the slot is NULL once detached. */
typedef struct SlotJob {
        WorkerSlot *slot;
        WorkerSlotOps ops; /* kept here: the slot may be gone when it is back */
        void *job;
} SlotJob;

struct WorkerSlot {
        WorkerPool *pool;
        WorkerSlotOps ops;
        void *userdata;
        SlotJob *out;  /* the job out, or NULL */
        bool again;    /* asked for while one was out */
};

int worker_slot_new(WorkerPool *p, const WorkerSlotOps *ops, void *userdata, WorkerSlot **ret) {
        WorkerSlot *s;

        assert(ops && ops->make && ops->run && ops->done && ops->free && ret);
        s = calloc(1, sizeof *s);
        if (s) {
                *s = (WorkerSlot) { .pool = p, .ops = *ops, .userdata = userdata };
                *ret = s;
        }
        return s ? 0 : -ENOMEM;
}

WorkerSlot *worker_slot_free(WorkerSlot *s) {
        if (!s)
                return NULL;
        if (s->out)
                s->out->slot = NULL; /* freed when it is back */
        free(s);
        return NULL;
}

bool worker_slot_busy(const WorkerSlot *s) {
        return s && s->out;
}

static void slot_job_run(void *arg, const atomic_bool *cancel) {
        SlotJob *sj = arg;

        sj->ops.run(sj->job, cancel);
}

static void slot_job_done(void *arg, WorkerStatus status) {
        SlotJob *sj = arg;
        WorkerSlot *s = sj->slot;

        if (s && status == WORKER_TIMED_OUT) {
                s->ops.done(s->userdata, sj->job, status);
                return;
        }
        if (status == WORKER_TIMED_OUT)
                return; /* detached: wait for it to come back */
        if (s) {
                s->out = NULL;
                s->ops.done(s->userdata, sj->job, status);
        }
        sj->ops.free(sj->job);
        free(sj);
        if (s && s->again) {
                s->again = false;
                if (s->ops.again)
                        s->ops.again(s->userdata);
        }
}

int worker_slot_start(WorkerSlot *s, uint64_t timeout_usec) {
        SlotJob *sj;
        int r;

        if (s->out) {
                s->again = true;
                return 0;
        }
        sj = calloc(1, sizeof *sj);
        if (!sj)
                return -ENOMEM;
        *sj = (SlotJob) { .slot = s, .ops = s->ops };
        r = s->ops.make(s->userdata, &sj->job);
        if (r < 0) {
                free(sj);
                return r;
        }
        r = s->pool ? worker_submit(s->pool, slot_job_run, slot_job_done, sj, timeout_usec) : -ESHUTDOWN;
        if (r >= 0) {
                s->out = sj;
                return 1;
        }
        if (!s->ops.run_here) {
                s->ops.free(sj->job);
                free(sj);
                return r;
        }
        {
                atomic_bool never;

                atomic_init(&never, false);
                s->ops.run(sj->job, &never);
        }
        s->out = sj; /* as if it had gone out and come back */
        slot_job_done(sj, WORKER_DONE);
        return 1;
}
