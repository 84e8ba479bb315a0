/* stats.h: a mount's history at several resolutions. Pure: no I/O, no
 * clock; times are Unix seconds given by the caller.
 *
 * Every sample is added to every ring, each aggregating by its own buckets
 * (the mean of what fell in them), so a coarse point is exactly the
 * sample-weighted mean of the fine points it covers: nothing drifts. A
 * bucket no sample fell in is a gap, not a zero. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

#define STATS_MAX_RINGS 4

/* Policy bits of a point. */
enum {
        STATS_NODIRATIME = 1 << 0,
        STATS_LAZYTIME = 1 << 1,
        STATS_READ_ONLY = 1 << 2,
        STATS_PROBED = 1 << 3,         /* a probe result exists */
        STATS_PROBE_VERIFIED = 1 << 4, /* and it verified a policy (in 'probe') */
        STATS_STALLED = 1 << 5,
        STATS_POLICY_CHANGED = 1 << 6, /* the policy or probe differed within the bucket */
};

/* What is known at one moment. Either kind may be absent. */
struct stats_sample {
        int64_t t;
        bool has_activity; /* a measured interval ended at t */
        float per_min, lo, hi;
        bool has_device;   /* device rates over the interval ending at t */
        float write_iops, write_kib;
        bool has_policy;   /* the state at t (the daemon was up) */
        uint8_t atime;     /* AtimeMode */
        uint8_t flags;     /* STATS_* */
        uint8_t probe;     /* AtimeMode found by the probe, if verified */
        /* On a btrfs subvolume snapshots share: the metadata atime updates
         * un-shared over the interval ending at t, per day, with its 95%
         * interval, measured (the kernel's bytes_used) or modelled
         * (btrfs-meter.h). */
        bool has_unshared;
        bool unshared_modelled;
        float unshared_per_day, unshared_lo, unshared_hi;
};

/* One bucket, stored field by field (little-endian) in the state file:
 * 32 bytes in formats 1 and 2, 46 from format 3 (the un-shared bytes). */
struct stats_point {
        float per_min, lo, hi;     /* means over the samples with activity */
        float write_iops, write_kib; /* means over the samples with device rates */
        uint16_t n;                /* samples with a policy: the daemon was up */
        uint16_t n_act;
        uint16_t n_dev;
        uint8_t atime;             /* the policy at the bucket's last sample */
        uint8_t flags;
        uint8_t probe;
        uint8_t unshared_modelled; /* any sample of the bucket's bytes was modelled */
        uint16_t n_unshared;       /* samples with un-shared bytes */
        float unshared_per_day, unshared_lo, unshared_hi; /* their means */
};

struct stats_ring_spec {
        uint32_t resolution; /* seconds per point */
        uint32_t capacity;   /* points kept */
};

typedef struct StatsRing {
        struct stats_ring_spec spec;
        int64_t head_t;  /* start of the newest bucket; meaningless if count is 0 */
        uint32_t head;   /* its index in v */
        uint32_t count;  /* points held, at most capacity */
        uint32_t alloc;  /* points allocated: rings grow as history accrues */
        struct stats_point *v;
} StatsRing;

/* Times a history holds, in Unix seconds: from 1970 to about the year
 * 36800. Anything else (a damaged file, a clock set absurdly) is refused,
 * so bucket arithmetic never overflows. */
#define STATS_T_MAX (INT64_C(1) << 40)
static inline bool stats_time_sane(int64_t t) {
        return t >= 0 && t <= STATS_T_MAX;
}

/* The advice in force for a history's mount: what a change of policy was
 * promised to save (store_set_promise()). t 0: none (the advice is to
 * keep the policy, or none is known). */
struct stats_promise {
        int64_t t;              /* when it was last given */
        uint8_t atime;          /* AtimeMode advised */
        uint8_t flags;          /* STATS_LAZYTIME if advised */
        uint8_t for_atime;      /* the policy it was given for */
        uint8_t for_flags;
        float saving_per_min;   /* atime updates per minute it would save */
};

/* The last change of atime policy a history saw (a remount, or a restart
 * that found the mount table other than the history's last point), and
 * the promise in force just before it. t 0: none. */
struct stats_change {
        int64_t t;              /* the first sample under the new policy */
        int64_t last_old;       /* the last sample under the old one */
        uint8_t from, to;       /* AtimeMode */
        uint8_t from_flags, to_flags; /* STATS_LAZYTIME */
        struct stats_promise promise;
};

/* What a btrfs filesystem's measured intervals taught of the bytes each
 * distinct inode written since the newest snapshot un-shares (BtrfsModel,
 * btrfs-meter.h), kept with the history of the mount it was learned
 * through so that a restart does not start it again. intervals 0: none. */
struct stats_unshare_model {
        double bytes, inodes, hits;
        uint32_t intervals;
        bool agreed; /* beyond the cost table's range, kept for its measured runs agreed (btrfs-model.h) */
};

typedef struct MountHistory {
        char *key;
        int64_t last_seen; /* Unix seconds of the last sample */
        uint32_t scratch;  /* the store's, while it writes */
        bool users;        /* the store's: a user's mount (store_mark_users()), in memory only */
        unsigned n_rings;
        StatsRing rings[STATS_MAX_RINGS];
        struct stats_promise promise; /* the store's: kept in history.changes */
        struct stats_change change;
        struct stats_unshare_model unshare_model; /* the store's: kept in history.changes */
        /* Room for verdict.c to keep its judgement of 'change' in
         * (verdict_judge_kept()), in memory only: allocated with the
         * history, so that a reader holding the history const (the request
         * side, the tick pass) keeps what it judged. Its layout is
         * verdict.c's, STATS_VERDICT_MEMO_SIZE bytes at most. */
        struct verdict_memo *verdict_memo;
} MountHistory;
#define STATS_VERDICT_MEMO_SIZE 128

/* Parses "1min:6h, 10min:7d, 1h:90d" (resolution:retention, finest first). */
int stats_parse_rings(const char *s, struct stats_ring_spec *ret, unsigned *ret_n);

int history_new(const char *key, const struct stats_ring_spec *specs, unsigned n, MountHistory **ret);
MountHistory *history_free(MountHistory *h);
DEFINE_FREE_FUNC(MountHistory, history_free);

/* Adds a sample to every ring. Samples older than a ring's newest bucket
 * are dropped by that ring (the clock went back), and samples at a time not
 * stats_time_sane() by all: returns the number of rings that took it. */
int history_add(MountHistory *h, const struct stats_sample *s);

/* The newest point of ring 0 the daemon was up for (n > 0), or NULL: the
 * policy the history last recorded. */
const struct stats_point *history_last_policy(const MountHistory *h);

/* The point of ring r at bucket start t, or NULL if outside the ring. A
 * point with n == 0 is a gap. */
const struct stats_point *history_point(const MountHistory *h, unsigned r, int64_t t);
/* The oldest bucket start ring r holds; INT64_MAX if empty. */
int64_t history_oldest(const MountHistory *h, unsigned r);
/* The finest ring reaching back to 'since'; the coarsest if none does. */
unsigned history_pick_ring(const MountHistory *h, int64_t since);

/* Rings, for the store: replace ring r's contents (points oldest first). */
int history_set_ring(MountHistory *h, unsigned r, int64_t head_t, const struct stats_point *points, uint32_t count);
/* Points oldest first into buf (count of them); returns count. */
uint32_t history_ring_points(const MountHistory *h, unsigned r, struct stats_point *buf);
size_t history_memory(const MountHistory *h);
