/* manager.c: atimed's event loop and lifecycle (see manager.h). */
#include "manager.h"

#include <errno.h>
#include <grp.h>
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

        tracker_set_config(m->tracker, c);
        config_free(m->config);
        m->config = TAKE_PTR(c);
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

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, shutting down.", strsignal((int) si->ssi_signo));
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Shutting down");
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
