/* store.c: histories on disk: snapshot plus journal (see store.h).
 * Everything on disk is little-endian; every read is bounds-checked. */
#include "store.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <limits.h>
#include <math.h>

#include "escape.h"
#include "fileio.h"
#include "mounts.h"
#include "strv.h"
#include "varlink.h"

#define SNAPSHOT_MAGIC "ATIMEDHS"
#define JOURNAL_MAGIC "ATIMEDHJ"
/* Version 3: points and samples carry the btrfs metadata atime updates
 * un-shared from snapshots (per day, its 95% interval, how many samples,
 * whether modelled): a point is 46 bytes, a journal sample 48. Version 2:
 * points and samples hold atime updates per minute; version 1 held
 * atime-written inodes per minute, a lower bound of updates, and is read as
 * it is. Versions 1 and 2 share a layout (points of 32 bytes, samples of
 * 36), and are read with no un-shared bytes. */
#define STORE_VERSION 3u
#define STORE_VERSION_UNSHARED 3u
#define BLOCK_MAGIC 0x4b4c424au /* "JBLK" */
#define FILE_MAX ((size_t) 1 << 30)
#define KEY_MAX STORE_KEY_MAX
#define MOUNTS_MAX 1000000u
#define PENDING_MAX 1000000u
#define JOURNAL_MIN_COMPACT ((off_t) 1 << 20)
#define SNAPSHOT_MAX_AGE (24 * 3600)
#define SAMPLE_BYTES_V2 36u
#define SAMPLE_BYTES 48u

struct pending {
        MountHistory *h; /* histories are only freed by pruning, which drops these */
        struct stats_sample s;
};

struct Store {
        char *dir;
        struct stats_ring_spec specs[STATS_MAX_RINGS];
        unsigned n_specs;
        size_t max_mounts;
        MountHistory **h; /* sorted by key */
        size_t n, alloc;
        struct pending *pending;
        size_t n_pending, alloc_pending;
        uint64_t seq;          /* of the last journal block written or read */
        uint64_t snapshot_seq; /* journal blocks up to this are in the snapshot */
        int64_t snapshot_at;   /* when the snapshot was written; 0: never */
        off_t snapshot_size;
        off_t journal_size;
        bool need_snapshot;
        bool refused; /* a file of a newer format is there: nothing is written */
        bool changes_dirty; /* STORE_CHANGES is to be written again */
};

/* ---------------------------------------------------------------- CRC-32 (IEEE 802.3) */

static uint32_t crc_table[256];

static void crc_init(void) {
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
                crc_table[i] = c;
        }
}

static uint32_t crc32_of(const void *buf, size_t len) {
        const uint8_t *p = buf;
        uint32_t c = 0xFFFFFFFFu;

        if (crc_table[1] == 0)
                crc_init();
        while (len--)
                c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
        return c ^ 0xFFFFFFFFu;
}

/* ---------------------------------------------------------------- encoding */

struct buf {
        uint8_t *p;
        size_t len, alloc;
        bool oom;
};

static void put(struct buf *b, const void *data, size_t n) {
        if (b->oom)
                return;
        if (b->len + n > b->alloc) {
                size_t na = b->alloc ? b->alloc : 4096;
                uint8_t *np;

                while (na < b->len + n)
                        na *= 2;
                np = realloc(b->p, na);
                if (!np) {
                        b->oom = true;
                        return;
                }
                b->p = np;
                b->alloc = na;
        }
        memcpy(b->p + b->len, data, n);
        b->len += n;
}

static void put_u16(struct buf *b, uint16_t v) {
        uint8_t x[2] = { (uint8_t) v, (uint8_t) (v >> 8) };
        put(b, x, 2);
}

static void put_u32(struct buf *b, uint32_t v) {
        uint8_t x[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24) };
        put(b, x, 4);
}

static void put_u64(struct buf *b, uint64_t v) {
        put_u32(b, (uint32_t) v);
        put_u32(b, (uint32_t) (v >> 32));
}

static void put_f32(struct buf *b, float f) {
        uint32_t v;
        memcpy(&v, &f, 4);
        put_u32(b, v);
}

static void put_f32s(struct buf *b, const float *f, size_t n) {
        for (size_t i = 0; i < n; i++)
                put_f32(b, f[i]);
}

static void put_point(struct buf *b, const struct stats_point *p) {
        put_f32s(b, (const float[]) { p->per_min, p->lo, p->hi, p->write_iops, p->write_kib }, 5);
        put_u16(b, p->n);
        put_u16(b, p->n_act);
        put_u16(b, p->n_dev);
        put(b, (uint8_t[]) { p->atime, p->flags, p->probe, p->unshared_modelled ? 1 : 0, 0, 0 }, 6);
        put_u16(b, p->n_unshared);
        put_f32s(b, (const float[]) { p->unshared_per_day, p->unshared_lo, p->unshared_hi }, 3);
}

/* Reading: a cursor that refuses to run past the end. */
struct cur {
        const uint8_t *p;
        size_t len, off;
        bool bad;
};

static const uint8_t *take(struct cur *c, size_t n) {
        const uint8_t *r;

        if (c->bad || c->len - c->off < n) {
                c->bad = true;
                return NULL;
        }
        r = c->p + c->off;
        c->off += n;
        return r;
}

static uint16_t get_u16(struct cur *c) {
        const uint8_t *x = take(c, 2);
        return x ? (uint16_t) (x[0] | x[1] << 8) : 0;
}

static uint32_t get_u32(struct cur *c) {
        const uint8_t *x = take(c, 4);
        return x ? (uint32_t) x[0] | (uint32_t) x[1] << 8 | (uint32_t) x[2] << 16 | (uint32_t) x[3] << 24 : 0;
}

static uint64_t get_u64(struct cur *c) {
        uint64_t lo = get_u32(c);
        return lo | (uint64_t) get_u32(c) << 32;
}

static float get_f32(struct cur *c) {
        uint32_t v = get_u32(c);
        float f;

        memcpy(&f, &v, 4);
        return f;
}

/* Finite and not absurd: a flipped bit must not become a NaN on a chart. */
static bool sane(float f) {
        return f == f && f >= -1e30f && f <= 1e30f;
}

/* A point of format 'version': from 3 on, with the un-shared bytes. */
static bool get_point(struct cur *c, uint32_t version, struct stats_point *p) {
        const uint8_t *tail;

        /* One statement each: the initializers of one list are evaluated in
         * an unspecified order (C11 6.7.9p23), and every read moves c. */
        *p = (struct stats_point) {};
        p->per_min = get_f32(c);
        p->lo = get_f32(c);
        p->hi = get_f32(c);
        p->write_iops = get_f32(c);
        p->write_kib = get_f32(c);
        p->n = get_u16(c);
        p->n_act = get_u16(c);
        p->n_dev = get_u16(c);
        tail = take(c, 6);
        if (!tail)
                return false;
        p->atime = tail[0];
        p->flags = tail[1];
        p->probe = tail[2];
        if (version >= STORE_VERSION_UNSHARED) {
                p->unshared_modelled = tail[3] & 1;
                p->n_unshared = get_u16(c);
                p->unshared_per_day = get_f32(c);
                p->unshared_lo = get_f32(c);
                p->unshared_hi = get_f32(c);
                if (c->bad || !sane(p->unshared_per_day) || !sane(p->unshared_lo) || !sane(p->unshared_hi))
                        return false;
        }
        return sane(p->per_min) && sane(p->lo) && sane(p->hi) && sane(p->write_iops) && sane(p->write_kib);
}

/* ---------------------------------------------------------------- keys */

static bool key_escapes(unsigned char c) {
        return c <= ' ' || c == '\\' || c == 0x7f;
}

/* Writes " name=value" (no space first at 'at' 0) at buf + at, escaped,
 * or, with buf NULL, only counts it; returns the length. */
static size_t key_put_field(char *buf, size_t at, const char *name, const char *value) {
        size_t n = (at > 0) + strlen(name) + 1;

        if (buf) {
                char *o = buf + at;

                if (at > 0)
                        *o++ = ' ';
                o = stpcpy(o, name);
                *o = '=';
        }
        for (const unsigned char *p = (const unsigned char *) value; *p; p++) {
                if (!key_escapes(*p)) {
                        if (buf)
                                buf[at + n] = (char) *p;
                        n++;
                        continue;
                }
                if (buf)
                        snprintf(buf + at + n, 5, "\\x%02x", *p);
                n += 4;
        }
        return n;
}

/* The key's fields, into buf (NULL: counted): its length. */
static size_t key_put(char *buf, const char *uuid, const char *source, const char *fstype, const char *root,
                      const char *target) {
        size_t n = 0;

        if (uuid)
                n += key_put_field(buf, n, "uuid", uuid);
        else {
                n += key_put_field(buf, n, "source", source ? source : "");
                n += key_put_field(buf, n, "fstype", fstype ? fstype : "");
        }
        if (root && !streq(root, "/"))
                n += key_put_field(buf, n, "root", root);
        return n + key_put_field(buf, n, "target", target);
}

/* Two passes over the fields (count, then fill), no stdio stream: every
 * mount's key is made again at each change of the mount table
 * (tracker.c), and a stream a mount cost that change most of its time on
 * the loop at 2,000 mounts. */
int store_key_format(const char *uuid, const char *source, const char *fstype, const char *root, const char *target,
                     char **ret) {
        size_t n = key_put(NULL, uuid, source, fstype, root, target);
        char *buf = malloc(n + 1);

        if (!buf)
                return -ENOMEM;
        buf[key_put(buf, uuid, source, fstype, root, target)] = 0;
        *ret = buf;
        return 0;
}

bool store_key_has_target(const char *key, const char *target) {
        const char *t = strstr(key, " target=");
        const unsigned char *p;

        /* Exactly one target field, the last; a key written before values
         * were escaped may hold two, and then names none. */
        if (!t || strstr(t + 1, " target="))
                return false;
        t += strlen(" target=");
        for (p = (const unsigned char *) target; *p; p++) {
                char esc[5];

                if (key_escapes(*p)) {
                        snprintf(esc, sizeof esc, "\\x%02x", *p);
                        if (strncmp(t, esc, 4) != 0)
                                return false;
                        t += 4;
                } else if (*t++ != (char) *p)
                        return false;
        }
        return *t == 0;
}

/* ---------------------------------------------------------------- histories */

static ssize_t find_index(const Store *s, const char *key, bool *found) {
        size_t lo = 0, hi = s->n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(s->h[mid]->key, key);

                if (c == 0) {
                        *found = true;
                        return (ssize_t) mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return (ssize_t) lo;
}

const MountHistory *store_find(const Store *s, const char *key) {
        bool found;
        ssize_t i = find_index(s, key, &found);

        return found ? s->h[i] : NULL;
}

static MountHistory *get_or_create(Store *s, const char *key) {
        bool found;
        ssize_t i = find_index(s, key, &found);
        MountHistory *h;

        if (found)
                return s->h[i];
        if (s->n >= MOUNTS_MAX)
                return NULL;
        if (s->n == s->alloc) {
                size_t na = s->alloc ? s->alloc * 2 : 32;
                MountHistory **nh = realloc(s->h, na * sizeof *nh);

                if (!nh)
                        return NULL;
                s->h = nh;
                s->alloc = na;
        }
        if (history_new(key, s->specs, s->n_specs, &h) < 0)
                return NULL;
        memmove(s->h + i + 1, s->h + i, (s->n - (size_t) i) * sizeof *s->h);
        s->h[i] = h;
        s->n++;
        return h;
}

/* A sample whose policy differs from the one the history last recorded
 * (a remount seen live, or the table found so after a restart) records
 * the change, with the advice in force until then. Samples the change
 * already covers (a journal replayed after the changes file was written)
 * record nothing again. */
static bool note_change(MountHistory *h, const struct stats_sample *x) {
        const struct stats_point *last;

        if (!x->has_policy || !stats_time_sane(x->t) || x->t <= h->change.t || x->atime >= _ATIME_MAX)
                return false;
        last = history_last_policy(h);
        if (!last || (last->atime == x->atime && (last->flags & STATS_LAZYTIME) == (x->flags & STATS_LAZYTIME)))
                return false;
        h->change = (struct stats_change) {
                .t = x->t,
                .last_old = h->last_seen,
                .from = last->atime,
                .to = x->atime,
                .from_flags = last->flags & STATS_LAZYTIME,
                .to_flags = x->flags & STATS_LAZYTIME,
                .promise = h->promise,
        };
        return true;
}

int store_add(Store *s, const char *key, const struct stats_sample *sample) {
        MountHistory *h;
        int r;

        assert(s);
        assert(key);
        assert(sample);

        /* The files give a key 16 bits of length: a longer one could not be
         * read back. */
        if (*key == 0 || strlen(key) > KEY_MAX)
                return -ENAMETOOLONG;
        h = get_or_create(s, key);
        if (!h)
                return -ENOMEM;
        if (note_change(h, sample))
                s->changes_dirty = true;
        r = history_add(h, sample);
        if (r < 0)
                return r;
        if (s->need_snapshot)
                return 0; /* the next flush writes everything anyway */
        if (s->n_pending >= PENDING_MAX) {
                s->need_snapshot = true;
                free(s->pending);
                s->pending = NULL;
                s->n_pending = s->alloc_pending = 0;
                return 0;
        }
        if (s->n_pending == s->alloc_pending) {
                size_t na = s->alloc_pending ? s->alloc_pending * 2 : 256;
                struct pending *np = realloc(s->pending, na * sizeof *np);

                if (!np) {
                        s->need_snapshot = true;
                        return 0;
                }
                s->pending = np;
                s->alloc_pending = na;
        }
        s->pending[s->n_pending++] = (struct pending) { .h = h, .s = *sample };
        return 0;
}

/* The promise is written again when what it advises changes, or its
 * saving by more than this share: not at every tick's wobble. */
#define PROMISE_REWRITE_SHARE 0.1

void store_set_promise(Store *s, const char *key, const struct stats_promise *p) {
        bool found;
        ssize_t i = find_index(s, key, &found);
        const struct stats_point *last;
        struct stats_promise *cur;

        if (!found)
                return; /* no history, nothing to compare a change against */
        last = history_last_policy(s->h[i]);
        if (!last || last->atime != p->for_atime || (last->flags & STATS_LAZYTIME) != (p->for_flags & STATS_LAZYTIME))
                return; /* made for a policy the history has not recorded yet */
        cur = &s->h[i]->promise;
        if ((cur->t > 0) != (p->t > 0) || cur->atime != p->atime || cur->flags != p->flags ||
            fabsf(cur->saving_per_min - p->saving_per_min) > PROMISE_REWRITE_SHARE * fabsf(cur->saving_per_min))
                s->changes_dirty = true;
        *cur = *p;
}

static double per_inode(const struct stats_unshare_model *m) {
        return m->inodes > 0 ? m->bytes / m->inodes : 0;
}

void store_set_unshare_model(Store *s, const char *key, const struct stats_unshare_model *m) {
        bool found;
        ssize_t i = find_index(s, key, &found);
        struct stats_unshare_model *cur;

        if (!found || m->intervals == 0 || !isfinite(m->bytes) || !isfinite(m->inodes) || !isfinite(m->hits))
                return;
        cur = &s->h[i]->unshare_model;
        if (m->intervals != cur->intervals &&
            (cur->intervals < 16 || fabs(per_inode(m) - per_inode(cur)) > 0.01 * per_inode(cur)))
                s->changes_dirty = true;
        if (cur->intervals == 0 || cur->agreed != m->agreed)
                s->changes_dirty = true;
        *cur = *m;
}

size_t store_n_mounts(const Store *s) {
        return s->n;
}

const MountHistory *store_get(const Store *s, size_t i) {
        return i < s->n ? s->h[i] : NULL;
}

size_t store_memory(const Store *s) {
        size_t m = sizeof *s + s->alloc * sizeof *s->h + s->alloc_pending * sizeof *s->pending;

        for (size_t i = 0; i < s->n; i++)
                m += history_memory(s->h[i]);
        return m;
}

static int64_t longest_reach(const Store *s) {
        int64_t r = 0;

        for (unsigned i = 0; i < s->n_specs; i++)
                r = MAX(r, (int64_t) s->specs[i].resolution * s->specs[i].capacity);
        return r;
}

/* A history shorter than this is a passing mount's (a container's, a
 * test's, an automount's): it gives way before the system's. */
#define SHORT_LIVED_S 3600

/* Whether the history spans less than SHORT_LIVED_S: a ring not full yet
 * begins with the first sample's bucket (the finest such ring tells it
 * best); one that every ring has filled is long. */
static bool short_lived(const MountHistory *h) {
        for (unsigned r = 0; r < h->n_rings; r++) {
                const StatsRing *g = &h->rings[r];

                if (g->count == 0)
                        return true; /* nothing recorded yet */
                if (g->count < g->spec.capacity)
                        return h->last_seen - history_oldest(h, r) < SHORT_LIVED_S;
        }
        return h->n_rings == 0;
}

/* Which histories go first beyond max_mounts: users' mounts, then passing
 * ones, then the system's (0, 1, 2). */
static int keep_rank(const MountHistory *h) {
        return h->users ? 0 : short_lived(h) ? 1 : 2;
}

/* The order histories are dropped in: lowest rank first, and in a rank the
 * longest gone. */
static int cmp_drop_order(const void *a, const void *b) {
        const MountHistory *x = *(MountHistory *const *) a, *y = *(MountHistory *const *) b;
        int rx = keep_rank(x), ry = keep_rank(y);

        if (rx != ry)
                return rx - ry;
        return (x->last_seen > y->last_seen) - (x->last_seen < y->last_seen);
}

void store_mark_users(Store *s, const char *key) {
        bool found;
        ssize_t i = find_index(s, key, &found);

        if (found)
                s->h[i]->users = true;
}

static int cmp_key(const void *a, const void *b) {
        return strcmp((*(MountHistory *const *) a)->key, (*(MountHistory *const *) b)->key);
}

size_t store_prune(Store *s, int64_t now) {
        int64_t reach = longest_reach(s);
        size_t kept = 0, dropped = 0;

        /* Callers prune only right before a snapshot: pending samples point
         * into histories, and a snapshot needs none of them. */
        for (size_t i = 0; i < s->n; i++) {
                if (now - s->h[i]->last_seen > reach) {
                        history_free(s->h[i]);
                        dropped++;
                } else
                        s->h[kept++] = s->h[i];
        }
        s->n = kept;
        if (s->n > s->max_mounts) {
                /* Beyond the cap, users' and passing mounts first, then
                 * the longest gone. */
                qsort(s->h, s->n, sizeof *s->h, cmp_drop_order);
                for (size_t i = 0; i < s->n - s->max_mounts; i++) {
                        history_free(s->h[i]);
                        dropped++;
                }
                memmove(s->h, s->h + (s->n - s->max_mounts), s->max_mounts * sizeof *s->h);
                s->n = s->max_mounts;
                qsort(s->h, s->n, sizeof *s->h, cmp_key);
        }
        if (dropped > 0) {
                free(s->pending);
                s->pending = NULL;
                s->n_pending = s->alloc_pending = 0;
                s->need_snapshot = true;
        }
        return dropped;
}

int store_new(const char *dir, const struct stats_ring_spec *specs, unsigned n_specs, size_t max_mounts,
              Store **ret) {
        Store *s;

        if (n_specs == 0 || n_specs > STATS_MAX_RINGS)
                return -EINVAL;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->dir = dir ? strdup(dir) : NULL;
        if (dir && !s->dir) {
                free(s);
                return -ENOMEM;
        }
        memcpy(s->specs, specs, n_specs * sizeof *specs);
        s->n_specs = n_specs;
        s->max_mounts = max_mounts ? max_mounts : MOUNTS_MAX;
        *ret = s;
        return 0;
}

Store *store_free(Store *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                history_free(s->h[i]);
        free(s->h);
        free(s->pending);
        free(s->dir);
        free(s);
        return NULL;
}

void store_load_report_done(struct store_load_report *r) {
        strv_free(r->problems);
        *r = (struct store_load_report) {};
}

static void problem(struct store_load_report *r, const char *fmt, ...) _printf_(2, 3);
static void problem(struct store_load_report *r, const char *fmt, ...) {
        _cleanup_free_ char *m = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&m, fmt, ap) >= 0)
                (void) strv_extend(&r->problems, m);
        va_end(ap);
}

/* ---------------------------------------------------------------- snapshot */

static int encode_snapshot(const Store *s, int64_t now, struct buf *b) {
        _cleanup_free_ struct stats_point *tmp = NULL;
        uint32_t maxcap = 0;

        for (unsigned r = 0; r < s->n_specs; r++)
                maxcap = MAX(maxcap, s->specs[r].capacity);
        tmp = malloc((size_t) MAX(maxcap, 1u) * sizeof *tmp);
        if (!tmp)
                return -ENOMEM;

        put(b, SNAPSHOT_MAGIC, 8);
        put_u32(b, STORE_VERSION);
        put_u64(b, s->seq);
        put_u64(b, (uint64_t) now);
        put_u32(b, s->n_specs);
        for (unsigned r = 0; r < s->n_specs; r++) {
                put_u32(b, s->specs[r].resolution);
                put_u32(b, s->specs[r].capacity);
        }
        put_u32(b, (uint32_t) s->n);
        for (size_t i = 0; i < s->n; i++) {
                const MountHistory *h = s->h[i];
                size_t kl = strlen(h->key);

                put_u16(b, (uint16_t) kl);
                put(b, h->key, kl);
                put_u64(b, (uint64_t) h->last_seen);
                for (unsigned r = 0; r < s->n_specs; r++) {
                        uint32_t n = history_ring_points(h, r, tmp);

                        put_u64(b, (uint64_t) h->rings[r].head_t);
                        put_u32(b, n);
                        for (uint32_t k = 0; k < n; k++)
                                put_point(b, &tmp[k]);
                }
        }
        put_u32(b, crc32_of(b->p, b->len));
        return b->oom ? -ENOMEM : 0;
}

/* A snapshot being read: the cursor, what the header says, and the
 * histories read so far (freed with it unless taken). */
struct snapshot_parse {
        struct cur c;
        uint64_t seq;
        uint32_t version;
        uint32_t n_specs, n_mounts, maxcap;
        struct stats_ring_spec specs[STATS_MAX_RINGS]; /* the file's rings */
        int map[STATS_MAX_RINGS];                       /* file ring -> our ring, or -1 */
        struct stats_point *pts;                        /* room for the largest ring */
        MountHistory **hs;
        size_t nh;
        char *problem; /* what is wrong with the file, when -EBADMSG */
};

static void snapshot_parse_done(struct snapshot_parse *sp) {
        for (size_t i = 0; i < sp->nh; i++)
                history_free(sp->hs[i]);
        free(sp->hs);
        free(sp->pts);
        free(sp->problem);
}

/* Says what is wrong with the file; always -EBADMSG (without the words
 * if there is no memory for them). */
static int snapshot_bad(struct snapshot_parse *sp, const char *fmt, ...) _printf_(2, 3);
static int snapshot_bad(struct snapshot_parse *sp, const char *fmt, ...) {
        va_list ap;

        assert(!sp->problem);
        va_start(ap, fmt);
        if (vasprintf(&sp->problem, fmt, ap) < 0)
                sp->problem = NULL;
        va_end(ap);
        return -EBADMSG;
}

static uint32_t get_u32_at(const uint8_t *p) {
        return (uint32_t) (p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24);
}

/* Magic, version, checksum: whether the bytes are a snapshot this atimed
 * can read at all. Leaves the cursor after the version, its end before
 * the checksum. */
static int snapshot_check_envelope(struct snapshot_parse *sp) {
        const uint8_t *p = sp->c.p;
        size_t len = sp->c.len;
        uint32_t version;

        if (len == 0)
                return snapshot_bad(sp, "empty file");
        if (len < 8 + 4 || memcmp(p, SNAPSHOT_MAGIC, 8) != 0)
                return snapshot_bad(sp, "not an atimed history file");
        sp->c.off = 8;
        version = sp->version = get_u32(&sp->c);
        if (version > STORE_VERSION)
                return snapshot_bad(sp, "written by a newer atimed (format version %u; this one reads %u)", version,
                                    STORE_VERSION);
        if (version == 0)
                return snapshot_bad(sp, "unknown format version 0");
        if (len < 16 || crc32_of(p, len - 4) != get_u32_at(p + len - 4))
                return snapshot_bad(sp, "checksum mismatch: the file is corrupt or truncated");
        sp->c.len = len - 4;
        return 0;
}

/* Our ring of the same resolution as the file's, or -1. */
static int ring_of_resolution(const Store *s, uint32_t resolution) {
        int r = -1;

        for (unsigned k = 0; k < s->n_specs; k++)
                if (s->specs[k].resolution == resolution)
                        r = (int) k;
        return r;
}

/* The sequence number, the file's rings (a resolution no longer kept is
 * reported, its history dropped) and the mount count. */
static int snapshot_parse_header(const Store *s, struct snapshot_parse *sp, struct store_load_report *rep) {
        struct cur *c = &sp->c;

        sp->seq = get_u64(c);
        (void) get_u64(c); /* written at */
        sp->n_specs = get_u32(c);
        if (c->bad || sp->n_specs == 0 || sp->n_specs > STATS_MAX_RINGS)
                return snapshot_bad(sp, "bad ring count");
        for (uint32_t i = 0; i < sp->n_specs; i++) {
                struct stats_ring_spec *spec = &sp->specs[i];

                spec->resolution = get_u32(c);
                spec->capacity = get_u32(c);
                if (spec->resolution == 0 || spec->capacity == 0 || spec->capacity > 1000000)
                        return snapshot_bad(sp, "bad ring %u", i);
                sp->map[i] = ring_of_resolution(s, spec->resolution);
                if (sp->map[i] < 0)
                        problem(rep, "history at %us resolution is no longer kept ([store] rings): dropped",
                                spec->resolution);
                sp->maxcap = MAX(sp->maxcap, spec->capacity);
        }
        sp->n_mounts = get_u32(c);
        if (c->bad || sp->n_mounts > MOUNTS_MAX)
                return snapshot_bad(sp, "bad mount count");
        sp->pts = malloc((size_t) sp->maxcap * sizeof *sp->pts);
        sp->hs = calloc(sp->n_mounts ? sp->n_mounts : 1, sizeof *sp->hs);
        return sp->pts && sp->hs ? 0 : -ENOMEM;
}

/* Ring i of history h, whose key is 'key': checked whether or not we keep
 * it, then set if we do. */
static int snapshot_parse_ring(struct snapshot_parse *sp, MountHistory *h, uint32_t i, const char *key) {
        const struct stats_ring_spec *spec = &sp->specs[i];
        int64_t head_t = (int64_t) get_u64(&sp->c);
        uint32_t n = get_u32(&sp->c);

        if (sp->c.bad || n > spec->capacity)
                return snapshot_bad(sp, "bad ring %u of %s", i, key);
        for (uint32_t x = 0; x < n; x++)
                if (!get_point(&sp->c, sp->version, &sp->pts[x]))
                        return snapshot_bad(sp, "bad point in %s", key);
        if (n > 0 && !stats_time_sane(head_t))
                return snapshot_bad(sp, "bad time in ring %u of %s", i, key);
        if (sp->map[i] < 0)
                return 0;
        if (n > 0 && head_t % (int64_t) spec->resolution != 0)
                return snapshot_bad(sp, "misaligned ring %u of %s", i, key);
        return history_set_ring(h, (unsigned) sp->map[i], head_t, sp->pts, n) < 0 ? -ENOMEM : 0;
}

/* Mount record m into a new history. A key that cannot be a key (empty,
 * a NUL inside, out of order) costs that mount its history, no other: the
 * record is read through to the next one, and the history marked
 * (scratch UINT32_MAX) to be dropped. */
static int snapshot_parse_mount(const Store *s, struct snapshot_parse *sp, uint32_t m, struct store_load_report *rep) {
        uint16_t kl = get_u16(&sp->c);
        const uint8_t *k = take(&sp->c, kl);
        _cleanup_free_ char *key = NULL;
        MountHistory *h;
        int r;

        assert(sp->nh < sp->n_mounts);

        if (!k)
                return snapshot_bad(sp, "truncated key of mount %u", m);
        key = memdup_str(k, kl);
        if (!key)
                return -ENOMEM;
        r = history_new(key, s->specs, s->n_specs, &h);
        if (r < 0)
                return r;
        sp->hs[sp->nh++] = h;
        if (kl == 0 || memchr(k, 0, kl) || (sp->nh > 1 && strcmp(sp->hs[sp->nh - 2]->key, key) >= 0)) {
                problem(rep, "history of mount %u: bad or repeated key; that history dropped", m);
                h->scratch = UINT32_MAX;
        }
        h->last_seen = (int64_t) get_u64(&sp->c);
        if (!stats_time_sane(h->last_seen))
                return snapshot_bad(sp, "bad time last seen of %s", key);
        for (uint32_t i = 0; i < sp->n_specs; i++) {
                r = snapshot_parse_ring(sp, h, i, key);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Frees the histories marked to be dropped, keeping the others in order. */
static void snapshot_drop_marked(struct snapshot_parse *sp) {
        size_t kept = 0;

        for (size_t i = 0; i < sp->nh; i++)
                if (sp->hs[i]->scratch == UINT32_MAX)
                        history_free(sp->hs[i]);
                else
                        sp->hs[kept++] = sp->hs[i];
        sp->nh = kept;
}

/* The snapshot's histories replace whatever the store held. */
static void store_take_histories(Store *s, struct snapshot_parse *sp) {
        for (size_t i = 0; i < s->n; i++)
                history_free(s->h[i]);
        free(s->h);
        s->n = s->alloc = sp->nh;
        s->h = sp->nh > 0 ? TAKE_PTR(sp->hs) : NULL;
        sp->nh = 0;
}

/* Loads a snapshot into fresh histories; on any problem, nothing of it is
 * kept and *ret_problem says what. */
static int parse_snapshot(Store *s, const uint8_t *p, size_t len, uint64_t *ret_seq, struct store_load_report *rep,
                          char **ret_problem) {
        _cleanup_(snapshot_parse_done) struct snapshot_parse sp = { .c = { .p = p, .len = len } };
        int r;

        assert(ret_problem && !*ret_problem);

        r = snapshot_check_envelope(&sp);
        if (r >= 0)
                r = snapshot_parse_header(s, &sp, rep);
        for (uint32_t m = 0; r >= 0 && m < sp.n_mounts; m++)
                r = snapshot_parse_mount(s, &sp, m, rep);
        if (r >= 0 && (sp.c.bad || sp.c.off != sp.c.len))
                r = snapshot_bad(&sp, "%zu bytes of trailing data", sp.c.len - sp.c.off);
        if (r < 0) {
                *ret_problem = TAKE_PTR(sp.problem);
                return r;
        }
        snapshot_drop_marked(&sp);
        store_take_histories(s, &sp);
        *ret_seq = sp.seq;
        return 0;
}

/* ---------------------------------------------------------------- journal */

static int encode_block(Store *s, uint64_t seq, struct buf *b) {
        size_t start = b->len;
        uint32_t n_keys = 0;

        /* Samples name their history by an index into the block's key
         * table, numbered in order of first use. */
        for (size_t i = 0; i < s->n; i++)
                s->h[i]->scratch = UINT32_MAX;
        for (size_t i = 0; i < s->n_pending; i++)
                if (s->pending[i].h->scratch == UINT32_MAX)
                        s->pending[i].h->scratch = n_keys++;

        put_u32(b, BLOCK_MAGIC);
        put_u32(b, 0); /* payload length, filled in below */
        put_u64(b, seq);
        put_u32(b, n_keys);
        for (uint32_t k = 0, i = 0; k < n_keys; i++)
                if (s->pending[i].h->scratch == k) {
                        size_t kl = strlen(s->pending[i].h->key);

                        put_u16(b, (uint16_t) kl);
                        put(b, s->pending[i].h->key, kl);
                        k++;
                }
        put_u32(b, (uint32_t) s->n_pending);
        for (size_t i = 0; i < s->n_pending; i++) {
                const struct stats_sample *x = &s->pending[i].s;

                put_u32(b, s->pending[i].h->scratch);
                put_u64(b, (uint64_t) x->t);
                put(b, (uint8_t[]) { (uint8_t) (x->has_activity | x->has_device << 1 | x->has_policy << 2 |
                                                x->has_unshared << 3 | x->unshared_modelled << 4),
                                     x->atime, x->flags, x->probe },
                    4);
                put_f32s(b, (const float[]) { x->per_min, x->lo, x->hi, x->write_iops, x->write_kib, x->unshared_per_day,
                                              x->unshared_lo, x->unshared_hi },
                         8);
        }
        if (b->oom)
                return -ENOMEM;
        {
                uint32_t payload = (uint32_t) (b->len - start - 16);
                uint8_t *lp = b->p + start + 4;

                lp[0] = (uint8_t) payload;
                lp[1] = (uint8_t) (payload >> 8);
                lp[2] = (uint8_t) (payload >> 16);
                lp[3] = (uint8_t) (payload >> 24);
        }
        put_u32(b, crc32_of(b->p + start, b->len - start));
        return b->oom ? -ENOMEM : 0;
}

/* Says what is wrong with the journal in *ret_problem: -EBADMSG, or
 * -ENOMEM if there is no memory for the words. */
static int journal_bad(char **ret_problem, const char *fmt, ...) _printf_(2, 3);
static int journal_bad(char **ret_problem, const char *fmt, ...) {
        va_list ap;
        int r;

        assert(!*ret_problem);
        va_start(ap, fmt);
        r = vasprintf(ret_problem, fmt, ap);
        va_end(ap);
        if (r < 0) {
                *ret_problem = NULL;
                return -ENOMEM;
        }
        return -EBADMSG;
}

/* Magic and version (into *ret_version); leaves the cursor at the first
 * block. */
static int journal_check_header(struct cur *c, uint32_t *ret_version, char **ret_problem) {
        uint32_t version;

        if (c->len == 0)
                return journal_bad(ret_problem, "empty journal");
        if (c->len < 12 || memcmp(c->p, JOURNAL_MAGIC, 8) != 0)
                return journal_bad(ret_problem, "not an atimed journal");
        c->off = 8;
        version = get_u32(c);
        if (version > STORE_VERSION)
                return journal_bad(ret_problem, "written by a newer atimed (format version %u; this one reads %u)",
                                   version, STORE_VERSION);
        if (version == 0)
                return journal_bad(ret_problem, "unknown format version 0");
        *ret_version = version;
        return 0;
}

/* The block at the cursor, whole and with its checksum right: its
 * sequence number, and a cursor over its payload. Moves c past it. */
static int journal_next_block(struct cur *c, uint64_t *ret_seq, struct cur *ret_payload, char **ret_problem) {
        size_t start = c->off;
        uint32_t magic = get_u32(c), payload = get_u32(c);
        uint64_t seq = get_u64(c);

        if (c->bad || magic != BLOCK_MAGIC || payload > c->len - c->off || c->len - c->off - payload < 4)
                return journal_bad(ret_problem, "journal damaged or cut short at byte %zu (%zu bytes not replayed)",
                                   start, c->len - start);
        *ret_payload = (struct cur) { .p = c->p + c->off, .len = payload };
        c->off += payload;
        if (crc32_of(c->p + start, c->off - start) != get_u32(c))
                return journal_bad(ret_problem, "journal checksum mismatch at byte %zu (%zu bytes not replayed)",
                                   start, c->len - start);
        *ret_seq = seq;
        return 0;
}

/* A block's key table: keys[k] is NULL for a key that cannot be one
 * (empty, a NUL inside), whose samples are skipped. */
struct block_keys {
        char **keys;
        char *buf; /* the keys, NUL-terminated, one after the other */
        uint32_t n;
};

static void block_keys_done(struct block_keys *k) {
        free(k->keys);
        free(k->buf);
}

/* Reads the key table at the start of payload b: -EBADMSG for a count the
 * payload cannot hold; a key cut short leaves b bad. */
static int block_read_keys(struct cur *b, struct block_keys *ret) {
        size_t used = 0;

        ret->n = get_u32(b);
        /* Every key takes at least 3 bytes of the payload. */
        if (b->bad || ret->n > b->len / 3)
                return -EBADMSG;
        ret->keys = calloc(ret->n ? ret->n : 1, sizeof *ret->keys);
        ret->buf = malloc(b->len + 1);
        if (!ret->keys || !ret->buf)
                return -ENOMEM;
        for (uint32_t k = 0; k < ret->n && !b->bad; k++) {
                uint16_t kl = get_u16(b);
                const uint8_t *kp = take(b, kl);

                if (!kp)
                        break; /* take() marked b bad */
                if (kl == 0 || memchr(kp, 0, kl))
                        continue;
                memcpy(ret->buf + used, kp, kl);
                ret->buf[used + kl] = 0;
                ret->keys[k] = ret->buf + used;
                used += kl + 1;
        }
        return 0;
}

/* One sample of a block of format 'version', into *ret with the index of
 * its key; false if it is not one that could have been written. */
static bool block_read_sample(struct cur *b, uint32_t version, uint32_t n_keys, uint32_t *ret_key,
                              struct stats_sample *ret) {
        uint32_t k = get_u32(b);
        struct stats_sample x = { .t = (int64_t) get_u64(b) };
        const uint8_t *bits = take(b, 4);

        x.per_min = get_f32(b);
        x.lo = get_f32(b);
        x.hi = get_f32(b);
        x.write_iops = get_f32(b);
        x.write_kib = get_f32(b);
        if (version >= STORE_VERSION_UNSHARED) {
                x.unshared_per_day = get_f32(b);
                x.unshared_lo = get_f32(b);
                x.unshared_hi = get_f32(b);
                if (!sane(x.unshared_per_day) || !sane(x.unshared_lo) || !sane(x.unshared_hi))
                        return false;
        }
        if (!bits || k >= n_keys || !stats_time_sane(x.t) || !sane(x.per_min) || !sane(x.lo) || !sane(x.hi) ||
            !sane(x.write_iops) || !sane(x.write_kib))
                return false;
        x.has_activity = bits[0] & 1;
        x.has_device = bits[0] & 2;
        x.has_policy = bits[0] & 4;
        x.has_unshared = version >= STORE_VERSION_UNSHARED && (bits[0] & 8);
        x.unshared_modelled = version >= STORE_VERSION_UNSHARED && (bits[0] & 16);
        x.atime = bits[1];
        x.flags = bits[2];
        x.probe = bits[3];
        *ret_key = k;
        *ret = x;
        return true;
}

/* Adds the samples of the block at byte 'start', whose payload is b, to
 * the histories they name (made as needed). */
static int replay_block(Store *s, struct cur *b, uint32_t version, size_t start, size_t *replayed,
                        char **ret_problem) {
        size_t sample_bytes = version >= STORE_VERSION_UNSHARED ? SAMPLE_BYTES : SAMPLE_BYTES_V2;
        _cleanup_(block_keys_done) struct block_keys keys = {};
        uint32_t n;
        int r;

        r = block_read_keys(b, &keys);
        if (r == -ENOMEM)
                return r;
        n = r < 0 ? 0 : get_u32(b);
        if (r < 0 || b->bad || (size_t) n * sample_bytes != b->len - b->off)
                return journal_bad(ret_problem, "journal block at byte %zu is malformed", start);
        for (uint32_t i = 0; i < n; i++) {
                struct stats_sample x;
                MountHistory *h;
                uint32_t k;

                if (!block_read_sample(b, version, keys.n, &k, &x))
                        return journal_bad(ret_problem, "journal block at byte %zu has a bad sample", start);
                if (!keys.keys[k])
                        continue;
                h = get_or_create(s, keys.keys[k]);
                if (!h)
                        return -ENOMEM;
                if (note_change(h, &x))
                        s->changes_dirty = true;
                r = history_add(h, &x);
                if (r < 0)
                        return r;
                (*replayed)++;
        }
        return 0;
}

/* Replays the blocks after 'after_seq'. Stops at the first damaged block:
 * *ret_problem then says what (the blocks before it are applied). */
static int replay_journal(Store *s, const uint8_t *p, size_t len, uint64_t after_seq, size_t *replayed,
                          char **ret_problem) {
        struct cur c = { .p = p, .len = len };
        uint64_t last = after_seq;
        uint32_t version = 0;
        int r;

        assert(ret_problem && !*ret_problem);

        r = journal_check_header(&c, &version, ret_problem);
        if (r < 0)
                return r;
        while (c.off < c.len) {
                size_t start = c.off;
                struct cur payload = {};
                uint64_t seq = 0;

                r = journal_next_block(&c, &seq, &payload, ret_problem);
                if (r < 0)
                        return r;
                if (seq <= last)
                        continue; /* already in the snapshot */
                r = replay_block(s, &payload, version, start, replayed, ret_problem);
                if (r < 0)
                        return r;
                last = seq;
                s->seq = MAX(s->seq, seq);
        }
        return 0;
}

/* ---------------------------------------------------------------- files */

/* A FIFO or device in its place is refused, never waited on; a symlink
 * is not followed. */
static int read_file(int dfd, const char *name, uint8_t **ret, size_t *ret_len) {
        return read_full_file_at(dfd, name, O_NOFOLLOW, FILE_MAX, (char **) ret, ret_len);
}

/* Renames a bad file out of the way so it is neither trusted nor lost. */
static void move_aside(int dfd, const char *name, int64_t now, struct store_load_report *rep, const char *why) {
        char aside[256];

        snprintf(aside, sizeof aside, "%s.corrupt-%" PRId64, name, now);
        if (renameat(dfd, name, dfd, aside) < 0)
                problem(rep, "%s: %s; could not move it aside: %s", name, why, strerror(errno));
        else
                problem(rep, "%s: %s; moved aside to %s, starting from what remains", name, why, aside);
}

int store_load_buffers(Store *s, const void *snapshot, size_t snapshot_len, const void *journal, size_t journal_len,
                       struct store_load_report *rep) {
        _cleanup_free_ char *why = NULL;
        uint64_t seq = 0;
        int r;

        assert(s);
        assert(rep);
        *rep = (struct store_load_report) {};
        if (snapshot) {
                r = parse_snapshot(s, snapshot, snapshot_len, &seq, rep, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        problem(rep, "snapshot: %s", why ? why : "unreadable");
                else
                        s->snapshot_seq = s->seq = seq;
        }
        free(why);
        why = NULL;
        if (journal) {
                r = replay_journal(s, journal, journal_len, s->snapshot_seq, &rep->replayed, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        problem(rep, "journal: %s", why ? why : "unreadable");
        }
        rep->mounts = s->n;
        return 0;
}

/* Reads a state file: *ret NULL if there is none. One that cannot be read
 * (a FIFO, a device, too large...) is moved aside and reported, and is
 * none either. Fails only for lack of memory. */
static int load_file(int dfd, const char *name, int64_t now, struct store_load_report *rep, uint8_t **ret,
                     size_t *ret_len) {
        int r;

        *ret = NULL;
        *ret_len = 0;
        r = read_file(dfd, name, ret, ret_len);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -ENOENT)
                move_aside(dfd, name, now, rep, fileio_strerror(r));
        return 0;
}

/* ---------------------------------------------------------------- history.changes
 *
 * Each history's promise and last change, as JSON: small (only histories
 * that have either), rewritten whole and atomically when one of them
 * changed. Keys are written in their protocol form (escape.h), so any
 * bytes a key holds survive. */
#define CHANGES_VERSION 1
#define CHANGES_MAX ((size_t) 64 << 20)

/* The fields of each record of the file, in the order they are written:
 * its key, what the struct holds it in, and the range read back (a value
 * out of it makes the record malformed). Integers must be JSON integers;
 * reals may be either. */
typedef enum ChangesFieldType {
        FIELD_INT64,
        FIELD_U8,
        FIELD_U32,
        FIELD_FLOAT,
        FIELD_DOUBLE,
} ChangesFieldType;

struct changes_field {
        const char *key;
        ChangesFieldType type;
        size_t offset;
        double lo, hi;
};

#define FIELD(type_, st, member, lo_, hi_) { #member, type_, offsetof(struct st, member), lo_, hi_ }
static const struct changes_field promise_fields[] = {
        FIELD(FIELD_INT64, stats_promise, t, 1, (double) STATS_T_MAX),
        FIELD(FIELD_U8, stats_promise, atime, 0, _ATIME_MAX - 1),
        FIELD(FIELD_U8, stats_promise, flags, 0, UINT8_MAX),
        FIELD(FIELD_U8, stats_promise, for_atime, 0, _ATIME_MAX - 1),
        FIELD(FIELD_U8, stats_promise, for_flags, 0, UINT8_MAX),
        FIELD(FIELD_FLOAT, stats_promise, saving_per_min, -1e15, 1e15),
};
static const struct changes_field change_fields[] = {
        FIELD(FIELD_INT64, stats_change, t, 1, (double) STATS_T_MAX),
        FIELD(FIELD_INT64, stats_change, last_old, 0, (double) STATS_T_MAX),
        FIELD(FIELD_U8, stats_change, from, 0, _ATIME_MAX - 1),
        FIELD(FIELD_U8, stats_change, to, 0, _ATIME_MAX - 1),
        FIELD(FIELD_U8, stats_change, from_flags, 0, UINT8_MAX),
        FIELD(FIELD_U8, stats_change, to_flags, 0, UINT8_MAX),
};
static const struct changes_field model_fields[] = {
        FIELD(FIELD_DOUBLE, stats_unshare_model, bytes, 0, 1e18),
        FIELD(FIELD_DOUBLE, stats_unshare_model, inodes, 0, 1e18),
        FIELD(FIELD_DOUBLE, stats_unshare_model, hits, 0, 1e18),
        FIELD(FIELD_U32, stats_unshare_model, intervals, 1, UINT32_MAX),
};
#undef FIELD

static json_object *field_to_json(const void *record, const struct changes_field *f) {
        const uint8_t *p = (const uint8_t *) record + f->offset;

        switch (f->type) {
        case FIELD_INT64:
                return json_object_new_int64(*(const int64_t *) p);
        case FIELD_U8:
                return json_object_new_int(*p);
        case FIELD_U32:
                return json_object_new_int64(*(const uint32_t *) p);
        case FIELD_FLOAT:
                return json_object_new_double(*(const float *) p);
        case FIELD_DOUBLE:
                return json_object_new_double(*(const double *) p);
        }
        return NULL;
}

/* A record as a JSON object, its fields in order; NULL without memory. */
static json_object *record_to_json(const void *record, const struct changes_field *fields, size_t n) {
        json_object *o = json_object_new_object();

        for (size_t i = 0; o && i < n; i++)
                if (json_object_object_add(o, fields[i].key, field_to_json(record, &fields[i])) < 0)
                        o = (json_object_put(o), NULL);
        return o;
}

static bool field_from_json(json_object *o, const struct changes_field *f, void *record) {
        uint8_t *p = (uint8_t *) record + f->offset;
        json_object *v;
        double d;

        if (!json_object_object_get_ex(o, f->key, &v))
                return false;
        if (f->type == FIELD_FLOAT || f->type == FIELD_DOUBLE) {
                if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                        return false;
                d = json_object_get_double(v);
                if (!isfinite(d) || d < f->lo || d > f->hi)
                        return false;
                if (f->type == FIELD_FLOAT)
                        *(float *) p = (float) d;
                else
                        *(double *) p = d;
                return true;
        }
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < (int64_t) f->lo ||
            json_object_get_int64(v) > (int64_t) f->hi)
                return false;
        if (f->type == FIELD_INT64)
                *(int64_t *) p = json_object_get_int64(v);
        else if (f->type == FIELD_U8)
                *p = (uint8_t) json_object_get_int64(v);
        else
                *(uint32_t *) p = (uint32_t) json_object_get_int64(v);
        return true;
}

/* A record read back from a JSON object: false where a field is missing,
 * of another type or out of its range (*record is then left half read). */
static bool record_from_json(json_object *o, const struct changes_field *fields, size_t n, void *record) {
        if (!json_object_is_type(o, json_type_object))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!field_from_json(o, &fields[i], record))
                        return false;
        return true;
}

static json_object *promise_to_json(const struct stats_promise *p) {
        return record_to_json(p, promise_fields, ELEMENTSOF(promise_fields));
}

static json_object *change_to_json(const struct stats_change *c) {
        json_object *o = record_to_json(c, change_fields, ELEMENTSOF(change_fields));

        if (o && json_object_object_add(o, "promise", promise_to_json(&c->promise)) < 0)
                o = (json_object_put(o), NULL);
        return o;
}

static json_object *model_to_json(const struct stats_unshare_model *m) {
        json_object *o = record_to_json(m, model_fields, ELEMENTSOF(model_fields));

        /* Written only where set: a file read by an older atimed stays valid. */
        if (o && m->agreed && json_object_object_add(o, "agreed", json_object_new_boolean(true)) < 0)
                o = (json_object_put(o), NULL);
        return o;
}

static bool json_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *ret);

static bool model_from_json(json_object *o, struct stats_unshare_model *ret) {
        json_object *v;

        if (!record_from_json(o, model_fields, ELEMENTSOF(model_fields), ret))
                return false;
        /* Optional: a model saved before atimed bounded it has none, and
         * is judged against the cost table again (btrfs-model.h). */
        ret->agreed = json_object_object_get_ex(o, "agreed", &v) && json_object_is_type(v, json_type_boolean) &&
                      json_object_get_boolean(v);
        return true;
}

static int encode_changes(const Store *s, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object(), *list = json_object_new_array();
        const char *text;

        if (!o || !list)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++) {
                const MountHistory *h = s->h[i];
                json_object *x;

                if (h->promise.t == 0 && h->change.t == 0 && h->unshare_model.intervals == 0)
                        continue;
                x = json_object_new_object();
                if (!x || json_object_array_add(list, x) < 0) {
                        json_object_put(x);
                        return -ENOMEM;
                }
                if (json_object_object_add(x, "key", varlink_name_new(h->key)) < 0 ||
                    (h->promise.t > 0 && json_object_object_add(x, "promise", promise_to_json(&h->promise)) < 0) ||
                    (h->change.t > 0 && json_object_object_add(x, "change", change_to_json(&h->change)) < 0) ||
                    (h->unshare_model.intervals > 0 &&
                     json_object_object_add(x, "unshare_model", model_to_json(&h->unshare_model)) < 0))
                        return -ENOMEM;
        }
        if (json_object_object_add(o, "version", json_object_new_int(CHANGES_VERSION)) < 0 ||
            json_object_object_add(o, "histories", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        if (!text || !(*ret = strdup(text)))
                return -ENOMEM;
        return 0;
}

static bool json_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return *ret >= lo && *ret <= hi;
}

static bool promise_from_json(json_object *o, struct stats_promise *ret) {
        struct stats_promise p = {};

        if (!record_from_json(o, promise_fields, ELEMENTSOF(promise_fields), &p))
                return false;
        *ret = p;
        return true;
}

static bool change_from_json(json_object *o, struct stats_change *ret) {
        json_object *p;

        *ret = (struct stats_change) {};
        if (!record_from_json(o, change_fields, ELEMENTSOF(change_fields), ret))
                return false;
        /* A change made with no advice in force has no promise. */
        if (json_object_object_get_ex(o, "promise", &p) && !promise_from_json(p, &ret->promise))
                ret->promise = (struct stats_promise) {};
        return true;
}

/* Reads the changes file's text into the histories loaded: 0, or -EBADMSG
 * with *ret_why saying what is wrong (nothing is taken then). */
int store_parse_changes(Store *s, const char *text, size_t len, const char **ret_why) {
        _cleanup_json_ json_object *o = NULL;
        json_tokener *tok = json_tokener_new();
        json_object *list;
        int64_t version;
        size_t n;

        if (!tok)
                return -ENOMEM;
        o = len <= INT_MAX ? json_tokener_parse_ex(tok, text, (int) len) : NULL;
        if (o && json_tokener_get_parse_end(tok) < len)
                o = (json_object_put(o), NULL); /* something after the object */
        json_tokener_free(tok);
        *ret_why = "not a JSON object";
        if (!o || !json_object_is_type(o, json_type_object))
                return -EBADMSG;
        *ret_why = "of an unknown version";
        if (!json_int(o, "version", CHANGES_VERSION, CHANGES_VERSION, &version))
                return -EBADMSG;
        *ret_why = "malformed";
        if (!json_object_object_get_ex(o, "histories", &list) || !json_object_is_type(list, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(list);
        /* Checked whole first: a damaged file is taken in not at all. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        json_object *x = json_object_array_get_idx(list, i), *k, *v;
                        struct stats_promise promise = {};
                        struct stats_change change = {};
                        struct stats_unshare_model model = {};
                        _cleanup_free_ char *key = NULL;
                        bool found;
                        ssize_t j;

                        if (!json_object_is_type(x, json_type_object) || !json_object_object_get_ex(x, "key", &k) ||
                            !json_object_is_type(k, json_type_string) ||
                            name_unescape(json_object_get_string(k), &key) < 0 ||
                            (json_object_object_get_ex(x, "promise", &v) && !promise_from_json(v, &promise)) ||
                            (json_object_object_get_ex(x, "change", &v) && !change_from_json(v, &change)) ||
                            (json_object_object_get_ex(x, "unshare_model", &v) && !model_from_json(v, &model)))
                                return -EBADMSG;
                        if (pass == 0)
                                continue;
                        j = find_index(s, key, &found);
                        if (!found)
                                continue; /* its history is gone */
                        s->h[j]->promise = promise;
                        s->h[j]->change = change;
                        s->h[j]->unshare_model = model;
                }
        return 0;
}

static int load_changes(Store *s, int dfd, int64_t now, struct store_load_report *rep) {
        _cleanup_free_ char *text = NULL;
        const char *why;
        size_t len;
        int r;

        r = read_full_file_at(dfd, STORE_CHANGES, O_NOFOLLOW, CHANGES_MAX, &text, &len);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                move_aside(dfd, STORE_CHANGES, now, rep, fileio_strerror(r));
                return 0;
        }
        r = store_parse_changes(s, text, len, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                move_aside(dfd, STORE_CHANGES, now, rep, why);
        return 0;
}

static int load_snapshot(Store *s, int dfd, int64_t now, struct store_load_report *rep) {
        _cleanup_free_ uint8_t *snap = NULL;
        _cleanup_free_ char *why = NULL;
        size_t len;
        uint64_t seq = 0;
        int r;

        r = load_file(dfd, STORE_FILE, now, rep, &snap, &len);
        if (r < 0 || !snap)
                return r;
        r = parse_snapshot(s, snap, len, &seq, rep, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                move_aside(dfd, STORE_FILE, now, rep, why ? why : "unreadable");
                return 0;
        }
        s->snapshot_seq = s->seq = seq;
        s->snapshot_size = (off_t) len;
        return 0;
}

static int load_journal(Store *s, int dfd, int64_t now, struct store_load_report *rep) {
        _cleanup_free_ uint8_t *jour = NULL;
        _cleanup_free_ char *why = NULL;
        size_t len;
        int r;

        r = load_file(dfd, STORE_JOURNAL, now, rep, &jour, &len);
        if (r < 0 || !jour)
                return r;
        r = replay_journal(s, jour, len, s->snapshot_seq, &rep->replayed, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                move_aside(dfd, STORE_JOURNAL, now, rep, why ? why : "unreadable");
        return 0;
}

/* The format version in the header of a state file that is there, is a
 * regular file and begins with 'magic'; else 0. Read without waiting:
 * a FIFO in its place is not waited on. */
static uint32_t file_version(int dfd, const char *name, const char *magic) {
        _cleanup_close_ int fd = -1;
        uint8_t h[12];
        struct stat st;

        fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || pread(fd, h, sizeof h, 0) != (ssize_t) sizeof h ||
            memcmp(h, magic, 8) != 0)
                return 0;
        return get_u32_at(h + 8);
}

/* A file written by a newer atimed (after a downgrade) is not ours to
 * judge: it is neither read, nor moved aside, nor overwritten, and the
 * store writes nothing while it is there, so that the newer atimed finds
 * its history whole when it runs again. */
static bool refuse_newer(Store *s, int dfd, struct store_load_report *rep) {
        static const struct {
                const char *name, *magic;
        } files[] = { { STORE_FILE, SNAPSHOT_MAGIC }, { STORE_JOURNAL, JOURNAL_MAGIC } };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                uint32_t v = file_version(dfd, files[i].name, files[i].magic);

                if (v <= STORE_VERSION)
                        continue;
                problem(rep,
                        "%s was written by a newer atimed (format version %u; this one reads up to %u): "
                        "left as it is, and no history is written until that atimed runs again or the "
                        "files are moved away",
                        files[i].name, v, STORE_VERSION);
                s->refused = rep->refused = true;
        }
        return s->refused;
}

int store_load(Store *s, int64_t now, struct store_load_report *rep) {
        _cleanup_close_ int dfd = -1;
        int r;

        assert(s && s->dir);
        assert(rep);

        *rep = (struct store_load_report) {};
        dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                problem(rep, "%s: %s; starting without history", s->dir, strerror(errno));
                s->need_snapshot = true;
                return 0;
        }
        /* A snapshot's temporary file left by a crash in mid-write: no
         * other writer runs (the state dir is locked by its daemon). */
        (void) remove_stale_temporaries_at(dfd, STORE_FILE);
        if (refuse_newer(s, dfd, rep))
                return 0;
        (void) remove_stale_temporaries_at(dfd, STORE_CHANGES);
        r = load_snapshot(s, dfd, now, rep);
        /* The changes before the journal: a change in the journal that the
         * file does not hold yet is found again as it is replayed. */
        if (r >= 0)
                r = load_changes(s, dfd, now, rep);
        if (r >= 0)
                r = load_journal(s, dfd, now, rep);
        if (r < 0)
                return r;
        rep->mounts = s->n;
        /* Fold the journal into a fresh snapshot at the first flush. */
        s->need_snapshot = true;
        return 0;
}

static int fsync_dir(int dfd) {
        return fsync(dfd) < 0 ? -errno : 0;
}

/* A flush in three steps, so that the writing can run in a worker: what
 * is to be written is encoded on the event loop (store_flush_begin()),
 * written and fsync()ed anywhere (store_write_run(), which touches no
 * Store), and the result taken back on the loop (store_flush_end()).
 * Samples added meanwhile stay pending for the next flush. */
struct StoreWrite {
        char *dir;
        bool snapshot;
        struct buf b;
        uint64_t seq;      /* a journal block's; a snapshot's last block included */
        int64_t now;
        size_t n_encoded;  /* pending samples the write holds */
        off_t journal_size; /* after a journal append */
        char *changes;     /* history.changes' new text; NULL: unchanged */
        int r;
};

StoreWrite *store_write_free(StoreWrite *w) {
        if (w) {
                free(w->dir);
                free(w->b.p);
                free(w->changes);
                free(w);
        }
        return NULL;
}

static int write_buffer(FILE *f, void *userdata) {
        const struct buf *b = userdata;

        if (fwrite(b->p, 1, b->len, f) != b->len)
                return negative_errno();
        return 0;
}

static int write_text(FILE *f, void *userdata) {
        const char *text = userdata;

        if (fputs(text, f) < 0 || fputc('\n', f) < 0)
                return negative_errno();
        return 0;
}

static int write_changes(StoreWrite *w, int dfd) {
        return write_file_atomic_at(dfd, STORE_CHANGES, 0600, WRITE_ATOMIC_FSYNC | WRITE_ATOMIC_FSYNC_DIR, write_text,
                                    w->changes);
}

static int write_snapshot(StoreWrite *w, int dfd) {
        int r;

        r = write_file_atomic_at(dfd, STORE_FILE, 0600, WRITE_ATOMIC_FSYNC, write_buffer, &w->b);
        if (r < 0)
                return r;
        /* The snapshot holds everything: the journal starts afresh. */
        if (unlinkat(dfd, STORE_JOURNAL, 0) < 0 && errno != ENOENT)
                return -errno;
        return fsync_dir(dfd);
}

static int append_journal(StoreWrite *w, int dfd) {
        _cleanup_close_ int fd = -1;
        struct buf h = {};
        struct stat st;
        int r = 0;

        fd = openat(dfd, STORE_JOURNAL, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        /* Blocks go only after a header of this format (an older journal
         * is folded into a snapshot first): the flush fails, and the next
         * writes a snapshot, which replaces the journal. */
        if (st.st_size > 0 && file_version(dfd, STORE_JOURNAL, JOURNAL_MAGIC) != STORE_VERSION)
                return -EBADMSG;
        if (st.st_size == 0) {
                put(&h, JOURNAL_MAGIC, 8);
                put_u32(&h, STORE_VERSION);
                r = h.oom ? -ENOMEM : loop_write(fd, h.p, h.len);
                free(h.p);
        }
        if (r >= 0)
                r = loop_write(fd, w->b.p, w->b.len);
        if (r >= 0 && fdatasync(fd) < 0)
                r = -errno;
        if (r < 0) {
                /* A torn block at the end would hide later ones: cut it off. */
                (void) ftruncate(fd, st.st_size);
                return r;
        }
        w->journal_size = st.st_size + (off_t) (h.len + w->b.len);
        return st.st_size == 0 ? fsync_dir(dfd) : 0;
}

int store_flush_begin(Store *s, int64_t now, bool snapshot, StoreWrite **ret) {
        StoreWrite *w;
        int r;

        assert(s);
        assert(ret);

        *ret = NULL;
        if (!s->dir)
                return -EINVAL;
        if (s->refused)
                return 0;
        snapshot = snapshot || s->need_snapshot || now - s->snapshot_at >= SNAPSHOT_MAX_AGE ||
                   s->journal_size > MAX(JOURNAL_MIN_COMPACT, s->snapshot_size / 2);
        if (!snapshot && s->n_pending == 0 && !s->changes_dirty)
                return 0;
        w = calloc(1, sizeof *w);
        if (!w || !(w->dir = strdup(s->dir))) {
                store_write_free(w);
                return -ENOMEM;
        }
        w->snapshot = snapshot;
        w->now = now;
        w->r = -ECANCELED; /* until it runs */
        if (snapshot) {
                (void) store_prune(s, now);
                r = encode_snapshot(s, now, &w->b);
                w->seq = s->seq;
                /* Samples added while it is written are journalled after it;
                 * should it fail, the next flush is a snapshot again. */
                s->need_snapshot = false;
        } else if (s->n_pending > 0) {
                r = encode_block(s, s->seq + 1, &w->b);
                w->seq = s->seq + 1;
        } else {
                r = 0; /* the changes file alone */
                w->seq = s->seq;
                w->journal_size = s->journal_size;
        }
        w->n_encoded = s->n_pending;
        if (r >= 0 && s->changes_dirty) {
                r = encode_changes(s, &w->changes);
                s->changes_dirty = false; /* again, should the write fail */
        }
        if (r < 0) {
                store_write_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

void store_write_run(StoreWrite *w) {
        _cleanup_close_ int dfd = -1;

        assert(w && w->dir);
        dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                w->r = -errno;
        else {
                w->r = w->snapshot ? write_snapshot(w, dfd) : w->n_encoded > 0 ? append_journal(w, dfd) : 0;
                if (w->r >= 0 && w->changes)
                        w->r = write_changes(w, dfd);
        }
}

int store_flush_end(Store *s, StoreWrite *w) {
        int r;
        size_t n;

        assert(s);
        assert(w);
        r = w->r;

        if (r < 0) {
                /* Memory holds it all: try a whole snapshot next time. */
                s->need_snapshot = true;
                if (w->changes)
                        s->changes_dirty = true;
                store_write_free(w);
                return r;
        }
        if (w->snapshot) {
                s->snapshot_seq = w->seq;
                s->snapshot_at = w->now;
                s->snapshot_size = (off_t) w->b.len;
                s->journal_size = 0;
        } else {
                s->seq = MAX(s->seq, w->seq);
                s->journal_size = w->journal_size;
        }
        /* What was written leaves the pending list; what came since stays
         * (unless the list was dropped meanwhile for a snapshot). */
        n = MIN(w->n_encoded, s->n_pending);
        if (s->n_pending > n)
                memmove(s->pending, s->pending + n, (s->n_pending - n) * sizeof *s->pending);
        s->n_pending -= n;
        store_write_free(w);
        return 0;
}

int store_flush(Store *s, int64_t now, bool snapshot) {
        StoreWrite *w;
        int r = store_flush_begin(s, now, snapshot, &w);

        if (r < 0) {
                s->need_snapshot = true;
                return r;
        }
        if (!w)
                return 0;
        store_write_run(w);
        return store_flush_end(s, w);
}
