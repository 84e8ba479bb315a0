/* test-recommend: each mount's advice as recommend() assembles it from a
 * real tracker on the mountinfo fixture, a real store holding history and
 * a consumer found on a mount: one per tracked mount in table order, a
 * target alone, the history's mean over the window, a consumer's need. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "recommend.h"

static const struct recommendation *find(const struct recommendation *v, size_t n, const char *target) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].in.target, target))
                        return &v[i];
        return NULL;
}

/* Samples of 'per_min' atime updates a minute, one per ring bucket over
 * the last hour, in the history of the mount at 'target'. */
static bool add_history(Manager *m, const char *target, float per_min) {
        const MountEntry *e = mount_table_find_target(m->mounts, target);
        const TrackedMount *tm = e ? tracker_find(m->tracker, e->id) : NULL;
        const char *key = tm ? tracker_mount_key(tm) : NULL;
        int64_t now = (int64_t) time(NULL), res = m->config->rings.spec[0].resolution;

        if (!key)
                return false;
        for (int64_t t = now - 3600; t < now; t += res) {
                struct stats_sample s = { .t = t, .has_activity = true, .per_min = per_min, .lo = per_min * 0.9f,
                                          .hi = per_min * 1.1f, .has_policy = true, .atime = (uint8_t) e->policy.atime };

                if (store_add(m->store, key, &s) < 0)
                        return false;
        }
        return true;
}

int main(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ struct recommendation *v = NULL;
        struct consumer spool = { .kind = CONSUMER_MAIL,
                                  .need = NEED_RELATIME,
                                  .path = (char[]) { "/srv/lazy/mail" },
                                  .why = (char[]) { "mbox files: mail readers tell new mail by atime" },
                                  .source = (char[]) { "test" } };
        Consumers consumers = { .v = &spool, .n = 1 };
        struct mount_filter def = {};
        char path[4096], dir[] = "/tmp/test-recommend-XXXXXX";
        Manager m = { .privileged_gid = (gid_t) -1 };
        const struct recommendation *r;
        size_t n = 0;
        int r_all;

        snprintf(path, sizeof path, "%s/tests/fixtures/mountinfo-basic", getenv("top_srcdir") ?: ".");
        ok(mount_table_load(path, &def, &m.mounts) == 0 && config_new(&c) == 0 && mkdtemp(dir) &&
                   sd_event_new(&e) >= 0 && tracker_new(e, NULL, c, &m.tracker) >= 0 &&
                   store_new(dir, c->rings.spec, c->rings.n, c->max_histories, &m.store) >= 0,
           "a manager of the fixture's mounts, its tracker and a store");
        m.config = c;
        m.consumers = &consumers;
        /* No device known: every filesystem is named by its source at once,
         * whatever loop devices this machine has. */
        ok(config_set_string(&c->sysfs_path, dir) == 0, "sysfs taken to be empty");
        tracker_shutdown(m.tracker); /* no jobs: nothing measured but history */
        ok(tracker_update(m.tracker, m.mounts) == 0, "the tracker takes the table");
        ok(add_history(&m, "/srv/ndir", 5000), "an hour of 5000 updates/min on /srv/ndir (strictatime tmpfs)");
        ok(add_history(&m, "/srv/lazy", 5000), "and on /srv/lazy, where a mail spool is");

        r_all = recommend(&m, NULL, &v, &n);
        ok(r_all == 0 && n == m.mounts->n, "one recommendation per tracked mount (%zu)", n);
        ok(n > 0 && streq(v[0].in.target, m.mounts->entries[0].target) && streq(v[n - 1].in.target, m.mounts->entries[n - 1].target),
           "in the table's order");

        r = find(v, n, "/srv/ndir");
        ok(r && r->in.have_activity && r->in.per_min > 4999 && r->in.per_min < 5001,
           "/srv/ndir: the history's mean over the window (%.1f/min)", r ? r->in.per_min : -1);
        ok(r && r->tm && r->tm->id == mount_table_find_target(m.mounts, "/srv/ndir")->id, "and the tracker's mount");
        ok(r && r->advice.atime == ATIME_NOATIME && r->advice.change, "busy, nothing reads atime: noatime (%s)",
           r ? r->advice.action : "?");

        r = find(v, n, "/srv/lazy");
        ok(r && r->n_consumers == 1 && r->consumers[0] == &spool && r->in.need == NEED_RELATIME,
           "/srv/lazy: the mail spool on it is found, with its need");
        ok(r && r->advice.atime != ATIME_NOATIME, "and noatime is not advised there (%s)", r ? r->advice.action : "?");

        r = find(v, n, "/srv/strict");
        ok(r && !r->in.have_activity, "/srv/strict: no history, nothing measured");
        r = find(v, n, "/srv/ro");
        ok(r && !r->advice.change, "/srv/ro: read-only, kept as it is");

        free(v);
        v = NULL;
        ok(recommend(&m, "/srv/ndir", &v, &n) == 0 && n == 1 && streq(v[0].in.target, "/srv/ndir"),
           "one target alone");
        free(v);
        v = NULL;
        ok(recommend(&m, "/nope", &v, &n) == -ENOENT && !v, "a target not tracked: -ENOENT");

        m.tracker = tracker_free(m.tracker);
        store_free(m.store);
        mount_table_free(m.mounts);
        snprintf(path, sizeof path, "%s/%s", dir, STORE_FILE);
        (void) unlink(path);
        (void) rmdir(dir);
        return tap_done();
}
