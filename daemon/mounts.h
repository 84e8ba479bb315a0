/* mounts.h: the mount table as atimed sees it: which mounts it tracks and
 * the atime policy really in force on each, from libmount; and a monitor
 * that says when the table changed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "macro.h"
#include "worker.h"

typedef enum AtimeMode {
        ATIME_STRICT,
        ATIME_RELATIME,
        ATIME_NOATIME,
        _ATIME_MAX,
} AtimeMode;

const char *atime_mode_to_string(AtimeMode m);
int atime_mode_from_string(const char *s);

struct mount_policy {
        AtimeMode atime;
        bool nodiratime; /* effective: true under noatime */
        bool lazytime;   /* a superblock option */
        bool read_only;  /* the mount or its superblock */
};

/* Derives the effective policy from mountinfo's per-mount (VFS) options and
 * super options. mountinfo never prints strictatime: no relatime and no
 * noatime means strict. */
void mount_policy_from_options(const char *vfs_options, const char *super_options, struct mount_policy *ret);
bool mount_policy_equal(const struct mount_policy *a, const struct mount_policy *b);
/* "relatime,lazytime,ro"; at most 64 bytes. */
char *mount_policy_format(const struct mount_policy *p, char *buf, size_t len);

struct mount_filter {
        char *const *include_fstypes; /* empty: every type not pseudo */
        char *const *exclude_fstypes;
        char *const *exclude_paths;   /* a path and everything below it, or a glob */
};

bool fstype_is_pseudo(const char *fstype);

/* How often a dirty inode of this filesystem is written back, in seconds:
 * the journal's commit interval (ext3/ext4 and btrfs "commit=", in the
 * super options; 5 s and 30 s by default), xfs's log flush (30 s), and for
 * the rest the kernel's dirty writeback (5 s). */
double mount_commit_seconds(const char *fstype, const char *super_options);
bool mount_filter_match(const struct mount_filter *f, const char *fstype, const char *target);
/* Why the filter does not track a mount of fstype at target, in words
 * (written to buf); NULL when it does. */
const char *mount_filter_explain(const struct mount_filter *f, const char *fstype, const char *target, char *buf,
                                 size_t len);

typedef struct MountEntry {
        int id;
        int parent_id;
        dev_t devno;
        char *target;
        char *source;
        char *fstype;
        char *root;
        char *vfs_options;
        char *super_options;
        struct mount_policy policy;
        /* Whether a lookup of target leads to this mount: false when it is
         * over-mounted (something is mounted over target, or over a
         * directory above it, since), so its files are out of reach by
         * that path. */
        bool reachable;
} MountEntry;

typedef struct MountTable {
        MountEntry *entries; /* sorted by id */
        size_t n;
        size_t n_all;         /* mounts in the file, tracked or not */
        unsigned n_bad_lines; /* lines libmount could not parse */
        char *text;           /* the file as read, to tell whether it changed */
        size_t text_len;
        /* Every target in the file, tracked or not, with the type of the
         * mount on top there: sorted by target, for mount_table_fstype_at(). */
        struct mount_type_at {
                char *target;
                char *fstype;
        } *types;
        size_t n_types;
        /* Where the table comes from the kernel's events (mount-events.h),
         * the type at a target is asked of that model instead of 'types',
         * which would cost a copy of every target per change. The model
         * outlives every table it makes. */
        const char *(*fstype_at)(const void *userdata, const char *target);
        const void *fstype_at_userdata;
} MountTable;

/* One mount as the kernel describes it (statmount(2), mount-events.h):
 * strings borrowed. */
typedef struct MountSeed {
        int id;
        int parent_id;
        dev_t devno;
        const char *target;
        const char *source;
        const char *fstype;
        const char *root;
        const char *vfs_options;
        const char *super_options;
} MountSeed;

/* The table that the mounts in seeds make: those the filter tracks and
 * that are not stacked under another, each with whether its target
 * reaches it. For that, seeds must hold every mount on the way: at "/",
 * at each directory above a tracked mount's target and at the target, and
 * its chain of parents. n_all is n; no type index: the caller sets
 * fstype_at. */
int mount_table_from_seeds(const MountSeed *seeds, size_t n, const struct mount_filter *filter, MountTable **ret);

/* Parses a mountinfo file and keeps the mounts the filter tracks and that
 * are not hidden under another mount on the same target. */
int mount_table_load(const char *path, const struct mount_filter *filter, MountTable **ret);
/* The same, unless the file reads exactly as it did for 'old' (parsed
 * with the same filter): then *ret is NULL. */
int mount_table_load_changed(const char *path, const struct mount_filter *filter, const MountTable *old,
                             MountTable **ret);
/* The two halves of that, for a caller that reads in one thread and parses
 * in another: the file's text as read (what mount_table_load_changed()
 * compares), and its parse, which takes 'text' (freed on failure too). 'path'
 * only names the file in the table. */
int mount_table_read(const char *path, char **ret_text, size_t *ret_len);
bool mount_table_text_equal(const MountTable *t, const char *text, size_t len);
int mount_table_parse(char *text, size_t len, const char *path, const struct mount_filter *filter, MountTable **ret);
MountTable *mount_table_free(MountTable *t);
DEFINE_FREE_FUNC(MountTable, mount_table_free);

/* The type of the mount on top at 'target' in the table's text as read,
 * whether the filter tracks it or not (for telling why a mount is left
 * out), or NULL if nothing is mounted there. A lookup in what the parse
 * kept: no request that names a missing mount costs a parse of the table. */
const char *mount_table_fstype_at(const MountTable *t, const char *target);

/* The mount at target; of several (over-mounted), the one reachable there. */
const MountEntry *mount_table_find_target(const MountTable *t, const char *target);

/* Whether the two tables track the same mounts, alike in every field. */
bool mount_table_equal(const MountTable *a, const MountTable *b);

/* Calls cb for each mount added (old NULL), removed (new NULL) or changed in
 * place (both set; same id, other policy or options). */
typedef void (*mount_diff_cb)(const MountEntry *old, const MountEntry *new, void *userdata);
void mount_table_diff(const MountTable *old, const MountTable *new, mount_diff_cb cb, void *userdata);

/* The mount table kept current. Reads (each tick, each mount event, every
 * few seconds) run in a worker: the kernel formats the whole file for each
 * read, which at 5,000 mounts was a quarter of the event loop's time at a
 * 1 s interval, and a read can wait on the kernel's namespace lock. The
 * text comes back to the loop, which parses it only if it differs from the
 * table in force. One read at a time (a WorkerSlot): a request meanwhile is
 * served by one more read when it is back; one that does not return in
 * time holds the slot until it does (one stuck read, not one per tick); the
 * pool refusing it, it is read here. Failures are logged here, and the
 * table in force stays.
 *
 * The reader borrows: the table in force (*current, the owner's, read on
 * the loop only) and the filter's lists (until the next
 * mount_reader_configure()). A table that reads differently goes to
 * 'apply', which takes it. */
typedef struct MountReader MountReader;
typedef int (*mount_reader_apply_fn)(MountTable *t, void *userdata);
int mount_reader_new(WorkerPool *pool, MountTable *const *current, mount_reader_apply_fn apply, void *userdata,
                     MountReader **ret);
/* The file, the filter and a read's deadline, from now on. Call it as soon
 * as the lists the last filter borrowed go: the filter is taken even when
 * the path cannot be copied (-ENOMEM; the old path stays). */
int mount_reader_configure(MountReader *r, const char *path, const struct mount_filter *filter, uint64_t timeout_usec);
/* A read in the background. */
void mount_reader_request(MountReader *r);
/* A read is out (one that timed out included). */
bool mount_reader_busy(const MountReader *r);
/* A read here and now (at start and reload); unless forced (the filter
 * changed), a table that reads as it did is not parsed again. Returns the
 * read's error or what 'apply' returned. */
int mount_reader_read_now(MountReader *r, bool force);
MountReader *mount_reader_free(MountReader *r);
DEFINE_FREE_FUNC(MountReader, mount_reader_free);

/* Watches the kernel's mount table; calls cb once per burst of changes,
 * 'delay' after the first. */
typedef struct MountMonitor MountMonitor;
typedef void (*mount_monitor_cb)(void *userdata);
int mount_monitor_new(sd_event *e, uint64_t delay_usec, mount_monitor_cb cb, void *userdata, MountMonitor **ret);
void mount_monitor_set_delay(MountMonitor *m, uint64_t delay_usec);
/* cb at once for a change that comes when none came within the delay (the
 * burst's first), and once more at the delay's end for those after it:
 * where each call is cheap (the event path's recheck of the tracked
 * mounts), a change alone costs one wakeup less. Off: each burst's cb
 * comes a delay after its first change (a re-read of the whole table). */
void mount_monitor_set_leading(MountMonitor *m, bool leading);
MountMonitor *mount_monitor_free(MountMonitor *m);
DEFINE_FREE_FUNC(MountMonitor, mount_monitor_free);
