/* test-report: the typed model and the metrics written from it. The same
 * Report written as text directly, and through GetStatus's JSON and back
 * (atimectl's path), gives the same text; advice pairs with its mount by
 * target, over-mounted targets in order; counters, and only counters, end
 * in _total; label values are escaped. */
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "protocol.h"
#include "report.h"
#include "varlink.h"
#include "../tap.h"

static char *text_of(const Report *r) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f || metrics_write(f, r) < 0) {
                if (f)
                        fclose(f);
                free(buf);
                return NULL;
        }
        fclose(f);
        return buf;
}

static void add_mount(Report *r, int id, const char *target, const char *action, double per_min) {
        ReportMount *m = report_add_mount(r);

        m->id = id;
        m->target = report_strdup(r, target);
        m->source = report_strdup(r, "/dev/vda1");
        m->fstype = report_strdup(r, "ext4");
        m->root = report_strdup(r, "/");
        m->options = report_strdup(r, "rw,relatime");
        m->super_options = report_strdup(r, "rw");
        m->atime = report_strdup(r, "relatime");
        m->device = (ReportDevice) { .major = 253, .minor = 1, .name = report_strdup(r, "vda1"), .kind = "partition",
                                     .rotational = 0, .have_rate = true, .write_iops = 2.5, .write_kib_per_s = 10.25,
                                     .have_totals = true, .writes_total = 123456789, .written_bytes_total = 987654321000 };
        m->probe = (ReportProbe) { .have = true, .verified = true, .effective = "relatime", .at = 1700000000,
                                   .matches_table = 1 };
        m->activity = (ReportActivity) { .have = true, .inodes_per_min = per_min, .inodes_lo = per_min / 2,
                                         .inodes_hi = per_min * 2, .updates_per_min = per_min, .updates_lo = per_min / 2,
                                         .updates_hi = per_min * 2, .interval_s = 60, .sample = 1000,
                                         .population = 50000, .at = 1700000060,
                                         .coverage = 1, .ready_in_s = -1 };
        m->atime_updates_total = 4242.5;
        m->advice = (ReportAdvice) { .have = true, .action = action, .current = "relatime", .recommended = "noatime",
                                     .confidence = "high", .saving_updates_per_min = per_min,
                                     .saving_cpu_us_per_s = 1.25, .saving_kib_per_s = 0.5, .n_consumers = 2 };
}

/* What GetStatus and GetRecommendations would carry for r. */
static void to_json(const Report *r, json_object **ret_status, json_object **ret_recs) {
        json_object *st = json_object_new_object(), *mounts = json_object_new_array();
        json_object *recs = json_object_new_object(), *list = json_object_new_array();

        json_object_object_add(st, F_VERSION, json_object_new_string(r->version));
        json_object_object_add(st, F_STARTED_AT, json_object_new_int64(r->started_at));
        json_object_object_add(st, F_UPTIME_S, json_object_new_int64(r->uptime_s));
        json_object_object_add(st, F_STUCK_THREADS, json_object_new_int64(r->stuck_threads));
        json_object_object_add(st, F_ADVICE_CHANGES, json_object_new_int64(r->advice_changes));
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportAdvice *a = &r->mounts[i].advice;
                json_object *o = json_object_new_object(), *cur = json_object_new_object(),
                            *rec = json_object_new_object(), *sav = json_object_new_object(),
                            *cons = json_object_new_array();

                json_object_array_add(mounts, report_mount_to_json(&r->mounts[i]));
                json_object_object_add(o, F_TARGET, json_object_new_string(r->mounts[i].target));
                json_object_object_add(o, F_ACTION, json_object_new_string(a->action));
                json_object_object_add(cur, F_OPTIONS, json_object_new_string(a->current));
                json_object_object_add(o, F_CURRENT, cur);
                json_object_object_add(rec, F_OPTIONS, json_object_new_string(a->recommended));
                json_object_object_add(o, F_RECOMMENDED, rec);
                json_object_object_add(o, F_CONFIDENCE, json_object_new_string(a->confidence));
                json_object_object_add(sav, F_ATIME_WRITES_PER_MIN, report_json_rounded(a->saving_updates_per_min, 1));
                json_object_object_add(sav, F_CPU_US_PER_S, report_json_rounded(a->saving_cpu_us_per_s, 2));
                json_object_object_add(sav, F_WRITE_KIB_PER_S, report_json_rounded(a->saving_kib_per_s, 2));
                json_object_object_add(o, F_SAVING, sav);
                for (uint64_t k = 0; k < a->n_consumers; k++)
                        json_object_array_add(cons, json_object_new_object());
                json_object_object_add(o, F_CONSUMERS, cons);
                json_object_array_add(list, o);
        }
        json_object_object_add(st, F_MOUNTS, mounts);
        json_object_object_add(recs, F_RECOMMENDATIONS, list);
        *ret_status = st;
        *ret_recs = recs;
}

static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; (p = strstr(p, line)); p++)
                if ((p == text || p[-1] == '\n') && p[n] == '\n')
                        return true;
        return false;
}

/* Every "# TYPE name counter" line names a _total, and only those do. */
static bool counters_named_total(const char *text) {
        char name[256], type[32];

        for (const char *p = text; (p = strstr(p, "# TYPE ")); p++) {
                bool total;

                if (sscanf(p, "# TYPE %255s %31s", name, type) != 2)
                        return false;
                total = strlen(name) > 6 && streq(name + strlen(name) - 6, "_total");
                if (total != streq(type, "counter"))
                        return false;
        }
        return true;
}

/* Pairing is by a hash of targets, not by position: every one of 20,000
 * mounts gets its own advice. */
static void test_many(void) {
        _cleanup_(report_freep) Report *big = NULL, *big_back = NULL;
        _cleanup_json_ json_object *s2 = NULL, *r2 = NULL;
        char t[64];
        bool paired = true;

        report_new(&big);
        big->version = "1.0";
        big->have_advice = true;
        for (int i = 0; i < 20000; i++) {
                snprintf(t, sizeof t, "/m/%d", i);
                add_mount(big, i, t, i % 2 ? "keep" : "noatime", i);
        }
        to_json(big, &s2, &r2);
        ok(report_from_json(s2, r2, &big_back) == 0, "20,000 mounts read back");
        for (size_t i = 0; i < big_back->n_mounts; i++)
                paired = paired && big_back->mounts[i].advice.have &&
                         streq(big_back->mounts[i].advice.action, i % 2 ? "keep" : "noatime");
        ok(paired, "each with its own advice");
}

/* Figures as a daemon reported them while a 400,000-inode filesystem's
 * first walk ran (GetStatus, trimmed to the activity): which show only
 * their lower bound, and that the numbers read back unchanged. */
static void test_lower_bound(void) {
        static const char reply[] =
                "{\"mounts\":["
                /* The sample alone, the hot corner not walked yet: 0 (0-1.49e9). */
                "{\"mount_id\":1,\"target\":\"/tmpfs\",\"activity\":{\"atime_inodes_per_min\":0,\"ci95\":[0,372500],"
                "\"atime_updates_per_min\":0,\"updates_ci95\":[0,1490000000],\"interval_s\":30.0,"
                "\"figure_source\":\"sample\",\"coverage\":0.0021,\"ready_in_s\":380}},"
                /* The same, some of what was read walked: 1,200 at least. */
                "{\"mount_id\":2,\"target\":\"/walked-some\",\"activity\":{\"atime_inodes_per_min\":2400,\"ci95\":[1200,372500],"
                "\"atime_updates_per_min\":2400,\"updates_ci95\":[1200,1490000000],\"interval_s\":30.0,"
                "\"figure_source\":\"sample\",\"coverage\":0.42,\"ready_in_s\":200}},"
                /* ext4 under reads alone: the kernel's count stands. */
                "{\"mount_id\":3,\"target\":\"/ext4\",\"activity\":{\"atime_inodes_per_min\":10,\"ci95\":[2,370000],"
                "\"atime_updates_per_min\":126001,\"updates_ci95\":[2,137468],\"interval_s\":30.0,"
                "\"figure_source\":\"kernel_count\",\"coverage\":0.002,\"ready_in_s\":380}},"
                /* Bounded by the count: an interval worth showing. */
                "{\"mount_id\":4,\"target\":\"/xfs\",\"activity\":{\"atime_inodes_per_min\":10,\"ci95\":[2,370000],"
                "\"atime_updates_per_min\":50,\"updates_ci95\":[2,9000],\"interval_s\":30.0,"
                "\"figure_source\":\"sample_bounded\",\"coverage\":0.3,\"ready_in_s\":100}},"
                /* The whole walk's sample. */
                "{\"mount_id\":5,\"target\":\"/whole\",\"activity\":{\"atime_inodes_per_min\":3000,\"ci95\":[2870,3130],"
                "\"atime_updates_per_min\":3000,\"updates_ci95\":[2870,3130],\"interval_s\":60.0,"
                "\"figure_source\":\"sample\",\"coverage\":1,\"ready_in_s\":null}},"
                /* A daemon before coverage and sources: whole walks only. */
                "{\"mount_id\":6,\"target\":\"/old\",\"activity\":{\"atime_inodes_per_min\":5,\"ci95\":[1,20],"
                "\"interval_s\":60.0}},"
                /* No figure yet. */
                "{\"mount_id\":7,\"target\":\"/none\",\"activity\":null}]}";
        _cleanup_json_ json_object *status = json_tokener_parse(reply);
        _cleanup_(report_freep) Report *r = NULL;
        bool want[] = { true, true, false, false, false, false, false };

        ok(status && report_from_json(status, NULL, &r) == 0 && r->n_mounts == ELEMENTSOF(want),
           "lower bound: a recorded reply of %zu mounts read", ELEMENTSOF(want));
        if (!r || r->n_mounts != ELEMENTSOF(want))
                return;
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ok(report_activity_lower_bound_only(&r->mounts[i].activity) == want[i], "lower bound: %s %s",
                   r->mounts[i].target, want[i] ? "shows its lower bound alone" : "shows its interval");
        ok(r->mounts[0].activity.updates_lo == 0 && r->mounts[0].activity.updates_hi == 1490000000 &&
                   r->mounts[1].activity.updates_lo == 1200 && r->mounts[1].activity.coverage == 0.42,
           "lower bound: the numbers read back as they are");
}

int main(void) {
        _cleanup_(report_freep) Report *r = NULL, *back = NULL;
        _cleanup_json_ json_object *status = NULL, *recs = NULL;
        _cleanup_free_ char *text = NULL, *text_back = NULL;

        ok(report_new(&r) == 0, "a new report");
        r->version = "1.0";
        r->started_at = 1700000000;
        r->uptime_s = 100;
        r->taken_at = 1700000100;
        r->stuck_threads = 0;
        r->advice_changes = 3;
        r->have_advice = true;
        add_mount(r, 1, "/srv", "noatime", 120);
        add_mount(r, 2, "/dup", "keep", 6);
        add_mount(r, 3, "/dup", "relatime", 3);
        add_mount(r, 4, "/we\"ird\\na\nme", "keep", 0.5);

        r->mounts[2].activity.coverage = 0.25; /* a first walk a quarter done */
        r->mounts[2].activity.ready_in_s = 90;
        text = text_of(r);
        ok(text, "metrics written");
        ok(has_line(text, "atimed_atime_sample_coverage_ratio{mountpoint=\"/srv\"} 1") &&
                   has_line(text, "atimed_atime_sample_coverage_ratio{mountpoint=\"/dup\"} 0.25"),
           "the share of the filesystem the figures rest on");
        ok(has_line(text, "atimed_atime_sample_complete_in_seconds{mountpoint=\"/dup\"} 90") &&
                   !strstr(text, "atimed_atime_sample_complete_in_seconds{mountpoint=\"/srv\"}"),
           "the wait for the whole, only where there is one");
        ok(has_line(text, "atimed_up 1"), "atimed_up");
        ok(has_line(text, "atimed_last_export_timestamp_seconds 1700000100"), "the time of the figures");
        ok(has_line(text, "atimed_atime_updates_per_second{mountpoint=\"/srv\"} 2"), "updates per second");
        ok(has_line(text, "atimed_atime_inodes_upper_per_second{mountpoint=\"/srv\"} 4"), "inodes, upper bound");
        ok(has_line(text, "atimed_atime_updates_total{mountpoint=\"/srv\"} 4242.5"), "the updates counter");
        ok(has_line(text, "atimed_device_writes_total{mountpoint=\"/srv\",device=\"vda1\"} 123456789"),
           "device writes counter, exact");
        ok(has_line(text, "atimed_device_written_bytes_total{mountpoint=\"/srv\",device=\"vda1\"} 987654321000"),
           "device bytes counter, exact");
        ok(has_line(text, "atimed_recommendation{mountpoint=\"/dup\",action=\"keep\",current=\"relatime\","
                          "recommended=\"noatime\",confidence=\"high\"} 1") &&
                   has_line(text, "atimed_recommendation{mountpoint=\"/dup\",action=\"relatime\",current=\"relatime\","
                                  "recommended=\"noatime\",confidence=\"high\"} 1"),
           "an over-mounted target: both advice");
        ok(has_line(text, "atimed_mount_stalled{mountpoint=\"/we\\\"ird\\\\na\\nme\"} 0"), "labels escaped");
        ok(counters_named_total(text), "counters, and only counters, end in _total");

        to_json(r, &status, &recs);
        ok(report_from_json(status, recs, &back) == 0, "read back from GetStatus and GetRecommendations");
        is_int(back->n_mounts, 4, "four mounts");
        is_str(back->mounts[1].advice.action, "keep", "over-mounted: the first recommendation to the first mount");
        is_str(back->mounts[2].advice.action, "relatime", "and the second to the second");
        text_back = text_of(back);
        is_str(text_back, text, "the same text through JSON as from the structs");

        {
                _cleanup_json_ json_object *bad = json_object_new_object();
                _cleanup_(report_freep) Report *none = NULL;

                is_int(report_from_json(bad, NULL, &none), -EBADMSG, "no mounts: not a status");
        }
        test_many();
        test_lower_bound();
        {
                _cleanup_(report_freep) Report *odd = NULL;
                _cleanup_free_ char *t = NULL;

                ok(report_new(&odd) == 0, "a report of one odd figure");
                odd->version = "1.0";
                add_mount(odd, 5, "/odd", "keep", 3600.06);
                t = text_of(odd);
                ok(t && has_line(t, "atimed_atime_updates_per_second{mountpoint=\"/odd\"} 60.001"),
                   "values in their shortest exact form (60.001, not 60.000999999999998)");
        }
        return tap_done();
}
