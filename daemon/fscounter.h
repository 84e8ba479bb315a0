/* fscounter.h: the kernel's own count of a filesystem's metadata
 * transactions, read where the kernel keeps one, as a bound on (and, on a
 * filesystem that does nothing else, the measure of) its atime updates.
 *
 * Each atime update that reaches the filesystem is one transaction: xfs
 * counts them exactly (/sys/fs/xfs/DEV/stats/stats, line "trans": sync,
 * async, empty), ext4's journal counts handles (/proc/fs/jbd2/DEV-INO/info:
 * transactions times a whole-number "handles per transaction", so the total
 * is known only to within the number of transactions). Both count every
 * other metadata change too (writes, creates, deletes), per filesystem and
 * not per mount, and neither sees an atime update that lazytime keeps in
 * memory. btrfs, tmpfs and the rest keep no such count. Reading them costs
 * nothing on anyone's read path. See docs/architecture.md. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum FsCounterKind {
        FS_COUNTER_NONE,
        FS_COUNTER_XFS,  /* exact */
        FS_COUNTER_JBD2, /* to within the number of transactions */
        _FS_COUNTER_KIND_MAX,
} FsCounterKind;

/* A reading: the transactions since mount lie in [lo, hi]. */
struct fs_count {
        bool valid;
        uint64_t lo, hi;
        uint64_t commits; /* jbd2: transactions committed (the handles move only with them) */
};

/* Pure parsers of the files' text: -EBADMSG where the text is not one. */
int fscounter_parse_xfs(const char *text, struct fs_count *ret);
int fscounter_parse_jbd2(const char *text, struct fs_count *ret);

/* Where the count of the filesystem on block device 'devname' (its kernel
 * name: sda1, loop0, dm-0) is kept, for a filesystem of type 'fstype'
 * under the roots given (normally /sys and /proc/fs/jbd2): sets *ret_path
 * (the caller frees it) and returns its kind, FS_COUNTER_NONE (and NULL)
 * where the kernel keeps none, or -errno. Touches no filesystem but sysfs
 * and procfs. */
int fscounter_find(const char *sysfs, const char *jbd2, const char *fstype, const char *devname, char **ret_path);

/* Reads the count at 'path'. -errno where it cannot; the reading is then
 * invalid. */
int fscounter_read(FsCounterKind kind, const char *path, struct fs_count *ret);

/* The transactions between two readings, as [lo, hi]; false where either
 * is invalid or the counter went back (the filesystem was mounted again). */
bool fscounter_delta(const struct fs_count *prev, const struct fs_count *cur, double *lo, double *hi);

const char *fs_counter_kind_to_string(FsCounterKind k);
