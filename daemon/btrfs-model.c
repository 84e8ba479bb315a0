/* btrfs-model.c: the bytes an inode un-shares, learnt robustly from
 * measured runs, and inodes priced at it (see btrfs-model.h). */
#include "btrfs-model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

#define Z95 1.959963984540054

bool btrfs_model_ready(const BtrfsModel *m) {
        return m->intervals > 0 && m->inodes > 0 && m->hits >= 1 && m->bytes >= 0 && isfinite(m->bytes) &&
               isfinite(m->inodes);
}

double btrfs_model_value(const BtrfsModel *m) {
        return btrfs_model_ready(m) ? m->bytes / m->inodes : 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* The window sorted into 'v' (n values). */
static unsigned window_sorted(const BtrfsModel *m, double v[BTRFS_MODEL_WINDOW]) {
        memcpy(v, m->recent, m->n_recent * sizeof *v);
        qsort(v, m->n_recent, sizeof *v, cmp_double);
        return m->n_recent;
}

/* The window's median; of an even count's two middle values, the one
 * nearer 'prev' (by ratio): a single run unlike the rest is never it. */
static double window_median(const BtrfsModel *m, double prev) {
        double v[BTRFS_MODEL_WINDOW], a, b;
        unsigned n = window_sorted(m, v);

        if (n % 2)
                return v[n / 2];
        a = v[n / 2 - 1];
        b = v[n / 2];
        if (!(prev > 0) || !(a > 0))
                return a;
        return fabs(log(a / prev)) <= fabs(log(b / prev)) ? a : b;
}

void btrfs_model_learn(BtrfsModel *m, double bytes, double inodes, double hits, double ceiling, double prior) {
        double r, prev, med, v;

        if (!(bytes >= 0) || !(inodes > 0) || !(hits >= 1) || !isfinite(bytes) || !isfinite(inodes) || !isfinite(hits))
                return;
        r = bytes / inodes;
        if (ceiling > 0)
                r = fmin(r, ceiling);
        if (m->n_recent == BTRFS_MODEL_WINDOW) {
                memmove(m->recent, m->recent + 1, (BTRFS_MODEL_WINDOW - 1) * sizeof *m->recent);
                m->n_recent--;
        }
        m->recent[m->n_recent++] = r;
        prev = btrfs_model_ready(m) ? btrfs_model_value(m) : prior > 0 ? prior : r;
        med = window_median(m, prev);
        /* A step at most: one run can move it by that factor, no more. */
        v = prev > 0 ? CLAMP(med, prev / BTRFS_MODEL_STEP, prev * BTRFS_MODEL_STEP) : med;
        m->inodes += inodes;
        m->hits += hits;
        m->intervals++;
        m->bytes = v * m->inodes;
}

/* The model's relative error beyond the counts': how far its runs lie
 * apart (their quartiles, once there are four), and how far the step
 * bound keeps the value from their median. */
static double model_spread(const BtrfsModel *m) {
        double v[BTRFS_MODEL_WINDOW], value = btrfs_model_value(m), spread = 0;
        unsigned n = window_sorted(m, v);

        if (!(value > 0) || n == 0)
                return 0;
        if (n >= 4)
                spread = (v[(3 * n) / 4] - v[n / 4]) / (2 * value);
        return spread + fabs(window_median(m, value) - value) / value;
}

void btrfs_model_price(const BtrfsModel *m, double inodes, double hits, double *ret, double *ret_lo,
                       double *ret_hi) {
        double rel_m, rel_s, spread, rel;

        *ret = *ret_lo = *ret_hi = 0;
        if (!btrfs_model_ready(m) || !(inodes > 0))
                return;
        /* Both counts rest on sampled inodes: a Poisson count's relative
         * error, the model's and the figure's, added as variances, with
         * the runs' own spread. */
        rel_m = 1 / sqrt(m->hits);
        rel_s = hits > 0 ? 1 / sqrt(hits) : 1;
        spread = model_spread(m);
        *ret = inodes * btrfs_model_value(m);
        rel = Z95 * sqrt(rel_m * rel_m + rel_s * rel_s) + spread;
        *ret_lo = *ret * fmax(0, 1 - rel);
        *ret_hi = *ret * (1 + rel);
}

void btrfs_model_price_prior(const struct btrfs_prior *p, double inodes, double dirs, double hits, double *ret,
                             double *ret_lo, double *ret_hi) {
        double rel, d;

        *ret = *ret_lo = *ret_hi = 0;
        if (!(p->file > 0) || !(inodes > 0))
                return;
        /* The sample's Poisson error, then the table's spread. */
        rel = Z95 * (hits > 0 ? 1 / sqrt(hits) : 1);
        d = dirs > 0 ? fmin(dirs, inodes) : 0;
        *ret = (inodes - d) * p->file + d * (p->dir > 0 ? p->dir : p->file);
        *ret_lo = *ret * fmax(0, 1 - rel) / BTRFS_PRIOR_SPREAD;
        *ret_hi = *ret * (1 + rel) * BTRFS_PRIOR_SPREAD;
}

bool btrfs_model_range(double prior, uint32_t nodesize, double *ret_lo, double *ret_hi) {
        /* A leaf holds a number of inodes in proportion to its size, and
         * is copied whole: the bytes an inode scale with it. */
        double scale = nodesize > 0 ? nodesize / BTRFS_PRIOR_NODESIZE : 1;

        if (!(prior > 0) || !isfinite(prior))
                return false;
        *ret_lo = prior * scale / BTRFS_PRIOR_SPREAD;
        *ret_hi = prior * scale * BTRFS_PRIOR_SPREAD;
        return true;
}

/* A full window whose runs agree with each other. */
static bool window_agrees(const BtrfsModel *m) {
        double v[BTRFS_MODEL_WINDOW];
        unsigned n = window_sorted(m, v);

        return n == BTRFS_MODEL_WINDOW && v[0] > 0 && v[n - 1] <= v[0] * BTRFS_MODEL_AGREE;
}

bool btrfs_model_keepable(const BtrfsModel *m, double prior, uint32_t nodesize, const char **ret_why) {
        double lo, hi, v = btrfs_model_value(m);
        const char *why = NULL;
        bool keep;

        if (!btrfs_model_ready(m)) {
                why = "nothing learnt";
                keep = false;
        } else if (!btrfs_model_range(prior, nodesize, &lo, &hi) || (v >= lo && v <= hi))
                keep = true;
        else if (window_agrees(m)) {
                why = "beyond the cost table's range, but the last measured runs all agree on it";
                keep = true;
        } else {
                why = "beyond the cost table's range, and the measured runs do not agree on it yet";
                keep = false;
        }
        if (ret_why)
                *ret_why = why;
        return keep;
}

bool btrfs_model_seedable(const BtrfsModel *saved, double prior, uint32_t nodesize, const char **ret_why) {
        double lo, hi, v = btrfs_model_value(saved);

        if (!btrfs_model_ready(saved) || !isfinite(saved->hits)) {
                *ret_why = "not a model";
                return false;
        }
        if (!saved->agreed && btrfs_model_range(prior, nodesize, &lo, &hi) && (v < lo || v > hi)) {
                *ret_why = "beyond the cost table's range (saved before atimed bounded it)";
                return false;
        }
        *ret_why = NULL;
        return true;
}
