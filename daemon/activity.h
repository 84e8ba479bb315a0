/* activity.h: a mount's measured interval, the figure every output shows:
 * the tracker fills it (tracker.h), the kernel's count may stand behind it
 * (kcount.h), the status and the history read it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "estimate.h"
#include "fscounter.h"

/* What stands behind a mount's atime updates figure (see fscounter.h). */
typedef enum ActivitySource {
        SOURCE_SAMPLE,         /* the statx sample alone: the kernel keeps no count here */
        SOURCE_SAMPLE_BOUNDED, /* the sample, bounded by the kernel's count of the filesystem's transactions */
        SOURCE_KERNEL,         /* the kernel's count: the filesystem made nothing but atime updates */
        _SOURCE_MAX,
} ActivitySource;

struct activity {
        bool have;           /* a completed interval exists */
        struct estimate est; /* atime-written inodes per minute (distinct inodes per interval) */
        struct estimate updates; /* atime updates per minute: what the kernel writes */
        double writebacks_per_min; /* of those, inode write-backs (estimate_writebacks()) */
        double sets_per_min; /* atimes set by utimensat() on the filesystem, in no other figure */
        int64_t tick_ns;     /* the timestamp tick updates were counted in */
        double seconds;      /* the interval's length */
        uint64_t sample;     /* inodes compared */
        uint64_t population;
        uint64_t at;         /* CLOCK_REALTIME usec of the interval's end */
        bool shared;         /* other mounts of the filesystem also let atime be written */
        ActivitySource source;
        FsCounterKind counter; /* the kernel's count read over the interval; FS_COUNTER_NONE: none */
        double counter_lo, counter_hi; /* the filesystem's transactions per minute, whole filesystem */
        bool disagrees;      /* the sample and the kernel's count disagree beyond the sample's interval */
        double coverage;     /* of the filesystem's inodes, the share the sample was drawn from (1: all;
                              * below while the first walk runs: see estimate_unseen()) */
        int64_t ready_at;    /* Unix seconds when a figure from the whole walk's sample is due, about;
                              * 0: this one is */
};
