/* schedule.h: the rules of the tracker's schedule, as pure functions of
 * plain numbers: when a timed sweep comes, which sweep measures an
 * interval, when a walk is due, walked again or brought forward, when a
 * first figure is due, how long a failing filesystem waits, and when a
 * first walk will be done. No clock is read and nothing is kept here: the
 * tracker passes the times (CLOCK_MONOTONIC usec on its own clock, or
 * CLOCK_REALTIME usec where said) and arms its timers from the answers
 * (planner.c), so that the rules are tested without an event loop
 * (tests/unit/test-schedule.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sampler.h"

/* A failing or stalled filesystem or mount waits this long before its
 * first retry, doubling with each failure in a row up to the most. */
#define SCHEDULE_BACKOFF_MIN_USEC (10 * USEC_PER_SEC)
#define SCHEDULE_BACKOFF_MAX_USEC (3600 * USEC_PER_SEC)
/* The wait after 'failures' failures in a row (1: the first). */
uint64_t schedule_backoff(unsigned failures);

/* A time 'when' on the tracker's clock, for a timer on the system's
 * monotonic clock. On the system's clock ('own_clock' false) it is 'when'
 * (never 0: sd-event reads that as "off"). On a clock of the caller's,
 * which moves only when the caller says so: what is due at 'now' fires at
 * once (1), what is not never fires by itself (USEC_INFINITY) and is
 * planned again at the caller's next move. */
uint64_t schedule_timer_time(bool own_clock, uint64_t now, uint64_t when);

/* The next timed sweep (monotonic usec), in the middle of the next
 * wall-clock bucket of one 'interval': history buckets by wall clock, and
 * a sweep near a boundary could land two in one bucket and none in the
 * next. From the clocks read together ('real', 'mono'), re-aligned every
 * time, so clock adjustments never accumulate. */
uint64_t schedule_next_sweep(uint64_t real, uint64_t mono, uint64_t interval);
/* The first timed sweep at 'when' or after, 'next' being the next one. */
uint64_t schedule_first_sweep_after(uint64_t next, uint64_t interval, uint64_t when);
/* The first timed sweep that measures an interval begun at 'since': a
 * sweep closer than 9/10 of an interval measures nothing (fsjob.c). */
uint64_t schedule_first_measuring_sweep(uint64_t next, uint64_t interval, uint64_t since);

/* How long before a sweep journals' counts are read for their edges: a
 * commit period and its slack at ext4's default commit=5, so that a
 * stretch with no commit shows one (kcount_edge()); at most half an
 * interval, so that the figure's interval, which ends at its edge, stays
 * in the sweep's bucket of history. Returns when the reading begins for
 * a sweep at 'sweep' (never 0). */
#define SCHEDULE_EDGE_WINDOW_USEC (7 * USEC_PER_SEC)
uint64_t schedule_edges_from(uint64_t sweep, uint64_t interval);

/* Whether a walk of a sampler as 'v' shows it is due at 'now': one under
 * way goes on, one never walked begins, and a refresh comes at
 * 'next_walk' (0: none planned) unless a finished walk still waits for
 * its sweep. */
bool schedule_walk_due(const SamplerView *v, uint64_t next_walk, uint64_t now);

/* The shortest time between two walks of a filesystem. */
#define SCHEDULE_WALK_REFRESH_MIN_USEC (60 * USEC_PER_SEC)
/* When the walk after one that ended at 'now', having taken 'took', is
 * due: walking takes a tenth of the time at most, and never waits longer
 * than [sampler] refresh ('refresh'). A 'first' walk is walked again half
 * an interval on (a minute at most), when the first figure comes: it ran
 * at start-up, often before the host's workload began, and its strata
 * hold none of the files that workload reads. */
uint64_t schedule_walk_refresh(bool first, uint64_t took, uint64_t interval, uint64_t refresh, uint64_t now);

/* A walk brought forward by what a sweep found (fsjob.c, fs_rewalk_soon()):
 * files that turned hot since the walk ('woke_hot': at once), or a kernel
 * count the sample cannot explain ('unexplained': after two intervals;
 * 'jumped', more than twice the interval before: at once), never before
 * 20 s unless hot, and never before three times the last walk's length
 * ('walk_took') has passed since it began ('walk_started'). Returns the
 * next walk's time: 'next_walk' where nothing brings it forward. */
uint64_t schedule_rewalk(uint64_t next_walk, bool woke_hot, bool unexplained, bool jumped, uint64_t walk_started,
                         uint64_t walk_took, uint64_t interval, uint64_t now);

/* When a filesystem's first figure is due: half an interval after its
 * baseline ('baseline_at'), the shortest a first figure measures, on no
 * timed sweep's phase: the next timed sweep may come any time up to an
 * interval and a half after a baseline, and a first walk that ends takes
 * a new baseline. Asked for once per baseline ('asked': the baseline it
 * was asked for); 0: none due. */
uint64_t schedule_first_due(uint64_t baseline_at, uint64_t asked, uint64_t interval);

/* When a first walk that has seen 'walked' entries in 'took' is done with
 * the 'used' inodes in use, at the pace it has kept so far (at
 * 'walk_rate' a second before its first step is back). */
uint64_t schedule_walk_end(uint64_t walked, uint64_t used, uint64_t took, unsigned walk_rate, uint64_t now);
