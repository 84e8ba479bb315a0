/* manager.h: the one object that owns atimed's event loop and every event
 * source: signals, the mount monitor, the control socket, the watchdog.
 * Modules get what they need passed in. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "advisor.h"
#include "config.h"
#include "consumers.h"
#include "control.h"
#include "mounts.h"
#include "store.h"
#include "tracker.h"
#include "worker.h"

typedef struct Manager {
        sd_event *event;
        struct config *config;

        /* Where the configuration comes from, and what the command line
         * overrides, so that a reload reads the same way. */
        char *config_path;    /* NULL: the default file if present, else built-in */
        char *override_socket;
        char *override_state_dir;

        MountTable *mounts;
        struct MountNotes *notes; /* the manager's own of each mount, by id (manager.c) */
        size_t n_notes;
        size_t mounts_peak; /* most mounts in the table since memory was last trimmed */
        sd_event_source *trim_timer; /* armed while a trim is due */
        MountMonitor *monitor;
        WorkerPool *pool;
        Tracker *tracker;
        Store *store;
        int state_lock; /* the state dir's lock file, flock()ed; -1: none */
        Consumers *consumers;       /* the last scan's; NULL before the first */
        sd_event_source *consumers_timer;
        sd_event_source *mounts_timer; /* the mount table read again now and then */
        struct TableRead *table_read;  /* a read of it out in a worker (manager.c) */
        bool table_read_again;         /* asked for again while that was out */
        bool consumers_scanning;
        sd_event_source *flush_timer;
        struct FlushJob *flushing; /* a history write out in a worker */
        bool exiting;              /* SIGTERM came while one was out */
        int last_flush_error; /* logged once until it changes or clears */
        gid_t privileged_gid; /* (gid_t) -1: root only */
        uint64_t advice_changes; /* announced since start */
        uint64_t generation;     /* bumped when the manager's own state changes (see tracker_generation()) */
        struct StatusCache *status_cache; /* methods.c's */
        struct StatusCounters *counters;  /* status.c's: atime updates since start */
        struct Exporter *exporter;        /* the textfile's writer */
        struct TickPass *tick;            /* each tick's work for every mount, in slices (manager.c) */
        bool stopping;                    /* a signal asked us to stop: clean up on the way out */
        ControlServer *control;
        char *bound_socket; /* the path we bound and remove at exit; NULL if socket-activated */

        uint64_t started_realtime; /* usec */
        uint64_t started_monotonic;
        bool ready;
} Manager;

/* Reads the configuration the way the manager will on every reload. */
int manager_read_config(const char *config_path, const char *override_socket, const char *override_state_dir,
                        struct config **ret, char ***ret_errors);

/* Takes ownership of 'config'. */
int manager_new(struct config *config, const char *config_path, const char *override_socket,
                const char *override_state_dir, Manager **ret);
/* Opens the socket, reads the mount table, starts watching; READY=1 last. */
int manager_start(Manager *m);
int manager_run(Manager *m);
Manager *manager_free(Manager *m);
DEFINE_FREE_FUNC(Manager, manager_free);

/* Whether the history of the tracked mount 'mount_id' could not be stored
 * (its key refused by the store; logged once). */
bool manager_mount_history_refused(const Manager *m, int mount_id);

/* Reads the configuration again and puts it in force before returning (what
 * SIGHUP and the Reload method do). On failure the running configuration
 * stays, the reasons are logged, and *ret_errors (if given) holds them, one
 * "file:line: ...", or the one reason the file could not be read. */
int manager_reload(Manager *m, char ***ret_errors);

/* Re-reads the mount table now. */
int manager_rescan_mounts(Manager *m);
