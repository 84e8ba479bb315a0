/* methods.c: the control protocol's methods (see protocol.h for names and
 * the interface descriptions below for their shapes): the table of them,
 * each call's parameters and privilege checked against it, the Varlink
 * service's own methods; each family's reply is built in a room of its
 * own (status-reply.c, history-reply.c, advice-reply.c, act-reply.c), and
 * those of every mount are kept (reply-cache.c). */
#include "methods.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "act-reply.h"
#include "advice-reply.h"
#include "escape.h"
#include "history-reply.h"
#include "log.h"
#include "protocol.h"
#include "reply.h"
#include "status-reply.h"
#include "time-util.h"
#include "varlink.h"

/* The Varlink interface descriptions (docs/io.atimed.varlink and
 * docs/org.varlink.service.varlink, compiled in by make): served by
 * GetInterfaceDescription so that generic Varlink tools can introspect
 * atimed, and the reference of every reply's fields. */
extern const char interface_io_atimed[];
extern const char interface_org_varlink_service[];

/* A method answers at once, from the view (answer: the whole reply; NULL
 * only on OOM); or later, for work done elsewhere (answer_later); or from
 * the replies kept of every mount (serve). The last two return 1 and
 * answer through the call, or 0 with the reply in *ret. */
typedef json_object *(*method_fn)(const View *v, const ControlPeer *peer, json_object *params);
typedef int (*method_later_fn)(const View *v, ControlCall *call, json_object *params, json_object **ret);
typedef int (*method_serve_fn)(Methods *m, ControlCall *call, json_object *params, json_object **ret);

struct method {
        const char *name;
        method_fn answer;
        method_later_fn answer_later;
        method_serve_fn serve;
        const char *const *params; /* accepted parameter names, NULL-terminated */
        bool privileged;           /* changes something: root or privileged_group only */
};

struct Methods {
        const View *view;
        ReplyCache *replies; /* GetStatus and GetRecommendations of every mount */
};

int methods_new(const View *view, Methods **ret) {
        _cleanup_free_ Methods *m = calloc(1, sizeof *m);

        if (!m || reply_cache_new(view, &m->replies) < 0)
                return -ENOMEM;
        m->view = view;
        *ret = TAKE_PTR(m);
        return 0;
}

Methods *methods_free(Methods *m) {
        if (!m)
                return NULL;
        reply_cache_free(m->replies);
        free(m);
        return NULL;
}

int methods_set_event(Methods *m, sd_event *e) {
        return reply_cache_set_event(m->replies, e);
}

void methods_set_charge(Methods *m, reply_cache_charge_t charge, void *userdata) {
        reply_cache_set_charge(m->replies, charge, userdata);
}

void methods_changed(Methods *m) {
        if (m)
                reply_cache_changed(m->replies);
}

/* NULL if every parameter is one the method accepts; else the error reply. */
static json_object *check_param_names(const struct method *me, json_object *params) {
        if (!params)
                return NULL;
        json_object_object_foreach(params, key, val) {
                bool known = false;

                (void) val;
                for (const char *const *p = me->params; p && *p && !known; p++)
                        known = streq(*p, key);
                if (!known)
                        return reply_invalid_parameter(key);
        }
        return NULL;
}

static json_object *method_get_info(const View *v, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *ifs = json_object_new_array();

        if (!p || !ifs)
                return NULL;
        if (json_object_array_add(ifs, json_object_new_string(VARLINK_SERVICE_INTERFACE)) < 0 ||
            json_object_array_add(ifs, json_object_new_string(ATIMED_INTERFACE)) < 0)
                return NULL;
        if (reply_add(p, F_VENDOR, json_object_new_string(PACKAGE_NAME)) < 0 ||
            reply_add(p, F_PRODUCT, json_object_new_string(PACKAGE_NAME)) < 0 ||
            reply_add(p, F_VERSION, json_object_new_string(PACKAGE_VERSION)) < 0 ||
            reply_add(p, F_URL, json_object_new_string(PACKAGE_URL)) < 0 ||
            reply_add(p, F_INTERFACES, TAKE_PTR(ifs)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

const char *methods_interface_description(const char *interface) {
        if (streq(interface, VARLINK_SERVICE_INTERFACE))
                return interface_org_varlink_service;
        if (streq(interface, ATIMED_INTERFACE))
                return interface_io_atimed;
        return NULL;
}

static json_object *method_get_interface_description(const View *v, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = NULL;
        const char *iface, *desc;

        if (reply_param_string(params, P_INTERFACE, &iface) <= 0)
                return reply_invalid_parameter(P_INTERFACE);
        desc = methods_interface_description(iface);
        if (!desc)
                return varlink_error_new_str(ERROR_INTERFACE_NOT_FOUND, P_INTERFACE, iface);
        p = json_object_new_object();
        if (!p || reply_add(p, F_DESCRIPTION, json_object_new_string(desc)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

static int method_get_status(Methods *m, ControlCall *call, json_object *params, json_object **ret) {
        const char *target;
        int64_t history_s = 0;

        if (reply_param_string(params, F_TARGET, &target) < 0)
                *ret = reply_invalid_parameter(F_TARGET);
        else if (reply_param_int(params, P_HISTORY_S, 1, 86400, &history_s) < 0)
                *ret = reply_invalid_parameter(P_HISTORY_S);
        else if (target)
                /* One mount: cheap by construction. */
                *ret = status_reply_build(m->view, target, status_reply_span(m->view, history_s));
        else
                return reply_cache_status(m->replies, call, status_reply_span(m->view, history_s), ret);
        return *ret ? 0 : -ENOMEM;
}

static int method_get_recommendations(Methods *m, ControlCall *call, json_object *params, json_object **ret) {
        const ControlPeer *peer = control_call_peer(call);
        bool privileged = reply_peer_privileged(m->view, peer);
        const char *target;

        if (reply_param_string(params, F_TARGET, &target) < 0)
                *ret = reply_invalid_parameter(F_TARGET);
        else if (target)
                *ret = advice_reply_build(m->view, target, privileged);
        else
                return reply_cache_advice(m->replies, call, privileged, ret);
        return *ret ? 0 : -ENOMEM;
}

static const char *const no_params[] = { NULL };
static const char *const interface_params[] = { P_INTERFACE, NULL };
static const char *const status_params[] = { F_TARGET, P_HISTORY_S, NULL };
static const char *const history_params[] = { F_TARGET, P_SINCE, P_RESOLUTION, NULL };
static const char *const recommendations_params[] = { F_TARGET, NULL };
static const char *const probe_params[] = { F_TARGET, NULL };
static const char *const consumers_params[] = { F_TARGET, NULL };

static const struct method methods[] = {
        { METHOD_GET_INFO, .answer = method_get_info, .params = no_params },
        { METHOD_GET_INTERFACE_DESCRIPTION, .answer = method_get_interface_description, .params = interface_params },
        { METHOD_GET_STATUS, .serve = method_get_status, .params = status_params },
        { METHOD_GET_HISTORY, .answer = history_reply_get, .params = history_params },
        { METHOD_GET_RECOMMENDATIONS, .serve = method_get_recommendations, .params = recommendations_params },
        { METHOD_GET_CONSUMERS, .answer = advice_reply_consumers, .params = consumers_params },
        { METHOD_PROBE, .answer_later = act_reply_probe, .params = probe_params, .privileged = true },
        { METHOD_RELOAD, .answer_later = act_reply_reload, .params = no_params, .privileged = true },
};

const char *const *methods_list(void) {
        static const char *names[ELEMENTSOF(methods) + 1];

        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                names[i] = methods[i].name;
        return names;
}

/* A target comes in its protocol form (escape.h); the methods compare
 * it with the names as the kernel gives them. */
static int decode_target(json_object *params) {
        _cleanup_free_ char *raw = NULL;
        json_object *v;

        if (!params || !json_object_object_get_ex(params, F_TARGET, &v) || !json_object_is_type(v, json_type_string))
                return 0;
        if (name_unescape(json_object_get_string(v), &raw) < 0)
                return -ENOMEM;
        return json_object_set_string(v, raw) ? 0 : -ENOMEM;
}

int methods_dispatch(void *userdata, ControlCall *call, const char *method, json_object *params, json_object **ret) {
        Methods *m = userdata;
        const ControlPeer *peer = control_call_peer(call);
        const char *dot;
        json_object *bad;
        bool iface_known = false;

        *ret = NULL;
        for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
                if (!streq(methods[i].name, method))
                        continue;
                bad = check_param_names(&methods[i], params);
                if (bad) {
                        *ret = bad;
                        return 0;
                }
                if (decode_target(params) < 0)
                        return -ENOMEM;
                if (methods[i].privileged && !reply_peer_privileged(m->view, peer)) {
                        /* Any user can ask as fast as it likes. */
                        static LogRatelimit refused = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);

                        log_ratelimit_full(&refused, LOG_INFO, "Refused %s to uid %u (pid " PID_FMT "): not privileged",
                                           method, (unsigned) peer->uid, peer->pid);
                        *ret = varlink_error_new(ERROR_PERMISSION_DENIED, NULL);
                        return *ret ? 0 : -ENOMEM;
                }
                if (methods[i].serve)
                        return methods[i].serve(m, call, params, ret);
                if (methods[i].answer_later)
                        return methods[i].answer_later(m->view, call, params, ret);
                *ret = methods[i].answer(m->view, peer, params);
                return *ret ? 0 : -ENOMEM;
        }

        /* Varlink tells an unknown interface from an unknown method. */
        dot = strrchr(method, '.');
        if (dot) {
                size_t l = (size_t) (dot - method);

                iface_known = (l == strlen(ATIMED_INTERFACE) && strncmp(method, ATIMED_INTERFACE, l) == 0) ||
                              (l == strlen(VARLINK_SERVICE_INTERFACE) &&
                               strncmp(method, VARLINK_SERVICE_INTERFACE, l) == 0);
        }
        if (!iface_known && dot) {
                _cleanup_free_ char *iface = strndup(method, (size_t) (dot - method));
                *ret = iface ? varlink_error_new_str(ERROR_INTERFACE_NOT_FOUND, P_INTERFACE, iface) : NULL;
        } else
                *ret = varlink_error_new_str(ERROR_METHOD_NOT_FOUND, P_METHOD, method);
        return *ret ? 0 : -ENOMEM;
}
