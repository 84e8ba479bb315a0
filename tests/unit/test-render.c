/* test-render: atimectl's text from recorded replies (cli/render.c over
 * common/report-parse.c). tests/unit/fixtures holds replies a real atimed
 * gave (recorded by tests/client-compare.sh), variants of them made by
 * hand (every stage, mark and verdict the table and the advice can show),
 * and for each the text that atimectl printed before it parsed replies
 * into a Report: parsing and rendering must give that text byte for byte.
 * Then hostile replies: fields missing or of the wrong type, names with
 * control characters and bytes that are not UTF-8, numbers beyond any
 * range, thousands of mounts. A reply without what it cannot do without
 * is -EBADMSG; anything else renders, never crashes (ASan and UBSan run). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "cli.h"
#include "macro.h"
#include "metrics.h"
#include "render.h"
#include "report.h"
#include "../tap.h"

enum kind { STATUS, HISTORY, RECOMMEND, METRICS, PROBE, RELOAD_OK, RELOAD_ERROR };

/* One fixture: the reply (and the recommendations for metrics), how it is
 * rendered, and the text expected. */
struct golden {
        const char *reply, *recs;
        enum kind kind;
        const char *columns; /* status -o; NULL: the defaults */
        size_t width;
        bool ascii, no_legend, full;
        const char *expected;
        bool no_fstab; /* recorded where fstab had no entry for any mount */
};

#define ALL_COLUMNS "TARGET,FSTYPE,DEVICE,ATIME,PROBE,UPDATES/MIN,LAST-HOUR,DEV-WRITES"
#define VARIANT_COLUMNS "TARGET,DEVICE,ATIME,PROBE,UPDATES/MIN,LAST-HOUR,DEV-WRITES"

static const struct golden goldens[] = {
        { "status.json", NULL, STATUS, NULL, 80, false, false, false, "status-80.txt" },
        { "status.json", NULL, STATUS, NULL, 80, false, true, false, "status-80-no-legend.txt" },
        { "status.json", NULL, STATUS, "+DEVICE", 80, false, false, false, "status-80-plus.txt" },
        { "status.json", NULL, STATUS, ALL_COLUMNS, 80, false, false, true, "status-all-full.txt" },
        { "status.json", NULL, STATUS, NULL, 60, false, false, false, "status-60.txt" },
        { "status.json", NULL, STATUS, NULL, 200, false, false, false, "status-200.txt" },
        { "status.json", NULL, STATUS, NULL, 120, true, false, false, "status-ascii-120.txt" },
        { "status-variants.json", NULL, STATUS, VARIANT_COLUMNS, 80, false, false, false, "status-variants-80.txt" },
        { "status-variants.json", NULL, STATUS, VARIANT_COLUMNS, 200, false, false, false, "status-variants-200.txt" },
        { "history-alpha.json", NULL, HISTORY, NULL, 100, false, false, false, "history-alpha.txt" },
        { "history-beta.json", NULL, HISTORY, NULL, 100, false, false, false, "history-beta.txt" },
        { "history-beta.json", NULL, HISTORY, NULL, 70, true, false, false, "history-beta-ascii-70.txt" },
        { "history-ext.json", NULL, HISTORY, NULL, 100, false, false, false, "history-ext.txt" },
        { "history-variants.json", NULL, HISTORY, NULL, 100, false, false, false, "history-variants.txt" },
        { "history-variants.json", NULL, HISTORY, NULL, 100, true, false, false, "history-variants-ascii.txt" },
        { "recommendations.json", NULL, RECOMMEND, NULL, 80, false, false, false, "recommend.txt" },
        { "recommendations.json", NULL, RECOMMEND, NULL, 80, false, true, false, "recommend-no-legend.txt" },
        { "recommendations-variants.json", NULL, RECOMMEND, NULL, 100, false, false, false, "recommendations-variants.txt",
          true },
        { "status-plain.json", "recommendations.json", METRICS, NULL, 80, false, false, false, "metrics.txt" },
        { "probe-alpha.json", NULL, PROBE, NULL, 80, false, false, false, "probe-alpha.txt" },
        { "probe-ro.json", NULL, PROBE, NULL, 80, false, false, false, "probe-ro.txt" },
        { "reload.json", NULL, RELOAD_OK, NULL, 80, false, false, false, "reload.txt" },
        { "reload-error.json", NULL, RELOAD_ERROR, NULL, 80, false, false, false, "reload-error.txt" },
};

static char *fixture(const char *name) {
        const char *top = getenv("top_srcdir");
        char *p;

        if (asprintf(&p, "%s/tests/unit/fixtures/%s", top ? top : ".", name) < 0)
                abort();
        return p;
}

static char *read_text(const char *path) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = fopen(path, "re");
        FILE *m = open_memstream(&buf, &len);
        char chunk[4096];
        size_t n;

        if (!f || !m)
                abort();
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
                fwrite(chunk, 1, n, m);
        fclose(f);
        fclose(m);
        return buf;
}

static json_object *read_json(const char *name) {
        char *path = fixture(name);
        json_object *o = json_object_from_file(path);

        if (!o)
                printf("# cannot read %s\n", path);
        free(path);
        return o;
}

/* s with every 'from' replaced by 'to' (the drift notes name the fstab
 * read: the fixture's here, /etc/fstab when the text was recorded). */
static char *replace_all(const char *s, const char *from, const char *to) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);

        for (const char *p; (p = strstr(s, from)); s = p + strlen(from))
                fprintf(m, "%.*s%s", (int) (p - s), s, to);
        fputs(s, m);
        fclose(m);
        return buf;
}

/* What the renderer of kind writes for r, in the context of g. */
static int render(const struct golden *g, const Report *r, char **ret) {
        char *buf = NULL, *fstab = fixture(g->no_fstab ? "no-such-fstab" : "fstab");
        size_t len = 0, cols[2 * _COL_MAX], n_cols = ELEMENTSOF(status_default_columns);
        FILE *m = open_memstream(&buf, &len);
        RenderContext c = { .out = m, .err = m, .unicode = !g->ascii, .legend = !g->no_legend, .full = g->full,
                            .width = g->width, .fstab = fstab, .columns = cols };
        int q = 0;

        memcpy(cols, status_default_columns, sizeof status_default_columns);
        if (g->columns && status_parse_columns(g->columns, cols, &n_cols) < 0)
                abort();
        c.n_columns = n_cols;
        c.target = g->kind == PROBE ? r->mounts[0].target : NULL;
        switch (g->kind) {
        case STATUS: q = render_status(&c, r); break;
        case HISTORY: q = render_history(&c, r); break;
        case RECOMMEND: q = render_recommendations(&c, r); break;
        case METRICS: q = metrics_write(m, r); break;
        case PROBE: q = render_probe(&c, r); break;
        case RELOAD_OK: q = render_reload(&c, r, true); break;
        case RELOAD_ERROR: q = render_reload(&c, r, false); break;
        }
        fclose(m);
        *ret = replace_all(buf, fstab, "/etc/fstab");
        free(buf);
        free(fstab);
        return q;
}

static int parse(enum kind kind, json_object *reply, json_object *recs, Report **ret) {
        switch (kind) {
        case STATUS: return report_from_status(reply, ret);
        case METRICS: return report_from_json(reply, recs, ret);
        case HISTORY: return report_from_history(reply, ret);
        case RECOMMEND: return report_from_recommendations(reply, ret);
        case PROBE: return report_from_probe(reply, ret);
        default: return report_from_reload(reply, ret);
        }
}

static void test_golden(const struct golden *g) {
        json_object *reply = read_json(g->reply), *recs = g->recs ? read_json(g->recs) : NULL;
        char *path = fixture(g->expected), *want = read_text(path), *got = NULL;
        Report *r = NULL;
        int q = parse(g->kind, reply, recs, &r);

        is_int(q, 0, "%s parses", g->reply);
        if (q == 0) {
                is_int(render(g, r, &got), 0, "%s renders", g->reply);
                ok(got && streq(got, want), "%s: the text of %s", g->reply, g->expected);
                if (got && !streq(got, want))
                        printf("# got:\n%s# expected:\n%s", got, want);
        }
        report_free(r);
        json_object_put(reply);
        json_object_put(recs);
        free(got);
        free(want);
        free(path);
}

/* The values behind the text, read as the replies have them. */
static void test_values(void) {
        json_object *st = read_json("status-variants.json"), *h = read_json("history-variants.json");
        json_object *rc = read_json("recommendations-variants.json"), *pr = read_json("probe-ro.json");
        Report *r = NULL, *rh = NULL, *rr = NULL, *rp = NULL;

        is_int(report_from_json(st, NULL, &r), 0, "status variants parse");
        is_int(r->n_mounts, 18, "18 mounts");
        is_str(r->mounts[1].progress.stage, "walking", "a walk in progress");
        is_int(r->mounts[1].progress.walked, 120, "its inodes walked");
        is_int(r->mounts[1].progress.eta_s, 480, "its time left");
        ok(r->mounts[3].activity.coverage == 0.42 && r->mounts[3].activity.ready_in_s == 240, "a first walk's coverage");
        ok(!r->mounts[9].reachable && r->mounts[10].reachable, "over-mounted or not");
        is_int(r->mounts[6].probe.matches_table, 0, "a mismatch");
        is_str(r->mounts[6].probe.explanation, "the filesystem forces noatime", "and its explanation");
        is_int(r->mounts[7].probe.matches_table, -1, "null: unknown");
        ok(r->mounts[3].have_history && r->mounts[3].history.n == 57 && !r->mounts[3].history.present[0] &&
                   r->mounts[3].history.value[53] == 12000,
           "the last hour, gaps and all");
        is_int(report_from_history(h, &rh), 0, "history variants parse");
        is_int(rh->history.n_points, 8, "8 points");
        is_int(rh->history.points[1].samples, 0, "a gap");
        ok(!rh->history.updates.present[3] && rh->history.iops.present[3], "a point measured by the device alone");
        is_str(rh->history.policy_change.state, "measured", "the change measured");
        ok(rh->history.policy_change.have_saved_ci && rh->history.policy_change.saved_lo == 17000, "its interval");
        is_int(rh->history.n_resolutions, 2, "the resolutions kept");
        is_int(report_from_recommendations(rc, &rr), 0, "recommendation variants parse");
        is_int(rr->mounts[rr->n_mounts - 1].advice.n_reasons, 3, "every reason, whatever its type");
        is_str(rr->mounts[rr->n_mounts - 1].advice.reasons[1], "42", "a number as its JSON text");
        ok(rr->mounts[rr->n_mounts - 1].advice.reasons[2] == NULL, "null as NULL");
        is_str(rr->mounts[rr->n_mounts - 1].advice.consumers[0].need, "strict", "a reader's need");
        is_int(report_from_probe(pr, &rp), 0, "a probe parses");
        ok(!rp->mounts[0].probe.verified && rp->mounts[0].probe.matches_table == -1, "unverified, no table verdict");
        report_free(r);
        report_free(rh);
        report_free(rr);
        report_free(rp);
        json_object_put(st);
        json_object_put(h);
        json_object_put(rc);
        json_object_put(pr);
}

/* The text of a hostile reply, parsed (q: what the parse returned) and,
 * where it parsed, rendered as kind; NULL where it did not parse. */
static char *hostile(enum kind kind, const char *json, int *q) {
        static const struct golden g = { .kind = STATUS, .columns = "TARGET,FSTYPE,ATIME,PROBE,UPDATES/MIN,DEVICE,"
                                                                    "LAST-HOUR,DEV-WRITES", .width = 80, .full = true };
        json_object *o = json_tokener_parse(json);
        struct golden k = g;
        Report *r = NULL;
        char *text = NULL;

        if (!o)
                abort();
        k.kind = kind;
        *q = parse(kind, o, NULL, &r);
        if (*q == 0 && render(&k, r, &text) < 0) {
                free(text);
                text = NULL;
        }
        report_free(r);
        json_object_put(o);
        return text;
}

static void test_malformed(void) {
        static const struct {
                enum kind kind;
                const char *json, *what;
        } bad[] = {
                { STATUS, "{}", "a status without mounts" },
                { STATUS, "{\"mounts\": 5}", "mounts that are no list" },
                { STATUS, "{\"mounts\": [5]}", "a mount that is no object" },
                { STATUS, "{\"mounts\": [{\"target\": 7}]}", "a target that is no string" },
                { STATUS, "{\"mounts\": [{\"fstype\": \"ext4\"}]}", "a mount without a target" },
                { RECOMMEND, "{\"recommendations\": {}}", "recommendations that are no list" },
                { RECOMMEND, "{\"recommendations\": [{\"fstype\": \"x\"}]}", "a recommendation without a target" },
                { HISTORY, "{\"target\": \"/x\"}", "a history without points" },
                { HISTORY, "{\"points\": {}}", "points that are no list" },
                { PROBE, "{\"target\": \"/x\"}", "a probe reply without a probe" },
                { PROBE, "{\"probe\": \"ok\"}", "a probe that is no object" },
        };
        int q;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *t = hostile(bad[i].kind, bad[i].json, &q);

                is_int(q, -EBADMSG, "%s: -EBADMSG", bad[i].what);
                free(t);
        }
}

/* The words of the first line under the header, one space between each. */
static char *first_row(const char *text) {
        const char *p = text ? strchr(text, '\n') : NULL;
        char *row = calloc(1, p ? strlen(p) + 1 : 1), *o = row;

        for (p = p ? p + 1 : ""; *p && *p != '\n'; p++)
                if (*p != ' ' || (o > row && o[-1] != ' '))
                        *o++ = *p;
        while (o > row && o[-1] == ' ')
                *--o = 0;
        return row;
}

static void test_wrong_types(void) {
        int q;
        char *t = hostile(STATUS,
                          "{\"mounts\": [{\"target\": \"/w\", \"mount_id\": \"x\", \"atime\": 5, \"fstype\": [], "
                          "\"probe\": \"yes\", \"activity\": [1], \"progress\": {\"stage\": 7}, \"history\": \"no\", "
                          "\"device\": 3, \"reachable\": \"no\", \"stalled\": \"yes\", \"read_only\": 1}]}",
                          &q);
        char *row = first_row(t);

        is_int(q, 0, "fields of the wrong type: parsed");
        is_str(row, "/w - ? - - - - -", "and shown as unknown");
        ok(t && strstr(t, "1 mount: 0 strictatime, 0 relatime, 0 noatime.\n"), "counted as no policy");
        free(row);
        free(t);
        t = hostile(RECOMMEND,
                    "{\"recommendations\": [{\"target\": \"/r\", \"reasons\": \"x\", \"consumers\": [5, {\"need\": 7}], "
                    "\"current\": [], \"change\": \"yes\", \"policy_change\": {\"at\": \"x\"}}]}",
                    &q);
        is_int(q, 0, "a recommendation of the wrong types: parsed");
        is_str(t, "/r (-): keep -  [confidence -, 0 seconds measured]\n    - reads atime (-): - [-]\n"
                  "    - reads atime (-): - [-]\n\nNothing to change.\n",
               "and shown as unknown");
        free(t);
        /* atimectl before the Report aborted in json-c on this one. */
        t = hostile(RECOMMEND, "{\"recommendations\": [{\"target\": \"/a\", \"reasons\": [1e308], \"consumers\": \"x\"}]}",
                    &q);
        is_str(t, "/a (-): keep -  [confidence -, 0 seconds measured]\n    - 1e308\n\nNothing to change.\n",
               "consumers that are no list: none");
        free(t);
        {
                json_object *o = json_tokener_parse("{\"target\": \"/t\", \"reason\": 5, \"parameter\": \"resolution\"}");
                Report *e = NULL;

                is_int(report_from_error(o, &e), 0, "an error reply's parameters parse");
                ok(e && streq_ptr(e->error.target, "/t") && !e->error.reason && streq_ptr(e->error.parameter, "resolution"),
                   "each a string or NULL");
                report_free(e);
                json_object_put(o);
        }
        t = hostile(RELOAD_OK, "{\"config\": 5, \"errors\": \"x\"}", &q);
        is_str(t, "Configuration reloaded from the built-in defaults.\n", "a reload's config of the wrong type");
        free(t);
}

static void test_oversized(void) {
        int q;
        char *t = hostile(
                STATUS,
                "{\"started_at\": 9e18, \"uptime_s\": 9e18, \"mounts\": [{\"target\": \"/o\", \"mount_id\": 1e300, "
                "\"atime\": \"relatime\", \"activity\": {\"atime_inodes_per_min\": 1e308, \"ci95\": [-1e308, 1e308], "
                "\"atime_updates_per_min\": 1e308, \"updates_ci95\": [-1e308, 1e308], \"coverage\": -5, "
                "\"ready_in_s\": 1e300, \"interval_s\": 1e308, \"sample_size\": 1e300}, \"progress\": {\"stage\": "
                "\"walking\", \"walked\": 1e300, \"inodes\": 1, \"eta_s\": 1e300}, \"history\": [1e308, -1e308, 1e308], "
                "\"device\": {\"name\": \"d\", \"write_iops\": 1e308, \"write_kib_per_s\": -1e308, \"writes_total\": "
                "1e300, \"written_bytes_total\": -5}}, {\"target\": \"/o\", \"mount_id\": -1e300, \"activity\": null, "
                "\"progress\": {\"stage\": \"walking\", \"walked\": 1e300, \"inodes\": 1, \"eta_s\": 1e300}}]}",
                &q);

        is_int(q, 0, "numbers beyond any range: parsed");
        ok(t && strstr(t, "/o (mount id 2147483647)") && strstr(t, "/o (mount id -1)"), "mount ids held in range");
        ok(t && strstr(t, "walking 99% ~"), "a walk past its end shows 99%%");
        free(t);
        t = hostile(HISTORY,
                    "{\"target\": \"/h\", \"resolution_s\": -5, \"since\": 1e300, \"until\": -1e300, \"points\": [{\"t\": "
                    "1e300, \"samples\": \"x\", \"atime_updates_per_min\": 1e308, \"atime\": \"noatime\", "
                    "\"policy_changed\": true}, {\"t\": -1e300, \"samples\": 1e300, \"atime\": \"relatime\"}], "
                    "\"policy_change\": {\"at\": 9223372036854775807, \"state\": \"measured\", \"current\": \"noatime\", "
                    "\"previous\": \"relatime\", \"saved_updates_per_min\": 1e308, \"saved_ci95\": [\"a\", null], "
                    "\"resolution_s\": 1e300}, \"resolutions_s\": [1e300, \"x\", null]}",
                    &q);
        is_int(q, 0, "a history beyond any range: parsed");
        ok(t && strstr(t, "  ?  policy changed within the point\n") && strstr(t, "  ?  policy noatime -> relatime\n"),
           "a time that is no time: '?'");
        ok(t && strstr(t, "Policy change: noatime since ? (was relatime)"), "the change's time too");
        free(t);
        t = hostile(PROBE, "{\"target\": \"/p\", \"probe\": {\"verified\": true, \"effective\": \"noatime\", \"at\": 1e300, "
                           "\"matches_table\": \"no\"}}", &q);
        is_str(t, "/p: noatime in force (verified ?)\n  The mount table says otherwise: the filesystem or the kernel "
                  "overrides it.\n", "a probe at no time");
        free(t);
}

/* Whether text is there and holds no control character but newlines. */
static bool no_controls(const char *t) {
        for (const char *p = t; p && *p; p++)
                if ((*p != '\n' && (unsigned char) *p < 0x20) || *p == 0x7f)
                        return false;
        return t != NULL;
}

/* Names as atimed's protocol escapes them, and raw bytes it never sends:
 * nothing reaches the terminal that could drive it. */
static void test_names(void) {
        int q;
        char *t = hostile(STATUS,
                          "{\"mounts\": [{\"target\": \"/n/\xff\xfe\x01\x1b[2J\\u0007\\u202e\\u009b\", \"fstype\": "
                          "\"\\u001b]0;x\\u0007\"}, {\"target\": \"/srv/bad\\\\xffname\\\\x09here\"}]}",
                          &q);
        bool clean = no_controls(t);

        is_int(q, 0, "names with control characters and bytes that are not UTF-8: parsed");
        ok(clean, "no control character in the text");
        ok(t && strstr(t, "\\x1b[2J") && strstr(t, "\\x07"), "each one written as an escape");
        ok(t && !strstr(t, "\xe2\x80\xae") && !strstr(t, "\xc2\x9b"), "nor a bidi override or C1 control");
        ok(t && strstr(t, "/srv/bad\\xffname\\x09here"), "a name in protocol form as it is");
        free(t);
}

/* NaN and Infinity, which json-c reads (strict or not), and numbers past
 * a double's range: unknown, never "inf" or "nan" in a table or a chart. */
static void test_non_finite(void) {
        int q;
        char *t = hostile(STATUS,
                          "{\"mounts\": [{\"target\": \"/f\", \"activity\": {\"atime_inodes_per_min\": NaN, \"ci95\": "
                          "[NaN, Infinity], \"atime_updates_per_min\": Infinity, \"updates_ci95\": [-Infinity, NaN], "
                          "\"coverage\": NaN, \"interval_s\": 1e999}, \"history\": [NaN, Infinity, 1], \"device\": "
                          "{\"name\": \"d\", \"write_iops\": NaN, \"write_kib_per_s\": 1}}, {\"target\": \"/g\", "
                          "\"activity\": {\"atime_inodes_per_min\": 5, \"ci95\": [4, 6], \"atime_updates_per_min\": "
                          "-Infinity, \"updates_ci95\": [4, 6]}}]}",
                          &q);

        is_int(q, 0, "NaN and Infinity: parsed");
        ok(t && !strcasestr(t, "inf") && !strcasestr(t, "nan"), "and never shown");
        free(t);
        t = hostile(METRICS, "{\"mounts\": [{\"target\": \"/f\", \"atime_updates_total\": 1e300, \"activity\": "
                             "{\"atime_inodes_per_min\": -1e300, \"ci95\": [1e300, 2], \"interval_s\": 1e300}}]}",
                    &q);
        is_int(q, 0, "numbers past int64 for the metrics: parsed");
        ok(t && strstr(t, "1e+300"), "and written as doubles (no cast out of range)");
        free(t);
}

/* An error reply's parameters of any type: one line, as JSON text where
 * they are no object (json-c's foreach dereferenced NULL on an array). */
static char *remote_error(const char *error, const char *params) {
        json_object *o = params ? json_tokener_parse(params) : NULL;
        FILE *tf = tmpfile();
        char *buf = calloc(1, 4096);
        int saved = dup(STDERR_FILENO), rc;

        if (!tf || !buf || saved < 0)
                abort();
        fflush(stderr);
        dup2(fileno(tf), STDERR_FILENO);
        rc = fail_remote(error, o);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        rewind(tf);
        if (fread(buf, 1, 4095, tf) == 0)
                buf[0] = 0;
        fclose(tf);
        json_object_put(o);
        is_int(rc, EXIT_FAIL, "%s: a failure", error);
        return buf;
}

/* atimectl call's text reply (an interface description), line by line:
 * it was written raw, escape sequences and all. */
static void test_call_text(void) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);

        print_text(m, "line1\x1b]0;pwned\x07\n\x1b[2Jline2\xe2\x80\xae\n\nlast");
        fclose(m);
        is_str(buf, "line1\\x1b]0;pwned\\x07\n\\x1b[2Jline2\\u202e\n\nlast\n",
               "a text reply: its lines kept, their controls escaped, a final newline");
        free(buf);
        m = open_memstream(&buf, &len);
        print_text(m, "");
        fclose(m);
        is_str(buf, "\n", "an empty one: an empty line");
        free(buf);
}

/* atimectl metrics on a terminal: a label's controls escaped (a user's
 * FUSE mount may be named with them); into a pipe, the text as it is. */
static void test_metrics_terminal(void) {
        json_object *o = json_tokener_parse("{\"mounts\": [{\"target\": \"/tmp/\\u001b]0;x\\u0007\"}]}");
        Report *r = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);

        ok(o && report_from_status(o, &r) == 0 && print_metrics(m, r, true) == 0, "metrics for a terminal");
        fclose(m);
        ok(buf && strstr(buf, "mountpoint=\"/tmp/\\x1b]0;x\\x07\"") && !strchr(buf, '\x1b'), "its label escaped");
        free(buf);
        m = open_memstream(&buf, &len);
        ok(print_metrics(m, r, false) == 0, "metrics for a pipe");
        fclose(m);
        ok(buf && strstr(buf, "mountpoint=\"/tmp/\x1b]0;x\x07\""), "as Prometheus reads it");
        free(buf);
        report_free(r);
        json_object_put(o);
}

/* A drift's commands are to be copied: a mount point with a space (fstab's
 * \040) or a shell's character is one quoted word; a plain one as before. */
static void test_drift_quoting(void) {
        char path[] = "/tmp/test-render-fstab-XXXXXX", note[8192];
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

        ok(f && fputs("/dev/a /srv/my\\040disk ext4 relatime 0 2\n/dev/b /srv/$(x) ext4 relatime 0 2\n"
                      "/dev/c /srv/plain ext4 relatime 0 2\n", f) >= 0 && fclose(f) == 0, "an fstab of odd mount points");
        ok(fstab_drift(path, "/srv/my disk", "noatime", false, note, sizeof note) > 0 &&
                   strstr(note, "atimectl fstab --set '/srv/my disk=noatime' --write; or undo it: atimectl remount "
                                "'/srv/my disk' relatime"),
           "a space: quoted (%s)", note);
        ok(fstab_drift(path, "/srv/$(x)", "noatime", false, note, sizeof note) > 0 &&
                   strstr(note, "--set '/srv/$(x)=noatime' --write; or undo it: atimectl remount '/srv/$(x)' relatime"),
           "a command substitution: quoted (%s)", note);
        ok(fstab_drift(path, "/srv/plain", "noatime", false, note, sizeof note) > 0 &&
                   strstr(note, "--set /srv/plain=noatime --write; or undo it: atimectl remount /srv/plain relatime"),
           "a plain one as it is (%s)", note);
        unlink(path);
}

static void test_remote_errors(void) {
        char *t = remote_error("x.Y", "[1, \"a\\u001b\"]");

        is_str(t, "atimectl: x.Y [ 1, \"a\\u001b\" ]\n", "parameters that are a list");
        free(t);
        t = remote_error("x.Y", "\"s\"");
        is_str(t, "atimectl: x.Y s\n", "parameters that are a string");
        free(t);
        t = remote_error("x.Y", NULL);
        is_str(t, "atimectl: x.Y\n", "no parameters");
        free(t);
        t = remote_error("x.Y", "{\"k\": \"v\"}");
        is_str(t, "atimectl: x.Y k=v\n", "an object, as before");
        free(t);
}

/* Every string of a history reply that reaches the text: the policies of
 * its points and why it has none were written raw. */
static void test_history_strings(void) {
        int q;
        char *t = hostile(HISTORY,
                          "{\"target\": \"/h\", \"resolution_s\": 60, \"points\": [{\"t\": 60, \"samples\": 1, "
                          "\"atime\": \"rel\\u001b[31m\"}, {\"t\": 120, \"samples\": 1, \"atime\": \"no\\u001b[2J\"}]}",
                          &q);
        bool clean = no_controls(t);

        is_int(q, 0, "a history whose policies hold control characters: parsed");
        ok(clean, "no control character in the text");
        ok(t && strstr(t, "policy rel\\x1b[31m -> no\\x1b[2J"), "each one written as an escape");
        free(t);
        t = hostile(HISTORY, "{\"target\": \"/h\", \"reason\": \"x\\u001b]0;evil\\u0007\", \"points\": []}", &q);
        is_str(t, "/h: atime updates per minute (points of 0)\nNo history in that period yet: x\\x1b]0;evil\\x07.\n",
               "why there is no history, escaped");
        free(t);
}

/* Targets that read like the note the table adds: two mounts at
 * "(over-mounted)" made atimectl write before its label (ASan: heap
 * overflow); the note comes from the mount, never from the text. */
static void test_label_notes(void) {
        int q;
        char *t = hostile(STATUS,
                          "{\"mounts\": [{\"target\": \"(over-mounted)\", \"mount_id\": 1}, {\"target\": "
                          "\"(over-mounted)\", \"mount_id\": 2}, {\"target\": \"/x (over-mounted)\", \"mount_id\": 3}, "
                          "{\"target\": \"/x\", \"mount_id\": 4, \"reachable\": false}]}",
                          &q);

        is_int(q, 0, "targets that read like the over-mounted note: parsed");
        ok(t && strstr(t, "(over-mounted) (mount id 1)") && strstr(t, "(over-mounted) (mount id 2)"),
           "each told apart by its id, as a target");
        ok(t && strstr(t, "/x (over-mounted) (mount id 3)") && strstr(t, "/x (over-mounted, mount id 4)"),
           "only the mount that is over-mounted says so");
        free(t);
}

/* A reply of many mounts: every one a row. */
static void test_many(void) {
        char *buf = NULL, *t;
        size_t len = 0, lines = 0;
        FILE *m = open_memstream(&buf, &len);
        int q;

        fputs("{\"mounts\": [", m);
        for (int i = 0; i < 5000; i++)
                fprintf(m, "%s{\"target\": \"/m/%d\", \"mount_id\": %d, \"atime\": \"noatime\", \"history\": [%d, null]}",
                        i ? ", " : "", i / 2, i, i);
        fputs("]}", m);
        fclose(m);
        t = hostile(STATUS, buf, &q);
        for (const char *p = t; p && *p; p++)
                lines += *p == '\n';
        is_int(q, 0, "5000 mounts: parsed");
        is_int(lines, 5000 + 1 + 3, "a row each, the header and the legend");
        ok(t && strstr(t, "/m/2499 (mount id 4999)"), "pairs told apart by their ids");
        free(t);
        free(buf);
}

int main(void) {
        setenv("TZ", "UTC", 1);
        tzset();
        for (size_t i = 0; i < ELEMENTSOF(goldens); i++)
                test_golden(&goldens[i]);
        test_values();
        test_malformed();
        test_wrong_types();
        test_oversized();
        test_names();
        test_label_notes();
        test_history_strings();
        test_non_finite();
        test_remote_errors();
        test_call_text();
        test_metrics_terminal();
        test_drift_quoting();
        test_many();
        return tap_done();
}
