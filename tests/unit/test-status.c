/* test-status: the status and export builders over a view of the mountinfo
 * fixture, no Manager: the Report of every mount with its advice, or of one
 * target; the daemon's figures and counters from the view; the same built a
 * mount at a time; and the Prometheus textfile written from it by the
 * exporter's worker. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tap.h"
#include "loop-wait.h"
#include "export.h"
#include "fileio.h"
#include "status.h"
#include "view-fixture.h"

static const ReportMount *mount_of(const Report *r, const char *target) {
        for (size_t i = 0; i < r->n_mounts; i++)
                if (streq(r->mounts[i].target, target))
                        return &r->mounts[i];
        return NULL;
}

static void test_report(ViewFixture *f) {
        _cleanup_(report_freep) Report *all = NULL, *one = NULL, *piecewise = NULL;
        const ReportMount *rm;
        bool every_advised = true;

        ok(status_report(&f->view, NULL, true, &all) == 0, "a report of the view");
        is_int(all->n_mounts, f->mounts->n, "one mount per entry of the table");
        ok(all->have_advice, "with advice");
        for (size_t i = 0; i < all->n_mounts; i++)
                every_advised &= all->mounts[i].advice.have;
        ok(every_advised, "every tracked mount has its advice");
        is_int(all->advice_changes, 3, "the advice changes counted, from the view's counters");
        ok(all->started_at == (int64_t) (f->view.started_realtime / USEC_PER_SEC) && all->uptime_s >= 0,
           "started_at and uptime_s from the view");
        rm = mount_of(all, "/srv/ndir");
        ok(rm && rm->atime_updates_total == 90, "the counter of /srv/ndir: 90 updates");
        ok(rm && rm->advice.have && rm->advice.saving_updates_per_min > 0,
           "its advice rests on its history (saves %.0f updates/min)", rm ? rm->advice.saving_updates_per_min : -1);
        rm = mount_of(all, "/srv/with space");
        ok(rm != NULL, "names as the protocol writes them (escape.h): %s", rm ? rm->target : "(none)");

        ok(status_report(&f->view, "/srv/ndir", false, &one) == 0 && one->n_mounts == 1 && !one->have_advice &&
                   !one->mounts[0].advice.have,
           "one target, without advice");
        {
                Report *none = NULL;

                is_int(status_report(&f->view, "/nope", false, &none), -ENOENT, "a target not in the table: -ENOENT");
                ok(!none, "and no report");
        }

        ok(status_report_begin(&f->view, false, f->mounts->n, &piecewise) == 0, "a report begun");
        for (size_t i = 0; i < f->mounts->n; i++) {
                const MountEntry *e = &f->mounts->entries[i];

                if (status_report_add(&f->view, piecewise, e, tracker_find(f->view.tracker, e->id), NULL) < 0)
                        break;
        }
        is_int(piecewise->n_mounts, all->n_mounts, "built a mount at a time: the same mounts");
        ok(piecewise->n_mounts > 0 && streq(piecewise->mounts[0].target, all->mounts[0].target),
           "in the same order");
}

static void test_export(ViewFixture *f) {
        _cleanup_(report_freep) Report *rep = NULL;
        _cleanup_free_ char *text = NULL;
        Exporter *x = NULL;
        ExportTiming timing = {};
        char path[128];
        size_t len = 0;

        snprintf(path, sizeof path, "%s/atimed.prom", f->dir);
        ok(exporter_new(f->pool, &x) == 0, "an exporter on the pool");
        ok(status_report(&f->view, NULL, true, &rep) == 0, "a report with advice");
        ok(exporter_submit(x, TAKE_PTR(rep), &timing, path, 0644, 5 * USEC_PER_SEC) == 0, "submitted");
        RUN_LOOP_UNTIL(f->event, !exporter_busy(x));
        ok(!exporter_busy(x), "written by the worker");
        ok(read_full_file(path, 1 << 20, &text, &len) == 0, "the textfile is there");
        ok(text && strstr(text, "atimed_atime_updates_total{") && strstr(text, "mountpoint=\"/srv/ndir\""),
           "with a counter per mount point");
        ok(text && strstr(text, "atimed_build_info"), "and the daemon's figures");
        exporter_free(x);
        (void) unlink(path);
}

int main(void) {
        ViewFixture f;

        ok(view_fixture_setup(&f, true) == 0, "a view of the fixture with a tracker, a store and counters");
        ok(view_fixture_add_history(&f, "/srv/ndir", 5000), "an hour of history on /srv/ndir");
        ok(status_counters_add(f.counters, "/srv/ndir", 90) == 0, "90 updates counted there");
        for (int i = 0; i < 3; i++)
                status_counters_advice_changed(f.counters);
        test_report(&f);
        test_export(&f);
        view_fixture_done(&f);
        return tap_done();
}
