/* view.h: what the request side (methods, status, recommend) and the tick
 * pass read of the daemon's state, and the little they may ask the manager
 * to do. The manager owns everything the view points at and keeps the view
 * current (a new mount table, a reload, a consumer scan): a reader takes
 * the pointers as they are now, on the event loop, and keeps none across
 * turns of the loop (a Recommender, made for one table, is told to start
 * again when the table changes). See docs/architecture.md. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "consumers.h"
#include "mounts.h"
#include "store.h"
#include "tracker.h"

typedef struct StatusCounters StatusCounters; /* status.h */
struct Report;                                /* report.h */

/* Actions that must reach the manager: privileged, called by methods on
 * behalf of a client the methods module has checked. Each may be NULL (not
 * offered: -EOPNOTSUPP). */
/* A reload's outcome: 0, or -errno with the running configuration kept and
 * 'errors' (taken: "file:line: ...", or the one reason the file could not
 * be read). */
typedef void (*view_reload_cb)(int r, char **errors, void *userdata);

typedef struct ViewOps {
        /* Reads the configuration again and puts it in force, as SIGHUP
         * does; cb is called once, later (manager_reload_start()), unless
         * this returns -errno. */
        int (*reload)(void *userdata, view_reload_cb cb, void *cb_userdata);
        /* Probes the tracked mount 'mount_id' now; cb is called once, later
         * (see tracker_probe_now()). */
        int (*probe)(void *userdata, int mount_id, tracker_probe_cb cb, void *cb_userdata);
        /* Whether the history of the tracked mount 'mount_id' could not be
         * stored (its key refused by the store). */
        bool (*history_refused)(void *userdata, int mount_id);
        /* How mount changes are followed, into the report (may be NULL:
         * not said). */
        void (*mount_changes)(void *userdata, struct Report *r);
        void *userdata;
} ViewOps;

typedef struct View {
        const struct config *config;
        const MountTable *mounts;       /* NULL before the first read */
        const Tracker *tracker;
        const Store *store;             /* NULL: no history kept */
        const Consumers *consumers;     /* the last scan's; NULL before the first */
        const StatusCounters *counters; /* NULL: none kept */
        gid_t privileged_gid;           /* (gid_t) -1: root only */
        uint64_t started_realtime;      /* usec */
        uint64_t started_monotonic;
        /* Bumped whenever the manager points the view at other state (a
         * new table, consumers, configuration): a reader that goes on over
         * several turns of the loop starts again when it changed. */
        uint64_t generation;
        ViewOps ops;
} View;

/* The mount filter the configuration 'c' sets: which mounts are tracked. */
static inline void config_mount_filter(const struct config *c, struct mount_filter *ret) {
        *ret = (struct mount_filter) {
                .include_fstypes = c->include_fstypes,
                .exclude_fstypes = c->exclude_fstypes,
                .exclude_paths = c->exclude_paths,
        };
}

static inline int view_reload(const View *v, view_reload_cb cb, void *userdata) {
        return v->ops.reload ? v->ops.reload(v->ops.userdata, cb, userdata) : -EOPNOTSUPP;
}

static inline int view_probe(const View *v, int mount_id, tracker_probe_cb cb, void *userdata) {
        return v->ops.probe ? v->ops.probe(v->ops.userdata, mount_id, cb, userdata) : -EOPNOTSUPP;
}

static inline bool view_history_refused(const View *v, int mount_id) {
        return v->ops.history_refused && v->ops.history_refused(v->ops.userdata, mount_id);
}
