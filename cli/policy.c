/* policy.c: an atime policy as atimectl speaks of it (see policy.h). */
#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "protocol.h"
#include "strv.h"
#include "varlink.h"

int policy_parse(const char *s, struct policy_spec *ret) {
        _cleanup_strv_free_ char **l = NULL;
        struct policy_spec p = { .lazytime = -1, .nodiratime = -1 };

        if (strv_split(s, ",", &l) < 0)
                return -ENOMEM;
        if (strv_length(l) == 0)
                return -EINVAL;
        STRV_FOREACH(o, l) {
                if (streq(*o, "noatime") || streq(*o, "relatime") || streq(*o, "strictatime")) {
                        if (p.atime)
                                return -EINVAL;
                        p.atime = streq(*o, "noatime") ? "noatime" : streq(*o, "relatime") ? "relatime" : "strictatime";
                } else if (streq(*o, "nodiratime"))
                        p.nodiratime = 1;
                else if (streq(*o, "lazytime"))
                        p.lazytime = 1;
                else if (streq(*o, "nolazytime"))
                        p.lazytime = 0;
                else
                        return -EINVAL;
        }
        *ret = p;
        return 0;
}

void policy_format(const struct policy_spec *p, char *buf, size_t len) {
        const char *lazy = p->lazytime == 1 ? "lazytime" : p->lazytime == 0 ? "nolazytime" : NULL;
        const char *dir = p->nodiratime == 1 ? "nodiratime" : NULL;

        snprintf(buf, len, "%s%s%s%s%s", p->atime ? p->atime : "", p->atime && dir ? "," : "", dir ? dir : "",
                 (p->atime || dir) && lazy ? "," : "", lazy ? lazy : "");
}

void policy_format_remount(const struct policy_spec *p, char *buf, size_t len) {
        char spec[64];

        policy_format(p, spec, sizeof spec);
        snprintf(buf, len, "%s%s", p->atime && streq(p->atime, "relatime") ? "atime," : "", spec);
}

int policy_advice_reply(const char *path, json_object **ret, char *target, size_t len) {
        if (path)
                return call_target(METHOD_GET_RECOMMENDATIONS, path, NULL, ret, target, len, NULL);
        return call(METHOD_GET_RECOMMENDATIONS, NULL, ret);
}

bool policy_of_advice(const ReportAdvice *a, struct policy_spec *ret) {
        const char *ca = a->current_atime, *wa = a->recommended_atime;

        if (!a->change || !wa)
                return false;
        *ret = (struct policy_spec) {
                .atime = ca && streq(ca, wa) ? NULL
                         : streq(wa, "noatime") ? "noatime"
                         : streq(wa, "relatime") ? "relatime"
                                                 : "strictatime",
                .lazytime = a->current_lazytime == a->recommended_lazytime ? -1 : a->recommended_lazytime,
                .nodiratime = a->recommended_nodiratime && !a->current_nodiratime ? 1 : -1,
        };
        return ret->atime || ret->lazytime >= 0 || ret->nodiratime == 1;
}

int policy_advice(const char *path, Report **ret, char *target, size_t len) {
        _cleanup_json_ json_object *reply = NULL;
        int r;

        r = policy_advice_reply(path, &reply, target, len);
        if (r != EXIT_OK)
                return r;
        r = report_from_recommendations(reply, ret);
        return r < 0 ? fail_parse(METHOD_GET_RECOMMENDATIONS, r) : EXIT_OK;
}
