/* verdict.c: the saving a change of atime policy realized (see verdict.h). */
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mounts.h"
#include "protocol.h"
#include "report.h"
#include "string-table.h"
#include "varlink.h"

static const char *const verdict_state_table[_VERDICT_STATE_MAX] = {
        [VERDICT_TOO_EARLY] = VERDICT_TOO_EARLY_NAME,
        [VERDICT_TOO_LITTLE_BEFORE] = VERDICT_TOO_LITTLE_BEFORE_NAME,
        [VERDICT_MEASURED] = VERDICT_MEASURED_NAME,
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(verdict_state, VerdictState);

static const char *const verdict_comparison_table[_VERDICT_COMPARISON_MAX] = {
        [VERDICT_SAME_HOURS] = "same_hours",
        [VERDICT_ADJACENT] = "adjacent",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(verdict_comparison, VerdictComparison);

#define DAY 86400

/* A bucket that speaks for one policy alone: measured, the daemon up, the
 * policy the same throughout, the filesystem answering. */
static bool usable(const struct stats_point *p, uint8_t atime, uint8_t flags) {
        return p && p->n > 0 && p->n_act > 0 && !(p->flags & (STATS_POLICY_CHANGED | STATS_STALLED)) &&
               p->atime == atime && (p->flags & STATS_LAZYTIME) == (flags & STATS_LAZYTIME) && isfinite(p->per_min);
}

/* Sums for a mean, its spread and the points' own 95% bounds. */
struct acc {
        unsigned n;
        double sum, sumsq, lo, hi;
};

static void acc_add(struct acc *a, double v, double lo, double hi) {
        a->n++;
        a->sum += v;
        a->sumsq += v * v;
        a->lo += lo;
        a->hi += hi;
}

/* A point's bounds, around its value whatever the file held. */
static void bounds(const struct stats_point *p, double *lo, double *hi) {
        *lo = isfinite(p->lo) ? MIN((double) p->lo, (double) p->per_min) : p->per_min;
        *hi = isfinite(p->hi) ? MAX((double) p->hi, (double) p->per_min) : p->per_min;
}

static double acc_mean(const struct acc *a) {
        return a->n ? a->sum / a->n : 0;
}

/* The variance of the mean, from the spread of the values. */
static double acc_var_mean(const struct acc *a) {
        double m = acc_mean(a), var;

        if (a->n < 2)
                return 0;
        var = (a->sumsq - a->n * m * m) / (a->n - 1);
        return var > 0 ? var / a->n : 0;
}

static int64_t ceil_to(int64_t t, uint32_t res) {
        int64_t q = t / (int64_t) res;

        if (q * (int64_t) res < t)
                q++;
        return q * (int64_t) res;
}

static int64_t floor_to(int64_t t, uint32_t res) {
        int64_t q = t / (int64_t) res;

        if (q * (int64_t) res > t)
                q--;
        return q * (int64_t) res;
}

/* The first bucket of ring r that lies wholly after the change has
 * settled and that the ring still holds: a scan from the change itself
 * would run through every bucket since, however long ago it was. */
static int64_t first_after(const MountHistory *h, unsigned r, const struct stats_change *c, int64_t settle_s) {
        return MAX(ceil_to(c->t + settle_s, h->rings[r].spec.resolution), history_oldest(h, r));
}

/* Whether ring r still holds a bucket from before the change. */
static bool holds_before(const MountHistory *h, unsigned r, const struct stats_change *c) {
        return history_oldest(h, r) <= c->last_old;
}

/* Ring r's buckets after the change, each paired with the same time of day
 * on the last day before it. */
static void judge_same_hours(const MountHistory *h, unsigned r, const struct stats_change *c, int64_t now,
                             int64_t settle_s, struct acc *diff, struct acc *before, struct acc *after) {
        const StatsRing *g = &h->rings[r];
        uint32_t res = g->spec.resolution;

        /* Each pair's bucket before lies in the last day before the change. */
        if (!holds_before(h, r, c))
                return;
        for (int64_t b = first_after(h, r, c, settle_s); g->count && b <= g->head_t && b + res <= now; b += res) {
                const struct stats_point *pa = history_point(h, r, b), *pb;
                double blo, bhi, alo, ahi;
                int64_t k;

                if (!usable(pa, c->to, c->to_flags))
                        continue;
                k = (b - c->t) / DAY + 1;
                pb = history_point(h, r, b - k * DAY);
                if (!usable(pb, c->from, c->from_flags))
                        continue;
                bounds(pb, &blo, &bhi);
                bounds(pa, &alo, &ahi);
                acc_add(diff, (double) pb->per_min - (double) pa->per_min, blo - ahi, bhi - alo);
                acc_add(before, pb->per_min, blo, bhi);
                acc_add(after, pa->per_min, alo, ahi);
        }
}

/* Ring r's buckets after the change, and as many just before it. */
static void judge_adjacent(const MountHistory *h, unsigned r, const struct stats_change *c, int64_t now,
                           int64_t settle_s, struct acc *before, struct acc *after) {
        const StatsRing *g = &h->rings[r];
        uint32_t res = g->spec.resolution;
        int64_t oldest = history_oldest(h, r);

        /* Nothing before the change held: no pair, and the buckets after
         * are counted in the finest ring only (the verdict's "too little
         * before" says how many). */
        if (!holds_before(h, r, c) && r > 0)
                return;
        for (int64_t b = first_after(h, r, c, settle_s); g->count && b <= g->head_t && b + res <= now; b += res) {
                const struct stats_point *p = history_point(h, r, b);
                double lo, hi;

                if (!usable(p, c->to, c->to_flags))
                        continue;
                bounds(p, &lo, &hi);
                acc_add(after, p->per_min, lo, hi);
        }
        for (int64_t b = floor_to(c->last_old, res); g->count && b >= oldest && before->n < MAX(after->n, VERDICT_MIN_POINTS);
             b -= res) {
                const struct stats_point *p = history_point(h, r, b);
                double lo, hi;

                if (!usable(p, c->from, c->from_flags))
                        continue;
                bounds(p, &lo, &hi);
                acc_add(before, p->per_min, lo, hi);
        }
}

static void set_figures(struct verdict *v, const struct acc *before, const struct acc *after, double mean_diff,
                        double var_mean) {
        /* The points' own bounds (the estimator's, often lopsided: updates
         * between looks are allowed for upwards) do not shrink with more
         * points, since one sample stands behind them all: the interval
         * runs from the lowest saving they allow (before at its lower
         * bounds, after at its upper ones) to the highest, widened by the
         * spread of the points, which says how well the means are known. */
        double spread = 1.96 * sqrt(var_mean);
        double lo = (before->n ? before->lo / before->n : 0) - (after->n ? after->hi / after->n : 0);
        double hi = (before->n ? before->hi / before->n : 0) - (after->n ? after->lo / after->n : 0);

        v->state = VERDICT_MEASURED;
        v->n_before = before->n;
        v->n_after = after->n;
        v->before_per_min = acc_mean(before);
        v->after_per_min = acc_mean(after);
        v->saved_per_min = mean_diff;
        v->saved_lo = MIN(lo, mean_diff) - spread;
        v->saved_hi = MAX(hi, mean_diff) + spread;
}

int verdict_judge(const MountHistory *h, const struct stats_change *c, int64_t now, int64_t settle_s,
                  struct verdict *ret) {
        struct acc before0 = {}, after0 = {};

        if (!h || !c || c->t <= 0 || h->n_rings == 0)
                return -ENODATA;
        *ret = (struct verdict) { .after_s = MAX(now - c->t, 0) };

        /* Like hours first, from the finest ring that has enough pairs. */
        for (unsigned r = 0; r < h->n_rings; r++) {
                struct acc diff = {}, before = {}, after = {};

                if (DAY % h->rings[r].spec.resolution != 0)
                        continue;
                judge_same_hours(h, r, c, now, settle_s, &diff, &before, &after);
                if (diff.n < VERDICT_MIN_POINTS)
                        continue;
                ret->comparison = VERDICT_SAME_HOURS;
                ret->resolution = h->rings[r].spec.resolution;
                set_figures(ret, &before, &after, acc_mean(&diff), acc_var_mean(&diff));
                return 0;
        }
        /* Else the windows on either side of the change. */
        ret->comparison = VERDICT_ADJACENT;
        for (unsigned r = 0; r < h->n_rings; r++) {
                struct acc before = {}, after = {};

                judge_adjacent(h, r, c, now, settle_s, &before, &after);
                if (r == 0) {
                        before0 = before;
                        after0 = after;
                }
                if (before.n < VERDICT_MIN_POINTS || after.n < VERDICT_MIN_POINTS)
                        continue;
                ret->resolution = h->rings[r].spec.resolution;
                set_figures(ret, &before, &after, acc_mean(&before) - acc_mean(&after),
                            acc_var_mean(&before) + acc_var_mean(&after));
                return 0;
        }
        /* Not enough yet: said of the finest ring, which fills first. */
        ret->resolution = h->rings[0].spec.resolution;
        ret->n_before = before0.n;
        ret->n_after = after0.n;
        ret->state = after0.n < VERDICT_MIN_POINTS ? VERDICT_TOO_EARLY : VERDICT_TOO_LITTLE_BEFORE;
        return 0;
}

/* A change's verdict kept with its history (verdict_judge_kept()), in the
 * room the history was allocated with. */
struct verdict_memo {
        int64_t change_t; /* the change it is of; 0: none */
        bool have;        /* 'v' holds a verdict */
        bool final;       /* no ring holds a bucket from before the change: 'v' stands */
        struct verdict v; /* the last measured verdict, else the last one judged */
};
_Static_assert(sizeof(struct verdict_memo) <= STATS_VERDICT_MEMO_SIZE, "the history's room for a verdict");

/* Whether no ring holds a bucket from before the change: no verdict to
 * come can pair a bucket after it with one before. */
static bool beyond_rings(const MountHistory *h, const struct stats_change *c) {
        for (unsigned r = 0; r < h->n_rings; r++)
                if (holds_before(h, r, c))
                        return false;
        return true;
}

int verdict_judge_kept(const MountHistory *h, int64_t now, int64_t settle_s, struct verdict *ret) {
        struct verdict_memo *m;
        int r;

        if (!h || h->change.t <= 0)
                return -ENODATA;
        m = h->verdict_memo;
        if (m->change_t == h->change.t && m->final) {
                *ret = m->v;
                return 0;
        }
        r = verdict_judge(h, &h->change, now, settle_s, ret);
        if (r < 0)
                return r;
        if (m->change_t != h->change.t)
                *m = (struct verdict_memo) { .change_t = h->change.t };
        if (!m->have || ret->state == VERDICT_MEASURED || m->v.state != VERDICT_MEASURED) {
                m->v = *ret;
                m->have = true;
        }
        if (beyond_rings(h, &h->change)) {
                m->final = true;
                *ret = m->v;
        }
        return 0;
}

static json_object *policy_options(uint8_t atime, uint8_t flags) {
        char buf[64];

        snprintf(buf, sizeof buf, "%s%s", atime_mode_to_string((AtimeMode) atime),
                 flags & STATS_LAZYTIME ? ",lazytime" : "");
        return json_object_new_string(buf);
}

static int add(json_object *o, const char *key, json_object *v, bool nullable) {
        if (!v && !nullable)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

json_object *verdict_to_json(const struct stats_change *c, const struct verdict *v) {
        _cleanup_json_ json_object *o = json_object_new_object();
        bool promised = c->promise.t > 0, measured = v->state == VERDICT_MEASURED;
        json_object *ci = NULL;

        if (!o)
                return NULL;
        if (measured) {
                ci = json_object_new_array();
                if (!ci || json_object_array_add(ci, report_json_rounded(v->saved_lo, 1)) < 0 ||
                    json_object_array_add(ci, report_json_rounded(v->saved_hi, 1)) < 0) {
                        json_object_put(ci);
                        return NULL;
                }
        }
        if (add(o, F_AT, json_object_new_int64(c->t), false) < 0 ||
            add(o, F_PREVIOUS, policy_options(c->from, c->from_flags), false) < 0 ||
            add(o, F_CURRENT, policy_options(c->to, c->to_flags), false) < 0 ||
            add(o, F_ADVISED, promised ? policy_options(c->promise.atime, c->promise.flags) : NULL, true) < 0 ||
            add(o, F_PROMISED_PER_MIN, promised ? report_json_rounded(c->promise.saving_per_min, 1) : NULL, true) < 0 ||
            add(o, F_STATE, json_object_new_string(verdict_state_to_string(v->state)), false) < 0 ||
            add(o, F_COMPARISON, measured ? json_object_new_string(verdict_comparison_to_string(v->comparison)) : NULL,
                true) < 0 ||
            add(o, F_RESOLUTION_S, json_object_new_int64(v->resolution), false) < 0 ||
            add(o, F_POINTS_BEFORE, json_object_new_int64(v->n_before), false) < 0 ||
            add(o, F_POINTS_AFTER, json_object_new_int64(v->n_after), false) < 0 ||
            add(o, F_AFTER_S, json_object_new_int64(v->after_s), false) < 0 ||
            add(o, F_BEFORE_PER_MIN, measured ? report_json_rounded(v->before_per_min, 1) : NULL, true) < 0 ||
            add(o, F_AFTER_PER_MIN, measured ? report_json_rounded(v->after_per_min, 1) : NULL, true) < 0 ||
            add(o, F_SAVED_PER_MIN, measured ? report_json_rounded(v->saved_per_min, 1) : NULL, true) < 0 ||
            add(o, F_SAVED_CI95, ci, true) < 0)
                return NULL;
        return TAKE_PTR(o);
}
