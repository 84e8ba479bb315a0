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

/* ---------------------------------------------------------------- gathering */

struct kept {
        int64_t otime;
        uint64_t id;
};

/* A subvolume as the relation to the mounts needs it. */
#define REL_WRITABLE 1u
#define REL_SHARES 2u
struct rel {
        uint64_t id, parent, tree_bytes;
        uint32_t flags;
};

struct BtrfsRoots {
        struct btrfs_wanted wanted[BTRFS_TRACKED_MAX];
        size_t n_wanted;
        uint64_t place, key;
        struct btrfs_tracked tracked[BTRFS_TRACKED_MAX];
        bool found[BTRFS_TRACKED_MAX], deleted[BTRFS_TRACKED_MAX];
        struct kept *kept[BTRFS_TRACKED_MAX]; /* a min-heap of the newest snapshots, by creation */
        size_t n_kept[BTRFS_TRACKED_MAX];
        struct rel *rel;
        size_t n_rel, allocated_rel;
        bool rel_full, rel_sorted;
        struct btrfs_evidence ev;
};

static uint64_t mix64(uint64_t x) {
        x += UINT64_C(0x9e3779b97f4a7c15);
        x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
        return x ^ (x >> 31);
}

static bool uuid_null(const uint8_t u[16]) {
        static const uint8_t zero[16];

        return memcmp(u, zero, 16) == 0;
}

int btrfs_roots_new(const struct btrfs_wanted *w, size_t n, uint64_t place, uint64_t key, BtrfsRoots **ret) {
        BtrfsRoots *r = calloc(1, sizeof *r);

        if (!r)
                return -ENOMEM;
        r->place = place;
        r->key = key;
        r->rel_sorted = true;
        for (size_t i = 0; i < n && r->n_wanted < BTRFS_TRACKED_MAX; i++) {
                bool dup = false;

                for (size_t j = 0; j < r->n_wanted; j++)
                        if (r->wanted[j].id == w[i].id) {
                                r->wanted[j].writes_atime |= w[i].writes_atime;
                                dup = true;
                        }
                if (!dup && w[i].id != 0)
                        r->wanted[r->n_wanted++] = w[i];
        }
        *ret = r;
        return 0;
}

BtrfsRoots *btrfs_roots_free(BtrfsRoots *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < BTRFS_TRACKED_MAX; i++) {
                free(r->kept[i]);
                free(r->tracked[i].snapshot_ids);
        }
        free(r->rel);
        free(r);
        return NULL;
}

static void subvol_from_record(const struct btrfs_root_record *rec, struct btrfs_subvol *ret) {
        *ret = (struct btrfs_subvol) {
                .id = rec->id,
                .parent_id = rec->parent_id,
                .read_only = rec->read_only,
                .otime = rec->otime,
                .generation = rec->generation,
                .tree_bytes = rec->tree_bytes,
                .level = rec->level,
        };
        memcpy(ret->uuid, rec->uuid, 16);
        memcpy(ret->parent_uuid, rec->parent_uuid, 16);
}

static bool kept_less(const struct kept *a, const struct kept *b) {
        return a->otime < b->otime || (a->otime == b->otime && a->id < b->id);
}

static void heap_down(struct kept *h, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, m = i;
                struct kept t;

                if (l < n && kept_less(&h[l], &h[m]))
                        m = l;
                if (l + 1 < n && kept_less(&h[l + 1], &h[m]))
                        m = l + 1;
                if (m == i)
                        return;
                t = h[i], h[i] = h[m], h[m] = t;
                i = m;
        }
}

/* One more snapshot of tracked subvolume i: the newest are kept. */
static int keep_snapshot(BtrfsRoots *r, size_t i, const struct btrfs_root_record *rec) {
        struct kept k = { .otime = rec->otime, .id = rec->id }, *h;
        size_t n = r->n_kept[i];

        if (!r->kept[i] && !(r->kept[i] = calloc(BTRFS_SNAPSHOTS_KEPT, sizeof(struct kept))))
                return -ENOMEM;
        h = r->kept[i];
        if (n == BTRFS_SNAPSHOTS_KEPT) {
                if (kept_less(&k, &h[0]))
                        return 0;
                h[0] = k;
                heap_down(h, n, 0);
                return 0;
        }
        h[n] = k;
        for (size_t c = n; c > 0 && kept_less(&h[c], &h[(c - 1) / 2]); c = (c - 1) / 2) {
                struct kept t = h[c];

                h[c] = h[(c - 1) / 2];
                h[(c - 1) / 2] = t;
        }
        r->n_kept[i] = n + 1;
        return 0;
}

/* Whether rec is a snapshot of a tracked subvolume, and which. */
static int fold_snapshot(BtrfsRoots *r, const struct btrfs_root_record *rec) {
        for (size_t i = 0; i < r->n_wanted; i++) {
                struct btrfs_snapshots *s = &r->tracked[i].snapshots;

                if (!r->found[i] || r->tracked[i].sub.id == rec->id ||
                    memcmp(rec->parent_uuid, r->tracked[i].sub.uuid, 16) != 0)
                        continue;
                s->count++;
                s->read_only += rec->read_only;
                s->ids_sum += rec->id;
                s->newest_otime = MAX(s->newest_otime, rec->otime);
                return keep_snapshot(r, i, rec);
        }
        return 0;
}

static int fold_related(BtrfsRoots *r, const struct btrfs_root_record *rec) {
        if (r->n_rel >= BTRFS_RELATED_MAX) {
                r->rel_full = true;
                return 0;
        }
        if (array_grow((void **) &r->rel, &r->allocated_rel, r->n_rel, 256, sizeof *r->rel) < 0)
                return -ENOMEM;
        if (r->n_rel > 0 && r->rel[r->n_rel - 1].id >= rec->id)
                r->rel_sorted = false;
        r->rel[r->n_rel++] = (struct rel) {
                .id = rec->id,
                .parent = rec->parent_id,
                .tree_bytes = rec->tree_bytes,
                .flags = (rec->read_only ? 0 : REL_WRITABLE) |
                         (rec->last_snapshot > 0 || !uuid_null(rec->parent_uuid) ? REL_SHARES : 0),
        };
        return 0;
}

int btrfs_roots_add(const struct btrfs_root_record *rec, void *userdata) {
        BtrfsRoots *r = userdata;
        uint64_t id_mix = mix64(rec->id ^ r->key);
        /* Deleted: its link in its parent is gone at once (no back
         * reference: only the top level has none), its references at the
         * commit; its tree waits for the cleaner, or for its last mount. */
        bool dead = rec->refs == 0 || (rec->parent_id == 0 && rec->id != BTRFS_FS_TREE_OBJECTID);

        /* Every tree's size, the dead ones' too: the cleaner shrinks them. */
        r->ev.trees_digest += mix64(id_mix ^ rec->tree_bytes);
        for (size_t i = 0; i < r->n_wanted; i++)
                if (r->wanted[i].id == rec->id) {
                        subvol_from_record(rec, &r->tracked[i].sub);
                        r->found[i] = true;
                        r->deleted[i] = dead;
                }
        if (dead) {
                r->ev.dead++;
                return 0;
        }
        r->ev.subvolumes++;
        r->ev.set_digest += id_mix;
        if (!uuid_null(rec->parent_uuid)) {
                int k = fold_snapshot(r, rec);

                if (k < 0)
                        return k;
        }
        return fold_related(r, rec);
}

static int cmp_int64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return x < y ? -1 : x > y;
}

static int cmp_kept_newest(const void *a, const void *b) {
        const struct kept *x = a, *y = b;

        return kept_less(y, x) ? -1 : kept_less(x, y);
}

/* The kept snapshots of tracked subvolume i, newest first: their ids, and
 * the median gap between their creations. */
static int finish_snapshots(BtrfsRoots *r, size_t i) {
        struct btrfs_tracked *t = &r->tracked[i];
        struct kept *k = r->kept[i];
        size_t n = r->n_kept[i];
        _cleanup_free_ int64_t *gaps = NULL;

        if (n == 0)
                return 0;
        qsort(k, n, sizeof *k, cmp_kept_newest);
        t->snapshot_ids = calloc(n, sizeof *t->snapshot_ids);
        if (!t->snapshot_ids)
                return -ENOMEM;
        for (size_t j = 0; j < n; j++)
                t->snapshot_ids[j] = k[j].id;
        t->n_snapshot_ids = n;
        if (n < 2)
                return 0;
        gaps = calloc(n - 1, sizeof *gaps);
        if (!gaps)
                return -ENOMEM;
        for (size_t j = 0; j + 1 < n; j++)
                gaps[j] = k[j].otime - k[j + 1].otime;
        qsort(gaps, n - 1, sizeof *gaps, cmp_int64);
        t->snapshots.period_s = (n - 1) % 2 ? gaps[(n - 1) / 2] : (gaps[(n - 1) / 2 - 1] + gaps[(n - 1) / 2]) / 2;
        return 0;
}

static int cmp_rel(const void *a, const void *b) {
        const struct rel *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

static const struct rel *rel_find(const BtrfsRoots *r, uint64_t id) {
        struct rel k = { .id = id };

        if (r->n_rel == 0)
                return NULL;
        return bsearch(&k, r->rel, r->n_rel, sizeof *r->rel, cmp_rel);
}

static bool wanted_writes(const BtrfsRoots *r, uint64_t id) {
        for (size_t i = 0; i < r->n_wanted; i++)
                if (r->wanted[i].id == id)
                        return r->wanted[i].writes_atime;
        return false;
}

/* Whether a mount writing atime reaches x: it shows x, or a subvolume x
 * lies beneath (the chain of parents, at most as deep as btrfs nests). */
static bool reached(const BtrfsRoots *r, const struct rel *x) {
        const struct rel *c = x;

        for (unsigned depth = 0; c && depth < 4096; depth++) {
                if (wanted_writes(r, c->id))
                        return true;
                if (c->parent == 0 || c->parent == c->id)
                        return false;
                c = rel_find(r, c->parent);
        }
        return false;
}

static void finish_unseen(BtrfsRoots *r, struct btrfs_unseen *u) {
        *u = (struct btrfs_unseen) { .known = !r->rel_full };
        if (r->rel_full)
                return;
        if (!r->rel_sorted)
                qsort(r->rel, r->n_rel, sizeof *r->rel, cmp_rel);
        for (size_t i = 0; i < r->n_rel; i++) {
                const struct rel *x = &r->rel[i];

                if (x->id == r->place || (x->flags & (REL_WRITABLE | REL_SHARES)) != (REL_WRITABLE | REL_SHARES) ||
                    !reached(r, x))
                        continue;
                if (u->count < BTRFS_UNSEEN_IDS)
                        u->ids[u->count] = x->id;
                u->count++;
                u->tree_bytes += x->tree_bytes;
        }
}

int btrfs_roots_finish(BtrfsRoots *r, const struct btrfs_roots_end *end, struct btrfs_roots_result *ret) {
        size_t n = 0;
        int k;

        *ret = (struct btrfs_roots_result) {};
        for (size_t i = 0; i < r->n_wanted; i++)
                n += r->found[i];
        ret->tracked = n ? calloc(n, sizeof *ret->tracked) : NULL;
        if (n && !ret->tracked)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_wanted; i++) {
                if (!r->found[i])
                        continue;
                k = finish_snapshots(r, i);
                if (k < 0) {
                        btrfs_roots_result_done(ret);
                        return k;
                }
                ret->tracked[ret->n_tracked] = r->tracked[i];
                /* deleted: its parent is none, as libbtrfsutil says of an orphan */
                if (r->deleted[i])
                        ret->tracked[ret->n_tracked].sub.parent_id = 0;
                r->tracked[i].snapshot_ids = NULL; /* moved */
                ret->n_tracked++;
        }
        finish_unseen(r, &ret->unseen);
        ret->subvolumes = r->ev.subvolumes;
        ret->truncated = !end || (end->flags & BTRFS_ROOTS_TRUNCATED);
        ret->evidence = r->ev;
        ret->evidence.have = !ret->truncated;
        if (end) {
                ret->evidence.csum_generation = end->csum_generation;
                ret->evidence.dead += end->orphans;
        }
        return 0;
}

void btrfs_tracked_free_all(struct btrfs_tracked *t, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(t[i].snapshot_ids);
        free(t);
}

void btrfs_roots_result_done(struct btrfs_roots_result *r) {
        btrfs_tracked_free_all(r->tracked, r->n_tracked);
        r->tracked = NULL;
        r->n_tracked = 0;
}

bool btrfs_evidence_still(const struct btrfs_evidence *a, const struct btrfs_evidence *b) {
        return a->have && b->have && a->dead == 0 && b->dead == 0 && a->subvolumes == b->subvolumes &&
               a->set_digest == b->set_digest && a->trees_digest == b->trees_digest &&
               a->csum_generation == b->csum_generation;
}
