/* test-recommend: each mount's advice as recommend() assembles it from a
 * real tracker on the mountinfo fixture, a real store holding history and
 * a consumer found on a mount, through a view (no Manager): one per
 * tracked mount in table order, a
 * target alone, the history's mean over the window, a consumer's need. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "config.h"
#include "recommend.h"
#include "strv.h"
#include "view-fixture.h"

static const struct recommendation *find(const struct recommendation *v, size_t n, const char *target) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].in.target, target))
                        return &v[i];
        return NULL;
}

/* The advice's word on where the bytes came from: "(modelled)" only where a
 * modelled interval gave the mean bytes. A modelled 0 (an impure interval
 * with no inode written since the snapshot) with every byte measured is
 * "measured", as GetHistory's btrfs says. */
static void test_unshared_label(ViewFixture *f) {
        const MountEntry *e = mount_table_find_target(f->mounts, "/srv/strict");
        const TrackedMount *tm = e ? tracker_find(f->tracker, e->id) : NULL;
        const MountHistory *h;
        struct advisor_input in = { .policy = e ? e->policy : (struct mount_policy) {} };
        int64_t now = (int64_t) time(NULL);

        ok(view_fixture_add_unshared(f, "/srv/strict", 3600, 1800, 1e9f, 1e9f, false) &&
                   view_fixture_add_unshared(f, "/srv/strict", 1800, 0, 0, 0, true),
           "/srv/strict: half an hour of measured bytes, then modelled intervals of none");
        h = tm ? store_find(f->store, tracker_mount_key(tm)) : NULL;
        recommend_summarise_unshared(h, now, 3600, 60, &in);
        ok(h && in.have_unshared && in.unshared_per_day > 0 && streq(in.unshared_source, "measured"),
           "every byte measured, a modelled 0 beside: said measured (%s)", in.unshared_source ? in.unshared_source : "-");

        ok(view_fixture_add_unshared(f, "/srv/sbro", 3600, 1800, 1e9f, 1e9f, false) &&
                   view_fixture_add_unshared(f, "/srv/sbro", 1800, 0, 1e9f, 4e9f, true),
           "/srv/sbro: measured bytes, then modelled ones");
        e = mount_table_find_target(f->mounts, "/srv/sbro");
        tm = e ? tracker_find(f->tracker, e->id) : NULL;
        h = tm ? store_find(f->store, tracker_mount_key(tm)) : NULL;
        in = (struct advisor_input) { .policy = e ? e->policy : (struct mount_policy) {} };
        recommend_summarise_unshared(h, now, 3600, 60, &in);
        ok(h && in.have_unshared && streq(in.unshared_source, "partly modelled"), "half of them modelled: partly modelled (%s)",
           in.unshared_source ? in.unshared_source : "-");
        in = (struct advisor_input) { .policy = e ? e->policy : (struct mount_policy) {} };
        recommend_summarise_unshared(h, now, 1500, 60, &in);
        ok(h && in.have_unshared && streq(in.unshared_source, "modelled"), "a window of modelled ones only: modelled (%s)",
           in.unshared_source ? in.unshared_source : "-");
}

int main(void) {
        _cleanup_free_ struct recommendation *v = NULL;
        struct consumer spool = { .kind = CONSUMER_MAIL,
                                  .need = NEED_RELATIME,
                                  .path = (char[]) { "/srv/lazy/mail" },
                                  .why = (char[]) { "mbox files: mail readers tell new mail by atime" },
                                  .source = (char[]) { "test" } };
        Consumers consumers = { .v = &spool, .n = 1 };
        ViewFixture f;
        const View *m = &f.view;
        const struct recommendation *r;
        size_t n = 0;
        int r_all;

        ok(view_fixture_setup(&f, false) == 0, "a view of the fixture's mounts, its tracker and a store");
        f.view.consumers = &consumers;
        ok(view_fixture_add_history(&f, "/srv/ndir", 5000), "an hour of 5000 updates/min on /srv/ndir (strictatime tmpfs)");
        ok(view_fixture_add_history(&f, "/srv/lazy", 5000), "and on /srv/lazy, where a mail spool is");

        r_all = recommend(m, NULL, &v, &n);
        ok(r_all == 0 && n == m->mounts->n, "one recommendation per tracked mount (%zu)", n);
        ok(n > 0 && streq(v[0].in.target, m->mounts->entries[0].target) && streq(v[n - 1].in.target, m->mounts->entries[n - 1].target),
           "in the table's order");

        r = find(v, n, "/srv/ndir");
        ok(r && r->in.have_activity && r->in.per_min > 4999 && r->in.per_min < 5001,
           "/srv/ndir: the history's mean over the window (%.1f/min)", r ? r->in.per_min : -1);
        ok(r && r->tm && r->tm->id == mount_table_find_target(m->mounts, "/srv/ndir")->id, "and the tracker's mount");
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
        ok(recommend(m, "/srv/ndir", &v, &n) == 0 && n == 1 && streq(v[0].in.target, "/srv/ndir"),
           "one target alone");
        free(v);
        v = NULL;
        ok(recommend(m, "/nope", &v, &n) == -ENOENT && !v, "a target not tracked: -ENOENT");

        {
                /* The operator's word on a mount where the scan found a
                 * weaker reader: both listed, the word first, so that a
                 * client's guard sees what rules out relatime too. */
                static const char conf[] = "[mount:/srv/lazy]\nneeds_atime = strict\n";
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_strv_free_ char **errors = NULL;
                const struct config *saved = f.view.config;

                ok(config_load_string("declared.conf", conf, sizeof conf - 1, &c, &errors) == 0, "a configuration declaring strict");
                f.view.config = c;
                free(v);
                v = NULL;
                ok(c && recommend(m, "/srv/lazy", &v, &n) == 0 && n == 1, "/srv/lazy with it");
                r = n == 1 ? &v[0] : NULL;
                ok(r && r->n_consumers == 2 && r->consumers[0]->kind == CONSUMER_CONFIG && r->consumers[1] == &spool,
                   "the declaration listed first, then the spool found");
                ok(r && r->n_consumers == 2 && streq(r->consumers[0]->source, "declared.conf:2") &&
                           r->consumers[0]->need == NEED_STRICT,
                   "with the file:line that declares it, and its need");
                ok(r && r->in.need == NEED_STRICT && r->advice.atime == ATIME_STRICT, "strictatime advised (%s)",
                   r ? r->advice.action : "?");
                f.view.config = saved;
        }

        test_unshared_label(&f);
        view_fixture_done(&f);
        return tap_done();
}
