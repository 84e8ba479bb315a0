/* test-advisor: the advice rules as a table, the saving arithmetic, and
 * the cost table. */
#include <math.h>
#include <string.h>

#include "../tap.h"
#include "advisor.h"

struct row {
        const char *what;
        AtimeMode atime;
        bool lazytime, ro, ignore;
        const char *fstype;
        AtimeNeed need;
        bool measured;
        double per_min, observed_h;
        /* expected */
        AtimeMode want_atime;
        bool want_lazy;
        const char *want_action;
        const char *want_reason; /* a fragment of the first reason */
        AdviceConfidence want_conf;
        double population; /* inodes: 200,000 unless given (then relatime leaves 139/min) */
};

static const struct row rows[] = {
        { "busy strict, no consumer", ATIME_STRICT, false, false, false, "ext4", NEED_NONE, true, 18000, 48,
          ATIME_NOATIME, false, "noatime", "strictatime: 18,000 atime updates/min; nothing here reads atime", CONFIDENCE_HIGH },
        { "busy strict, few inodes", ATIME_STRICT, false, false, false, "ext4", NEED_NONE, true, 15000, 48,
          ATIME_RELATIME, false, "relatime",
          "strictatime: 15,000 atime updates/min; relatime leaves at most 3.5/min (each of 5,000 inodes once a day), "
          "under the threshold for noatime (60/min), and keeps atime for what reads it",
          CONFIDENCE_HIGH, 5000 },
        { "busy strict, 86,399 inodes", ATIME_STRICT, false, false, false, "xfs", NEED_NONE, true, 61, 0.5,
          ATIME_RELATIME, false, "relatime", "relatime leaves at most 60/min", CONFIDENCE_LOW, 86399 },
        { "busy strict, 86,400 inodes", ATIME_STRICT, false, false, false, "xfs", NEED_NONE, true, 61, 0.5,
          ATIME_NOATIME, false, "noatime", "strictatime: 61 atime updates/min; nothing here reads atime", CONFIDENCE_LOW,
          86400 },
        { "quiet strict, no consumer", ATIME_STRICT, false, false, false, "ext4", NEED_NONE, true, 3, 48,
          ATIME_RELATIME, false, "relatime", "strictatime: 3 atime updates/min; nothing needs", CONFIDENCE_HIGH },
        { "strict not measured yet", ATIME_STRICT, false, false, false, "xfs", NEED_NONE, false, 0, 0,
          ATIME_RELATIME, false, "relatime", "nothing here needs every read", CONFIDENCE_HIGH },
        { "quiet relatime", ATIME_RELATIME, false, false, false, "ext4", NEED_NONE, true, 3, 30,
          ATIME_RELATIME, false, "keep", "relatime: 3 atime updates/min, not worth noatime (threshold 60/min)",
          CONFIDENCE_HIGH },
        { "busy relatime, half a day", ATIME_RELATIME, false, false, false, "ext4", NEED_NONE, true, 500, 12,
          ATIME_NOATIME, false, "noatime", "relatime: 500 atime updates/min", CONFIDENCE_MEDIUM },
        { "busy relatime, ten minutes", ATIME_RELATIME, false, false, false, "ext4", NEED_NONE, true, 500, 0.2,
          ATIME_NOATIME, false, "noatime", "relatime: 500", CONFIDENCE_LOW },
        { "noatime", ATIME_NOATIME, false, false, false, "ext4", NEED_NONE, true, 0, 48,
          ATIME_NOATIME, false, "keep", "noatime already", CONFIDENCE_HIGH },
        { "busy strict mail spool", ATIME_STRICT, false, false, false, "ext4", NEED_RELATIME, true, 18000, 48,
          ATIME_RELATIME, false, "relatime", "strictatime: 18,000 atime updates/min; mbox", CONFIDENCE_HIGH },
        { "noatime mail spool", ATIME_NOATIME, false, false, false, "ext4", NEED_RELATIME, true, 0, 48,
          ATIME_RELATIME, false, "relatime", "noatime breaks it: mbox", CONFIDENCE_HIGH },
        { "busy relatime mail spool", ATIME_RELATIME, false, false, false, "ext4", NEED_RELATIME, true, 90000, 48,
          ATIME_RELATIME, false, "keep", "relatime is the least", CONFIDENCE_HIGH },
        { "strict need on ext4", ATIME_STRICT, false, false, false, "ext4", NEED_STRICT, true, 900, 48,
          ATIME_STRICT, true, "lazytime", "mbox", CONFIDENCE_HIGH },
        { "strict need on tmpfs", ATIME_STRICT, false, false, false, "tmpfs", NEED_STRICT, true, 900, 48,
          ATIME_STRICT, false, "keep", "mbox", CONFIDENCE_HIGH },
        { "strict need under relatime", ATIME_RELATIME, false, false, false, "xfs", NEED_STRICT, true, 900, 48,
          ATIME_STRICT, true, "strictatime", "mbox", CONFIDENCE_HIGH },
        { "read-only", ATIME_STRICT, false, true, false, "ext4", NEED_NONE, true, 0, 48,
          ATIME_STRICT, false, "keep", "read-only", CONFIDENCE_HIGH },
        { "ignored", ATIME_STRICT, false, false, true, "ext4", NEED_NONE, true, 99999, 48,
          ATIME_STRICT, false, "keep", "ignored by configuration", CONFIDENCE_HIGH },
};

/* The directories' share of the bytes: their share of the inodes, each
 * weighed by its price (a directory un-shares 1,300 bytes to a file's
 * 537), not the inodes' share alone, which understated nodiratime. */
static void test_dir_bytes_share(void) {
        struct advisor_params q = { .noatime_threshold = 60, .min_saving = 10 };
        struct advisor_input in = { .target = "/srv", .fstype = "btrfs", .policy = { .atime = ATIME_RELATIME },
                                    .need = NEED_RELATIME, .need_why = "tmpfiles ages /srv/tmp by atime",
                                    .have_activity = true, .per_min = 3, .lo_per_min = 2, .hi_per_min = 4,
                                    .observed_s = 2 * 86400, .population = 20000,
                                    .btrfs_shared = true, .have_unshared = true,
                                    .unshared_per_day = 100 * 1048576.0, .unshared_lo = 80 * 1048576.0,
                                    .unshared_hi = 120 * 1048576.0, .unshared_s = 2 * 86400,
                                    .unshared_source = "measured", .snapshot_period_s = 86400, .dir_share = 0.4 };
        struct advice a;
        double w = 0.4 * 1300 / (0.4 * 1300 + 0.6 * 537);

        ok(fabs(advisor_dir_bytes_share(0.5, 537, 1300) - 1300.0 / 1837) < 1e-12,
           "half the inodes directories: %.3f of the bytes", advisor_dir_bytes_share(0.5, 537, 1300));
        ok(advisor_dir_bytes_share(0, 537, 1300) == 0 && advisor_dir_bytes_share(1, 537, 1300) == 1 &&
                   advisor_dir_bytes_share(-1, 537, 1300) == 0 && advisor_dir_bytes_share(2, 537, 1300) == 1,
           "none or all directories: 0 or all of the bytes");
        ok(advisor_dir_bytes_share(0.4, 0, 1300) == 0.4 && advisor_dir_bytes_share(0.4, 537, 0) == 0.4 &&
                   advisor_dir_bytes_share(0.4, NAN, 1300) == 0.4,
           "a price unknown: the inodes' share");
        /* 40% of the inodes are 62% of the bytes: directories are the
         * cost, and a reader of files' atime gets nodiratime for them. */
        advisor_advise(&in, &q, &a);
        ok(a.nodiratime && streq(a.action, "nodiratime") && fabs(a.saving_bytes_per_day - w * in.unshared_per_day) < 1,
           "directories 40%% of the inodes: %.0f%% of the bytes, nodiratime saves them (%s, %.0f bytes a day)",
           100 * w, a.action, a.saving_bytes_per_day);
        const char *r = NULL;

        for (unsigned i = 0; i < a.n_reasons && !r; i++)
                if (strstr(a.reasons[i], "nodiratime saves"))
                        r = a.reasons[i];
        ok(r && strstr(r, "40% of the inodes") && strstr(r, "62% of the bytes") && strstr(r, "62 MiB/day"),
           "its reason says both shares, and the bytes at their price ('%s')", r ? r : "none");
        /* Cost table overrides give the prices. */
        struct atime_cost same = { .fstype = "btrfs", .usec = 2, .kib = 0.5, .lazy_usec = 2, .again_usec = 1,
                                   .unshare_bytes = 1000, .unshare_dir_bytes = 1000 };
        q.costs = &same;
        q.n_costs = 1;
        advisor_advise(&in, &q, &a);
        ok(!streq(a.action, "nodiratime"), "priced alike by the table: 40%% of the bytes, not the cost (%s)", a.action);
}

/* btrfs with snapshots: the space atime un-shares is a reason of its own. */
static void test_space(void) {
        struct advisor_params q = { .noatime_threshold = 60, .min_saving = 10 };
        /* The host: relatime, 31,800 updates/min at first, then a
         * quiet hour: 3 updates/min, under the threshold and min_saving. */
        struct advisor_input in = { .target = "/srv", .fstype = "btrfs", .policy = { .atime = ATIME_RELATIME },
                                    .have_activity = true, .per_min = 3, .lo_per_min = 2, .hi_per_min = 4,
                                    .observed_s = 2 * 86400, .population = 20000,
                                    .btrfs_shared = true, .have_unshared = true,
                                    .unshared_per_day = 1.2 * 1073741824.0, .unshared_lo = 1.0 * 1073741824.0,
                                    .unshared_hi = 1.5 * 1073741824.0, .unshared_s = 2 * 86400,
                                    .unshared_source = "measured", .snapshot_period_s = 86400 };
        struct advice a;

        advisor_advise(&in, &q, &a);
        ok(a.atime == ATIME_NOATIME && a.change && a.space && a.basis == BASIS_MEASUREMENT &&
                   a.confidence == CONFIDENCE_HIGH,
           "relatime on a snapshotted btrfs, nothing reading atime: noatime, for the space, though few updates");
        ok(strstr(a.reasons[0], "1.2 GiB/day (measured, 1.0 GiB-1.5 GiB), 1.2 GiB per snapshot period (1d)") != NULL,
           "the reason in human units, per day and per snapshot period ('%s')", a.reasons[0]);
        ok(fabs(a.saving_bytes_per_day - in.unshared_per_day) < 1e-3, "the saving in bytes a day");
        in.dir_share = 0.8;
        advisor_advise(&in, &q, &a);
        ok(a.n_reasons >= 2 && strstr(a.reasons[1], "nodiratime alone"), "directories the cost: nodiratime said");
        /* Directories nearly all of it: the files' share under a MiB a
         * day. nodiratime is the action, files keep their atime. */
        in.dir_share = 0.9999;
        advisor_advise(&in, &q, &a);
        {
                char opts[64];

                ok(a.nodiratime && a.atime == ATIME_RELATIME && a.change && a.space && streq(a.action, "nodiratime") &&
                           streq(advice_options(&a, opts, sizeof opts), "relatime,nodiratime"),
                   "directories the cost, the files' share under a MiB a day: relatime,nodiratime (%s, %s)", a.action,
                   opts);
        }
        ok(fabs(a.saving_bytes_per_day - advisor_dir_bytes_share(0.9999, 537, 1300) * in.unshared_per_day) < 1 &&
                   a.n_reasons >= 2 &&
                   strstr(a.reasons[0], "directories are 100% of the inodes") &&
                   strstr(a.reasons[0], "1.2 GiB/day (measured, 1.0 GiB-1.5 GiB)") &&
                   strstr(a.reasons[1], "nodiratime keeps it on files"),
           "its saving, the directories' share, in bytes a day and as its reason ('%s' '%s')", a.reasons[0],
           a.reasons[1]);
        in.need = NEED_RELATIME;
        in.need_why = "tmpfiles ages /srv/tmp by atime";
        in.dir_share = 0.8;
        advisor_advise(&in, &q, &a);
        ok(a.nodiratime && a.atime == ATIME_RELATIME && streq(a.action, "nodiratime") &&
                   fabs(a.saving_bytes_per_day - advisor_dir_bytes_share(0.8, 537, 1300) * in.unshared_per_day) < 1 &&
                   strstr(a.reasons[a.n_reasons - 1], "tmpfiles ages /srv/tmp by atime: nodiratime keeps it on files"),
           "a reader of files' atime, directories 80%%: relatime kept, nodiratime for the directories ('%s')",
           a.reasons[a.n_reasons - 1]);
        in.need = NEED_STRICT;
        advisor_advise(&in, &q, &a);
        ok(!a.nodiratime && !streq(a.action, "nodiratime"), "one that needs every read: no nodiratime");
        in.need = NEED_NONE;
        in.need_why = NULL;
        in.dir_share = 0.9999;
        in.policy.nodiratime = true;
        advisor_advise(&in, &q, &a);
        ok(a.atime == ATIME_NOATIME && !a.nodiratime && streq(a.action, "noatime"),
           "nodiratime already: noatime for what the files un-share (%s)", a.action);
        in.policy.nodiratime = false;
        {
                /* A noatime mount's nodiratime is the one noatime implies:
                 * advice away from noatime does not keep it. */
                struct advisor_input m = { .target = "/var/mail", .fstype = "tmpfs",
                                           .policy = { .atime = ATIME_NOATIME, .nodiratime = true },
                                           .need = NEED_RELATIME, .need_why = "mbox files" };
                struct advice b;

                advisor_advise(&m, &q, &b);
                ok(b.atime == ATIME_RELATIME && !b.nodiratime, "noatime (nodiratime implied) to relatime: no nodiratime");
        }
        in.dir_share = 0;
        in.unshared_lo = 0;
        advisor_advise(&in, &q, &a);
        ok(a.atime == ATIME_NOATIME && a.confidence == CONFIDENCE_LOW, "an interval reaching 0: low confidence");
        in.unshared_lo = in.unshared_per_day;
        in.unshared_s = 600;
        advisor_advise(&in, &q, &a);
        ok(a.confidence == CONFIDENCE_LOW, "ten minutes of figures: low confidence");

        in.need = NEED_RELATIME;
        in.need_why = "the configuration says software here reads atime";
        advisor_advise(&in, &q, &a);
        ok(a.atime == ATIME_RELATIME && !a.change && a.saving_bytes_per_day == 0, "a consumer still wins: relatime kept");
        ok(a.n_reasons >= 2 && strstr(a.reasons[a.n_reasons - 1], "keeping atime costs 1.2 GiB/day"),
           "and the advice says what keeping it costs ('%s')", a.n_reasons ? a.reasons[a.n_reasons - 1] : "");

        in.need = NEED_NONE;
        in.unshared_per_day = in.unshared_lo = in.unshared_hi = 1000;
        advisor_advise(&in, &q, &a);
        ok(a.atime == ATIME_RELATIME && !a.space, "a KiB a day: no reason to change");
        in.unshared_per_day = 1.2 * 1073741824.0;
        in.btrfs_shared = false;
        advisor_advise(&in, &q, &a);
        ok(!a.space, "no snapshot: no space reason");
        in.btrfs_shared = true;
        in.policy.atime = ATIME_NOATIME;
        advisor_advise(&in, &q, &a);
        ok(!a.change && a.saving_bytes_per_day == 0, "noatime already: nothing to save");
}

int main(void) {
        struct advisor_params p = { .noatime_threshold = 60 };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                const struct row *r = &rows[i];
                struct advisor_input in = {
                        .target = "/srv", .fstype = r->fstype,
                        .policy = { .atime = r->atime, .lazytime = r->lazytime, .read_only = r->ro },
                        .ignore = r->ignore, .need = r->need,
                        .need_why = r->need ? "mbox files in /var/mail: mail readers tell new mail by atime" : NULL,
                        .have_activity = r->measured, .per_min = r->per_min, .peak_per_min = r->per_min,
                        .observed_s = r->observed_h * 3600,
                        .population = r->population > 0 ? (uint64_t) r->population : 200000,
                };
                struct advice a;

                advisor_advise(&in, &p, &a);
                ok(a.atime == r->want_atime && a.lazytime == r->want_lazy && streq(a.action, r->want_action) &&
                           a.n_reasons > 0 && strstr(a.reasons[0], r->want_reason) && a.confidence == r->want_conf,
                   "%s: %s%s (%s), '%s' %s", r->what, atime_mode_to_string(a.atime), a.lazytime ? "+lazytime" : "",
                   a.action, a.n_reasons ? a.reasons[0] : "", advice_confidence_to_string(a.confidence));
                /* The rule above all: a consumer never gets noatime. */
                if (r->need != NEED_NONE)
                        ok(a.atime != ATIME_NOATIME, "%s: never noatime with a consumer", r->what);
        }

        /* Savings from the cost table. */
        {
                struct advisor_input in = { .fstype = "ext4", .policy = { .atime = ATIME_STRICT }, .have_activity = true,
                                            .per_min = 6000, .observed_s = 86400, .population = 200000 };
                struct advice a;

                advisor_advise(&in, &p, &a);
                ok(a.atime == ATIME_NOATIME && fabs(a.saving_updates_per_min - 6000) < 1e-9 &&
                           fabs(a.saving_cpu_us_per_s - 100 * 3.0) < 1e-6 && fabs(a.saving_kib_per_s - 50) < 1e-9,
                   "noatime on ext4 saves 6000 writes/min, 300 us/s CPU, 50 KiB/s");
                ok(a.n_reasons >= 2 && strstr(a.reasons[a.n_reasons - 1], "0.3 ms of CPU a second (0.03% of one CPU): too "
                                                                           "little to show in throughput"),
                   "a saving of 0.03%% of a CPU claims no throughput (%s)", a.reasons[a.n_reasons - 1]);
                in.per_min = 600000;
                advisor_advise(&in, &p, &a);
                ok(!strstr(a.reasons[a.n_reasons - 1], "throughput"), "3%% of a CPU: no such word (%s)",
                   a.reasons[a.n_reasons - 1]);
                in.per_min = 6000;

                /* btrfs dirties the inode whatever lazytime says. */
                in.fstype = "btrfs";
                in.need = NEED_STRICT;
                advisor_advise(&in, &p, &a);
                ok(a.atime == ATIME_STRICT && !a.lazytime, "strictatime needed on btrfs: lazytime not advised");
                in.fstype = "xfs";
                advisor_advise(&in, &p, &a);
                ok(a.atime == ATIME_STRICT && a.lazytime && a.change, "on xfs it is");
                in.fstype = "btrfs";
                in.need = NEED_NONE;
                in.policy.lazytime = true;
                advisor_advise(&in, &p, &a);
                ok(a.atime == ATIME_NOATIME && fabs(a.saving_kib_per_s - 100 * 4.8) < 1e-6,
                   "noatime on a lazytime btrfs saves its write-back too (%.0f KiB/s)", a.saving_kib_per_s);
                in.fstype = "ext4";
                advisor_advise(&in, &p, &a);
                ok(a.atime == ATIME_NOATIME && a.saving_kib_per_s == 0 && fabs(a.saving_cpu_us_per_s - 100 * 0.73) < 1e-6,
                   "on a lazytime ext4, the CPU of lazytime's in-memory update only");
                in.fstype = "ext4";
                in.policy.lazytime = false;

                in.need = NEED_RELATIME;
                advisor_advise(&in, &p, &a);
                ok(a.atime == ATIME_RELATIME && fabs(a.saving_updates_per_min - (6000 - 200000.0 / 1440)) < 1e-6,
                   "relatime from strict saves all but one write per inode a day (%.1f)", a.saving_updates_per_min);
        }
        {
                struct atime_cost o;
                char buf[64];
                struct advisor_input in = { .fstype = "ext4", .policy = { .atime = ATIME_RELATIME }, .have_activity = true,
                                            .per_min = 600, .observed_s = 86400 };
                struct advice a;

                ok(atime_cost_parse("ext4:3:1", &o, buf, sizeof buf) == 0 && streq(o.fstype, "ext4") && o.usec == 3 &&
                           o.kib == 1,
                   "a measured cost parses");
                p.costs = &o;
                p.n_costs = 1;
                advisor_advise(&in, &p, &a);
                ok(fabs(a.saving_cpu_us_per_s - 30) < 1e-9 && fabs(a.saving_kib_per_s - 10) < 1e-9,
                   "and replaces the table's figure");
                is_int(atime_cost_parse("ext4:x:1", &o, buf, sizeof buf), -EINVAL, "a bad cost is refused");
                is_int(atime_cost_parse("ext4:1", &o, buf, sizeof buf), -EINVAL, "so is a short one");
        }
        ok(fabs(atime_cost_for("zfs", NULL, 0)->usec - atime_cost_for("ext4", NULL, 0)->usec) < 1e-9,
           "an unknown type gets ext4's cost");
        {
                struct atime_cost o;
                char buf[64];

                ok(atime_cost_parse("nfs:8:2", &o, buf, sizeof buf) == 0 && fabs(o.lazy_usec - 8 * 0.73 / 3.0) < 1e-9,
                   "without lazy-usec, a quarter or so of usec, as on ext4");
        }
        /* btrfs's column: the bytes an updated inode un-shares from a
         * snapshot, the model's starting value. */
        {
                struct atime_cost o[2];
                char buf[2][64];

                ok(atime_cost_unshare_bytes("btrfs", NULL, 0) == 537 && atime_cost_unshare_bytes("ext4", NULL, 0) == 0 &&
                           atime_cost_unshare_bytes("zfs", NULL, 0) == 0,
                   "the table: 537 bytes an inode on btrfs (BENCHMARKS.md 10), none elsewhere");
                ok(atime_cost_parse("btrfs:5:5", &o[0], buf[0], sizeof buf[0]) == 0 && o[0].unshare_bytes == 0 &&
                           atime_cost_unshare_bytes("btrfs", o, 1) == 537,
                   "an override that gives no bytes keeps the table's");
                ok(atime_cost_parse("btr*:5:5:5:5:2048", &o[1], buf[1], sizeof buf[1]) == 0 &&
                           atime_cost_unshare_bytes("btrfs", o, 2) == 2048,
                   "one that gives them (fstype:usec:KiB:lazy:again:bytes) replaces them");
                ok(fabs(atime_cost_unshare_dir_bytes("btrfs", o, 2) - 2048 * 1300.0 / 537) < 1e-9,
                   "a six-field entry: a directory's bytes in the table's proportion (%.1f)",
                   atime_cost_unshare_dir_bytes("btrfs", o, 2));
                ok(atime_cost_unshare_dir_bytes("btrfs", NULL, 0) == 1300 && atime_cost_unshare_dir_bytes("ext4", NULL, 0) == 0,
                   "the table: 1300 bytes a directory on btrfs (BENCHMARKS.md 10), none elsewhere");
                ok(atime_cost_unshare_dir_bytes("btrfs", o, 1) == 1300, "an override that gives no bytes keeps the table's");
                ok(atime_cost_parse("btrfs:5:5:5:5:2048:4096", &o[1], buf[1], sizeof buf[1]) == 0 &&
                           atime_cost_unshare_bytes("btrfs", o, 2) == 2048 && atime_cost_unshare_dir_bytes("btrfs", o, 2) == 4096,
                   "a seventh field: the bytes a directory");
                is_int(atime_cost_parse("btrfs:5:5:5:5:2048:4096:1", &o[1], buf[1], sizeof buf[1]), -EINVAL,
                       "an eighth field is refused");
                is_int(atime_cost_parse("btrfs:5:5:5:5:0:4096", &o[1], buf[1], sizeof buf[1]), -EINVAL,
                       "a directory's bytes without a file's are refused");
                char f[128];
                ok(atime_cost_parse("btrfs:5:5:5:5:2048:4096", &o[1], buf[1], sizeof buf[1]) == 0 &&
                           streq(atime_cost_format(&o[1], f, sizeof f), "btrfs:5:5:5:5:2048:4096"),
                   "and formatted back (%s)", f);
                ok(atime_cost_parse("btrfs:5:5:5:5:2048", &o[1], buf[1], sizeof buf[1]) == 0 &&
                           streq(atime_cost_format(&o[1], f, sizeof f), "btrfs:5:5:5:5:2048"),
                   "a derived one is not written (%s)", f);
        }
        /* Confidence follows the interval; the basis is said; min_saving. */
        {
                struct advisor_params q = { .noatime_threshold = 60, .min_saving = 10 };
                struct advisor_input in = { .target = "/srv", .fstype = "ext4", .policy = { .atime = ATIME_RELATIME },
                                            .have_activity = true, .per_min = 80, .lo_per_min = 70, .hi_per_min = 95,
                                            .peak_per_min = 80, .observed_s = 2 * 86400, .population = 20000 };
                struct advice a;

                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_NOATIME && a.confidence == CONFIDENCE_HIGH && a.basis == BASIS_MEASUREMENT,
                   "80/min (70-95) over two days: noatime, high confidence, measured");
                in.lo_per_min = 20;
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_NOATIME && a.confidence == CONFIDENCE_LOW,
                   "80/min (20-95): the interval straddles the threshold: low confidence");
                in = (struct advisor_input) { .target = "/srv", .fstype = "ext4", .policy = { .atime = ATIME_STRICT },
                                              .need = NEED_STRICT, .need_why = "mbox files",
                                              .have_activity = true, .per_min = 5, .lo_per_min = 3, .hi_per_min = 8,
                                              .observed_s = 2 * 86400, .population = 20000 };
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_STRICT && !a.lazytime && !a.change && a.n_reasons > 1 &&
                           strstr(a.reasons[a.n_reasons - 1], "min_saving 10/min"),
                   "lazytime saving 5 updates/min, under min_saving: not advised, saying why (%s)",
                   a.n_reasons ? a.reasons[a.n_reasons - 1] : "");
                in.hi_per_min = 30;
                advisor_advise(&in, &q, &a);
                ok(!a.change && a.confidence == CONFIDENCE_LOW, "and low confidence where the interval reaches min_saving");
                in.need = NEED_NONE;
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_RELATIME && a.basis == BASIS_RULE && a.confidence == CONFIDENCE_HIGH,
                   "strictatime with nothing reading atime gets relatime by rule, whatever it saves");
                in.need = NEED_RELATIME;
                in.need_why = "mbox files";
                in.have_activity = false;
                in.observed_s = 0;
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_RELATIME && a.basis == BASIS_CONSUMERS && a.confidence == CONFIDENCE_HIGH &&
                           streq(advice_basis_to_string(a.basis), "consumers"),
                   "advice resting on a consumer says so, with no measurement");
                in = (struct advisor_input) { .target = "/srv", .fstype = "ext4", .policy = { .atime = ATIME_RELATIME } };
                advisor_advise(&in, &q, &a);
                ok(!a.change && a.basis == BASIS_NONE && a.confidence == CONFIDENCE_LOW, "not measured yet: basis none, low");
                in = (struct advisor_input) { .target = "/srv", .fstype = "ext4", .policy = { .atime = ATIME_STRICT },
                                              .have_activity = true, .per_min = 15000, .lo_per_min = 14000,
                                              .hi_per_min = 16000, .observed_s = 86400, .population = 20000,
                                              .writeback_ratio = 0.001 };
                in.population = 200000;
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_NOATIME && fabs(a.saving_cpu_us_per_s - 250 * (0.001 * 3.0 + 0.999 * 1.5)) < 1e-6 &&
                           fabs(a.saving_kib_per_s - 250 * 0.001 * 0.5) < 1e-9,
                   "a hot file: CPU follows its 15,000 updates/min at the cost of an update of a dirty inode, "
                   "bytes its write-backs (%.1f us/s, %.3f KiB/s)",
                   a.saving_cpu_us_per_s, a.saving_kib_per_s);
                /* The first seed's experiment: one hot file on a web root
                 * of 20,000 inodes. relatime ends its updates as noatime
                 * would, and the CPU it saves is below any throughput. */
                in.population = 20000;
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_RELATIME && a.basis == BASIS_MEASUREMENT && a.confidence == CONFIDENCE_HIGH &&
                           fabs(a.saving_updates_per_min - (15000 - 20000.0 / 1440)) < 1e-6 && a.n_reasons >= 2 &&
                           strstr(a.reasons[0], "relatime leaves at most 14/min (each of 20,000 inodes once a day)") &&
                           strstr(a.reasons[a.n_reasons - 1], "too little to show in throughput"),
                   "a hot file among 20,000 inodes: relatime, claiming no throughput ('%s' ... '%s')", a.reasons[0],
                   a.reasons[a.n_reasons - 1]);
                in.population = 0;
                advisor_advise(&in, &q, &a);
                ok(a.atime == ATIME_NOATIME, "before any walk (no population): what relatime leaves is not known, noatime");
        }
        ok(fstype_journals("xfs") && !fstype_journals("tmpfs"), "journaling filesystems");
        test_space();
        test_dir_bytes_share();
        return tap_done();
}
