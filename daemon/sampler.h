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
#include <stddef.h>
#include <stdint.h>

#include "estimate.h"
#include "macro.h"

/* The sampler is opaque: its reservoirs and walk are sampler.c's and
 * sampler-sweep.c's (sampler-internal.h). */
typedef struct Sampler Sampler;

/* The strata of the sample. */
enum {
        STRATUM_REST,  /* every other inode: a uniform sample of k */
        STRATUM_FRESH, /* atime written in the seconds before the walk saw it: up to k / 4 */
        STRATUM_HOT,   /* atime written in the tenth of a second before: up to k / 4 */
        _STRATUM_MAX,
};
/* The estimator's strata are these (estimate_strata()). */
_Static_assert(_STRATUM_MAX == ESTIMATE_STRATA && STRATUM_REST == 0, "the sampler's strata are the estimator's");

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

int sampler_new(unsigned k, uint64_t seed, Sampler **ret);
/* Aborts where a job holds it (sampler_lend()): free it once it is back. */
Sampler *sampler_free(Sampler *s);
DEFINE_FREE_FUNC(Sampler, sampler_free);

/* The lender's side (the event loop). A sampler belongs to its lender or,
 * from sampler_lend() to sampler_return(), to the one job it is lent to,
 * which alone calls what follows (walks, sweeps, counts) in its thread.
 * While it is lent the lender reads only the view the last return left
 * it: sampler_view(), a second sampler_lend() and sampler_free() abort
 * the process on a lent sampler, in every build, as a read then would
 * race the job's writes (a sweep moves 'next' into 'current'). */
typedef struct SamplerView {
        unsigned k;                 /* the sample's size, as made */
        bool walking;               /* a walk is under way */
        uint64_t walk_seen;         /* the entries it has offered so far */
        uint64_t walk_inodes_hint;  /* the inodes in use when it began, by statfs(); 0: unknown */
        bool current;               /* a reservoir sweeps compare: */
        bool current_partial;       /* a first walk's part so far */
        uint64_t current_population;
        uint64_t last_sweep;        /* CLOCK_MONOTONIC usec of the last sweep (its clock's); 0: none */
        bool next;                  /* a finished walk's reservoir, swapped in at the next sweep: */
        uint64_t next_population;
        size_t next_sample;
        uint64_t next_skipped;      /* directories the walk could not read without O_NOATIME */
        bool whole;                 /* every figure rests on a whole walk's sample (not while the first walk runs) */
        bool can_sweep;             /* a sweep has something to measure or a baseline to take */
        bool has_hot;               /* a fine sweep has something to look at */
} SamplerView;

/* What the sampler holds now. */
void sampler_view(const Sampler *s, SamplerView *ret);
/* Lends s to a job; its lender reads only *ret meanwhile. */
void sampler_lend(Sampler *s);
/* The job is back (its thread is done with s): s is its lender's again,
 * and *ret what the job left. Aborts where s was not lent. */
void sampler_return(Sampler *s, SamplerView *ret);

/* Walks at most *budget directory entries, taking what it walks off
 * *budget. Returns 1 when the walk is complete (its reservoir waits for the
 * next sweep: SamplerView.next), 0 when there is more to do, or -errno (-ESTALE: the mount is not
 * the one expected; -ENOTDIR: its root is a file, a file bind mount, and
 * there is nothing to walk). Blocking. */
int sampler_walk_step(Sampler *s, const struct sampler_place *pl, uint64_t *budget, const atomic_bool *cancel);
/* Walks as on a kernel without openat2() (before 5.6): for tests. */
void sampler_disable_openat2(void);

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

