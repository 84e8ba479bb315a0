/* status.h: the daemon's state as a Report (common/report.h), the one typed
 * model that GetStatus's mounts and the Prometheus export are written from;
 * and the counters that only the daemon keeps (atime updates integrated
 * over time). */
#pragma once

#include "report.h"
#include "view.h"

/* Every tracked mount, or only the one at 'target' (-ENOENT if none is
 * there), with its advice if 'with_advice': mounts and advice paired in one
 * pass. The Report owns copies of everything: it may go to another thread. */
int status_report(const View *v, const char *target, bool with_advice, Report **ret);
/* The same a mount at a time, for a caller that spreads the work over
 * several turns of the event loop: a report with the daemon's figures and
 * room for n_mounts, then each mount of the view's table (its tracker
 * state 'tm' and advice 'rec' may be NULL). */
struct recommendation;
int status_report_begin(const View *v, bool with_advice, size_t n_mounts, Report **ret);
int status_report_add(const View *v, Report *r, const MountEntry *e, const TrackedMount *tm,
                      const struct recommendation *rec);

/* A probe's outcome as the report holds it; its strings are borrowed from
 * 'pr' and from static tables. 'e' may be NULL. */
void status_probe(const struct probe_result *pr, const MountEntry *e, ReportProbe *ret);

/* The kernel's atime updates per minute (and 95% interval) of an activity:
 * the one place where that figure enters the report and the counters. */
void status_activity_updates(const struct activity *a, double *per_min, double *lo, double *hi);

/* Per mount point: atime updates counted since start; and the changes of
 * advice announced since start. Kept by the tick pass (tick.h), read
 * through the view. */
int status_counters_new(StatusCounters **ret);
StatusCounters *status_counters_free(StatusCounters *c);
DEFINE_FREE_FUNC(StatusCounters, status_counters_free);
/* A measured interval of the mount at 'target': its updates are added. */
int status_counters_add(StatusCounters *c, const char *target, double updates);
double status_counters_get(const StatusCounters *c, const char *target);
/* Forgets the mount points no longer in 't'. */
void status_counters_prune(StatusCounters *c, const MountTable *t);
void status_counters_advice_changed(StatusCounters *c);
uint64_t status_counters_advice_changes(const StatusCounters *c);
