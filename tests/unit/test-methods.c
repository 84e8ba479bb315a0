/* test-methods: the dispatcher against a view (view.h) of a mountinfo
 * fixture, no Manager: method and error names, parameter checks, that the
 * interface description served to Varlink tools matches what the code
 * does, and the cached GetStatus turning at methods_changed(); then the
 * same view with a real tracker (jobs in a worker pool on an event loop)
 * and a real store: history found by the tracker's key, probes answered at
 * once or by their job. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "methods.h"
#include "status.h"
#include "view-fixture.h"
#include "protocol.h"
#include "../tap.h"
#include "loop-wait.h"
#include "varlink.h"

/* The reply as a client reads it: serialized as the socket sends it (a
 * cached GetStatus is text already), parsed again. */
static json_object *wire(json_object *reply) {
        _cleanup_free_ char *buf = NULL;
        json_object *o = NULL;
        size_t len;

        if (reply && varlink_serialize(reply, &buf, &len) == 0 && varlink_parse(buf, len - 1, &o) < 0)
                o = NULL;
        json_object_put(reply);
        return o;
}

/* Dispatches as 'uid' and, for a call answered later (a probe), runs the
 * loop 'e' until the answer is there. */
static json_object *call_wait(Methods *m, sd_event *e, uid_t uid, const char *method, const char *params_json) {
        _cleanup_json_ json_object *p = params_json ? json_tokener_parse(params_json) : NULL;
        ControlPeer peer = { .pid = 1, .uid = uid, .gid = uid };
        _cleanup_(control_call_unrefp) ControlCall *c = NULL;
        json_object *reply = NULL;
        int r;

        if (control_call_new_detached(&peer, &c) < 0)
                return NULL;
        r = methods_dispatch(m, c, method, p, &reply);
        if (r > 0 && e)
                RUN_LOOP_UNTIL(e, (reply = control_call_steal_reply(c)));
        else if (r > 0)
                reply = control_call_steal_reply(c);
        return wire(reply);
}

static json_object *call_as(Methods *m, uid_t uid, const char *method, const char *params_json) {
        return call_wait(m, NULL, uid, method, params_json);
}

static json_object *call(Methods *m, const char *method, const char *params_json) {
        return call_as(m, 1000, method, params_json);
}

static const char *error_of(json_object *reply) {
        json_object *e;

        return json_object_object_get_ex(reply, VL_ERROR, &e) ? json_object_get_string(e) : NULL;
}

/* The field names of type 'Mount' in the interface description. */
static bool described_field(const char *desc, const char *field) {
        const char *start = strstr(desc, "type Mount (");
        const char *end = start ? strstr(start, "\n)") : NULL;
        char needle[64];

        if (!start || !end)
                return false;
        snprintf(needle, sizeof needle, "\n  %s: ", field);
        for (const char *f = strstr(start, needle); f; f = strstr(f + 1, needle))
                if (f < end)
                        return true;
        return false;
}

static json_object *param_of(json_object *reply, const char *name) {
        return json_object_object_get(json_object_object_get(reply, VL_PARAMETERS), name);
}

/* The same methods over a real tracker (its jobs in a worker pool on a
 * real event loop) and a real store holding a history. */
static void test_with_tracker_and_store(void) {
        _cleanup_(methods_freep) Methods *m = NULL;
        ViewFixture f;
        const MountEntry *e;
        const TrackedMount *tm;
        const char *key = NULL;
        struct stats_sample s;
        bool ready;

        ready = view_fixture_setup(&f, true) == 0 && methods_new(&f.view, &m) == 0;
        ok(ready, "a tracker on the fixture's table, a store in %s", f.dir);
        if (!ready)
                goto finish;
        e = mount_table_find_target(f.mounts, "/srv/ndir");
        tm = e ? tracker_find(f.tracker, e->id) : NULL;
        key = tm ? tracker_mount_key(tm) : NULL;
        ok(key && strstr(key, "target=/srv/ndir"), "the tracker names the tmpfs's history: %s", key ?: "(none)");
        s = (struct stats_sample) { .t = (int64_t) time(NULL) - 60, .has_activity = true, .per_min = 42, .lo = 40,
                                    .hi = 44, .has_policy = true };
        ok(key && store_add(f.store, key, &s) == 0, "a sample in its history");
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_HISTORY, "{\"target\":\"/srv/ndir\"}");
                json_object *points = param_of(r, F_POINTS), *last;

                last = json_object_array_get_idx(points, json_object_array_length(points) - 1);
                ok(!error_of(r) && streq(json_object_get_string(param_of(r, F_KEY)) ?: "", key ?: "-"),
                   "GetHistory finds it by the tracker's key");
                ok(json_object_get_double(json_object_object_get(last, F_ATIME_UPDATES_PER_MIN)) == 42,
                   "and serves the sample: 42/min");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_HISTORY, "{\"target\":\"/srv/strict\"}");

                ok(!error_of(r) && json_object_array_length(param_of(r, F_POINTS)) == 0 &&
                           strlen(json_object_get_string(param_of(r, F_REASON)) ?: "") > 0,
                   "a tracked mount without history: no points, and why: %s",
                   json_object_get_string(param_of(r, F_REASON)));
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_HISTORY, "{\"target\":\"/nope\"}");

                is_str(error_of(r), ERROR_NO_SUCH_MOUNT, "GetHistory of no mount and no history");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, "{\"target\":\"/srv/ndir\"}");
                json_object *mount = json_object_array_get_idx(param_of(r, F_MOUNTS), 0);

                ok(mount && !json_object_get_boolean(json_object_object_get(mount, F_STALLED)),
                   "GetStatus from the tracker: not stalled");
        }
        {
                _cleanup_json_ json_object *r = call_wait(m, f.event, 0, METHOD_PROBE, "{\"target\":\"/srv/ro\"}");
                const char *reason = json_object_get_string(
                        json_object_object_get(param_of(r, F_PROBE), F_REASON));

                ok(!error_of(r) && reason && strstr(reason, "read-only"),
                   "Probe of a read-only mount is answered at once: %s", reason ?: "(none)");
        }
        {
                _cleanup_json_ json_object *r = call_wait(m, f.event, 0, METHOD_PROBE, "{\"target\":\"/srv/strict\"}");
                json_object *probe = param_of(r, F_PROBE);

                ok(!error_of(r) && probe && !json_object_get_boolean(json_object_object_get(probe, F_VERIFIED)),
                   "Probe of a mount point that is not there: answered by its job, not verified (%s)",
                   json_object_get_string(json_object_object_get(probe, F_REASON)));
        }
        {
                /* A probe's reason quotes the mount's path: a name that is
                 * not UTF-8 goes out in its protocol form, as everywhere. */
                MountEntry *strict = NULL;
                char *was = NULL, bad[] = "/srv/bad\xff";
                _cleanup_json_ json_object *r = NULL;
                const char *reason;

                for (size_t i = 0; i < f.mounts->n; i++)
                        if (streq(f.mounts->entries[i].target, "/srv/strict"))
                                strict = &f.mounts->entries[i];
                if (strict) {
                        was = strict->target;
                        strict->target = bad;
                }
                r = call_wait(m, f.event, 0, METHOD_PROBE, "{\"target\":\"/srv/bad\\\\xff\"}");
                reason = json_object_get_string(json_object_object_get(param_of(r, F_PROBE), F_REASON));
                ok(!error_of(r) && reason && strstr(reason, "/srv/bad\\xff") && !strchr(reason, 0xff),
                   "Probe of a mount whose name is not UTF-8: its reason quotes it in protocol form (%s)", reason ?: "(none)");
                if (strict)
                        strict->target = was;
        }
        {
                /* GetRecommendations of everything is cached as GetStatus
                 * is (a flood of it costs one reply a second), and
                 * dropped by the same call. */
                json_object *a = NULL, *b = NULL, *fresh = NULL;
                size_t n_all = f.mounts->n, na = 0, nb = 0;

                for (int try = 0; try < 3; try++) {
                        json_object_put(a);
                        json_object_put(b);
                        f.mounts->n = n_all;
                        methods_changed(m);
                        a = call(m, METHOD_GET_RECOMMENDATIONS, NULL);
                        f.mounts->n = 3; /* a change nobody announces */
                        b = call(m, METHOD_GET_RECOMMENDATIONS, NULL);
                        na = json_object_array_length(json_object_object_get(json_object_object_get(a, VL_PARAMETERS), F_RECOMMENDATIONS));
                        nb = json_object_array_length(json_object_object_get(json_object_object_get(b, VL_PARAMETERS), F_RECOMMENDATIONS));
                        if (na == nb) /* else the two calls straddled a second */
                                break;
                }
                ok(na > 3 && na == nb, "a second GetRecommendations is the cached text (%zu, %zu)", na, nb);
                methods_changed(m);
                fresh = call(m, METHOD_GET_RECOMMENDATIONS, NULL);
                is_int(json_object_array_length(json_object_object_get(json_object_object_get(fresh, VL_PARAMETERS), F_RECOMMENDATIONS)),
                       3, "once methods_changed() is called, it is built afresh");
                f.mounts->n = n_all;
                methods_changed(m);
                json_object_put(a);
                json_object_put(b);
                json_object_put(fresh);
        }
        {
                /* GetStatus with history_s: any value is served as one of a
                 * few spans (60 points of a ring), each kept like GetStatus
                 * without it, so that a flood of history_s, each different,
                 * builds no reply afresh. */
                static const char *const asked[] = { "{\"history_s\":600}", "{\"history_s\":7200}", "{\"history_s\":3000}",
                                                     "{\"history_s\":36000}", "{\"history_s\":1}" };
                size_t n_all = f.mounts->n, n[5] = {}, points[5] = {};
                json_object *mounts;

                for (int try = 0; try < 3; try++) {
                        methods_changed(m);
                        for (int i = 0; i < 2; i++) {
                                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, asked[i]);
                        }
                        f.mounts->n = 3; /* a change nobody announces */
                        for (int i = 0; i < 5; i++) {
                                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, asked[i]);

                                json_object *h;

                                mounts = param_of(r, F_MOUNTS);
                                n[i] = json_object_is_type(mounts, json_type_array) ? json_object_array_length(mounts) : 0;
                                h = NULL;
                                for (size_t k = 0; k < n[i]; k++) {
                                        json_object *mo = json_object_array_get_idx(mounts, k);

                                        if (streq(json_object_get_string(json_object_object_get(mo, F_TARGET)) ?: "", "/srv/ndir"))
                                                h = json_object_object_get(mo, F_HISTORY);
                                }
                                points[i] = json_object_is_type(h, json_type_array) ? json_object_array_length(h) : 0;
                        }
                        f.mounts->n = n_all;
                        if (n[0] == n_all && n[1] == n_all && n[2] == n_all && n[3] == n_all && n[4] == n_all)
                                break; /* else the calls straddled a second */
                }
                ok(n[0] == n_all && n[2] == n_all && n[4] == n_all,
                   "history_s 600, 3000 and 1: the kept reply of 3600 s (%zu, %zu, %zu mounts)", n[0], n[2], n[4]);
                ok(n[1] == n_all && n[3] == n_all, "history_s 7200 and 36000: that of 36000 s, kept beside it (%zu, %zu)",
                   n[1], n[3]);
                ok(points[0] == 60 && points[1] == 60 && points[4] == 60,
                   "a mount's history: 60 points (%zu, %zu, %zu)", points[0], points[1], points[4]);
                methods_changed(m);
        }
        {
                /* Rings whose 60 points reach less than history_s asks:
                 * the longest ring's 60 points, not more. */
                struct config_rings was = f.config->rings;
                size_t n = 0;

                f.config->rings = (struct config_rings) { .spec = { { .resolution = 60, .capacity = 360 } }, .n = 1 };
                methods_changed(m);
                {
                        _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, "{\"history_s\":86400}");
                        json_object *mounts = param_of(r, F_MOUNTS);

                        for (size_t k = 0; json_object_is_type(mounts, json_type_array) && k < json_object_array_length(mounts); k++) {
                                json_object *mo = json_object_array_get_idx(mounts, k);

                                json_object *h = json_object_object_get(mo, F_HISTORY);

                                if (streq(json_object_get_string(json_object_object_get(mo, F_TARGET)) ?: "", "/srv/ndir") &&
                                    json_object_is_type(h, json_type_array))
                                        n = json_object_array_length(h);
                        }
                }
                is_int(n, 60, "rings of 1min alone, history_s 86400: 60 values a mount");
                f.config->rings = was;
                methods_changed(m);
        }
finish:
        m = methods_free(m);
        view_fixture_done(&f);
}

int main(void) {
        _cleanup_(mount_table_freep) MountTable *table = NULL;
        _cleanup_(status_counters_freep) StatusCounters *counters = NULL;
        _cleanup_(methods_freep) Methods *m = NULL;
        struct mount_filter def = {};
        char path[4096];
        const char *desc = methods_interface_description(ATIMED_INTERFACE);
        View v = { .privileged_gid = (gid_t) -1 };

        snprintf(path, sizeof path, "%s/tests/fixtures/mountinfo-basic", getenv("top_srcdir") ?: ".");
        ok(mount_table_load(path, &def, &table) == 0, "fixture table loads");
        ok(status_counters_new(&counters) == 0 && methods_new(&v, &m) == 0, "a view of it alone, and its methods");
        v.mounts = table;
        v.counters = counters;

        for (const char *const *n = methods_list(); *n; n++) {
                const char *short_name = strrchr(*n, '.') + 1;
                const char *d = methods_interface_description(strncmp(*n, ATIMED_INTERFACE ".", strlen(ATIMED_INTERFACE) + 1) == 0
                                                                      ? ATIMED_INTERFACE
                                                                      : VARLINK_SERVICE_INTERFACE);
                char needle[128];

                snprintf(needle, sizeof needle, "method %s(", short_name);
                ok(d && strstr(d, needle), "%s is in its interface description", *n);
        }

        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, NULL);
                json_object *p = json_object_object_get(r, VL_PARAMETERS), *mounts, *first;
                bool all_described = true, none_missing = true;

                ok(!error_of(r), "GetStatus succeeds");
                ok(json_object_object_get_ex(p, F_MOUNTS, &mounts) && json_object_array_length(mounts) == 11,
                   "GetStatus lists the eleven tracked mounts");
                first = json_object_array_get_idx(mounts, 0);
                json_object_object_foreach(first, key, val) {
                        (void) val;
                        if (!described_field(desc, key)) {
                                all_described = false;
                                printf("# field %s is not in type Mount\n", key);
                        }
                }
                ok(all_described, "every field of a mount is in the interface description");
                {
                        static const char *const expected[] = { F_MOUNT_ID, F_TARGET, F_SOURCE, F_FSTYPE, F_ROOT,
                                                                F_DEVICE, F_ATIME, F_NODIRATIME, F_LAZYTIME,
                                                                F_READ_ONLY, F_OPTIONS, F_SUPER_OPTIONS, F_PROBE,
                                                                F_ACTIVITY, F_STALLED };
                        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                                if (!json_object_object_get_ex(first, expected[i], NULL)) {
                                        none_missing = false;
                                        printf("# field %s missing\n", expected[i]);
                                }
                }
                ok(none_missing, "every field the client reads is produced");
                ok(json_object_get_int(json_object_object_get(p, F_SCHEMA_VERSION)) == ATIMED_SCHEMA_VERSION,
                   "schema version");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, "{\"target\":\"/srv/strict\"}");
                json_object *mounts = json_object_object_get(json_object_object_get(r, VL_PARAMETERS), F_MOUNTS);
                json_object *e = json_object_array_get_idx(mounts, 0);

                ok(json_object_array_length(mounts) == 1 &&
                           streq(json_object_get_string(json_object_object_get(e, F_ATIME)), ATIME_STRICT_NAME),
                   "GetStatus for one target");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, "{\"target\":\"/nope\"}");
                is_str(error_of(r), ERROR_NO_SUCH_MOUNT, "unknown target");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, "{\"target\":5}");
                is_str(error_of(r), ERROR_INVALID_PARAMETER, "target of the wrong type");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_STATUS, "{\"bogus\":true}");
                is_str(error_of(r), ERROR_INVALID_PARAMETER, "an extra parameter");
                is_str(json_object_get_string(json_object_object_get(json_object_object_get(r, VL_PARAMETERS), P_PARAMETER)),
                       "bogus", "the error names the parameter");
        }
        {
                _cleanup_json_ json_object *r = call(m, "io.atimed.Nope", NULL);
                is_str(error_of(r), ERROR_METHOD_NOT_FOUND, "unknown method");
        }
        {
                _cleanup_json_ json_object *r = call(m, "com.example.Thing", NULL);
                is_str(error_of(r), ERROR_INTERFACE_NOT_FOUND, "unknown interface");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_PROBE, "{\"target\":\"/srv/strict\"}");
                is_str(error_of(r), ERROR_PERMISSION_DENIED, "Probe is refused to an unprivileged uid");
        }
        {
                _cleanup_json_ json_object *r = call_as(m, 0, METHOD_PROBE, "{\"target\":\"/nope\"}");
                is_str(error_of(r), ERROR_NO_SUCH_MOUNT, "Probe of an unknown mount, as root");
        }
        {
                _cleanup_json_ json_object *r = call_as(m, 0, METHOD_PROBE, "{}");
                is_str(error_of(r), ERROR_INVALID_PARAMETER, "Probe without a target");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_INFO, NULL);
                json_object *ifs = json_object_object_get(json_object_object_get(r, VL_PARAMETERS), F_INTERFACES);
                ok(!error_of(r) && json_object_array_length(ifs) == 2, "GetInfo lists two interfaces");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_INTERFACE_DESCRIPTION, "{\"interface\":\"io.atimed\"}");
                const char *d = json_object_get_string(
                        json_object_object_get(json_object_object_get(r, VL_PARAMETERS), F_DESCRIPTION));
                ok(d && strstr(d, "interface io.atimed\n"), "GetInterfaceDescription serves io.atimed");
        }
        {
                _cleanup_json_ json_object *r = call(m, METHOD_GET_INTERFACE_DESCRIPTION, "{\"interface\":\"x.y\"}");
                is_str(error_of(r), ERROR_INTERFACE_NOT_FOUND, "description of an unknown interface");
        }
        {
                /* GetStatus of everything is served from its serialized text until
                 * methods_changed() says something it shows changed. */
                _cleanup_(status_counters_freep) StatusCounters *mine = NULL;
                _cleanup_json_ json_object *a = NULL, *b = NULL, *c = NULL;
                json_object *x = NULL;

                /* The cache also turns with the second (uptime_s): try again if
                 * the two calls straddled one. */
                for (int try = 0; try < 3; try++) {
                        json_object_put(a);
                        json_object_put(b);
                        status_counters_free(mine);
                        if (status_counters_new(&mine) < 0)
                                break;
                        v.counters = mine;
                        methods_changed(m);
                        a = call(m, METHOD_GET_STATUS, NULL);
                        for (int i = 0; i < 7; i++)
                                status_counters_advice_changed(mine);
                        b = call(m, METHOD_GET_STATUS, "{}");
                        if (json_object_object_get_ex(json_object_object_get(b, VL_PARAMETERS), F_ADVICE_CHANGES, &x) &&
                            json_object_get_int64(x) == 0)
                                break;
                }
                ok(x && json_object_get_int64(x) == 0,
                   "a second GetStatus is the cached text (a change nobody announced does not show)");
                methods_changed(m);
                c = call(m, METHOD_GET_STATUS, NULL);
                ok(json_object_object_get_ex(json_object_object_get(c, VL_PARAMETERS), F_ADVICE_CHANGES, &x) &&
                           json_object_get_int64(x) == 7,
                   "once methods_changed() is called, GetStatus is built afresh");
                ok(a && json_object_array_length(json_object_object_get(json_object_object_get(c, VL_PARAMETERS), F_MOUNTS)) == 11,
                   "and lists the eleven mounts as before");
                v.counters = counters;
                methods_changed(m);
        }
        {
                /* NoSuchMount says why a mount that is there is left out,
                 * from the table the view shows (its text as last read). */
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_(methods_freep) Methods *with = NULL;
                View vc = v;
                json_object *p;

                ok(config_new(&c) == 0 && methods_new(&vc, &with) == 0, "a default configuration");
                vc.config = c;
                {
                        _cleanup_json_ json_object *r = call(with, METHOD_GET_STATUS, "{\"target\":\"/proc\"}");

                        p = json_object_object_get(r, VL_PARAMETERS);
                        is_str(error_of(r), ERROR_NO_SUCH_MOUNT, "/proc is not tracked");
                        ok(p && strstr(json_object_get_string(json_object_object_get(p, P_REASON)) ?: "", "pseudo filesystem"),
                           "and NoSuchMount says why: %s", json_object_get_string(json_object_object_get(p, P_REASON)));
                }
                {
                        _cleanup_json_ json_object *r =
                                call(with, METHOD_GET_RECOMMENDATIONS, "{\"target\":\"/sys/fs/cgroup\"}");

                        p = json_object_object_get(r, VL_PARAMETERS);
                        ok(p && strstr(json_object_get_string(json_object_object_get(p, P_REASON)) ?: "", "(cgroup2)"),
                           "GetRecommendations says it too: %s",
                           json_object_get_string(json_object_object_get(p, P_REASON)));
                }
                {
                        /* A name that is not UTF-8 (in its protocol form in
                         * the request) is echoed in that form: the reply is
                         * valid JSON, and names the mount asked for. */
                        _cleanup_json_ json_object *r = call(with, METHOD_GET_HISTORY, "{\"target\":\"/no\\\\xffpe\"}");

                        p = json_object_object_get(r, VL_PARAMETERS);
                        is_str(error_of(r), ERROR_NO_SUCH_MOUNT, "GetHistory of a mount with a name not UTF-8: NoSuchMount");
                        is_str(json_object_get_string(json_object_object_get(p, F_TARGET)), "/no\\xffpe",
                               "echoing the name in its protocol form");
                }
                {
                        _cleanup_json_ json_object *r = call(with, METHOD_GET_STATUS, "{\"target\":\"/nope\"}");

                        p = json_object_object_get(r, VL_PARAMETERS);
                        ok(error_of(r) && !json_object_object_get_ex(p, P_REASON, NULL),
                           "nothing mounted there: NoSuchMount without a reason");
                }
        }
        test_with_tracker_and_store();
        return tap_done();
}
