/* view-fixture.c: a View for unit tests (see view-fixture.h). */
#include "view-fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "time-util.h"

static int fixture_probe(void *userdata, int mount_id, tracker_probe_cb cb, void *cb_userdata) {
        ViewFixture *f = userdata;

        return tracker_probe_now(f->tracker, mount_id, cb, cb_userdata);
}

int view_fixture_setup(ViewFixture *f, bool with_pool) {
        struct mount_filter all = {};
        char path[4096];
        int r;

        *f = (ViewFixture) {};
        snprintf(f->dir, sizeof f->dir, "/tmp/test-view-XXXXXX");
        snprintf(path, sizeof path, "%s/tests/fixtures/mountinfo-basic", getenv("top_srcdir") ?: ".");
        if (!mkdtemp(f->dir)) {
                f->dir[0] = 0;
                return -errno;
        }
        r = mount_table_load(path, &all, &f->mounts);
        if (r >= 0)
                r = config_new(&f->config);
        /* No device known: every filesystem is named by its source at once,
         * whatever loop devices this machine has. */
        if (r >= 0)
                r = config_set_string(&f->config->sysfs_path, f->dir);
        if (r >= 0)
                r = sd_event_new(&f->event);
        if (r >= 0 && with_pool)
                r = worker_pool_new(f->event, 1, &f->pool);
        if (r >= 0)
                r = tracker_new(f->event, f->pool, f->config, &f->tracker);
        if (r >= 0 && !with_pool)
                tracker_shutdown(f->tracker); /* no jobs: nothing measured but history */
        if (r >= 0)
                r = tracker_update(f->tracker, f->mounts);
        if (r >= 0)
                r = store_new(f->dir, f->config->rings.spec, f->config->rings.n, f->config->max_histories, &f->store);
        if (r >= 0)
                r = status_counters_new(&f->counters);
        if (r < 0)
                return r;
        f->view = (View) {
                .config = f->config,
                .mounts = f->mounts,
                .tracker = f->tracker,
                .store = f->store,
                .counters = f->counters,
                .privileged_gid = (gid_t) -1,
                .started_realtime = now_usec(CLOCK_REALTIME),
                .started_monotonic = now_usec(CLOCK_MONOTONIC),
                .ops = { .probe = fixture_probe, .userdata = f },
        };
        return 0;
}

void view_fixture_done(ViewFixture *f) {
        char path[128];

        tracker_shutdown(f->tracker);
        f->pool = worker_pool_free(f->pool);
        f->tracker = tracker_free(f->tracker);
        f->store = store_free(f->store);
        f->counters = status_counters_free(f->counters);
        f->event = sd_event_unref(f->event);
        f->mounts = mount_table_free(f->mounts);
        f->config = config_free(f->config);
        if (f->dir[0]) {
                snprintf(path, sizeof path, "%s/%s", f->dir, STORE_FILE);
                (void) unlink(path);
                snprintf(path, sizeof path, "%s/%s", f->dir, STORE_JOURNAL);
                (void) unlink(path);
                (void) rmdir(f->dir);
        }
}

/* 'like' (its t set) into the history of the mount at 'target', once per
 * finest bucket over [from, to) seconds ago, under the mount's policy. */
static bool add_samples(ViewFixture *f, const char *target, int64_t from, int64_t to, struct stats_sample like) {
        const MountEntry *e = mount_table_find_target(f->mounts, target);
        const TrackedMount *tm = e ? tracker_find(f->tracker, e->id) : NULL;
        const char *key = tm ? tracker_mount_key(tm) : NULL;
        int64_t now = (int64_t) time(NULL), res = f->config->rings.spec[0].resolution;

        if (!key)
                return false;
        like.has_policy = true;
        like.atime = (uint8_t) e->policy.atime;
        for (int64_t t = now - from; t < now - to; t += res) {
                like.t = t;
                if (store_add(f->store, key, &like) < 0)
                        return false;
        }
        return true;
}

bool view_fixture_add_history(ViewFixture *f, const char *target, float per_min) {
        return add_samples(f, target, 3600, 0,
                           (struct stats_sample) { .has_activity = true, .per_min = per_min, .lo = per_min * 0.9f,
                                                   .hi = per_min * 1.1f });
}

bool view_fixture_add_unshared(ViewFixture *f, const char *target, int64_t from, int64_t to, float per_day, float hi,
                               bool modelled) {
        return add_samples(f, target, from, to,
                           (struct stats_sample) { .has_unshared = true, .unshared_modelled = modelled,
                                                   .unshared_per_day = per_day, .unshared_lo = modelled ? 0 : per_day,
                                                   .unshared_hi = hi });
}
