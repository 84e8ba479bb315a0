/* prober.h: each tracked mount's probe of the atime policy in force
 * (probe.h), run in a worker with a deadline, periodically and when a
 * client asks (tracker_probe_now(), in tracker.h).
 *
 * Owns: TrackedMount.probe (its result, its schedule, its stall and
 * failure counts) and the probe jobs, each with its own copies of the
 * mount point and the directory to probe in, and the callers waiting for
 * it. Borrows: the configuration, the mount table's entries. A job that
 * misses its deadline stays its thread's: the waiters hear "timed out"
 * from a result the loop makes, and the job is freed when its thread
 * comes back. Failure: a mount whose probe times out is stalled and
 * probed again after its back-off (said once as it starts, once as it
 * ends); one that cannot verify its policy says why in its result. */
#pragma once

#include "tracker-base.h"

/* Probes every mount whose probe is due, within the jobs' limit. */
void prober_run_due(Tracker *t);
/* Probes the mount now for a caller (tracker_probe_now()). */
int prober_probe_now(Tracker *t, int mount_id, tracker_probe_cb cb, void *userdata);
