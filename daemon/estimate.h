/* estimate.h: from a sample of inodes to per-minute figures with 95%
 * intervals. Pure arithmetic, unit-tested with plain numbers.
 *
 * Two figures come out of the same sample:
 *  - atime-written inodes per minute: the share of sampled inodes whose atime
 *    moved between two sweeps, times the inodes in use. It counts each inode
 *    once per interval, however often it was read, so under strictatime it
 *    depends on the interval.
 *  - atime updates per minute: what the kernel writes. Under strictatime an
 *    inode read again is written again, at most once per tick of the coarse
 *    clock (timestamp granularity), so one inode can be written hundreds of
 *    times a second. statx() shows only the time of the last update; the
 *    estimator below counts the updates it sees and extrapolates the ones it
 *    cannot see from each inode's own update rate. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct estimate {
        double per_min; /* per minute */
        double lo, hi;  /* 95% interval of per_min */
        bool exact;     /* the whole population was sampled */
};

/* 'changed' of 'sample' inodes (a uniform sample of 'population') had their
 * atime move during 'seconds'. 'changed' may be fractional when an inode's
 * change is shared between mounts. The interval is Wilson's score interval
 * with the finite-population correction, so sampling everything is exact.
 * Returns -EINVAL without a usable sample. */
int estimate_activity(double changed, uint64_t sample, uint64_t population, double seconds, struct estimate *ret);

/* ---- atime updates
 *
 * The model: time runs in ticks of the timestamp clock (the coarse clock's
 * resolution, or the filesystem's timestamp granularity if coarser). An
 * atime update writes the tick it happened in, and in each tick an inode is
 * written at most once, with a probability q of its own (its reads are
 * stationary over a few minutes). Each look at an inode (a statx) gives its
 * atime: the tick of its last update.
 *
 * Between two looks at ticks m0 and m1 that saw atimes a0 and a1:
 *  - a1 == a0: no update in between; the whole ticks in between are
 *    evidence of q.
 *  - a1 != a0: at least one update, the last at a1. The whole ticks after
 *    a1 are known to hold none; the ticks between m0 and a1 (the "unseen span") hold
 *    updates with probability q each, extrapolated from q's estimate from
 *    the inode's other looks, never from this gap itself (the gap was chosen
 *    because it changed: counting it would bias q up).
 * q's estimate is seen / (seen + empty ticks), the likelihood's maximum
 * when reads come at random. Readers that run in bursts (a loop that the
 * scheduler runs and stops) break that: a look in a pause sees a long
 * empty run and q comes out low. For them the share of looks that find
 * the atime written in the current tick ("hits") estimates q directly, and
 * is used where it is the larger and rests on at least a few hits (for
 * random reads it is the smaller: the current tick is only partly over).
 * Both are decayed with a time constant of a minute, so a rate that changes
 * is followed; their bounds are Wilson's.
 *
 * Reads at regular times break the "at random" model the other way: a
 * reader every 100 ms leaves ages (ticks since the last update) spread
 * evenly over 0-100 ms, half what random reads at that rate leave, so q
 * comes out twice too high, and every unseen span is credited updates that
 * a regular reader slower than the looks never makes. So each look's age
 * is also kept in a histogram: for any stationary reader, regular, random
 * or bursty, the share of looks that find an age of 1 to x whole ticks is
 * about q * x while x is small beside the gaps between updates (the density
 * of the age at 0 is the rate). estimate_settle() takes q from there, x an
 * eighth of the mean age, at least 2 (extrapolated from x and 2x to 0;
 * with a mean age under 4 ticks from the ages of 0 and 1 tick, and under
 * 3/4 of a tick from the likelihood of the interval's looks), and credits
 * an inode looked at every second or so q times the interval's ticks, even
 * fewer than the changes seen: the floor is the totals' (update_totals_add),
 * as a floor on each noisy q lifts the sum. The windows hold few ages
 * (2 or 3 a minute for a reader every 100 ms), so the ages' first two
 * moments are kept as well: their ratio tells a regular reader (4/3),
 * whose q the mean age gives, from one at random (2), whose q the
 * likelihood gives over every look's span; either within the windows'
 * bounds, which catch a reader in bursts. The looks must come at times
 * unrelated to the reader's: the fine sweep's are jittered, at times
 * drawn afresh each time (not left to the event loop, which wakes every
 * process of the host at the same place in each quarter second where it
 * may), or a reader with the looks' own period would always be seen at
 * the same age. The timed sweep's looks come at a set place on the clock
 * every interval: they learn the span before them, not their age. */
#define AGE_BINS 24
struct inode_rate {
        float seen;  /* updates seen (decayed) */
        float empty; /* ticks known to hold no update (decayed) */
        float looks; /* looks (decayed) */
        float hits;  /* looks that found an update in their own tick (decayed) */
        float moves; /* looks at random that found the atime moved since the look before (decayed) */
        float ages;  /* looks whose age is known (decayed) */
        float age_sum; /* their ages, in ticks (decayed) */
        float age_sq;  /* and the sum of their squares */
        float age_below[AGE_BINS]; /* of those, the looks that found an age below 2^i ticks (decayed) */
};

/* Updates credited to an inode over an interval, with their bounds: the
 * bounds of q over the unseen spans, and (var) the spread of the count in
 * those spans that even a known q leaves. */
struct update_credit {
        double n, lo, hi;
        double writebacks; /* of those, how many reach the disk: see estimate_writebacks() */
        double seen;       /* changes seen: the least the count can be */
        double unseen;     /* the ticks before those changes no look could see */
        double var;
};

/* Credits the updates between two looks (times in ns of the realtime
 * clock; 'tick' in ns) to c, using r as it stands; returns true if the atime
 * moved. Does not learn from the gap: call estimate_learn() after. */
bool estimate_credit(const struct inode_rate *r, int64_t m0, int64_t a0, int64_t m1, int64_t a1, int64_t tick,
                     struct update_credit *c);
/* Adds what the gap tells about q to r; 'at_random': the look at m1 came
 * at a time unrelated to any reader's (its age is learnt too), not at a set
 * place on the clock. */
void estimate_learn(struct inode_rate *r, int64_t m0, int64_t a0, int64_t m1, int64_t a1, int64_t tick,
                    bool at_random);
/* An interval's credit c of an inode looked at 'looks' times in it,
 * settled on the rate its ages give over 'ticks' (see above). */
void estimate_settle(const struct inode_rate *r, double looks, double ticks, struct update_credit *c);
/* q as estimate_settle() takes it (from the ages' windows, their mean, or
 * the likelihood); false without enough looks. */
bool estimate_rate(const struct inode_rate *r, double *q);
/* Forgets with a time constant of a minute: 'seconds' have passed. */
void estimate_decay(struct inode_rate *r, double seconds);

/* Of n updates of one inode spread evenly over 'seconds', how many write
 * it back: a journal (or the writeback of dirty inodes) writes an inode
 * once per commit, however often it was dirtied in between, so the bytes
 * follow the commits an inode is dirty in, not its updates. With the
 * updates at random times, a commit interval of commit_s holds at least
 * one with probability 1 - exp(-rate * commit_s). */
double estimate_writebacks(double n, double seconds, double commit_s);

/* The sums over a sample's inodes that the total is estimated from. */
struct update_totals {
        double changed; /* inodes credited with updates */
        double seen;    /* the changes seen: the least the sum can be */
        double n, lo, hi; /* sums of the credits and of their bounds */
        double sq;      /* sum of the squared credits */
        double writebacks;
};
void update_totals_add(struct update_totals *t, const struct update_credit *c, double share);

/* Atime updates per minute over the population, from the credits of a
 * uniform sample of 'sample' of its 'population' inodes over 'seconds'. The
 * interval combines the sampling error (Wilson's interval of the share of
 * inodes updated at all, times an interval of the mean credit of those,
 * both at 95%: conservative) with the bounds of each credit. A sample in
 * which nothing moved takes one update per inode as the mean it cannot see.
 * Returns -EINVAL without a usable sample. */
int estimate_updates(const struct update_totals *t, uint64_t sample, uint64_t population, double seconds,
                     struct estimate *ret);
/* A sample's sum scaled to the population, per minute (0 without a sample). */
double estimate_per_min(double sum, uint64_t sample, uint64_t population, double seconds);

/* ---- a figure resting on part of a filesystem
 *
 * A first walk's sample covers only the inodes the walk has seen so far;
 * 'unseen' more are in use. 'e' is the figure of one stratum of what was
 * seen, whose 'seen' inodes it speaks for. The point is scaled as if the
 * unseen inodes were like these (the best guess a uniform walk order would
 * give); the lower bound stays (the unseen may hold nothing); the upper
 * bound adds the most the unseen can hold: 'cap' per inode per minute (an
 * update per tick of the timestamp clock, or one changed inode per
 * interval). So a hot file where the walk has not been is inside the
 * interval, however hot. */
void estimate_unseen(struct estimate *e, double seen, double unseen, double cap);

/* ---- a stratified sample
 *
 * A sample drawn in strata (sampler.h: a uniform one of every inode, and
 * ones of the inodes the walk found read lately), each stratum estimated
 * apart, then added up, their bounds too (conservative). Stratum 0 is the
 * uniform one: while a first walk runs, it speaks for the 'unseen' inodes
 * the walk has not reached yet too, taken as like it for the figure, and
 * as anything from none to all hot for its interval (estimate_unseen());
 * the other strata are what the walk found read, not scaled. */
#define ESTIMATE_STRATA 3
struct strata_input {
        uint64_t sample[ESTIMATE_STRATA];     /* inodes compared */
        uint64_t population[ESTIMATE_STRATA]; /* the names each stratum was drawn from */
        double changed[ESTIMATE_STRATA];      /* of its sample, inodes whose atime moved (weighted) */
        const struct update_totals *updates;  /* ESTIMATE_STRATA of them: the updates credited */
        double sets[ESTIMATE_STRATA];         /* of its sample, atimes set by utimensat() (weighted) */
        double seconds;                       /* the interval */
        int64_t tick_ns;                      /* the timestamp tick; 0: unknown (4 ms taken) */
        double unseen;                        /* inodes in use that a first walk has not seen; 0: none */
};
struct strata_estimate {
        struct estimate inodes;  /* atime-written inodes per minute */
        struct estimate updates; /* atime updates per minute */
        double writebacks_per_min, sets_per_min;
};
/* -EINVAL where no stratum has a sample, or one's cannot be estimated. */
int estimate_strata(const struct strata_input *in, struct strata_estimate *ret);
