/* btrfs-model.h: the bytes each distinct inode whose atime is written
 * since the newest snapshot un-shares, as a btrfs filesystem's measured
 * intervals teach it (issue 31), and the price of inodes at it, or at the
 * cost table's starting value until it has learned.
 *
 * Learnt so that no one interval can make it (issue 44): each measured
 * run's bytes an inode is bounded by what one inode can un-share at most
 * (its leaf and the nodes above it), the value is the median of the last
 * BTRFS_MODEL_WINDOW runs, and it moves at most a factor BTRFS_MODEL_STEP
 * a run. A value beyond the cost table's range (BTRFS_PRIOR_SPREAD either
 * way, scaled by the node size) is used but not saved, unless a full
 * window of runs agrees on it (btrfs_model_keepable() says which, and
 * why). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define BTRFS_MODEL_WINDOW 9
#define BTRFS_MODEL_STEP 2.0
/* A full window whose runs lie within this factor of each other agrees. */
#define BTRFS_MODEL_AGREE 1.5
/* The cost table's value, measured on another btrfs, is taken to hold
 * within this factor either way (field reports reach ~2 KB a file). */
#define BTRFS_PRIOR_SPREAD 4.0
/* The node size the cost table's value was measured with. */
#define BTRFS_PRIOR_NODESIZE 16384.0

typedef struct BtrfsModel {
        /* As the store keeps it (stats_unshare_model): the value is
         * bytes / inodes; inodes and hits, summed over the runs that
         * taught it, are its precision. intervals 0: nothing learnt. */
        double bytes, inodes, hits;
        unsigned intervals;
        /* The last runs' bytes an inode, oldest first (in memory only: a
         * model seeded from the store starts its window anew). */
        double recent[BTRFS_MODEL_WINDOW];
        unsigned n_recent;
        /* btrfs_model_keepable(), as of the last run: may be saved; and
         * is though beyond the table's range, for its runs agreed (saved
         * with it, so that it is taken back after a restart). */
        bool keep, agreed;
} BtrfsModel;

bool btrfs_model_ready(const BtrfsModel *m);
/* bytes / inodes; 0 where not ready. */
double btrfs_model_value(const BtrfsModel *m);
/* Learns from one measured run: 'bytes' grown while the distinct inodes
 * grew by 'inodes' (from 'hits' sampled ones). 'ceiling': the most one
 * inode can un-share (0: no bound known); 'prior': the cost table's value
 * (0: none), the first run's step is bounded from it. A run with no
 * sampled inode written teaches nothing. */
void btrfs_model_learn(BtrfsModel *m, double bytes, double inodes, double hits, double ceiling, double prior);
/* The bytes of 'inodes' distinct inodes (from 'hits' sampled ones), with
 * a 95% interval: the sample's binomial error and the model's own (its
 * runs' spread, and the lag its step bound leaves). */
void btrfs_model_price(const BtrfsModel *m, double inodes, double hits, double *ret, double *ret_lo, double *ret_hi);

/* Until the model has learned: the cost table's bytes a file and a
 * directory un-share (atime_cost.unshare_bytes and unshare_dir_bytes,
 * advisor.h), with a 95% interval BTRFS_PRIOR_SPREAD wider either way. */
struct btrfs_prior {
        double file, dir; /* bytes a file, a directory; file 0: none */
};
void btrfs_model_price_prior(const struct btrfs_prior *p, double inodes, double dirs, double hits, double *ret,
                             double *ret_lo, double *ret_hi);

/* The cost table's range for a file on a filesystem of 'nodesize'-byte
 * nodes (0: the table's own): false where the table has no value. */
bool btrfs_model_range(double prior, uint32_t nodesize, double *ret_lo, double *ret_hi);
/* Whether the model may be saved: its value within the range, or a full
 * window of runs agreeing on it; *ret_why (may be NULL) says why not, or
 * why it is saved though beyond the range (NULL: within it). */
bool btrfs_model_keepable(const BtrfsModel *m, double prior, uint32_t nodesize, const char **ret_why);
/* A model kept from before a restart, as a start: false, with why, where
 * it is not one or lies beyond the range without having been saved as
 * agreed (saved before the bound). */
bool btrfs_model_seedable(const BtrfsModel *saved, double prior, uint32_t nodesize, const char **ret_why);
