/* stats.c: multi-resolution rings of a mount's history (see stats.h). */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "strv.h"

#define RING_CAPACITY_MAX 1000000u
#define POLICY_BITS (STATS_NODIRATIME | STATS_LAZYTIME | STATS_READ_ONLY | STATS_PROBED | STATS_PROBE_VERIFIED)

_Static_assert(sizeof(struct stats_point) == 44, "a point is 44 bytes in memory (46 stored)");

static int parse_seconds(const char *s, uint32_t *ret) {
        uint64_t usec;

        if (parse_duration(s, &usec) < 0 || usec % USEC_PER_SEC != 0 || usec == 0 ||
            usec / USEC_PER_SEC > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) (usec / USEC_PER_SEC);
        return 0;
}

int stats_parse_rings(const char *s, struct stats_ring_spec *ret, unsigned *ret_n) {
        _cleanup_strv_free_ char **l = NULL;
        unsigned n = 0;

        if (strv_split(s, ",", &l) < 0)
                return -ENOMEM;
        STRV_FOREACH(item, l) {
                _cleanup_free_ char *copy = strdup(*item);
                char *colon, *res, *ret_s;
                uint32_t r, keep;

                if (!copy)
                        return -ENOMEM;
                res = copy + strspn(copy, " \t");
                colon = strchr(res, ':');
                if (!colon || n >= STATS_MAX_RINGS)
                        return -EINVAL;
                *colon = 0;
                ret_s = colon + 1;
                /* Trim around the colon: "10min : 7d" is fine. */
                for (char *e = colon - 1; e >= res && strchr(" \t", *e); e--)
                        *e = 0;
                ret_s += strspn(ret_s, " \t");
                if (parse_seconds(res, &r) < 0 || parse_seconds(ret_s, &keep) < 0 || keep < r)
                        return -EINVAL;
                /* Finer first, each a multiple of the one before, so that a
                 * coarse bucket is exactly a set of fine ones. */
                if (n > 0 && (r <= ret[n - 1].resolution || r % ret[n - 1].resolution != 0))
                        return -EINVAL;
                ret[n] = (struct stats_ring_spec) { .resolution = r, .capacity = (keep + r - 1) / r };
                if (ret[n].capacity > RING_CAPACITY_MAX)
                        return -ERANGE;
                n++;
        }
        if (n == 0)
                return -EINVAL;
        *ret_n = n;
        return 0;
}

int history_new(const char *key, const struct stats_ring_spec *specs, unsigned n, MountHistory **ret) {
        MountHistory *h;

        if (n == 0 || n > STATS_MAX_RINGS)
                return -EINVAL;
        h = calloc(1, sizeof *h);
        if (!h)
                return -ENOMEM;
        h->key = strdup(key);
        h->verdict_memo = calloc(1, STATS_VERDICT_MEMO_SIZE);
        if (!h->key || !h->verdict_memo) {
                free(h->key);
                free(h->verdict_memo);
                free(h);
                return -ENOMEM;
        }
        h->n_rings = n;
        for (unsigned i = 0; i < n; i++)
                h->rings[i].spec = specs[i];
        *ret = h;
        return 0;
}

MountHistory *history_free(MountHistory *h) {
        if (!h)
                return NULL;
        for (unsigned i = 0; i < h->n_rings; i++)
                free(h->rings[i].v);
        free(h->key);
        free(h->verdict_memo);
        free(h);
        return NULL;
}

static int64_t floor_to(int64_t t, uint32_t res) {
        int64_t q = t / (int64_t) res;

        if (t % (int64_t) res < 0)
                q--;
        return q * (int64_t) res;
}

/* Makes room for 'want' points (never more than capacity). */
static int ring_reserve(StatsRing *r, uint32_t want) {
        uint32_t na;
        struct stats_point *nv;

        if (want <= r->alloc)
                return 0;
        na = r->alloc ? r->alloc : 16;
        while (na < want)
                na *= 2;
        na = MIN(na, r->spec.capacity);
        nv = realloc(r->v, (size_t) na * sizeof *nv);
        if (!nv)
                return -ENOMEM;
        memset(nv + r->alloc, 0, (size_t) (na - r->alloc) * sizeof *nv);
        r->v = nv;
        r->alloc = na;
        return 0;
}

static void mean_add(float *mean, uint16_t n_before, float x) {
        /* n_before samples averaged so far: the running mean, in double. */
        double m = *mean;

        *mean = (float) (m + ((double) x - m) / (double) (n_before + 1));
}

static void point_apply(struct stats_point *p, const struct stats_sample *s) {
        if (s->has_policy) {
                if (p->n > 0 && (p->atime != s->atime || ((p->flags ^ s->flags) & POLICY_BITS) || p->probe != s->probe))
                        p->flags |= STATS_POLICY_CHANGED;
                p->flags = (uint8_t) ((p->flags & (STATS_POLICY_CHANGED | STATS_STALLED)) | s->flags);
                p->atime = s->atime;
                p->probe = s->probe;
                if (p->n < UINT16_MAX)
                        p->n++;
        }
        if (s->has_activity && p->n_act < UINT16_MAX) {
                mean_add(&p->per_min, p->n_act, s->per_min);
                mean_add(&p->lo, p->n_act, s->lo);
                mean_add(&p->hi, p->n_act, s->hi);
                p->n_act++;
        }
        if (s->has_device && p->n_dev < UINT16_MAX) {
                mean_add(&p->write_iops, p->n_dev, s->write_iops);
                mean_add(&p->write_kib, p->n_dev, s->write_kib);
                p->n_dev++;
        }
        if (s->has_unshared && p->n_unshared < UINT16_MAX) {
                mean_add(&p->unshared_per_day, p->n_unshared, s->unshared_per_day);
                mean_add(&p->unshared_lo, p->n_unshared, s->unshared_lo);
                mean_add(&p->unshared_hi, p->n_unshared, s->unshared_hi);
                p->n_unshared++;
                p->unshared_modelled = p->unshared_modelled || s->unshared_modelled;
        }
}

static int ring_add(StatsRing *r, const struct stats_sample *s) {
        uint32_t cap = r->spec.capacity, res = r->spec.resolution;
        int64_t b = floor_to(s->t, res);

        if (r->count > 0 && b < r->head_t)
                return 0; /* older than what we hold: the clock went back */

        if (r->count == 0 || (b - r->head_t) / res >= cap) {
                /* Empty, or everything held is older than the ring's reach. */
                if (ring_reserve(r, 1) < 0)
                        return -ENOMEM;
                r->head = 0;
                r->count = 1;
                r->head_t = b;
                r->v[0] = (struct stats_point) {};
        } else if (b > r->head_t) {
                uint32_t steps = (uint32_t) ((b - r->head_t) / res);

                /* Until the ring is full it is a plain array growing at its
                 * end; then it wraps. Skipped buckets are gaps. */
                if (ring_reserve(r, MIN(r->count + steps, cap)) < 0 ||
                    (r->count + steps > cap && ring_reserve(r, cap) < 0))
                        return -ENOMEM;
                for (uint32_t i = 0; i < steps; i++) {
                        r->head = (r->head + 1) % cap;
                        r->v[r->head] = (struct stats_point) {};
                }
                r->count = MIN(r->count + steps, cap);
                r->head_t = b;
        }
        point_apply(&r->v[r->head], s);
        return 1;
}

int history_add(MountHistory *h, const struct stats_sample *s) {
        int taken = 0;

        if (!stats_time_sane(s->t))
                return 0;

        for (unsigned i = 0; i < h->n_rings; i++) {
                int r = ring_add(&h->rings[i], s);

                if (r < 0)
                        return r;
                taken += r;
        }
        if (taken > 0 && s->t > h->last_seen)
                h->last_seen = s->t;
        return taken;
}

int64_t history_oldest(const MountHistory *h, unsigned r) {
        const StatsRing *g = &h->rings[r];

        if (g->count == 0)
                return INT64_MAX;
        return g->head_t - (int64_t) (g->count - 1) * g->spec.resolution;
}

const struct stats_point *history_point(const MountHistory *h, unsigned r, int64_t t) {
        const StatsRing *g = &h->rings[r];
        uint32_t back;

        if (r >= h->n_rings || g->count == 0 || t > g->head_t || t < history_oldest(h, r) ||
            (t - g->head_t) % (int64_t) g->spec.resolution != 0)
                return NULL;
        back = (uint32_t) ((g->head_t - t) / g->spec.resolution);
        return &g->v[(g->head + g->spec.capacity - back) % g->spec.capacity];
}

const struct stats_point *history_last_policy(const MountHistory *h) {
        for (unsigned r = 0; r < h->n_rings; r++) {
                const StatsRing *g = &h->rings[r];

                for (uint32_t back = 0; back < g->count; back++) {
                        const struct stats_point *p =
                                history_point(h, r, g->head_t - (int64_t) back * g->spec.resolution);

                        if (p && p->n > 0)
                                return p;
                }
        }
        return NULL;
}

unsigned history_pick_ring(const MountHistory *h, int64_t since) {
        int64_t newest = INT64_MIN;

        for (unsigned r = 0; r < h->n_rings; r++)
                if (h->rings[r].count > 0)
                        newest = MAX(newest, h->rings[r].head_t);
        if (newest == INT64_MIN)
                return 0;
        for (unsigned r = 0; r < h->n_rings; r++) {
                const struct stats_ring_spec *sp = &h->rings[r].spec;

                /* By what the ring can hold, not what it holds yet: a young
                 * mount is still shown at the finest resolution. Asking for
                 * exactly a ring's retention picks that ring, though its
                 * newest bucket may lag "now" by one. */
                if (floor_to(newest, sp->resolution) - (int64_t) sp->capacity * sp->resolution <= since)
                        return r;
        }
        return h->n_rings - 1;
}

int history_set_ring(MountHistory *h, unsigned r, int64_t head_t, const struct stats_point *points, uint32_t count) {
        StatsRing *g;

        if (r >= h->n_rings)
                return -EINVAL;
        g = &h->rings[r];
        if (count > g->spec.capacity) {
                /* A shorter retention than when saved: keep the newest. */
                points += count - g->spec.capacity;
                count = g->spec.capacity;
        }
        free(g->v);
        g->v = NULL;
        g->alloc = g->count = g->head = 0;
        if (count == 0)
                return 0;
        if (ring_reserve(g, count) < 0)
                return -ENOMEM;
        memcpy(g->v, points, (size_t) count * sizeof *points);
        g->count = count;
        g->head = count - 1;
        g->head_t = head_t;
        return 0;
}

uint32_t history_ring_points(const MountHistory *h, unsigned r, struct stats_point *buf) {
        const StatsRing *g = &h->rings[r];
        uint32_t oldest = (g->head + g->spec.capacity - (g->count ? g->count - 1 : 0)) % g->spec.capacity;

        for (uint32_t i = 0; i < g->count; i++)
                buf[i] = g->v[(oldest + i) % g->spec.capacity];
        return g->count;
}

size_t history_memory(const MountHistory *h) {
        size_t m = sizeof *h + strlen(h->key) + 1 + STATS_VERDICT_MEMO_SIZE;

        for (unsigned r = 0; r < h->n_rings; r++)
                m += (size_t) h->rings[r].alloc * sizeof(struct stats_point);
        return m;
}
