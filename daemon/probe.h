/* probe.h: the atime policy really in force on a mount, found by
 * experiment on an O_TMPFILE inode (an unnamed file that vanishes on close:
 * nothing is left on disk and no existing file is touched).
 *
 * Two cases tell the three policies apart (fs/inode.c, relatime_need_update):
 *   old:   atime 3 days ago, mtime 2 days ago, then read.
 *          Moves under strictatime and relatime (atime <= mtime), not noatime.
 *   fresh: atime 60 s ahead, mtime 2 hours ago, then read. futimens() sets
 *          ctime to now, so atime is newer than both mtime and ctime and less
 *          than a day old: only strictatime moves it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "mounts.h"

#define PROBE_REASON_MAX 192
/* Why a mount is not probed, for status and the log. */
#define PROBE_REASON_NOT_DIRECTORY \
        "its root is a file (a file bind mount): nothing to probe or sample in; the mount table's policy stands"
#define PROBE_REASON_OVERMOUNTED \
        "over-mounted: its mount point leads to another mount; not probed or sampled while it is hidden"

struct probe_result {
        bool verified;            /* the experiment ran and was consistent */
        AtimeMode effective;      /* when verified */
        uint64_t at;              /* CLOCK_REALTIME usec of the experiment */
        char reason[PROBE_REASON_MAX]; /* why not verified; empty when verified */
        bool old_moved, fresh_moved;
        bool noatime_attr;        /* the probe's inode inherited FS_NOATIME_FL (chattr +A on the directory) */
        bool not_directory;       /* the mount's root is a file (a file bind mount): nothing to probe in */
};

/* Classifies the two observations; false if no policy explains them. */
bool probe_classify(bool old_moved, bool fresh_moved, AtimeMode *ret);

/* Runs the experiment in 'dir' (not_directory: 'dir' is a file), which must be on the mount with id
 * 'mount_id' (checked, so a mount replaced in the meantime is not probed by
 * mistake). Blocking: for a worker thread. Never fails: problems are
 * reported as verified = false with a reason. */
void probe_run(const char *dir, int mount_id, struct probe_result *ret);
