/* btrfs-roots.c: the tree of roots read (btrfs_roots_scan, where
 * CAP_SYS_ADMIN is held: atimed's helper), and its records gathered into
 * the tracked subvolumes, the evidence and what the sample cannot see
 * (see btrfs-roots.h). */
#include "btrfs-roots.h"

#include <errno.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/magic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <time.h>

#include "macro.h"
#include "time-util.h"

/* ---------------------------------------------------------------- the scan */

/* Large enough for a few hundred root items a call; one call per 256 KiB
 * of the tree of roots (100,000 subvolumes: some 230 calls). */
#define SEARCH_BUF_SIZE (256u * 1024u)
#define SEARCH_ITEMS 4096

static bool fs_tree(uint64_t id) {
        return id == BTRFS_FS_TREE_OBJECTID || (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

struct scan {
        btrfs_root_fn each;
        void *userdata;
        struct btrfs_root_record cur; /* the subvolume whose items are being read */
        bool have_cur;
        struct btrfs_roots_end *end;
};

static int scan_flush(struct scan *s) {
        int r;

        if (!s->have_cur)
                return 0;
        s->have_cur = false;
        r = s->each(&s->cur, s->userdata);
        if (r < 0)
                return r;
        s->end->records++;
        return 0;
}

/* A ROOT_ITEM's fields, the newer ones only where the kernel that last
 * wrote it kept them (generation_v2 equal to generation). */
static void scan_root_item(struct scan *s, uint64_t id, const struct btrfs_root_item *ri, uint32_t len) {
        s->cur = (struct btrfs_root_record) {
                .id = id,
                .generation = le64toh(ri->generation),
                .last_snapshot = le64toh(ri->last_snapshot),
                .tree_bytes = le64toh(ri->bytes_used),
                .refs = le32toh(ri->refs),
                .level = ri->level,
                .read_only = (le64toh(ri->flags) & BTRFS_ROOT_SUBVOL_RDONLY) != 0,
        };
        if (len >= sizeof *ri && ri->generation_v2 == ri->generation) {
                memcpy(s->cur.uuid, ri->uuid, 16);
                memcpy(s->cur.parent_uuid, ri->parent_uuid, 16);
                s->cur.ctransid = le64toh(ri->ctransid);
                s->cur.otransid = le64toh(ri->otransid);
                s->cur.otime = (int64_t) le64toh(ri->otime.sec);
        }
        s->have_cur = true;
}

static int scan_item(struct scan *s, const struct btrfs_ioctl_search_header *h, const struct btrfs_root_item *ri) {
        int r;

        if (h->type == BTRFS_ROOT_ITEM_KEY && h->objectid == BTRFS_CSUM_TREE_OBJECTID &&
            h->len >= offsetof(struct btrfs_root_item, root_dirid))
                s->end->csum_generation = le64toh(ri->generation);
        else if (h->type == BTRFS_ORPHAN_ITEM_KEY && h->objectid == BTRFS_ORPHAN_OBJECTID)
                s->end->orphans++;
        if (!fs_tree(h->objectid))
                return 0;
        if (h->type == BTRFS_ROOT_ITEM_KEY) {
                /* Too short for the fields atimed reads: not a root item
                 * it knows. */
                if (h->len < offsetof(struct btrfs_root_item, generation_v2))
                        return 0;
                r = scan_flush(s);
                if (r < 0)
                        return r;
                scan_root_item(s, h->objectid, ri, h->len);
        } else if (h->type == BTRFS_ROOT_BACKREF_KEY && s->have_cur && s->cur.id == h->objectid &&
                   s->cur.parent_id == 0)
                s->cur.parent_id = h->offset;
        return 0;
}

/* The key after 'k' in the tree's order (objectid, type, offset); false
 * past the last. */
static bool key_next(struct btrfs_ioctl_search_key *k, const struct btrfs_ioctl_search_header *h) {
        k->min_objectid = h->objectid;
        k->min_type = h->type;
        k->min_offset = h->offset;
        if (k->min_offset < UINT64_MAX) {
                k->min_offset++;
                return true;
        }
        k->min_offset = 0;
        if (k->min_type < UINT8_MAX) {
                k->min_type++;
                return true;
        }
        k->min_type = 0;
        if (k->min_objectid == UINT64_MAX)
                return false;
        k->min_objectid++;
        return true;
}

/* One call's items; *ret_more: the tree goes on. The kernel packs them
 * unaligned: each header and item is copied out before it is read. */
static int scan_batch(int fd, struct btrfs_ioctl_search_args_v2 *a, struct btrfs_root_item *item, struct scan *s,
                      bool *ret_more) {
        struct btrfs_ioctl_search_header h = {};
        size_t off = 0;
        int r;

        a->key.nr_items = SEARCH_ITEMS;
        a->buf_size = SEARCH_BUF_SIZE;
        if (ioctl(fd, BTRFS_IOC_TREE_SEARCH_V2, a) < 0)
                return negative_errno();
        *ret_more = a->key.nr_items > 0;
        for (uint32_t i = 0; i < a->key.nr_items; i++) {
                if (off + sizeof h > SEARCH_BUF_SIZE)
                        return -EBADMSG;
                memcpy(&h, a->buf + off, sizeof h);
                if (h.len > SEARCH_BUF_SIZE - off - sizeof h)
                        return -EBADMSG;
                /* Only root items are read, and no more of one than atimed knows. */
                *item = (struct btrfs_root_item) {};
                memcpy(item, a->buf + off + sizeof h, MIN((size_t) h.len, sizeof *item));
                r = scan_item(s, &h, item);
                if (r < 0)
                        return r;
                off += sizeof h + h.len;
        }
        if (*ret_more && !key_next(&a->key, &h))
                *ret_more = false;
        return 0;
}

int btrfs_roots_scan(int fd, uint64_t deadline_usec, btrfs_root_fn each, void *userdata, struct btrfs_roots_end *ret) {
        _cleanup_free_ struct btrfs_ioctl_search_args_v2 *a = NULL;
        struct btrfs_root_item item;
        struct scan s = { .each = each, .userdata = userdata, .end = ret };
        struct statfs sfs;
        bool more = true;
        int r;

        *ret = (struct btrfs_roots_end) {};
        if (fstatfs(fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type != BTRFS_SUPER_MAGIC)
                return -EMEDIUMTYPE;
        a = calloc(1, sizeof *a + SEARCH_BUF_SIZE);
        if (!a)
                return -ENOMEM;
        a->key = (struct btrfs_ioctl_search_key) {
                .tree_id = BTRFS_ROOT_TREE_OBJECTID,
                .max_objectid = UINT64_MAX,
                .max_type = UINT8_MAX,
                .max_offset = UINT64_MAX,
                .max_transid = UINT64_MAX,
        };
        while (more) {
                if (deadline_usec && now_usec(CLOCK_MONOTONIC) >= deadline_usec) {
                        ret->flags |= BTRFS_ROOTS_TRUNCATED;
                        break;
                }
                r = scan_batch(fd, a, &item, &s, &more);
                if (r < 0)
                        return r;
        }
        return scan_flush(&s);
}
