/* btrfs.h: what a btrfs mount shares with its snapshots, and what its
 * filesystem's metadata weighs. An atime update rewrites the inode's
 * metadata leaf; a leaf shared with a snapshot is copied and the snapshot
 * keeps the old one, so on a snapshotted subvolume atime costs space that
 * stays (issue 31, docs/architecture.md).
 *
 * Facts come from libbtrfsutil and sysfs. What libbtrfsutil needs: as root
 * it searches the tree of roots (BTRFS_IOC_TREE_SEARCH), which needs
 * CAP_SYS_ADMIN, for the subvolume's own info and for any iteration; as
 * any other user it takes the unprivileged ioctls (GET_SUBVOL_INFO,
 * GET_SUBVOL_ROOTREF, INO_LOOKUP_USER), which see only the subvolumes
 * beneath the mount's own. It chooses by geteuid(), not by capability: a
 * root daemon without CAP_SYS_ADMIN (atimed's default, caps.h) sees no
 * snapshot at all, and says so (BTRFS_SIGHT_NONE, -EPERM). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTRFS_UUID_STRING_MAX 37

typedef enum BtrfsSight {
        BTRFS_SIGHT_NONE,    /* no snapshot could be looked for: see the error */
        BTRFS_SIGHT_ALL,     /* every subvolume of the filesystem (the tree search) */
        BTRFS_SIGHT_BENEATH, /* only those beneath the mount's subvolume (unprivileged) */
        _BTRFS_SIGHT_MAX,
} BtrfsSight;

const char *btrfs_sight_to_string(BtrfsSight s);

/* One subvolume, as far as the snapshot count needs it. */
struct btrfs_subvol {
        uint64_t id;
        uint8_t uuid[16];
        uint8_t parent_uuid[16]; /* all zero: not a snapshot */
        bool read_only;
        int64_t otime; /* Unix seconds it was made */
        uint64_t exclusive; /* its qgroup's (0/id) exclusive bytes, where quotas are on (btrfs_facts) */
};

struct btrfs_snapshots {
        unsigned count;      /* subvolumes whose parent_uuid is the subvolume's uuid */
        unsigned read_only;  /* of those, read-only */
        int64_t newest_otime; /* the newest one's creation, Unix seconds; 0: none */
        uint64_t ids_sum;    /* with count, tells a snapshot made and another deleted apart from none */
        /* The snapshot rhythm as the filesystem keeps it: the median time
         * between consecutive snapshots' creations; 0: fewer than two (or
         * no memory to tell). */
        int64_t period_s;
        uint64_t exclusive;  /* their qgroups' exclusive bytes together, where quotas are on */
};

/* What one look found. */
struct btrfs_facts {
        bool have_subvol;       /* self.id at least; the rest where sight allowed */
        bool have_info;         /* self's uuid, flags and otime */
        bool deleted;           /* self was deleted, and lives on only as long as a mount of it */
        struct btrfs_subvol self;
        BtrfsSight sight;
        int sight_error;        /* -errno where sight is NONE; 0 otherwise */
        struct btrfs_snapshots snapshots;
        /* Every subvolume seen (sight ALL or BENEATH), owned: the other
         * mounts' subvolumes are found here (btrfs_facts_of()). */
        struct btrfs_subvol *subs;
        size_t n_subs;
        uint64_t subs_ids_sum; /* with n_subs, tells a subvolume made and another deleted apart from none */
        bool have_space;        /* allocation/{metadata,data}/bytes_used were read */
        uint64_t metadata_bytes_used, data_bytes_used;
        int space_error;        /* -errno where they could not be */
        bool have_commits;      /* commit_stats was read (kernel 6.0 and later) */
        uint64_t commits;       /* transactions committed since mount */
        /* Where the operator has quotas on (sysfs qgroups/enabled; atimed
         * never turns them on): each subvolume's qgroup's (0/id)
         * exclusive bytes, in self and subs, and the snapshots' together:
         * what the snapshots keep that the subvolume no longer shares
         * grows theirs. */
        bool quotas;            /* quotas are on */
        bool have_qgroups;      /* and the bytes were read */
        bool qgroups_inconsistent; /* qgroups/inconsistent: the bytes wait for a rescan */
        int qgroup_error;       /* -errno where quotas are on and the bytes could not be read */
};

/* Frees what a look allocated (subs); the facts stay readable, empty. */
void btrfs_facts_done(struct btrfs_facts *f);

/* ---------------------------------------------------------------- pure */

/* The snapshots of 'self' among the n subvolumes 'subs' (self may be
 * among them; it is no snapshot of itself). */
void btrfs_snapshots_of(const struct btrfs_subvol *self, const struct btrfs_subvol *subs, size_t n,
                        struct btrfs_snapshots *ret);
/* The subvolume 'id' among the subvolumes a look saw, and its snapshots:
 * false where the look did not see it. */
bool btrfs_facts_of(const struct btrfs_facts *f, uint64_t id, struct btrfs_subvol *ret_self,
                    struct btrfs_snapshots *ret_snapshots);
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

/* What an interval says of the bytes atime un-shares: the metadata's
 * growth is atime's cost only where nothing else happened (the sample's
 * purity: figures.c, as for the kernel's transaction counts, kcount.h),
 * the data did not move, and the snapshots stayed what they were. */
typedef enum BtrfsBytesSource {
        BTRFS_BYTES_WAITING,          /* no interval measured yet */
        BTRFS_BYTES_MEASURED,         /* the last interval's growth */
        BTRFS_BYTES_IMPURE,           /* the filesystem did more than atime updates */
        BTRFS_BYTES_SNAPSHOT_CHANGED, /* a snapshot was made or deleted in the interval */
        BTRFS_BYTES_UNREADABLE,       /* sysfs gave no reading at one end */
        BTRFS_BYTES_NO_ATIME,         /* no mount of the filesystem writes atime: it un-shares exactly
                                       * nothing (btrfs_status_no_atime(); never btrfs_interval()'s) */
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
        double bytes;       /* MEASURED: the metadata's growth over the interval */
        double per_day;     /* MEASURED: the same, per day */
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

/* ---------------------------------------------------------------- I/O */

/* The directory of the filesystem with a device named 'devname' (its
 * kernel name: loop0, sda2) under sysfs's fs/btrfs: the 36-character
 * fsid in *ret (the caller's to free), or -ENOENT. Reads sysfs only. */
int btrfs_find_fsid(const char *sysfs, const char *devname, char **ret);

/* Looks at the btrfs mount whose mount point 'fd' is open (O_DIRECTORY):
 * its subvolume, the snapshots of it, and (with an fsid) the metadata and
 * data bytes in use under sysfs. 'subvol_id' is the mount's subvolid= (0:
 * unknown). Fills what it can and says why not for the rest; -errno only
 * where fd is no btrfs at all (-EMEDIUMTYPE) or memory ran out. */
int btrfs_look(int fd, uint64_t subvol_id, const char *sysfs, const char *fsid, struct btrfs_facts *ret);
