/* estimate.c: proportion estimate and interval (see estimate.h). */
#include "estimate.h"

#include <errno.h>
#include <math.h>

#define Z95 1.959963984540054

int estimate_activity(double changed, uint64_t sample, uint64_t population, double seconds, struct estimate *ret) {
        double n = (double) sample, N = (double) population, p, z2n, center, half, fpc, lo, hi, scale;

        if (sample == 0 || seconds <= 0 || changed < 0 || changed > n)
                return -EINVAL;
        if (N < n)
                N = n; /* the population grew past its last count: at least the sample */

        p = changed / n;
        z2n = Z95 * Z95 / n;
        center = (p + z2n / 2) / (1 + z2n);
        half = Z95 * sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n);
        lo = fmax(0, center - half);
        hi = fmin(1, center + half);

        /* Sampling without replacement from a finite population narrows the
         * interval around p by sqrt((N - n) / (N - 1)); the whole population
         * leaves no uncertainty at all. */
        fpc = N > 1 ? sqrt((N - n) / (N - 1)) : 0;
        lo = p - fmax(0, p - lo) * fpc;
        hi = p + fmax(0, hi - p) * fpc;
        if (changed == 0)
                lo = 0; /* not -1e-19 from rounding */

        scale = N * 60.0 / seconds;
        *ret = (struct estimate) {
                .per_min = p * scale,
                .lo = fmax(0, lo) * scale,
                .hi = hi * scale,
                .exact = sample >= population,
        };
        return 0;
}
