/* sampler.h: per-filesystem atime activity by sampling. A budgeted walk
 * builds a uniform reservoir of the filesystem's files and directories; each
 * interval a sweep statx()es the reservoir and counts the atimes that moved.
 * The walk statx()es what it offers: inodes whose atime was written in the
 * last tenth of a second (HOT) or the last seconds (FRESH) go to strata of
 * their own, sampled apart (up to a quarter of k more each), so that a few
 * hot files among many are measured, not left to the luck of a uniform draw
 * or diluted among the files read once just before the walk came by.
 * The inodes whose atime moved are looked at again every second (a fine
 * sweep) while they stay active, and once more a few times right after the
 * sweep that found them, so that each one's update rate is known and the
 * updates that no look can see are estimated (estimate.h).
 *
 * Neither ever changes an atime: directories are read through O_NOATIME
 * descriptors (a directory that cannot be opened so is skipped, never read
 * otherwise), files are never opened, statx() reads no data. Neither crosses
 * into another mount. Neither holds a descriptor between calls, so atimed
 * never keeps a filesystem busy against umount. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "estimate.h"
#include "macro.h"

typedef struct SampleEntry {
        char *path; /* relative to the mount walked */
        uint64_t ino;
        uint32_t nlink; /* its inode's names (hard links) at the last look; 0: unknown */
        int64_t atime_sec;
        uint32_t atime_nsec;
        int64_t seen_ns; /* CLOCK_REALTIME_COARSE of the last look */
        int64_t modified_ns; /* the later of mtime and ctime at the last look */
        int64_t ctime_ns;    /* the ctime at the last look; 0: unknown */
        struct inode_rate rate;
        struct update_credit credit; /* updates credited to this interval */
        double credit_stale;  /* of credit.n, the updates of a stale atime (see stale_updates()) */
        uint8_t hot;   /* intervals left to look at it every second */
        uint16_t looks; /* looks that compared, in this interval */
        int64_t interval_ns; /* the look that began this interval (CLOCK_REALTIME_COARSE) */
        bool moved;    /* its atime moved in this interval */
        bool changed;  /* the interval's sweep found it moved since the look before */
        bool modified; /* its mtime or ctime moved in this interval */
        bool set;      /* a look in this interval found its atime set, not read (see sampler_sweep()) */
        bool dir;      /* a directory (nodiratime mounts never write its atime) */
        uint8_t stratum; /* STRATUM_* */
        bool baseline; /* atime recorded by a sweep */
        bool gone;     /* no longer found: left out of every count */
} SampleEntry;

/* The strata of the sample. */
enum {
        STRATUM_REST,  /* every other inode: a uniform sample of k */
        STRATUM_FRESH, /* atime written in the seconds before the walk saw it: up to k / 4 */
        STRATUM_HOT,   /* atime written in the tenth of a second before: up to k / 4 */
        _STRATUM_MAX,
};

typedef struct Reservoir {
        SampleEntry *v;
        size_t n;
        uint64_t population; /* eligible entries (names) the walk saw */
        double inodes;       /* of those, inodes: each name weighs 1/nlink (see sampler_entry_weight()) */
        uint64_t stratum_population[_STRATUM_MAX];
        uint64_t skipped;    /* directories the walk could not read without O_NOATIME */
        size_t n_hot;        /* entries with hot > 0 */
        bool fine_times;     /* some atime had a fraction of a second */
        int64_t rate_tick;   /* ns: the tick its entries' rates were learnt in; 0: none yet */
        bool partial;        /* drawn from the part of the filesystem a first walk has seen so far */
} Reservoir;

typedef struct Walk Walk;

typedef struct Sampler {
        unsigned k;
        uint64_t rng;
        Reservoir *current; /* what sweeps compare */
        Reservoir *next;    /* a finished walk, swapped in at the next sweep */
        Walk *walk;         /* a walk in progress */
        uint64_t last_sweep; /* CLOCK_MONOTONIC usec of the last sweep; 0: none yet */
        int64_t clock_tick;  /* ns: the resolution of the clock atimes come from */
} Sampler;

/* Where the filesystem is reached: a mount of it. */
struct sampler_place {
        const char *target; /* the mount point */
        int mount_id;
        const char *fs_root; /* the mount's root inside the filesystem ("/" mostly) */
        double commit_s;     /* how often dirty inodes are written back (the journal's commit) */
        bool sets_as_reads;  /* atimes set by utimensat() taken as reads: for tests that stand for reads so */
};

/* A mount of the filesystem that lets atime be written, by its root inside
 * the filesystem and its policy; a sweep adds the changes it can see to
 * 'changed' and 'updates', each shared among the mounts that could have
 * made it: an update of an atime that was already newer than the inode's
 * mtime and ctime, and less than a day old, cannot come through a relatime
 * mount, nor a directory's through a nodiratime one (see atimed(8)). */
struct sampler_writer {
        const char *fs_root;
        bool relatime;   /* writes only a stale atime */
        bool nodiratime; /* never writes a directory's */
        double changed[_STRATUM_MAX];
        struct update_totals updates[_STRATUM_MAX];
};

struct sweep_result {
        bool valid;          /* an interval was measured (not just a baseline) */
        double seconds;      /* since the previous sweep */
        uint64_t sample;     /* inodes compared */
        uint64_t changed;    /* of which the atime moved */
        double sets[_STRATUM_MAX]; /* of the sample, inodes whose atime was set (utimensat), weighted */
        uint64_t population; /* inodes: a file with n names counts once (not the stratum populations,
                              * which count names) */
        uint64_t gone;       /* sampled inodes no longer found */
        uint64_t modified;   /* of those compared, the ones whose mtime or ctime moved */
        uint64_t woke_hot;   /* idle inodes found read again and again: others may have turned hot unseen */
        struct update_totals updates; /* credited over the interval, whole filesystem */
        uint64_t stratum_sample[_STRATUM_MAX];
        uint64_t stratum_population[_STRATUM_MAX];
        int64_t tick_ns;     /* the timestamp tick the updates were counted in */
        bool have_statfs;    /* statfs() answered at the sweep: */
        uint64_t free_blocks, free_inodes; /* nothing allocated or freed while they stay */
        uint64_t used_inodes; /* the filesystem's inodes in use, by statfs(); 0: unknown */
        bool partial;        /* the sample is of the part a first walk had seen (population): the rest,
                              * used_inodes - population, was not sampled (see sampler_sweep()) */
};

/* A sampled name's share of its inode: 1/nlink for a file with hard links,
 * 1 otherwise. The walk offers every name, so an inode with n names is
 * n times as likely to be drawn; each draw weighs 1/n, and every total of
 * the sample (changes, updates, the population) counts each inode once,
 * with no memory per inode. */
double sampler_entry_weight(const SampleEntry *e);

int sampler_new(unsigned k, uint64_t seed, Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_FREE_FUNC(Sampler, sampler_free);

/* Walks at most *budget directory entries, taking what it walks off
 * *budget. Returns 1 when the walk is complete (the new reservoir waits in
 * s->next), 0 when there is more to do, or -errno (-ESTALE: the mount is not
 * the one expected; -ENOTDIR: its root is a file, a file bind mount, and
 * there is nothing to walk). Blocking. */
int sampler_walk_step(Sampler *s, const struct sampler_place *pl, uint64_t *budget, const atomic_bool *cancel);
/* Walks as on a kernel without openat2() (before 5.6): for tests. */
void sampler_disable_openat2(void);
uint64_t sampler_walk_seen(const Sampler *s);
/* The inodes in use when the walk began, by statfs(); 0: unknown. */
uint64_t sampler_walk_inodes_hint(const Sampler *s);

/* Compares the reservoir with the previous sweep, then swaps in a finished
 * walk's reservoir. While the first walk runs (no finished reservoir yet),
 * each sweep that can measure swaps in instead a copy of the walk's
 * reservoir so far, marked partial: a uniform sample of the inodes the walk
 * has seen (Algorithm R is uniform over every prefix of what it is
 * offered), measured over the next interval. Its figures speak for that
 * part only; the caller bounds the rest (estimate_unseen()). An atime that moved together with the ctime and is not
 * newer than the new ctime (or is ahead of the clock) was set by
 * utimensat()/futimens() (touch -a, cp -p, tar, rsync, a restore), not
 * written by a read: no mount option would save it, so it is left out of
 * every figure and counted in 'sets' instead. (A read in the same tick as
 * a change of the inode looks the same, and is counted as a set.) An interval shorter than min_usec is not measured: the
 * sweep waits for the next one (the reservoir keeps its baseline). Returns
 * 0, -EAGAIN if there is nothing to sweep yet, -ECANCELED, or -errno
 * (-ESTALE as above). Blocking (about a quarter of a second more when
 * inodes that were idle have moved: they are looked at again at once). */
int sampler_sweep(Sampler *s, const struct sampler_place *pl, struct sampler_writer *writers, size_t n_writers,
                  uint64_t now_usec, uint64_t min_usec, const atomic_bool *cancel, struct sweep_result *ret);

/* Looks again at the inodes that moved lately (the fine sweep). Returns the
 * number looked at, -ECANCELED or -errno. Blocking. */
int sampler_fine_sweep(Sampler *s, const struct sampler_place *pl, const atomic_bool *cancel);
/* The inodes of the filesystem whose atime is at or after 'since' (Unix
 * seconds), by the sample: each stratum's share scaled to its population,
 * with 95% intervals added up (estimate_activity()). -EAGAIN while there
 * is no whole walk's sample (a first walk's part would speak for that part
 * only). For btrfs: the inodes written since its newest snapshot. */
struct sampler_since {
        double inodes, lo, hi; /* files and directories */
        double dirs;           /* of which directories */
        double hits;           /* the sampled inodes found so (weighted) */
        uint64_t sample;       /* of this many looked at */
};
int sampler_count_since(const Sampler *s, int64_t since, struct sampler_since *ret);

/* Whether a fine sweep has anything to look at. */
bool sampler_has_hot(const Sampler *s);
/* Whether a sweep has something to measure or a baseline to take: a
 * reservoir, or a first walk that has drawn some of one. */
bool sampler_can_sweep(const Sampler *s);
/* Whether every figure rests on a whole walk's sample (false while the
 * first walk runs). */
bool sampler_whole(const Sampler *s);
