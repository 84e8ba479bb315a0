/* manager.c: atimed's event loop and lifecycle: start-up in order,
 * signals, the view it keeps current, and the background jobs that keep
 * the mount table, the history on disk and the consumer list current
 * (see manager.h). */
#include "manager.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "group.h"
#include "helper-client.h"
#include "log.h"
#include "methods.h"
#include "mount-events.h"
#include "report.h"
#include "mountlog.h"
#include "privileged.h"
#include "reload.h"
#include "strv.h"
#include "tick.h"
#include "time-util.h"
#include "trim.h"

static void limits_from_config(const struct config *c, gid_t privileged_gid, struct control_limits *l) {
        *l = (struct control_limits) {
                .max_clients = c->max_clients,
                .max_clients_per_user = c->max_clients_per_user,
                .reserved_clients = c->reserved_clients,
                .max_message_size = c->max_message_size,
                .idle_timeout_usec = c->idle_timeout_usec,
                .user_usec_per_s = c->user_loop_usec,
                .user_reply_bytes = (size_t) c->user_reply_memory,
                .reply_bytes = (size_t) c->reply_memory,
                .privileged_gid = privileged_gid,
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

static void on_pass_done(void *userdata) {
        Manager *m = userdata;

        trimmer_if_worth_it(m->trimmer);
}

/* A new mount table in force: the tick pass's notes, the log of what
 * changed, the tracker. Takes t. */
static int apply_table(Manager *m, MountTable *t) {
        _cleanup_(mount_table_freep) MountTable *table = t;
        int r;

        if (t->n_bad_lines > 0)
                log_warning("%s: skipped %u malformed line(s)", m->config->mountinfo_path, t->n_bad_lines);

        r = tick_set_table(m->tick, t);
        if (r < 0)
                return log_error_errno(r, "Failed to update mount state, keeping the previous table: %m");
        mountlog_changes(m->mounts, t);
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
        trimmer_table(m->trimmer, m->mounts->n_all);
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

/* The table checked again: by the events' model, a statmount of each
 * tracked mount; else a read of mountinfo, parsed only if it reads
 * differently. */
static void manager_recheck_mounts(Manager *m) {
        if (m->mount_events_on)
                mount_events_refresh(m->mount_events);
        else
                mount_reader_request(m->mount_reader);
}

static void on_mounts_changed(void *userdata) {
        manager_recheck_mounts(userdata);
}

/* The table is read again every few seconds besides: a change whose
 * event was coalesced away under heavy churn (a thousand umounts in a few
 * seconds) would otherwise wait for the next sampler tick. Reading costs a
 * comparison when nothing changed. */
#define MOUNTS_RECHECK_USEC (5 * USEC_PER_SEC)

static int on_mounts_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_time(s, usec + MOUNTS_RECHECK_USEC);
        /* The events miss nothing (an overflow resyncs). */
        if (!m->mount_events_on)
                mount_reader_request(m->mount_reader);
        return 0;
}

/* ---------------------------------------------------------------- mount changes by event */

static int on_events_table(MountTable *t, void *userdata) {
        return apply_table(userdata, t);
}

static void on_events_lost(int error, void *userdata) {
        Manager *m = userdata;

        m->mount_events_on = false;
        mount_monitor_set_leading(m->monitor, false);
        snprintf(m->mount_changes_reason, sizeof m->mount_changes_reason,
                 "the kernel's mount events failed (%s): mountinfo is read again on each change", strerror(-error));
        log_warning_errno(error, "Mount events failed (%m); the mount table is read again on each change from now on");
        mount_reader_request(m->mount_reader);
}

static void mount_changes_report(void *userdata, Report *r) {
        Manager *m = userdata;
        struct mount_events_stats st = {};

        if (m->mount_events)
                mount_events_get_stats(m->mount_events, &st);
        r->mount_changes.source = m->mount_events_on ? "events" : "mountinfo";
        r->mount_changes.reason = m->mount_events_on ? NULL : report_strdup(r, m->mount_changes_reason);
        r->mount_changes.events = (int64_t) st.events;
        r->mount_changes.resyncs = (int64_t) st.resyncs;
        r->mount_changes.mounts = m->mount_events_on ? (int64_t) st.n_all
                                  : m->mounts           ? (int64_t) m->mounts->n_all
                                                        : 0;
}

/* Why the events cannot be had, in words, from what the helper said. */
static const char *events_refused(int r) {
        switch (r) {
        case -ENXIO:
                return "atimed has no helper to make the fanotify group (it needs CAP_SYS_ADMIN)";
        case -ENOENT:
        case -ECONNREFUSED:
        case -ECONNRESET:
                return "atimed-helper is not running";
        case -EINVAL:
                return "this kernel has no fanotify mount events (Linux 6.15 and later)";
        case -ENOSYS:
        case -EPERM:
        case -EACCES:
                return "the kernel or a seccomp filter refuses the calls";
        default:
                return NULL;
        }
}

#define MOUNT_EVENTS_HELPER_USEC (5 * USEC_PER_SEC)

/* The table by the kernel's events where it can be had; else why not,
 * said once. */
static void manager_start_mount_events(Manager *m) {
        struct mount_filter f;
        _cleanup_close_ int ns = -1;
        int fan = -1, r;
        char *why = m->mount_changes_reason;
        size_t wl = sizeof m->mount_changes_reason;

        if (!m->config->mount_events)
                snprintf(why, wl, "[mounts] events = no");
        else if (!streq(m->config->mountinfo_path, "/proc/self/mountinfo"))
                snprintf(why, wl, "[mounts] mountinfo is not /proc/self/mountinfo");
        else if ((ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
                snprintf(why, wl, "cannot open /proc/self/ns/mnt: %s", strerror(errno));
        else if ((r = helper_mount_events(ns, now_usec(CLOCK_MONOTONIC) + MOUNT_EVENTS_HELPER_USEC, &fan)) < 0)
                snprintf(why, wl, "%s (%s)", events_refused(r) ?: "the helper could not make the fanotify group",
                         strerror(-r));
        else {
                config_mount_filter(m->config, &f);
                r = mount_events_new(m->event, fan, &f, on_events_table, on_events_lost, m, &m->mount_events);
                if (r >= 0) {
                        mount_events_set_delay(m->mount_events, m->config->rescan_delay_usec);
                        m->mount_events_on = true;
                        r = mount_events_load(m->mount_events);
                        m->mount_events_on = r >= 0;
                }
                if (r < 0)
                        snprintf(why, wl, "%s (%s)", events_refused(r) ?: "the mount events could not be set up",
                                 strerror(-r));
        }
        if (m->mount_events_on) {
                m->mount_changes_reason[0] = 0;
                mount_monitor_set_leading(m->monitor, true);
                log_info("Mount changes are followed by the kernel's events (fanotify, statmount): %zu mounts here",
                         m->mounts ? m->mounts->n_all : 0);
        } else
                log_info("Mount changes are followed by reading %s again: %s", m->config->mountinfo_path, why);
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

static void on_consumers_found(Consumers *c, void *userdata) {
        Manager *m = userdata;

        consumers_free(m->consumers);
        m->consumers = c;
        manager_changed(m);
}

static int on_consumers_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_time(s, usec + m->config->consumers_interval_usec);
        consumer_scanner_request(m->consumer_scanner);
        return 0;
}

/* ---------------------------------------------------------------- reload */

/* What a reload read, put in force (reload.h): what only a restart
 * changes kept and said (reload_keep_running()); everything that borrowed
 * from the old configuration pointed at the new before it goes; then the
 * table parsed with the new filter. Takes c and table. */
static void on_reload_read(void *userdata, struct config *c, gid_t gid, MountTable *table, int table_r) {
        Manager *m = userdata;
        struct mount_filter f;
        struct control_limits lim;
        int r;

        reload_keep_running(c, m->config);
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
        consumer_scanner_request(m->consumer_scanner);
        (void) sd_event_source_set_time_relative(m->flush_timer, m->config->flush_interval_usec);
        m->view.privileged_gid = gid;
        log_set_max_level(m->config->log_level);
        limits_from_config(m->config, gid, &lim);
        control_server_set_limits(m->control, &lim);
        mount_monitor_set_delay(m->monitor, m->config->rescan_delay_usec);
        if (m->mount_events)
                mount_events_set_delay(m->mount_events, m->config->rescan_delay_usec);
        if (m->mount_events_on) {
                /* The model has every mount: the new filter applies to it. */
                mount_table_free(table);
                config_mount_filter(m->config, &f);
                r = mount_events_set_filter(m->mount_events, &f);
                if (r < 0)
                        log_error_errno(r, "Failed to apply the new mount filter, keeping the previous table: %m");
        } else if (table_r < 0)
                log_error_errno(table_r, "Failed to read mount table %s, keeping the previous one: %m",
                                m->config->mountinfo_path);
        else
                (void) apply_table(m, table);
        log_info("Configuration reloaded from %s", m->config->path ? m->config->path : "built-in defaults");
}

static void on_reload_settled(void *userdata) {
        (void) sd_notify(0, "READY=1");
        manager_notify_status(userdata);
}

int manager_reload_start(Manager *m, manager_reload_cb cb, void *userdata) {
        return reloader_start(m->reloader, cb, userdata, m->config->sampler_timeout_usec);
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
        manager_recheck_mounts(m);
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
                .mount_changes = mount_changes_report,
                .userdata = m,
        };
        if ((config_path && !(m->config_path = strdup(config_path))) ||
            (override_socket && !(m->override_socket = strdup(override_socket))) ||
            (override_state_dir && !(m->override_state_dir = strdup(override_state_dir))))
                return -ENOMEM;
        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        r = trimmer_new(m->event, &m->trimmer);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
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

        consumer_scanner_request(m->consumer_scanner);
        r = sd_event_add_time_relative(m->event, &m->consumers_timer, CLOCK_MONOTONIC,
                                       m->config->consumers_interval_usec, USEC_PER_SEC, on_consumers_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the consumers timer: %m");
        (void) sd_event_source_set_enabled(m->consumers_timer, SD_EVENT_ON);
        return 0;
}

/* What needs more than the three capabilities kept comes first
 * (privileged.h), with the privileged group resolved as a reload does. */
static int manager_start_privileged(Manager *m, int *ret_fd) {
        const char *g = m->config->privileged_group;

        if (g && group_lookup(g, &m->view.privileged_gid) < 0) {
                m->view.privileged_gid = (gid_t) -1;
                reload_say_group_missing(g);
        }
        return privileged_start(m->config, ret_fd, &m->bound_socket, &m->state_lock);
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
            reloader_new(m->pool, m->config_path, m->override_socket, m->override_state_dir,
                         &(ReloadOps) { .apply = on_reload_read, .settled = on_reload_settled, .userdata = m },
                         &m->reloader) < 0 ||
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
        manager_start_mount_events(m);
        if (!m->mount_events_on) {
                r = manager_rescan_mounts(m);
                if (r < 0)
                        return r;
        }

        r = manager_start_rechecks(m);
        if (r < 0)
                return r;

        limits_from_config(m->config, m->view.privileged_gid, &lim);
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
        m->reloader = reloader_free(m->reloader);
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
        trimmer_free(m->trimmer);
        consumers_free(m->consumers);
        store_free(m->store);
        safe_close(m->state_lock);
        if (m->bound_socket) {
                (void) unlink(m->bound_socket);
                free(m->bound_socket);
        }
        mount_monitor_free(m->monitor);
        mount_table_free(m->mounts);
        mount_events_free(m->mount_events); /* after the table that asks it for types */
        sd_event_unref(m->event);
        config_free(m->config);
        free(m->config_path);
        free(m->override_socket);
        free(m->override_state_dir);
        free(m);
        return NULL;
}
