/* test-verdict: the saving a change of policy realized, judged on made-up
 * histories (a saving as promised, a saving of none, too little history
 * on either side, like hours against adjacent windows), and the change
 * itself recorded by the store, kept across a restart, and not recorded
 * twice. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "mounts.h"
#include "protocol.h"
#include "store.h"
#include "strv.h"
#include "varlink.h"
#include "verdict.h"

/* A Monday at midnight UTC. */
static const int64_t T0 = 1800000000 - 1800000000 % 86400;

/* A host's daily rhythm: busy in working hours, quiet at night. */
static double rhythm(int64_t t) {
        int hour = (int) ((t % 86400) / 3600);

        return hour >= 8 && hour < 18 ? 3.0 : 0.5;
}

/* Samples every minute from 'from' to 'to' (Unix seconds) under 'atime',
 * at 'rate(t)' atime updates per minute with a +-10% interval. */
static void feed(MountHistory *h, int64_t from, int64_t to, AtimeMode atime, double base, bool daily) {
        for (int64_t t = from; t < to; t += 60) {
                double v = base * (daily ? rhythm(t) : 1.0);
                struct stats_sample x = {
                        .t = t, .has_activity = true, .per_min = (float) v, .lo = (float) (v * 0.9),
                        .hi = (float) (v * 1.1), .has_policy = true, .atime = (uint8_t) atime,
                };

                history_add(h, &x);
        }
}

static MountHistory *make(const char *rings) {
        struct stats_ring_spec sp[STATS_MAX_RINGS];
        unsigned n;
        MountHistory *h = NULL;

        if (stats_parse_rings(rings, sp, &n) < 0 || history_new("uuid=u target=/srv", sp, n, &h) < 0)
                abort();
        return h;
}

static struct stats_change change_at(int64_t t, AtimeMode from, AtimeMode to, double promised) {
        return (struct stats_change) {
                .t = t, .last_old = t - 60, .from = (uint8_t) from, .to = (uint8_t) to,
                .promise = { .t = t - 60, .atime = (uint8_t) to, .saving_per_min = (float) promised },
        };
}

static void test_as_promised(void) {
        /* Two days of strictatime with a daily rhythm, then noatime for
         * twelve hours: every update saved. Adjacent windows would be
         * fooled by the rhythm (the change at 06:00, before the busy
         * hours); like hours are not. */
        MountHistory *h = make("1min:6h, 10min:7d, 1h:90d");
        int64_t tc = T0 + 2 * 86400 + 6 * 3600, now = tc + 12 * 3600;
        struct stats_change c = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 18000);
        struct verdict v;

        feed(h, T0, tc, ATIME_STRICT, 6000, true);
        feed(h, tc, now, ATIME_NOATIME, 0, false);
        is_int(verdict_judge(h, &c, now, 60, &v), 0, "as promised: judged");
        is_int(v.state, VERDICT_MEASURED, "measured");
        is_int(v.comparison, VERDICT_SAME_HOURS, "over the same hours of the day");
        is_int(v.resolution, 600, "from the ring that reaches back a day");
        ok(v.n_after >= 60 && v.n_before == v.n_after, "every bucket after paired (%u, %u)", v.n_before, v.n_after);
        is_int(v.after_s, 12 * 3600, "twelve hours after");
        /* Twelve hours from 06:00: 10 h busy (18000), 2 h quiet (3000). */
        {
                double want = (10 * 18000.0 + 2 * 3000.0) / 12;
                ok(fabs(v.saved_per_min - want) < want * 0.02, "saved %.0f of %.0f", v.saved_per_min, want);
                ok(v.saved_lo <= v.saved_per_min && v.saved_hi >= v.saved_per_min && v.saved_lo > 0,
                   "its interval holds it and is above zero (%.0f to %.0f)", v.saved_lo, v.saved_hi);
                ok(fabs(v.after_per_min) < 1e-6, "nothing after");
        }
        {
                json_object *j = verdict_to_json(&c, &v), *x;

                ok(j && json_object_object_get_ex(j, F_STATE, &x) && streq(json_object_get_string(x), "measured"),
                   "JSON: state measured");
                ok(json_object_object_get_ex(j, F_COMPARISON, &x) && streq(json_object_get_string(x), "same_hours"),
                   "JSON: same hours");
                ok(json_object_object_get_ex(j, F_PREVIOUS, &x) && streq(json_object_get_string(x), "strictatime") &&
                           json_object_object_get_ex(j, F_CURRENT, &x) && streq(json_object_get_string(x), "noatime"),
                   "JSON: from strictatime to noatime");
                ok(json_object_object_get_ex(j, F_PROMISED_PER_MIN, &x) && json_object_get_double(x) == 18000,
                   "JSON: the promise");
                ok(json_object_object_get_ex(j, F_SAVED_CI95, &x) && json_object_array_length(x) == 2,
                   "JSON: the interval");
                json_object_put(j);
        }
        history_free(h);
}

static void test_none(void) {
        /* relatime to noatime on a mount relatime already kept quiet: 5
         * updates a minute before and after, nothing saved. */
        MountHistory *h = make("1min:6h, 10min:7d, 1h:90d");
        int64_t tc = T0 + 2 * 86400 + 9 * 3600, now = tc + 6 * 3600;
        struct stats_change c = change_at(tc, ATIME_RELATIME, ATIME_NOATIME, 300);
        struct verdict v;

        feed(h, T0, tc, ATIME_RELATIME, 5, false);
        feed(h, tc, now, ATIME_NOATIME, 5, false);
        is_int(verdict_judge(h, &c, now, 60, &v), 0, "none: judged");
        is_int(v.state, VERDICT_MEASURED, "measured");
        ok(fabs(v.saved_per_min) < 0.01, "nothing saved (%.2f)", v.saved_per_min);
        ok(v.saved_lo <= 0 && v.saved_hi >= 0, "its interval holds zero (%.2f to %.2f)", v.saved_lo, v.saved_hi);
        ok(v.saved_hi < 300 * 0.1, "and is far below the promise");
        history_free(h);
}

static void test_too_early(void) {
        MountHistory *h = make("1min:6h, 10min:7d, 1h:90d");
        int64_t tc = T0 + 86400, now = tc + 4 * 60;
        struct stats_change c = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 1000);
        struct verdict v;
        json_object *j, *x;

        feed(h, T0, tc, ATIME_STRICT, 1000, false);
        feed(h, tc, now, ATIME_NOATIME, 0, false);
        is_int(verdict_judge(h, &c, now, 60, &v), 0, "too early: judged");
        is_int(v.state, VERDICT_TOO_EARLY, "four minutes after: too early");
        ok(v.n_after < VERDICT_MIN_POINTS, "fewer buckets after than wanted (%u)", v.n_after);
        j = verdict_to_json(&c, &v);
        ok(j && json_object_object_get_ex(j, F_SAVED_PER_MIN, &x) && !x, "JSON: no figure");
        ok(json_object_object_get_ex(j, F_STATE, &x) && streq(json_object_get_string(x), "too_early"),
           "JSON: too_early");
        json_object_put(j);
        history_free(h);
}

static void test_too_little_before(void) {
        /* A mount remounted three minutes after atimed first saw it. */
        MountHistory *h = make("1min:6h, 10min:7d, 1h:90d");
        int64_t tc = T0 + 3 * 60, now = tc + 2 * 3600;
        struct stats_change c = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 1000);
        struct verdict v;

        feed(h, T0, tc, ATIME_STRICT, 1000, false);
        feed(h, tc, now, ATIME_NOATIME, 0, false);
        is_int(verdict_judge(h, &c, now, 60, &v), 0, "too little before: judged");
        is_int(v.state, VERDICT_TOO_LITTLE_BEFORE, "three minutes of history before: too little");
        ok(v.n_before < VERDICT_MIN_POINTS && v.n_after >= VERDICT_MIN_POINTS, "before %u, after %u", v.n_before,
           v.n_after);
        history_free(h);
}

static void test_adjacent(void) {
        /* Short rings, as the integration tests use: no day to pair with,
         * so the windows either side, and the verdict says so. */
        MountHistory *h = make("1s:10min, 10s:1h");
        int64_t tc = T0 + 300, now = tc + 120;
        struct stats_change c = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 600);
        struct verdict v;

        for (int64_t t = T0; t < now; t++) {
                struct stats_sample x = {
                        .t = t, .has_activity = true, .per_min = t < tc ? 600 : 0, .lo = t < tc ? 500 : 0,
                        .hi = t < tc ? 700 : 0, .has_policy = true, .atime = t < tc ? ATIME_STRICT : ATIME_NOATIME,
                };
                history_add(h, &x);
        }
        is_int(verdict_judge(h, &c, now, 5, &v), 0, "adjacent: judged");
        is_int(v.state, VERDICT_MEASURED, "measured");
        is_int(v.comparison, VERDICT_ADJACENT, "from adjacent windows");
        is_int(v.resolution, 1, "at the finest resolution");
        ok(v.n_after >= 100 && v.n_before == v.n_after, "as many buckets before as after (%u, %u)", v.n_before, v.n_after);
        ok(fabs(v.saved_per_min - 600) < 1, "saved 600 (%.1f)", v.saved_per_min);
        ok(v.saved_lo < 600 && v.saved_hi > 600 && v.saved_lo > 400, "with the points' interval (%.0f to %.0f)",
           v.saved_lo, v.saved_hi);
        history_free(h);
}

static void test_stalled_and_mixed_buckets(void) {
        /* Buckets of a stalled filesystem or with both policies in them
         * speak for neither. */
        MountHistory *h = make("1min:6h");
        int64_t tc = T0 + 3600, now = tc + 3600;
        struct stats_change c = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 100);
        struct verdict v;

        for (int64_t t = T0; t < now; t += 60) {
                struct stats_sample x = {
                        .t = t, .has_activity = true, .per_min = t < tc ? 100 : 0, .has_policy = true,
                        .atime = t < tc ? ATIME_STRICT : ATIME_NOATIME, .flags = t >= tc ? STATS_STALLED : 0,
                };
                history_add(h, &x);
        }
        is_int(verdict_judge(h, &c, now, 60, &v), 0, "stalled after: judged");
        is_int(v.state, VERDICT_TOO_EARLY, "stalled buckets do not count");
        ok(verdict_judge(h, &(struct stats_change) {}, now, 60, &v) == -ENODATA, "no change: -ENODATA");
        history_free(h);
}

static void test_store(void) {
        char dir[] = "/tmp/test-verdict.------"; /* mkdtemp()'s template: six X at the end */
        struct stats_ring_spec sp[STATS_MAX_RINGS];
        unsigned n;
        Store *s = NULL;
        struct store_load_report rep;
        const MountHistory *h;
        struct stats_promise p = { .t = T0 + 100, .atime = ATIME_NOATIME, .for_atime = ATIME_STRICT, .saving_per_min = 1234 };
        struct stats_promise keep = { .for_atime = ATIME_NOATIME }, after = { .t = T0 + 650, .atime = ATIME_RELATIME,
                                                                          .for_atime = ATIME_NOATIME, .saving_per_min = 9 };
        const char *key = "uuid=u target=/srv/with space";

        memset(dir + strlen(dir) - 6, 'X', 6);
        if (!mkdtemp(dir) || stats_parse_rings("1min:6h, 10min:7d", sp, &n) < 0)
                abort();
        store_new(dir, sp, n, 0, &s);
        store_load(s, T0, &rep);
        store_load_report_done(&rep);
        for (int64_t t = T0; t < T0 + 600; t += 60) {
                struct stats_sample x = { .t = t, .has_activity = true, .per_min = 1000, .has_policy = true,
                                          .atime = ATIME_STRICT };
                store_add(s, key, &x);
                store_set_promise(s, key, &p);
        }
        h = store_find(s, key);
        is_int(h->change.t, 0, "no change while the policy holds");
        is_int(store_flush(s, T0 + 600, false), 0, "flushed before the change");
        {
                struct stats_sample x = { .t = T0 + 600, .has_activity = true, .per_min = 0, .has_policy = true,
                                          .atime = ATIME_NOATIME };
                store_add(s, key, &x);
        }
        store_set_promise(s, key, &keep); /* the advice is to keep, now */
        is_int(h->change.t, T0 + 600, "the remount recorded at the first sample under it");
        is_int(h->change.last_old, T0 + 540, "after the last under the old policy");
        is_int(h->change.from, ATIME_STRICT, "from strictatime");
        is_int(h->change.to, ATIME_NOATIME, "to noatime");
        ok(h->change.promise.t == p.t && h->change.promise.saving_per_min == 1234, "with the promise then in force");
        is_int(h->promise.t, 0, "the promise in force now is none");
        {
                struct stats_sample x = { .t = T0 + 660, .has_policy = true, .atime = ATIME_NOATIME };
                store_add(s, key, &x);
        }
        is_int(h->change.t, T0 + 600, "the next sample under it changes nothing");
        is_int(store_flush(s, T0 + 700, false), 0, "flushed: a journal block and the changes file");
        {
                char path[256];

                snprintf(path, sizeof path, "%s/%s", dir, STORE_CHANGES);
                ok(access(path, F_OK) == 0, "history.changes written");
        }
        store_free(s);

        /* After a restart: the change, and its promise, back. */
        store_new(dir, sp, n, 0, &s);
        store_load(s, T0 + 800, &rep);
        is_int((int) strv_length(rep.problems), 0, "loaded without problems");
        store_load_report_done(&rep);
        h = store_find(s, key);
        ok(h && h->change.t == T0 + 600 && h->change.from == ATIME_STRICT && h->change.to == ATIME_NOATIME &&
                   h->change.promise.saving_per_min == 1234,
           "the change and its promise survive a restart");

        /* The daemon down while the mount went back to strictatime. At
         * the start, advice for strictatime comes before the first sample
         * is recorded: it is not the promise the change is judged by. The
         * first sample records the change, with the promise that stood
         * for noatime (here: one to go to relatime). */
        store_set_promise(s, key, &after);
        ok(h->promise.t == after.t, "advice for the policy the history holds is taken");
        {
                struct stats_promise early = { .t = T0 + 880, .atime = ATIME_RELATIME, .for_atime = ATIME_STRICT,
                                               .saving_per_min = 5555 };

                store_set_promise(s, key, &early);
                ok(h->promise.t == after.t, "advice for a policy not recorded yet is not");
        }
        {
                struct stats_sample x = { .t = T0 + 900, .has_policy = true, .atime = ATIME_STRICT };
                store_add(s, key, &x);
        }
        ok(h->change.t == T0 + 900 && h->change.from == ATIME_NOATIME && h->change.to == ATIME_STRICT &&
                   h->change.promise.t == after.t && h->change.promise.saving_per_min == 9,
           "a change found after a restart is recorded with the promise that stood before it");
        store_flush(s, T0 + 900, true);
        store_free(s);

        /* A damaged changes file is moved aside, the history kept. */
        {
                char path[256];
                FILE *f;

                snprintf(path, sizeof path, "%s/%s", dir, STORE_CHANGES);
                f = fopen(path, "w");
                fputs("{\"version\":1,\"histories\":[{\"key\":7}]}", f);
                fclose(f);
        }
        store_new(dir, sp, n, 0, &s);
        store_load(s, T0 + 1000, &rep);
        is_int((int) strv_length(rep.problems), 1, "a damaged changes file is reported");
        store_load_report_done(&rep);
        h = store_find(s, key);
        ok(h && h->change.t == 0, "and not trusted");
        ok(h && history_last_policy(h) && history_last_policy(h)->atime == ATIME_STRICT, "the history itself is kept");
        store_free(s);
        {
                char cmd[300];

                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        abort();
        }
}

/* Thread CPU time, in nanoseconds. */
static uint64_t cpu_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static void test_kept(void) {
        /* Short rings (the longest reaches back 6 hours): two hours of
         * strictatime, then noatime for eight hours, judged every ten
         * minutes as the tick pass would. */
        MountHistory *h = make("1min:1h, 10min:6h");
        int64_t tc = T0 + 2 * 3600, t;
        struct verdict v, pure;

        h->change = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 600);
        feed(h, T0, tc, ATIME_STRICT, 600, false);
        for (t = tc; t < tc + 8 * 3600; t += 600) {
                feed(h, t, t + 600, ATIME_NOATIME, 0, false);
                if (verdict_judge_kept(h, t + 600, 60, &v) < 0)
                        break;
        }
        is_int(verdict_judge(h, &h->change, t, 60, &pure), 0, "eight hours on: judged afresh");
        is_int(pure.state, VERDICT_TOO_LITTLE_BEFORE, "afresh, the rings no longer hold what came before");
        is_int(verdict_judge_kept(h, t, 60, &v), 0, "the verdict kept");
        is_int(v.state, VERDICT_MEASURED, "kept: still measured");
        ok(fabs(v.saved_per_min - 600) < 1, "saving what it saved (%.1f)", v.saved_per_min);
        ok(v.n_before >= VERDICT_MIN_POINTS, "from the buckets before it had (%u)", v.n_before);

        /* A new change: judged on its own. */
        h->change = change_at(t - 1800, ATIME_NOATIME, ATIME_RELATIME, 0);
        is_int(verdict_judge_kept(h, t, 60, &v), 0, "a newer change: judged");
        ok(v.state != VERDICT_MEASURED || fabs(v.saved_per_min - 600) > 1, "not with the old change's figures");
        history_free(h);

        /* A restart long after: the history holds nothing from before its
         * change. Judged once, as what the rings hold, and kept. */
        h = make("1min:1h, 10min:6h");
        h->change = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 600);
        feed(h, T0, tc, ATIME_STRICT, 600, false);
        feed(h, tc, tc + 8 * 3600, ATIME_NOATIME, 0, false);
        is_int(verdict_judge_kept(h, tc + 8 * 3600, 60, &v), 0, "beyond the rings: judged");
        is_int(v.state, VERDICT_TOO_LITTLE_BEFORE, "too little before, as they hold");
        feed(h, tc + 8 * 3600, tc + 9 * 3600, ATIME_NOATIME, 0, false);
        is_int(verdict_judge_kept(h, tc + 9 * 3600, 60, &pure), 0, "an hour later");
        ok(memcmp(&v, &pure, sizeof v) == 0, "the same verdict, kept");
        history_free(h);
}

/* The CPU a verdict costs, for a change a minute old and one a year old,
 * side by side (issue 43: a year-old change scanned every bucket since,
 * past the rings' reach; 60 such mounts took the daemon from 0.5% of a CPU
 * to 23%). Default rings; the year fed an hour at a time (the coarsest
 * ring's buckets), its last six hours a minute at a time. */
static void test_cost(void) {
        const unsigned calls = 1000;
        MountHistory *young = make("1min:6h, 10min:7d, 1h:90d"), *old = make("1min:6h, 10min:7d, 1h:90d");
        int64_t tc = T0 + 2 * 86400, now_young = tc + 60, now_old = tc + 365 * 86400;
        uint64_t t0, young_ns, old_ns = 0;
        unsigned n_old = 0;
        struct verdict v;

        young->change = change_at(tc, ATIME_STRICT, ATIME_NOATIME, 1000);
        old->change = young->change;
        feed(young, T0, tc, ATIME_STRICT, 1000, true);
        feed(young, tc, now_young, ATIME_NOATIME, 0, false);
        feed(old, T0, tc, ATIME_STRICT, 1000, true);
        for (int64_t t = tc; t < now_old - 6 * 3600; t += 3600)
                feed(old, t, t + 60, ATIME_NOATIME, 0, false);
        feed(old, now_old - 6 * 3600, now_old, ATIME_NOATIME, 0, false);

        t0 = cpu_ns();
        for (unsigned i = 0; i < calls; i++)
                (void) verdict_judge_kept(young, now_young, 60, &v);
        young_ns = cpu_ns() - t0;
        /* Stopped early where it is plainly dearer (a scan of a year at
         * every call would take minutes), the clock read every 50 calls
         * (a read costs about as much as a cheap verdict). */
        t0 = cpu_ns();
        while (n_old < calls && old_ns <= 4 * young_ns + 1000000) {
                for (unsigned k = 0; k < 50; k++, n_old++)
                        (void) verdict_judge_kept(old, now_old, 60, &v);
                old_ns = cpu_ns() - t0;
        }
        printf("# a verdict costs %.2f us for a change a minute old, %.2f us for one a year old (%u calls)\n",
             young_ns / 1e3 / calls, old_ns / 1e3 / (n_old ? n_old : 1), n_old);
        ok(n_old == calls && (double) old_ns / n_old <= 2.0 * young_ns / calls,
           "a change a year old costs no more than one a minute old");
        history_free(young);
        history_free(old);
}

int main(void) {
        test_as_promised();
        test_none();
        test_too_early();
        test_too_little_before();
        test_adjacent();
        test_stalled_and_mixed_buckets();
        test_store();
        test_kept();
        test_cost();
        return tap_done();
}
