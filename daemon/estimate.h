/* estimate.h: from a sample of inodes to atime-written inodes per minute,
 * with a 95% interval. Pure arithmetic, unit-tested with plain numbers. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct estimate {
        double per_min; /* inodes whose atime was written, per minute */
        double lo, hi;  /* 95% interval of per_min */
        bool exact;     /* the whole population was sampled */
};

/* 'changed' of 'sample' inodes (a uniform sample of 'population') had their
 * atime move during 'seconds'. 'changed' may be fractional when an inode's
 * change is shared between mounts. The interval is Wilson's score interval
 * with the finite-population correction, so sampling everything is exact.
 * Returns -EINVAL without a usable sample. */
int estimate_activity(double changed, uint64_t sample, uint64_t population, double seconds, struct estimate *ret);
