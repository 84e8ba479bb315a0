/* tick.h: the work of each sampler interval for every mount (the "tick
 * pass"): the interval's sample into the mount's history, its advice, and
 * the announcement of an advice that changed and held; the counters of
 * atime updates and advice changes; the textfile's report. It reads the
 * daemon's state through a View (view.h) and writes only its own: the
 * notes it keeps per mount, the store's histories, the counters.
 *
 * Contract:
 * - The manager calls tick_set_table() before a new mount table comes into
 *   force, and tick_restart() whenever the view shows another table,
 *   consumer scan or configuration: a pass that is out goes on from the
 *   first mount with advice made afresh (samples already taken this tick
 *   are not taken again).
 * - tick_begin() at each tracker tick finishes the previous pass first;
 *   the pass then runs in slices of about a millisecond on an idle-priority
 *   defer source, so requests and completions come first between slices.
 * - tick_activity() for each measured interval: the tick's sample first if
 *   the pass has not reached that mount yet, then the interval's.
 * - hooks.changed is called whenever an advice change is announced (what a
 *   GetStatus shows changed); hooks.pass_done after every complete pass.
 * See docs/architecture.md. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "export.h"
#include "status.h"
#include "store.h"
#include "tracker.h"
#include "view.h"

typedef struct Tick Tick;

typedef struct TickHooks {
        void (*changed)(void *userdata);   /* an advice change was announced */
        void (*pass_done)(void *userdata); /* a pass went through every mount */
        void *userdata;
} TickHooks;

/* 'view', 'store' (NULL: no history) and 'exporter' (NULL: no textfile)
 * must outlive the Tick. */
int tick_new(sd_event *e, const View *view, Store *store, Exporter *exporter, const TickHooks *hooks, Tick **ret);
Tick *tick_free(Tick *t);
DEFINE_FREE_FUNC(Tick, tick_free);

/* The counters it keeps, for the view. */
const StatusCounters *tick_counters(const Tick *t);

/* The notes for 'table', which is about to be the view's: those of mounts
 * still there kept, new ones empty. Nothing changes on failure. Restarts
 * the pass. */
int tick_set_table(Tick *t, const MountTable *table);
/* The view shows something else (table, consumers, configuration): the
 * pass out starts again from the first mount. */
void tick_restart(Tick *t);

/* The tracker's tick at 't' (Unix seconds): a pass over every mount. */
void tick_begin(Tick *t, int64_t at);
/* A measured interval of tm. */
void tick_activity(Tick *t, const TrackedMount *tm, const struct activity *a);
/* Whatever is left of a pass, now (before a reload, say). */
void tick_complete(Tick *t);
/* The way out: the pass finished now, no export from here on. */
void tick_stop(Tick *t);
/* Whether a pass is out. */
bool tick_active(const Tick *t);

/* Whether the history of the tracked mount 'mount_id' could not be stored
 * (its key refused by the store; logged once). */
bool tick_history_refused(const Tick *t, int mount_id);
