/* status-reply.c: GetStatus's reply (see status-reply.h). */
#include "status-reply.h"

#include <errno.h>

#include "history-reply.h"
#include "protocol.h"
#include "reply.h"
#include "status.h"
#include "varlink.h"

int64_t status_reply_span(const View *v, int64_t seconds) {
        const struct config_rings *g = v->config ? &v->config->rings : NULL;
        unsigned r = 0;

        if (seconds <= 0 || !g || g->n == 0)
                return seconds;
        while (r + 1 < g->n && (int64_t) g->spec[r].resolution * 60 < seconds)
                r++;
        return MIN((int64_t) g->spec[r].resolution * 60, 86400);
}

/* About 60 values over the last 'seconds', from the finest ring whose
 * points are at least seconds/60 long: enough for a sparkline, small enough
 * for thousands of mounts. */
static json_object *recent_history(const MountHistory *h, int64_t seconds) {
        _cleanup_json_ json_object *a = json_object_new_array();
        unsigned r = 0;
        uint32_t res;
        int64_t newest, from;

        if (!a)
                return NULL;
        if (!h)
                return TAKE_PTR(a);
        while (r + 1 < h->n_rings && (int64_t) h->rings[r].spec.resolution * 60 < seconds)
                r++;
        if (h->rings[r].count == 0)
                return TAKE_PTR(a);
        res = h->rings[r].spec.resolution;
        newest = h->rings[r].head_t;
        from = newest - (MAX(seconds / res, 1) - 1) * (int64_t) res;
        for (int64_t t = from; t <= newest; t += res) {
                const struct stats_point *p = history_point(h, r, t);

                if (json_object_array_add(a, p && p->n_act ? reply_rounded(p->per_min, 2) : NULL) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

json_object *status_reply_mount(const View *v, const ReportMount *rm, int64_t history_s) {
        json_object *j = report_mount_to_json(rm);

        if (j && history_s > 0 && v->store &&
            reply_add(j, F_HISTORY, recent_history(history_reply_find(v, rm->id, rm->target), history_s)) < 0) {
                json_object_put(j);
                return NULL;
        }
        return j;
}

static json_object *mount_changes_new(const Report *rep) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || reply_add(o, F_MC_SOURCE, json_object_new_string(rep->mount_changes.source)) < 0 ||
            json_object_object_add(o, F_MC_REASON,
                                   rep->mount_changes.reason ? varlink_name_new(rep->mount_changes.reason) : NULL) <
                    0 ||
            reply_add(o, F_MC_EVENTS, json_object_new_int64(rep->mount_changes.events)) < 0 ||
            reply_add(o, F_MC_RESYNCS, json_object_new_int64(rep->mount_changes.resyncs)) < 0 ||
            reply_add(o, F_MC_MOUNTS, json_object_new_int64(rep->mount_changes.mounts)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *status_reply_finish(const Report *rep, struct printbuf *mounts) {
        _cleanup_json_ json_object *p = json_object_new_object();
        _cleanup_(reply_printbuf_freep) struct printbuf *list = mounts;

        if (!p || printbuf_memappend(list, "]", 1) < 0)
                return NULL;
        if (reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            reply_add(p, F_VERSION, json_object_new_string(rep->version)) < 0 ||
            reply_add(p, F_HOSTNAME, varlink_name_new(rep->hostname)) < 0 ||
            reply_add(p, F_STARTED_AT, json_object_new_int64(rep->started_at)) < 0 ||
            reply_add(p, F_UPTIME_S, json_object_new_int64(rep->uptime_s)) < 0 ||
            reply_add(p, F_STUCK_THREADS, json_object_new_int64(rep->stuck_threads)) < 0 ||
            reply_add(p, F_ADVICE_CHANGES, json_object_new_int64(rep->advice_changes)) < 0 ||
            (rep->mount_changes.source && reply_add(p, F_MOUNT_CHANGES, mount_changes_new(rep)) < 0) ||
            reply_add(p, F_MOUNTS, reply_text_new(TAKE_PTR(list))) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

json_object *status_reply_build(const View *v, const char *target, int64_t history_s) {
        _cleanup_(reply_printbuf_freep) struct printbuf *mounts = printbuf_new();
        _cleanup_(report_freep) Report *rep = NULL;
        int r;

        if (!mounts || printbuf_memappend(mounts, "[", 1) < 0)
                return NULL;
        r = status_report(v, target, false, &rep);
        if (r == -ENOENT)
                return reply_no_such_mount(v, target);
        if (r < 0)
                return NULL;

        for (size_t i = 0; i < rep->n_mounts; i++)
                if (reply_list_append(mounts, status_reply_mount(v, &rep->mounts[i], history_s)) < 0)
                        return NULL;
        return status_reply_finish(rep, TAKE_PTR(mounts));
}
