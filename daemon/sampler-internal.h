/* sampler-internal.h: what sampler.c (the sampler's life, the walk) and
 * sampler-sweep.c (the sweeps) share, and what test-sampler looks into:
 * the reservoirs and the walk. No other file includes it: the Sampler is
 * opaque to all others (sampler.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sampler.h"

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

struct Sampler {
        unsigned k;
        uint64_t rng;
        Reservoir *current; /* what sweeps compare */
        Reservoir *next;    /* a finished walk, swapped in at the next sweep */
        Walk *walk;         /* a walk in progress */
        uint64_t last_sweep; /* CLOCK_MONOTONIC usec of the last sweep; 0: none yet */
        int64_t clock_tick;  /* ns: the resolution of the clock atimes come from */
        bool lent;           /* a job holds it (sampler_lend()): its lender may not look */
};

/* A sampled name's share of its inode: 1/nlink for a file with hard links,
 * 1 otherwise. The walk offers every name, so an inode with n names is
 * n times as likely to be drawn; each draw weighs 1/n, and every total of
 * the sample (changes, updates, the population) counts each inode once,
 * with no memory per inode. */
double sampler_entry_weight(const SampleEntry *e);

/* What sampler_view() gives, one by one. */
uint64_t sampler_walk_seen(const Sampler *s);
/* The inodes in use when the walk began, by statfs(); 0: unknown. */
uint64_t sampler_walk_inodes_hint(const Sampler *s);
/* Whether a fine sweep has anything to look at. */
bool sampler_has_hot(const Sampler *s);
/* Whether a sweep has something to measure or a baseline to take: a
 * reservoir, or a first walk that has drawn some of one. */
bool sampler_can_sweep(const Sampler *s);
/* Whether every figure rests on a whole walk's sample (false while the
 * first walk runs). */
bool sampler_whole(const Sampler *s);

/* sampler.c, for the sweeps. */
void entries_free(SampleEntry *v, size_t n);
Reservoir *reservoir_free(Reservoir *r);
Walk *walk_free(Walk *w);
/* A copy of a first walk's reservoir so far (sampler_sweep()). */
int walk_snapshot(const Walk *w, Reservoir **ret);
/* Whether the walk has drawn any of its reservoir yet. */
bool walk_drew(const Walk *w);
/* Opens the mount point, checked to be the mount expected (-ESTALE), a
 * directory (-ENOTDIR). */
int open_place(const struct sampler_place *pl, int flags);
/* Opens 'rel' beneath rootfd: no symlink followed, no mount left, no
 * atime touched; -1 with errno. */
int open_beneath(int rootfd, const char *rel, int flags);
/* CLOCK_REALTIME_COARSE in ns: the clock atimes come from. */
int64_t now_coarse_ns(void);
