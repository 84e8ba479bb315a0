/* verdict: what judging a change of policy costs per tick, for a change a
 * minute old and one a year old, side by side in one run (issue 43). The
 * tick pass and the request side judge each mount's last change twice a
 * tick; before, the scans ran from the change to now, past the rings'
 * reach, and 60 mounts whose change was a year old took the daemon from
 * 0.5% of a CPU to 23%.
 *
 *   verdict [MOUNTS=60] [TICKS=60]
 *
 * Builds MOUNTS histories at the default rings (1min:6h, 10min:7d, 1h:90d)
 * with a change a minute old, and MOUNTS with one a year old (their year
 * fed an hour at a time, the last week ten minutes, the last six hours a
 * minute at a time), then for TICKS ticks a minute apart adds a sample to
 * each and judges each twice (verdict_judge_kept(), as recommend.c and
 * methods.c do). Prints the CPU time of a tick's verdicts for each set.
 * Under callgrind, the instructions of judge_young() and judge_old()
 * (inclusive) are the same comparison without noise (verdict.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mounts.h"
#include "verdict.h"

static const int64_t T0 = 1800000000 - 1800000000 % 86400;

static uint64_t cpu_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static void add(MountHistory *h, int64_t t, AtimeMode atime, double per_min) {
        struct stats_sample x = {
                .t = t, .has_activity = true, .per_min = (float) per_min, .lo = (float) (per_min * 0.9),
                .hi = (float) (per_min * 1.1), .has_policy = true, .atime = (uint8_t) atime,
        };

        history_add(h, &x);
}

/* A history whose change from strictatime to noatime came at 'tc', fed up
 * to 'now': two days before it a minute at a time, then after it at the
 * step the finest ring that reaches so far back keeps. */
static MountHistory *history_changed_at(int64_t tc, int64_t now) {
        struct stats_ring_spec sp[STATS_MAX_RINGS];
        MountHistory *h = NULL;
        unsigned n;

        if (stats_parse_rings("1min:6h, 10min:7d, 1h:90d", sp, &n) < 0 || history_new("uuid=u target=/srv", sp, n, &h) < 0)
                abort();
        for (int64_t t = tc - 2 * 86400; t < tc; t += 60)
                add(h, t, ATIME_STRICT, 1000 + 500 * ((t / 3600) % 2));
        for (int64_t t = tc; t < now; t += now - t > 7 * 86400 ? 3600 : now - t > 6 * 3600 ? 600 : 60)
                add(h, t, ATIME_NOATIME, 0);
        h->change = (struct stats_change) { .t = tc, .last_old = tc - 60, .from = ATIME_STRICT, .to = ATIME_NOATIME };
        return h;
}

/* A tick's verdicts: each mount's judged twice. */
static void judge(MountHistory **h, int n, int64_t now, unsigned *measured) {
        for (int i = 0; i < n; i++) {
                struct verdict v;

                for (int k = 0; k < 2; k++)
                        if (verdict_judge_kept(h[i], now, 300, &v) >= 0 && v.state == VERDICT_MEASURED)
                                (*measured)++;
        }
}

/* Two functions of their own, for callgrind's inclusive counts (noipa:
 * not folded into one). */
__attribute__((noipa)) static void judge_young(MountHistory **h, int n, int64_t now, unsigned *measured) {
        judge(h, n, now, measured);
}
__attribute__((noipa)) static void judge_old(MountHistory **h, int n, int64_t now, unsigned *measured) {
        judge(h, n, now, measured);
}

int main(int argc, char *argv[]) {
        int mounts = argc > 1 ? atoi(argv[1]) : 60, ticks = argc > 2 ? atoi(argv[2]) : 60;
        int64_t now = T0 + 400 * 86400;
        MountHistory **young = calloc((size_t) mounts, sizeof *young), **old = calloc((size_t) mounts, sizeof *old);
        uint64_t young_ns = 0, old_ns = 0;
        unsigned young_measured = 0, old_measured = 0;

        if (!young || !old || mounts <= 0 || ticks <= 0)
                return 2;
        for (int i = 0; i < mounts; i++) {
                young[i] = history_changed_at(now - 60, now);
                old[i] = history_changed_at(now - 365 * 86400, now);
        }
        for (int k = 1; k <= ticks; k++) {
                uint64_t t0;

                for (int i = 0; i < mounts; i++) {
                        add(young[i], now + 60 * k, ATIME_NOATIME, 0);
                        add(old[i], now + 60 * k, ATIME_NOATIME, 0);
                }
                t0 = cpu_ns();
                judge_young(young, mounts, now + 60 * k, &young_measured);
                young_ns += cpu_ns() - t0;
                t0 = cpu_ns();
                judge_old(old, mounts, now + 60 * k, &old_measured);
                old_ns += cpu_ns() - t0;
        }
        printf("verdict: %d mounts, %d ticks a minute apart (a sample each), each mount judged twice a tick:\n",
               mounts, ticks);
        printf("  change a minute old (1 to %d min): %8.1f us of CPU per tick (%u verdicts measured)\n", ticks + 1,
               young_ns / 1e3 / ticks, young_measured);
        printf("  change a year old:                  %8.1f us of CPU per tick (%u verdicts measured)\n",
               old_ns / 1e3 / ticks, old_measured);
        for (int i = 0; i < mounts; i++) {
                history_free(young[i]);
                history_free(old[i]);
        }
        free(young);
        free(old);
        return 0;
}
