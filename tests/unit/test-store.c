/* test-store: histories written and read back exactly; the journal after
 * a kill -9; every kind of damaged file moved aside, never trusted, never
 * fatal; pruning; a state dir that cannot be written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "loop-wait.h"
#include "mounts.h"
#include "store.h"
#include "strv.h"
#include "time-util.h"

static char dir[128];
static struct stats_ring_spec sp[STATS_MAX_RINGS];
static unsigned nsp;
static const int64_t T0 = 1800000000 - 1800000000 % 3600;

static void feed(Store *s, const char *key, int from, int to) {
        for (int i = from; i < to; i++) {
                struct stats_sample x = {
                        .t = T0 + i * 60 + 30, .has_activity = true, .per_min = (float) i, .lo = (float) i / 2,
                        .hi = (float) i * 2, .has_device = i % 3 != 0, .write_iops = 1.5f, .write_kib = 20,
                        .has_policy = true, .atime = ATIME_RELATIME, .flags = STATS_LAZYTIME,
                        /* Format 3: some intervals carry btrfs bytes, some of them modelled. */
                        .has_unshared = i % 4 == 1, .unshared_modelled = i % 8 == 1,
                        .unshared_per_day = (float) i * 1000, .unshared_lo = (float) i * 900,
                        .unshared_hi = (float) i * 1100,
                };
                store_add(s, key, &x);
        }
}

static bool same(const Store *a, const Store *b) {
        if (store_n_mounts(a) != store_n_mounts(b))
                return false;
        for (size_t i = 0; i < store_n_mounts(a); i++) {
                const MountHistory *x = store_get(a, i), *y = store_get(b, i);
                static struct stats_point px[5000], py[5000];

                if (strcmp(x->key, y->key) != 0 || x->last_seen != y->last_seen)
                        return false;
                for (unsigned r = 0; r < x->n_rings; r++) {
                        uint32_t n = history_ring_points(x, r, px);
                        if (n != history_ring_points(y, r, py) || (n && x->rings[r].head_t != y->rings[r].head_t) ||
                            memcmp(px, py, n * sizeof *px) != 0)
                                return false;
                }
        }
        return true;
}

/* No point of h carries un-shared bytes. */
static bool no_unshared(const MountHistory *h) {
        static struct stats_point px[5000];

        for (unsigned r = 0; r < h->n_rings; r++) {
                uint32_t n = history_ring_points(h, r, px);

                for (uint32_t k = 0; k < n; k++)
                        if (px[k].n_unshared || px[k].unshared_modelled || px[k].unshared_per_day != 0)
                                return false;
        }
        return true;
}

static Store *reload(struct store_load_report *rep) {
        Store *s = NULL;

        store_new(dir, sp, nsp, 0, &s);
        store_load(s, T0 + 86400, rep);
        return s;
}

static bool aside_exists(const char *prefix) {
        char cmd[512];

        snprintf(cmd, sizeof cmd, "ls '%s' | grep -q '^%s\\.corrupt-'", dir, prefix);
        return system(cmd) == 0;
}

static void clear_dir(void) {
        char cmd[512];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
        if (system(cmd) != 0)
                printf("# could not clear %s\n", dir);
}

static void corrupt(const char *name, long offset, const char *bytes, size_t n, bool truncate_there) {
        char p[256];
        int fd;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        fd = open(p, O_WRONLY);
        if (fd < 0)
                return;
        if (truncate_there) {
                struct stat st;
                fstat(fd, &st);
                if (ftruncate(fd, offset >= 0 ? offset : st.st_size + offset) < 0)
                        printf("# truncate failed\n");
        } else if (pwrite(fd, bytes, n, offset) != (ssize_t) n)
                printf("# write failed\n");
        close(fd);
}

/* A state file's bytes as hex (a string to compare), or NULL. */
static char *slurp(const char *name) {
        char p[256];
        FILE *f;
        char *out = NULL;
        size_t n = 0;
        int c;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        f = fopen(p, "rb");
        if (!f)
                return NULL;
        out = malloc(2 * (1 << 20) + 1);
        while (out && n < 2 * (1 << 20) && (c = fgetc(f)) != EOF)
                n += (size_t) sprintf(out + n, "%02x", c);
        fclose(f);
        return out;
}

static bool has_problem(const struct store_load_report *r, const char *frag) {
        STRV_FOREACH(p, r->problems)
                if (strstr(*p, frag))
                        return true;
        return false;
}

/* The flusher: writes in a worker, one at a time, with no deadline; the
 * history it wrote loads back; 'when idle' waits for the write out. */
static void on_idle(void *userdata) {
        (*(unsigned *) userdata)++;
}

static void test_flusher(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(worker_pool_freep) WorkerPool *pool = NULL;
        StoreFlusher *f = NULL;
        Store *s = NULL, *back = NULL;
        struct store_load_report rep;
        unsigned idle = 0;

        ok(sd_event_new(&e) >= 0 && worker_pool_new(e, 2, &pool) == 0, "flusher: a loop and a pool");
        ok(store_new(dir, sp, nsp, 0, &s) == 0 && store_load(s, T0 + 86400, &rep) == 0, "flusher: a store");
        store_load_report_done(&rep);
        ok(store_flusher_new(s, pool, dir, &f) == 0, "flusher: made");
        feed(s, "uuid=f target=/flushed", 0, 30);
        store_flusher_request(f, true);
        ok(store_flusher_busy(f), "a write is out");
        store_flusher_request(f, false); /* skipped: one is out */
        store_flusher_when_idle(f, on_idle, &idle);
        RUN_LOOP_UNTIL(e, idle == 1);
        ok(idle == 1 && !store_flusher_busy(f), "'when idle' came when the write returned");
        store_flusher_when_idle(f, on_idle, &idle);
        ok(idle == 2, "and at once when none is out");
        back = reload(&rep);
        ok(store_find(back, "uuid=f target=/flushed") != NULL, "what the worker wrote loads back");
        store_load_report_done(&rep);
        store_free(back);
        store_flusher_free(f);
        pool = worker_pool_free(pool);
        store_free(s);
}

int main(void) {
        Store *a = NULL, *b = NULL;
        struct store_load_report rep;

        stats_parse_rings("1min:6h, 10min:7d, 1h:90d", sp, &nsp);
        strcpy(dir, "/tmp/atimed-store.XXXXXX");
        if (!mkdtemp(dir))
                return 1;

        /* Snapshot, then journal blocks, then a fresh start: the same state. */
        store_new(dir, sp, nsp, 0, &a);
        feed(a, "uuid=a target=/srv", 0, 500);
        feed(a, "uuid=b target=/var", 0, 100);
        ok(store_flush(a, T0 + 86400, true) == 0, "a snapshot is written");
        feed(a, "uuid=a target=/srv", 500, 510);
        feed(a, "source=tmpfs fstype=tmpfs target=/tmp", 0, 5);
        ok(store_flush(a, T0 + 86400, false) == 0, "a journal block is appended");
        feed(a, "uuid=b target=/var", 100, 103);
        ok(store_flush(a, T0 + 86400, false) == 0, "and another");
        {
                char p[256];
                struct stat st;
                snprintf(p, sizeof p, "%s/%s", dir, STORE_JOURNAL);
                ok(stat(p, &st) == 0 && st.st_size < 2000, "a flush writes only what is new (%lld bytes of journal)",
                   (long long) st.st_size);
        }
        /* As after kill -9: nothing more written. */
        b = reload(&rep);
        ok(same(a, b), "snapshot plus journal give back exactly the state");
        is_int(rep.replayed, 18, "18 journal samples replayed");
        ok(!rep.problems, "without complaint");
        {
                /* Format 3: the btrfs bytes of each point, from the snapshot
                 * and from the journal alike. */
                const MountHistory *h = store_find(b, "uuid=a target=/srv");
                const struct stats_point *p0 = h ? history_point(h, 0, T0 + 497 * 60) : NULL;
                const struct stats_point *p9 = h ? history_point(h, 0, T0 + 501 * 60) : NULL;
                const struct stats_point *p2 = h ? history_point(h, 0, T0 + 498 * 60) : NULL;

                ok(p0 && p0->n_unshared == 1 && p0->unshared_per_day == 497000 && p0->unshared_lo == 497 * 900 &&
                           p0->unshared_hi == 497 * 1100 && p0->unshared_modelled,
                   "a point read from the snapshot keeps its un-shared bytes, interval and source");
                ok(p9 && p9->n_unshared == 1 && p9->unshared_per_day == 501000 && !p9->unshared_modelled,
                   "and one replayed from the journal (measured)");
                ok(p2 && p2->n_unshared == 0, "a point of an interval with no figure carries none");
                h = store_find(b, "uuid=a target=/srv");
                p0 = h ? history_point(h, 1, T0 + 490 * 60) : NULL;
                ok(p0 && p0->n_unshared == 2 && p0->unshared_per_day == 495000 && p0->unshared_modelled,
                   "a 10-minute point: the mean of its 2 intervals with bytes, modelled as one of them was");
        }
        store_load_report_done(&rep);
        store_free(b);

        /* A crash while a snapshot was written leaves its temporary file:
         * the next load removes it, and reads the state as before. */
        {
                char p[256];
                struct stat st;
                int fd;

                snprintf(p, sizeof p, "%s/.%s.0123456789abcdef.tmp", dir, STORE_FILE);
                fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                ok(fd >= 0 && write(fd, "half", 4) == 4, "a snapshot's temporary left by a crash");
                if (fd >= 0)
                        close(fd);
                b = reload(&rep);
                ok(stat(p, &st) < 0 && errno == ENOENT, "is removed on load");
                ok(same(a, b) && !rep.problems, "and the state reads back the same, without complaint");
                store_load_report_done(&rep);
                store_free(b);
        }

        /* The journal's torn tail (a crash in mid-write): the rest is kept. */
        corrupt(STORE_JOURNAL, -7, NULL, 0, true);
        b = reload(&rep);
        ok(has_problem(&rep, "cut short"), "a torn journal is reported");
        is_int(rep.replayed, 15, "the blocks before the tear are replayed");
        ok(aside_exists(STORE_JOURNAL), "and the journal is moved aside");
        store_load_report_done(&rep);
        store_free(b);

        /* Damaged snapshots, each kind. */
        struct {
                const char *what, *expect;
                long off;
                const char *bytes;
                size_t n;
                bool trunc;
        } cases[] = {
                { "a flipped byte", "checksum", 200, "\xff", 1, false },
                { "a truncated file", "checksum", 1000, NULL, 0, true },
                { "an empty file", "empty", 0, NULL, 0, true },
                { "a foreign file", "not an atimed history file", 0, "#!/bin/sh", 9, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                clear_dir();
                ok(store_flush(a, T0 + 86400, true) == 0, "snapshot for: %s", cases[i].what);
                corrupt(STORE_FILE, cases[i].off, cases[i].bytes, cases[i].n, cases[i].trunc);
                b = reload(&rep);
                ok(b && has_problem(&rep, cases[i].expect) && store_n_mounts(b) == 0 && aside_exists(STORE_FILE),
                   "%s: reported (%s), moved aside, started fresh", cases[i].what,
                   rep.problems ? rep.problems[0] : "nothing reported");
                ok(store_flush(b, T0 + 86400, false) == 0, "%s: and the next flush writes a good snapshot", cases[i].what);
                store_load_report_done(&rep);
                store_free(b);
        }

        /* A file of a newer format (a downgrade): refused, left exactly as it
         * is, never overwritten, whether it is the snapshot or the journal. */
        for (int which = 0; which < 2; which++) {
                const char *name = which == 0 ? STORE_FILE : STORE_JOURNAL;
                _cleanup_free_ char *before = NULL, *after = NULL, *other = NULL, *other_after = NULL;
                const char *other_name = which == 0 ? STORE_JOURNAL : STORE_FILE;

                clear_dir();
                ok(store_flush(a, T0 + 86400, true) == 0, "%s of a newer version: a snapshot", name);
                feed(a, "uuid=a target=/srv", 510, 512);
                ok(store_flush(a, T0 + 86400, false) == 0, "and a journal");
                corrupt(name, 8, "\x04\x00\x00\x00", 4, false);
                before = slurp(name);
                other = slurp(other_name);
                b = reload(&rep);
                ok(b && rep.refused && store_n_mounts(b) == 0, "%s of format 4: refused, nothing loaded", name);
                ok(has_problem(&rep, "written by a newer atimed (format version 4; this one reads up to 3)") &&
                           has_problem(&rep, "left as it is"),
                   "the reason is clear: %s", rep.problems ? rep.problems[0] : "nothing reported");
                feed(b, "uuid=z target=/new", 0, 5);
                ok(store_flush(b, T0 + 86400, false) == 0 && store_flush(b, T0 + 86400, true) == 0,
                   "flushes succeed, writing nothing");
                after = slurp(name);
                other_after = slurp(other_name);
                ok(before && after && streq(before, after) && other && other_after && streq(other, other_after) &&
                           !aside_exists(name),
                   "both files are left byte for byte, nothing moved aside");
                store_load_report_done(&rep);
                store_free(b);
        }

        /* Every format an older atimed wrote is read, from files it wrote
         * (tests/fixtures/store/vN: a snapshot and a journal). */
        {
                static const struct {
                        const char *version;
                        size_t mounts, replayed;
                        const char *key;
                        uint32_t minutes;
                } old[] = {
                        { "v1", 3, 10, "uuid=a target=/srv", 35 },
                        { "v2", 3, 5, "uuid=a target=/srv", 103 },
                };
                const char *src = getenv("top_srcdir");

                for (size_t i = 0; i < ELEMENTSOF(old); i++) {
                        char cmd[1024];
                        const MountHistory *h;

                        clear_dir();
                        snprintf(cmd, sizeof cmd, "cp '%s/tests/fixtures/store/%s/history' '%s/tests/fixtures/store/%s/%s' '%s/'",
                                 src ? src : "../..", old[i].version, src ? src : "../..", old[i].version, STORE_JOURNAL, dir);
                        ok(system(cmd) == 0, "format %s: the files", old[i].version);
                        b = reload(&rep);
                        h = b ? store_find(b, old[i].key) : NULL;
                        ok(b && !rep.problems && !rep.refused && rep.mounts == old[i].mounts &&
                                   rep.replayed == old[i].replayed,
                           "format %s: read without complaint (%zu mounts, %zu journal samples) %s", old[i].version,
                           rep.mounts, rep.replayed, rep.problems ? rep.problems[0] : "");
                        ok(h && h->rings[0].count == old[i].minutes, "format %s: %s has its %u minutes (%u)",
                           old[i].version, old[i].key, old[i].minutes, h ? h->rings[0].count : 0);
                        ok(h && no_unshared(h), "format %s: its points carry no btrfs bytes (none were kept then)",
                           old[i].version);
                        ok(store_flush(b, T0 + 86400, true) == 0, "format %s: written back as format 3",
                           old[i].version);
                        store_load_report_done(&rep);
                        store_free(b);
                        b = reload(&rep);
                        ok(b && !rep.problems && rep.mounts == old[i].mounts && store_find(b, old[i].key) &&
                                   store_find(b, old[i].key)->rings[0].count == old[i].minutes,
                           "format %s: and read back the same", old[i].version);
                        store_load_report_done(&rep);
                        store_free(b);
                }
        }

        /* Fewer rings configured: the one still kept survives. */
        clear_dir();
        store_flush(a, T0 + 86400, true);
        {
                struct stats_ring_spec two[2];
                unsigned n2;
                Store *c = NULL;

                stats_parse_rings("1min:6h, 1h:90d", two, &n2);
                store_new(dir, two, n2, 0, &c);
                store_load(c, T0 + 86400, &rep);
                ok(has_problem(&rep, "600s resolution is no longer kept"), "a dropped ring is reported");
                ok(store_n_mounts(c) == 3 && store_find(c, "uuid=a target=/srv")->rings[1].count ==
                                                    store_find(a, "uuid=a target=/srv")->rings[2].count,
                   "the 1 h ring is kept");
                store_load_report_done(&rep);
                store_free(c);
        }

        /* Pruning: gone longer than the longest ring reaches; over the cap. */
        {
                Store *c = NULL;

                store_new(dir, sp, nsp, 2, &c);
                feed(c, "old", 0, 1);
                feed(c, "k1", 2000, 2001);
                feed(c, "k2", 2001, 2002);
                feed(c, "k3", 2002, 2003);
                is_int(store_prune(c, T0 + 91LL * 86400), 2, "one gone for 91 days, one over the cap of 2");
                ok(store_n_mounts(c) == 2 && store_find(c, "k2") && store_find(c, "k3"), "the two seen last are kept");
                store_free(c);
        }

        /* Over the cap, the system's history stays: users' mounts go
         * first, then passing ones (under an hour), whenever last seen. */
        {
                Store *c = NULL;

                store_new(dir, sp, nsp, 3, &c);
                feed(c, "system", 0, 120);     /* two hours, gone since */
                feed(c, "root-short", 200, 205); /* five minutes, gone since */
                feed(c, "u1", 300, 302);
                feed(c, "u2", 301, 303);
                feed(c, "u3", 302, 304);
                store_mark_users(c, "u1");
                store_mark_users(c, "u2");
                store_mark_users(c, "u3");
                store_mark_users(c, "not-there"); /* nothing happens */
                is_int(store_prune(c, T0 + 400 * 60), 2, "over a cap of 3: two dropped");
                ok(store_find(c, "system") && store_find(c, "root-short") && store_find(c, "u3") && !store_find(c, "u1") &&
                           !store_find(c, "u2"),
                   "the users' mounts seen longest ago went; root's passing mount and the system's stay");
                is_int(store_prune(c, T0 + 400 * 60), 0, "at the cap: nothing more");
                store_free(c);

                store_new(dir, sp, nsp, 1, &c);
                feed(c, "system", 0, 120);
                feed(c, "root-short", 200, 205);
                is_int(store_prune(c, T0 + 400 * 60), 1, "over a cap of 1: one dropped");
                ok(store_find(c, "system") && !store_find(c, "root-short"),
                   "a passing mount goes before the system's, though seen later");
                store_free(c);
        }
        {
                /* A finest ring shorter than an hour: the next ring tells
                 * how long a history spans. */
                struct stats_ring_spec short_rings[2];
                unsigned ns;
                Store *c = NULL;

                stats_parse_rings("1min:10min, 1h:1d", short_rings, &ns);
                store_new(dir, short_rings, ns, 1, &c);
                feed(c, "system", 0, 180);       /* three hours */
                feed(c, "half-hour", 200, 230); /* its finest ring full, yet passing */
                is_int(store_prune(c, T0 + 300 * 60), 1, "short finest ring: one dropped");
                ok(store_find(c, "system") && !store_find(c, "half-hour"),
                   "short finest ring: the half-hour mount passed, the three-hour one stays");
                store_free(c);
        }

        /* A state dir that cannot be written: errors, then recovery. */
        {
                Store *c = NULL;
                char missing[256];

                snprintf(missing, sizeof missing, "%s/sub", dir);
                store_new(missing, sp, nsp, 0, &c);
                feed(c, "k", 0, 10);
                ok(store_flush(c, T0 + 86400, false) < 0, "a missing state dir fails the flush");
                mkdir(missing, 0700);
                feed(c, "k", 10, 12);
                ok(store_flush(c, T0 + 86400, false) == 0, "once it exists, the next flush succeeds");
                store_free(c);
                store_new(missing, sp, nsp, 0, &b);
                store_load(b, T0 + 86400, &rep);
                ok(store_find(b, "k") && store_find(b, "k")->rings[0].count == 12, "and lost nothing");
                store_load_report_done(&rep);
                store_free(b);
        }

        /* 90 days of history for 100 mounts loads well under a second (the
         * figure on an optimised build is in BENCHMARKS.md; this bound only
         * catches a gross regression, sanitizers included). */
        {
                Store *c = NULL;
                struct timespec t0, t1;
                double ms;

                clear_dir();
                store_new(dir, sp, nsp, 0, &c);
                for (int m = 0; m < 100; m++) {
                        char key[64];

                        snprintf(key, sizeof key, "uuid=%d target=/m%d", m, m);
                        for (int64_t t = T0 - 90LL * 86400; t < T0; t += t < T0 - 7 * 86400 ? 3600 : t < T0 - 6 * 3600 ? 600 : 60) {
                                struct stats_sample x = { .t = t, .has_activity = true, .per_min = 1, .has_policy = true };
                                store_add(c, key, &x);
                        }
                }
                store_flush(c, T0, true);
                store_free(c);
                clock_gettime(CLOCK_MONOTONIC, &t0);
                b = reload(&rep);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                ms = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
                /* How fast is bench/store-load's to say, not a test's. */
                ok(rep.mounts == 100 && store_find(b, "uuid=7 target=/m7")->rings[2].count == 2160,
                   "90 days of 100 mounts loaded (in %.0f ms)", ms);
                store_load_report_done(&rep);
                store_free(b);
        }

        /* Keys: any length a mount can have, escaped so fields read back,
         * compared whole. */
        {
                _cleanup_free_ char *k1 = NULL, *k2 = NULL, *k3 = NULL, *target = malloc(3034), *source = malloc(1501);
                Store *c = NULL;

                memset(target, 't', 3033);
                target[0] = '/';
                target[3033] = 0;
                memset(source, 's', 1500);
                source[1500] = 0;
                ok(store_key_format(NULL, source, "tmpfs", "/", target, &k1) == 0 && strlen(k1) > 4096,
                   "a key of %zu bytes (3,033-byte target, 1,500-byte source)", k1 ? strlen(k1) : 0);
                ok(store_key_format(NULL, "x", "fuse", "/", "/tmp/evil target=/victim", &k2) == 0 &&
                           streq(k2, "source=x fstype=fuse target=/tmp/evil\\x20target=/victim"),
                   "a space in a target is escaped: %s", k2);
                ok(store_key_format("U", NULL, NULL, "/sub dir", "/m\\n\n", &k3) == 0 &&
                           streq(k3, "uuid=U root=/sub\\x20dir target=/m\\x5cn\\x0a"),
                   "so are backslashes and control bytes: %s", k3);
                ok(!store_key_has_target(k2, "/victim"), "a target is not matched by its ending");
                ok(store_key_has_target(k2, "/tmp/evil target=/victim"), "but whole, escaped");
                ok(store_key_has_target(k3, "/m\\n\n") && !store_key_has_target(k3, "/m\\n"), "exactly");
                ok(!store_key_has_target("source=x fstype=fuse target=/tmp/evil target=/victim", "/victim") &&
                           !store_key_has_target("source=x fstype=fuse target=/tmp/evil target=/victim", "/tmp/evil"),
                   "an old unescaped key with two targets names none");

                clear_dir();
                store_new(dir, sp, nsp, 0, &c);
                feed(c, k1, 0, 10);
                feed(c, "uuid=1 target=/a", 0, 10);
                feed(c, "uuid=2 target=/b", 0, 10);
                ok(store_flush(c, T0 + 86400, true) == 0, "a snapshot with the long key");
                feed(c, k1, 10, 20);
                feed(c, "uuid=1 target=/a", 10, 20);
                ok(store_flush(c, T0 + 86400, false) == 0, "and a journal block");
                b = reload(&rep);
                ok(rep.mounts == 3 && same(b, c) && !rep.problems, "every history loaded back, the long one too");
                store_load_report_done(&rep);
                store_free(b);
                {
                        char *huge = malloc(STORE_KEY_MAX + 2);
                        struct stats_sample x = { .t = T0, .has_activity = true };

                        memset(huge, 'k', STORE_KEY_MAX + 1);
                        huge[STORE_KEY_MAX + 1] = 0;
                        ok(store_add(c, huge, &x) == -ENAMETOOLONG && store_n_mounts(c) == 3,
                           "a key too long for the files is refused, before it is written");
                        free(huge);
                }
                store_free(c);

                /* Two histories of one key in a snapshot (as from a bug): the
                 * repeated one dropped, the others kept. */
                clear_dir();
                store_new(dir, sp, nsp, 0, &c);
                feed(c, "uuid=1 target=/a", 0, 5);
                feed(c, "uuid=1 target=/b", 0, 5);
                feed(c, "uuid=2 target=/c", 0, 5);
                store_flush(c, T0 + 86400, true);
                store_free(c);
                {
                        /* "/b" becomes "/a": same length, a repeat, out of order;
                         * the checksum is made good again. */
                        char path[256];
                        _cleanup_free_ uint8_t *buf = NULL;
                        FILE *f;
                        long n;

                        snprintf(path, sizeof path, "%s/history", dir);
                        f = fopen(path, "r+b");
                        buf = malloc(1 << 20);
                        n = f ? (long) fread(buf, 1, 1 << 20, f) : 0;
                        for (long i = 0; i + 16 < n; i++)
                                if (memcmp(buf + i, "uuid=1 target=/b", 16) == 0)
                                        buf[i + 15] = 'a';
                        {
                                uint32_t crc = 0xFFFFFFFFu;
                                for (long i = 0; i < n - 4; i++) {
                                        crc ^= buf[i];
                                        for (int k = 0; k < 8; k++)
                                                crc = crc & 1 ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
                                }
                                crc ^= 0xFFFFFFFFu;
                                buf[n - 4] = (uint8_t) crc;
                                buf[n - 3] = (uint8_t) (crc >> 8);
                                buf[n - 2] = (uint8_t) (crc >> 16);
                                buf[n - 1] = (uint8_t) (crc >> 24);
                        }
                        if (f) {
                                rewind(f);
                                fwrite(buf, 1, (size_t) n, f);
                                fclose(f);
                        }
                }
                b = reload(&rep);
                ok(rep.mounts == 2 && store_find(b, "uuid=1 target=/a") && store_find(b, "uuid=2 target=/c") &&
                           has_problem(&rep, "bad or repeated key") && !aside_exists("history.corrupt"),
                   "a repeated key drops that history alone (loaded %zu)", rep.mounts);
                store_load_report_done(&rep);
                store_free(b);
        }

        /* The btrfs model learned through a mount survives a restart, in
         * history.changes; a damaged one costs that file, nothing else. */
        {
                Store *c = NULL;
                const struct stats_unshare_model m = { .bytes = 2048000, .inodes = 3810.5, .hits = 381, .intervals = 7 };
                const MountHistory *h;
                char path[300];
                FILE *f;

                clear_dir();
                store_new(dir, sp, nsp, 0, &c);
                feed(c, "uuid=b target=/btrfs", 0, 10);
                store_set_unshare_model(c, "uuid=b target=/btrfs", &m);
                store_set_unshare_model(c, "uuid=none target=/x", &m); /* no history: nothing */
                ok(store_flush(c, T0 + 86400, false) == 0, "a flush with a btrfs model");
                store_free(c);
                b = reload(&rep);
                h = b ? store_find(b, "uuid=b target=/btrfs") : NULL;
                ok(h && h->unshare_model.bytes == m.bytes && h->unshare_model.inodes == m.inodes &&
                           h->unshare_model.hits == m.hits && h->unshare_model.intervals == 7 && !rep.problems,
                   "the model reads back after a restart (%.0f bytes over %.1f inodes, 7 intervals)",
                   h ? h->unshare_model.bytes : 0, h ? h->unshare_model.inodes : 0);
                store_load_report_done(&rep);
                store_free(b);

                snprintf(path, sizeof path, "%s/%s", dir, STORE_CHANGES);
                f = fopen(path, "we");
                if (f) {
                        fputs("{\"version\":1,\"histories\":[{\"key\":\"uuid=b target=/btrfs\","
                              "\"unshare_model\":{\"bytes\":-5,\"inodes\":1,\"hits\":1,\"intervals\":1}}]}\n", f);
                        fclose(f);
                }
                b = reload(&rep);
                h = b ? store_find(b, "uuid=b target=/btrfs") : NULL;
                ok(h && h->unshare_model.intervals == 0 && h->rings[0].count == 10 && has_problem(&rep, STORE_CHANGES) &&
                           aside_exists(STORE_CHANGES),
                   "a model with negative bytes: the changes file is moved aside (%s), the history kept",
                   rep.problems ? rep.problems[0] : "nothing said");
                store_load_report_done(&rep);
                store_free(b);
        }

        store_free(a);
        test_flusher();
        {
                char cmd[256];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        printf("# could not remove %s\n", dir);
        }
        return tap_done();
}
