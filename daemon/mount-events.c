/* mount-events.c: the model of every mount in atimed's namespace, kept by
 * fanotify's mount events and statmount(2), and the tracked table derived
 * from it when a change can alter it (see mount-events.h). */
#include "mount-events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mount-kernel.h"
#include "time-util.h"

typedef struct Node {
        KMount k;
        bool candidate;   /* the filter tracks its type and path */
        size_t cand_index; /* in MountEvents.cands, if a candidate */
        unsigned mark;    /* the build that took it last */
        struct Node *next_id, *next_target;
} Node;

/* A directory on the way to a tracked mount (its target and each one
 * above it), counted once per tracked mount below. */
typedef struct Prefix {
        struct Prefix *next;
        unsigned refs;
        char path[];
} Prefix;

struct MountEvents {
        sd_event_source *io;
        sd_event_source *timer; /* the build, a delay after the first change that needs one */
        uint64_t delay;
        int fd;
        mount_events_apply_fn apply;
        mount_events_lost_fn lost;
        void *userdata;
        struct mount_filter filter;

        Node **by_id, **by_target; /* chained; 'buckets' each, a power of two */
        size_t buckets, n;
        Node **cands;
        size_t n_cands, cands_alloc;
        Prefix **prefixes;
        size_t prefix_buckets;

        void *buf; /* statmount's, reused */
        size_t buf_size;
        unsigned epoch;
        bool affected; /* the tracked table may differ: build it */
        bool resync;   /* events were lost: read everything */
        int failed;    /* a call refused for good: -errno */
        const MountTable *applied; /* the last table given to apply (the owner's now) */
        struct mount_events_stats stats;
};

static uint64_t hash_id(uint64_t id) {
        return id * UINT64_C(0x9E3779B97F4A7C15);
}

/* FNV-1a of len bytes. */
static uint64_t hash_mem(const char *s, size_t len) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (size_t i = 0; i < len; i++)
                h = (h ^ (uint8_t) s[i]) * UINT64_C(0x100000001b3);
        return h ^ (h >> 29);
}

static Node **id_slot(const MountEvents *m, uint64_t id) {
        return &m->by_id[(hash_id(id) >> 32) & (m->buckets - 1)];
}

static Node **target_slot_len(const MountEvents *m, const char *target, size_t len) {
        return &m->by_target[hash_mem(target, len) & (m->buckets - 1)];
}

static Node **target_slot(const MountEvents *m, const char *target) {
        return target_slot_len(m, target, strlen(target));
}

/* Whether n's target is the len bytes at path. */
static bool at_path(const Node *n, const char *path, size_t len) {
        return strncmp(n->k.seed.target, path, len) == 0 && n->k.seed.target[len] == 0;
}

static Node *find(const MountEvents *m, uint64_t id) {
        for (Node *n = *id_slot(m, id); n; n = n->next_id)
                if (n->k.id == id)
                        return n;
        return NULL;
}

static void unlink_from(Node **slot, Node *node, bool by_target) {
        for (Node **p = slot; *p; p = by_target ? &(*p)->next_target : &(*p)->next_id)
                if (*p == node) {
                        *p = by_target ? node->next_target : node->next_id;
                        return;
                }
}

/* Both indexes twice as wide, once the mounts outnumber their buckets. */
static int grow(MountEvents *m) {
        size_t nb = m->buckets * 2;
        Node **ni = calloc(nb, sizeof *ni), **nt = calloc(nb, sizeof *nt);
        Node **oi = m->by_id;
        size_t ob = m->buckets;

        if (!ni || !nt) {
                free(ni);
                free(nt);
                return -ENOMEM;
        }
        free(m->by_target);
        m->by_id = ni;
        m->by_target = nt;
        m->buckets = nb;
        for (size_t b = 0; b < ob; b++)
                for (Node *n = oi[b], *next; n; n = next) {
                        Node **s = id_slot(m, n->k.id), **t = target_slot(m, n->k.seed.target);

                        next = n->next_id;
                        n->next_id = *s;
                        *s = n;
                        n->next_target = *t;
                        *t = n;
                }
        free(oi);
        return 0;
}

/* ---------------------------------------------------------------- the way to tracked mounts */

static Prefix **prefix_slot(const MountEvents *m, const char *path, size_t len) {
        return &m->prefixes[hash_mem(path, len) & (m->prefix_buckets - 1)];
}

static Prefix *prefix_find(const MountEvents *m, const char *path, size_t len) {
        for (Prefix *p = *prefix_slot(m, path, len); p; p = p->next)
                if (strlen(p->path) == len && memcmp(p->path, path, len) == 0)
                        return p;
        return NULL;
}

static bool on_the_way(const MountEvents *m, const char *target) {
        return prefix_find(m, target, strlen(target)) != NULL;
}

/* Calls f for "/" and every directory from there down to target (target
 * included), as lengths into target: "/a/b" gives "/", "/a", "/a/b". */
typedef int (*prefix_fn)(MountEvents *m, void *ctx, const char *s, size_t len);
static int for_each_prefix(MountEvents *m, const char *target, prefix_fn f, void *ctx) {
        size_t len = strlen(target);
        int r = f(m, ctx, "/", 1);

        if (r < 0 || target[0] != '/')
                return r < 0 ? r : len > 0 && !streq(target, "/") ? f(m, ctx, target, len) : 0;
        for (size_t i = 1; i <= len; i++)
                if ((i == len || target[i] == '/') && i > 1) {
                        r = f(m, ctx, target, i);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static int prefix_ref(MountEvents *m, void *ctx, const char *s, size_t len) {
        Prefix *p = prefix_find(m, s, len), **slot;

        if (p) {
                p->refs++;
                return 0;
        }
        p = malloc(sizeof *p + len + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p->path, s, len);
        p->path[len] = 0;
        p->refs = 1;
        slot = prefix_slot(m, s, len);
        p->next = *slot;
        *slot = p;
        return 0;
}

static int prefix_unref(MountEvents *m, void *ctx, const char *s, size_t len) {
        Prefix **slot = prefix_slot(m, s, len);

        for (Prefix **p = slot; *p; p = &(*p)->next)
                if (strlen((*p)->path) == len && memcmp((*p)->path, s, len) == 0) {
                        Prefix *gone = *p;

                        if (--gone->refs == 0) {
                                *p = gone->next;
                                free(gone);
                        }
                        return 0;
                }
        return 0;
}

/* ---------------------------------------------------------------- the model */

static int cand_add(MountEvents *m, Node *n) {
        if (m->n_cands == m->cands_alloc) {
                size_t na = m->cands_alloc ? m->cands_alloc * 2 : 64;
                Node **nc = realloc(m->cands, na * sizeof *nc);

                if (!nc)
                        return -ENOMEM;
                m->cands = nc;
                m->cands_alloc = na;
        }
        n->candidate = true;
        n->cand_index = m->n_cands;
        m->cands[m->n_cands++] = n;
        return for_each_prefix(m, n->k.seed.target, prefix_ref, NULL);
}

static void cand_remove(MountEvents *m, Node *n) {
        if (!n->candidate)
                return;
        (void) for_each_prefix(m, n->k.seed.target, prefix_unref, NULL);
        m->cands[n->cand_index] = m->cands[--m->n_cands];
        m->cands[n->cand_index]->cand_index = n->cand_index;
        n->candidate = false;
}

/* Whether a change of n can alter the tracked table. */
static void note(MountEvents *m, const Node *n) {
        if (n->candidate || on_the_way(m, n->k.seed.target))
                m->affected = true;
}

static void node_drop(MountEvents *m, Node *n) {
        note(m, n);
        cand_remove(m, n);
        unlink_from(target_slot(m, n->k.seed.target), n, true);
        unlink_from(id_slot(m, n->k.id), n, false);
        kmount_done(&n->k);
        free(n);
        m->n--;
}

static bool seed_same(const MountSeed *a, const MountSeed *b) {
        return a->id == b->id && a->parent_id == b->parent_id && a->devno == b->devno &&
               streq(a->target, b->target) && streq(a->source, b->source) && streq(a->fstype, b->fstype) &&
               streq(a->root, b->root) && streq(a->vfs_options, b->vfs_options) &&
               streq(a->super_options, b->super_options);
}

static bool tracks(const MountEvents *m, const MountSeed *s) {
        return mount_filter_match(&m->filter, s->fstype, s->target);
}

/* The kernel's word on one mount, in place of what the model had. Takes k. */
static int upsert(MountEvents *m, KMount *k) {
        Node *n = find(m, k->id);

        if (n && n->k.parent == k->parent && seed_same(&n->k.seed, &k->seed)) {
                kmount_done(k);
                return 0;
        }
        if (n) {
                note(m, n);
                cand_remove(m, n);
                unlink_from(target_slot(m, n->k.seed.target), n, true);
                kmount_done(&n->k);
        } else {
                if (m->n >= m->buckets && grow(m) < 0) {
                        kmount_done(k);
                        return -ENOMEM;
                }
                n = calloc(1, sizeof *n);
                if (!n) {
                        kmount_done(k);
                        return -ENOMEM;
                }
                n->k.id = k->id;
                Node **s = id_slot(m, k->id);
                n->next_id = *s;
                *s = n;
                m->n++;
        }
        n->k = *k;
        *k = (KMount) {};
        {
                Node **t = target_slot(m, n->k.seed.target);

                n->next_target = *t;
                *t = n;
        }
        if (tracks(m, &n->k.seed) && cand_add(m, n) < 0)
                return -ENOMEM;
        note(m, n);
        return 0;
}

/* statmount of one mount: in the model, or out of it where it is gone
 * (or outside atimed's root: not its to see). */
static int stat_one(MountEvents *m, uint64_t id) {
        KMount k = {};
        int r;

        m->stats.statmounts++;
        r = kmount_stat(id, &m->buf, &m->buf_size, &k);
        if (r == -ENOENT || r == -EPERM) {
                Node *n = find(m, id);

                if (n)
                        node_drop(m, n);
                return 0;
        }
        if (r == -EBADMSG || r == -ENODATA || r == -E2BIG) {
                log_debug_errno(r, "statmount of mount %" PRIu64 " gave a record atimed cannot read: %m", id);
                return 0;
        }
        if (r < 0)
                return r;
        return upsert(m, &k);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return (x > y) - (x < y);
}

/* Everything read again: what listmount no longer lists is dropped. */
static int resync(MountEvents *m) {
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ Node **gone = NULL;
        size_t n = 0, k = 0;
        int r;

        r = kmount_list(&ids, &n);
        if (r < 0)
                return r;
        if (n > 1)
                qsort(ids, n, sizeof *ids, cmp_u64);
        gone = calloc(m->n ? m->n : 1, sizeof *gone);
        if (!gone)
                return -ENOMEM;
        for (size_t b = 0; b < m->buckets; b++)
                for (Node *x = m->by_id[b]; x; x = x->next_id)
                        if (!bsearch(&x->k.id, ids, n, sizeof *ids, cmp_u64))
                                gone[k++] = x;
        for (size_t i = 0; i < k; i++)
                node_drop(m, gone[i]);
        for (size_t i = 0; i < n; i++) {
                r = stat_one(m, ids[i]);
                if (r < 0)
                        return r;
        }
        m->stats.resyncs++;
        m->affected = true;
        return 0;
}

/* ---------------------------------------------------------------- the table */

/* The type on top at target: of the mounts there, one nothing is stacked on. */
static const char *model_fstype_at(const void *userdata, const char *target) {
        const MountEvents *m = userdata;
        const Node *best = NULL;

        for (const Node *n = *target_slot(m, target); n; n = n->next_target) {
                bool covered = false;

                if (!streq(n->k.seed.target, target))
                        continue;
                for (const Node *c = *target_slot(m, target); c && !covered; c = c->next_target)
                        covered = c != n && c->k.parent == n->k.id && streq(c->k.seed.target, target);
                if (!covered && (!best || n->k.id > best->k.id))
                        best = n;
        }
        return best ? best->k.seed.fstype : NULL;
}

struct seeds {
        MountSeed *v;
        size_t n, alloc;
};

static int take(MountEvents *m, struct seeds *s, Node *n) {
        if (n->mark == m->epoch)
                return 0;
        if (s->n == s->alloc) {
                size_t na = s->alloc ? s->alloc * 2 : 64;
                MountSeed *nv = realloc(s->v, na * sizeof *nv);

                if (!nv)
                        return -ENOMEM;
                s->v = nv;
                s->alloc = na;
        }
        n->mark = m->epoch;
        s->v[s->n++] = n->k.seed;
        return 0;
}

/* Every mount at the len bytes of path. */
static int take_at(MountEvents *m, void *ctx, const char *path, size_t len) {
        for (Node *n = *target_slot_len(m, path, len); n; n = n->next_target)
                if (at_path(n, path, len)) {
                        int r = take(m, ctx, n);

                        if (r < 0)
                                return r;
                }
        return 0;
}

/* What mount_table_from_seeds() needs: the tracked mounts, every mount on
 * the way to each, and each one's chain of parents. */
static int gather(MountEvents *m, struct seeds *s) {
        int r = 0;

        m->epoch++;
        for (size_t i = 0; i < m->n_cands; i++) {
                Node *c = m->cands[i];

                r = take(m, s, c);
                if (r >= 0)
                        r = for_each_prefix(m, c->k.seed.target, take_at, s);
                for (size_t depth = 0; r >= 0 && depth < m->n; depth++) {
                        Node *p = find(m, c->k.parent);

                        if (!p || p == c)
                                break;
                        r = take(m, s, p);
                        c = p;
                }
                if (r < 0)
                        break;
        }
        return r < 0 ? r : 0;
}

static int rebuild(MountEvents *m) {
        _cleanup_free_ MountSeed *v = NULL;
        struct seeds s = {};
        MountTable *t = NULL;
        int r;

        m->affected = false;
        r = gather(m, &s);
        v = s.v;
        if (r < 0)
                return r;
        r = mount_table_from_seeds(v, s.n, &m->filter, &t);
        if (r < 0)
                return r;
        t->n_all = m->n;
        t->fstype_at = model_fstype_at;
        t->fstype_at_userdata = m;
        if (m->applied && mount_table_equal(m->applied, t)) {
                mount_table_free(t);
                return 0;
        }
        m->stats.rebuilds++;
        r = m->apply(t, m->userdata);
        m->applied = r >= 0 ? t : NULL;
        return r;
}

static void build_later(MountEvents *m) {
        int enabled = SD_EVENT_OFF;
        uint64_t now;

        (void) sd_event_source_get_enabled(m->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return; /* one is due */
        (void) sd_event_now(sd_event_source_get_event(m->timer), CLOCK_MONOTONIC, &now);
        (void) sd_event_source_set_time(m->timer, now + m->delay);
        (void) sd_event_source_set_enabled(m->timer, SD_EVENT_ONESHOT);
}

static void settle_now(MountEvents *m, bool build_now);

static int on_build_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        settle_now(userdata, true);
        return 0;
}

/* After a batch: what it left to do. The table is built now only when
 * asked (the first, a new filter), else a delay later. */
static void settle_now(MountEvents *m, bool build_now) {
        int r = m->failed;

        if (r == 0 && m->resync) {
                m->resync = false;
                r = resync(m);
        }
        if (r == 0 && m->affected) {
                if (build_now || m->delay == 0)
                        r = rebuild(m);
                else
                        build_later(m);
        }
        if (r == -ENOMEM) {
                /* Try everything again at the next event. */
                log_oom();
                m->resync = true;
                return;
        }
        if (r < 0 && !m->failed) {
                m->failed = r;
                (void) sd_event_source_set_enabled(m->io, SD_EVENT_OFF);
                m->lost(r, m->userdata);
        }
}

static void settle(MountEvents *m) {
        settle_now(m, false);
}

static void on_event(uint64_t id, void *userdata) {
        MountEvents *m = userdata;
        int r;

        m->stats.events++;
        if (m->resync || m->failed)
                return; /* all of it is read again anyway */
        r = stat_one(m, id);
        if (r == -ENOMEM)
                m->resync = true;
        else if (r < 0)
                m->failed = r;
}

/* A wakeup reads at most this much: about 1,600 mount events, a few
 * milliseconds of statmount; the rest waits for the next turn of the
 * loop, after whatever else is due. */
#define EVENT_READS_MAX 4
#define EVENT_BUF_SIZE (16 * 1024)

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        MountEvents *m = userdata;
        _Alignas(8) uint8_t buf[EVENT_BUF_SIZE];

        for (unsigned i = 0; i < EVENT_READS_MAX; i++) {
                bool overflow = false;
                ssize_t n = read(fd, buf, sizeof buf);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0) {
                        m->failed = n < 0 ? -errno : -EPIPE;
                        break;
                }
                if (kmount_events_parse(buf, (size_t) n, on_event, m, &overflow) < 0 || overflow)
                        m->resync = true;
                if ((size_t) n < sizeof buf - 256)
                        break; /* all there was: a read more would only say EAGAIN */
        }
        settle(m);
        return 0;
}

/* ---------------------------------------------------------------- the object */

int mount_events_new(sd_event *e, int fan_fd, const struct mount_filter *filter, mount_events_apply_fn apply,
                     mount_events_lost_fn lost, void *userdata, MountEvents **ret) {
        _cleanup_close_ int fd = fan_fd;
        _cleanup_(mount_events_freep) MountEvents *m = calloc(1, sizeof *m);
        int r;

        if (!m)
                return -ENOMEM;
        m->fd = -1;
        m->apply = apply;
        m->lost = lost;
        m->userdata = userdata;
        m->filter = *filter;
        m->buckets = 1024;
        m->prefix_buckets = 1024;
        m->by_id = calloc(m->buckets, sizeof *m->by_id);
        m->by_target = calloc(m->buckets, sizeof *m->by_target);
        m->prefixes = calloc(m->prefix_buckets, sizeof *m->prefixes);
        if (!m->by_id || !m->by_target || !m->prefixes)
                return -ENOMEM;
        r = sd_event_add_io(e, &m->io, fd, EPOLLIN, on_io, m);
        if (r < 0)
                return r;
        m->fd = TAKE_FD(fd);
        (void) sd_event_source_set_description(m->io, "mount-events");
        r = sd_event_add_time(e, &m->timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC, on_build_timer, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(m->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(m->timer, "mount-events-build");
        /* Not yet: the first read comes with mount_events_load(). */
        (void) sd_event_source_set_enabled(m->io, SD_EVENT_OFF);
        *ret = TAKE_PTR(m);
        return 0;
}

int mount_events_load(MountEvents *m) {
        int r;

        /* Events from now on are queued: none is lost between the list
         * and the first read of the group. */
        r = resync(m);
        if (r < 0)
                return r;
        m->stats.resyncs = 0;
        r = rebuild(m);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(m->io, SD_EVENT_ON);
}

int mount_events_set_filter(MountEvents *m, const struct mount_filter *filter) {
        m->filter = *filter;
        while (m->n_cands > 0)
                cand_remove(m, m->cands[m->n_cands - 1]);
        for (size_t b = 0; b < m->buckets; b++)
                for (Node *n = m->by_id[b]; n; n = n->next_id)
                        if (tracks(m, &n->k.seed) && cand_add(m, n) < 0)
                                return -ENOMEM;
        m->applied = NULL; /* the same mounts may be tracked differently now */
        return rebuild(m);
}

void mount_events_refresh(MountEvents *m) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n = m->n_cands;

        if (m->failed || n == 0)
                return;
        /* A copy: a statmount can drop the node it reads. */
        ids = calloc(n, sizeof *ids);
        if (!ids) {
                m->resync = true;
                settle(m);
                return;
        }
        for (size_t i = 0; i < n; i++)
                ids[i] = m->cands[i]->k.id;
        for (size_t i = 0; i < n && !m->failed; i++) {
                int r = stat_one(m, ids[i]);

                if (r == -ENOMEM)
                        m->resync = true;
                else if (r < 0)
                        m->failed = r;
        }
        settle_now(m, true); /* the poll that called this waited its delay already */
}

void mount_events_set_delay(MountEvents *m, uint64_t delay_usec) {
        m->delay = delay_usec;
}

void mount_events_get_stats(const MountEvents *m, struct mount_events_stats *ret) {
        *ret = m->stats;
        ret->n_all = m->n;
}

MountEvents *mount_events_free(MountEvents *m) {
        if (!m)
                return NULL;
        sd_event_source_disable_unref(m->io);
        sd_event_source_disable_unref(m->timer);
        safe_close(m->fd);
        for (size_t b = 0; m->by_id && b < m->buckets; b++)
                for (Node *n = m->by_id[b], *next; n; n = next) {
                        next = n->next_id;
                        kmount_done(&n->k);
                        free(n);
                }
        for (size_t b = 0; m->prefixes && b < m->prefix_buckets; b++)
                for (Prefix *p = m->prefixes[b], *next; p; p = next) {
                        next = p->next;
                        free(p);
                }
        free(m->by_id);
        free(m->by_target);
        free(m->prefixes);
        free(m->cands);
        free(m->buf);
        free(m);
        return NULL;
}
