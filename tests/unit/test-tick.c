/* test-tick: the tick pass (tick.h) over a view of the mountinfo fixture,
 * no Manager: a mount's first samples held until it has been seen at two
 * ticks, then recorded in order; a measured interval's updates in the
 * counters and its sample in the history; advice settled silently first,
 * then a change announced once it has held three ticks, counted, and
 * visible in the very next GetStatus through methods_changed(). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tap.h"
#include "loop-wait.h"
#include "methods.h"
#include "protocol.h"
#include "tick.h"
#include "varlink.h"
#include "view-fixture.h"

struct hooks_seen {
        unsigned changed, passes;
        Methods *methods; /* told of changes, as the manager does */
};

static void on_changed(void *userdata) {
        struct hooks_seen *h = userdata;

        h->changed++;
        methods_changed(h->methods);
}

static void on_pass_done(void *userdata) {
        ((struct hooks_seen *) userdata)->passes++;
}

/* One tick at 'at', its pass run to the end on the loop. */
static bool run_tick(Tick *t, sd_event *e, struct hooks_seen *h, int64_t at) {
        unsigned before = h->passes;

        tick_begin(t, at);
        RUN_LOOP_UNTIL(e, h->passes != before);
        return h->passes == before + 1 && !tick_active(t);
}

static const MountHistory *history_at(ViewFixture *f, const char *target) {
        const MountEntry *e = mount_table_find_target(f->mounts, target);
        const TrackedMount *tm = e ? tracker_find(f->tracker, e->id) : NULL;
        const char *key = tm ? tracker_mount_key(tm) : NULL;

        return key ? store_find(f->store, key) : NULL;
}

/* GetStatus of everything, as a monitor polls it: its advice_changes and
 * uptime_s. */
static bool status_of(Methods *m, int64_t *ret_changes, int64_t *ret_uptime) {
        ControlPeer peer = { .pid = 1, .uid = 1000, .gid = 1000 };
        _cleanup_(control_call_unrefp) ControlCall *c = NULL;
        _cleanup_json_ json_object *reply = NULL, *parsed = NULL;
        _cleanup_free_ char *buf = NULL;
        json_object *p;
        size_t len;

        if (control_call_new_detached(&peer, &c) < 0 || methods_dispatch(m, c, METHOD_GET_STATUS, NULL, &reply) != 0 ||
            varlink_serialize(reply, &buf, &len) < 0 || varlink_parse(buf, len - 1, &parsed) < 0)
                return false;
        p = json_object_object_get(parsed, VL_PARAMETERS);
        *ret_changes = json_object_get_int64(json_object_object_get(p, F_ADVICE_CHANGES));
        *ret_uptime = json_object_get_int64(json_object_object_get(p, F_UPTIME_S));
        return true;
}

int main(void) {
        _cleanup_(methods_freep) Methods *methods = NULL, *unwired = NULL;
        _cleanup_(consumers_freep) Consumers *consumers = NULL;
        struct hooks_seen h = {};
        ViewFixture f;
        Tick *t = NULL;
        int64_t now = (int64_t) time(NULL) - 600, changes, uptime, changes2, uptime2;
        const MountEntry *ndir;
        const TrackedMount *tm;
        unsigned ticks = 0;

        ok(view_fixture_setup(&f, false) == 0 && methods_new(&f.view, &methods) == 0 &&
                   methods_new(&f.view, &unwired) == 0,
           "a view of the fixture, its methods");
        h.methods = methods;
        ok(tick_new(f.event, &f.view, f.store, NULL,
                    &(TickHooks) { .changed = on_changed, .pass_done = on_pass_done, .userdata = &h }, &t) == 0,
           "a tick pass over it");
        f.view.counters = tick_counters(t);
        ok(tick_set_table(t, f.mounts) == 0, "the pass takes the table");

        /* History: held for a new mount's first tick, recorded from its second. */
        ok(run_tick(t, f.event, &h, now + 60 * ticks++), "a first tick's pass runs to the end");
        ok(!history_at(&f, "/srv/ndir"), "a mount seen at one tick has no history yet");
        ok(run_tick(t, f.event, &h, now + 60 * ticks++), "a second tick");
        ok(history_at(&f, "/srv/ndir") != NULL, "seen at two ticks: its samples are recorded");
        ok(!tick_history_refused(t, mount_table_find_target(f.mounts, "/srv/ndir")->id), "and none was refused");

        /* A measured interval: its updates counted, its sample recorded. */
        ndir = mount_table_find_target(f.mounts, "/srv/ndir");
        tm = tracker_find(f.tracker, ndir->id);
        ok(tm != NULL, "the tracker has /srv/ndir");
        if (tm) {
                struct activity a = { .have = true,
                                      .updates = { .per_min = 120, .lo = 100, .hi = 140 },
                                      .seconds = 30,
                                      .at = (uint64_t) (now + 60 * ticks) * USEC_PER_SEC };
                double before = status_counters_get(tick_counters(t), "/srv/ndir");

                tick_activity(t, tm, &a);
                ok(status_counters_get(tick_counters(t), "/srv/ndir") - before == 60,
                   "an interval of 120 updates/min over 30 s adds 60 to the mount's counter");
        }

        /* Advice: the first settles silently after three ticks. */
        ok(run_tick(t, f.event, &h, now + 60 * ticks++) && run_tick(t, f.event, &h, now + 60 * ticks++),
           "two ticks more");
        is_int(h.changed, 0, "the first advice of every mount settles silently");
        is_int(status_counters_advice_changes(tick_counters(t)), 0, "no advice change counted");

        /* A consumer that needs strictatime appears on /srv/strict: its advice
         * turns from relatime to keeping strictatime. */
        ok(consumers_new(&consumers) == 0 &&
                   consumers_add(consumers, CONSUMER_MAIL, NEED_STRICT, "/srv/strict/mail",
                                 "a mail reader that needs every read's atime", "test") == 0,
           "a consumer that needs strictatime, on /srv/strict");
        f.view.consumers = consumers;
        tick_restart(t);
        methods_changed(methods);
        methods_changed(unwired);
        ok(run_tick(t, f.event, &h, now + 60 * ticks++) && run_tick(t, f.event, &h, now + 60 * ticks++),
           "two ticks with the new advice");
        is_int(h.changed, 0, "not announced before it has held three ticks");
        ok(status_of(methods, &changes, &uptime) && changes == 0 && status_of(unwired, &changes2, &uptime2) && changes2 == 0,
           "GetStatus says 0 advice changes (and is cached now)");
        ok(run_tick(t, f.event, &h, now + 60 * ticks++), "the third tick");
        is_int(h.changed, 1, "the change is announced once, and the methods told");
        is_int(status_counters_advice_changes(tick_counters(t)), 1, "and counted");
        ok(status_of(methods, &changes, &uptime) && changes == 1, "the very next GetStatus shows it: 1 advice change");
        {
                /* Without the call the cached text would still say 0, unless
                 * the second of uptime_s turned meanwhile. */
                int64_t c3 = -1, u3 = -1;

                ok(status_of(unwired, &c3, &u3) && (c3 == 0 || u3 != uptime2),
                   "methods nobody told still serve the cached 0 (uptime %lld then %lld)", (long long) uptime2,
                   (long long) u3);
        }
        ok(run_tick(t, f.event, &h, now + 60 * ticks++), "a tick more");
        is_int(h.changed, 1, "advice that holds is not announced again");

        /* The way out: a pass out is finished, none starts its export. */
        tick_begin(t, now + 60 * ticks++);
        ok(tick_active(t), "a pass is out");
        tick_stop(t);
        ok(!tick_active(t), "tick_stop() finishes it now");

        tick_free(t);
        view_fixture_done(&f);
        return tap_done();
}
