/* test-stats: ring arithmetic: wrap-around, gaps, the clock going back,
 * coarse rings equal to the sample-weighted mean of fine ones (no drift),
 * policy changes within a bucket, choosing a ring. */
#include <math.h>

#include "../tap.h"
#include "mounts.h"
#include "stats.h"

static struct stats_sample sample(int64_t t, float per_min) {
        return (struct stats_sample) {
                .t = t, .has_activity = true, .per_min = per_min, .lo = per_min * 0.9f, .hi = per_min * 1.1f,
                .has_device = true, .write_iops = per_min / 10, .write_kib = per_min / 5,
                .has_policy = true, .atime = ATIME_STRICT, .flags = STATS_PROBED | STATS_PROBE_VERIFIED,
                .probe = ATIME_STRICT,
        };
}

static void test_parse(void) {
        struct stats_ring_spec sp[STATS_MAX_RINGS];
        unsigned n = 0;

        ok(stats_parse_rings("1min:6h, 10min:7d, 1h:90d", sp, &n) == 0 && n == 3 && sp[0].resolution == 60 &&
                   sp[0].capacity == 360 && sp[1].capacity == 1008 && sp[2].resolution == 3600 && sp[2].capacity == 2160,
           "the default rings");
        ok(stats_parse_rings("1s : 5min,10s:1h", sp, &n) == 0 && n == 2 && sp[0].capacity == 300, "spaces around ':'");
        is_int(stats_parse_rings("10min:7d, 1min:6h", sp, &n), -EINVAL, "finer first");
        is_int(stats_parse_rings("1min:6h, 90s:1d", sp, &n), -EINVAL, "each a multiple of the finer one");
        is_int(stats_parse_rings("1min", sp, &n), -EINVAL, "resolution without retention");
        is_int(stats_parse_rings("1min:30s", sp, &n), -EINVAL, "retention shorter than the resolution");
        is_int(stats_parse_rings("500ms:1h", sp, &n), -EINVAL, "whole seconds only");
        is_int(stats_parse_rings("1s:1h,2s:1h,4s:1h,8s:1h,16s:1h", sp, &n), -EINVAL, "at most 4 rings");
        is_int(stats_parse_rings("1s:30d", sp, &n), -ERANGE, "at most a million points a ring");
}

int main(void) {
        struct stats_ring_spec sp[STATS_MAX_RINGS];
        unsigned n;
        MountHistory *h = NULL;
        int64_t t0 = 1800000000 - 1800000000 % 3600; /* an hour boundary */
        const struct stats_point *p;
        uint32_t seed = 12345;

        test_parse();
        stats_parse_rings("1min:6h, 10min:7d, 1h:90d", sp, &n);
        ok(history_new("uuid=x target=/srv", sp, n, &h) == 0, "a history");

        /* Ten hours of one sample a minute, in the middle of each minute. */
        for (int i = 0; i < 600; i++) {
                seed = seed * 1103515245 + 12345;
                struct stats_sample s = sample(t0 + i * 60 + 30, (float) (seed % 1000));
                history_add(h, &s);
        }
        is_int(h->rings[0].count, 360, "the 1 min ring wrapped: 6 h of points");
        is_int(history_oldest(h, 0), t0 + 240 * 60, "its oldest point is 6 h before the newest");
        is_int(h->rings[1].count, 60, "sixty 10 min points");
        is_int(h->rings[2].count, 10, "ten 1 h points");
        ok((p = history_point(h, 1, t0 + 300 * 60)) && p->n == 10 && p->n_act == 10, "a 10 min point holds 10 samples");

        /* No drift: each coarse point is the sample-weighted mean of the fine
         * points it covers (those still held). */
        {
                double worst = 0;

                for (int64_t b = t0 + 240 * 60; b < t0 + 600 * 60; b += 600) {
                        const struct stats_point *c = history_point(h, 1, b);
                        double sum = 0, iops = 0;
                        unsigned cnt = 0;

                        for (int64_t f = b; f < b + 600; f += 60) {
                                const struct stats_point *q = history_point(h, 0, f);
                                sum += q->per_min * q->n_act;
                                iops += q->write_iops * q->n_dev;
                                cnt += q->n_act;
                        }
                        worst = fmax(worst, fabs(sum / cnt - c->per_min) / fmax(1, c->per_min));
                        worst = fmax(worst, fabs(iops / cnt - c->write_iops) / fmax(1, c->write_iops));
                }
                ok(worst < 1e-5, "10 min points are the mean of their 1 min points (worst relative error %.2g)", worst);
        }
        {
                const struct stats_point *c = history_point(h, 2, t0 + 5 * 3600);
                double sum = 0;

                for (int64_t b = t0 + 5 * 3600; b < t0 + 6 * 3600; b += 600)
                        sum += history_point(h, 1, b)->per_min;
                ok(fabs(sum / 6 - c->per_min) / c->per_min < 1e-5, "1 h points are the mean of their 10 min points");
        }

        /* A 5 min outage: gaps, not zeros. */
        {
                int64_t last = t0 + 599 * 60 + 30;
                struct stats_sample s = sample(last + 6 * 60, 100);
                int gaps = 0;

                history_add(h, &s);
                for (int i = 1; i <= 5; i++) {
                        p = history_point(h, 0, t0 + (600 + i - 1) * 60);
                        gaps += p && p->n == 0 && p->n_act == 0;
                }
                is_int(gaps, 5, "five missing minutes are five gaps");
                ok((p = history_point(h, 1, t0 + 600 * 60)) && p->n == 1, "the 10 min point covering them has 1 sample");
        }

        /* The clock going back: older samples are refused. */
        {
                struct stats_sample s = sample(t0, 5);
                is_int(history_add(h, &s), 0, "a sample older than the newest bucket is dropped");
        }

        /* Policy changes within a bucket are marked, and the last one kept. */
        {
                int64_t b = t0 + 700 * 60;
                struct stats_sample a = sample(b + 1, 10), c = sample(b + 20, 10);

                c.atime = ATIME_NOATIME;
                c.probe = ATIME_NOATIME;
                history_add(h, &a);
                history_add(h, &c);
                p = history_point(h, 0, b);
                ok(p && p->atime == ATIME_NOATIME && (p->flags & STATS_POLICY_CHANGED), "a policy change is marked");
        }

        /* A jump past a ring's whole reach restarts it. */
        {
                struct stats_sample s = sample(t0 + 200LL * 86400, 1);
                history_add(h, &s);
                ok(h->rings[0].count == 1 && h->rings[2].count == 1, "a jump beyond the ring's reach restarts it");
        }

        /* Choosing the ring for a period. */
        {
                int64_t now = t0 + 200LL * 86400;

                is_int(history_pick_ring(h, now - 3600), 0, "the last hour: 1 min points");
                is_int(history_pick_ring(h, now - 2 * 86400), 1, "two days: 10 min points");
                is_int(history_pick_ring(h, now - 30 * 86400), 2, "a month: 1 h points");
                is_int(history_pick_ring(h, now - 365 * 86400), 2, "a year: the coarsest there is");
        }

        /* Saving and restoring a ring. */
        {
                MountHistory *g = NULL;
                struct stats_point buf[400];
                uint32_t cnt;

                history_free(h);
                history_new("k", sp, n, &h);
                for (int i = 0; i < 400; i++) {
                        struct stats_sample s = sample(t0 + i * 60, (float) i);
                        history_add(h, &s);
                }
                cnt = history_ring_points(h, 0, buf);
                history_new("k", sp, n, &g);
                ok(cnt == 360 && history_set_ring(g, 0, h->rings[0].head_t, buf, cnt) == 0 &&
                           history_point(g, 0, t0 + 399 * 60)->per_min == 399 &&
                           history_point(g, 0, t0 + 40 * 60)->per_min == 40 && !history_point(g, 0, t0 + 39 * 60),
                   "a ring restored from its points is the same ring");
                {
                        struct stats_sample s = sample(t0 + 400 * 60, 400);
                        history_add(g, &s);
                        ok(history_point(g, 0, t0 + 400 * 60) && history_oldest(g, 0) == t0 + 41 * 60,
                           "and keeps wrapping after");
                }
                history_free(g);
        }
        history_free(h);
        return tap_done();
}
