/* test-estimate: the estimator on plain numbers, and the coverage of its
 * 95% interval checked by simulation (sampling without replacement). */
#include <math.h>

#include "../tap.h"
#include "estimate.h"
#include "probe.h"

static uint64_t rng = 0x1234567887654321ULL;

static uint64_t next(void) {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 0x2545F4914F6CDD1DULL;
}

/* Draws a sample of n from N items of which M are "changed": the number of
 * changed ones in the sample (a hypergeometric draw). */
static uint64_t draw(uint64_t N, uint64_t M, uint64_t n) {
        uint64_t c = 0;

        for (uint64_t i = 0; i < n; i++) {
                if (next() % (N - i) < M - c)
                        c++;
        }
        return c;
}

static void coverage(uint64_t N, uint64_t M, uint64_t n) {
        unsigned inside = 0, runs = 2000;
        double truth = (double) M; /* per minute, with a 60 s interval */

        for (unsigned r = 0; r < runs; r++) {
                struct estimate e;

                estimate_activity((double) draw(N, M, n), n, N, 60, &e);
                inside += e.lo <= truth && truth <= e.hi;
        }
        ok(inside >= runs * 93 / 100, "coverage N=%llu M=%llu n=%llu: %.1f%% of intervals hold the truth",
           (unsigned long long) N, (unsigned long long) M, (unsigned long long) n, 100.0 * inside / runs);
}

int main(void) {
        struct estimate e;
        AtimeMode m;

        ok(estimate_activity(100, 1000, 20000, 60, &e) == 0 && fabs(e.per_min - 2000) < 1e-9,
           "10%% of 20000 in a minute: 2000/min");
        ok(e.lo < 2000 && e.hi > 2000 && !e.exact, "the interval holds the estimate");
        ok(estimate_activity(100, 1000, 20000, 30, &e) == 0 && fabs(e.per_min - 4000) < 1e-9, "per minute, not per interval");
        ok(estimate_activity(0, 1000, 20000, 60, &e) == 0 && e.per_min == 0 && e.lo == 0 && e.hi > 0,
           "nothing seen: 0, but not certainly 0");
        ok(estimate_activity(10, 43, 43, 60, &e) == 0 && e.exact && e.lo == e.per_min && e.hi == e.per_min &&
                   fabs(e.per_min - 10) < 1e-9,
           "the whole population: exact");
        ok(estimate_activity(1000, 1000, 20000, 60, &e) == 0 && fabs(e.per_min - 20000) < 1e-9 && e.hi <= 20000 + 1e-9,
           "everything changed: never above the population");
        ok(estimate_activity(2.5, 1000, 20000, 60, &e) == 0 && fabs(e.per_min - 50) < 1e-9, "fractional (shared) counts");
        is_int(estimate_activity(1, 0, 100, 60, &e), -EINVAL, "no sample");
        is_int(estimate_activity(1, 10, 100, 0, &e), -EINVAL, "no time");
        is_int(estimate_activity(11, 10, 100, 60, &e), -EINVAL, "more changed than sampled");
        ok(estimate_activity(5, 10, 4, 60, &e) == 0 && e.exact, "a population that shrank below the sample");

        coverage(20000, 2000, 1000);
        coverage(20000, 200, 1000);
        coverage(1000000, 5000, 1000);
        coverage(5000, 2500, 250);
        coverage(20000, 20, 4000);

        ok(probe_classify(true, true, &m) && m == ATIME_STRICT, "probe: both moved is strictatime");
        ok(probe_classify(true, false, &m) && m == ATIME_RELATIME, "probe: only the old one moved is relatime");
        ok(probe_classify(false, false, &m) && m == ATIME_NOATIME, "probe: none moved is noatime");
        ok(!probe_classify(false, true, &m), "probe: only the fresh one moved is inconsistent");
        return tap_done();
}
