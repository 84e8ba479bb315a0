/* act-reply.c: Probe and Reload (see act-reply.h). */
#include "act-reply.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "reply.h"
#include "status.h"
#include "strv.h"
#include "varlink.h"

static json_object *probe_to_json(const struct probe_result *r, const MountEntry *e) {
        json_object *j, *reason;
        ReportProbe p;

        status_probe(r, e, &p);
        j = report_probe_to_json(&p);
        /* The reason may quote the mount's path (any bytes): in its
         * protocol form, as GetStatus gives it, so the reply stays valid
         * UTF-8. */
        if (j && p.reason) {
                reason = varlink_name_new(p.reason);
                if (!reason || json_object_object_add(j, F_REASON, reason) < 0) {
                        json_object_put(reason);
                        json_object_put(j);
                        return NULL;
                }
        }
        return j;
}

struct probe_request {
        const View *view; /* the manager's: it outlives the tracker's answers */
        ControlCall *call;
        char *target;
};

static void probe_answered(const TrackedMount *tm, const struct probe_result *r, void *userdata) {
        struct probe_request *req = userdata;
        _cleanup_json_ json_object *p = json_object_new_object();
        json_object *reply = NULL;

        if (!tm)
                reply = reply_no_such_mount(req->view, req->target);
        else if (p && reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) >= 0 &&
                 reply_add(p, F_TARGET, varlink_name_new(req->target)) >= 0 &&
                 reply_add(p, F_PROBE, probe_to_json(r, tm->entry)) >= 0)
                reply = varlink_reply_new(TAKE_PTR(p));
        if (!reply)
                reply = varlink_error_new_str(ERROR_INTERNAL, P_REASON, "out of memory");
        control_call_reply(req->call, reply);
        control_call_unref(req->call);
        free(req->target);
        free(req);
}

int act_reply_probe(const View *v, ControlCall *call, json_object *params, json_object **ret) {
        const MountEntry *e;
        struct probe_request *req;
        const char *target;
        int r;

        if (reply_param_string(params, F_TARGET, &target) <= 0) {
                *ret = reply_invalid_parameter(F_TARGET);
                return 0;
        }
        e = mount_table_find_target(v->mounts, target);
        if (!e) {
                *ret = reply_no_such_mount(v, target);
                return 0;
        }
        req = calloc(1, sizeof *req);
        if (!req || !(req->target = strdup(target))) {
                free(req);
                return -ENOMEM;
        }
        req->view = v;
        req->call = control_call_ref(call);
        r = view_probe(v, e->id, probe_answered, req);
        if (r < 0) {
                control_call_unref(req->call);
                free(req->target);
                free(req);
                *ret = varlink_error_new_str(ERROR_INTERNAL, P_REASON, strerror(-r));
                return 0;
        }
        return 1;
}

/* The configuration read again (off the loop) and put in force before the
 * reply, or the errors that kept the running one. */
struct reload_request {
        const View *view;
        ControlCall *call;
};

static json_object *reload_reply(const View *v, int r, char *const *errors) {
        _cleanup_json_ json_object *p = json_object_new_object(), *list = NULL;

        if (!p)
                return NULL;
        if (r >= 0) {
                if (reply_add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
                    (v->config->path ? reply_add(p, F_CONFIG, varlink_name_new(v->config->path))
                                     : reply_add_nullable(p, F_CONFIG, NULL)) < 0)
                        return NULL;
                return varlink_reply_new(TAKE_PTR(p));
        }
        list = json_object_new_array();
        if (!list)
                return NULL;
        STRV_FOREACH(e, errors)
                if (json_object_array_add(list, varlink_name_new(*e)) < 0)
                        return NULL;
        if (reply_add(p, P_ERRORS, TAKE_PTR(list)) < 0)
                return NULL;
        return varlink_error_new(ERROR_INVALID_CONFIGURATION, TAKE_PTR(p));
}

static void reload_answered(int r, char **errors, void *userdata) {
        struct reload_request *req = userdata;
        json_object *reply = r == -ECANCELED ? varlink_error_new_str(ERROR_INTERNAL, P_REASON, "atimed is stopping")
                                             : reload_reply(req->view, r, errors);

        strv_free(errors);
        if (!reply)
                reply = varlink_error_new_str(ERROR_INTERNAL, P_REASON, "out of memory");
        control_call_reply(req->call, reply);
        control_call_unref(req->call);
        free(req);
}

int act_reply_reload(const View *v, ControlCall *call, json_object *params, json_object **ret) {
        struct reload_request *req = calloc(1, sizeof *req);
        int r;

        if (!req)
                return -ENOMEM;
        req->view = v;
        req->call = control_call_ref(call);
        r = view_reload(v, reload_answered, req);
        if (r < 0) {
                control_call_unref(req->call);
                free(req);
                *ret = varlink_error_new_str(ERROR_INTERNAL, P_REASON, strerror(-r));
                return 0;
        }
        return 1;
}
