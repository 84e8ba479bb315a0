/* test-readers: who reads atime at a path (readers.h), on the mountinfo
 * fixture, and the GetConsumers method that serves it: the operator's
 * declarations and the scan's readers hold for a mount atimed does not
 * track (a pseudo filesystem, /proc), for a path where nothing is mounted,
 * and stop at a deeper mount point; the target is read in the protocol's
 * form and answered in it; a private reader's path is for root alone. */
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "config.h"
#include "methods.h"
#include "protocol.h"
#include "readers.h"
#include "strv.h"
#include "varlink.h"

/* The readers at target, as "path,path,...". */
static char *paths_at(const View *v, const char *target) {
        _cleanup_free_ const struct consumer **l = NULL;
        _cleanup_strv_free_ char **paths = NULL;
        size_t n = 0;

        if (readers_at(v, target, &l, &n) < 0)
                return strdup("(error)");
        for (size_t i = 0; i < n; i++)
                if (strv_extend(&paths, l[i]->path) < 0)
                        return strdup("(oom)");
        return paths ? strv_join(paths, ",") : strdup("");
}

static void is_at(const View *v, const char *target, const char *want, const char *what) {
        _cleanup_free_ char *got = paths_at(v, target);

        ok(got && streq(got, want), "%s: %s (%s)", target, what, got ? got : "-");
}

/* GetConsumers as a caller of uid 'uid', its reply as a client reads it. */
static json_object *get_consumers(Methods *m, uid_t uid, const char *params_json) {
        _cleanup_json_ json_object *p = json_tokener_parse(params_json);
        ControlPeer peer = { .pid = 1, .uid = uid, .gid = uid };
        _cleanup_(control_call_unrefp) ControlCall *c = NULL;
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_free_ char *buf = NULL;
        json_object *o = NULL;
        size_t len;

        if (control_call_new_detached(&peer, &c) < 0 || methods_dispatch(m, c, METHOD_GET_CONSUMERS, p, &reply) != 0 ||
            varlink_serialize(reply, &buf, &len) < 0 || varlink_parse(buf, len - 1, &o) < 0)
                return NULL;
        return o;
}

static const char *field(json_object *o, const char *a, const char *b) {
        json_object *x = json_object_object_get(o, a);

        return json_object_get_string(b ? json_object_object_get(x, b) : x);
}

static void test_method(const View *v) {
        _cleanup_(methods_freep) Methods *m = NULL;
        _cleanup_json_ json_object *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
        json_object *list;

        ok(methods_new(v, &m) == 0, "the methods of the view");
        a = get_consumers(m, 1000, "{\"target\":\"/proc//\"}");
        list = json_object_object_get(json_object_object_get(a, VL_PARAMETERS), F_CONSUMERS);
        ok(a && !json_object_object_get_ex(a, VL_ERROR, NULL) && json_object_array_length(list) == 2,
           "GetConsumers of /proc (not tracked): two readers");
        is_str(field(a, VL_PARAMETERS, F_TARGET), "/proc", "the target as asked, its slashes tidied");
        is_str(field(json_object_array_get_idx(list, 0), F_SOURCE, NULL), "t.conf:2", "the declaration first, with its file:line");
        is_str(field(json_object_array_get_idx(list, 1), F_PATH, NULL), "", "a private reader's path hidden from uid 1000");
        b = get_consumers(m, 0, "{\"target\":\"/proc\"}");
        list = json_object_object_get(json_object_object_get(b, VL_PARAMETERS), F_CONSUMERS);
        is_str(field(json_object_array_get_idx(list, 1), F_PATH, NULL), "/proc/sys/x", "and shown to root");
        c = get_consumers(m, 1000, "{\"target\":\"/srv/we\\\\\\\\ird\"}");
        list = json_object_object_get(json_object_object_get(c, VL_PARAMETERS), F_CONSUMERS);
        ok(json_object_array_length(list) == 1 && streq(field(c, VL_PARAMETERS, F_TARGET), "/srv/we\\\\ird") &&
                   streq(field(json_object_array_get_idx(list, 0), F_PATH, NULL), "/srv/we\\\\ird/spool"),
           "a name with a backslash, asked and answered in the protocol's form");
        d = get_consumers(m, 1000, "{\"target\":\"srv\"}");
        is_str(field(d, VL_ERROR, NULL), ERROR_INVALID_PARAMETER, "a relative target is refused");
        e = get_consumers(m, 1000, "{}");
        is_str(field(e, VL_ERROR, NULL), ERROR_INVALID_PARAMETER, "so is none");
}

int main(void) {
        static const char conf[] = "[mount:/proc]\nneeds_atime = relatime\n"
                                   "[mount:/nowhere/at/all]\nneeds_atime = strict\n";
        _cleanup_(mount_table_freep) MountTable *table = NULL;
        _cleanup_(config_freep) struct config *cfg = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        struct consumer found[] = {
                { .kind = CONSUMER_MAIL, .need = NEED_RELATIME, .path = (char[]) { "/srv/lazy/mail" } },
                { .kind = CONSUMER_TMPFILES, .need = NEED_RELATIME, .path = (char[]) { "/srv/plain/cache" } },
                { .kind = CONSUMER_TMPFILES, .need = NEED_STRICT, .path = (char[]) { "/proc/sys/x" }, .private = true },
                { .kind = CONSUMER_MAIL, .need = NEED_RELATIME, .path = (char[]) { "/var/spool/mail" },
                  .resolved = (char[]) { "/srv/under//m/" } },
                { .kind = CONSUMER_MAIL, .need = NEED_RELATIME, .path = (char[]) { "/srv/lazybones" } },
                { .kind = CONSUMER_MAIL, .need = NEED_RELATIME, .path = (char[]) { "/srv/we\\ird/spool" } },
        };
        Consumers consumers = { .v = found, .n = ELEMENTSOF(found) };
        struct mount_filter def = {};
        char path[4096];
        View v = { .privileged_gid = (gid_t) -1, .consumers = &consumers };

        static char test[] = "test";

        for (size_t i = 0; i < ELEMENTSOF(found); i++)
                found[i].why = found[i].source = test;
        snprintf(path, sizeof path, "%s/tests/fixtures/mountinfo-basic", getenv("top_srcdir") ?: ".");
        ok(mount_table_load(path, &def, &table) == 0, "fixture table loads");
        ok(config_load_string("t.conf", conf, sizeof conf - 1, &cfg, &errors) == 0, "a configuration declaring two");
        v.mounts = table;
        v.config = cfg;

        is_at(&v, "/srv/lazy", "/srv/lazy/mail", "the reader on it");
        is_at(&v, "/", "/nowhere/at/all,/srv/plain/cache,/srv/lazybones,/srv/we\\ird/spool",
              "only what no deeper mount point holds (/srv/lazybones is not below /srv/lazy)");
        is_at(&v, "/srv", "/srv/plain/cache,/srv/lazybones,/srv/we\\ird/spool", "a directory, not a mount point: what it would hold");
        is_at(&v, "/proc", "/proc,/proc/sys/x", "a mount atimed does not track: the declaration first, then the reader");
        is_at(&v, "/nowhere/at/all", "/nowhere/at/all", "nothing mounted there: the declaration holds");
        is_at(&v, "/nowhere", "/nowhere/at/all", "nor at a directory above it");
        is_at(&v, "/srv/under", "/var/spool/mail", "a reader by its resolved path, tidied");
        is_at(&v, "/srv/lazy/mail/new", "", "a path below a reader's holds none of it");
        is_at(&v, "/srv/we\\ird", "/srv/we\\ird/spool", "a name with a backslash, raw");
        v.config = NULL;
        v.mounts = NULL;
        is_at(&v, "/srv", "/srv/lazy/mail,/srv/plain/cache,/var/spool/mail,/srv/lazybones,/srv/we\\ird/spool",
              "without a table yet: every reader below");
        v.mounts = table;
        v.config = cfg;
        test_method(&v);
        return tap_done();
}
