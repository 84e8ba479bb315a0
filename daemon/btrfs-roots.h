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
 */
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
