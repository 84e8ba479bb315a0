/* test-sampler: the walk and the sweep on a real directory tree: the
 * reservoir, the population, exact counts of moved atimes, attribution to
 * writers, and that walking never changes a directory's atime even where a
 * plain readdir would (old atimes on a relatime or strictatime mount). */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "sampler-internal.h"
#include "time-util.h"

static char root[256];
static const atomic_bool no_cancel = false;

static void touch_atime(const char *rel, time_t when) {
        char p[512];
        struct timespec ts[2] = { { .tv_sec = when }, { .tv_nsec = UTIME_OMIT } };

        snprintf(p, sizeof p, "%s/%s", root, rel);
        utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
}

static time_t atime_of(const char *rel) {
        char p[512];
        struct stat st;

        snprintf(p, sizeof p, "%s/%s", root, rel);
        return stat(p, &st) == 0 ? st.st_atim.tv_sec : -1;
}

static int walk_all(Sampler *s, const struct sampler_place *pl, uint64_t budget, unsigned *steps) {
        int r;

        *steps = 0;
        do {
                uint64_t left = budget;

                r = sampler_walk_step(s, pl, &left, &no_cancel);
                (*steps)++;
        } while (r == 0 && *steps < 100000);
        return r;
}

static bool near(double a, double b) {
        return a - b < 1e-9 && b - a < 1e-9;
}

/* A figure over every stratum. */
static double sum3(const double v[static _STRATUM_MAX]) {
        double sum = 0;

        for (unsigned k = 0; k < _STRATUM_MAX; k++)
                sum += v[k];
        return sum;
}

/* Sets rel's atime 'ahead' seconds after its ctime (utimensat itself moves
 * the ctime to now): an atime newer than the inode's mtime and ctime, which
 * a relatime mount does not write again for a day. */
static void fresh_atime(const char *rel, int ahead) {
        struct timespec ts[2] = { { .tv_sec = time(NULL) + ahead }, { .tv_nsec = UTIME_OMIT } };
        char p[512];

        snprintf(p, sizeof p, "%s/%s", root, rel);
        utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
}

/* Updates are shared among the mounts whose policy could have made them:
 * a fresh atime moved again only through a strictatime mount, a stale one
 * through any, a directory's never through a nodiratime one. */
static void attribution_by_policy(const struct sampler_place *pl) {
        struct sampler_writer w[4] = {
                { .fs_root = "/", .relatime = true },
                { .fs_root = "/" },
                { .fs_root = "/d0", .relatime = true },
                { .fs_root = "/d0", .nodiratime = true },
        };
        struct sweep_result res;
        Sampler *s = NULL;
        unsigned steps;

        fresh_atime("d1/f3", 100);
        touch_atime("d2/f7", 1000);
        touch_atime("d0/sub", 1000);
        touch_atime("d0/sub/g1", 1000);
        ok(sampler_new(1000, 42, &s) == 0 && walk_all(s, pl, 1000, &steps) == 1 &&
                   sampler_sweep(s, pl, NULL, 0, 1000000, 0, &no_cancel, &res) == 0,
           "policies: walked, a baseline");
        fresh_atime("d1/f3", 200); /* fresh before and after: strictatime's */
        touch_atime("d2/f7", 5000); /* stale before: anyone's */
        touch_atime("d0/sub", 5000);
        touch_atime("d0/sub/g1", 5000);
        ok(sampler_sweep(s, pl, w, 4, 61000000, 0, &no_cancel, &res) == 0 && res.valid && res.changed == 4,
           "policies: 4 moved");
        /* f3: 1 to '/' strict. f7: 1/2 to each '/'. sub (a directory): 1/3
         * to each but the nodiratime one. g1: 1/4 to each; the strict
         * ones' share of it is 1/4 + 0 (all of it stale). */
        ok(near(w[0].changed[STRATUM_REST], 0.5 + 1 / 3.0 + 0.25) &&
                   near(w[1].changed[STRATUM_REST], 1 + 0.5 + 1 / 3.0 + 0.25) &&
                   near(w[2].changed[STRATUM_REST], 1 / 3.0 + 0.25) && near(w[3].changed[STRATUM_REST], 0.25),
           "policies: fresh to strictatime only, stale to all, no directory to nodiratime (got %.3f %.3f %.3f %.3f)",
           w[0].changed[STRATUM_REST], w[1].changed[STRATUM_REST], w[2].changed[STRATUM_REST],
           w[3].changed[STRATUM_REST]);
        ok(near(w[0].updates[STRATUM_REST].n, w[0].changed[STRATUM_REST]) &&
                   near(w[1].updates[STRATUM_REST].n, w[1].changed[STRATUM_REST]),
           "policies: the updates are shared as the changes (%.3f, %.3f)", w[0].updates[STRATUM_REST].n,
           w[1].updates[STRATUM_REST].n);
        sampler_free(s);
        touch_atime("d1/f3", 1000);
        touch_atime("d2/f7", 1000);
        touch_atime("d0/sub", 1000);
        touch_atime("d0/sub/g1", 1000);
}

/* A user replaces a sampled directory with a symlink to one holding the
 * same names: the sweep must not follow it (the inodes found there are not
 * the ones sampled, and a symlink may lead anywhere, a hung filesystem
 * included). Puts things back after. */
/* A first walk under way: each sweep measures a copy of the reservoir so
 * far, marked partial, and takes a fresh copy; the finished walk's
 * replaces them. */
static void partial_walk(const struct sampler_place *pl) {
        _cleanup_(sampler_freep) Sampler *s = NULL;
        struct sweep_result res;
        uint64_t left = 20, p1, p2;

        ok(sampler_new(1000, 7, &s) == 0 && sampler_walk_step(s, pl, &left, &no_cancel) == 0 && s->walk,
           "partial: a first step of 20 entries");
        ok(sampler_can_sweep(s) && !sampler_whole(s), "partial: something to sweep, nothing whole");
        p1 = sampler_walk_seen(s);
        ok(sampler_sweep(s, pl, NULL, 0, 1000000, 0, &no_cancel, &res) == 0 && !res.valid && s->current &&
                   s->current->partial && s->current->population == p1 && s->current->n == p1,
           "partial: a baseline of the %" PRIu64 " walked", p1);
        left = 30;
        (void) sampler_walk_step(s, pl, &left, &no_cancel);
        p2 = sampler_walk_seen(s);
        ok(sampler_sweep(s, pl, NULL, 0, 61000000, 0, &no_cancel, &res) == 0 && res.valid && res.partial &&
                   res.population == p1 && res.used_inodes > res.population,
           "partial: measured over the %" PRIu64 " of %" PRIu64 " inodes in use", p1, res.used_inodes);
        ok(s->current && s->current->partial && s->current->population == p2 && p2 > p1 && s->walk,
           "partial: and the next copy (%" PRIu64 " walked) swapped in, the walk going on", p2);
        ok(sampler_sweep(s, pl, NULL, 0, 62000000, 30000000, &no_cancel, &res) == -EAGAIN,
           "partial: a sweep too soon neither measures nor takes a new copy");
        while (s->walk) {
                left = 1000;
                (void) sampler_walk_step(s, pl, &left, &no_cancel);
        }
        ok(sampler_whole(s), "partial: the walk done, a whole sample waits");
        ok(sampler_sweep(s, pl, NULL, 0, 121000000, 0, &no_cancel, &res) == 0 && res.valid && res.partial &&
                   res.population == p2 && s->current && !s->current->partial && s->current->population > p2,
           "partial: the last partial interval measured, the whole walk's sample swapped in");
}

static void replaced_by_symlink(const struct sampler_place *pl, uint64_t population, const char *how) {
        struct sweep_result res;
        Sampler *s = NULL;
        unsigned steps;
        char p[512], to[512];

        ok(sampler_new(100000, 42, &s) == 0 && walk_all(s, pl, 1000, &steps) == 1 && s->next->population == population &&
                   sampler_sweep(s, pl, NULL, 0, 1000000, 0, &no_cancel, &res) == 0,
           "%s: walked, a baseline", how);
        snprintf(p, sizeof p, "%s/d1", root);
        snprintf(to, sizeof to, "%s/d1.moved", root);
        rename(p, to);
        symlink("d2", p);
        ok(sampler_sweep(s, pl, NULL, 0, 61000000, 0, &no_cancel, &res) == 0 && res.gone == 31,
           "%s: a directory replaced by a symlink: its 30 files and itself gone, none found through it (gone %llu)", how,
           (unsigned long long) res.gone);
        unlink(p);
        rename(to, p);
        sampler_free(s);
}

/* More subdirectories than the walk's pool of pending names (64 KiB) holds:
 * still every one walked, the count exact, the sample full. */
static void many_subdirs(const struct sampler_place *pl, uint64_t population, const char *how) {
        Sampler *s = NULL;
        unsigned steps;

        int r = sampler_new(50, 3, &s) == 0 ? walk_all(s, pl, 97, &steps) : -1;
        size_t rest = 0, by[_STRATUM_MAX] = { 0 };

        for (size_t i = 0; r == 1 && i < s->next->n; i++)
                by[s->next->v[i].stratum]++;
        rest = by[STRATUM_REST];
        /* Just made, the subdirectories are hot or fresh (as the walk's
         * pace has it): the uniform stratum is still full, each of the
         * others holds its k/4 at most, together at least that. */
        ok(r == 1 && s->next->population == population && rest == 50 && by[STRATUM_FRESH] <= 12 &&
                   by[STRATUM_HOT] <= 12 && s->next->n >= 50 + 12,
           "%s: 1,200 subdirectories of 155-byte names (180 KiB): all walked (population %llu, %zu + %zu sampled)",
           how, r == 1 ? (unsigned long long) s->next->population : 0ULL, rest, r == 1 ? s->next->n - rest : 0);
        sampler_free(s);
}

static void make_many_subdirs(void) {
        char p[512], name[200];

        snprintf(p, sizeof p, "%s/big", root);
        mkdir(p, 0755);
        memset(name, 'n', 150);
        for (unsigned i = 0; i < 1200; i++) {
                snprintf(name + 150, sizeof name - 150, "%05u", i);
                snprintf(p, sizeof p, "%s/big/%s", root, name);
                mkdir(p, 0755);
                if (i % 100 == 0) {
                        strncat(p, "/f", sizeof p - strlen(p) - 1);
                        close(open(p, O_CREAT | O_WRONLY, 0644));
                }
        }
}

/* An atime set by utimensat() (touch -a, cp -p, rsync) is not a read: it is
 * counted apart, in no figure. A real read after it is one. */
/* The sampled entry at rel, or NULL. */
static const SampleEntry *entry_at(const Reservoir *res, const char *rel) {
        for (size_t i = 0; res && i < res->n; i++)
                if (streq(res->v[i].path, rel))
                        return &res->v[i];
        return NULL;
}

/* The mean age an entry has learnt, in ns of the tick it was learnt in. */
static double mean_age_ns(const SampleEntry *e, int64_t tick) {
        return e && e->rate.ages > 0 ? (double) e->rate.age_sum / (double) e->rate.ages * (double) tick : -1;
}

/* The inodes written since a time (a btrfs snapshot's making): the whole
 * walk's sample, each stratum scaled; nothing while only a first walk's
 * part is there. */
static void count_since(const struct sampler_place *top) {
        struct sampler_place pl = *top;
        struct sampler_since c;
        struct sweep_result res;
        char p[512], rel[64];
        Sampler *s = NULL, *t = NULL;
        unsigned steps;

        snprintf(p, sizeof p, "%s/since", root);
        mkdir(p, 0755);
        for (int i = 0; i < 40; i++) {
                snprintf(p, sizeof p, "%s/since/f%d", root, i);
                close(open(p, O_CREAT | O_WRONLY, 0644));
                snprintf(rel, sizeof rel, "since/f%d", i);
                touch_atime(rel, i < 10 ? 5000 : 1000);
        }
        touch_atime("since", 5000);
        snprintf(p, sizeof p, "%s/since", root);
        pl.target = p;
        ok(sampler_new(1000, 5, &t) == 0 && sampler_count_since(t, 4000, &c) == -EAGAIN && c.sample == 0,
           "since: nothing before a walk");
        sampler_free(t);
        ok(sampler_new(1000, 5, &s) == 0 && walk_all(s, &pl, 1000, &steps) == 1 &&
                   sampler_sweep(s, &pl, NULL, 0, 1000000, 0, &no_cancel, &res) == 0,
           "since: walked, a baseline");
        ok(sampler_count_since(s, 4000, &c) == 0 && fabs(c.inodes - 11) < 1e-9 && fabs(c.dirs - 1) < 1e-9 &&
                   c.lo == c.inodes && c.hi == c.inodes && c.sample == 41,
           "10 files and their directory written since: 11 of 41, exact where all are sampled");
        ok(sampler_count_since(s, 6000, &c) == 0 && c.inodes == 0 && c.hits == 0, "none since a later time");
        sampler_free(s);
}

/* A filesystem whose atimes all have whole seconds (made by mkfs.ext4 -d,
 * restored by a tool that sets seconds only) is counted in seconds until a
 * read writes an atime with a fraction. From the sweep that finds it on,
 * every age is learnt in the clock's tick: learnt in seconds, the looks
 * right after a read (the burst's, 25 ms and more after it) read as ages
 * of 0 ticks, and a reader every 3 s came out 10 to 30 times as fast.
 * A new sample of the filesystem keeps knowing that it has fractions. */
static void whole_seconds_then_fine(const struct sampler_place *top) {
        struct sampler_place pl = *top;
        struct sampler_writer w = { .fs_root = "/" };
        struct sweep_result res;
        struct timespec ts[2] = { { 0 }, { .tv_nsec = UTIME_OMIT } };
        const SampleEntry *f0, *f1;
        char p[512], q[512];
        Sampler *s = NULL;
        unsigned steps;
        int64_t tick;

        snprintf(q, sizeof q, "%s/ws", root);
        mkdir(q, 0755);
        for (int i = 0; i < 2; i++) {
                snprintf(p, sizeof p, "%s/ws/f%d", root, i);
                close(open(p, O_CREAT | O_WRONLY, 0644));
                touch_atime(p + strlen(root) + 1, 1000);
        }
        touch_atime("ws", 1000);
        pl.target = q;
        ok(sampler_new(1000, 3, &s) == 0 && walk_all(s, &pl, 1000, &steps) == 1 &&
                   sampler_sweep(s, &pl, &w, 1, 1000000, 0, &no_cancel, &res) == 0 && !s->current->fine_times,
           "whole seconds: walked, a baseline, counted in seconds");
        /* f0 read: an atime of the clock's tick, with a fraction; f1 set to
         * a whole second (a read there would be the same, to the second). */
        clock_gettime(CLOCK_REALTIME_COARSE, &ts[0]);
        if (ts[0].tv_nsec == 0)
                ts[0].tv_nsec = 1;
        snprintf(p, sizeof p, "%s/ws/f0", root);
        utimensat(AT_FDCWD, p, ts, 0);
        touch_atime("ws/f1", time(NULL));
        ok(sampler_sweep(s, &pl, &w, 1, 2000000, 0, &no_cancel, &res) == 0 && res.valid && res.changed == 2,
           "whole seconds: both moved");
        tick = s->current->rate_tick;
        f0 = entry_at(s->current, "f0");
        f1 = entry_at(s->current, "f1");
        ok(s->current->fine_times && tick == s->clock_tick && res.tick_ns == tick,
           "whole seconds: from the first fraction on, counted in the clock's tick (%lld ns, the interval in %lld)",
           (long long) tick, (long long) res.tick_ns);
        ok(f0 && f1 && mean_age_ns(f0, tick) >= 20e6 && mean_age_ns(f1, tick) >= 20e6,
           "whole seconds: the looks after the moves learnt their ages in it (%.0f and %.0f ms, not 0)",
           mean_age_ns(f0, tick) / 1e6, mean_age_ns(f1, tick) / 1e6);
        /* A new sample in which every atime has whole seconds again. */
        touch_atime("ws/f0", 1000);
        touch_atime("ws/f1", 1000);
        ok(walk_all(s, &pl, 1000, &steps) == 1 && sampler_sweep(s, &pl, &w, 1, 3000000, 0, &no_cancel, &res) == 0 &&
                   s->current->fine_times && s->current->rate_tick == tick && (f0 = entry_at(s->current, "f0")) &&
                   f0->rate.ages > 0,
           "whole seconds: a new sample keeps the clock's tick, and the rates learnt in it");
        sampler_free(s);
        snprintf(p, sizeof p, "rm -rf '%s/ws'", root);
        if (system(p) != 0)
                printf("# could not remove %s/ws\n", root);
}

static void sets_are_not_reads(const struct sampler_place *top) {
        struct sampler_place pl = *top;
        struct sampler_writer w = { .fs_root = "/" };
        struct timespec now[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
        struct sweep_result res;
        char p[512], q[512], buf[4];
        Sampler *s = NULL;
        unsigned steps;
        int fd;

        pl.sets_as_reads = false;
        snprintf(q, sizeof q, "%s/st", root);
        mkdir(q, 0755);
        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof p, "%s/st/f%d", root, i);
                fd = open(p, O_CREAT | O_WRONLY, 0644);
                if (fd >= 0) {
                        (void) !write(fd, "x\n", 2);
                        close(fd);
                }
                touch_atime(p + strlen(root) + 1, 1000);
        }
        pl.target = q;
        ok(sampler_new(1000, 7, &s) == 0 && walk_all(s, &pl, 1000, &steps) == 1 &&
                   sampler_sweep(s, &pl, &w, 1, 1000000, 0, &no_cancel, &res) == 0,
           "sets: walked, a baseline");
        /* f0: set to the past (cp -p); f1: set to now (touch -a); f2: read. */
        touch_atime("st/f0", 5000);
        snprintf(p, sizeof p, "%s/st/f1", root);
        utimensat(AT_FDCWD, p, now, 0);
        snprintf(p, sizeof p, "%s/st/f2", root);
        fd = open(p, O_RDONLY);
        ok(fd >= 0 && read(fd, buf, 1) == 1, "sets: f2 read");
        if (fd >= 0)
                close(fd);
        is_int(sampler_sweep(s, &pl, &w, 1, 61000000, 0, &no_cancel, &res), 0, "sets: swept");
        ok(res.valid && res.changed == 1 && near(sum3(res.sets), 2) &&
                   near(sum3(w.changed), 1) && near(res.updates.changed, 1),
           "sets: the read counted (%llu moved, %.1f updates), the 2 sets apart (%.1f)", (unsigned long long) res.changed,
           res.updates.n, sum3(res.sets));
        /* A read after a set writes an atime newer than the set's ctime. */
        snprintf(p, sizeof p, "%s/st/f0", root);
        fd = open(p, O_RDONLY);
        ok(fd >= 0 && read(fd, buf, 1) == 1, "sets: f0 read");
        if (fd >= 0)
                close(fd);
        is_int(sampler_sweep(s, &pl, &w, 1, 121000000, 0, &no_cancel, &res), 0, "sets: swept again");
        ok(res.valid && res.changed == 1 && near(sum3(res.sets), 0) &&
                   near(res.updates.changed, 1),
           "sets: a read after a set is a read (%llu moved, %.1f sets)", (unsigned long long) res.changed,
           sum3(res.sets));
        sampler_free(s);
        snprintf(p, sizeof p, "rm -rf '%s/st'", root);
        if (system(p) != 0)
                printf("# could not remove %s/st\n", root);
}

/* One file with 10 names and 5 files of one name each, in a directory of
 * their own: 10 inodes (the 6 files, 'hl' and the top... walked from 'hl'
 * as the mount's root: 6 files + 'hl' = 7 inodes, 16 names). A read of the
 * linked file through one of its names is one inode changed, not 10. */
static void hard_links(const struct sampler_place *top) {
        struct sampler_place pl = *top;
        struct sampler_writer w = { .fs_root = "/" };
        struct sweep_result res;
        char p[512], q[512], buf[4];
        Sampler *s = NULL;
        unsigned steps;
        int fd;

        snprintf(p, sizeof p, "%s/hl", root);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/hl/f", root);
        fd = open(p, O_CREAT | O_WRONLY, 0644);
        if (fd >= 0) {
                (void) !write(fd, "x\n", 2);
                close(fd);
        }
        for (int i = 1; i < 10; i++) {
                snprintf(q, sizeof q, "%s/hl/l%d", root, i);
                link(p, q);
        }
        for (int i = 0; i < 5; i++) {
                snprintf(q, sizeof q, "%s/hl/o%d", root, i);
                close(open(q, O_CREAT | O_WRONLY, 0644));
        }
        snprintf(q, sizeof q, "%s/hl", root);
        pl.target = q;
        /* An atime older than the ctime: the first read writes it again,
         * even on a relatime mount. */
        touch_atime("hl/f", 1000);
        ok(sampler_new(1000, 7, &s) == 0 && walk_all(s, &pl, 1000, &steps) == 1 && s->next->population == 16 &&
                   near(s->next->inodes, 7),
           "hard links: 16 names walked, 7 inodes");
        ok(sampler_sweep(s, &pl, &w, 1, 1000000, 0, &no_cancel, &res) == 0, "hard links: a baseline");
        fd = open(p, O_RDONLY);
        ok(fd >= 0 && read(fd, buf, 1) == 1, "hard links: the file read once through one name");
        if (fd >= 0)
                close(fd);
        is_int(sampler_sweep(s, &pl, &w, 1, 61000000, 0, &no_cancel, &res), 0, "hard links: swept");
        ok(res.valid && res.changed == 10 &&
                   res.population == 7 && near(sum3(w.changed), 1) &&
                   near(res.updates.changed, 1) && res.updates.n >= 1 - 1e-9 && res.updates.n < 1.5,
           "hard links: 10 names moved, one inode changed (%.3f), %.3f updates, population %llu",
           sum3(w.changed), res.updates.n, (unsigned long long) res.population);
        sampler_free(s);
        snprintf(p, sizeof p, "rm -rf '%s/hl'", root);
        if (system(p) != 0)
                printf("# could not remove %s/hl\n", root);
}

int main(void) {
        struct sampler_place pl;
        struct statx stx;
        struct sweep_result res;
        Sampler *s = NULL;
        unsigned steps;
        uint64_t t0 = 1000000;
        char p[512], rel[64];

        strcpy(root, "/tmp/atimed-sampler.XXXXXX");
        if (!mkdtemp(root))
                return 1;
        /* 3 directories of 30 files, one nested directory of 10, a symlink
         * and a fifo (neither is sampled). */
        for (int d = 0; d < 3; d++) {
                snprintf(p, sizeof p, "%s/d%d", root, d);
                mkdir(p, 0755);
                for (int f = 0; f < 30; f++) {
                        FILE *fp;
                        snprintf(p, sizeof p, "%s/d%d/f%d", root, d, f);
                        fp = fopen(p, "w");
                        if (fp) {
                                fputs("x\n", fp);
                                fclose(fp);
                        }
                        /* Old, like most files: the fresh stratum is tested apart. */
                        snprintf(rel, sizeof rel, "d%d/f%d", d, f);
                        touch_atime(rel, 1000);
                }
        }
        snprintf(p, sizeof p, "%s/d0/sub", root);
        mkdir(p, 0755);
        for (int f = 0; f < 10; f++) {
                snprintf(p, sizeof p, "%s/d0/sub/g%d", root, f);
                close(open(p, O_CREAT | O_WRONLY, 0644));
                snprintf(rel, sizeof rel, "d0/sub/g%d", f);
                touch_atime(rel, 1000);
        }
        snprintf(p, sizeof p, "%s/link", root);
        symlink("d0", p);
        snprintf(p, sizeof p, "%s/fifo", root);
        mkfifo(p, 0600);
        /* 100 files + 4 directories + the top = 105 inodes sampled. */

        statx(AT_FDCWD, root, 0, STATX_MNT_ID, &stx);
        /* Most of these tests stand for reads with utimensat(). */
        pl = (struct sampler_place) { .target = root, .mount_id = (int) stx.stx_mnt_id, .fs_root = "/",
                                      .sets_as_reads = true };

        /* Old directory atimes: any plain readdir would now move them. */
        touch_atime(".", 1000);
        touch_atime("d0", 1000);
        touch_atime("d0/sub", 1000);
        touch_atime("d1", 1000);
        touch_atime("d2", 1000);

        ok(sampler_new(1000, 42, &s) == 0, "sampler");
        is_int(walk_all(s, &pl, 7, &steps), 1, "the walk completes in steps of 7 entries");
        ok(steps > 10, "and took %u steps (budgeted)", steps);
        ok(s->next && s->next->population == 105 && s->next->n == 105,
           "population 105 (files and directories; no symlink, no fifo), all sampled");
        ok(atime_of(".") == 1000 && atime_of("d0") == 1000 && atime_of("d0/sub") == 1000,
           "walking changed no directory's atime (O_NOATIME)");

        ok(sampler_sweep(s, &pl, NULL, 0, t0, 0, &no_cancel, &res) == 0 && !res.valid, "first sweep: a baseline only");
        touch_atime("d1/f3", 5000);
        touch_atime("d2/f7", 5000);
        touch_atime("d0/sub/g1", 5000);
        touch_atime("d0/sub", 5000);
        {
                struct sampler_writer w[2] = { { .fs_root = "/" }, { .fs_root = "/d0" } };

                ok(sampler_sweep(s, &pl, w, 2, t0 + 60 * 1000000ULL, 0, &no_cancel, &res) == 0 && res.valid, "second sweep");
                is_int(res.changed, 4, "exactly the 4 inodes whose atime moved");
                is_int(res.sample, 105, "of 105 compared");
                ok(res.seconds == 60.0, "over 60 s");
                ok(w[0].changed[STRATUM_FRESH] == 0 && w[0].changed[STRATUM_REST] == 3.0 && w[1].changed[STRATUM_REST] == 1.0,
                   "attribution: 2 outside d0 to '/', 2 inside shared by both (got %.1f, %.1f)",
                   w[0].changed[STRATUM_REST], w[1].changed[STRATUM_REST]);
        }
        ok(atime_of(".") == 1000 && atime_of("d0") == 1000, "sweeping changed no atime either");
        ok(sampler_sweep(s, &pl, NULL, 0, t0 + 120 * 1000000ULL, 0, &no_cancel, &res) == 0 && res.changed == 0,
           "nothing moved since: 0");

        snprintf(p, sizeof p, "%s/d2/f8", root);
        unlink(p);
        ok(sampler_sweep(s, &pl, NULL, 0, t0 + 180 * 1000000ULL, 0, &no_cancel, &res) == 0 && res.gone == 1 &&
                   res.sample == 104,
           "a deleted file drops out of the sample");
        sampler_free(s);

        ok(sampler_new(20, 7, &s) == 0 && walk_all(s, &pl, 1000, &steps) == 1 && s->next->n == 20 &&
                   s->next->population == 104,
           "a reservoir of 20 from 104");
        {
                bool distinct = true;

                for (size_t i = 0; i < s->next->n; i++)
                        for (size_t j = i + 1; j < s->next->n; j++)
                                if (streq(s->next->v[i].path, s->next->v[j].path))
                                        distinct = false;
                ok(distinct, "with no inode twice");
        }
        sampler_free(s);

        /* Files read a second before the walk: a stratum of their own, k/4
         * at most; read just now, another. */
        {
                struct timespec ago[2] = { { 0 }, { .tv_nsec = UTIME_OMIT } };
                struct timespec now[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
                size_t fresh = 0, hot = 0;
                unsigned tries = 0;
                bool walked, quick = false;

                /* Hot: seen within a tenth of a second of the read, fresh
                 * within two. A walk held up that long (the test preempted
                 * on a loaded machine) sees other strata: the files are
                 * read and walked again until one walk is not, so the split
                 * is judged on every host, however busy. */
                s = NULL; /* freed above */
                do {
                        uint64_t began;

                        sampler_free(s);
                        s = NULL;
                        clock_gettime(CLOCK_REALTIME, &ago[0]);
                        ago[0].tv_sec -= 1;
                        for (int f = 0; f < 12; f++) {
                                snprintf(p, sizeof p, "%s/d1/f%d", root, f);
                                utimensat(AT_FDCWD, p, ago, 0);
                        }
                        for (int f = 0; f < 8; f++) {
                                snprintf(p, sizeof p, "%s/d2/f%d", root, f);
                                utimensat(AT_FDCWD, p, now, 0);
                        }
                        began = now_usec(CLOCK_MONOTONIC);
                        walked = sampler_new(20, 9, &s) == 0 && walk_all(s, &pl, 1000, &steps) == 1;
                        quick = now_usec(CLOCK_MONOTONIC) - began < 80 * USEC_PER_MSEC;
                } while (walked && !quick && ++tries < 1000);
                ok(walked && quick, "a walk with 12 fresh files and 8 hot ones (%u held up, walked again)", tries);
                for (size_t i = 0; walked && i < s->next->n; i++) {
                        fresh += s->next->v[i].stratum == STRATUM_FRESH;
                        hot += s->next->v[i].stratum == STRATUM_HOT;
                }
                ok(walked && s->next->stratum_population[STRATUM_FRESH] == 12 && fresh == 5 &&
                           s->next->stratum_population[STRATUM_REST] == 84,
                   "the fresh stratum: 5 of 12 (k/4), the rest: of 84 (got %zu of %llu, %zu in all)", fresh,
                   walked ? (unsigned long long) s->next->stratum_population[STRATUM_FRESH] : 0ULL,
                   walked ? s->next->n : 0);
                ok(walked && s->next->stratum_population[STRATUM_HOT] == 8 && hot == 5 && s->next->n == 30,
                   "the hot stratum: 5 of 8 (k/4) (got %zu of %llu, %zu in all)", hot,
                   walked ? (unsigned long long) s->next->stratum_population[STRATUM_HOT] : 0ULL,
                   walked ? s->next->n : 0);
                sampler_free(s);
                for (int f = 0; f < 12; f++) {
                        snprintf(rel, sizeof rel, "d1/f%d", f);
                        touch_atime(rel, 1000);
                }
                for (int f = 0; f < 8; f++) {
                        snprintf(rel, sizeof rel, "d2/f%d", f);
                        touch_atime(rel, 1000);
                }
        }
        attribution_by_policy(&pl);
        partial_walk(&pl);
        replaced_by_symlink(&pl, 104, "openat2");
        make_many_subdirs();
        many_subdirs(&pl, 104 + 1 + 1200 + 12, "openat2");
        snprintf(p, sizeof p, "rm -rf '%s/big'", root);
        if (system(p) != 0)
                printf("# could not remove %s/big\n", root);

        /* The same walk as on a kernel without openat2(). */
        sampler_disable_openat2();
        replaced_by_symlink(&pl, 104, "without openat2");
        make_many_subdirs();
        many_subdirs(&pl, 104 + 1 + 1200 + 12, "without openat2");
        snprintf(p, sizeof p, "rm -rf '%s/big'", root);
        if (system(p) != 0)
                printf("# could not remove %s/big\n", root);
        touch_atime(".", 1000);
        touch_atime("d0", 1000);
        touch_atime("d0/sub", 1000);
        ok(sampler_new(1000, 42, &s) == 0 && walk_all(s, &pl, 7, &steps) == 1 && s->next->population == 104 &&
                   s->next->n == 104,
           "without openat2: the same 104 inodes, no symlink followed");
        ok(atime_of(".") == 1000 && atime_of("d0") == 1000 && atime_of("d0/sub") == 1000,
           "without openat2: no directory's atime changed");
        sampler_free(s);

        hard_links(&pl);
        sets_are_not_reads(&pl);
        whole_seconds_then_fine(&pl);
        count_since(&pl);

        {
                /* A place whose root is a file (as a file bind mount's is):
                 * said so, and nothing is walked. */
                char file[300];
                struct sampler_place fpl = pl;
                FILE *f;

                snprintf(file, sizeof file, "%s/a-file", root);
                f = fopen(file, "we");
                if (f)
                        fclose(f);
                fpl.target = file;
                ok(sampler_new(10, 1, &s) == 0 &&
                           sampler_walk_step(s, &fpl, &(uint64_t) { 100 }, &no_cancel) == -ENOTDIR && !s->walk,
                   "a place whose root is a file: -ENOTDIR, no walk begun");
                sampler_free(s);
                (void) unlink(file);
        }

        pl.mount_id += 1000;
        ok(sampler_new(10, 1, &s) == 0 && sampler_walk_step(s, &pl, &(uint64_t) { 100 }, &no_cancel) == -ESTALE,
           "a place on another mount than expected is refused");
        sampler_free(s);

        {
                char cmd[600];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
                if (system(cmd) != 0)
                        printf("# could not remove %s\n", root);
        }
        return tap_done();
}
