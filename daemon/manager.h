/* manager.h: the one object that owns atimed's event loop and its life:
 * start-up in order (signals; what needs privileges, privileged.h; the
 * workers and what submits to them; the history; the tick pass; the mount
 * table; the socket's server), the signals, the mount table in force, the
 * consumer list, the history's flushes, and the View the request side and
 * the tick pass read. The per-tick work is tick.c's, the requests are
 * methods.c's, reading a reload is reload.c's, the tracker's schedule its
 * own (tracker.h): each makes its own event sources, from the loop the
 * manager lends it. Modules get what they need passed in (see
 * docs/architecture.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "consumers.h"
#include "control.h"
#include "mounts.h"
#include "store.h"
#include "tracker.h"
#include "view.h"
#include "worker.h"

typedef struct Methods Methods; /* methods.h */
typedef struct Tick Tick;       /* tick.h */
typedef struct Exporter Exporter; /* export.h */

typedef struct Manager {
        sd_event *event;
        struct config *config;

        /* Where the configuration comes from, and what the command line
         * overrides, so that a reload reads the same way. */
        char *config_path;    /* NULL: the default file if present, else built-in */
        char *override_socket;
        char *override_state_dir;

        MountTable *mounts;
        struct Trimmer *trimmer;    /* the heap given back when much of it is free (trim.h) */
        MountMonitor *monitor;
        /* The table kept by the kernel's events (mount-events.h), when
         * mount_events_on; else the reader's. Kept to the end once made:
         * the tables it built ask it for types. */
        struct MountEvents *mount_events;
        bool mount_events_on;
        char mount_changes_reason[256]; /* why not by events; "" when by events */
        WorkerPool *pool;
        Tracker *tracker;
        Store *store;
        int state_lock; /* the state dir's lock file, flock()ed; -1: none */
        Consumers *consumers;       /* the last scan's; NULL before the first */
        sd_event_source *consumers_timer;
        sd_event_source *mounts_timer; /* the mount table read again now and then */
        /* The background jobs of which one at a time is out (worker.h). */
        MountReader *mount_reader;  /* the mount table's reads (mounts.h) */
        StoreFlusher *flusher;     /* the history's writes (store.h) */
        struct Reloader *reloader;              /* the configuration's reads (reload.h) */
        ConsumerScanner *consumer_scanner;      /* the consumer scans (consumers.h) */
        struct consumers_paths consumer_paths; /* where they look: the configuration's, borrowed */
        sd_event_source *flush_timer;
        struct Exporter *exporter;        /* the textfile's writer */
        Tick *tick;                       /* each tick's work for every mount (tick.h) */
        bool stopping;                    /* a signal asked us to stop: clean up on the way out */
        /* What the request side and the tick pass read (view.h): kept
         * current by manager_changed() (manager.c). */
        View view;
        Methods *methods;                 /* the control protocol's methods, and their cache */
        ControlServer *control;
        char *bound_socket; /* the path we bound and remove at exit; NULL if socket-activated */

        uint64_t started_realtime; /* usec */
        uint64_t started_monotonic;
        bool ready;
} Manager;

/* Takes ownership of 'config'. */
int manager_new(struct config *config, const char *config_path, const char *override_socket,
                const char *override_state_dir, Manager **ret);
/* Opens the socket, reads the mount table, starts watching; READY=1 last. */
int manager_start(Manager *m);
int manager_run(Manager *m);
Manager *manager_free(Manager *m);
DEFINE_FREE_FUNC(Manager, manager_free);

/* Reads the configuration again, off the loop, and puts it in force (what
 * SIGHUP and the Reload method do); cb (may be NULL) then has 0, or -errno
 * with the running configuration kept, the reasons logged and handed over
 * in 'errors' (taken by cb: "file:line: ...", or the one reason the file
 * could not be read). A read already out answers those who asked before it
 * began; a later caller gets one more read. Returns 0, or -errno with cb
 * never called. */
typedef view_reload_cb manager_reload_cb;
int manager_reload_start(Manager *m, manager_reload_cb cb, void *userdata);

/* Re-reads the mount table now. */
int manager_rescan_mounts(Manager *m);

