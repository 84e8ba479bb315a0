/* planner.h: the tracker's schedule in time. The one file of the tracker
 * that makes event sources: the timed sweeps (one per sampler interval,
 * the tick), the walks' ticks, the first figures, the probes, the fine
 * passes, the journals' edges, and the deferred turn (kick()) that
 * tracker_plan() asks for. A turn submits what is due within the jobs'
 * limits (UUID reads, sweeps, the next walk step within the tick's
 * budget) and arms each timer for what comes due next, by the rules of
 * schedule.h on the tracker's clock.
 *
 * Owns: the Tracker's event sources, the walk tick's budget and cursor,
 * the sweeps' cursor, the fine passes' turn, the devices' readings.
 * Borrows: the filesystems' and mounts' state (read, and sweep_pending
 * cleared as sweeps go out). Failure: a job the pool refuses is asked for
 * again at the next turn or tick; diskstats that cannot be read are said
 * once. */
#pragma once

#include "tracker-base.h"

/* Makes every event source (at tracker_new()); planner_stop() drops them. */
int planner_start(Tracker *t);
void planner_stop(Tracker *t);
/* Everything's next time looked at again: the configuration changed. */
void planner_replan(Tracker *t);
/* The tracker's clock changed (tracker_set_clock()): looked at again, and
 * the fine passes left to a caller's clock. */
void planner_set_clock(Tracker *t);
/* Reads diskstats and updates every filesystem's device rates; with
 * 'only_new', takes the first reading of those that have none. */
void planner_update_devices(Tracker *t, bool only_new);
/* A fine pass now (tracker_fine_pass()). */
void planner_fine_pass(Tracker *t);
