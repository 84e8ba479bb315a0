/* estimate.c: proportion, rate and total estimates with their intervals
 * (see estimate.h). */
#include "estimate.h"

#include <errno.h>
#include <math.h>

#include "macro.h"

#define Z95 1.959963984540054
#define Z999 3.290526731491926
#define RATE_MEMORY_S 60.0 /* the time constant q's evidence decays with */
#define MIN_HITS 5.0       /* hits the share of hits must rest on */

/* Wilson's score interval of x successes in n trials (n > 0), at the
 * confidence of z. */
static void wilson_z(double x, double n, double z, double *lo, double *hi) {
        double p = x / n, z2n = z * z / n, center, half;

        center = (p + z2n / 2) / (1 + z2n);
        half = z * sqrt(fmax(0, p * (1 - p)) / n + z2n / (4 * n)) / (1 + z2n);
        *lo = fmax(0, center - half);
        *hi = fmin(1, center + half);
}

static void wilson(double x, double n, double *lo, double *hi) {
        wilson_z(x, n, Z95, lo, hi);
}

/* The share 'changed' of 'n' sampled from N, with its 95% interval. */
static void share(double changed, double n, double N, double *p, double *lo, double *hi) {
        double fpc;

        *p = changed / n;
        wilson(changed, n, lo, hi);
        /* Sampling without replacement from a finite population narrows the
         * interval around p by sqrt((N - n) / (N - 1)); the whole population
         * leaves no uncertainty at all. */
        fpc = N > 1 ? sqrt((N - n) / (N - 1)) : 0;
        *lo = fmax(0, *p - fmax(0, *p - *lo) * fpc);
        *hi = *p + fmax(0, *hi - *p) * fpc;
        if (changed == 0)
                *lo = 0; /* not -1e-19 from rounding */
}

int estimate_activity(double changed, uint64_t sample, uint64_t population, double seconds, struct estimate *ret) {
        double n = (double) sample, N = (double) population, p, lo, hi, scale;

        if (sample == 0 || seconds <= 0 || changed < 0 || changed > n)
                return -EINVAL;
        if (N < n)
                N = n; /* the population grew past its last count: at least the sample */

        share(changed, n, N, &p, &lo, &hi);
        scale = N * 60.0 / seconds;
        *ret = (struct estimate) {
                .per_min = p * scale,
                .lo = lo * scale,
                .hi = hi * scale,
                .exact = sample >= population,
        };
        return 0;
}

/* ---- atime updates */

static double ticks(int64_t ns, int64_t tick) {
        return (double) llround((double) ns / (double) tick);
}

/* q of a reader at random from the likelihood, with its 95% bounds: the
 * share of whole ticks written, every look's span counted. With no
 * evidence at all, anything from never to every tick. */
static void rate_from_likelihood(const struct inode_rate *r, double *q, double *lo, double *hi) {
        double n = (double) r->seen + (double) r->empty;

        if (n <= 0) {
                *q = *lo = 0;
                *hi = 1;
        } else {
                *q = (double) r->seen / n;
                wilson(r->seen, n, lo, hi);
        }
}

/* q's first estimate and its 95% bounds: the likelihood's, or the share of
 * hits where that is larger (a reader in bursts). */
static void rate_bounds(const struct inode_rate *r, double *q, double *lo, double *hi) {
        rate_from_likelihood(r, q, lo, hi);
        if (r->hits >= MIN_HITS && r->looks > 0 && r->hits / r->looks > *q) {
                *q = r->hits / r->looks;
                wilson(r->hits, r->looks, lo, hi);
        }
}

/* Whether a1 is an update that happened after the look at m0: an atime set
 * back, or ahead of the clock, was set by someone (utimensat), not by a
 * read, and says nothing about the rate. */
static bool plausible_update(int64_t m0, int64_t a0, int64_t m1, int64_t a1, int64_t tick) {
        return a1 > a0 && a1 >= m0 - tick && a1 <= m1 + tick;
}

bool estimate_credit(const struct inode_rate *r, int64_t m0, int64_t a0, int64_t m1, int64_t a1, int64_t tick,
                     struct update_credit *c) {
        double unseen, q, lo, hi;

        if (a1 == a0)
                return false;
        c->seen += 1;
        if (!plausible_update(m0, a0, m1, a1, tick)) {
                c->n += 1;
                c->lo += 1;
                c->hi += 1;
                return true;
        }
        /* Ticks from the look at m0 up to the one before a1 may hold updates
         * the look at m1 cannot see; the tick of m0 cannot if a0 was written
         * in it already. */
        unseen = ticks(a1 - m0, tick) - (ticks(m0 - a0, tick) == 0 ? 1 : 0);
        unseen = fmax(0, unseen);
        rate_bounds(r, &q, &lo, &hi);
        c->unseen += unseen;
        c->n += 1 + q * unseen;
        c->lo += 1 + lo * unseen;
        c->hi += 1 + hi * unseen;
        c->var += unseen * q * (1 - q);
        return true;
}

static void learn_age(struct inode_rate *r, double age) {
        r->ages += 1;
        r->age_sum += (float) age;
        r->age_sq += (float) (age * age);
        for (unsigned i = AGE_BINS; i > 0 && age < (double) (1u << (i - 1)); i--)
                r->age_below[i - 1] += 1;
}

void estimate_learn(struct inode_rate *r, int64_t m0, int64_t a0, int64_t m1, int64_t a1, int64_t tick,
                    bool at_random) {
        double age = ticks(m1 - a1, tick);

        /* A look at a random time (the fine sweep's, jittered) is a draw of
         * the age at a random time. (A setter of atimes says nothing of
         * reads.) The histogram counts whole ticks from the update's tick
         * to the look's: 0 is the look's own tick, which is only partly
         * over. (The look's time is the coarse clock's, so this is the
         * rounded age where atimes have the clock's tick; where they have
         * whole seconds it is not.) A look at a set place on the clock
         * (the timed sweep's) finds a reader with a period that divides
         * the interval at the same age every time: its age and its hit are
         * not learnt, only the span before it. */
        if (at_random && a1 <= m1 && (a1 == a0 || plausible_update(m0, a0, m1, a1, tick)))
                learn_age(r, floor((double) (m1 - a1) / (double) tick));

        /* The tick of a look is only partly over: a reader that comes
         * later in it is not late. So the likelihood counts whole ticks
         * only, and a look that finds its own tick written (a hit) tells
         * nothing about the ticks before it; it counts as a hit. */
        if (at_random)
                r->looks += 1;
        /* A move found by a look at random (not the sweep's that woke the
         * inode): a file read once shows none after the one that woke it. */
        if (at_random && a1 != a0 && plausible_update(m0, a0, m1, a1, tick))
                r->moves += 1;
        if (a1 <= m1 && age == 0) {
                r->hits += at_random;
                return;
        }
        if (a1 == a0) {
                r->empty += (float) fmax(0, ticks(m1 - m0, tick) - 1);
                return;
        }
        if (!plausible_update(m0, a0, m1, a1, tick))
                return;
        r->seen += 1;
        r->empty += (float) fmax(0, age - 1);
}

void estimate_decay(struct inode_rate *r, double seconds) {
        float f = (float) exp(-fmax(0, seconds) / RATE_MEMORY_S);

        r->seen *= f;
        r->empty *= f;
        r->looks *= f;
        r->hits *= f;
        r->moves *= f;
        r->ages *= f;
        r->age_sum *= f;
        r->age_sq *= f;
        for (unsigned i = 0; i < AGE_BINS; i++)
                r->age_below[i] *= f;
}

#define MIN_AGE_LOOKS 10.0
#define MIN_AGE_TICKS 2 /* x at least: faster, the ticks' own limit rules */
#define FAST_MEAN_AGE 0.75 /* under it, a reader near every tick (below) */

/* q of a reader whose mean age is under 2 * MIN_AGE_TICKS ticks (an update
 * every 2 to 8 ticks): too fast for the windows below, whose second one
 * would reach past its gaps. An age of 1 whole tick is found with
 * probability q while the gaps are longer than a tick; an age of 0 (an
 * update earlier in the look's own tick) with q times the share of the
 * tick gone by, on average a half for reads that fall anywhere in a tick.
 * So the share of 1s plus twice the share of 0s, halved, is q: exact for
 * a regular reader, whose gaps leave the same share to every age below
 * them; a few percent low for a random one (a tick with no update before
 * the look is likelier after one; 0.90-0.95 in simulation); at most 1.5
 * times high for a reader whose reads come right at the start of a tick
 * (a tick-aligned timer). Under FAST_MEAN_AGE the reader comes near every
 * tick, where the shares of the likelihood and the hits measure it. */
static bool rate_from_first_ages(const struct inode_rate *r, double z, double *q, double *lo, double *hi) {
        double n = r->ages, k = 2 * r->age_below[0] + (r->age_below[1] - r->age_below[0]);

        if (r->age_sum / n < FAST_MEAN_AGE)
                return false;
        *q = fmin(1, k / n / 2);
        wilson_z(fmin(n, k / 2), n, z, lo, hi);
        return true;
}

/* With bounds at the confidence of z. */
static bool rate_from_ages(const struct inode_rate *r, double z, double *q, double *lo, double *hi) {
        double n = r->ages, w1, w2, g1, g2, k1, scale;
        unsigned i = 0;

        if (n < MIN_AGE_LOOKS)
                return false;
        /* x = 2^i: the largest power of two up to an eighth of the mean
         * age (short, so that a random reader's bend is small; the
         * extrapolation below makes up the rest), or MIN_AGE_TICKS if that
         * is at most half of it;
         * under MIN_AGE_TICKS the reader is near one update a tick, which
         * seen / (seen + empty) and the hits measure (ages say little
         * there: the tick of a look is only partly over). */
        while (i + 2 < AGE_BINS && (double) (1u << (i + 1)) <= fmax(r->age_sum / n / 8, MIN_AGE_TICKS) &&
               (double) (1u << (i + 1)) <= r->age_sum / n / 2)
                i++;
        if ((1u << i) < MIN_AGE_TICKS)
                return rate_from_first_ages(r, z, q, lo, hi);
        /* Ages 1 to x - 1 and 1 to 2x - 1: whole ticks only, as the tick of
         * the look is partly over. Their share per tick is q while the
         * window is short beside the gaps and falls as it nears them: the
         * line through the two, taken to a window of 0, makes up most of
         * that, while it stays straight. */
        k1 = r->age_below[i] - r->age_below[0];
        w1 = (double) (1u << i) - 1;
        w2 = (double) (2u << i) - 1;
        g1 = k1 / n / w1;
        g2 = (r->age_below[i + 1] - r->age_below[0]) / n / w2;
        /* Always taken to 0, the line through x and 2x: a regular reader's
         * ages spread evenly (no bend: g2 as large as g1, give or take the
         * noise, either way), a random reader's bend. Taken only where it
         * fell, the noise of the regular reader's counts would lift it. */
        *q = g1;
        if (g2 * w2 < 0.9)
                *q = fmax(0, (w2 * g1 - w1 * g2) / (w2 - w1));
        *q = fmin(*q, 1);
        wilson_z(fmax(0, k1), n, z, lo, hi);
        /* The bounds of the first window's share, moved as the point was
         * (outwards only: a point the noise took to 0 keeps its upper
         * bound). */
        scale = g1 > 0 ? *q / g1 : 1;
        *lo = fmin(1, *lo / w1 * fmin(scale, 1));
        *hi = fmin(1, *hi / w1 * fmax(scale, 1));
        return true;
}

/* The ages' second moment over the square of their mean tells the reader's
 * kind: ages spread evenly over the gaps (a regular reader: 4/3), or
 * exponentially (at random: 2), or longer still (in bursts: more). A
 * reader of gaps with a squared coefficient of variation c2 (the gamma
 * family: 0 regular, 1 random) leaves a mean age of (1 + c2) / (2 q) and
 * a ratio of 4 (1 + 2 c2) / (3 (1 + c2)). */
#define REGULAR_AGES 1.6 /* under it: c2 under 1/4 */
#define RANDOM_AGES 2.4  /* under it: c2 under 2 */
/* Updates seen (decayed) before the ages' kind is believed: a file read
 * once and then looked at for a while leaves ages spread evenly from 0 to
 * the time since, as a regular reader of that period would; it has made
 * one update, not one a period. */
#define MIN_MOMENT_UPDATES 3.0

/* q of a regular reader from its mean age: every look's age counts, where
 * the windows of rate_from_ages() count only the few that fall in
 * them (a reader every 100 ms, looked at every second: a minute of looks
 * puts 2 or 3 ages in its first window, and q from them is off by 60% or
 * more; from the mean, 10%). Whole-tick ages (the look's tick and the
 * update's counted whole) keep the mean of the true ages and add 1/6 of a
 * tick squared to the second moment. */
static bool rate_from_moments(const struct inode_rate *r, double *q, double *ratio) {
        double n = r->ages, m1, m2;

        if (n < MIN_AGE_LOOKS || r->seen < MIN_MOMENT_UPDATES)
                return false;
        m1 = r->age_sum / n;
        m2 = r->age_sq / n - 1.0 / 6;
        if (m1 < 0.5 || m2 <= 0)
                return false;
        *ratio = m2 / (m1 * m1);
        *q = fmin(1, (1 + fmax(0, (3 * *ratio - 4) / (8 - 3 * *ratio))) / (2 * m1));
        return true;
}

/* A reader near every tick (a mean age under FAST_MEAN_AGE: its ages too
 * close to 0 for any window), settled on the likelihood of the whole
 * interval's looks, not only of those before each span. Each look's credit
 * takes q as it stands then, and a fast reader's first looks find their
 * own tick written, which says nothing of the ticks before: until one
 * finds an older atime (or five have found their own), q stands at 0, and
 * a file that turned hot lost its first seconds (a sixth of its first 30 s
 * interval, half of its first 10 s one). Not the hits' share, as with
 * every settled likelihood (settled_rate()): a look the scheduler runs
 * right after the reader finds its tick written far more often than one
 * at a random time, and the larger of two noisy shares is high (1.06-1.09
 * of the truth in simulation, where the likelihood alone gives 1.02-1.07:
 * test-estimate); but where every look found its own tick written, that
 * share is all there is. */
static bool rate_of_fast_reader(const struct inode_rate *r, double *q, double *lo, double *hi) {
        if (r->ages <= 0 || r->age_sum / r->ages >= FAST_MEAN_AGE)
                return false;
        if (r->seen + r->empty > 0) {
                rate_from_likelihood(r, q, lo, hi);
                return true;
        }
        if (r->hits < MIN_HITS || r->looks <= 0)
                return false;
        /* Every look found its own tick written. */
        *q = r->hits / r->looks;
        wilson(r->hits, r->looks, lo, hi);
        return true;
}

enum rate_kind {
        RATE_WINDOWS,    /* the windows' q, for any reader */
        RATE_MEAN_AGE,   /* a regular reader's, from the mean age */
        RATE_LIKELIHOOD, /* a reader at random's, over the spans no look saw */
        RATE_FAST,       /* a reader near every tick: the likelihood too */
};

/* Moves found by looks at random (decayed) before the windows' q is
 * believed: a rate needs an update repeated, and seen as it came. A file
 * read once (a tree walk, grep, a backup) is found moved by the sweep that
 * wakes it and kept in the fine sweep for the two intervals after, where
 * its ages spread evenly from 0 to the time since the read, as a regular
 * reader's of that period would: the windows, which hold the first looks
 * after the read, put q at an update every few seconds, and every such
 * interval was credited q times its ticks for reads that never came (issue
 * 35: 1.2-1.6 updates per file read once). Its looks find no move; a file
 * read without pause is found moved by nearly every look, from its first.
 * 1.5: a second move within about 40 s of the first (the first decays to
 * 0.5 by then), so a file read once while already in the fine sweep (the
 * walk's hot stratum, or woken a little before) is refused too. A reader
 * slower than that leaves no update unseen in the fine sweep's second-long
 * spans anyway: its changes seen stand. Moves, not the updates seen: the
 * sweep's change that woke the inode is one of those, and a look that
 * finds its own tick written is not. */
#define MIN_REPEAT_MOVES 1.5

/* q as estimate_settle() takes it, with the windows' 95% bounds; false
 * without enough ages, or (for the windows) without an update repeated. */
static bool settled_rate(const struct inode_rate *r, double *q, double *lo, double *hi, enum rate_kind *kind) {
        double qm, ratio;

        *kind = RATE_WINDOWS;
        if (!rate_from_ages(r, Z95, q, lo, hi)) {
                *kind = RATE_FAST;
                return rate_of_fast_reader(r, q, lo, hi);
        }
        if (r->moves < MIN_REPEAT_MOVES)
                return false;
        /* The windows' q holds for any reader but rests on few ages. Where
         * the ages say what kind of reader it is, a q that uses them all is
         * taken instead, held within the windows' bounds. A regular
         * reader's comes from the mean age (bursts lift the ratio, so a
         * regular reader is hard to mistake). A reader at random's is the
         * likelihood's, over each look's span (one update per change seen,
         * q per tick no look could see): where the windows' 95% bounds
         * hold it; where only the 99.9% bounds do, q is the nearer 95%
         * bound (the windows stray one time in twenty, and their own q is
         * then the worst of the three); where even those do not, the
         * windows' q stands: a reader in bursts too short for the looks
         * leaves ages that look random at their scale, its likelihood
         * counts about one update a burst, and its ages near 0 are too
         * many for that. */
        if (rate_from_moments(r, &qm, &ratio) && ratio < RANDOM_AGES) {
                if (ratio >= REGULAR_AGES) {
                        double ql, llo, lhi, qw, wlo, whi;

                        /* Not rate_bounds()'s hits: a look that the
                         * scheduler runs right after a reader finds its
                         * own tick written far more often than a look at
                         * a random time would. */
                        rate_from_likelihood(r, &ql, &llo, &lhi);
                        if (ql >= *lo && ql <= *hi) {
                                *q = ql;
                                *lo = llo;
                                *hi = lhi;
                                *kind = RATE_LIKELIHOOD;
                        } else if (rate_from_ages(r, Z999, &qw, &wlo, &whi) && ql >= wlo && ql <= whi)
                                *q = fmin(fmax(ql, *lo), *hi);
                } else {
                        *q = fmin(fmax(qm, *lo), *hi);
                        *kind = RATE_MEAN_AGE;
                }
        }
        return true;
}

bool estimate_rate(const struct inode_rate *r, double *q) {
        double lo, hi;
        enum rate_kind kind;

        return settled_rate(r, q, &lo, &hi, &kind);
}

void estimate_settle(const struct inode_rate *r, double looks, double ticks, struct update_credit *c) {
        double q, lo, hi;
        enum rate_kind kind;

        /* Only for an inode looked at through the interval (the fine
         * sweep's): elsewhere the ages are too few. Five looks at least for
         * the windows' q; two for the mean age's, which rests on the ages
         * of the last minute, not on this interval's (a fine sweep that a
         * busy host runs every few seconds, not every second, leaves a
         * regular reader credited by the likelihood, twice its updates),
         * and for a fast reader's (its first looks credited nothing).
         * Not floored at the changes seen: q from a few ages is noisy, and
         * the larger of the two would lift every inode whose q came out low
         * while keeping every one that came out high. The floor is the
         * totals' (each seen change is an update, summed:
         * update_totals_add()). An interval in which its atime did not
         * move is credited too: q times the span is what the reader makes
         * on average, quiet intervals included. */
        if (looks < 2 || ticks <= 0 || !settled_rate(r, &q, &lo, &hi, &kind) ||
            (looks < 5 && kind != RATE_MEAN_AGE && kind != RATE_FAST))
                return;
        if (kind == RATE_LIKELIHOOD || kind == RATE_FAST) {
                c->n = c->seen + q * c->unseen;
                c->lo = c->seen + lo * c->unseen;
                c->hi = c->seen + hi * c->unseen;
                c->var = c->unseen * q * (1 - q);
                return;
        }
        c->n = q * ticks;
        c->lo = lo * ticks;
        c->hi = fmax(fmax(c->n, c->seen), fmin(c->hi > 0 ? c->hi : INFINITY, hi * ticks));
        c->var = 0;
}

double estimate_writebacks(double n, double seconds, double commit_s) {
        double commits, wb;

        if (n <= 0 || seconds <= 0)
                return 0;
        if (commit_s <= 0)
                return n;
        commits = seconds / commit_s;
        wb = commits * -expm1(-n / seconds * commit_s);
        return fmin(n, fmax(wb, fmin(n, 1)));
}

double estimate_per_min(double sum, uint64_t sample, uint64_t population, double seconds) {
        if (sample == 0 || seconds <= 0)
                return 0;
        return sum * (double) MAX(population, sample) / (double) sample * 60.0 / seconds;
}

void update_totals_add(struct update_totals *t, const struct update_credit *c, double share) {
        if ((c->n <= 0 && c->seen <= 0) || share <= 0)
                return;
        t->writebacks += c->writebacks * share;
        t->changed += share;
        t->seen += c->seen * share;
        t->n += c->n * share;
        t->lo += fmax(0, c->lo - Z95 * sqrt(c->var)) * share;
        t->hi += (c->hi + Z95 * sqrt(c->var)) * share;
        t->sq += c->n * c->n * share;
}

/* Student's t at 97.5% for df degrees of freedom (Cornish-Fisher, within a
 * few percent from df = 2; conservative enough at df = 1 for a bound that is
 * multiplied with another). */
static double t975(double df) {
        double z = Z95, z3 = z * z * z, z5 = z3 * z * z;

        if (df < 1)
                df = 1;
        return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

int estimate_updates(const struct update_totals *t, uint64_t sample, uint64_t population, double seconds,
                     struct estimate *ret) {
        double n = (double) sample, N = (double) population, rate, p, plo, phi, m, mlo, mhi, sum, sum_lo;

        if (sample == 0 || seconds <= 0 || t->changed < 0 || t->changed > n + 1e-9 || t->n < 0)
                return -EINVAL;
        if (N < n)
                N = n;
        rate = 60.0 / seconds;
        /* Every change seen is an update: the sums are at least their count. */
        sum = fmax(t->n, t->seen);
        sum_lo = fmax(t->lo, t->seen);
        *ret = (struct estimate) { .per_min = sum * N / n * rate, .exact = sample >= population };
        if (ret->exact) {
                /* Every inode looked at: only each credit's own uncertainty. */
                ret->lo = fmin(sum, sum_lo) * rate;
                ret->hi = fmax(sum, t->hi) * rate;
                return 0;
        }

        share(fmin(t->changed, n), n, N, &p, &plo, &phi);
        if (t->changed > 0) {
                double sd, se;

                m = sum / t->changed;
                sd = sqrt(fmax(0, t->sq / t->changed - m * m));
                se = t->changed > 1 ? t975(t->changed - 1) * sd / sqrt(t->changed) : 0;
                mlo = fmax(t->seen / t->changed, fmin(sum, sum_lo) / t->changed - se);
                mhi = fmax(sum, t->hi) / t->changed + se;
        } else
                mlo = mhi = 1;
        ret->lo = fmin(ret->per_min, N * plo * mlo * rate);
        ret->hi = fmax(ret->per_min, N * phi * mhi * rate);
        return 0;
}

void estimate_unseen(struct estimate *e, double seen, double unseen, double cap) {
        if (unseen <= 0)
                return;
        if (seen > 0)
                e->per_min *= (seen + unseen) / seen;
        e->hi = fmax(e->hi + unseen * cap, e->per_min);
        e->exact = false;
}

static void estimate_add(struct estimate *sum, const struct estimate *e) {
        sum->per_min += e->per_min;
        sum->lo += e->lo;
        sum->hi += e->hi;
        sum->exact = sum->exact && e->exact;
}

int estimate_strata(const struct strata_input *in, struct strata_estimate *ret) {
        double tick_s = in->tick_ns > 0 ? (double) in->tick_ns / 1e9 : 0.004;
        bool any = false;

        *ret = (struct strata_estimate) { .inodes = { .exact = true }, .updates = { .exact = true } };
        for (unsigned k = 0; k < ESTIMATE_STRATA; k++) {
                uint64_t n = in->sample[k], pop = MAX(in->population[k], n);
                double unseen = k == 0 ? in->unseen : 0, scale = unseen > 0 ? (pop + unseen) / (double) pop : 1;
                struct estimate e;

                if (n == 0)
                        continue;
                if (estimate_activity(fmin(in->changed[k], (double) n), n, pop, in->seconds, &e) < 0)
                        return -EINVAL;
                if (k == 0)
                        estimate_unseen(&e, (double) pop, unseen, 60.0 / in->seconds);
                estimate_add(&ret->inodes, &e);
                if (estimate_updates(&in->updates[k], n, pop, in->seconds, &e) < 0)
                        return -EINVAL;
                if (k == 0)
                        estimate_unseen(&e, (double) pop, unseen, 60.0 / tick_s);
                estimate_add(&ret->updates, &e);
                ret->writebacks_per_min += scale * estimate_per_min(in->updates[k].writebacks, n, pop, in->seconds);
                ret->sets_per_min += scale * estimate_per_min(in->sets[k], n, pop, in->seconds);
                any = true;
        }
        return any ? 0 : -EINVAL;
}
