/* reload.c: the configuration read, at start and at each reload (see
 * reload.h). */
#include "reload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "fileio.h"
#include "group.h"
#include "log.h"
#include "strv.h"
#include "time-util.h"
#include "view.h"

struct Reloader {
        WorkerSlot *slot;       /* one read out at a time */
        struct ReloadWaiter *waiters; /* who waits for the next read */
        const char *config_path, *override_socket, *override_state_dir; /* the caller's */
        ReloadOps ops;
        uint64_t timeout;       /* the last read's deadline, for the read once it is back */
};

/* The configuration as reload_read_config() reads it, logging nothing:
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

int reload_read_config(const char *config_path, const char *override_socket, const char *override_state_dir,
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

void reload_keep_running(struct config *c, const struct config *running) {
        if (!streq(c->socket_path, running->socket_path) || c->socket_mode != running->socket_mode ||
            !streq_ptr(c->socket_group, running->socket_group))
                log_warning("Control socket settings changed; they take effect when atimed restarts.");
        if (!streq(c->state_dir, running->state_dir))
                log_warning("state_dir changed; it takes effect when atimed restarts.");
        if (c->worker_threads != running->worker_threads)
                log_warning("worker_threads changed; it takes effect when atimed restarts.");
        c->worker_threads = running->worker_threads;
        /* The helper is started, or its socket chosen, while atimed still
         * holds its privileges: once. */
        if (c->btrfs_snapshot_search != running->btrfs_snapshot_search ||
            !streq_ptr(c->helper_socket, running->helper_socket))
                log_warning("[btrfs] snapshot_search or [daemon] helper_socket changed; they take effect when atimed "
                            "restarts.");
        if (c->mount_events != running->mount_events)
                log_warning("[mounts] events changed; it takes effect when atimed restarts.");
        c->mount_events = running->mount_events;
        if (c->rings.n != running->rings.n ||
            memcmp(c->rings.spec, running->rings.spec, c->rings.n * sizeof c->rings.spec[0]) != 0 ||
            c->max_histories != running->max_histories)
                log_warning("[store] rings and max_mounts changed; they take effect when atimed restarts.");
        c->rings = running->rings;
        c->max_histories = running->max_histories;
}

void reload_say_group_missing(const char *name) {
        log_warning("privileged_group %s does not exist; only root may call privileged methods.", name);
}

/* Reload reads in a worker what may block: the file (on a filesystem that
 * may hang), the privileged group (NSS: LDAP, say) and the mount table
 * parsed with the new filter; the loop then puts the result in force and
 * answers. One read at a time (the Reloader's slot): the callers who asked before
 * it started are answered by it, those who ask while it is out by one
 * more read once it is back, so each answer reflects the file as it was
 * after they asked. */
typedef struct ReloadWaiter {
        reload_cb cb;
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
        Reloader *rl = userdata;
        ReloadJob *j = calloc(1, sizeof *j);

        if (!j)
                return -ENOMEM;
        if (strdup_ptr(rl->config_path, &j->config_path) < 0 || strdup_ptr(rl->override_socket, &j->override_socket) < 0 ||
            strdup_ptr(rl->override_state_dir, &j->override_state_dir) < 0) {
                reload_job_free(j);
                return -ENOMEM;
        }
        j->waiters = TAKE_PTR(rl->waiters);
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
        if (j->config->privileged_group && group_lookup(j->config->privileged_group, &j->gid) < 0)
                j->group_missing = true;
        config_mount_filter(j->config, &f);
        j->table_r = mount_table_load(j->config->mountinfo_path, &f, &j->table);
}

static void reload_done(void *userdata, void *job, WorkerStatus status) {
        Reloader *rl = userdata;
        ReloadJob *j = job;
        char msg[] = "Reading the configuration did not finish in time; the running one stays.";
        char *const timed_out[] = { msg, NULL };

        if (status == WORKER_TIMED_OUT || status == WORKER_EXPIRED) {
                log_error("%s", timed_out[0]);
                answer_waiters(TAKE_PTR(j->waiters), -ETIME, timed_out);
                rl->ops.settled(rl->ops.userdata);
                return; /* a late read is not put in force */
        }
        if (status != WORKER_DONE)
                return; /* the pool is going away: the waiters are told so as the job is freed */
        if (j->r < 0) {
                STRV_FOREACH(e, j->errors)
                        log_error("%s", *e);
                log_error("Configuration not reloaded; keeping the running one.");
                answer_waiters(TAKE_PTR(j->waiters), j->r, j->errors);
                rl->ops.settled(rl->ops.userdata);
                return;
        }
        if (j->group_missing)
                reload_say_group_missing(j->config->privileged_group);
        rl->ops.apply(rl->ops.userdata, TAKE_PTR(j->config), j->gid, TAKE_PTR(j->table), j->table_r);
        answer_waiters(TAKE_PTR(j->waiters), 0, NULL);
        rl->ops.settled(rl->ops.userdata);
}

static void on_reload_again(void *userdata) {
        Reloader *rl = userdata;

        (void) reloader_start(rl, NULL, NULL, rl->timeout);
}

static const WorkerSlotOps reload_ops = {
        .make = reload_make,
        .run = reload_work,
        .done = reload_done,
        .free = reload_job_free,
        .again = on_reload_again, /* for those who asked while a read was out */
        .run_here = true,         /* refused by the pool: read here, as at start */
};

int reloader_start(Reloader *rl, reload_cb cb, void *userdata, uint64_t timeout) {
        ReloadWaiter *w = calloc(1, sizeof *w), **tail = &rl->waiters;
        int r;

        if (!w)
                return -ENOMEM;
        *w = (ReloadWaiter) { .cb = cb, .userdata = userdata };
        while (*tail)
                tail = &(*tail)->next;
        *tail = w;
        rl->timeout = timeout;
        r = worker_slot_start(rl->slot, timeout);
        if (r < 0 && rl->waiters == w && !w->next) {
                /* Nothing made: the caller hears it now, not later. */
                rl->waiters = NULL;
                free(w);
                return r;
        }
        return 0;
}

int reloader_new(WorkerPool *pool, const char *config_path, const char *override_socket,
                 const char *override_state_dir, const ReloadOps *ops, Reloader **ret) {
        Reloader *rl = calloc(1, sizeof *rl);
        int r;

        if (!rl)
                return -ENOMEM;
        *rl = (Reloader) {
                .config_path = config_path,
                .override_socket = override_socket,
                .override_state_dir = override_state_dir,
                .ops = *ops,
        };
        r = worker_slot_new(pool, &reload_ops, rl, &rl->slot);
        if (r < 0) {
                free(rl);
                return r;
        }
        *ret = rl;
        return 0;
}

Reloader *reloader_free(Reloader *rl) {
        if (!rl)
                return NULL;
        /* A read out is detached, its waiters told -ECANCELED as it is freed. */
        worker_slot_free(rl->slot);
        answer_waiters(TAKE_PTR(rl->waiters), -ECANCELED, NULL);
        free(rl);
        return NULL;
}
