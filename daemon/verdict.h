/* verdict.h: did a change of atime policy deliver what the advice promised?
 * Pure: a mount's history and the change it recorded (stats_change, kept by
 * the store) in, the saving realized out; no I/O, no clock.
 *
 * The figures before and after the change are compared over like windows:
 * each bucket after the change is paired with the bucket at the same time
 * of day on the last day before it ("same_hours"), which takes the daily
 * rhythm of a host out of the difference; where the history does not reach
 * back a day, the buckets just before the change are compared with those
 * after it ("adjacent"), and the verdict says so. The saving is the mean
 * difference, updates per minute before less after, with a 95% interval
 * from the points' own bounds (before at its lower ones against after at
 * its upper ones, and the reverse) widened by the spread of the points.
 * Until enough buckets lie on each side the verdict is "too early" or
 * "too little history before". See docs/architecture.md, section 7. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol.h" /* VERDICT_MIN_POINTS */
#include "stats.h"
/* The sampler intervals after a change left out of the window after it:
 * the estimator's figures for the first seconds after a remount still
 * carry what it learnt of each inode before (measured: about five 1 s
 * intervals of a strictatime mount read flat out, then relatime). */
#define VERDICT_SETTLE_INTERVALS 5

typedef enum VerdictState {
        VERDICT_TOO_EARLY,       /* too few buckets after the change yet */
        VERDICT_TOO_LITTLE_BEFORE, /* too few buckets under the old policy */
        VERDICT_MEASURED,
        _VERDICT_STATE_MAX,
} VerdictState;

typedef enum VerdictComparison {
        VERDICT_SAME_HOURS, /* each bucket after against the same time of day before */
        VERDICT_ADJACENT,   /* the buckets just before against those after */
        _VERDICT_COMPARISON_MAX,
} VerdictComparison;

struct verdict {
        VerdictState state;
        VerdictComparison comparison;
        uint32_t resolution;       /* seconds per bucket compared */
        unsigned n_before, n_after; /* buckets compared (pairs count on both sides) */
        int64_t after_s;           /* how long after the change the buckets reach */
        double before_per_min, after_per_min; /* means, atime updates per minute */
        double saved_per_min, saved_lo, saved_hi; /* before less after, and its 95% interval */
};

/* The verdict on h's change c as of 'now'. Buckets after the change count
 * from 'settle_s' after it (an interval measured across the remount mixes
 * both policies). -ENODATA if c records no change. */
int verdict_judge(const MountHistory *h, const struct stats_change *c, int64_t now, int64_t settle_s,
                  struct verdict *ret);

/* The verdict on h's last change (h->change), judged so that its cost
 * does not grow with the change's age: the scans of verdict_judge() are
 * bounded by what the rings hold, and once no ring holds a bucket from
 * before the change (it is older than the longest ring reaches), nothing
 * more can be learnt: the last measured verdict is kept (or, if there was
 * none, the one judged then), and given at once from then on. The kept
 * verdict lives with h, in memory (a restart judges such a change once
 * again, from what the rings hold then). -ENODATA if h records no
 * change. */
int verdict_judge_kept(const MountHistory *h, int64_t now, int64_t settle_s, struct verdict *ret);

const char *verdict_state_to_string(VerdictState s);
const char *verdict_comparison_to_string(VerdictComparison c);

/* The change and its verdict as GetRecommendations' and GetHistory's
 * PolicyChange (docs/io.atimed.varlink); 'v' NULL: no verdict (-ENODATA). */
json_object *verdict_to_json(const struct stats_change *c, const struct verdict *v);
