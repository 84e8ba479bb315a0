/* recommend.c: each mount's advisor input, from the daemon's state as the
 * view shows it (see recommend.h). */
#include "recommend.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strv.h"

/* A figure's sample-weighted mean over the window, from the finest ring
 * that covers it, under the policy in force only (as what another policy
 * made says little of this one's: after a change to relatime, the
 * strictatime updates before it would call for noatime): the atime
 * updates, or (unshared) the btrfs bytes; n: the samples it rests on. */
struct window_mean {
        double mean, lo, hi, n, peak;
        double modelled; /* unshared: of mean, what the points a model gave bytes to gave */
};

static void window_mean(const MountHistory *h, int64_t now, int64_t window, AtimeMode atime, bool unshared,
                        struct window_mean *ret) {
        unsigned r = history_pick_ring(h, now - window);
        uint32_t res = h->rings[r].spec.resolution;
        double sum = 0, lo = 0, hi = 0, modelled = 0;

        *ret = (struct window_mean) {};
        if (h->rings[r].count == 0)
                return;
        for (int64_t t = h->rings[r].head_t; t > now - window && t >= history_oldest(h, r); t -= res) {
                const struct stats_point *p = history_point(h, r, t);
                double k = !p ? 0 : unshared ? p->n_unshared : p->n_act;

                if (k == 0 || p->atime != atime || (p->flags & STATS_POLICY_CHANGED))
                        continue;
                sum += (double) (unshared ? p->unshared_per_day : p->per_min) * k;
                lo += (double) (unshared ? p->unshared_lo : p->lo) * k;
                hi += (double) (unshared ? p->unshared_hi : p->hi) * k;
                ret->n += k;
                ret->peak = MAX(ret->peak, (double) (unshared ? p->unshared_per_day : p->per_min));
                /* A bucket with a modelled interval is counted modelled
                 * whole (the point keeps no more): never said measured. */
                if (unshared && p->unshared_modelled)
                        modelled += (double) p->unshared_per_day * k;
        }
        if (ret->n > 0) {
                ret->mean = sum / ret->n;
                ret->modelled = modelled / ret->n;
                /* The mean of the intervals' bounds: wider than the mean's
                 * own interval, as the intervals' errors are not independent. */
                ret->lo = lo / ret->n;
                ret->hi = hi / ret->n;
        }
}

/* The mean and peak atime updates over the window, and how much
 * measurement that mean rests on. */
static void summarise(const MountHistory *h, int64_t now, int64_t window, double interval_s, struct advisor_input *in) {
        struct window_mean m;

        window_mean(h, now, window, in->policy.atime, false, &m);
        if (m.n == 0)
                return;
        in->have_activity = true;
        in->per_min = m.mean;
        in->lo_per_min = m.lo;
        in->hi_per_min = m.hi;
        in->peak_per_min = m.peak;
        in->observed_s = m.n * interval_s;
}

/* What software on mount 'i' reads atime: the configuration's word, then
 * each consumer found on it ('owner' maps consumers to mounts). The word is
 * listed first, as a consumer of its own, whatever the scan finds: a client
 * that guards a change by the list (atimectl remount) must see it even
 * where a weaker reader was found too. */
static void add_needs(const View *v, const ssize_t *owner, size_t i, const struct mount_config *mc,
                      struct recommendation *r) {
        size_t nc = v->consumers ? v->consumers->n : 0;

        if (mc && mc->needs_atime > NEED_NONE) {
                r->in.need = mc->needs_atime;
                r->in.need_why = mc->declared ? mc->declared->why
                                              : "the configuration says software here reads atime ([mount:PATH] needs_atime)";
                if (mc->declared)
                        r->consumers[r->n_consumers++] = mc->declared;
        }
        for (size_t c = 0; c < nc; c++) {
                const struct consumer *x = &v->consumers->v[c];

                if (owner[c] != (ssize_t) i)
                        continue;
                if (r->n_consumers < ELEMENTSOF(r->consumers))
                        r->consumers[r->n_consumers++] = x;
                if (x->need > r->in.need) {
                        r->in.need = x->need;
                        r->in.need_why = x->why;
                }
        }
}

/* The activity the advice rests on: the history over the window, else the
 * last interval for what it is worth; and how many updates reach the disk,
 * from the last interval. */
static void add_activity(const View *v, const TrackedMount *tm, int64_t now, struct recommendation *r) {
        double interval_s = (double) v->config->sampler_interval_usec / 1e6;
        const char *key;
        struct activity a;

        if (v->store && (key = tracker_mount_key(tm))) {
                const MountHistory *h = store_find(v->store, key);

                if (h)
                        summarise(h, now, (int64_t) r->window_s, interval_s, &r->in);
        }
        if (!tracker_mount_activity(tm, &a) || a.seconds <= 0)
                return;
        if (a.updates.per_min > 0)
                r->in.writeback_ratio = a.writebacks_per_min / a.updates.per_min;
        r->in.counter_disagrees = a.disagrees;
        r->in.counter_lo_per_min = a.counter_lo;
        r->in.counter_hi_per_min = a.counter_hi;
        if (r->in.have_activity)
                return;
        if (a.coverage > 0 && a.coverage < 1 && a.source != SOURCE_KERNEL) {
                /* Its interval is open where the walk has not been. */
                r->in.too_early = true;
                r->in.ready_in_s = a.ready_at > now ? a.ready_at - now : 0;
                r->in.coverage = a.coverage;
                return;
        }
        r->in.have_activity = true;
        r->in.per_min = r->in.peak_per_min = a.updates.per_min;
        r->in.lo_per_min = a.updates.lo;
        r->in.hi_per_min = a.updates.hi;
        r->in.observed_s = a.seconds;
}

/* The metadata atime un-shared from btrfs snapshots over the window, from
 * the history's points (kept across restarts), as for the updates. */
void recommend_summarise_unshared(const MountHistory *h, int64_t now, int64_t window, double interval_s,
                                  struct advisor_input *in) {
        struct window_mean m;

        window_mean(h, now, window, in->policy.atime, true, &m);
        if (m.n == 0)
                return;
        in->have_unshared = true;
        in->unshared_per_day = m.mean;
        in->unshared_lo = m.lo;
        in->unshared_hi = m.hi;
        in->unshared_s = m.n * interval_s;
        in->unshared_source = btrfs_bytes_label(m.modelled, m.mean);
}

/* On btrfs with snapshots: the metadata atime un-shares from them, as the
 * history's mean over the window, else (no history kept) the meter's
 * over every interval it had a figure for since atimed started. */
static void add_btrfs(const View *v, const TrackedMount *tm, int64_t now, struct recommendation *r) {
        struct advisor_input *in = &r->in;
        const char *key = tracker_mount_key(tm);
        const MountHistory *h = key && v->store ? store_find(v->store, key) : NULL;
        struct btrfs_status b;
        int64_t since;

        /* No mount of its filesystem writes atime: nothing to save. */
        if (!tracker_mount_btrfs(tm, &b) || b.no_atime || !btrfs_status_shows_bytes(&b))
                return;
        in->btrfs_shared = true;
        if (!b.sampled)
                in->unshared_note = "this subvolume's own reads counted only where measured, not modelled: the "
                                    "filesystem is sampled through another";
        else if (!b.looked || !btrfs_shares(&b.self, &b.snapshots, &since))
                in->unshared_note = "reads of snapshotted subvolumes reached through this mount are not in the "
                                    "sample: measured where the filesystem proves them atime's alone, else held "
                                    "within an interval that allows for them";
        in->snapshot_period_s = (double) b.snapshots.period_s;
        in->dir_share = b.inodes_since > 0 ? b.dirs_since / b.inodes_since : 0;
        if (h)
                recommend_summarise_unshared(h, now, (int64_t) r->window_s,
                                             (double) v->config->sampler_interval_usec / 1e6, in);
        if (in->have_unshared || !(b.mean_seconds > 0))
                return;
        in->have_unshared = true;
        in->unshared_per_day = b.mean_per_day;
        in->unshared_lo = b.mean_lo;
        in->unshared_hi = b.mean_hi;
        in->unshared_s = b.mean_seconds;
        in->unshared_source = btrfs_bytes_label(b.mean_modelled_per_day, b.mean_per_day);
}

/* The advisor's input for one tracked mount, and its advice. */
/* The last change of policy the mount's history recorded, judged. */
static void add_verdict(const View *v, const TrackedMount *tm, int64_t now, struct recommendation *r) {
        const char *key = tracker_mount_key(tm);
        const MountHistory *h = key && v->store ? store_find(v->store, key) : NULL;

        if (!h || h->change.t == 0 ||
            verdict_judge_kept(h, now, VERDICT_SETTLE_INTERVALS * (int64_t) (v->config->sampler_interval_usec / USEC_PER_SEC), &r->verdict) < 0)
                return;
        r->change = h->change;
}

static void recommend_one(const View *v, const MountEntry *e, const TrackedMount *tm, const ssize_t *owner,
                          size_t i, int64_t now, const struct advisor_params *params, struct recommendation *r) {
        const struct mount_config *mc = config_find_mount(v->config, e->target);

        *r = (struct recommendation) {
                .tm = tm,
                .window_s = (double) v->config->advice_window_usec / 1e6,
                .in = {
                        .target = e->target,
                        .fstype = e->fstype,
                        .policy = e->policy,
                        .probe_verified = tm->probe.have && tm->probe.result.verified,
                        .probe_effective = tm->probe.result.effective,
                        .ignore = mc && mc->ignore,
                        .population = tracker_mount_population(tm),
                },
        };
        add_needs(v, owner, i, mc, r);
        add_activity(v, tm, now, r);
        add_btrfs(v, tm, now, r);
        advisor_advise(&r->in, params, &r->advice);
        add_verdict(v, tm, now, r);
}

/* Which mount of the table each consumer is on (-1: none), once for all
 * mounts. */
static ssize_t *consumer_owners(const View *v) {
        const MountTable *t = v->mounts;
        size_t nc = v->consumers ? v->consumers->n : 0, nt = t ? t->n : 0;
        _cleanup_free_ char **targets = calloc(nt + 1, sizeof *targets);
        ssize_t *owner = calloc(nc ? nc : 1, sizeof *owner);

        if (!targets || !owner) {
                free(owner);
                return NULL;
        }
        for (size_t i = 0; i < nt; i++)
                targets[i] = t->entries[i].target;
        for (size_t c = 0; c < nc; c++)
                owner[c] = consumers_owner(v->consumers, c, targets, nt);
        return owner;
}

struct Recommender {
        const View *v;
        const MountTable *table;     /* the one 'owner' indexes */
        const Consumers *consumers;  /* the ones 'owner' maps */
        ssize_t *owner;
        int64_t now;
        struct advisor_params params;
};

int recommender_new(const View *v, Recommender **ret) {
        Recommender *r = calloc(1, sizeof *r);

        assert(v && ret);
        if (!r)
                return -ENOMEM;
        *r = (Recommender) {
                .v = v,
                .table = v->mounts,
                .consumers = v->consumers,
                .owner = consumer_owners(v),
                .now = (int64_t) time(NULL),
                .params = {
                        .noatime_threshold = v->config->noatime_threshold,
                        .min_saving = v->config->min_saving,
                        .costs = v->config->costs.v,
                        .n_costs = v->config->costs.n,
                },
        };
        if (!r->owner) {
                free(r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

Recommender *recommender_free(Recommender *r) {
        if (r) {
                free(r->owner);
                free(r);
        }
        return NULL;
}

bool recommender_advise(Recommender *r, size_t i, struct recommendation *ret) {
        const MountTable *t = r->v->mounts;
        const TrackedMount *tm;

        assert(t == r->table && r->v->consumers == r->consumers && i < t->n);
        tm = tracker_find(r->v->tracker, t->entries[i].id);
        if (!tm)
                return false;
        recommend_one(r->v, &t->entries[i], tm, r->owner, i, r->now, &r->params, ret);
        return true;
}

int recommend(const View *v, const char *target, struct recommendation **ret, size_t *ret_n) {
        _cleanup_(recommender_freep) Recommender *rec = NULL;
        size_t nt = v->mounts ? v->mounts->n : 0, n = 0;
        struct recommendation *recs;
        int r;

        assert(ret && ret_n);
        r = recommender_new(v, &rec);
        if (r < 0)
                return r;
        recs = calloc(nt ? nt : 1, sizeof *recs);
        if (!recs)
                return -ENOMEM;
        for (size_t i = 0; i < nt; i++) {
                if (target && !streq(target, v->mounts->entries[i].target))
                        continue;
                if (recommender_advise(rec, i, &recs[n]))
                        n++;
        }
        if (target && n == 0) {
                free(recs);
                return -ENOENT;
        }
        *ret = recs;
        *ret_n = n;
        return 0;
}
