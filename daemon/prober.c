/* prober.c: each mount's probe of the atime policy in force: the jobs,
 * their results taken in and said, and the callers who wait for one (see
 * prober.h). */
#include "prober.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "protocol.h"

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

/* The waiters told r: the job's result, or what the loop says in its
 * place when the job is not back (its thread may still write the job's). */
static void probe_notify(struct probe_job *j, const TrackedMount *m, const struct probe_result *r) {
        for (struct probe_waiter *w = j->waiters; w; w = w->next)
                w->cb(m, r, w->userdata);
        while (j->waiters) {
                struct probe_waiter *w = j->waiters;
                j->waiters = w->next;
                free(w);
        }
}

/* A probe missed its deadline: the mount is stalled, probed again after
 * its back-off; the waiters hear so now, from a result of the loop's own
 * (the job's is its thread's until it comes back). */
static void probe_timed_out(Tracker *t, TrackedMount *m, struct probe_job *j, uint64_t now) {
        struct probe_result r = { .at = tracker_now(t, CLOCK_REALTIME) };

        snprintf(r.reason, sizeof r.reason, "timed out after %.1fs: the filesystem does not answer",
                 (double) t->config->probe_timeout_usec / 1e6);
        if (m) {
                m->probe.stalled = true;
                m->probe.failures++;
                m->probe.next_due = now + schedule_backoff(m->probe.failures);
                /* Said when it starts; probe_apply() says when it ends,
                 * with the count: not at every attempt. */
                if (m->probe.failures == 1 && log_ratelimit_test(&t->fail_log, LOG_WARNING))
                        log_mount_warning(m->entry->target,
                                          "%s: probe timed out; marked stalled, retrying with back-off up to an hour",
                                          m->entry->target);
        }
        probe_notify(j, m, &r);
        tracker_plan(t, PLAN_PROBES);
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
        TrackedMount *m = tracker_lookup_mount(t, j->mount_id);
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
                return; /* the thread still holds j: freed when it comes back */
        case WORKER_LATE:
                /* The hung filesystem answered at last; probe again soon. */
                if (m) {
                        m->probe.running = false;
                        m->probe.next_due = MIN(m->probe.next_due, now + SCHEDULE_BACKOFF_MIN_USEC);
                }
                probe_job_free(j);
                tracker_plan(t, PLAN_PROBES);
                return;
        case WORKER_EXPIRED:
                /* Every thread was busy (stuck on other filesystems, or a
                 * loaded host) until its deadline: it never ran. */
                if (m) {
                        m->probe.running = false;
                        m->probe.next_due = MIN(m->probe.next_due, now + SCHEDULE_BACKOFF_MIN_USEC);
                }
                snprintf(j->result.reason, sizeof j->result.reason, "not probed: no worker thread was free in time");
                probe_notify(j, m, &j->result);
                probe_job_free(j);
                tracker_plan(t, PLAN_PROBES);
                return;
        case WORKER_CANCELLED:
                snprintf(j->result.reason, sizeof j->result.reason, "atimed is shutting down");
                probe_notify(j, m, &j->result);
                probe_job_free(j);
                return;
        case WORKER_DONE:
                break;
        }
        if (m)
                probe_apply(t, m, &j->result, now);
        probe_notify(j, m, &j->result);
        probe_job_free(j);
        tracker_plan(t, PLAN_PROBES);
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
        r = tracker_submit_job(t, j->bounded, m->fs ? fs_owner(m->fs) : mount_owner(m->entry), probe_work, probe_done, j,
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

void prober_run_due(Tracker *t) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        for (size_t i = 0; i < t->n_mounts && t->probe_jobs < tracker_max_jobs(t); i++) {
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
                        m->probe.next_due = now + SCHEDULE_BACKOFF_MIN_USEC;
        }
}

int prober_probe_now(Tracker *t, int mount_id, tracker_probe_cb cb, void *userdata) {
        TrackedMount *m = tracker_lookup_mount(t, mount_id);
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
