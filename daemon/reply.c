/* reply.c: the pieces every method's reply is made of (see reply.h). */
#include "reply.h"

#include <errno.h>
#include <limits.h>

#include "protocol.h"
#include "report.h"
#include "varlink.h"

json_object *reply_invalid_parameter(const char *name) {
        return varlink_error_new_str(ERROR_INVALID_PARAMETER, P_PARAMETER, name);
}

int reply_param_string(json_object *params, const char *name, const char **ret) {
        json_object *v;

        *ret = NULL;
        if (!params || !json_object_object_get_ex(params, name, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        *ret = json_object_get_string(v);
        return 1;
}

int reply_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

json_object *reply_no_such_mount(const View *v, const char *target) {
        json_object *params = json_object_new_object();
        const char *type = mount_table_fstype_at(v->mounts, target), *reason = NULL;
        char why[256];

        if (v->config && type) {
                struct mount_filter f;

                config_mount_filter(v->config, &f);
                reason = mount_filter_explain(&f, type, target, why, sizeof why);
        }
        /* Names (targets, sources, paths: any bytes) go out in their
         * protocol form (escape.h): every reply stays valid UTF-8. */
        if (params && (reply_add(params, F_TARGET, varlink_name_new(target)) < 0 ||
                       (reason && reply_add(params, P_REASON, varlink_name_new(reason)) < 0))) {
                json_object_put(params);
                return NULL;
        }
        return params ? varlink_error_new(ERROR_NO_SUCH_MOUNT, params) : NULL;
}

json_object *reply_name_or_null(const char *s) {
        return s ? varlink_name_new(s) : NULL;
}

/* json-c's NULL is JSON null: reply_add() must not take it for OOM there. */
int reply_add_nullable(json_object *o, const char *key, json_object *v) {
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

json_object *reply_rounded(double v, int decimals) {
        return report_json_rounded(v, decimals);
}

int reply_param_int(json_object *params, const char *name, int64_t lo, int64_t hi, int64_t *ret) {
        json_object *v;

        if (!params || !json_object_object_get_ex(params, name, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        errno = 0;
        *ret = json_object_get_int64(v);
        if (errno == ERANGE || *ret < lo || *ret > hi)
                return -EINVAL;
        return 1;
}

/* A JSON value held as its text, serialized as is. */
static int emit_text(json_object *o, struct printbuf *pb, int level, int flags) {
        struct printbuf *text = json_object_get_userdata(o);

        return printbuf_memappend(pb, text->buf, text->bpos) < 0 ? -1 : 0;
}

static void text_delete(json_object *o, void *userdata) {
        printbuf_free(userdata);
}

json_object *reply_text_new(struct printbuf *text) {
        json_object *o = json_object_new_object();

        if (!o) {
                printbuf_free(text);
                return NULL;
        }
        json_object_set_serializer(o, emit_text, text, text_delete);
        return o;
}

void reply_printbuf_freep(struct printbuf **pb) {
        if (*pb)
                printbuf_free(*pb);
}

int reply_list_append(struct printbuf *pb, json_object *j) {
        const char *s;
        size_t len;
        int r = -ENOMEM;

        if (!j)
                return -ENOMEM;
        s = json_object_to_json_string_length(j, VARLINK_JSON_FLAGS, &len);
        if (s && len <= INT_MAX && (pb->bpos <= 1 || printbuf_memappend(pb, ",", 1) >= 0) &&
            printbuf_memappend(pb, s, (int) len) >= 0)
                r = 0;
        json_object_put(j);
        return r;
}

bool reply_peer_privileged(const View *v, const ControlPeer *peer) {
        return peer->uid == 0 || (v->privileged_gid != (gid_t) -1 && control_peer_in_group(peer, v->privileged_gid));
}
