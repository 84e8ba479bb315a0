/* manager.c: atimed's event loop and lifecycle (see manager.h). */
#include "manager.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "methods.h"
#include "strv.h"

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

int manager_read_config(const char *config_path, const char *override_socket, const char *override_state_dir,
                        struct config **ret, char ***ret_errors) {
        _cleanup_(config_freep) struct config *c = NULL;
        int r;

        *ret_errors = NULL;
        if (config_path)
                r = config_load(config_path, &c, ret_errors);
        else if (access(ATIMED_CONFIG_DEFAULT, F_OK) == 0)
                r = config_load(ATIMED_CONFIG_DEFAULT, &c, ret_errors);
        else
                r = config_new(&c);
        if (r < 0)
                return r;
        if ((override_socket && config_set_string(&c->socket_path, override_socket) < 0) ||
            (override_state_dir && config_set_string(&c->state_dir, override_state_dir) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

static void filter_from_config(const struct config *c, struct mount_filter *f) {
        *f = (struct mount_filter) {
                .include_fstypes = c->include_fstypes,
                .exclude_fstypes = c->exclude_fstypes,
                .exclude_paths = c->exclude_paths,
        };
}

static void limits_from_config(const struct config *c, struct control_limits *l) {
        *l = (struct control_limits) {
                .max_clients = c->max_clients,
                .max_message_size = c->max_message_size,
                .idle_timeout_usec = c->idle_timeout_usec,
        };
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
                log_full_errno(level, 0, "Tracking %s (%s on %s): %s", new->target, new->fstype, new->source,
                               mount_policy_format(&new->policy, a, sizeof a));
        else if (!new)
                log_full_errno(level, 0, "No longer tracking %s (%s on %s)", old->target, old->fstype, old->source);
        else if (!mount_policy_equal(&old->policy, &new->policy))
                log_full_errno(level, 0, "%s: atime policy changed from %s to %s", new->target,
                               mount_policy_format(&old->policy, a, sizeof a),
                               mount_policy_format(&new->policy, b, sizeof b));
        else
                log_debug("%s: mount options changed to %s", new->target, new->vfs_options);
}

int manager_rescan_mounts(Manager *m) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        struct mount_filter f;
        bool initial = !m->mounts;
        int r;

        filter_from_config(m->config, &f);
        r = mount_table_load(m->config->mountinfo_path, &f, &t);
        if (r < 0)
                return log_error_errno(r, "Failed to read mount table %s, keeping the previous one: %m",
                                       m->config->mountinfo_path);
        if (t->n_bad_lines > 0)
                log_warning("%s: skipped %u malformed line(s)", m->config->mountinfo_path, t->n_bad_lines);

        mount_table_diff(m->mounts, t, log_mount_change, &initial);
        if (initial)
                log_info("Tracking %zu mounts", t->n);
        r = tracker_update(m->tracker, t);
        if (r < 0) {
                /* The tracker may point into either table now: keep both and
                 * let the service manager restart us. */
                log_error_errno(r, "Failed to update mount state: %m");
                TAKE_PTR(t);
                return sd_event_exit(m->event, r);
        }
        mount_table_free(m->mounts);
        m->mounts = TAKE_PTR(t);
        if (m->ready)
                manager_notify_status(m);
        return 0;
}

static void on_mounts_changed(void *userdata) {
        (void) manager_rescan_mounts(userdata);
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

static int manager_reload(Manager *m) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        struct control_limits lim;
        int r;

        (void) sd_notifyf(0, "RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%llu",
                          (unsigned long long) now_usec(CLOCK_MONOTONIC));

        r = manager_read_config(m->config_path, m->override_socket, m->override_state_dir, &c, &errors);
        if (r < 0) {
                STRV_FOREACH(e, errors)
                        log_error("%s", *e);
                if (!errors)
                        log_error_errno(r, "Failed to read configuration %s: %m",
                                        m->config_path ? m->config_path : ATIMED_CONFIG_DEFAULT);
                log_error("Configuration not reloaded; keeping the running one.");
                (void) sd_notify(0, "READY=1");
                manager_notify_status(m);
                return r;
        }

        if (!streq(c->socket_path, m->config->socket_path) || c->socket_mode != m->config->socket_mode ||
            !streq_ptr(c->socket_group, m->config->socket_group))
                log_warning("Control socket settings changed; they take effect when atimed restarts.");
        if (!streq(c->state_dir, m->config->state_dir))
                log_warning("state_dir changed; it takes effect when atimed restarts.");
        if (c->worker_threads != m->config->worker_threads)
                log_warning("worker_threads changed; it takes effect when atimed restarts.");
        c->worker_threads = m->config->worker_threads;
        if (c->n_rings != m->config->n_rings || memcmp(c->rings, m->config->rings, sizeof c->rings) != 0 ||
            c->max_histories != m->config->max_histories)
                log_warning("[store] rings and max_mounts changed; they take effect when atimed restarts.");
        memcpy(c->rings, m->config->rings, sizeof c->rings);
        c->n_rings = m->config->n_rings;
        c->max_histories = m->config->max_histories;

        tracker_set_config(m->tracker, c);
        config_free(m->config);
        m->config = TAKE_PTR(c);
        (void) sd_event_source_set_time_relative(m->flush_timer, m->config->flush_interval_usec);
        m->privileged_gid = resolve_group(m->config->privileged_group);
        log_set_max_level(m->config->log_level);
        limits_from_config(m->config, &lim);
        control_server_set_limits(m->control, &lim);
        mount_monitor_set_delay(m->monitor, m->config->rescan_delay_usec);
        (void) manager_rescan_mounts(m);

        log_info("Configuration reloaded from %s", m->config->path ? m->config->path : "built-in defaults");
        (void) sd_notify(0, "READY=1");
        manager_notify_status(m);
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata);
        return 0;
}

/* ---------------------------------------------------------------- history */

static struct stats_sample policy_sample(const TrackedMount *tm, int64_t t) {
        const struct mount_policy *p = &tm->entry->policy;
        struct stats_sample s = {
                .t = t,
                .has_policy = true,
                .atime = (uint8_t) p->atime,
                .flags = (uint8_t) ((p->nodiratime ? STATS_NODIRATIME : 0) | (p->lazytime ? STATS_LAZYTIME : 0) |
                                    (p->read_only ? STATS_READ_ONLY : 0) |
                                    (tracker_mount_stalled(tm) ? STATS_STALLED : 0)),
        };

        if (tm->probe.have) {
                s.flags |= STATS_PROBED;
                if (tm->probe.result.verified) {
                        s.flags |= STATS_PROBE_VERIFIED;
                        s.probe = (uint8_t) tm->probe.result.effective;
                }
        }
        return s;
}

static void history_add_sample(Manager *m, const TrackedMount *tm, const struct stats_sample *s) {
        char key[PATH_MAX + 512];
        int r;

        if (!tracker_mount_key(tm, key, sizeof key))
                return; /* who the filesystem is is not known yet */
        r = store_add(m->store, key, s);
        if (r < 0)
                log_warning_errno(r, "%s: cannot record history: %m", tm->entry->target);
}

static void on_tick(const TrackedMount *tm, int64_t t, void *userdata) {
        Manager *m = userdata;
        struct stats_sample s = policy_sample(tm, t);

        if (tm->fs && tm->fs->rate.valid) {
                s.has_device = true;
                s.write_iops = (float) tm->fs->rate.write_iops;
                s.write_kib = (float) tm->fs->rate.write_kib_per_s;
        }
        if (!tracker_mount_writes_atime(tm))
                s.has_activity = true; /* exactly zero, measured by construction */
        history_add_sample(m, tm, &s);
}

static void on_activity(const TrackedMount *tm, const struct activity *a, void *userdata) {
        struct stats_sample s = {
                .t = (int64_t) (a->at / USEC_PER_SEC),
                .has_activity = true,
                .per_min = (float) a->est.per_min,
                .lo = (float) a->est.lo,
                .hi = (float) a->est.hi,
        };

        history_add_sample(userdata, tm, &s);
}

static int64_t now_seconds(void) {
        return (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC);
}

/* Writes history; a failure is logged once (until it changes) and retried
 * at the next flush: the daemon keeps everything in memory meanwhile. */
static void manager_flush(Manager *m, bool snapshot) {
        int r = store_flush(m->store, now_seconds(), snapshot);

        if (r < 0 && r != m->last_flush_error)
                log_warning_errno(r, "Cannot write history to %s, keeping it in memory and retrying: %m",
                                  m->config->state_dir);
        else if (r >= 0 && m->last_flush_error < 0)
                log_info("History written to %s again.", m->config->state_dir);
        m->last_flush_error = r < 0 ? r : 0;
}

static int on_flush_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_time(s, usec + m->config->flush_interval_usec);
        manager_flush(m, false);
        return 0;
}

static int manager_start_store(Manager *m) {
        struct store_load_report rep = {};
        int r;

        r = store_new(m->config->state_dir, m->config->rings, m->config->n_rings, m->config->max_histories, &m->store);
        if (r < 0)
                return log_error_errno(r, "Failed to set up history: %m");
        r = store_load(m->store, now_seconds(), &rep);
        if (r < 0) {
                store_load_report_done(&rep);
                return log_error_errno(r, "Failed to load history: %m");
        }
        STRV_FOREACH(p, rep.problems)
                log_warning("History in %s: %s", m->config->state_dir, *p);
        log_info("History of %zu mounts loaded (%zu journal samples replayed)", rep.mounts, rep.replayed);
        store_load_report_done(&rep);
        /* Fold the journal into a fresh snapshot right away. */
        manager_flush(m, true);

        r = sd_event_add_time_relative(m->event, &m->flush_timer, CLOCK_MONOTONIC, m->config->flush_interval_usec,
                                       USEC_PER_SEC, on_flush_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the flush timer: %m");
        (void) sd_event_source_set_enabled(m->flush_timer, SD_EVENT_ON);
        tracker_set_hooks(m->tracker, &(TrackerHooks) { .tick = on_tick, .activity = on_activity, .userdata = m });
        return 0;
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, shutting down.", strsignal((int) si->ssi_signo));
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Shutting down");
        if (m->store)
                manager_flush(m, true);
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

static int manager_open_socket(Manager *m, int *ret_fd) {
        int fd, r;
        gid_t gid = (gid_t) -1;

        r = control_socket_from_activation(&fd);
        if (r < 0)
                return log_error_errno(r, "Invalid socket passed by the service manager: %m");
        if (r > 0) {
                log_info("Serving on the socket passed by the service manager");
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

static void manager_prepare_state_dir(Manager *m) {
        const char *d = m->config->state_dir;
        _cleanup_free_ char *p = strdup(d);

        /* Create missing parents (0755) and the directory itself (0700). A
         * state dir we cannot create is logged: the daemon still measures. */
        for (char *s = p ? strchr(p + 1, '/') : NULL; s; s = strchr(s + 1, '/')) {
                *s = 0;
                (void) mkdir(p, 0755);
                *s = '/';
        }
        if (mkdir(d, 0700) < 0 && errno != EEXIST)
                log_warning_errno(errno, "Cannot create state directory %s: %m", d);
}

int manager_start(Manager *m) {
        struct control_limits lim;
        int fd = -1, r;

        m->started_realtime = now_usec(CLOCK_REALTIME);
        m->started_monotonic = now_usec(CLOCK_MONOTONIC);
        log_set_max_level(m->config->log_level);

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

        manager_prepare_state_dir(m);
        m->privileged_gid = resolve_group(m->config->privileged_group);

        r = tracker_new(m->event, m->config, &m->tracker);
        if (r < 0)
                return log_error_errno(r, "Failed to start the workers: %m");
        r = manager_start_store(m);
        if (r < 0)
                return r;

        r = mount_monitor_new(m->event, m->config->rescan_delay_usec, on_mounts_changed, m, &m->monitor);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the mount table: %m");
        r = manager_rescan_mounts(m);
        if (r < 0)
                return r;

        r = manager_open_socket(m, &fd);
        if (r < 0)
                return r;
        limits_from_config(m->config, &lim);
        r = control_server_new(m->event, fd, &lim, methods_dispatch, m, &m->control);
        if (r < 0) {
                safe_close(fd);
                return log_error_errno(r, "Failed to set up the control socket: %m");
        }

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
         * whose last completions may still answer them. */
        control_server_free(m->control);
        tracker_free(m->tracker);
        sd_event_source_disable_unref(m->flush_timer);
        store_free(m->store);
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
