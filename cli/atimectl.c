/* atimectl: the client of atimed's control socket. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "chart.h"
#include "cli.h"
#include "escape.h"
#include "metrics.h"
#include "parse-util.h"
#include "protocol.h"
#include "report.h"
#include "strv.h"
#include "table.h"
#include "varlink.h"


/* "relatime,lazytime,ro", as mount(8) would write it. */
static void format_policy(json_object *mnt, char *buf, size_t len) {
        const char *atime = get_str(mnt, F_ATIME);

        snprintf(buf, len, "%s%s%s%s", atime ? atime : "?",
                 get_bool(mnt, F_NODIRATIME) && !streq_ptr(atime, ATIME_NOATIME_NAME) ? ",nodiratime" : "",
                 get_bool(mnt, F_LAZYTIME) ? ",lazytime" : "", get_bool(mnt, F_READ_ONLY) ? ",ro" : "");
}

/* "walking 12% ~8m", "measuring ~40s": what a mount without a figure waits
 * for; brief: without the time left ("walking 12%", "measuring"). */
static void format_progress(json_object *mnt, bool brief, char *buf, size_t len) {
        json_object *p;
        const char *stage;
        double walked = 0, inodes = 0, eta = -1;
        char pct[16] = "", when[24] = "";

        if (!json_object_object_get_ex(mnt, F_PROGRESS, &p) || !json_object_is_type(p, json_type_object) ||
            !(stage = get_str(p, F_STAGE))) {
                snprintf(buf, len, "-");
                return;
        }
        /* Mounts never sampled say why in words. */
        if (streq(stage, STAGE_FILE_MOUNT) || streq(stage, STAGE_OVERMOUNTED)) {
                snprintf(buf, len, "%s", streq(stage, STAGE_FILE_MOUNT) ? "file mount" : "over-mounted");
                return;
        }
        (void) get_double(p, F_WALKED, &walked);
        if (get_double(p, F_INODES, &inodes) && inodes > 0 && streq(stage, STAGE_WALKING))
                snprintf(pct, sizeof pct, " %.0f%%", fmin(99, 100 * walked / inodes));
        if (!brief && get_double(p, F_ETA_S, &eta) && eta >= 0) {
                char d[16];

                format_duration(d, sizeof d, (uint64_t) fmax(1, eta) * USEC_PER_SEC);
                snprintf(when, sizeof when, " ~%s", d);
        }
        snprintf(buf, len, "%s%s%s", stage, pct, when);
}

/* The mark after a figure: '*' where the kernel counted it, '!' where the
 * sample and the kernel's count disagree (the legend says so). */
static const char *activity_mark(json_object *a) {
        if (get_bool(a, F_COUNTER_DISAGREES))
                return "!";
        return streq_ptr(get_str(a, F_FIGURE_SOURCE), "kernel_count") ? "*" : "";
}

/* While the first walk runs: " 12% ~4min", the share of the filesystem
 * the figure rests on so far and the time until it rests on all of it
 * (brief: the share alone). */
static void format_coverage(json_object *a, bool brief, char *buf, size_t len) {
        double cov = 1, ready = -1;
        char d[16] = "";

        buf[0] = 0;
        if (!get_double(a, F_COVERAGE, &cov) || cov >= 1)
                return;
        if (!brief && get_double(a, F_READY_IN_S, &ready) && ready >= 0) {
                d[0] = ' ';
                d[1] = '~';
                format_duration(d + 2, sizeof d - 2, (uint64_t) fmax(1, ready) * USEC_PER_SEC);
        }
        snprintf(buf, len, " %.0f%%%s", fmin(99, floor(100 * cov)), d);
}

/* Whether the figure's interval says no more than its lower bound (a
 * first walk's part, the sample alone behind it: report.h). */
static bool activity_lower_bound_only(json_object *a) {
        double cov = 1;

        (void) get_double(a, F_COVERAGE, &cov);
        return report_figure_lower_bound_only(cov, get_str(a, F_FIGURE_SOURCE));
}

/* "3000 (2870-3130)", "0", "walking 12% ~8m" before the first interval,
 * "≥1200, rising 3% ~4m" for a first walk's figure whose upper bound is
 * the unwalked inodes' worst case; brief: the figure without its
 * interval, the progress without its time ("3000", "walking 12%",
 * "≥1200 3%"), for a table that must give way. */
static void format_activity(json_object *mnt, bool brief, char *buf, size_t len) {
        json_object *a, *ci;
        double v, lo, hi;
        char b1[16], b2[16], b3[16], cov[40];
        const char *mark;

        if (get_bool(mnt, F_STALLED)) {
                snprintf(buf, len, "stalled");
                return;
        }
        if (!json_object_object_get_ex(mnt, F_ACTIVITY, &a) || !json_object_is_type(a, json_type_object) ||
            !get_double(a, F_ATIME_UPDATES_PER_MIN, &v)) {
                format_progress(mnt, brief, buf, len);
                return;
        }
        mark = activity_mark(a);
        format_coverage(a, brief, cov, sizeof cov);
        if (activity_lower_bound_only(a) && json_object_object_get_ex(a, F_UPDATES_CI95, &ci) &&
            json_object_array_length(ci) == 2) {
                /* "0 (0-1.49e9)" tells a person nothing: at least the
                 * lower bound, which rises as the walk goes on. */
                chart_format_count(b2, sizeof b2, json_object_get_double(json_object_array_get_idx(ci, 0)));
                snprintf(buf, len, "%s%s%s%s%s", chart_unicode() ? "≥" : ">=", b2, mark, brief ? "" : ", rising", cov);
                return;
        }
        if (brief || !json_object_object_get_ex(a, F_UPDATES_CI95, &ci) || json_object_array_length(ci) != 2) {
                snprintf(buf, len, "%s%s%s", chart_format_count(b1, sizeof b1, v), mark, cov);
                return;
        }
        lo = json_object_get_double(json_object_array_get_idx(ci, 0));
        hi = json_object_get_double(json_object_array_get_idx(ci, 1));
        chart_format_count(b1, sizeof b1, v);
        chart_format_count(b2, sizeof b2, lo);
        chart_format_count(b3, sizeof b3, hi);
        if (streq(b2, b3))
                snprintf(buf, len, "%s%s%s", b1, mark, cov); /* nothing uncertain at this precision */
        else
                snprintf(buf, len, "%s%s (%s-%s)%s", b1, mark, b2, b3, cov);
}

/* "ok", "MISMATCH: noatime", "unverified", "-" before the first probe;
 * "n/a (...)" where no probe is made. */
static void format_probe(json_object *mnt, char *buf, size_t len) {
        json_object *p, *prog;
        const char *eff, *stage = NULL;

        if (!json_object_object_get_ex(mnt, F_PROBE, &p) || !json_object_is_type(p, json_type_object)) {
                snprintf(buf, len, "-");
                return;
        }
        if (json_object_object_get_ex(mnt, F_PROGRESS, &prog) && json_object_is_type(prog, json_type_object))
                stage = get_str(prog, F_STAGE);
        eff = get_str(p, F_EFFECTIVE);
        if (get_bool(mnt, F_READ_ONLY))
                snprintf(buf, len, "n/a (ro)");
        else if (streq_ptr(stage, STAGE_FILE_MOUNT))
                snprintf(buf, len, "n/a (file)");
        else if (streq_ptr(stage, STAGE_OVERMOUNTED))
                snprintf(buf, len, "n/a (hidden)");
        else if (!get_bool(p, F_VERIFIED) || !eff)
                snprintf(buf, len, "unverified");
        else if (!get_bool(p, F_MATCHES_TABLE))
                snprintf(buf, len, "MISMATCH: %s%s", eff, get_str(p, F_EXPLANATION) ? " (+A)" : "");
        else
                snprintf(buf, len, "ok");
}

static void format_device(json_object *mnt, char *name, size_t nlen, char *io, size_t iolen) {
        json_object *d;
        const char *n;
        double iops, kib;
        char b1[16], b2[16];

        snprintf(io, iolen, "-");
        if (!json_object_object_get_ex(mnt, F_DEVICE, &d) || !(n = get_str(d, F_NAME))) {
                const char *src = get_str(mnt, F_SOURCE);
                snprintf(name, nlen, "%s", src ? src : "-");
                return;
        }
        snprintf(name, nlen, "%s", n);
        if (get_double(d, F_WRITE_IOPS, &iops) && get_double(d, F_WRITE_KIB_PER_S, &kib))
                snprintf(io, iolen, "%s/s %s KiB/s", chart_format_count(b1, sizeof b1, iops), chart_format_count(b2, sizeof b2, kib));
}

/* Values of a JSON array of numbers and nulls, as a series. */
struct owned_series {
        struct series s;
        double *v;
        bool *p;
};

static void owned_series_done(struct owned_series *o) {
        free(o->v);
        free(o->p);
}

static int series_from_points(json_object *arr, const char *field, struct owned_series *ret) {
        size_t n = json_object_array_length(arr);

        *ret = (struct owned_series) { .v = calloc(n ? n : 1, sizeof(double)), .p = calloc(n ? n : 1, sizeof(bool)) };
        if (!ret->v || !ret->p)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(arr, i), *v = e;

                if (field && !json_object_object_get_ex(e, field, &v))
                        v = NULL;
                if (v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
                        ret->v[i] = json_object_get_double(v);
                        ret->p[i] = true;
                }
        }
        ret->s = (struct series) { .value = ret->v, .present = ret->p, .n = n };
        return 0;
}

/* The last hour in 20 cells of 3 minutes, or 10 of 6 in a terminal under
 * 100 columns, where the mount points need the room. */
static size_t spark_cells = 20;

static double history_peak(json_object *mnt) {
        struct owned_series os;
        json_object *h;
        double peak = 0;

        if (!json_object_object_get_ex(mnt, F_HISTORY, &h) || !json_object_is_type(h, json_type_array))
                return 0;
        if (series_from_points(h, NULL, &os) >= 0)
                peak = chart_sparkline_peak(&os.s, spark_cells);
        owned_series_done(&os);
        return peak;
}

/* The last hour, 20 cells on the common scale: '-' when there is no history yet. */
static void format_sparkline(json_object *mnt, double scale, bool unicode, char *buf, size_t len) {
        struct owned_series os;
        json_object *h;

        snprintf(buf, len, "-");
        if (!json_object_object_get_ex(mnt, F_HISTORY, &h) || !json_object_is_type(h, json_type_array) ||
            json_object_array_length(h) == 0)
                return;
        if (series_from_points(h, NULL, &os) >= 0)
                chart_sparkline(&os.s, spark_cells, scale > 0 ? scale : 1, unicode, buf, len);
        owned_series_done(&os);
}

/* The terminal's width: $COLUMNS, else the tty's, else 80. */
static size_t terminal_width(void) {
        struct winsize ws;
        const char *c = getenv("COLUMNS");

        if (c && atoi(c) > 0)
                return (size_t) atoi(c);
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
                return ws.ws_col;
        return 80;
}

/* status's columns, as -o names them; documented in atimectl(8). */
enum { COL_TARGET, COL_FSTYPE, COL_DEVICE, COL_ATIME, COL_PROBE, COL_WRITES, COL_HOUR, COL_IO, _COL_MAX };
static const char *const status_columns[_COL_MAX] = {
        [COL_TARGET] = "TARGET",     [COL_FSTYPE] = "FSTYPE", [COL_DEVICE] = "DEVICE",       [COL_ATIME] = "ATIME",
        [COL_PROBE] = "PROBE",       [COL_WRITES] = "UPDATES/MIN", [COL_HOUR] = "LAST-HOUR", [COL_IO] = "DEV-WRITES",
};
static const size_t status_default_columns[] = { COL_TARGET, COL_FSTYPE, COL_ATIME, COL_PROBE, COL_WRITES, COL_HOUR };

/* "-o TARGET,ATIME" or "-o +DEVICE" (the defaults and more), as findmnt. */
static int parse_columns(const char *list, size_t *ret, size_t *ret_n) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;

        if (*list == '+') {
                memcpy(ret, status_default_columns, sizeof status_default_columns);
                n = ELEMENTSOF(status_default_columns);
                list++;
        }
        if (strv_split(list, ",", &l) < 0)
                return -ENOMEM;
        STRV_FOREACH(name, l) {
                size_t c;

                for (c = 0; c < _COL_MAX; c++)
                        if (strcasecmp(*name, status_columns[c]) == 0)
                                break;
                if (c == _COL_MAX) {
                        fprintf(stderr, "atimectl: unknown column '%s'; the columns are:", *name);
                        for (size_t i = 0; i < _COL_MAX; i++)
                                fprintf(stderr, "%s%s", i ? "," : " ", status_columns[i]);
                        fprintf(stderr, ".\n");
                        return -EINVAL;
                }
                if (n >= 2 * _COL_MAX)
                        return -E2BIG;
                ret[n++] = c;
        }
        if (n == 0)
                return -EINVAL;
        *ret_n = n;
        return 0;
}

/* What the legend under the status table counts. */
struct status_counts {
        unsigned strict, rel, noat, stalled;
        unsigned kernel, disagree; /* figures marked '*' and '!' */
        unsigned partial;          /* figures resting on part of a filesystem */
        unsigned lower_bound;      /* of those, figures shown as their lower bound */
        double interval; /* the longest measuring interval, seconds */
};

/* Calls GetStatus for every mount, or the one that holds path (NULL: all);
 * the last hour of history with it unless --json. */
static int status_call(const char *path, json_object **ret) {
        _cleanup_json_ json_object *params = json_object_new_object();
        char target[PATH_MAX];

        if (!params)
                return fail("out of memory");
        if (!arg_json)
                json_object_object_add(params, P_HISTORY_S, json_object_new_int(3600));
        if (path)
                return call_target(METHOD_GET_STATUS, path, params, ret, target, sizeof target, NULL);
        return call(METHOD_GET_STATUS, TAKE_PTR(params), ret);
}

/* The table with the columns asked for, fitted to the terminal unless
 * --full (which also decides how many cells a sparkline gets). */
static int status_table(const size_t *cols, size_t n_cols, bool unicode, Table **ret) {
        Table *t = table_new(_COL_MAX, status_columns);

        if (!t || table_set_display(t, cols, n_cols) < 0) {
                table_free(t);
                return -ENOMEM;
        }
        /* Too wide: what gives way first is what an operator misses least;
         * the mount points go last, and keep their last component. */
        if (table_add_fit(t, COL_WRITES, TABLE_FIT_SHORT) < 0 || table_add_fit(t, COL_DEVICE, TABLE_FIT_ELIDE) < 0 ||
            table_add_fit(t, COL_HOUR, TABLE_FIT_DROP) < 0 || table_add_fit(t, COL_TARGET, TABLE_FIT_ELIDE) < 0) {
                table_free(t);
                return -ENOMEM;
        }
        if (!arg_full) {
                table_set_width(t, terminal_width(), unicode ? "\u2026" : "...");
                if (terminal_width() < 100)
                        spark_cells = 10;
        }
        *ret = t;
        return 0;
}

static int cmp_label(const void *a, const void *b, void *labels) {
        char **l = labels;

        return strcmp(l[*(const size_t *) a], l[*(const size_t *) b]);
}

/* Each mount's TARGET cell: the target, and where it cannot be told from
 * another by that, what tells it apart. An over-mounted mount (its target
 * leads to another mount, see "reachable" in atimed(8)) says so; two rows
 * that would still read the same add the mount ids that findmnt shows. */
static int status_labels(json_object *mounts, char ***ret) {
        size_t n = json_object_array_length(mounts);
        _cleanup_strv_free_ char **l = calloc(n + 1, sizeof(char *));
        _cleanup_free_ size_t *order = calloc(n ? n : 1, sizeof *order);

        if (!l || !order)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *mnt = json_object_array_get_idx(mounts, i), *v;
                const char *target = get_str(mnt, F_TARGET);
                bool hidden = json_object_object_get_ex(mnt, F_REACHABLE, &v) && json_object_is_type(v, json_type_boolean) &&
                              !json_object_get_boolean(v);

                if (asprintf(&l[i], "%s%s", target ? target : "-", hidden ? " (over-mounted)" : "") < 0) {
                        l[i] = NULL;
                        return -ENOMEM;
                }
                order[i] = i;
        }
        /* Equal labels next to each other. */
        if (n > 0)
                qsort_r(order, n, sizeof *order, cmp_label, l);
        for (size_t i = 0; i < n;) {
                size_t j = i;

                while (j < n && streq(l[order[j]], l[order[i]]))
                        j++;
                for (size_t k = i; j - i > 1 && k < j; k++) {
                        json_object *mnt = json_object_array_get_idx(mounts, order[k]);
                        json_object *id = NULL;
                        char *s, *paren = strrchr(l[order[k]], '(');
                        bool hidden = paren && streq(paren, "(over-mounted)");

                        (void) json_object_object_get_ex(mnt, F_MOUNT_ID, &id);
                        if (hidden)
                                paren[-1] = '\0';
                        if (asprintf(&s, "%s (%smount id %" PRId64 ")", l[order[k]], hidden ? "over-mounted, " : "",
                                     id ? json_object_get_int64(id) : (int64_t) -1) < 0)
                                return -ENOMEM;
                        free(l[order[k]]);
                        l[order[k]] = s;
                }
                i = j;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* One mount's row, and what it adds to the counts. */
static int status_add_row(Table *t, json_object *mnt, const char *label, double scale, bool unicode,
                          struct status_counts *c) {
        const char *atime = get_str(mnt, F_ATIME);
        char policy[96], probe[64], activity[64], brief[64], dev[64], io[64], spark[128];
        json_object *a = NULL;
        double s;

        format_policy(mnt, policy, sizeof policy);
        format_probe(mnt, probe, sizeof probe);
        format_activity(mnt, false, activity, sizeof activity);
        format_activity(mnt, true, brief, sizeof brief);
        format_device(mnt, dev, sizeof dev, io, sizeof io);
        format_sparkline(mnt, scale, unicode, spark, sizeof spark);
        if (table_add_row(t, (const char *const[]) { label, get_str(mnt, F_FSTYPE), dev, policy, probe, activity, spark,
                                                     io }) < 0 ||
            table_set_short(t, COL_WRITES, brief) < 0)
                return -ENOMEM;
        c->strict += streq_ptr(atime, ATIME_STRICT_NAME);
        c->rel += streq_ptr(atime, ATIME_RELATIME_NAME);
        c->noat += streq_ptr(atime, ATIME_NOATIME_NAME);
        c->stalled += get_bool(mnt, F_STALLED);
        if (json_object_object_get_ex(mnt, F_ACTIVITY, &a) && get_double(a, F_INTERVAL_S, &s) && s > c->interval)
                c->interval = s;
        if (a && json_object_is_type(a, json_type_object)) {
                c->kernel += streq(activity_mark(a), "*");
                c->disagree += streq(activity_mark(a), "!");
                c->partial += get_double(a, F_COVERAGE, &s) && s < 1;
                c->lower_bound += activity_lower_bound_only(a);
        }
        return 0;
}

/* On btrfs: what atime un-shares from the snapshots, a line a mount that
 * has a figure (atimed(8), BTRFS). */
static void btrfs_note(json_object *mnt) {
        json_object *b = NULL, *since = NULL;
        double per_day = 0, bytes;
        char b1[24], b2[24];
        bool have_since;

        if (!json_object_object_get_ex(mnt, F_BTRFS, &b) || !json_object_is_type(b, json_type_object))
                return;
        have_since = json_object_object_get_ex(b, F_SINCE_SNAPSHOT, &since) && get_double(since, F_BYTES, &bytes);
        if (!get_double(b, F_UNSHARED_BYTES_PER_DAY, &per_day) || (per_day <= 0 && !have_since))
                return;
        printf("btrfs %s: atime un-shares %s/day of metadata from snapshots (%s, last interval)",
               escape_tmp(get_str(mnt, F_TARGET)), format_bytes(b1, sizeof b1, per_day),
               get_str(b, F_RATE_SOURCE) ? get_str(b, F_RATE_SOURCE) : "measured");
        if (have_since)
                printf("; %s since the newest (%s)", format_bytes(b2, sizeof b2, bytes),
                       get_str(since, F_RATE_SOURCE) ? get_str(since, F_RATE_SOURCE) : "measured");
        printf(".\n");
}

/* The summary under the table: the policies counted, what the columns
 * measure, and the drifts between the live mounts and fstab. */
static void status_legend(json_object *mounts, const struct status_counts *c, double scale, bool sparklines) {
        size_t n = json_object_array_length(mounts);
        char b[16];

        printf("\n%zu mount%s: %u strictatime, %u relatime, %u noatime", n, n == 1 ? "" : "s", c->strict, c->rel,
               c->noat);
        if (c->stalled)
                printf("; %u stalled (not answering)", c->stalled);
        printf(".\n");
        if (c->interval > 0)
                printf("UPDATES/MIN: atime updates the kernel made per minute, last %.0fs.\n", c->interval);
        if (c->kernel)
                printf("*: counted by the kernel (the filesystem's transactions: it made nothing else).\n");
        if (c->disagree)
                printf("!: the sample and the kernel's count of transactions disagree: the figure is in doubt.\n");
        if (c->partial)
                printf("N%% ~T: the first walk has seen N%% of the filesystem so far; the interval covers the rest, the\n"
                       "figure rests on all of it (for advice) in about T.\n");
        if (c->lower_bound)
                printf("%sN, rising: at least N a minute; the part not walked yet may add any amount (the interval's\n"
                       "top, in --json), and N rises as the walk finds what is read there.\n",
                       chart_unicode() ? "≥" : ">=");
        if (scale > 0 && sparklines)
                printf("LAST-HOUR: one scale for all rows, full block = %s/min.\n", chart_format_count(b, sizeof b, scale));
        /* Live changes that the next mount would undo, or the reverse. */
        for (size_t i = 0; i < n; i++) {
                json_object *mnt = json_object_array_get_idx(mounts, i);
                char note[PATH_MAX * 4];

                btrfs_note(mnt);
                if (fstab_drift(FSTAB_DEFAULT, get_str(mnt, F_TARGET), get_str(mnt, F_ATIME), get_bool(mnt, F_LAZYTIME),
                                note, sizeof note) > 0)
                        printf("Drift: %s.\n", escape_tmp(note));
        }
}

static int cmd_status(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_strv_free_ char **labels = NULL;
        bool unicode = chart_unicode();
        struct status_counts counts = {};
        size_t cols[2 * _COL_MAX], n_cols = ELEMENTSOF(status_default_columns), n;
        double scale = 0;
        json_object *mounts;
        int r;

        memcpy(cols, status_default_columns, sizeof status_default_columns);
        if (arg_output && (r = parse_columns(arg_output, cols, &n_cols)) < 0)
                return r == -ENOMEM ? fail("out of memory") : EXIT_USAGE;
        r = status_call(argc > 1 ? argv[1] : NULL, &reply);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                return print_json(reply);

        mounts = get_array(reply, F_MOUNTS);
        if (!mounts)
                return fail("malformed reply from atimed: no \"%s\" list", F_MOUNTS);
        if (status_table(cols, n_cols, unicode, &t) < 0 || status_labels(mounts, &labels) < 0)
                return fail("out of memory");
        n = json_object_array_length(mounts);
        /* One scale for every row's sparkline: the busiest mount's peak. */
        for (size_t i = 0; i < n; i++)
                scale = fmax(scale, history_peak(json_object_array_get_idx(mounts, i)));
        for (size_t i = 0; i < n; i++)
                if (status_add_row(t, json_object_array_get_idx(mounts, i), labels[i], scale, unicode, &counts) < 0)
                        return fail("out of memory");
        table_print(t, stdout, arg_legend);
        if (arg_legend)
                status_legend(mounts, &counts, scale, table_column_printed(t, COL_HOUR));
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

/* The resolutions the daemon keeps for target, named in the error. */
static int fail_resolution(const char *target, uint64_t res_usec) {
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        char want[FORMAT_DURATION_MAX], d[FORMAT_DURATION_MAX];
        json_object *rs;

        format_duration(want, sizeof want, res_usec);
        if (params)
                json_object_object_add(params, F_TARGET, json_object_new_string(target));
        if (!params || call(METHOD_GET_HISTORY, TAKE_PTR(params), &reply) != EXIT_OK ||
            !json_object_object_get_ex(reply, F_RESOLUTIONS_S, &rs))
                return fail("--resolution %s: atimed keeps no such resolution.", want);
        fprintf(stderr, "atimectl: --resolution %s: atimed keeps", want);
        for (size_t i = 0; i < json_object_array_length(rs); i++)
                fprintf(stderr, "%s%s", i == 0 ? " " : i + 1 == json_object_array_length(rs) ? " and " : ", ",
                        format_duration(d, sizeof d,
                                        (uint64_t) json_object_get_int64(json_object_array_get_idx(rs, i)) * USEC_PER_SEC));
        fprintf(stderr, " (the rings in atimed.conf, [store] rings).\n");
        return EXIT_FAIL;
}

/* Calls GetHistory for the mount that holds path, over --since at
 * --resolution; an unknown resolution is named with the ones kept. */
static int history_call(const char *path, json_object **ret) {
        _cleanup_json_ json_object *params = json_object_new_object();
        _cleanup_free_ char *error = NULL;
        uint64_t res_usec = arg_resolution_usec;
        char target[PATH_MAX];
        int r;

        if (!params)
                return fail("out of memory");
        json_object_object_add(params, P_SINCE,
                               json_object_new_int64((int64_t) time(NULL) - (int64_t) (arg_since_usec / USEC_PER_SEC)));
        if (res_usec)
                json_object_object_add(params, P_RESOLUTION, json_object_new_int64((int64_t) (res_usec / USEC_PER_SEC)));
        r = call_target(METHOD_GET_HISTORY, path, params, ret, target, sizeof target, &error);
        if (r != EXIT_OK && streq_ptr(error, ERROR_INVALID_PARAMETER) && streq_ptr(get_str(*ret, P_PARAMETER), P_RESOLUTION))
                return fail_resolution(target, res_usec);
        if (r != EXIT_OK)
                return error ? fail_remote(error, *ret) : r;
        return EXIT_OK;
}

/* The history's points as series, with one flag each for a policy change
 * and for atimed running. */
struct history {
        struct owned_series act, iops;
        bool *marks, *running;
};

static void history_done(struct history *h) {
        owned_series_done(&h->act);
        owned_series_done(&h->iops);
        free(h->marks);
        free(h->running);
}

/* What the summary line under the chart says. */
struct history_summary {
        double sum, peak, last, dsum;
        size_t have, dhave, gaps, unmeasured;
};

static int history_from_points(json_object *points, struct history *ret) {
        size_t n = json_object_array_length(points);

        if (series_from_points(points, F_ATIME_UPDATES_PER_MIN, &ret->act) < 0 ||
            series_from_points(points, F_WRITE_IOPS, &ret->iops) < 0 || !(ret->marks = calloc(n, sizeof(bool))) ||
            !(ret->running = calloc(n, sizeof(bool))))
                return -ENOMEM;
        return 0;
}

/* Marks point i when the policy changed within it or since the last one
 * that named it (*prev), and says so on a line of its own. */
static void history_mark_policy(json_object *pt, size_t i, const char **prev, struct history *h) {
        const char *at = get_str(pt, F_ATIME);

        h->marks[i] = get_bool(pt, F_POLICY_CHANGED) || (at && *prev && !streq(at, *prev));
        if (h->marks[i] && at) {
                time_t tt = (time_t) json_object_get_int64(json_object_object_get(pt, F_T));
                char when[32];

                strftime(when, sizeof when, "%m-%d %H:%M", localtime(&tt));
                if (*prev && !streq(at, *prev))
                        printf("  %s  policy %s -> %s\n", when, *prev, at);
                else
                        printf("  %s  policy changed within the point\n", when);
        }
        if (at)
                *prev = at;
}

/* Point i's share of the summary, and whether atimed was running then. */
static void history_count(json_object *pt, size_t i, struct history *h, struct history_summary *s) {
        if (h->act.p[i]) {
                s->sum += h->act.v[i];
                s->peak = fmax(s->peak, h->act.v[i]);
                s->last = h->act.v[i];
                s->have++;
        }
        if (h->iops.p[i]) {
                s->dsum += h->iops.v[i];
                s->dhave++;
        }
        h->running[i] = json_object_get_int(json_object_object_get(pt, F_SAMPLES)) > 0;
        s->gaps += !h->running[i];
        s->unmeasured += h->running[i] && !h->act.p[i];
}

/* The lines under the chart: the figures, then the gaps and the points not
 * measured yet, each with the time they cover (points of res seconds). */
static void history_print_summary(const struct history_summary *s, int64_t res, bool unicode) {
        char a[16], b[16], c[16], d[32];

        if (s->have > 0)
                printf("mean %s/min, peak %s/min, last %s/min", chart_format_count(a, sizeof a, s->sum / (double) s->have),
                       chart_format_count(b, sizeof b, s->peak), chart_format_count(c, sizeof c, s->last));
        else
                printf("no atime updates measured in this period");
        if (s->dhave > 0)
                printf("; device writes %s IO/s on average", chart_format_count(a, sizeof a, s->dsum / (double) s->dhave));
        printf(".\n");
        if (s->gaps > 0) {
                format_duration(d, sizeof d, (uint64_t) s->gaps * (uint64_t) res * USEC_PER_SEC);
                printf("%s %zu gap%s (atimed not running): %s in all.\n", unicode ? "\u00b7" : ".", s->gaps,
                       s->gaps == 1 ? "" : "s", d);
        }
        if (s->unmeasured > 0) {
                format_duration(d, sizeof d, (uint64_t) s->unmeasured * (uint64_t) res * USEC_PER_SEC);
                printf("? not measured yet (atimed running, no interval finished): %s in all.\n", d);
        }
}

/* The chart of a non-empty history reply, its policy changes and summary. */
static int history_print(json_object *reply, json_object *points, int64_t res) {
        _cleanup_(history_done) struct history h = {};
        struct history_summary s = { .last = -1 };
        bool unicode = chart_unicode();
        const char *prev = NULL;
        size_t n = json_object_array_length(points);

        if (history_from_points(points, &h) < 0)
                return fail("out of memory");
        /* Policy changes: within a point, or from one point to the next. */
        for (size_t i = 0; i < n; i++) {
                json_object *pt = json_object_array_get_idx(points, i);

                history_mark_policy(pt, i, &prev, &h);
                history_count(pt, i, &h, &s);
        }
        chart_plot(stdout, &h.act.s, h.marks, h.running, MAX(terminal_width(), (size_t) 32) - 12, 6,
                   (time_t) json_object_get_int64(json_object_object_get(reply, F_SINCE)),
                   (time_t) json_object_get_int64(json_object_object_get(reply, F_UNTIL)), unicode);
        history_print_summary(&s, res, unicode);
        print_policy_change(json_object_object_get(reply, F_POLICY_CHANGE), "Policy change: ");
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int cmd_history(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        json_object *points;
        char d[32];
        int64_t res;
        int r;

        r = history_call(argv[1], &reply);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                return print_json(reply);

        points = get_array(reply, F_POINTS);
        if (!points)
                return fail("malformed reply from atimed: no \"%s\"", F_POINTS);
        res = json_object_get_int64(json_object_object_get(reply, F_RESOLUTION_S));
        format_duration(d, sizeof d, (uint64_t) res * USEC_PER_SEC);
        printf("%s: atime updates per minute (points of %s)\n", escape_tmp(get_str(reply, F_TARGET)), d);
        if (json_object_array_length(points) == 0) {
                const char *why = json_object_get_string(json_object_object_get(reply, F_REASON));

                printf("No history in that period yet%s%s.\n", why ? ": " : "", why ? why : "");
                return EXIT_OK;
        }
        return history_print(reply, points, res);
}

static int cmd_metrics(int argc, char **argv) {
        _cleanup_json_ json_object *status = NULL, *recs = NULL;
        _cleanup_(report_freep) Report *rep = NULL;
        int r;

        if (arg_json) {
                fprintf(stderr, "atimectl: metrics prints the Prometheus text format, not JSON; the same figures "
                                "as JSON: atimectl status --json and atimectl recommend --json.\n");
                return EXIT_USAGE;
        }
        r = call(METHOD_GET_STATUS, NULL, &status);
        if (r != EXIT_OK)
                return r;
        r = call(METHOD_GET_RECOMMENDATIONS, NULL, &recs);
        if (r != EXIT_OK)
                return r;
        /* Parsed once into the daemon's own model, then written linearly. */
        if (report_from_json(status, recs, &rep) < 0)
                return fail("malformed reply from atimed");
        if (metrics_write(stdout, rep) < 0)
                return fail("cannot write the metrics");
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int cmd_probe(int argc, char **argv) {
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        char target[PATH_MAX];
        const char *eff, *reason;
        json_object *p;
        time_t at;
        char when[64] = "?";
        int r;

        if (!params)
                return fail("out of memory");
        r = call_target(METHOD_PROBE, argv[1], params, &reply, target, sizeof target, NULL);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                return print_json(reply);
        if (!json_object_object_get_ex(reply, F_PROBE, &p))
                return fail("malformed reply from atimed: no \"%s\"", F_PROBE);
        at = (time_t) json_object_get_int64(json_object_object_get(p, F_AT));
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&at));
        eff = get_str(p, F_EFFECTIVE);
        reason = get_str(p, F_REASON);
        if (get_bool(p, F_VERIFIED) && eff) {
                printf("%s: %s in force (verified %s)\n", escape_tmp(target), escape_tmp(eff), when);
                if (!get_bool(p, F_MATCHES_TABLE) && get_str(p, F_EXPLANATION))
                        printf("  The mount table says otherwise: %s.\n", escape_tmp(get_str(p, F_EXPLANATION)));
                else if (!get_bool(p, F_MATCHES_TABLE))
                        printf("  The mount table says otherwise: the filesystem or the kernel overrides it.\n");
        } else
                printf("%s: not verified (%s): %s\n", escape_tmp(get_str(reply, F_TARGET)), when,
                       reason ? escape_tmp(reason) : "unknown reason");
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

/* The daemon reads its configuration again; the reply comes once the new
 * one is in force, or with the errors that kept the running one. */
static int cmd_reload(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_free_ char *error = NULL;
        json_object *errors;
        const char *path;
        int r;

        r = call_error(METHOD_RELOAD, NULL, &reply, &error);
        if (r != EXIT_OK && !streq_ptr(error, ERROR_INVALID_CONFIGURATION))
                return error ? fail_remote(error, reply) : r;
        if (arg_json)
                return print_json(reply) == EXIT_OK && r == EXIT_OK ? EXIT_OK : EXIT_FAIL;
        if (r == EXIT_OK) {
                path = get_str(reply, F_CONFIG);
                printf("Configuration reloaded from %s.\n", path ? escape_tmp(path) : "the built-in defaults");
                return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
        }
        fprintf(stderr, "atimectl: the configuration was not reloaded; the running one stays in force:\n");
        errors = get_array(reply, P_ERRORS);
        for (size_t i = 0; errors && i < json_object_array_length(errors); i++)
                fprintf(stderr, "  %s\n", escape_tmp(json_object_get_string(json_object_array_get_idx(errors, i))));
        return EXIT_FAIL;
}

static int cmd_call(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        json_object *params = NULL;
        int r;

        if (argc > 2) {
                enum json_tokener_error jerr;

                params = json_tokener_parse_verbose(argv[2], &jerr);
                if (!params || !json_object_is_type(params, json_type_object)) {
                        json_object_put(params);
                        fprintf(stderr, "atimectl: parameters must be a JSON object: %s\n",
                                params ? "not an object" : json_tokener_error_desc(jerr));
                        return EXIT_USAGE;
                }
        }
        r = call(argv[1], params, &reply);
        if (r != EXIT_OK)
                return r;
        /* A reply of one string (an interface description) reads as text. */
        if (!arg_json && json_object_object_length(reply) == 1) {
                json_object_object_foreach(reply, key, val) {
                        (void) key;
                        if (json_object_is_type(val, json_type_string)) {
                                fputs(json_object_get_string(val), stdout);
                                if (json_object_get_string_len(val) == 0 ||
                                    json_object_get_string(val)[json_object_get_string_len(val) - 1] != '\n')
                                        putchar('\n');
                                return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
                        }
                }
        }
        return print_json(reply);
}

/* ---------------------------------------------------------------- command line */

/* Options that belong to some commands; the others apply to every command. */
enum {
        OPT_SINCE = 1U << 0,
        OPT_RESOLUTION = 1U << 1,
        OPT_FILE = 1U << 2,
        OPT_SET = 1U << 3,
        OPT_WRITE = 1U << 4,
        OPT_CHECK = 1U << 5,
        OPT_FORCE = 1U << 6,
        OPT_OUTPUT = 1U << 7,
        OPT_FULL = 1U << 8,
};

static const struct {
        unsigned bit;
        const char *name, *usage;
} option_help[] = {
        { OPT_OUTPUT, "--output", "  -o, --output LIST     the columns to show, comma-separated (+LIST adds to\n"
                                  "                        the default ones): TARGET, FSTYPE, DEVICE, ATIME,\n"
                                  "                        PROBE, UPDATES/MIN, LAST-HOUR, DEV-WRITES\n" },
        { OPT_FULL, "--full", "      --full            never shorten a cell to fit the terminal\n" },
        { OPT_SINCE, "--since", "      --since DURATION  how far back, such as 30min, 6h (the default) or 7d\n" },
        { OPT_RESOLUTION, "--resolution", "      --resolution DURATION\n"
                                          "                        one point per DURATION, one of the daemon's rings\n"
                                          "                        (such as 10s, 1min or 1h; default: the finest\n"
                                          "                        that covers the period)\n" },
        { OPT_FILE, "--file", "      --file PATH       the fstab to read and edit (default /etc/fstab)\n" },
        { OPT_SET, "--set", "      --set MOUNT=POLICY\n"
                            "                        change MOUNT to POLICY instead of following the advice\n"
                            "                        (may be repeated)\n" },
        { OPT_CHECK, "--check", "      --check           print the diff and exit 3 if fstab would change, 0 if not\n" },
        { OPT_WRITE, "--write", "      --write           write the change (root): backup, verify, atomic rename\n" },
        { OPT_FORCE, "--force", "      --force           go ahead although a known atime reader needs more\n" },
};

struct command {
        const char *name, *args, *summary, *help;
        unsigned options;
        int min_args, max_args; /* positional arguments, the command included */
        int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
        { "status", "[PATH]", "each tracked mount: atime policy, probe, atime updates",
          "One row per tracked mount: its atime policy, the probe's verdict, the atime\n"
          "writes measured and their last hour. With PATH, the mount that holds it.\n",
          OPT_OUTPUT | OPT_FULL, 1, 2, cmd_status },
        { "probe", "PATH", "verify the policy in force on a mount now (root)",
          "Runs the probe on the mount now: an unnamed temporary inode tells strictatime,\n"
          "relatime and noatime apart, whatever the mount table says.\n",
          0, 2, 2, cmd_probe },
        { "history", "PATH", "atime updates over time, policy changes marked",
          "A chart of the atime updates per minute on the mount, with policy changes\n"
          "marked under it.\n",
          OPT_SINCE | OPT_RESOLUTION, 2, 2, cmd_history },
        { "recommend", "[PATH]", "what to change, with the evidence and the saving",
          "atimed's advice for each mount (or the one holding PATH): the policy to use,\n"
          "why, who reads atime there, and what the change saves.\n",
          0, 1, 2, cmd_recommend },
        { "fstab", "", "the change to fstab that applies the advice, as a diff",
          "The change to fstab that makes the advice (or the --set choices) last, as a\n"
          "unified diff. Only the options fields change; nothing is written without\n"
          "--write.\n",
          OPT_FILE | OPT_SET | OPT_WRITE | OPT_CHECK | OPT_FORCE, 1, 1, cmd_fstab },
        { "remount", "PATH [POLICY]", "apply the advice (or POLICY) to the live mount now (root)",
          "Changes the atime policy of the live mount: the advice, or POLICY (noatime,\n"
          "relatime, strictatime, optionally with ,lazytime or ,nolazytime). It lasts\n"
          "until the next mount; atimectl fstab makes it last.\n",
          OPT_FORCE, 2, 3, cmd_remount },
        { "reload", "", "read the configuration again and put it in force (root)",
          "atimed reads its configuration file again. This returns once the new\n"
          "configuration is in force, or fails naming each error (file:line), the\n"
          "running configuration staying in force. systemctl reload atimed runs it.\n",
          0, 1, 1, cmd_reload },
        { "metrics", "", "every mount's figures for Prometheus (text format)",
          "Every mount's figures in the Prometheus text exposition format (not JSON).\n",
          0, 1, 1, cmd_metrics },
        { "call", "METHOD [JSON]", "call a control method and print its reply",
          "Calls a method of atimed's Varlink interface with JSON parameters and prints\n"
          "the reply (a string reply as plain text).\n",
          0, 2, 3, cmd_call },
        { "help", "[COMMAND]", "show the help of atimectl or of one command", NULL, 0, 1, 2, NULL },
};

static const struct command *find_command(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(commands[i].name, name))
                        return &commands[i];
        return NULL;
}

static const char common_options_help[] =
        "  -j, --json            print JSON instead of text\n"
        "      --no-legend       print no header and no summary\n"
        "  -s, --socket PATH     atimed's socket (default: $" ATIMED_SOCKET_ENV ",\n"
        "                        else " ATIMED_SOCKET_DEFAULT ")\n"
        "  -h, --help            show this help\n";

static void help_command(const struct command *c) {
        printf("Usage: atimectl [OPTIONS] %s%s%s\n\n%s", c->name, *c->args ? " " : "", c->args,
               c->help ? c->help : "");
        if (c->options) {
                printf("\nOptions:\n");
                for (size_t i = 0; i < ELEMENTSOF(option_help); i++)
                        if (c->options & option_help[i].bit)
                                fputs(option_help[i].usage, stdout);
        }
        printf("\nCommon options:\n%s\nSee atimectl(8) for the columns, the symbols and the exit statuses.\n",
               common_options_help);
}

static void help(void) {
        printf("Usage: atimectl [OPTIONS] COMMAND [ARGS]\n"
               "\n"
               "Shows what atimed measured about this host's mounts. Options may come\n"
               "anywhere on the line; 'atimectl COMMAND --help' shows a command's own.\n"
               "\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                char head[64];

                snprintf(head, sizeof head, "%s%s%s", commands[i].name, *commands[i].args ? " " : "",
                         commands[i].args);
                printf("  %-22s%s\n", head, commands[i].summary);
        }
        printf("\nOptions:\n%s      --version         show the version\n"
               "\n"
               "Exit status: 0 success, 1 failure (atimed not reachable, error reply, nothing\n"
               "done), 2 invalid command line, 3 fstab --check: the file would change.\n",
               common_options_help);
}

static int usage_error(const char *cmd, const char *fmt, ...) _printf_(2, 3);
static int usage_error(const char *cmd, const char *fmt, ...) {
        va_list ap;

        fputs("atimectl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " Try 'atimectl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
        return EXIT_USAGE;
}

static const char *option_name(unsigned bit) {
        for (size_t i = 0; i < ELEMENTSOF(option_help); i++)
                if (option_help[i].bit == bit)
                        return option_help[i].name;
        return "?";
}

/* getopt_long()'s codes for the long options without a short one. */
enum {
        ARG_VERSION = 0x100,
        ARG_NO_LEGEND,
        ARG_FULL,
        ARG_SINCE,
        ARG_RESOLUTION,
        ARG_FILE,
        ARG_SET,
        ARG_WRITE,
        ARG_CHECK,
        ARG_FORCE,
};

static const struct option options[] = {
        { "socket", required_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, ARG_VERSION },
        { "output", required_argument, NULL, 'o' },
        { "full", no_argument, NULL, ARG_FULL },
        { "since", required_argument, NULL, ARG_SINCE },
        { "resolution", required_argument, NULL, ARG_RESOLUTION },
        { "file", required_argument, NULL, ARG_FILE },
        { "set", required_argument, NULL, ARG_SET },
        { "write", no_argument, NULL, ARG_WRITE },
        { "check", no_argument, NULL, ARG_CHECK },
        { "force", no_argument, NULL, ARG_FORCE },
        {},
};

/* The OPT_ bit of a command-specific option's getopt code; 0 for the
 * options common to every command. */
static unsigned option_bit(int c) {
        static const struct {
                int code;
                unsigned bit;
        } map[] = {
                { 'o', OPT_OUTPUT },       { ARG_FULL, OPT_FULL },   { ARG_SINCE, OPT_SINCE },
                { ARG_RESOLUTION, OPT_RESOLUTION }, { ARG_FILE, OPT_FILE }, { ARG_SET, OPT_SET },
                { ARG_WRITE, OPT_WRITE },  { ARG_CHECK, OPT_CHECK }, { ARG_FORCE, OPT_FORCE },
        };

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (map[i].code == c)
                        return map[i].bit;
        return 0;
}

/* What the command line asked besides the arg_ settings. */
struct cmdline {
        unsigned given; /* the OPT_ bits of the command-specific options given */
        bool help, version;
};

/* A --since or --resolution DURATION for history: at least a second, and
 * with whole_seconds a whole number of them. EXIT_USAGE, said why, if not. */
static int parse_history_duration(const char *option, const char *s, bool whole_seconds, uint64_t *ret) {
        if (parse_duration(s, ret) < 0 || *ret < USEC_PER_SEC || (whole_seconds && *ret % USEC_PER_SEC))
                return usage_error("history", "%s %s: expected %s, such as %s.", option, s,
                                   whole_seconds ? "a whole number of seconds" : "a duration of a second or more",
                                   whole_seconds ? "10s, 1min or 1h" : "30min, 6h, 2d or 7d");
        return EXIT_OK;
}

/* Takes one option from getopt_long() into the arg_ settings and cl.
 * EXIT_OK, or the exit status for a bad one (said why). */
static int parse_option(int c, const char *value, struct cmdline *cl) {
        switch (c) {
        case 's':
                arg_socket = value;
                return EXIT_OK;
        case 'j':
                arg_json = true;
                return EXIT_OK;
        case ARG_NO_LEGEND:
                arg_legend = false;
                return EXIT_OK;
        case 'h':
                cl->help = true;
                return EXIT_OK;
        case ARG_VERSION:
                cl->version = true;
                return EXIT_OK;
        case 'o':
                arg_output = value;
                break;
        case ARG_FULL:
                arg_full = true;
                break;
        case ARG_SINCE:
                if (parse_history_duration("--since", value, false, &arg_since_usec) != EXIT_OK)
                        return EXIT_USAGE;
                break;
        case ARG_RESOLUTION:
                if (parse_history_duration("--resolution", value, true, &arg_resolution_usec) != EXIT_OK)
                        return EXIT_USAGE;
                break;
        case ARG_FILE:
                arg_file = value;
                break;
        case ARG_SET:
                if (strv_extend(&arg_set, value) < 0)
                        return fail("out of memory");
                break;
        case ARG_WRITE:
                arg_write = true;
                break;
        case ARG_CHECK:
                arg_check = true;
                break;
        case ARG_FORCE:
                arg_force = true;
                break;
        default:
                fprintf(stderr, "Try 'atimectl --help'.\n");
                return EXIT_USAGE;
        }
        cl->given |= option_bit(c);
        return EXIT_OK;
}

/* Reads every option, wherever it stands: getopt permutes them to the
 * front (a leading '-' in an argument after "--" is an argument). */
static int parse_argv(int argc, char *argv[], struct cmdline *cl) {
        int c, r;

        while ((c = getopt_long(argc, argv, "s:jho:", options, NULL)) >= 0) {
                r = parse_option(c, optarg, cl);
                if (r != EXIT_OK)
                        return r;
        }
        return EXIT_OK;
}

/* The first command-specific option in 'bits', by name. */
static const char *first_option_name(unsigned bits) {
        return option_name(bits & -bits);
}

/* No command: like systemctl, the overview (status), or the help. */
static int run_default(const struct cmdline *cl) {
        static char status_cmd[] = "status";
        char *args[] = { status_cmd, NULL };
        const struct command *cmd = find_command("status");

        if (cl->help) {
                help();
                return EXIT_OK;
        }
        if (cl->given & ~cmd->options)
                return usage_error(NULL, "%s needs a command.", first_option_name(cl->given & ~cmd->options));
        return cmd_status(1, args);
}

/* "help [COMMAND]": n words, the command's name first. */
static int run_help(int n, char **words) {
        const struct command *about = n > 1 ? find_command(words[1]) : NULL;

        if (n > 2)
                return usage_error("help", "help takes one COMMAND at most.");
        if (n > 1 && !about)
                return usage_error(NULL, "unknown command '%s'.", words[1]);
        if (about && about->run)
                help_command(about);
        else
                help();
        return EXIT_OK;
}

/* Runs a command with its n words (its name first), once its options and
 * its number of arguments are checked. */
static int run_command(const struct command *cmd, int n, char **words, const struct cmdline *cl) {
        if (cl->help) {
                help_command(cmd);
                return EXIT_OK;
        }
        if (cl->given & ~cmd->options)
                return usage_error(cmd->name, "%s does not apply to '%s'.", first_option_name(cl->given & ~cmd->options),
                                   cmd->name);
        if (n < cmd->min_args || n > cmd->max_args)
                return usage_error(cmd->name, "'%s' takes %s%s%s.", cmd->name, *cmd->args ? cmd->args : "no arguments",
                                   *cmd->args ? "" : "", *cmd->args ? " as arguments" : "");
        return cmd->run(n, words);
}

int main(int argc, char *argv[]) {
        const struct command *cmd;
        struct cmdline cl = {};
        int r, n;

        r = parse_argv(argc, argv, &cl);
        if (r != EXIT_OK)
                return r;
        if (cl.version) {
                printf("atimectl %s\n", PACKAGE_VERSION);
                return EXIT_OK;
        }
        n = argc - optind;
        if (n == 0)
                return run_default(&cl);
        cmd = find_command(argv[optind]);
        if (!cmd)
                return usage_error(NULL, "unknown command '%s'.", argv[optind]);
        if (!cmd->run)
                return run_help(n, argv + optind);
        return run_command(cmd, n, argv + optind, &cl);
}
