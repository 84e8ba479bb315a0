/* sampler-sweep.c: the statx sweeps of a sampler's reservoir, the fine
 * sweeps, and what the sample says of the inodes written since a time
 * (see sampler.h). */
#include "sampler-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "time-util.h"

/* Finds a sampled inode again as the walk found it: beneath the mount, no
 * symlink followed, no mount crossed. */
static int statx_beneath(int rootfd, const char *rel, struct statx *stx, int64_t *when) {
        _cleanup_close_ int fd = open_beneath(rootfd, rel, O_PATH);

        if (fd < 0)
                return -errno;
        /* The look's time is taken before its statx, never after: the
         * atime it reads is at least as new as this time, so every whole
         * tick between that atime and this time is known to hold no
         * update. A time taken after could lie ticks later on a busy host
         * (the observer preempted between the two calls, at Nice=10 behind
         * readers that use every CPU), and those ticks, which may hold
         * updates the statx came too early to see, would count as empty. */
        *when = now_coarse_ns();
        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
                  STATX_ATIME | STATX_MTIME | STATX_CTIME | STATX_INO | STATX_MNT_ID | STATX_NLINK, stx) < 0)
                return -errno;
        return 0;
}

/* ---------------------------------------------------------------- sweeps */

/* Inodes that moved after being idle are looked at this many times, this
 * far apart, right after the sweep that found them: their rate over the
 * interval is extrapolated from what these looks see (estimate.h). */
#define BURST_LOOKS 5
#define BURST_SPACING_NS (50 * 1000 * 1000)
/* An inode that moved stays in the fine sweep for this many intervals. */
#define HOT_INTERVALS 2

static int64_t atime_ns(const SampleEntry *e) {
        return e->atime_sec * 1000000000 + e->atime_nsec;
}

/* The tick atimes are counted in: the coarse clock's resolution, or a
 * second where no atime has a fraction (ext4 with 128-byte inodes, FAT). */
static int64_t tick_ns(const Sampler *s, const Reservoir *res) {
        return res->fine_times ? s->clock_tick : MAX(s->clock_tick, (int64_t) 1000000000);
}

/* The tick to count in now, having forgotten what the entries learnt in
 * another. A filesystem whose sampled atimes all have whole seconds so far
 * (made by mkfs.ext4 -d, restored by a tool that sets seconds only) is
 * counted in seconds until a read writes an atime of the clock's own tick:
 * then ages and empty spans learnt in seconds would read as ticks, 250
 * times as many updates, and the windows' bounds would hold every rate
 * that high for a minute. The updates credited so far stand (a count, in
 * no unit); the ticks they leave unseen are rescaled, and each of those
 * may hold an update (a bound learnt in seconds allows one a second).
 * Called before any look is taken as evidence, and again when a sweep's
 * looks are in (the first atime with a fraction may be among them). */
static int64_t reservoir_tick(const Sampler *s, Reservoir *res) {
        int64_t tick = tick_ns(s, res);

        if (res->rate_tick > 0 && res->rate_tick != tick)
                for (size_t i = 0; i < res->n; i++) {
                        SampleEntry *e = &res->v[i];

                        e->rate = (struct inode_rate) {};
                        e->credit.unseen *= (double) res->rate_tick / (double) tick;
                        e->credit.hi = fmax(e->credit.hi, e->credit.seen + e->credit.unseen);
                }
        res->rate_tick = tick;
        return tick;
}

/* statx()es one entry beneath the mount; false if it is gone (deleted,
 * replaced, or now under another mount). */
static bool entry_stat(int rootfd, const struct sampler_place *pl, const SampleEntry *e, struct statx *stx,
                       int64_t *when) {
        if (statx_beneath(rootfd, e->path, stx, when) < 0)
                return false;
        return stx->stx_ino == e->ino && (!(stx->stx_mask & STATX_MNT_ID) || stx->stx_mnt_id == (uint64_t) pl->mount_id);
}

/* The later of the inode's mtime and ctime; where statx cannot tell, the
 * end of time: every atime is then taken as stale. */
static int64_t modified_ns(const struct statx *stx) {
        int64_t m, c;

        if ((stx->stx_mask & (STATX_MTIME | STATX_CTIME)) != (STATX_MTIME | STATX_CTIME))
                return INT64_MAX;
        m = (int64_t) stx->stx_mtime.tv_sec * 1000000000 + stx->stx_mtime.tv_nsec;
        c = (int64_t) stx->stx_ctime.tv_sec * 1000000000 + stx->stx_ctime.tv_nsec;
        return MAX(m, c);
}

static void entry_record(Reservoir *res, SampleEntry *e, const struct statx *stx, int64_t when) {
        e->atime_sec = stx->stx_atime.tv_sec;
        e->atime_nsec = stx->stx_atime.tv_nsec;
        e->modified_ns = modified_ns(stx);
        e->ctime_ns = stx->stx_mask & STATX_CTIME
                              ? (int64_t) stx->stx_ctime.tv_sec * 1000000000 + stx->stx_ctime.tv_nsec
                              : 0;
        if (stx->stx_mask & STATX_NLINK)
                e->nlink = stx->stx_nlink;
        e->seen_ns = when;
        e->baseline = true;
        if (e->atime_nsec != 0)
                res->fine_times = true;
}

#define DAY_NS (86400LL * 1000000000)

/* Of 'credited' updates in a gap from atime a0 to a1, how many a relatime
 * mount could have made. relatime writes an atime that is not newer than
 * the inode's mtime or ctime, or is a day old; once written, the atime is
 * newer than both, so the gap's further updates came through a mount that
 * writes at every read. If the inode was changed in the gap, each read
 * after a change may have been relatime's: all are counted stale. */
static double stale_updates(int64_t a0, int64_t mod0, int64_t a1, int64_t mod1, double credited) {
        if (a0 > mod1 && a1 - a0 < DAY_NS)
                return 0;
        return mod1 > mod0 ? credited : fmin(1, credited);
}

/* A gap between two looks: ms the looks, as the atimes, mods the later of
 * mtime and ctime. */
struct gap {
        int64_t m0, a0, mod0, m1, a1, mod1;
};

/* Whether the atime that moved between two looks was set (utimensat(),
 * futimens()) rather than written by a read. Setting an atime sets the
 * ctime to now, and the atime to that same now or to the time asked for;
 * a read writes an atime of now, after any change of the inode (or in the
 * same tick). So a ctime that moved in the gap to a time not older than
 * the new atime, or an atime ahead of the clock, is a set. On a relatime
 * mount a read after a write writes an atime newer than that write's
 * ctime: a read. Kept apart from estimate.c's plausible_update(), which
 * still takes an implausible atime without a ctime to tell (a clock
 * stepped back) as one update. */
static bool atime_was_set(int64_t c0, int64_t c1, int64_t a0, int64_t a1, int64_t m1, int64_t tick) {
        return a1 != a0 && c0 > 0 && c1 > 0 && c1 != c0 && (a1 <= c1 || a1 > m1 + tick);
}

/* Credits a gap's updates to the entry, then learns its rate from it
 * ('at_random': the look that ends it came at a random time, not the timed
 * sweep's: estimate_learn()). */
static void credit_gap(SampleEntry *e, const struct gap *g, int64_t tick, bool at_random) {
        double before = e->credit.n;

        if (estimate_credit(&e->rate, g->m0, g->a0, g->m1, g->a1, tick, &e->credit))
                e->credit_stale += stale_updates(g->a0, g->mod0, g->a1, g->mod1, e->credit.n - before);
        estimate_learn(&e->rate, g->m0, g->a0, g->m1, g->a1, tick, at_random);
}

/* One look at an entry after the last: credits the updates in between to
 * the entry and learns its rate from them (unless 'defer': the caller
 * credits that gap later, once the looks after it are in; 'at_random' as
 * credit_gap()'s). Returns 1 if the atime moved, 0 if not, 2 if it was set
 * (atime_was_set(): nothing credited or learnt), -1 if the entry is gone. */
static int entry_look(Reservoir *res, SampleEntry *e, int rootfd, const struct sampler_place *pl, int64_t tick,
                      bool defer, bool at_random) {
        struct gap g = { .m0 = e->seen_ns, .a0 = atime_ns(e), .mod0 = e->modified_ns };
        int64_t c0 = e->ctime_ns;
        struct statx stx;
        int64_t when;

        if (!entry_stat(rootfd, pl, e, &stx, &when)) {
                e->gone = true;
                return -1;
        }
        if (!e->baseline) {
                entry_record(res, e, &stx, when);
                e->interval_ns = e->seen_ns;
                return 0;
        }
        if (e->looks < UINT16_MAX)
                e->looks++;
        g.m1 = when;
        g.a1 = (int64_t) stx.stx_atime.tv_sec * 1000000000 + stx.stx_atime.tv_nsec;
        g.mod1 = modified_ns(&stx);
        if (g.mod1 != g.mod0)
                e->modified = true;
        entry_record(res, e, &stx, g.m1);
        if (!pl->sets_as_reads && atime_was_set(c0, e->ctime_ns, g.a0, g.a1, g.m1, tick)) {
                e->set = true;
                return 2;
        }
        if (!defer)
                credit_gap(e, &g, tick, at_random);
        if (g.a1 == g.a0)
                return 0;
        e->moved = true;
        return 1;
}

/* Whether the writer's mount shows the inode at fspath (its path from the
 * filesystem's root) and may write its atime. */
static bool writer_covers(const struct sampler_writer *w, const char *fspath, bool dir) {
        const char *rest = streq(w->fs_root, "/") ? fspath : startswith(fspath, w->fs_root);

        return rest && (*rest == 0 || *rest == '/') && !(dir && w->nodiratime);
}

/* Calls f for each writer through which the entry's atime can have been
 * written, with the entry's share of it: its stale updates (which any of
 * them could have made) split evenly among them all, the rest among those
 * that write at every read. Where no such mount shows it (an atime set by
 * utimensat, say), all of it among them all. */
static void for_each_writer(const struct sampler_place *pl, struct sampler_writer *writers, size_t n_writers,
                            const SampleEntry *e, void (*f)(struct sampler_writer *w, const SampleEntry *e, double share)) {
        char fspath[PATH_MAX];
        size_t any = 0, every = 0;
        double stale;

        snprintf(fspath, sizeof fspath, "%s/%s", streq(pl->fs_root, "/") ? "" : pl->fs_root,
                 streq(e->path, ".") ? "" : e->path);
        for (size_t w = 0; w < n_writers; w++)
                if (writer_covers(&writers[w], fspath, e->dir)) {
                        any++;
                        every += !writers[w].relatime;
                }
        if (any == 0)
                return;
        stale = every == 0 || e->credit.n <= 0 ? 1 : CLAMP(e->credit_stale / e->credit.n, 0.0, 1.0);
        for (size_t w = 0; w < n_writers; w++)
                if (writer_covers(&writers[w], fspath, e->dir))
                        f(&writers[w], e, stale / (double) any + (writers[w].relatime ? 0 : (1 - stale) / (double) every));
}

double sampler_entry_weight(const SampleEntry *e) {
        return !e->dir && e->nlink > 1 ? 1.0 / e->nlink : 1.0;
}

int sampler_count_since(const Sampler *s, int64_t since, struct sampler_since *ret) {
        const Reservoir *r = s ? s->current : NULL;
        double hits[_STRATUM_MAX] = {}, dirs[_STRATUM_MAX] = {};
        uint64_t n[_STRATUM_MAX] = {};

        *ret = (struct sampler_since) {};
        if (!r || r->partial)
                return -EAGAIN;
        for (size_t i = 0; i < r->n; i++) {
                const SampleEntry *e = &r->v[i];

                if (e->gone || !e->baseline || e->stratum >= _STRATUM_MAX)
                        continue;
                n[e->stratum]++;
                if (e->atime_sec < since)
                        continue;
                hits[e->stratum] += sampler_entry_weight(e);
                dirs[e->stratum] += e->dir;
        }
        for (unsigned k = 0; k < _STRATUM_MAX; k++) {
                struct estimate est;
                uint64_t pop = MAX(r->stratum_population[k], n[k]);

                /* Over 60 s, a per-minute figure is the count itself. */
                if (n[k] == 0 || estimate_activity(fmin(hits[k], (double) n[k]), n[k], pop, 60, &est) < 0)
                        continue;
                ret->inodes += est.per_min;
                ret->lo += est.lo;
                ret->hi += est.hi;
                ret->dirs += hits[k] > 0 ? est.per_min * dirs[k] / hits[k] : 0;
                ret->hits += hits[k];
                ret->sample += n[k];
        }
        return ret->sample > 0 ? 0 : -EAGAIN;
}

static void add_changed(struct sampler_writer *w, const SampleEntry *e, double share) {
        w->changed[e->stratum] += share * sampler_entry_weight(e);
}

static void add_updates(struct sampler_writer *w, const SampleEntry *e, double share) {
        update_totals_add(&w->updates[e->stratum], &e->credit, share * sampler_entry_weight(e));
}

/* A gap whose credit waits for the looks after it. */
struct deferred {
        SampleEntry *e;
        struct gap g;
};

/* Looks again at the entries that moved after being idle, BURST_LOOKS
 * times, then credits their gap over the interval from the rate those looks
 * found: the past said nothing of a rate that has just begun. */
static int burst(Reservoir *res, int rootfd, const struct sampler_place *pl, int64_t tick, struct deferred *d,
                 size_t n, const atomic_bool *cancel, struct sweep_result *out) {
        _cleanup_free_ uint8_t *moves = n > 0 ? calloc(n, 1) : NULL;

        for (unsigned k = 0; k < BURST_LOOKS && n > 0; k++) {
                /* Spaced at random as the fine sweep's: at a fixed
                 * spacing a reader at twice it is seen at the same ages. */
                struct timespec ts = { 0, (long) jittered(BURST_SPACING_NS) };

                if (atomic_load(cancel))
                        return -ECANCELED;
                (void) nanosleep(&ts, NULL);
                for (size_t i = 0; i < n; i++)
                        if (!d[i].e->gone && entry_look(res, d[i].e, rootfd, pl, tick, false, true) == 1 && moves)
                                moves[i]++;
        }
        for (size_t i = 0; i < n; i++) {
                credit_gap(d[i].e, &d[i].g, tick, false);
                /* Read again within a few looks: a file that turned hot
                 * after the walk, and as the sample drew it from the rest,
                 * others like it may have turned hot where no look sees. */
                out->woke_hot += moves && moves[i] >= 2;
        }
        return 0;
}

/* A reader is taken to have stopped once its inode has gone this many of
 * its mean gaps without an update. */
#define STOPPED_GAPS 5.0

/* Settles an entry's credit on the rate its ages give, over the interval;
 * for a reader that stopped, over the part of it up to its last update and
 * one mean gap after. (Cut short at every last update, a reader slower
 * than a few updates an interval would lose the rest of its interval
 * each time, when the next one is only later in coming.) */
static void settle(SampleEntry *e, int64_t tick) {
        double q, full, span;

        if (!estimate_rate(&e->rate, &q))
                return;
        full = (double) (e->seen_ns - e->interval_ns) / (double) tick;
        span = full;
        if (q > 0 && (double) (e->seen_ns - atime_ns(e)) / (double) tick > STOPPED_GAPS / q)
                span = (double) (atime_ns(e) - e->interval_ns) / (double) tick + 1 / q;
        estimate_settle(&e->rate, e->looks, CLAMP(span, 0.0, full), &e->credit);
}

/* The end of an interval for every entry: its credit goes to the totals,
 * and what it keeps into the next is aged. */
static void close_interval(Reservoir *res, const struct sampler_place *pl, struct sampler_writer *writers,
                           size_t n_writers, double seconds, int64_t tick, struct sweep_result *out) {
        res->n_hot = 0;
        for (size_t i = 0; i < res->n; i++) {
                SampleEntry *e = &res->v[i];

                if (e->gone)
                        continue;
                settle(e, tick);
                if (e->set)
                        out->sets[e->stratum] += sampler_entry_weight(e);
                if (e->changed)
                        for_each_writer(pl, writers, n_writers, e, add_changed);
                out->modified += e->modified;
                if (e->credit.n > 0 || e->credit.seen > 0) {
                        e->credit.writebacks = estimate_writebacks(e->credit.n, seconds, pl->commit_s);
                        update_totals_add(&out->updates, &e->credit, sampler_entry_weight(e));
                        for_each_writer(pl, writers, n_writers, e, add_updates);
                }
                e->credit = (struct update_credit) {};
                e->credit_stale = 0;
                e->changed = false;
                e->modified = false;
                e->set = false;
                e->looks = 0;
                e->interval_ns = e->seen_ns;
                e->hot = e->moved ? HOT_INTERVALS : e->hot > 0 ? e->hot - 1 : 0;
                e->moved = false;
                res->n_hot += e->hot > 0;
                estimate_decay(&e->rate, seconds);
        }
}

/* statx()es every entry, counting moved atimes among those with a baseline
 * and attributing them to writers; inodes that moved after being idle get a
 * burst of looks; then the interval's credits are totalled. */
static int sweep_entries(Sampler *s, Reservoir *res, int rootfd, const struct sampler_place *pl,
                         struct sampler_writer *writers, size_t n_writers, double seconds, const atomic_bool *cancel,
                         struct sweep_result *out) {
        _cleanup_free_ struct deferred *d = NULL;
        int64_t tick = reservoir_tick(s, res);
        size_t n_d = 0;
        int r;

        for (size_t i = 0; i < res->n; i++) {
                SampleEntry *e = &res->v[i];
                struct deferred g = { e, { .m0 = e->seen_ns, .a0 = atime_ns(e), .mod0 = e->modified_ns } };
                bool was_hot = e->hot > 0;

                if (atomic_load(cancel))
                        return -ECANCELED;
                if (e->gone)
                        continue;
                r = entry_look(res, e, rootfd, pl, tick, !was_hot, false);
                if (r < 0) {
                        out->gone++;
                        continue;
                }
                out->sample++;
                out->stratum_sample[e->stratum]++;
                if (r == 2)
                        continue;
                if (r == 0) {
                        if (!was_hot)
                                estimate_learn(&e->rate, g.g.m0, g.g.a0, e->seen_ns, atime_ns(e), tick, false);
                        continue;
                }
                out->changed++;
                e->changed = true;
                if (was_hot)
                        continue;
                /* It woke: what its rate was while idle (a minute's worth
                 * of long ages and empty ticks) says nothing of the reader
                 * that has just begun, and would hold its rate low for as
                 * long as the memory lasts. */
                e->rate = (struct inode_rate) {};
                if (!d && !(d = calloc(res->n, sizeof *d)))
                        return -ENOMEM;
                g.g.m1 = e->seen_ns;
                g.g.a1 = atime_ns(e);
                g.g.mod1 = e->modified_ns;
                d[n_d++] = g;
        }
        /* The looks may have found the first atime with a fraction: the
         * burst, the deferred gaps and the interval's close count in it. */
        tick = reservoir_tick(s, res);
        r = burst(res, rootfd, pl, tick, d, n_d, cancel, out);
        if (r < 0)
                return r;
        close_interval(res, pl, writers, n_writers, seconds, tick, out);
        out->tick_ns = tick;
        return 0;
}

/* Records every entry's atime: the baseline of a new reservoir. */
static int baseline_entries(Reservoir *res, int rootfd, const struct sampler_place *pl, const atomic_bool *cancel) {
        for (size_t i = 0; i < res->n; i++) {
                SampleEntry *e = &res->v[i];
                struct statx stx;
                int64_t when;

                if (atomic_load(cancel))
                        return -ECANCELED;
                if (e->gone)
                        continue;
                if (!entry_stat(rootfd, pl, e, &stx, &when)) {
                        e->gone = true;
                        continue;
                }
                entry_record(res, e, &stx, when);
                e->interval_ns = e->seen_ns;
                e->looks = 0;
        }
        return 0;
}

static int cmp_entry_ino(const void *a, const void *b) {
        const SampleEntry *x = *(SampleEntry *const *) a, *y = *(SampleEntry *const *) b;

        return (x->ino > y->ino) - (x->ino < y->ino);
}

/* A new reservoir keeps what the old one knew of the inodes in both: their
 * rates, and which ones to look at every second. */
static void carry_over(const Reservoir *old, Reservoir *new) {
        _cleanup_free_ SampleEntry **idx = NULL;
        size_t n = 0;

        if (!old || old->n == 0)
                return;
        /* The filesystem keeps fractions if the old sample showed one; the
         * rates carried were learnt in the old one's tick. */
        new->fine_times = new->fine_times || old->fine_times;
        new->rate_tick = old->rate_tick;
        if (!(idx = calloc(old->n, sizeof *idx)))
                return; /* without memory to spare, the rates are learnt again */
        for (size_t i = 0; i < old->n; i++)
                if (!old->v[i].gone)
                        idx[n++] = &old->v[i];
        qsort(idx, n, sizeof *idx, cmp_entry_ino);
        new->n_hot = 0;
        for (size_t i = 0; i < new->n; i++) {
                SampleEntry *e = &new->v[i], key = { .ino = e->ino }, *kp = &key, **found;

                found = n ? bsearch(&kp, idx, n, sizeof *idx, cmp_entry_ino) : NULL;
                if (!found || !streq((*found)->path, e->path))
                        continue;
                e->rate = (*found)->rate;
                e->hot = (*found)->hot;
                new->n_hot += e->hot > 0;
        }
}

/* And what the walk knew: an inode it found read in the tenth of a second
 * before (the hot stratum, a quarter of the sample at most) is looked at
 * every second from its first interval on, as if it had moved, and not only
 * at the sweeps: few looks leave its rate to the first estimate, twice too
 * high for a reader at regular times (estimate.h). */
static void mark_walk_hot(Reservoir *res) {
        res->n_hot = 0;
        for (size_t i = 0; i < res->n; i++) {
                SampleEntry *e = &res->v[i];

                if (e->hot == 0 && e->stratum == STRATUM_HOT)
                        e->hot = 1;
                res->n_hot += e->hot > 0;
        }
}

/* The filesystem's free blocks and inodes at the sweep: nothing was
 * allocated or freed while they stay; and its inodes in use. */
static void sweep_statfs(int fd, struct sweep_result *res) {
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return;
        res->have_statfs = true;
        res->free_blocks = (uint64_t) sfs.f_bfree;
        res->free_inodes = (uint64_t) sfs.f_ffree;
        res->used_inodes = sfs.f_files > sfs.f_ffree ? (uint64_t) (sfs.f_files - sfs.f_ffree) : 0;
}

int sampler_sweep(Sampler *s, const struct sampler_place *pl, struct sampler_writer *writers, size_t n_writers,
                  uint64_t now_usec, uint64_t min_usec, const atomic_bool *cancel, struct sweep_result *ret) {
        struct sweep_result res = {};
        _cleanup_close_ int fd = -1;
        bool compared = false, too_soon;
        int r;

        *ret = res;
        if (!sampler_can_sweep(s))
                return -EAGAIN;
        too_soon = s->current && s->last_sweep > 0 && now_usec < s->last_sweep + min_usec;
        /* A first walk under way: the part walked so far is measured over
         * the next interval (never swapped in where the one before it was
         * not measured yet). */
        if (walk_drew(s->walk) && !s->next && (!s->current || (s->current->partial && !too_soon))) {
                r = walk_snapshot(s->walk, &s->next);
                if (r < 0)
                        return r;
        }
        if (too_soon && !s->next)
                return -EAGAIN; /* a short interval is never scaled up to a rate */
        fd = open_place(pl, O_PATH);
        if (fd < 0)
                return fd;
        sweep_statfs(fd, &res);
        for (size_t w = 0; w < n_writers; w++)
                for (unsigned k = 0; k < _STRATUM_MAX; k++) {
                        writers[w].changed[k] = 0;
                        writers[w].updates[k] = (struct update_totals) {};
                }
        if (s->current && s->last_sweep > 0 && !too_soon) {
                res.seconds = (double) (now_usec - s->last_sweep) / 1e6;
                r = sweep_entries(s, s->current, fd, pl, writers, n_writers, res.seconds, cancel, &res);
                if (r < 0)
                        return r;
                res.valid = res.sample > 0;
                res.partial = s->current->partial;
                res.population = (uint64_t) llround(fmax(1, s->current->inodes));
                memcpy(res.stratum_population, s->current->stratum_population, sizeof res.stratum_population);
                compared = true;
        }
        if (s->next) {
                carry_over(s->current, s->next);
                mark_walk_hot(s->next);
                reservoir_free(s->current);
                s->current = TAKE_PTR(s->next);
                compared = false;
        }
        if (!compared) {
                /* A new reservoir (or the first sweep): record its baseline. */
                r = baseline_entries(s->current, fd, pl, cancel);
                if (r < 0)
                        return r;
        }
        s->last_sweep = now_usec;
        *ret = res;
        return 0;
}

int sampler_fine_sweep(Sampler *s, const struct sampler_place *pl, const atomic_bool *cancel) {
        Reservoir *res = s->current;
        _cleanup_close_ int fd = -1;
        int64_t tick;
        int looked = 0;

        if (!sampler_has_hot(s))
                return 0;
        fd = open_place(pl, O_PATH);
        if (fd < 0)
                return fd;
        tick = reservoir_tick(s, res);
        for (size_t i = 0; i < res->n; i++) {
                SampleEntry *e = &res->v[i];

                if (atomic_load(cancel))
                        return -ECANCELED;
                if (e->gone || !e->baseline || e->hot == 0)
                        continue;
                (void) entry_look(res, e, fd, pl, tick, false, true);
                looked++;
        }
        return looked;
}
