/* btrfs.h: what a btrfs mount shares with its snapshots, what its
 * filesystem's metadata weighs, and whether an interval's growth of it
 * was atime's alone. An atime update rewrites the inode's metadata leaf;
 * a leaf shared with a snapshot is copied and the snapshot keeps the old
 * one, so on a snapshotted subvolume atime costs space that stays (issue
 * 31, docs/architecture.md).
 *
 * Where the facts come from (issue 44). The tree of subvolumes is read
 * whole by atimed's privileged helper (helper-client.h: the daemon never
 * holds CAP_SYS_ADMIN), which sees every subvolume of the filesystem and
 * the evidence of what changed (btrfs-roots.h). Without the helper
 * ([btrfs] snapshot_search = no, or it cannot be reached) libbtrfsutil
 * is asked as before: run as root it needs CAP_SYS_ADMIN for any
 * subvolume's info and sees none (BTRFS_SIGHT_NONE, -EPERM); run as
 * another user it takes the unprivileged ioctls (GET_SUBVOL_INFO,
 * GET_SUBVOL_ROOTREF, INO_LOOKUP_USER), which see only the subvolumes
 * beneath the mount's own; and no interval can be shown pure
 * (BTRFS_BYTES_UNPROVEN). The bytes in use come from sysfs either way. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btrfs-roots.h"

#define BTRFS_UUID_STRING_MAX 37

typedef enum BtrfsSight {
        BTRFS_SIGHT_NONE,    /* no snapshot could be looked for: see the error */
        BTRFS_SIGHT_ALL,     /* every subvolume of the filesystem (the tree search) */
        BTRFS_SIGHT_BENEATH, /* only those beneath the mount's subvolume (unprivileged) */
        _BTRFS_SIGHT_MAX,
} BtrfsSight;

const char *btrfs_sight_to_string(BtrfsSight s);

/* What one look found. */
struct btrfs_facts {
        bool have_subvol;       /* self.id at least; the rest where sight allowed */
        bool have_info;         /* self's uuid, flags and otime */
        bool deleted;           /* self was deleted, and lives on only as long as a mount of it */
        struct btrfs_subvol self;
        BtrfsSight sight;
        int sight_error;        /* -errno where sight is NONE; 0 otherwise */
        int helper_error;       /* why the helper did not list them (-ENXIO: there is none); 0: it did */
        struct btrfs_snapshots snapshots;
        /* The subvolumes of the filesystem's mounts (btrfs_look_args'
         * wanted), as the look saw them, owned: each mount finds its own
         * here (btrfs_facts_of()). */
        struct btrfs_tracked *tracked;
        size_t n_tracked;
        uint64_t wanted[BTRFS_TRACKED_MAX]; /* the ids looked for (a mount's not among them: not looked up) */
        size_t n_wanted;
        uint64_t subvolumes;    /* seen, live */
        bool partial;           /* the listing ended before its end (deadline, or too many to list) */
        struct btrfs_evidence evidence; /* from the helper only */
        struct btrfs_unseen unseen;     /* the same */
        bool have_space;        /* allocation/{metadata,data}/bytes_used were read */
        uint64_t metadata_bytes_used, data_bytes_used;
        int space_error;        /* -errno where they could not be */
        bool have_commits;      /* commit_stats was read (kernel 6.0 and later) */
        uint64_t commits;       /* transactions committed since mount */
        uint32_t nodesize;      /* sysfs nodesize; 0: unknown */
        /* Where the operator has quotas on (sysfs qgroups/enabled; atimed
         * never turns them on): each tracked subvolume's qgroup's (0/id)
         * exclusive bytes, and the snapshots' together (of the newest
         * BTRFS_SNAPSHOTS_KEPT): what the snapshots keep that the
         * subvolume no longer shares grows theirs. */
        bool quotas;            /* quotas are on */
        bool have_qgroups;      /* and the bytes were read */
        bool qgroups_inconsistent; /* qgroups/inconsistent: the bytes wait for a rescan */
        int qgroup_error;       /* -errno where quotas are on and the bytes could not be read */
};

/* Frees what a look allocated (subs); the facts stay readable, empty. */
void btrfs_facts_done(struct btrfs_facts *f);

/* ---------------------------------------------------------------- pure */

/* The subvolume 'id' among those a look saw (the tracked ones), and its
 * snapshots: false where the look did not see it. */
bool btrfs_facts_of(const struct btrfs_facts *f, uint64_t id, struct btrfs_subvol *ret_self,
                    struct btrfs_snapshots *ret_snapshots);
/* Whether the look looked for subvolume 'id' (BTRFS_TRACKED_MAX of a
 * filesystem's mounted subvolumes are): a wanted one it did not find, in
 * a listing that went to its end, is no more. */
bool btrfs_facts_wanted(const struct btrfs_facts *f, uint64_t id);
/* Whether the subvolume 'self' shares its tree: snapshots were made of
 * it, or it is itself a snapshot (writable: reading it un-shares it from
 * its origin). *ret_since: since when, the newer of its newest snapshot's
 * creation and its own as a snapshot (Unix seconds). (A snapshot whose
 * origin was deleted since may share with nothing: it is taken to share.) */
bool btrfs_shares(const struct btrfs_subvol *self, const struct btrfs_snapshots *s, int64_t *ret_since);
/* Where a btrfs filesystem is sampled: of its mounts, one through the
 * subvolume atime costs space in (snapshots share its tree), for the
 * sampler's count of the inodes written since the newest snapshot is what
 * the model prices (btrfs-meter.h). A mount's rank, by the last look's
 * facts: */
struct btrfs_place {
        bool shares;       /* its subvolume was seen sharing, writable (atime can change there) */
        int64_t since;     /* shares: since when (btrfs_shares()) */
        unsigned snapshots; /* shares: how many snapshots of it */
        size_t root_len;   /* the length of its fs root: the shortest shows most of the filesystem */
};
/* The rank of a mount of subvolume 'subvol' (subvolid=; 0: unknown), by
 * the facts 'f' of the filesystem's last look (NULL: none yet). Only a
 * look that saw every subvolume (BTRFS_SIGHT_ALL) ranks by snapshots: one
 * that saw some or none ranks every mount as sharing nothing, so the
 * choice falls back to the shortest root and never flips with the place
 * looked through. */
void btrfs_place_rank(const struct btrfs_facts *f, uint64_t subvol, size_t root_len, struct btrfs_place *ret);
/* Whether 'a' is a better place than 'b': one that shares over one that
 * does not; between two that share, the newer 'since', then more
 * snapshots; then the shorter root. Ties: false (the first one met, the
 * oldest mount, stays). */
bool btrfs_place_better(const struct btrfs_place *a, const struct btrfs_place *b);

/* A sysfs counter's text ("12345\n"): -EBADMSG where it is not one. */
int btrfs_parse_bytes(const char *text, uint64_t *ret);
/* commit_stats' text: the line "commits N". -EBADMSG without one. */
int btrfs_parse_commits(const char *text, uint64_t *ret);
/* The 36 characters of a UUID, lower case. */
void btrfs_uuid_format(const uint8_t uuid[16], char ret[BTRFS_UUID_STRING_MAX]);
/* subvolid= and subvol= of a btrfs mount's super options (mountinfo):
 * either may be missing (0, NULL); *ret_path is the caller's to free. */
int btrfs_subvol_from_options(const char *super_options, uint64_t *ret_id, char **ret_path);

/* What an interval says of the bytes atime un-shares. Its metadata's
 * growth is atime's cost only where nothing else happened: the sample
 * saw no other change (figures.c, as for the kernel's transaction
 * counts, kcount.h), the data did not move, the metadata did not shrink,
 * the tracked subvolumes' snapshots stayed what they were, and the
 * filesystem's own evidence (btrfs_evidence: no tree grew or shrank by a
 * node, no checksum was written, no subvolume made or deleted) stayed
 * still. That evidence is the kernel's as of its last commit, while the
 * bytes in use move before it: an interval that passes is held
 * (BTRFS_BYTES_PENDING) until its writes, if any, have been committed,
 * and counted (measured) only if the evidence is still the same then
 * (btrfs-meter.h). */
typedef enum BtrfsBytesSource {
        BTRFS_BYTES_WAITING,          /* no interval measured yet */
        BTRFS_BYTES_MEASURED,         /* intervals confirmed at this look: their growth */
        BTRFS_BYTES_IMPURE,           /* the filesystem did more than atime updates */
        BTRFS_BYTES_SNAPSHOT_CHANGED, /* a snapshot of a tracked subvolume was made or deleted in the interval */
        BTRFS_BYTES_UNREADABLE,       /* sysfs gave no reading at one end */
        BTRFS_BYTES_NO_ATIME,         /* no mount of the filesystem writes atime: it un-shares exactly
                                       * nothing (btrfs_status_no_atime(); never btrfs_interval()'s) */
        BTRFS_BYTES_PENDING,          /* pure so far: held until the commit that would show a write */
        BTRFS_BYTES_UNPROVEN,         /* no evidence to tell (the helper did not read the tree of roots) */
        _BTRFS_BYTES_SOURCE_MAX,
} BtrfsBytesSource;

const char *btrfs_bytes_source_to_string(BtrfsBytesSource s);

typedef struct BtrfsIntervalInput {
        const struct btrfs_facts *prev, *cur; /* the looks at the interval's ends */
        double seconds;
        bool pure;    /* nothing but atime updates, as far as the sample can tell */
        bool tainted; /* writes of an earlier impure interval may be committed in this one (BtrfsTaint) */
} BtrfsIntervalInput;

typedef struct BtrfsIntervalVerdict {
        BtrfsBytesSource source;
        double bytes;       /* PENDING: the metadata's growth over the interval */
        double per_day;     /* PENDING: the same, per day */
        bool writes;        /* the interval itself did more than atime updates (BtrfsTaint) */
} BtrfsIntervalVerdict;

BtrfsIntervalVerdict btrfs_interval(const BtrfsIntervalInput *in);

/* btrfs counts what a write allocates when its transaction commits (every
 * commit period, commit= and 30 s by default, or at sync): the writes that
 * made an interval impure (atimed's own probe among them) can land in the
 * next ones. Those are tainted until two more commits have ended (one may
 * have been under way as the impure interval ended), or a commit period
 * and BTRFS_TAINT_SLACK_USEC have passed without any (nothing was left to
 * commit: the transaction thread commits what is dirty every period), or,
 * where the kernel keeps no commit count, until two periods have passed. */
#define BTRFS_TAINT_SLACK_USEC (5 * 1000000ULL)

typedef struct BtrfsTaint {
        bool on;
        bool have_commits;
        uint64_t commits;    /* at the impure interval's end, or at the last re-arm */
        uint64_t period_usec;
        uint64_t until_usec; /* the window's end */
} BtrfsTaint;

/* Whether the interval ending with 'cur' (at now_usec, any clock) is
 * tainted; then lifts the taint if it was committed in it. */
bool btrfs_taint_check(BtrfsTaint *t, const struct btrfs_facts *cur, uint64_t now_usec);
/* After a verdict: an interval that did more than atime updates leaves
 * its writes to be committed later, in intervals tainted from now on.
 * 'commit_s': the filesystem's commit period. */
void btrfs_taint_note(BtrfsTaint *t, const BtrfsIntervalVerdict *v, const struct btrfs_facts *cur, uint64_t now_usec,
                      double commit_s);
/* The same window, armed at the end of a pending interval whatever it
 * did: once btrfs_taint_check() has lifted it, whatever was written
 * before that end has been committed, and the evidence shows it. */
void btrfs_settle_arm(BtrfsTaint *t, const struct btrfs_facts *cur, uint64_t now_usec, double commit_s);

/* ---------------------------------------------------------------- I/O */

/* The directory of the filesystem with a device named 'devname' (its
 * kernel name: loop0, sda2) under sysfs's fs/btrfs: the 36-character
 * fsid in *ret (the caller's to free), or -ENOENT. Reads sysfs only. */
int btrfs_find_fsid(const char *sysfs, const char *devname, char **ret);

/* Where a look lists the subvolumes from. */
typedef enum BtrfsLister {
        BTRFS_LIST_AUTO, /* atimed's helper where there is one (helper-client.h), else libbtrfsutil */
        BTRFS_LIST_SCAN, /* the tree of roots read in this process (it holds CAP_SYS_ADMIN: a tool) */
        BTRFS_LIST_UTIL, /* libbtrfsutil alone */
} BtrfsLister;

typedef struct BtrfsLookArgs {
        uint64_t subvol_id;   /* the mount looked through (subvolid=; 0: unknown) */
        const char *sysfs;
        const char *fsid;     /* its directory under sysfs's fs/btrfs; NULL: unknown */
        /* The filesystem's mounts' subvolumes, looked up in the same pass
         * (the one looked through is added); may be NULL. */
        const struct btrfs_wanted *wanted;
        size_t n_wanted;
        uint64_t deadline_usec; /* for the listing (CLOCK_MONOTONIC; 0: a default) */
        BtrfsLister lister;
} BtrfsLookArgs;

/* Looks at the btrfs mount whose mount point 'fd' is open (O_DIRECTORY):
 * its subvolume, the snapshots of it and of the wanted subvolumes, the
 * evidence, and (with an fsid) the metadata and data bytes in use under
 * sysfs, read after the subvolumes (a commit between the two shows as a
 * change at the next look, never as growth the evidence missed). Fills
 * what it can and says why not for the rest; -errno only where fd is no
 * btrfs at all (-EMEDIUMTYPE) or memory ran out. */
int btrfs_look(int fd, const BtrfsLookArgs *a, struct btrfs_facts *ret);
