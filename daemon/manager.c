/* manager.c: atimed's event loop, lifecycle, signals, reload, the socket,
 * and the background jobs that keep the mount table, the history on disk
 * and the consumer list current (see manager.h). */
#include "manager.h"

#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "helper-client.h"
#include "export.h"
#include "fileio.h"
#include "log.h"
#include "methods.h"
#include "strv.h"
#include "tick.h"
#include "time-util.h"
#include "varlink.h"

static void manager_scan_consumers(Manager *m);
static void manager_configure_scanner(Manager *m);

/* The configuration as manager_read_config() reads it, logging nothing:
 * safe in a worker thread. */
static int read_config(const char *config_path, const char *override_socket, const char *override_state_dir,
                       struct config **ret, char ***ret_errors) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        int r;

        *ret_errors = NULL;
        if (config_path)
                r = config_load(config_path, &c, &errors);
        else if (access(ATIMED_CONFIG_DEFAULT, F_OK) == 0)
                r = config_load(ATIMED_CONFIG_DEFAULT, &c, &errors);
        else
                r = config_new(&c);
        if (r < 0) {
                if (!errors) {
                        _cleanup_free_ char *e = NULL;

                        if (asprintf(&e, "Failed to read configuration %s: %s", config_path ?: ATIMED_CONFIG_DEFAULT,
                                     fileio_strerror(r)) < 0 ||
                            strv_extend(&errors, e) < 0)
                                return -ENOMEM;
                }
                *ret_errors = TAKE_PTR(errors);
                return r;
        }
        if ((override_socket && config_set_string(&c->socket_path, override_socket) < 0) ||
            (override_state_dir && config_set_string(&c->state_dir, override_state_dir) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

int manager_read_config(const char *config_path, const char *override_socket, const char *override_state_dir,
                        struct config **ret, char ***ret_errors) {
        _cleanup_strv_free_ char **errors = NULL;
        int r;

        if (ret_errors)
                *ret_errors = NULL;
        r = read_config(config_path, override_socket, override_state_dir, ret, &errors);
        if (r == -ENOMEM && !errors)
                return log_oom();
        STRV_FOREACH(e, errors)
                log_error("%s", *e);
        if (ret_errors)
                *ret_errors = TAKE_PTR(errors);
        return r;
}

static void limits_from_config(const struct config *c, struct control_limits *l) {
        *l = (struct control_limits) {
                .max_clients = c->max_clients,
                .max_clients_per_user = c->max_clients_per_user,
                .reserved_clients = c->reserved_clients,
                .max_message_size = c->max_message_size,
                .idle_timeout_usec = c->idle_timeout_usec,
                .user_usec_per_s = c->user_loop_usec,
                .user_reply_bytes = (size_t) c->user_reply_memory,
                .reply_bytes = (size_t) c->reply_memory,
        };
}

/* ---------------------------------------------------------------- the view */

/* The manager's state changed in something the view shows (the table, the
 * consumers, the configuration): the view points at it, the tick pass
 * starts over from the first mount, the cached replies are dropped. */
static void manager_changed(Manager *m) {
        m->view.config = m->config;
        m->view.mounts = m->mounts;
        m->view.tracker = m->tracker;
        m->view.store = m->store;
        m->view.consumers = m->consumers;
        m->view.counters = tick_counters(m->tick);
        m->view.started_realtime = m->started_realtime;
        m->view.started_monotonic = m->started_monotonic;
        m->view.generation++;
        tick_restart(m->tick);
        methods_changed(m->methods);
}

/* What a reply shows changed, the manager's own state not: the tracker's
 * figures, an advice announced. */
static void on_shown_changed(void *userdata) {
        Manager *m = userdata;

        methods_changed(m->methods);
}

static int op_reload(void *userdata, manager_reload_cb cb, void *cb_userdata) {
        return manager_reload_start(userdata, cb, cb_userdata);
}

static int op_probe(void *userdata, int mount_id, tracker_probe_cb cb, void *cb_userdata) {
        Manager *m = userdata;

        return tracker_probe_now(m->tracker, mount_id, cb, cb_userdata);
}

static bool op_history_refused(void *userdata, int mount_id) {
        Manager *m = userdata;

        return tick_history_refused(m->tick, mount_id);
}

static void manager_notify_status(Manager *m) {
        unsigned n[_ATIME_MAX] = {}, stalled = 0;
        size_t total = m->mounts ? m->mounts->n : 0;

        for (size_t i = 0; i < total; i++) {
                const TrackedMount *tm = tracker_find(m->tracker, m->mounts->entries[i].id);

                n[m->mounts->entries[i].policy.atime]++;
                stalled += tm && tracker_mount_stalled(tm);
        }
        (void) sd_notifyf(0, "STATUS=Tracking %zu mounts: %u strictatime, %u relatime, %u noatime%s%.0u%s", total,
                          n[ATIME_STRICT], n[ATIME_RELATIME], n[ATIME_NOATIME], stalled ? "; " : "", stalled,
                          stalled ? " stalled" : "");
}

static void log_mount_change(const MountEntry *old, const MountEntry *new, void *userdata) {
        bool initial = *(bool *) userdata;
        int level = initial ? LOG_DEBUG : LOG_INFO;
        char a[64], b[64];

        if (!old)
                log_mount_full(level, 0, new->target, "Tracking %s (%s on %s): %s", new->target, new->fstype, new->source,
                               mount_policy_format(&new->policy, a, sizeof a));
        else if (!new)
                log_mount_full(level, 0, old->target, "No longer tracking %s (%s on %s)", old->target, old->fstype, old->source);
        else if (!mount_policy_equal(&old->policy, &new->policy))
                log_mount_full(level, 0, new->target, "%s: atime policy changed from %s to %s", new->target,
                               mount_policy_format(&old->policy, a, sizeof a),
                               mount_policy_format(&new->policy, b, sizeof b));
        else
                log_mount_debug(new->target, "%s: mount options changed to %s", new->target, new->vfs_options);
}

/* Many mounts gone (containers stopped, churn), however many rescans it
 * took: give the memory their parsing and tracking held back to the system,
 * not to the allocator's free lists. Not at once: what the tracker, the
 * workers and the status cache still hold of them goes over the next
 * moments, and free() only returns the top of the heap by itself, so the
 * trim waits until things settle. */
#define TRIM_DELAY_USEC (2 * USEC_PER_SEC)
#define TRIM_MOUNTS 64

static void manager_trim(Manager *m) {
        (void) malloc_trim(0);
        m->mounts_peak = m->mounts ? m->mounts->n_all : 0;
}

static int on_trim_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        size_t peak = m->mounts_peak;

        (void) s;
        (void) usec;
        manager_trim(m);
        log_debug("Memory given back after the mount table shrank from %zu to %zu mounts", peak, m->mounts_peak);
        return 0;
}

/* Once a cycle: a full status of many mounts, a re-read table or a flush
 * builds and drops megabytes at a time, and what a longer-lived block
 * allocated since sits on top of stays resident though free. Given back
 * when that much lies free; the pages a cycle needs again fault back in. */
#define TRIM_FREE_BYTES ((size_t) 1 << 20)

static void manager_trim_if_worth_it(Manager *m) {
        struct mallinfo2 mi = mallinfo2();

        if (mi.fordblks >= TRIM_FREE_BYTES)
                manager_trim(m);
}

static void on_pass_done(void *userdata) {
        manager_trim_if_worth_it(userdata);
}

static void manager_schedule_trim(Manager *m) {
        int r;

        m->mounts_peak = MAX(m->mounts_peak, m->mounts->n_all);
        if (m->mounts_peak < m->mounts->n_all + TRIM_MOUNTS)
                return;
        if (!m->trim_timer) {
                r = sd_event_add_time_relative(m->event, &m->trim_timer, CLOCK_MONOTONIC, TRIM_DELAY_USEC,
                                               USEC_PER_SEC / 10, on_trim_timer, m);
                if (r < 0) {
                        /* Not worth failing over: trim now instead. */
                        manager_trim(m);
                        return;
                }
        } else {
                /* Still shrinking: wait for the churn to end. */
                (void) sd_event_source_set_time_relative(m->trim_timer, TRIM_DELAY_USEC);
        }
        (void) sd_event_source_set_enabled(m->trim_timer, SD_EVENT_ONESHOT);
}

/* A new mount table in force: the tick pass's notes, the log of what
 * changed, the tracker. Takes t. */
static int apply_table(Manager *m, MountTable *t) {
        _cleanup_(mount_table_freep) MountTable *table = t;
        bool initial = !m->mounts;
        int r;

        if (t->n_bad_lines > 0)
                log_warning("%s: skipped %u malformed line(s)", m->config->mountinfo_path, t->n_bad_lines);

        r = tick_set_table(m->tick, t);
        if (r < 0)
                return log_error_errno(r, "Failed to update mount state, keeping the previous table: %m");
        mount_table_diff(m->mounts, t, log_mount_change, &initial);
        if (initial)
                log_info("Tracking %zu mounts", t->n);
        r = tracker_update(m->tracker, t);
        if (r < 0) {
                /* The tracker may point into either table now: keep both and
                 * let the service manager restart us. */
                log_error_errno(r, "Failed to update mount state: %m");
                TAKE_PTR(table);
                return sd_event_exit(m->event, r);
        }
        mount_table_free(m->mounts);
        m->mounts = TAKE_PTR(table);
        manager_changed(m);
        manager_schedule_trim(m);
        if (m->ready)
                manager_notify_status(m);
        return 0;
}

/* The reader's view of the configuration: its file, filter and deadline. */
static int manager_configure_reader(Manager *m) {
        struct mount_filter f;

        config_mount_filter(m->config, &f);
        return mount_reader_configure(m->mount_reader, m->config->mountinfo_path, &f, m->config->sampler_timeout_usec);
}

/* Re-reads the mount table here and now (at start and reload), parsed
 * whatever it reads: the filter may have changed. */
int manager_rescan_mounts(Manager *m) {
        return mount_reader_read_now(m->mount_reader, true);
}

static int on_table_read(MountTable *t, void *userdata) {
        return apply_table(userdata, t);
}

static void on_mounts_changed(void *userdata) {
        Manager *m = userdata;

        mount_reader_request(m->mount_reader);
}

/* The table is read again every few seconds besides: a change whose
 * event was coalesced away under heavy churn (a thousand umounts in a few
 * seconds) would otherwise wait for the next sampler tick. Reading costs a
 * comparison when nothing changed. */
#define MOUNTS_RECHECK_USEC (5 * USEC_PER_SEC)

static int on_mounts_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_time(s, usec + MOUNTS_RECHECK_USEC);
        mount_reader_request(m->mount_reader);
        return 0;
}

/* Resolved once per (re)load: no NSS lookups on the event loop later. */
static gid_t resolve_group(const char *name) {
        struct group *gr;

        if (!name)
                return (gid_t) -1;
        gr = getgrnam(name);
        if (!gr) {
                log_warning("privileged_group %s does not exist; only root may call privileged methods.", name);
                return (gid_t) -1;
        }
        return gr->gr_gid;
}

/* ---------------------------------------------------------------- reload */

/* Reload reads in a worker what may block: the file (on a filesystem that
 * may hang), the privileged group (NSS: LDAP, say) and the mount table
 * parsed with the new filter; the loop then puts the result in force and
 * answers. One read at a time (m->reload): the callers who asked before
 * it started are answered by it, those who ask while it is out by one
 * more read once it is back, so each answer reflects the file as it was
 * after they asked. */
typedef struct ReloadWaiter {
        manager_reload_cb cb;
        void *userdata;
        struct ReloadWaiter *next;
} ReloadWaiter;

typedef struct ReloadJob {
        char *config_path, *override_socket, *override_state_dir;
        ReloadWaiter *waiters; /* whom this read answers */
        struct config *config;
        char **errors;
        int r;
        gid_t gid;         /* (gid_t) -1: root only */
        bool group_missing;
        MountTable *table; /* parsed with the new filter */
        int table_r;
} ReloadJob;

/* Answers every waiter of the list with r and a copy of errors. */
static void answer_waiters(ReloadWaiter *w, int r, char *const *errors) {
        while (w) {
                ReloadWaiter *next = w->next;
                char **copy = NULL;

                if (w->cb) {
                        (void) strv_copy(errors, &copy);
                        w->cb(r, copy, w->userdata); /* takes copy */
                }
                free(w);
                w = next;
        }
}

static void reload_job_free(void *job) {
        ReloadJob *j = job;

        answer_waiters(j->waiters, -ECANCELED, NULL);
        free(j->config_path);
        free(j->override_socket);
        free(j->override_state_dir);
        config_free(j->config);
        strv_free(j->errors);
        mount_table_free(j->table);
        free(j);
}

static int strdup_ptr(const char *s, char **ret) {
        *ret = NULL;
        return s && !(*ret = strdup(s)) ? -ENOMEM : 0;
}

static int reload_make(void *userdata, void **ret) {
        Manager *m = userdata;
        ReloadJob *j = calloc(1, sizeof *j);

        if (!j)
                return -ENOMEM;
        if (strdup_ptr(m->config_path, &j->config_path) < 0 || strdup_ptr(m->override_socket, &j->override_socket) < 0 ||
            strdup_ptr(m->override_state_dir, &j->override_state_dir) < 0) {
                reload_job_free(j);
                return -ENOMEM;
        }
        j->waiters = TAKE_PTR(m->reload_waiters);
        (void) sd_notifyf(0, "RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%llu",
                          (unsigned long long) now_usec(CLOCK_MONOTONIC));
        *ret = j;
        return 0;
}

static void reload_work(void *arg, const atomic_bool *cancel) {
        ReloadJob *j = arg;
        struct mount_filter f;

        j->r = read_config(j->config_path, j->override_socket, j->override_state_dir, &j->config, &j->errors);
        if (j->r < 0)
                return;
        j->gid = (gid_t) -1;
        if (j->config->privileged_group) {
                struct group gr, *found = NULL;
                char buf[16384];

                if (getgrnam_r(j->config->privileged_group, &gr, buf, sizeof buf, &found) == 0 && found)
                        j->gid = found->gr_gid;
                else
                        j->group_missing = true;
        }
        config_mount_filter(j->config, &f);
        j->table_r = mount_table_load(j->config->mountinfo_path, &f, &j->table);
}

/* A new configuration in force: what only a restart changes is kept and
 * said; everything that borrowed from the old one is pointed at the new
 * before it goes. Takes c. */
static void reload_apply(Manager *m, struct config *c, gid_t gid) {
        struct control_limits lim;
        int r;

        if (!streq(c->socket_path, m->config->socket_path) || c->socket_mode != m->config->socket_mode ||
            !streq_ptr(c->socket_group, m->config->socket_group))
                log_warning("Control socket settings changed; they take effect when atimed restarts.");
        if (!streq(c->state_dir, m->config->state_dir))
                log_warning("state_dir changed; it takes effect when atimed restarts.");
        if (c->worker_threads != m->config->worker_threads)
                log_warning("worker_threads changed; it takes effect when atimed restarts.");
        c->worker_threads = m->config->worker_threads;
        if (c->rings.n != m->config->rings.n ||
            memcmp(c->rings.spec, m->config->rings.spec, c->rings.n * sizeof c->rings.spec[0]) != 0 ||
            c->max_histories != m->config->max_histories)
                log_warning("[store] rings and max_mounts changed; they take effect when atimed restarts.");
        c->rings = m->config->rings;
        c->max_histories = m->config->max_histories;

        /* The tick pass out holds the old costs: it starts again from the
         * first mount with the new (tick.h), before the old ones go. */
        tick_restart(m->tick);
        tracker_set_config(m->tracker, c);
        config_free(m->config);
        m->config = c;
        /* The reader and the scanner borrowed the old one's lists. */
        manager_configure_scanner(m);
        r = manager_configure_reader(m);
        if (r < 0)
                log_oom();
        manager_changed(m);
        manager_scan_consumers(m);
        (void) sd_event_source_set_time_relative(m->flush_timer, m->config->flush_interval_usec);
        m->view.privileged_gid = gid;
        log_set_max_level(m->config->log_level);
        limits_from_config(m->config, &lim);
        lim.privileged_gid = m->view.privileged_gid;
        control_server_set_limits(m->control, &lim);
        mount_monitor_set_delay(m->monitor, m->config->rescan_delay_usec);
}

static void reload_done(void *userdata, void *job, WorkerStatus status) {
        Manager *m = userdata;
        ReloadJob *j = job;
        char msg[] = "Reading the configuration did not finish in time; the running one stays.";
        char *const timed_out[] = { msg, NULL };

        if (status == WORKER_TIMED_OUT || status == WORKER_EXPIRED) {
                log_error("%s", timed_out[0]);
                answer_waiters(TAKE_PTR(j->waiters), -ETIME, timed_out);
                (void) sd_notify(0, "READY=1");
                manager_notify_status(m);
                return; /* a late read is not put in force */
        }
        if (status != WORKER_DONE)
                return; /* the pool is going away: the waiters are told so as the job is freed */
        if (j->r < 0) {
                STRV_FOREACH(e, j->errors)
                        log_error("%s", *e);
                log_error("Configuration not reloaded; keeping the running one.");
                answer_waiters(TAKE_PTR(j->waiters), j->r, j->errors);
                (void) sd_notify(0, "READY=1");
                manager_notify_status(m);
                return;
        }
        if (j->group_missing)
                log_warning("privileged_group %s does not exist; only root may call privileged methods.",
                            j->config->privileged_group);
        reload_apply(m, TAKE_PTR(j->config), j->gid);
        if (j->table_r < 0)
                log_error_errno(j->table_r, "Failed to read mount table %s, keeping the previous one: %m",
                                m->config->mountinfo_path);
        else
                (void) apply_table(m, TAKE_PTR(j->table));
        log_info("Configuration reloaded from %s", m->config->path ? m->config->path : "built-in defaults");
        answer_waiters(TAKE_PTR(j->waiters), 0, NULL);
        (void) sd_notify(0, "READY=1");
        manager_notify_status(m);
}

static void on_reload_again(void *userdata) {
        (void) manager_reload_start(userdata, NULL, NULL);
}

static const WorkerSlotOps reload_ops = {
        .make = reload_make,
        .run = reload_work,
        .done = reload_done,
        .free = reload_job_free,
        .again = on_reload_again, /* for those who asked while a read was out */
        .run_here = true,         /* refused by the pool: read here, as at start */
};

int manager_reload_start(Manager *m, manager_reload_cb cb, void *userdata) {
        ReloadWaiter *w = calloc(1, sizeof *w), **tail = &m->reload_waiters;
        int r;

        if (!w)
                return -ENOMEM;
        *w = (ReloadWaiter) { .cb = cb, .userdata = userdata };
        while (*tail)
                tail = &(*tail)->next;
        *tail = w;
        r = worker_slot_start(m->reload, m->config->sampler_timeout_usec);
        if (r < 0 && m->reload_waiters == w && !w->next) {
                /* Nothing made: the caller hears it now, not later. */
                m->reload_waiters = NULL;
                free(w);
                return r;
        }
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload_start(userdata, NULL, NULL);
        return 0;
}

/* ---------------------------------------------------------------- history */

/* SIGTERM waits this long for a write that is out before the last one. */
#define FLUSH_EXIT_WAIT_USEC (10 * USEC_PER_SEC)

static int on_flush_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_time(s, usec + m->config->flush_interval_usec);
        store_flusher_request(m->flusher, false);
        return 0;
}

/* The tracker's tick: a pass over every mount begins. Re-reading the
 * mount table here too catches what raises no mount event (a superblock
 * reconfigured through fsconfig(2), like lazytime). */
static void on_tick(int64_t t, void *userdata) {
        Manager *m = userdata;

        tick_complete(m->tick);
        mount_reader_request(m->mount_reader); /* parsed only if it reads differently */
        tick_begin(m->tick, t);
}

static void on_activity(const TrackedMount *tm, const struct activity *a, void *userdata) {
        Manager *m = userdata;

        tick_activity(m->tick, tm, a);
}

static int manager_start_store(Manager *m) {
        struct store_load_report rep = {};
        int r;

        r = store_new(m->config->state_dir, m->config->rings.spec, m->config->rings.n, m->config->max_histories, &m->store);
        if (r < 0)
                return log_error_errno(r, "Failed to set up history: %m");
        r = store_load(m->store, (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC), &rep);
        if (r < 0) {
                store_load_report_done(&rep);
                return log_error_errno(r, "Failed to load history: %m");
        }
        STRV_FOREACH(p, rep.problems)
                log_warning("History in %s: %s", m->config->state_dir, *p);
        log_info("History of %zu mounts loaded (%zu journal samples replayed)", rep.mounts, rep.replayed);
        store_load_report_done(&rep);
        r = store_flusher_new(m->store, m->pool, m->config->state_dir, &m->flusher);
        if (r < 0)
                return log_error_errno(r, "Failed to set up history: %m");
        /* Fold the journal into a fresh snapshot right away. */
        store_flusher_request(m->flusher, true);

        r = sd_event_add_time_relative(m->event, &m->flush_timer, CLOCK_MONOTONIC, m->config->flush_interval_usec,
                                       USEC_PER_SEC, on_flush_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the flush timer: %m");
        (void) sd_event_source_set_enabled(m->flush_timer, SD_EVENT_ON);
        return 0;
}

/* The tick pass, fed by the tracker's tick and figures. */
static int manager_start_tick(Manager *m) {
        int r;

        r = tick_new(m->event, &m->view, m->store, m->exporter,
                     &(TickHooks) { .changed = on_shown_changed, .pass_done = on_pass_done, .userdata = m }, &m->tick);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the tick pass: %m");
        manager_changed(m);
        tracker_set_hooks(m->tracker, &(TrackerHooks) {
                                              .tick = on_tick,
                                              .activity = on_activity,
                                              .changed = on_shown_changed,
                                              .userdata = m,
                                      });
        return 0;
}

/* ---------------------------------------------------------------- consumers */

/* Where the scan looks, from the configuration (borrowed by the scanner
 * until the next reload). */
static void manager_configure_scanner(Manager *m) {
        const struct config *c = m->config;

        m->consumer_paths = (struct consumers_paths) {
                .tmpfiles_dirs = c->tmpfiles_dirs,
                .mail_spools = c->mail_spools,
                .tmpreaper_conf = c->tmpreaper_conf,
                .tmpwatch_cron = c->tmpwatch_cron,
                .popcon_conf = c->popcon_conf,
        };
        consumer_scanner_configure(m->consumer_scanner, &m->consumer_paths, c->sampler_timeout_usec);
}

static void manager_scan_consumers(Manager *m) {
        consumer_scanner_request(m->consumer_scanner);
}

static void on_consumers_found(Consumers *c, void *userdata) {
        Manager *m = userdata;

        consumers_free(m->consumers);
        m->consumers = c;
        manager_changed(m);
}

static int on_consumers_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_time(s, usec + m->config->consumers_interval_usec);
        manager_scan_consumers(m);
        return 0;
}

static int on_flush_exit_wait(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        log_warning("History since the last flush is not saved: writing to %s does not return.", m->config->state_dir);
        return sd_event_exit(m->event, 0);
}

/* The write that was out at SIGTERM came back: the last snapshot, then out. */
static void on_flush_idle_exit(void *userdata) {
        Manager *m = userdata;

        store_flusher_now(m->flusher, true);
        (void) sd_event_exit(m->event, 0);
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, shutting down.", strsignal((int) si->ssi_signo));
        m->stopping = true;
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Shutting down");
        tick_stop(m->tick); /* the tick's samples, in the last flush */
        if (m->flusher && store_flusher_busy(m->flusher)) {
                /* The last snapshot follows the write that is out, if it
                 * comes back in time. */
                if (sd_event_add_time_relative(m->event, NULL, CLOCK_MONOTONIC, FLUSH_EXIT_WAIT_USEC, USEC_PER_SEC,
                                               on_flush_exit_wait, m) >= 0) {
                        store_flusher_when_idle(m->flusher, on_flush_idle_exit, m);
                        return 0;
                }
        }
        if (m->flusher)
                store_flusher_now(m->flusher, true);
        return sd_event_exit(m->event, 0);
}

int manager_new(struct config *config, const char *config_path, const char *override_socket,
                const char *override_state_dir, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = calloc(1, sizeof *m);
        int r;

        if (!m) {
                config_free(config);
                return -ENOMEM;
        }
        m->config = config;
        m->state_lock = -1;
        m->view.privileged_gid = (gid_t) -1;
        m->view.ops = (ViewOps) {
                .reload = op_reload,
                .probe = op_probe,
                .history_refused = op_history_refused,
                .userdata = m,
        };
        if ((config_path && !(m->config_path = strdup(config_path))) ||
            (override_socket && !(m->override_socket = strdup(override_socket))) ||
            (override_state_dir && !(m->override_state_dir = strdup(override_state_dir))))
                return -ENOMEM;
        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Under socket activation the service manager made the socket: the
 * configuration's socket, socket_mode and socket_group are not applied.
 * Says so at start when they differ from the socket served, so that an
 * operator who set them learns where to set them instead. */
static void manager_note_activated_socket(Manager *m, int fd) {
        const struct config *c = m->config;
        struct sockaddr_un sa = {};
        socklen_t len = sizeof(sa);
        struct group *gr = NULL;
        struct stat st;

        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0 || len <= offsetof(struct sockaddr_un, sun_path) ||
            sa.sun_path[0] == 0 || stat(sa.sun_path, &st) < 0)
                return;
        if (c->socket_group)
                gr = getgrnam(c->socket_group);
        if ((st.st_mode & 07777) == c->socket_mode && (!c->socket_group || (gr && gr->gr_gid == st.st_gid)) &&
            streq(sa.sun_path, c->socket_path))
                return;
        log_notice("The service manager passed the socket %s (mode %04o, group %u): the configuration's "
                   "socket = %s, socket_mode = %04o and socket_group = %s are not applied under socket activation. "
                   "Set SocketMode=, SocketGroup= (and ListenStream=) in a drop-in for atimed.socket instead.",
                   sa.sun_path, (unsigned) (st.st_mode & 07777), (unsigned) st.st_gid, c->socket_path,
                   (unsigned) c->socket_mode, c->socket_group ?: "(unset)");
}

static int manager_open_socket(Manager *m, int *ret_fd) {
        int fd, r;
        gid_t gid = (gid_t) -1;

        r = control_socket_from_activation(&fd);
        if (r < 0)
                return log_error_errno(r, "Invalid socket passed by the service manager: %m");
        if (r > 0) {
                log_info("Serving on the socket passed by the service manager");
                manager_note_activated_socket(m, fd);
                *ret_fd = fd;
                return 0;
        }

        if (m->config->socket_group) {
                struct group *gr = getgrnam(m->config->socket_group);

                if (!gr)
                        return log_error_errno(-ENOENT, "socket_group %s: no such group", m->config->socket_group);
                gid = gr->gr_gid;
        }
        r = control_socket_bind(m->config->socket_path, m->config->socket_mode, gid, &fd);
        if (r == -EADDRINUSE)
                return log_error_errno(r, "Another atimed is serving %s; not taking it over.", m->config->socket_path);
        if (r == -EEXIST)
                return log_error_errno(r, "%s exists and is not a socket; not removing it.", m->config->socket_path);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", m->config->socket_path);
        m->bound_socket = strdup(m->config->socket_path);
        if (!m->bound_socket) {
                safe_close(fd);
                return log_oom();
        }
        log_info("Serving on %s", m->config->socket_path);
        *ret_fd = fd;
        return 0;
}

#define STATE_LOCK "lock"

/* The state dir is ours alone: owned by us, writable by no one else, and
 * locked, so that a second atimed pointed at it (another --socket) exits
 * before it reads or writes anything there. */
static int manager_lock_state_dir(Manager *m, int dfd) {
        const char *d = m->config->state_dir;
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (fstat(dfd, &st) < 0)
                return log_error_errno(errno, "Cannot check state directory %s: %m", d);
        if (st.st_uid != geteuid()) {
                log_error("State directory %s belongs to uid %u, not to atimed's (%u): refusing to use it.", d,
                          (unsigned) st.st_uid, (unsigned) geteuid());
                return -EPERM;
        }
        if (st.st_mode & 022) {
                mode_t fixed = st.st_mode & 0755 & ~(mode_t) 022;

                if (fchmod(dfd, fixed) < 0)
                        return log_error_errno(errno, "State directory %s is writable by others (mode %04o) and cannot be fixed: %m",
                                               d, (unsigned) (st.st_mode & 07777));
                log_warning("State directory %s was writable by group or others (mode %04o); made it %04o.", d,
                            (unsigned) (st.st_mode & 07777), (unsigned) fixed);
        }
        /* Read-only: a descriptor open for writing would keep /var from being
         * remounted read-only. flock() needs no more. */
        fd = openat(dfd, STATE_LOCK, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0 && errno != ELOOP) {
                /* A read-only state dir, say: no other daemon writes there
                 * either, and history is kept in memory meanwhile. */
                log_warning_errno(errno, "Cannot open %s/%s to lock the state directory: %m", d, STATE_LOCK);
                return 0;
        }
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                log_error("%s/%s is not a regular file: refusing to use the state directory.", d, STATE_LOCK);
                return -EBADFD;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EWOULDBLOCK) {
                        log_error("Another atimed is using the state directory %s (%s/%s is locked); exiting. "
                                  "Give each daemon its own state_dir.", d, d, STATE_LOCK);
                        return -EBUSY;
                }
                return log_error_errno(errno, "Cannot lock %s/%s: %m", d, STATE_LOCK);
        }
        m->state_lock = TAKE_FD(fd);
        return 0;
}

static int manager_prepare_state_dir(Manager *m) {
        const char *d = m->config->state_dir;
        _cleanup_close_ int dfd = -1;

        /* Create missing parents (0755) and the directory itself (0700). A
         * state dir we cannot create is logged: the daemon still measures. */
        (void) mkdir_parents(d, 0755);
        if (mkdir(d, 0700) < 0 && errno != EEXIST)
                log_warning_errno(errno, "Cannot create state directory %s: %m", d);
        dfd = open(d, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (dfd < 0) {
                log_warning_errno(errno, "Cannot open state directory %s: %m", d);
                return 0;
        }
        return manager_lock_state_dir(m, dfd);
}

/* SIGTERM and SIGINT stop, SIGHUP reloads; the service manager's watchdog
 * is fed by the loop. */
static int manager_setup_signals(Manager *m) {
        int r;

        r = sd_event_add_signal(m->event, NULL, SIGTERM | SD_EVENT_SIGNAL_PROCMASK, on_terminate, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT | SD_EVENT_SIGNAL_PROCMASK, on_terminate, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP | SD_EVENT_SIGNAL_PROCMASK, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");
        (void) signal(SIGPIPE, SIG_IGN);

        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog: %m");
        else if (r > 0)
                log_debug("Service manager watchdog enabled");
        return 0;
}

/* Before the capabilities are dropped: atimed's privileged helper, forked
 * here where CAP_SYS_ADMIN is held, else reached at its socket
 * (helper-client.h). The daemon itself never keeps CAP_SYS_ADMIN. */
static void manager_start_helper(const struct config *c) {
        int r = helper_client_start(c->btrfs_snapshot_search, c->helper_socket);

        if (r < 0)
                log_warning_errno(r, "Cannot start the helper that reads btrfs subvolumes: %m; their snapshots are "
                                  "looked for as far as atimed's own privileges allow");
        else if (r == HELPER_VIA_CHILD)
                log_debug("btrfs subvolumes are read by a helper process that keeps CAP_SYS_ADMIN alone");
        else if (r == HELPER_VIA_SOCKET)
                log_debug("btrfs subvolumes are read by atimed-helper, at %s", c->helper_socket);
}

/* Capabilities dropped, and said at the level of what it means: in a
 * container or a user namespace, what cannot be done is said once, plainly. */
static void manager_drop_capabilities(const struct config *c) {
        uint32_t outside;
        int r;

        manager_start_helper(c);
        r = caps_drop_to_minimum();
        if (r < 0)
                log_warning_errno(r, "Failed to drop capabilities; atimed runs on with those it was started with: %m");
        else if (r > 0)
                log_info("The capability bounding set is left as it is (no CAP_SETPCAP here, as in a container): atimed "
                         "holds only CAP_DAC_READ_SEARCH, CAP_FOWNER and CAP_DAC_OVERRIDE, and no_new_privs keeps "
                         "anything it runs from gaining more");
        else
                log_debug("Capabilities reduced to CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_DAC_OVERRIDE");
        if (caps_user_namespace(&outside) > 0 && geteuid() == 0)
                log_notice("Running in a user namespace (root here is %s outside): directories of users not mapped "
                           "here cannot be read without changing their atime and are skipped, and no probe can be "
                           "made where only they may write; figures cover what this namespace may read",
                           outside == UINT32_MAX ? "no uid" : outside == 0 ? "root" : "an unprivileged uid");
}

/* What is looked at again now and then: the mount table, and (scanned
 * first now) the atime consumers. */
static int manager_start_rechecks(Manager *m) {
        int r;

        r = sd_event_add_time_relative(m->event, &m->mounts_timer, CLOCK_MONOTONIC, MOUNTS_RECHECK_USEC,
                                       USEC_PER_SEC / 2, on_mounts_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the mount table timer: %m");
        (void) sd_event_source_set_enabled(m->mounts_timer, SD_EVENT_ON);
        (void) sd_event_source_set_description(m->mounts_timer, "mounts-recheck");

        manager_scan_consumers(m);
        r = sd_event_add_time_relative(m->event, &m->consumers_timer, CLOCK_MONOTONIC,
                                       m->config->consumers_interval_usec, USEC_PER_SEC, on_consumers_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the consumers timer: %m");
        (void) sd_event_source_set_enabled(m->consumers_timer, SD_EVENT_ON);
        return 0;
}

/* What needs more than the three capabilities kept comes first: the
 * socket (its group, say) and the state dir. Then drop, before any worker
 * thread exists: capabilities are per thread, and the threads inherit what
 * the main thread has left. */
static int manager_start_privileged(Manager *m, int *ret_fd) {
        int r;

        m->view.privileged_gid = resolve_group(m->config->privileged_group);
        r = manager_open_socket(m, ret_fd);
        if (r < 0)
                return r;
        /* After the socket: a second daemon on the same socket says so
         * first; one on another socket stops here, its socket removed. */
        r = manager_prepare_state_dir(m);
        if (r < 0)
                return r;
        manager_drop_capabilities(m->config);
        return 0;
}

/* The worker pool and what submits to it: the tracker, the exporter, the
 * three jobs of one at a time; and the methods. */
static int manager_start_workers(Manager *m) {
        int r;

        r = worker_pool_new(m->event, m->config->worker_threads, &m->pool);
        if (r < 0)
                return log_error_errno(r, "Failed to start the workers: %m");
        r = tracker_new(m->event, m->pool, m->config, &m->tracker);
        if (r < 0)
                return log_error_errno(r, "Failed to set up measurement: %m");
        if (exporter_new(m->pool, &m->exporter) < 0 || methods_new(&m->view, &m->methods) < 0 ||
            methods_set_event(m->methods, m->event) < 0 ||
            mount_reader_new(m->pool, &m->mounts, on_table_read, m, &m->mount_reader) < 0 ||
            manager_configure_reader(m) < 0 ||
            worker_slot_new(m->pool, &reload_ops, m, &m->reload) < 0 ||
            consumer_scanner_new(m->pool, on_consumers_found, m, &m->consumer_scanner) < 0)
                return log_oom();
        manager_configure_scanner(m);
        return 0;
}

/* A reply built in slices for a caller: its time on the caller's share. */
static void charge_reply_build(void *userdata, const ControlPeer *peer, uint64_t usec) {
        Manager *m = userdata;

        control_server_charge(m->control, peer, usec);
}

int manager_start(Manager *m) {
        struct control_limits lim;
        _cleanup_close_ int fd = -1;
        int r;

        assert(m);
        assert(!m->ready); /* once */
        m->started_realtime = now_usec(CLOCK_REALTIME);
        m->started_monotonic = now_usec(CLOCK_MONOTONIC);
        log_set_max_level(m->config->log_level);

        r = manager_setup_signals(m);
        if (r < 0)
                return r;
        r = manager_start_privileged(m, &fd);
        if (r < 0)
                return r;
        r = manager_start_workers(m);
        if (r < 0)
                return r;
        r = manager_start_store(m);
        if (r < 0)
                return r;
        r = manager_start_tick(m);
        if (r < 0)
                return r;

        r = mount_monitor_new(m->event, m->config->rescan_delay_usec, on_mounts_changed, m, &m->monitor);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the mount table: %m");
        r = manager_rescan_mounts(m);
        if (r < 0)
                return r;

        r = manager_start_rechecks(m);
        if (r < 0)
                return r;

        limits_from_config(m->config, &lim);
        lim.privileged_gid = m->view.privileged_gid;
        r = control_server_new(m->event, fd, &lim, methods_dispatch, m->methods, &m->control);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the control socket: %m");
        TAKE_FD(fd); /* the server's now */
        methods_set_charge(m->methods, charge_reply_build, m);

        m->ready = true;
        (void) sd_notify(0, "READY=1");
        manager_notify_status(m);
        return 0;
}

int manager_run(Manager *m) {
        int r = sd_event_loop(m->event);

        return r < 0 ? log_error_errno(r, "Event loop failed: %m") : r;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* Clients first (pending answers are dropped), then the tracker
         * whose last completions may still answer them, told nothing more
         * of them to the tick pass. */
        if (m->methods) /* none if start-up failed before the workers */
                methods_set_charge(m->methods, NULL, NULL);
        control_server_free(m->control);
        if (m->tracker)
                tracker_set_hooks(m->tracker, &(TrackerHooks) {});
        m->tick = tick_free(m->tick);
        tracker_shutdown(m->tracker);
        /* What comes back now is not applied: the jobs out are detached. */
        mount_reader_free(m->mount_reader);
        store_flusher_free(m->flusher);
        consumer_scanner_free(m->consumer_scanner);
        worker_slot_free(m->reload);
        answer_waiters(TAKE_PTR(m->reload_waiters), -ECANCELED, NULL);
        worker_pool_free(m->pool);
        /* Stopped on purpose: no stale figures left for node_exporter to
         * serve (after a crash, atimed_last_export_timestamp_seconds says
         * how old they are). Not if an export is stuck there: the unlink
         * would hang too. */
        if (m->stopping && m->config && m->config->textfile && !exporter_busy(m->exporter))
                (void) unlink(m->config->textfile);
        exporter_free(m->exporter);
        tracker_free(m->tracker);
        methods_free(m->methods);
        sd_event_source_disable_unref(m->flush_timer);
        sd_event_source_disable_unref(m->consumers_timer);
        sd_event_source_disable_unref(m->mounts_timer);
        sd_event_source_disable_unref(m->trim_timer);
        consumers_free(m->consumers);
        store_free(m->store);
        safe_close(m->state_lock);
        if (m->bound_socket) {
                (void) unlink(m->bound_socket);
                free(m->bound_socket);
        }
        mount_monitor_free(m->monitor);
        mount_table_free(m->mounts);
        sd_event_unref(m->event);
        config_free(m->config);
        free(m->config_path);
        free(m->override_socket);
        free(m->override_state_dir);
        free(m);
        return NULL;
}
