/* kcount.c: the kernel's count against the sample's figures (see
 * kcount.h). */
#include "kcount.h"

#include <math.h>

#include "macro.h"

/* What the sample cannot account for of a count that includes other
 * writes may be atime updates of files the sample does not hold (turned
 * hot since the walk): its interval reaches up to the count. */
static void widen_to_count(struct activity *a, double hi) {
        a->updates.hi = fmax(a->updates.hi, hi);
}

/* Sets a's updates to 'share' of the kernel's count, within [lo, hi] (per
 * minute). The lower bound goes no higher than the sample's own: "nothing
 * but atime updates" is as far as atimed can tell, and a writer it cannot
 * see (a file outside the sample appended to, on xfs with its blocks not
 * yet allocated) makes transactions that are no atime update. */
static void take_count(struct activity *a, double share, double count, double lo, double hi) {
        a->updates.lo = fmin(share * lo, a->updates.lo);
        a->updates.per_min = share * count;
        a->updates.hi = share * hi;
        a->writebacks_per_min = fmin(a->writebacks_per_min, a->updates.per_min);
        a->source = SOURCE_KERNEL;
}

/* Caps a's updates at 'cap' (per minute): the filesystem made no more
 * transactions than that, atime updates and all. */
static void bound_by_count(struct activity *a, double scale, double cap) {
        a->updates.per_min *= scale;
        a->updates.hi = fmin(a->updates.hi, cap);
        a->updates.lo = fmin(a->updates.lo, a->updates.per_min);
        a->writebacks_per_min = fmin(a->writebacks_per_min, a->updates.per_min);
        a->source = SOURCE_SAMPLE_BOUNDED;
}

/* The count over the interval as transactions per minute: its middle
 * (*count) and its range, widened for how it was read; false where it
 * cannot stand (a journal's count over too few commits). */
static bool count_range(const KcountInput *in, double *ret_lo, double *ret_hi, double *ret_count) {
        double lo = in->lo, hi = in->hi, per_min = 60.0 / in->seconds;

        *ret_count = (lo + hi) / 2 * per_min;
        if (in->kind == FS_COUNTER_JBD2 && in->edges) {
                /* Between two edges: the handles made between them, but a
                 * reading's lag after its commit may put the handles made
                 * in it on the wrong side. */
                double s = in->seconds, g = fmin(in->edge_lag, s / 2);

                lo *= 0.98 * s / (s + g);
                hi *= 1.02 * s / (s - g);
        } else if (in->kind == FS_COUNTER_JBD2) {
                /* The journal counts a handle when its transaction commits,
                 * every commit_s or so: the handles counted between two
                 * readings were made over a stretch as much as a commit
                 * period longer or shorter than the interval. */
                double s = in->seconds, p = in->commit_s;

                /* Handles made in the interval's last commit period are
                 * counted in the next: no bound on a burst at its end. So
                 * the count is used over five and a half commits or more
                 * only, as the figure itself or the top of its interval. */
                if (s < JBD2_MIN_COMMITS * p)
                        return false;
                lo *= s / (s + p);
                hi *= s / (s - p);
        } else {
                /* Exact, but read just before the interval's clock by a
                 * thread that may wait its turn on a busy host (a journal's
                 * edge: a poll after its commit, whose handles made since
                 * are the next interval's). */
                lo *= 0.98;
                hi *= 1.02;
        }
        *ret_lo = lo * per_min;
        *ret_hi = hi * per_min;
        return true;
}

void kcount_poll(KcountEdges *e, const struct fs_count *r, uint64_t at, uint64_t real) {
        KcountEdge now = { .count = *r, .at = at, .real = real };
        bool valid = r->valid && e->last.count.valid && at >= e->last.at;

        if (!valid || r->commits != e->last.count.commits) {
                /* A commit since the reading before (or a first reading):
                 * this one starts a stretch with none, and is an edge if
                 * it came soon enough after the one before. */
                if (valid && r->commits > e->last.count.commits && at - e->last.at <= KCOUNT_EDGE_LAG_USEC) {
                        now.lag = at - e->last.at;
                        e->prompt = now;
                }
                e->since = now;
        }
        if (!valid || r->commits < e->last.count.commits)
                e->prompt = (KcountEdge) {}; /* another count: its readings say nothing of this one */
        e->last = now;
        if (!r->valid)
                *e = (KcountEdges) {};
}

bool kcount_edge(const KcountEdges *e, double commit_s, KcountEdge *ret) {
        uint64_t quiet = (uint64_t) (fmax(commit_s, 0) * 1e6) + KCOUNT_COMMIT_SLACK_USEC;

        *ret = (KcountEdge) {};
        if (!e->last.count.valid || !e->since.count.valid || !(commit_s > 0))
                return false;
        if (e->last.at - e->since.at >= quiet) {
                /* No commit for longer than a transaction stays open: none
                 * was open from the first of these readings to 'quiet'
                 * before the last, so no handle was made then, and every
                 * one made before was counted. The edge is a second inside
                 * that stretch (half of it at most), clear of the handles
                 * after it: a clock read a little off, or a figure's time
                 * said to the second, still puts them on the same side. */
                uint64_t end = e->last.at - quiet, back = MIN(KCOUNT_EDGE_BACK_USEC, (end - e->since.at) / 2);

                *ret = (KcountEdge) { .count = e->since.count, .at = end - back, .real = e->last.real - quiet - back };
                return true;
        }
        /* The latest reading just after a commit, where no stretch with
         * none came since. */
        if (!e->prompt.count.valid)
                return false;
        *ret = e->prompt;
        return true;
}

/* Scales a's figure by the ratio learnt where the count stood: its point
 * and top, and its bottom only down (what the sample saw happened; more
 * transactions than that are the ratio's guess). */
static void scale_by_ratio(struct activity *a, double ratio) {
        a->updates.per_min *= ratio;
        a->updates.hi *= ratio;
        a->updates.lo *= fmin(ratio, 1);
}

/* The writers' figures added up: the point and the bounds. */
struct sums {
        double e, elo, ehi;
};

/* An exact count over a pure interval, of a figure the sample accounts
 * for (not one of files it does not hold): how many transactions the
 * filesystem makes per update the sample sees, for the intervals where
 * the count cannot stand. Halfway from the ratio before, so that one
 * interval's chance moves it by half. Where the count cannot stand, the
 * ratio learnt scales the sample's figures, and their sums. */
static void apply_ratio(const KcountInput *in, bool bound, double lo, double count, struct activity *acts, size_t n,
                        struct sums *s, KcountVerdict *v) {
        if (bound && in->pure && s->e >= KCOUNT_RATIO_MIN_PER_MIN && !(lo > 1.5 * s->ehi + 60)) {
                double r = CLAMP(count / s->e, KCOUNT_RATIO_MIN, KCOUNT_RATIO_MAX);

                v->ratio = in->ratio > 0 ? (in->ratio + r) / 2 : r;
                v->learnt = true;
        } else if (bound && !in->pure && in->ratio > 0) {
                for (size_t w = 0; w < n; w++)
                        scale_by_ratio(&acts[w], in->ratio);
                s->e *= in->ratio;
                s->ehi *= in->ratio;
                s->elo *= fmin(in->ratio, 1);
        }
}

/* kcount_apply() but for the ratio's age. */
static KcountVerdict apply_count(const KcountInput *in, struct activity *acts, size_t n) {
        KcountVerdict v = { .lo = -1, .ratio = in->ratio };
        /* A journal's count bounds nothing: a burst at the interval's end
         * is counted in the next. */
        bool bound = in->kind != FS_COUNTER_JBD2;
        struct sums s = {};
        double lo, hi, count;

        if (in->kind == FS_COUNTER_NONE || in->lazytime || n == 0 || !(in->seconds > 0) ||
            !count_range(in, &lo, &hi, &count))
                return v;
        for (size_t w = 0; w < n; w++) {
                s.e += acts[w].updates.per_min;
                s.elo += acts[w].updates.lo;
                s.ehi += acts[w].updates.hi;
        }
        apply_ratio(in, bound, lo, count, acts, n, &s, &v);
        for (size_t w = 0; w < n; w++) {
                struct activity *a = &acts[w];

                a->counter = in->kind;
                a->counter_lo = lo;
                a->counter_hi = hi;
                /* Beyond a tenth: a difference that changes no advice is
                 * not worth a doubt. */
                a->disagrees = (bound && s.elo > hi * 1.1) || (in->pure && lo > s.ehi * 1.1);
                if (in->pure && s.e > 0)
                        take_count(a, a->updates.per_min / s.e, count, lo, hi);
                else if (in->pure && n == 1)
                        take_count(a, 1, count, lo, hi);
                else {
                        if (bound)
                                bound_by_count(a, s.e > hi ? hi / s.e : 1, hi);
                        if (lo > s.ehi)
                                widen_to_count(a, hi);
                }
        }
        v.used = true;
        v.lo = lo;
        /* Half again what the sample's interval allows, and more than a
         * read a second: worth a walk soon, whose fresh strata find the
         * files that turned hot (fsjob.c's fs_rewalk_soon()). */
        v.unexplained = !in->pure && lo > 1.5 * s.ehi + 60;
        /* Far more than the sample's own figure, and more than twice the
         * interval before's: files turned hot that the sample does not
         * hold, whatever its bounds allow (their share of a stratum of
         * thousands leaves the bounds wide). Walked at once, not after
         * two intervals (fs_rewalk_soon()): a count that stays high asks
         * no more than any unexplained one. Pure or not: where the count
         * stands as the figure, the sample still makes it in the
         * intervals where it cannot (a writer appends, and a figure of
         * 48,536 against the kernel's 322,598 in busy.sh's first judged
         * interval came of a jump seen in a pure one and not walked). */
        v.jumped = lo > 1.5 * s.e + 60 && in->prev_lo >= 0 && lo > 2 * in->prev_lo;
        return v;
}

KcountVerdict kcount_apply(const KcountInput *in, struct activity *acts, size_t n) {
        KcountVerdict v = apply_count(in, acts, n);

        /* The ratio is the workload's: forgotten once no pure interval has
         * renewed it for a while. Every interval ages it, whether its count
         * was read or not. */
        v.ratio_age = v.learnt ? 0 : in->ratio_age + 1;
        if (v.ratio_age > KCOUNT_RATIO_INTERVALS)
                v.ratio = 0;
        return v;
}
