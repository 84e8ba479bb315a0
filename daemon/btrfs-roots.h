/* btrfs-roots.h: a btrfs filesystem's tree of roots, read whole, and what
 * atimed needs of it, gathered in bounded memory (issue 44).
 *
 * The tree of roots (tree 1) holds an item for every subvolume: its
 * uuid, the uuid it was snapshotted from, its flags, its tree's size in
 * bytes (bytes_used: the kernel adds a node when one is split off and
 * takes it back when one is freed; a copy-on-write leaves it), its
 * generation and transids, and the transid of the last snapshot that
 * shares its tree (last_snapshot). Reading it needs CAP_SYS_ADMIN
 * (BTRFS_IOC_TREE_SEARCH_V2): the daemon never holds that, atimed's
 * helper does (helper-server.h) and hands the records back. One
 * sequential scan reads 100,000 subvolumes in some 40 ms, where
 * libbtrfsutil's iterator, which looks each one up again, takes 1.1 s
 * (measured, BENCHMARKS.md section 10).
 *
 * What the records are gathered into (btrfs_roots_*): the subvolumes
 * atimed tracks (the filesystem's mounts, BTRFS_TRACKED_MAX of them) with
 * their snapshots; the evidence that nothing but atime updates changed
 * the filesystem between two looks (btrfs_evidence); and the snapshotted
 * subvolumes reads reach through a mount that the sample does not cover
 * (btrfs_unseen). Whatever the number of subvolumes: each record is
 * folded in as it comes, and what is kept per subvolume is capped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One subvolume's root item, as the helper sends it (host byte order:
 * helper and daemon are the same build on the same machine). */
struct btrfs_root_record {
        uint64_t id;
        uint64_t parent_id;     /* the subvolume its directory entry is in; 0: the top level, or deleted */
        uint64_t generation;    /* the last transaction that changed its tree (atime updates too) */
        uint64_t ctransid, otransid;
        uint64_t last_snapshot; /* the transaction of the last snapshot of it (or it of another); 0: never */
        uint64_t tree_bytes;    /* its tree's nodes, in bytes */
        int64_t otime;          /* Unix seconds it was made */
        uint32_t refs;          /* 0: deleted, its tree not yet freed by the cleaner */
        uint8_t level;          /* its tree's height - 1 */
        uint8_t read_only;
        uint8_t reserved[2];
        uint8_t uuid[16];
        uint8_t parent_uuid[16]; /* all zero: not a snapshot */
};

/* What the scan says at its end. */
#define BTRFS_ROOTS_TRUNCATED 1u /* the deadline stopped it: what came is a part */
struct btrfs_roots_end {
        uint64_t records;         /* subvolume records sent */
        uint64_t csum_generation; /* the checksum tree's: moves where data is written or freed, never for atime */
        uint64_t orphans;         /* deleted subvolumes whose trees the cleaner has yet to free */
        uint32_t flags;
        uint32_t reserved;
};

typedef int (*btrfs_root_fn)(const struct btrfs_root_record *r, void *userdata);

/* Reads the tree of roots of the btrfs 'fd' is on, in order of id, and
 * gives each subvolume's record to 'each' (a negative return stops the
 * scan with it); stops at 'deadline_usec' (CLOCK_MONOTONIC; 0: none) and
 * says so. -EMEDIUMTYPE where fd is not on a btrfs, -EPERM without
 * CAP_SYS_ADMIN. */
int btrfs_roots_scan(int fd, uint64_t deadline_usec, btrfs_root_fn each, void *userdata, struct btrfs_roots_end *ret);

/* ---------------------------------------------------------------- pure */

#define BTRFS_TRACKED_MAX 64
/* Per tracked subvolume, the newest snapshots kept (for the rhythm and
 * the qgroups): a subvolume with more has them counted, not kept. */
#define BTRFS_SNAPSHOTS_KEPT 1024
/* Subvolumes related to the mounts (whether a snapshotted one lies
 * beneath one): past this many, what lies beneath is not known. */
#define BTRFS_RELATED_MAX (1u << 18)

/* One subvolume, as the snapshot count needs it. */
struct btrfs_subvol {
        uint64_t id;
        uint64_t parent_id;     /* 0: the top level, deleted, or unknown */
        uint8_t uuid[16];
        uint8_t parent_uuid[16]; /* all zero: not a snapshot */
        bool read_only;
        int64_t otime;          /* Unix seconds it was made */
        uint64_t generation;
        uint64_t tree_bytes;    /* 0: unknown (not from the tree of roots) */
        unsigned level;         /* its tree's height - 1, where tree_bytes is known */
        uint64_t exclusive;     /* its qgroup's (0/id) exclusive bytes, where quotas are on (btrfs_facts) */
};

struct btrfs_snapshots {
        unsigned count;      /* subvolumes whose parent_uuid is the subvolume's uuid */
        unsigned read_only;  /* of those, read-only */
        int64_t newest_otime; /* the newest one's creation, Unix seconds; 0: none */
        uint64_t ids_sum;    /* with count, tells a snapshot made and another deleted apart from none */
        /* The snapshot rhythm as the filesystem keeps it: the median time
         * between consecutive snapshots' creations (of the newest
         * BTRFS_SNAPSHOTS_KEPT); 0: fewer than two. */
        int64_t period_s;
        uint64_t exclusive;  /* their qgroups' exclusive bytes together, where quotas are on */
};

/* A subvolume a mount of the filesystem shows, and whether atime is
 * written through that mount. */
struct btrfs_wanted {
        uint64_t id;
        bool writes_atime;
};

struct btrfs_tracked {
        struct btrfs_subvol sub;
        struct btrfs_snapshots snapshots;
        uint64_t *snapshot_ids;  /* the newest BTRFS_SNAPSHOTS_KEPT, for their qgroups; owned */
        size_t n_snapshot_ids;
};

/* What says, between two looks, that nothing but atime updates changed
 * the filesystem: an atime update rewrites an inode item in place, so no
 * tree grows or shrinks by a node, no checksum is written, no subvolume
 * is made or deleted. Comparable only between looks of one process
 * (the digests are keyed). */
struct btrfs_evidence {
        bool have;                /* the whole tree of roots was read */
        uint64_t subvolumes;      /* live subvolumes */
        uint64_t set_digest;      /* which ones */
        uint64_t trees_digest;    /* and each tree's size */
        uint64_t csum_generation;
        uint64_t dead;            /* deleted ones not yet freed (their trees shrink as the cleaner goes) */
};

/* Snapshotted subvolumes, not read-only, that a mount writing atime
 * reaches (it shows them, or they lie beneath the one it shows), other
 * than the one sampled: their reads un-share bytes the sample does not
 * count. Taken to share where the kernel says a snapshot was ever taken
 * of them or they are one (last_snapshot, parent_uuid). */
#define BTRFS_UNSEEN_IDS 4
struct btrfs_unseen {
        bool known;          /* the subvolumes could all be related (BTRFS_RELATED_MAX) */
        unsigned count;
        uint64_t tree_bytes; /* their trees' size: the most their reads can un-share since their snapshots */
        uint64_t ids[BTRFS_UNSEEN_IDS]; /* the first few, for the reason */
};

struct btrfs_roots_result {
        struct btrfs_tracked *tracked; /* one per wanted id found, owned */
        size_t n_tracked;
        struct btrfs_evidence evidence;
        struct btrfs_unseen unseen;
        uint64_t subvolumes;   /* seen, live */
        bool truncated;        /* the scan ended early (deadline, or the helper's end not read) */
};

void btrfs_roots_result_done(struct btrfs_roots_result *r);
void btrfs_tracked_free_all(struct btrfs_tracked *t, size_t n);

typedef struct BtrfsRoots BtrfsRoots;

/* 'n' wanted subvolumes (the first BTRFS_TRACKED_MAX distinct ones
 * kept; ids 0 ignored); 'place': the one sampled (0: none); 'key': the
 * digests' key, one per process. */
int btrfs_roots_new(const struct btrfs_wanted *w, size_t n, uint64_t place, uint64_t key, BtrfsRoots **ret);
BtrfsRoots *btrfs_roots_free(BtrfsRoots *r);
/* A btrfs_root_fn: folds one record in (-ENOMEM). In order of id, as the
 * scan gives them: a snapshot's id is above its origin's (the kernel
 * gives a new subvolume one above every id in use), so an origin comes
 * before its snapshots. */
int btrfs_roots_add(const struct btrfs_root_record *rec, void *userdata);
/* The gathered facts; 'end' NULL: the scan's end never came (the
 * evidence is then not had). */
int btrfs_roots_finish(BtrfsRoots *r, const struct btrfs_roots_end *end, struct btrfs_roots_result *ret);

/* Whether two looks' evidence shows nothing but atime updates between
 * them (both had, the same, and nothing deleted waiting to be freed). */
bool btrfs_evidence_still(const struct btrfs_evidence *a, const struct btrfs_evidence *b);
