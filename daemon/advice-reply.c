/* advice-reply.c: GetRecommendations' and GetConsumers' replies (see
 * advice-reply.h). */
#include "advice-reply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path-util.h"
#include "protocol.h"
#include "readers.h"
#include "reply.h"
#include "varlink.h"

/* nodiratime only where it says something: noatime implies it. */
static json_object *policy_to_json(AtimeMode atime, bool lazytime, bool nodiratime) {
        _cleanup_json_ json_object *o = json_object_new_object();
        char opts[64];

        nodiratime = nodiratime && atime != ATIME_NOATIME;
        snprintf(opts, sizeof opts, "%s%s%s", atime_mode_to_string(atime), nodiratime ? ",nodiratime" : "",
                 lazytime ? ",lazytime" : "");
        if (!o || reply_add(o, F_ATIME, json_object_new_string(atime_mode_to_string(atime))) < 0 ||
            reply_add(o, F_LAZYTIME, json_object_new_boolean(lazytime)) < 0 ||
            reply_add(o, F_NODIRATIME, json_object_new_boolean(nodiratime)) < 0 ||
            reply_add(o, F_OPTIONS, json_object_new_string(opts)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* A Consumer; one found in a file only root can read shows its path to
 * privileged callers only ('privileged'). */
static json_object *consumer_to_json(const struct consumer *c, bool privileged) {
        _cleanup_json_ json_object *x = json_object_new_object();

        if (!x || reply_add(x, F_KIND, json_object_new_string(consumer_kind_to_string(c->kind))) < 0 ||
            reply_add(x, F_NEED, json_object_new_string(atime_need_to_string(c->need))) < 0 ||
            reply_add(x, F_PATH,
                      c->private && !privileged ? json_object_new_string("") : varlink_name_new(c->path)) < 0 ||
            reply_add(x, F_WHY, varlink_name_new(c->why)) < 0 ||
            reply_add(x, F_SOURCE, varlink_name_new(c->source)) < 0)
                return NULL;
        return TAKE_PTR(x);
}

/* An array of the consumers in l; NULL on OOM. */
static json_object *consumers_to_json(const struct consumer *const *l, size_t n, bool privileged) {
        _cleanup_json_ json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                json_object *x = consumer_to_json(l[i], privileged);

                if (!x || json_object_array_add(a, x) < 0) {
                        json_object_put(x);
                        return NULL;
                }
        }
        return TAKE_PTR(a);
}

json_object *advice_reply_one(const struct recommendation *r, bool privileged) {
        _cleanup_json_ json_object *o = json_object_new_object(), *reasons = json_object_new_array(),
                                   *consumers = consumers_to_json(r->consumers, r->n_consumers, privileged),
                                   *saving = json_object_new_object(), *ev = json_object_new_object();
        const struct advice *a = &r->advice;
        bool act = r->in.have_activity;

        if (!o || !reasons || !consumers || !saving || !ev)
                return NULL;
        for (unsigned i = 0; i < a->n_reasons; i++)
                if (json_object_array_add(reasons, varlink_name_new(a->reasons[i])) < 0)
                        return NULL;
        if (reply_add(saving, F_ATIME_UPDATES_PER_MIN, reply_rounded(a->saving_updates_per_min, 1)) < 0 ||
            reply_add(saving, F_ATIME_WRITES_PER_MIN, reply_rounded(a->saving_updates_per_min, 1)) < 0 ||
            reply_add(saving, F_CPU_US_PER_S, reply_rounded(a->saving_cpu_us_per_s, 2)) < 0 ||
            reply_add(saving, F_WRITE_KIB_PER_S, reply_rounded(a->saving_kib_per_s, 2)) < 0 ||
            reply_add(saving, F_METADATA_BYTES_PER_DAY, reply_rounded(a->saving_bytes_per_day, 0)) < 0)
                return NULL;
        if (reply_add_nullable(ev, F_ATIME_UPDATES_PER_MIN, act ? reply_rounded(r->in.per_min, 2) : NULL) < 0 ||
            reply_add_nullable(ev, F_LO_PER_MIN, act ? reply_rounded(r->in.lo_per_min, 2) : NULL) < 0 ||
            reply_add_nullable(ev, F_HI_PER_MIN, act ? reply_rounded(r->in.hi_per_min, 2) : NULL) < 0 ||
            reply_add_nullable(ev, F_PEAK_PER_MIN, act ? reply_rounded(r->in.peak_per_min, 2) : NULL) < 0 ||
            reply_add(ev, F_WINDOW_S, reply_rounded(r->window_s, 0)) < 0 ||
            reply_add(ev, F_OBSERVED_S, reply_rounded(r->in.observed_s, 0)) < 0 ||
            reply_add(ev, F_POPULATION, json_object_new_int64((int64_t) r->in.population)) < 0)
                return NULL;
        if (reply_add(o, F_TARGET, varlink_name_new(r->in.target)) < 0 ||
            reply_add(o, F_FSTYPE, varlink_name_new(r->in.fstype)) < 0 ||
            reply_add(o, F_CURRENT,
                      policy_to_json(r->in.policy.atime, r->in.policy.lazytime, r->in.policy.nodiratime)) < 0 ||
            reply_add(o, F_RECOMMENDED, policy_to_json(a->atime, a->lazytime, a->nodiratime)) < 0 ||
            reply_add(o, F_ACTION, json_object_new_string(a->action)) < 0 ||
            reply_add(o, F_CHANGE, json_object_new_boolean(a->change)) < 0 ||
            reply_add(o, F_REASONS, TAKE_PTR(reasons)) < 0 || reply_add(o, F_CONSUMERS, TAKE_PTR(consumers)) < 0 ||
            reply_add(o, F_SAVING, TAKE_PTR(saving)) < 0 ||
            reply_add(o, F_CONFIDENCE, json_object_new_string(advice_confidence_to_string(a->confidence))) < 0 ||
            reply_add(o, F_BASIS, json_object_new_string(advice_basis_to_string(a->basis))) < 0 ||
            reply_add(o, F_EVIDENCE, TAKE_PTR(ev)) < 0 ||
            (r->change.t > 0 ? reply_add(o, F_POLICY_CHANGE, verdict_to_json(&r->change, &r->verdict))
                             : reply_add_nullable(o, F_POLICY_CHANGE, NULL)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *advice_reply_finish(struct printbuf *list) {
        _cleanup_json_ json_object *p = json_object_new_object();
        _cleanup_(reply_printbuf_freep) struct printbuf *l = list;

        if (!p || printbuf_memappend(l, "]", 1) < 0)
                return NULL;
        if (reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            reply_add(p, F_RECOMMENDATIONS, reply_text_new(TAKE_PTR(l))) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

json_object *advice_reply_build(const View *view, const char *target, bool privileged) {
        _cleanup_(reply_printbuf_freep) struct printbuf *list = printbuf_new();
        _cleanup_free_ struct recommendation *v = NULL;
        size_t n = 0;
        int r;

        if (!list || printbuf_memappend(list, "[", 1) < 0)
                return NULL;
        r = recommend(view, target, &v, &n);
        if (r == -ENOENT)
                return reply_no_such_mount(view, target);
        if (r < 0)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (reply_list_append(list, advice_reply_one(&v[i], privileged)) < 0)
                        return NULL;
        return advice_reply_finish(TAKE_PTR(list));
}

json_object *advice_reply_consumers(const View *v, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *list = NULL;
        _cleanup_free_ const struct consumer **l = NULL;
        _cleanup_free_ char *target = NULL;
        const char *t;
        size_t n = 0;

        if (reply_param_string(params, F_TARGET, &t) <= 0 || t[0] != '/')
                return reply_invalid_parameter(F_TARGET);
        target = strdup(t);
        if (!p || !target)
                return NULL;
        path_simplify(target);
        if (readers_at(v, target, &l, &n) < 0 ||
            !(list = consumers_to_json(l, n, reply_peer_privileged(v, peer))))
                return NULL;
        if (reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            reply_add(p, F_TARGET, varlink_name_new(target)) < 0 || reply_add(p, F_CONSUMERS, TAKE_PTR(list)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}
