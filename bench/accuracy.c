/* accuracy: the sampler and the estimator against known workloads. On a
 * tree of NFILES files (created here, in directories of 200) at the mount
 * point DIR, samplers of every size K walk the tree; then, trial after
 * trial, a random fraction f of the files gets a new atime (utimensat: the
 * truth is exactly the number touched), every sampler sweeps, and the
 * estimate (estimate_activity over a 60 s interval, so per_min is the count)
 * is compared with the truth. Each sampler walks afresh, with a new seed,
 * every REWALK trials, so the trials average over reservoirs as well as
 * over touched sets. Prints, per (f, K): the mean and 90th percentile of the
 * relative error, the share of trials whose 95% interval holds the truth,
 * the mean relative half-width of the interval, and the CPU per sweep.
 *
 *   accuracy DIR [NFILES=20000] [TRIALS=400] [REWALK=20] [SEED=1] */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "estimate.h"
#include "sampler.h"

static const double fractions[] = { 0.001, 0.01, 0.05, 0.10, 0.25, 0.50 };
static const unsigned sizes[] = { 250, 500, 1000, 2000, 4000 };
#define NF (sizeof fractions / sizeof fractions[0])
#define NK (sizeof sizes / sizeof sizes[0])

static const atomic_bool no_cancel = false;

static uint64_t rng_state;
static uint64_t rnd(void) {
        /* splitmix64 */
        uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
}

static double cpu_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static int walk(Sampler **s, unsigned k, uint64_t seed, const struct sampler_place *pl) {
        int r;

        sampler_free(*s);
        *s = NULL;
        if (sampler_new(k, seed, s) < 0)
                return -ENOMEM;
        do {
                uint64_t budget = 1000000;

                r = sampler_walk_step(*s, pl, &budget, &no_cancel);
        } while (r == 0);
        return r == 1 ? 0 : r;
}

int main(int argc, char *argv[]) {
        const char *dir = argc > 1 ? argv[1] : NULL;
        int nfiles = argc > 2 ? atoi(argv[2]) : 20000, trials = argc > 3 ? atoi(argv[3]) : 400,
            rewalk = argc > 4 ? atoi(argv[4]) : 20;
        uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 1;
        char **paths, p[4096];
        int *idx;
        struct statx stx;
        struct sampler_place pl;
        Sampler *s[NK] = {};
        static double err[NF][NK][10000];
        static unsigned covered[NF][NK];
        static double halfw[NF][NK], sweep_ns[NK];
        static unsigned sweeps[NK];
        uint64_t population = 0;
        int64_t atime = 1700000000;
        uint64_t now = 1000000;

        if (!dir || nfiles < 1 || trials < 1 || trials > 10000 || rewalk < 1) {
                fprintf(stderr, "usage: accuracy DIR [NFILES] [TRIALS<=10000] [REWALK] [SEED]\n");
                return 2;
        }
        rng_state = seed;
        paths = calloc((size_t) nfiles, sizeof *paths);
        idx = calloc((size_t) nfiles, sizeof *idx);
        if (!paths || !idx)
                return 1;
        for (int i = 0; i < nfiles; i++) {
                int fd;

                if (i % 200 == 0) {
                        snprintf(p, sizeof p, "%s/d%d", dir, i / 200);
                        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
                                perror(p);
                                return 1;
                        }
                }
                snprintf(p, sizeof p, "%s/d%d/f%d", dir, i / 200, i % 200);
                fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, "x\n", 2) != 2) {
                        perror(p);
                        return 1;
                }
                close(fd);
                paths[i] = strdup(p);
                idx[i] = i;
        }
        if (statx(AT_FDCWD, dir, 0, STATX_MNT_ID, &stx) < 0) {
                perror(dir);
                return 1;
        }
        pl = (struct sampler_place) { .target = dir, .mount_id = (int) stx.stx_mnt_id, .fs_root = "/" };

        /* Each trial: touch a set, then one sweep per sampler compares with
         * the sweep before. Every fraction is tried in turn, so each (f, K)
         * gets the same number of trials. */
        for (int t = 0; t < trials; t++)
                for (size_t fi = 0; fi < NF; fi++) {
                        int m = (int) llround(fractions[fi] * nfiles);
                        struct timespec ts[2] = { { .tv_sec = ++atime }, { .tv_nsec = UTIME_OMIT } };

                        if (t % rewalk == 0 && fi == 0)
                                for (size_t ki = 0; ki < NK; ki++) {
                                        struct sweep_result res;
                                        SamplerView v;
                                        int r = walk(&s[ki], sizes[ki], seed * 1000003 + (uint64_t) t * 31 + ki + 1, &pl);

                                        if (r < 0 || sampler_sweep(s[ki], &pl, NULL, 0, now, 0, &no_cancel, &res) < 0) {
                                                fprintf(stderr, "accuracy: walk of %s failed: %s\n", dir, strerror(r < 0 ? -r : EIO));
                                                return 1;
                                        }
                                        sampler_view(s[ki], &v);
                                        population = v.current_population;
                                }
                        /* m distinct files, uniformly: a partial Fisher-Yates shuffle. */
                        for (int i = 0; i < m; i++) {
                                int j = i + (int) (rnd() % (uint64_t) (nfiles - i)), x = idx[i];

                                idx[i] = idx[j];
                                idx[j] = x;
                                if (utimensat(AT_FDCWD, paths[idx[i]], ts, 0) < 0) {
                                        perror(paths[idx[i]]);
                                        return 1;
                                }
                        }
                        now += 60 * 1000000ULL;
                        for (size_t ki = 0; ki < NK; ki++) {
                                struct sweep_result res;
                                struct estimate e;
                                double c0 = cpu_ns();

                                if (sampler_sweep(s[ki], &pl, NULL, 0, now, 0, &no_cancel, &res) < 0 || !res.valid ||
                                    estimate_activity((double) res.changed, res.sample, res.population, res.seconds, &e) < 0) {
                                        fprintf(stderr, "accuracy: sweep failed\n");
                                        return 1;
                                }
                                sweep_ns[ki] += cpu_ns() - c0;
                                sweeps[ki]++;
                                err[fi][ki][t] = fabs(e.per_min - m) / m;
                                /* An exact count comes back as changed / n * N: allow its rounding. */
                                covered[fi][ki] += e.lo - 1e-9 * m <= m && m <= e.hi + 1e-9 * m;
                                halfw[fi][ki] += (e.hi - e.lo) / 2 / m;
                        }
                }

        printf("%d files + %llu directories (population %llu), %d trials per cell, a new reservoir every %d trials\n\n",
               nfiles, (unsigned long long) (population - (uint64_t) nfiles), (unsigned long long) population, trials,
               rewalk);
        printf("%-8s %7s %5s %9s %9s %9s %9s\n", "fraction", "touched", "K", "mean err", "p90 err", "coverage",
               "ci95 +/-");
        for (size_t fi = 0; fi < NF; fi++)
                for (size_t ki = 0; ki < NK; ki++) {
                        double sum = 0;

                        for (int t = 0; t < trials; t++)
                                sum += err[fi][ki][t];
                        qsort(err[fi][ki], (size_t) trials, sizeof(double), cmp_double);
                        printf("%-8s %7lld %5u %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n",
                               ki == 0 ? (snprintf(p, sizeof p, "%g%%", fractions[fi] * 100), p) : "",
                               llround(fractions[fi] * nfiles), sizes[ki], 100 * sum / trials,
                               100 * err[fi][ki][(int) ceil(0.9 * trials) - 1], 100.0 * covered[fi][ki] / trials,
                               100 * halfw[fi][ki] / trials);
                }
        printf("\nCPU per sweep (statx of the sample, warm cache):");
        for (size_t ki = 0; ki < NK; ki++)
                printf("  K=%u %.2f ms", sizes[ki], sweep_ns[ki] / sweeps[ki] / 1e6);
        printf("\n");
        for (size_t ki = 0; ki < NK; ki++)
                sampler_free(s[ki]);
        for (int i = 0; i < nfiles; i++)
                free(paths[i]);
        free(paths);
        free(idx);
        return 0;
}
