/* store-load: how long atimed takes to load its history. Builds the history
 * of N mounts over 90 days at the default rings (1min:6h, 10min:7d, 1h:90d),
 * every point filled, writes the snapshot, then loads it R times.
 *
 *   store-load DIR [MOUNTS=100] [ROUNDS=10] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "store.h"

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

int main(int argc, char *argv[]) {
        struct stats_ring_spec sp[STATS_MAX_RINGS];
        unsigned nsp;
        int mounts = argc > 2 ? atoi(argv[2]) : 100, rounds = argc > 3 ? atoi(argv[3]) : 10;
        int64_t now = 1800000000;
        Store *s = NULL;
        char path[4096];
        struct stat st;
        double best = 1e9, total = 0;

        if (argc < 2)
                return 2;
        stats_parse_rings("1min:6h, 10min:7d, 1h:90d", sp, &nsp);
        store_new(argv[1], sp, nsp, 0, &s);
        /* Hourly samples fill the 1 h ring; the last week at 10 min and the
         * last 6 h at 1 min fill the finer ones. */
        for (int m = 0; m < mounts; m++) {
                char key[128];

                snprintf(key, sizeof key, "uuid=%08x-0000-0000-0000-000000000000 target=/srv/m%d", m, m);
                for (int64_t t = now - 90LL * 86400; t < now; t += t < now - 7 * 86400 ? 3600 : t < now - 6 * 3600 ? 600 : 60) {
                        struct stats_sample x = { .t = t, .has_activity = true, .per_min = (float) (t % 977),
                                                  .has_device = true, .write_iops = 3, .has_policy = true };
                        store_add(s, key, &x);
                }
        }
        if (store_flush(s, now, true) < 0) {
                fprintf(stderr, "store-load: cannot write to %s\n", argv[1]);
                return 1;
        }
        snprintf(path, sizeof path, "%s/%s", argv[1], STORE_FILE);
        stat(path, &st);
        store_free(s);

        for (int r = 0; r < rounds; r++) {
                struct store_load_report rep;
                double t0 = now_ms(), ms;

                store_new(argv[1], sp, nsp, 0, &s);
                store_load(s, now, &rep);
                ms = now_ms() - t0;
                if (rep.mounts != (size_t) mounts) {
                        fprintf(stderr, "store-load: loaded %zu of %d mounts\n", rep.mounts, mounts);
                        return 1;
                }
                store_load_report_done(&rep);
                store_free(s);
                best = ms < best ? ms : best;
                total += ms;
        }
        printf("load of %d mounts x 90 days (%lld bytes): best %.1f ms, mean %.1f ms over %d rounds\n", mounts,
               (long long) st.st_size, best, total / rounds, rounds);
        return 0;
}
