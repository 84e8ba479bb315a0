/* history-reply.c: GetHistory's reply (see history-reply.h). */
#include "history-reply.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>

#include "protocol.h"
#include "reply.h"
#include "time-util.h"
#include "varlink.h"
#include "verdict.h"

const MountHistory *history_reply_find(const View *v, int mount_id, const char *target) {
        const TrackedMount *tm = mount_id > 0 ? tracker_find(v->tracker, mount_id) : NULL;
        const MountEntry *e = tm ? NULL : mount_table_find_target(v->mounts, target);
        const MountHistory *best = NULL;

        if (e)
                tm = tracker_find(v->tracker, e->id);
        if (tm) {
                const char *key = tracker_mount_key(tm);

                if (key)
                        return store_find(v->store, key);
                if (mount_id > 0)
                        return NULL; /* not identified yet: no other mount's */
        }
        /* Not mounted now: the last mount that was there, its target
         * compared whole (a mount at ".../x target=/victim" is not at
         * "/victim"). */
        for (size_t i = 0; i < store_n_mounts(v->store); i++) {
                const MountHistory *h = store_get(v->store, i);

                if (store_key_has_target(h->key, target) && (!best || h->last_seen > best->last_seen))
                        best = h;
        }
        return best;
}

static const MountHistory *history_of(const View *v, const char *target) {
        return history_reply_find(v, 0, target);
}

#define HISTORY_MAX_POINTS 10000

static json_object *point_to_json(int64_t t, const struct stats_point *p) {
        _cleanup_json_ json_object *o = json_object_new_object();
        bool up = p && p->n > 0, act = p && p->n_act > 0, dev = p && p->n_dev > 0, un = p && p->n_unshared > 0;
        json_object *ci = NULL;

        if (!o)
                return NULL;
        if (act) {
                ci = json_object_new_array();
                if (!ci || json_object_array_add(ci, reply_rounded(p->lo, 2)) < 0 ||
                    json_object_array_add(ci, reply_rounded(p->hi, 2)) < 0) {
                        json_object_put(ci);
                        return NULL;
                }
        }
        if (reply_add(o, F_T, json_object_new_int64(t)) < 0 ||
            reply_add(o, F_SAMPLES, json_object_new_int(p ? MAX(p->n, MAX(p->n_act, p->n_dev)) : 0)) < 0 ||
            reply_add_nullable(o, F_ATIME_UPDATES_PER_MIN, act ? reply_rounded(p->per_min, 2) : NULL) < 0 ||
            reply_add_nullable(o, F_CI95, ci) < 0 ||
            reply_add_nullable(o, F_WRITE_IOPS, dev ? reply_rounded(p->write_iops, 2) : NULL) < 0 ||
            reply_add_nullable(o, F_WRITE_KIB_PER_S, dev ? reply_rounded(p->write_kib, 2) : NULL) < 0 ||
            reply_add_nullable(o, F_ATIME, up ? reply_name_or_null(atime_mode_to_string(p->atime)) : NULL) < 0 ||
            reply_add_nullable(o, F_NODIRATIME, up ? json_object_new_boolean(p->flags & STATS_NODIRATIME) : NULL) < 0 ||
            reply_add_nullable(o, F_LAZYTIME, up ? json_object_new_boolean(p->flags & STATS_LAZYTIME) : NULL) < 0 ||
            reply_add_nullable(o, F_READ_ONLY, up ? json_object_new_boolean(p->flags & STATS_READ_ONLY) : NULL) < 0 ||
            reply_add_nullable(o, F_PROBE,
                               up && (p->flags & STATS_PROBE_VERIFIED)
                                       ? reply_name_or_null(atime_mode_to_string(p->probe))
                                       : NULL) < 0 ||
            reply_add_nullable(o, F_STALLED, up ? json_object_new_boolean(p->flags & STATS_STALLED) : NULL) < 0 ||
            reply_add_nullable(o, F_POLICY_CHANGED,
                               up ? json_object_new_boolean(p->flags & STATS_POLICY_CHANGED) : NULL) < 0 ||
            reply_add_nullable(o, F_UNSHARED_BYTES_PER_DAY, un ? reply_rounded(p->unshared_per_day, 0) : NULL) < 0 ||
            reply_add_nullable(o, F_UNSHARED_LO, un ? reply_rounded(p->unshared_lo, 0) : NULL) < 0 ||
            reply_add_nullable(o, F_UNSHARED_HI, un ? reply_rounded(p->unshared_hi, 0) : NULL) < 0 ||
            reply_add_nullable(o, F_UNSHARED_SOURCE,
                               un ? json_object_new_string(btrfs_figure_source_to_string(
                                            p->unshared_modelled ? BTRFS_FIGURE_MODELLED : BTRFS_FIGURE_MEASURED))
                                  : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* A tracked mount with no history yet (just mounted, or the daemon just
 * started and the mount's first samples are still settling): an empty
 * history, saying why, rather than "no such mount". */
static json_object *no_history_yet(const View *v, const char *target) {
        _cleanup_json_ json_object *p = json_object_new_object();
        const MountEntry *e = mount_table_find_target(v->mounts, target);
        const TrackedMount *tm = e ? tracker_find(v->tracker, e->id) : NULL;
        const char *key = tm ? tracker_mount_key(tm) : NULL;
        int64_t now = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC);
        const char *why;

        if (!tm)
                return reply_no_such_mount(v, target);
        if (!p)
                return NULL;
        if (!v->store)
                why = "no history is kept";
        else if (!key)
                why = "its filesystem is still being identified; history starts once it is";
        else if (view_history_refused(v, tm->id))
                why = "its history cannot be stored (see the log)";
        else
                why = "a mount's first points are recorded once it has been seen for two sampler intervals";
        if (reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            reply_add(p, F_TARGET, varlink_name_new(target)) < 0 ||
            reply_add(p, F_KEY, varlink_name_new(key ? key : "")) < 0 ||
            reply_add(p, F_RESOLUTION_S, json_object_new_int64(v->config->rings.spec[0].resolution)) < 0 ||
            reply_add(p, F_SINCE, json_object_new_int64(now)) < 0 ||
            reply_add(p, F_UNTIL, json_object_new_int64(now)) < 0 ||
            reply_add(p, F_TRUNCATED, json_object_new_boolean(false)) < 0 ||
            reply_add(p, F_POINTS, json_object_new_array()) < 0 ||
            reply_add(p, F_REASON, json_object_new_string(why)) < 0 || reply_add_nullable(p, F_POLICY_CHANGE, NULL) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

/* The points of ring 'ring' from the bucket holding 'since' (or the oldest
 * held) to the newest, HISTORY_MAX_POINTS at most (*ret_truncated: the
 * oldest left out), into 'points'; the first and last bucket's times. */
static int history_points(const MountHistory *h, unsigned ring, int64_t since, json_object *points, int64_t *ret_from,
                          int64_t *ret_to, bool *ret_truncated) {
        int64_t res = h->rings[ring].spec.resolution, from, to;

        assert(ring < h->n_rings);
        assert(res > 0);
        to = h->rings[ring].count ? h->rings[ring].head_t : since - since % res;
        from = MAX(since - (since % res + res) % res,
                   history_oldest(h, ring) == INT64_MAX ? to : history_oldest(h, ring));
        *ret_truncated = (to - from) / res + 1 > HISTORY_MAX_POINTS;
        if (*ret_truncated)
                from = to - (HISTORY_MAX_POINTS - 1) * res;
        for (int64_t t = from; h->rings[ring].count && t <= to; t += res) {
                json_object *pt = point_to_json(t, history_point(h, ring, t));

                if (!pt || json_object_array_add(points, pt) < 0) {
                        json_object_put(pt);
                        return -ENOMEM;
                }
        }
        *ret_from = from;
        *ret_to = to;
        return 0;
}

/* The history's last change of policy and what it saved; JSON null if
 * none is recorded. */
static json_object *history_verdict(const View *v, const MountHistory *h, int64_t now) {
        struct verdict vd;

        if (h->change.t == 0 ||
            verdict_judge_kept(h, now,
                               VERDICT_SETTLE_INTERVALS * (int64_t) (v->config->sampler_interval_usec / USEC_PER_SEC),
                               &vd) < 0)
                return NULL;
        return verdict_to_json(&h->change, &vd);
}

/* On a btrfs mount whose subvolume snapshots share, or whose reads reach
 * snapshotted subvolumes the sample does not cover: the bytes atime
 * un-shared, as a mean over every interval with a figure since atimed
 * started (the points carry each bucket's); NULL elsewhere. */
static json_object *history_btrfs(const View *v, const char *target) {
        const MountEntry *e = mount_table_find_target(v->mounts, target);
        const TrackedMount *tm = e ? tracker_find(v->tracker, e->id) : NULL;
        _cleanup_json_ json_object *o = NULL;
        struct btrfs_status b;

        if (!tm || !tracker_mount_btrfs(tm, &b) || !btrfs_status_shows_bytes(&b) || !(b.mean_seconds > 0))
                return NULL;
        o = json_object_new_object();
        if (!o || reply_add(o, F_UNSHARED_BYTES_PER_DAY, reply_rounded(b.mean_per_day, 0)) < 0 ||
            reply_add(o, F_UNSHARED_LO, reply_rounded(b.mean_lo, 0)) < 0 ||
            reply_add(o, F_UNSHARED_HI, reply_rounded(b.mean_hi, 0)) < 0 ||
            reply_add(o, F_RATE_SOURCE, json_object_new_string(btrfs_figure_source_to_string(b.mean_source))) < 0 ||
            reply_add(o, F_OBSERVED_S, reply_rounded(b.mean_seconds, 3)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *history_reply_get(const View *v, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *points = json_object_new_array();
        const MountHistory *h;
        const char *target;
        int64_t now = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC), since = now - 6 * 3600, res = 0, from, to;
        unsigned ring = 0;
        bool truncated = false;

        if (!p || !points)
                return NULL;
        if (reply_param_string(params, F_TARGET, &target) <= 0)
                return reply_invalid_parameter(F_TARGET);
        if (reply_param_int(params, P_SINCE, INT32_MIN, INT64_MAX / 2, &since) < 0)
                return reply_invalid_parameter(P_SINCE);
        if (reply_param_int(params, P_RESOLUTION, 1, UINT32_MAX, &res) < 0)
                return reply_invalid_parameter(P_RESOLUTION);
        h = v->store ? history_of(v, target) : NULL;
        if (!h)
                return no_history_yet(v, target);
        if (res > 0) {
                for (ring = 0; ring < h->n_rings && h->rings[ring].spec.resolution != res; ring++)
                        ;
                if (ring == h->n_rings)
                        return reply_invalid_parameter(P_RESOLUTION); /* not a resolution kept */
        } else
                ring = history_pick_ring(h, since);
        res = h->rings[ring].spec.resolution;

        if (history_points(h, ring, since, points, &from, &to, &truncated) < 0)
                return NULL;
        if (reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            reply_add(p, F_TARGET, varlink_name_new(target)) < 0 || reply_add(p, F_KEY, varlink_name_new(h->key)) < 0 ||
            reply_add(p, F_RESOLUTION_S, json_object_new_int64(res)) < 0 ||
            reply_add(p, F_SINCE, json_object_new_int64(from)) < 0 ||
            reply_add(p, F_UNTIL, json_object_new_int64(to + res)) < 0 ||
            reply_add(p, F_TRUNCATED, json_object_new_boolean(truncated)) < 0 ||
            reply_add(p, F_POINTS, TAKE_PTR(points)) < 0 ||
            reply_add_nullable(p, F_POLICY_CHANGE, history_verdict(v, h, now)) < 0 ||
            reply_add_nullable(p, F_BTRFS, history_btrfs(v, target)) < 0)
                return NULL;
        {
                /* The resolutions kept, for a client to name the valid ones. */
                json_object *rs = json_object_new_array();

                if (reply_add(p, F_RESOLUTIONS_S, rs) < 0)
                        return NULL;
                for (unsigned i = 0; i < h->n_rings; i++)
                        if (json_object_array_add(rs, json_object_new_int64(h->rings[i].spec.resolution)) < 0)
                                return NULL;
        }
        return varlink_reply_new(TAKE_PTR(p));
}
