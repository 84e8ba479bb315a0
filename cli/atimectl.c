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
#include "table.h"
#include "varlink.h"


/* "relatime,lazytime,ro", as mount(8) would write it. */
static void format_policy(json_object *mnt, char *buf, size_t len) {
        const char *atime = get_str(mnt, F_ATIME);

        snprintf(buf, len, "%s%s%s%s", atime ? atime : "?",
                 get_bool(mnt, F_NODIRATIME) && !streq_ptr(atime, ATIME_NOATIME_NAME) ? ",nodiratime" : "",
                 get_bool(mnt, F_LAZYTIME) ? ",lazytime" : "", get_bool(mnt, F_READ_ONLY) ? ",ro" : "");
}

/* "walking 12% ~8m", "measuring ~40s": what a mount without a figure waits for. */
static void format_progress(json_object *mnt, char *buf, size_t len) {
        json_object *p;
        const char *stage;
        double walked = 0, inodes = 0, eta = -1;
        char pct[16] = "", when[24] = "";

        if (!json_object_object_get_ex(mnt, F_PROGRESS, &p) || !json_object_is_type(p, json_type_object) ||
            !(stage = get_str(p, F_STAGE))) {
                snprintf(buf, len, "-");
                return;
        }
        (void) get_double(p, F_WALKED, &walked);
        if (get_double(p, F_INODES, &inodes) && inodes > 0 && streq(stage, STAGE_WALKING))
                snprintf(pct, sizeof pct, " %.0f%%", fmin(99, 100 * walked / inodes));
        if (get_double(p, F_ETA_S, &eta) && eta >= 0) {
                char d[16];

                format_duration(d, sizeof d, (uint64_t) fmax(1, eta) * USEC_PER_SEC);
                snprintf(when, sizeof when, " ~%s", d);
        }
        snprintf(buf, len, "%s%s%s", stage, pct, when);
}

/* "3000 (2870-3130)", "0", "walking 12% ~8m" before the first interval. */
static void format_activity(json_object *mnt, char *buf, size_t len) {
        json_object *a, *ci;
        double v, lo, hi;
        char b1[16], b2[16], b3[16];

        if (get_bool(mnt, F_STALLED)) {
                snprintf(buf, len, "stalled");
                return;
        }
        if (!json_object_object_get_ex(mnt, F_ACTIVITY, &a) || !json_object_is_type(a, json_type_object) ||
            !get_double(a, F_ATIME_UPDATES_PER_MIN, &v)) {
                format_progress(mnt, buf, len);
                return;
        }
        if (!json_object_object_get_ex(a, F_UPDATES_CI95, &ci) || json_object_array_length(ci) != 2) {
                snprintf(buf, len, "%s", chart_format_count(b1, sizeof b1, v));
                return;
        }
        lo = json_object_get_double(json_object_array_get_idx(ci, 0));
        hi = json_object_get_double(json_object_array_get_idx(ci, 1));
        chart_format_count(b1, sizeof b1, v);
        chart_format_count(b2, sizeof b2, lo);
        chart_format_count(b3, sizeof b3, hi);
        if (streq(b2, b3))
                snprintf(buf, len, "%s", b1); /* nothing uncertain at this precision */
        else
                snprintf(buf, len, "%s (%s-%s)", b1, b2, b3);
}

/* "ok", "MISMATCH: noatime", "unverified", "-" before the first probe. */
static void format_probe(json_object *mnt, char *buf, size_t len) {
        json_object *p;
        const char *eff;

        if (!json_object_object_get_ex(mnt, F_PROBE, &p) || !json_object_is_type(p, json_type_object)) {
                snprintf(buf, len, "-");
                return;
        }
        eff = get_str(p, F_EFFECTIVE);
        if (get_bool(mnt, F_READ_ONLY))
                snprintf(buf, len, "n/a (ro)");
        else if (!get_bool(p, F_VERIFIED) || !eff)
                snprintf(buf, len, "unverified");
        else if (!get_bool(p, F_MATCHES_TABLE))
                snprintf(buf, len, "MISMATCH: %s", eff);
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

/* The last hour, 20 cells: '-' when there is no history yet. */
static void format_sparkline(json_object *mnt, bool unicode, char *buf, size_t len) {
        struct owned_series os;
        json_object *h;

        snprintf(buf, len, "-");
        if (!json_object_object_get_ex(mnt, F_HISTORY, &h) || !json_object_is_type(h, json_type_array) ||
            json_object_array_length(h) == 0)
                return;
        if (series_from_points(h, NULL, &os) >= 0)
                chart_sparkline(&os.s, 20, unicode, buf, len);
        owned_series_done(&os);
}

static int cmd_status(int argc, char **argv) {
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        _cleanup_(table_freep) Table *t = NULL;
        static const char *const headers[] = { "TARGET", "FSTYPE", "DEVICE", "ATIME", "PROBE",
                                               "ATIME UPDATES/MIN (95%)", "LAST HOUR", "DEVICE WRITES" };
        bool unicode = chart_unicode();
        unsigned strict = 0, rel = 0, noat = 0, stalled = 0;
        double interval = 0;
        json_object *mounts;
        size_t n;
        int r;

        if (!params)
                return fail("out of memory");
        if (argc > 1) {
                char target[PATH_MAX];

                normalize_path(argv[1], target, sizeof target);
                json_object_object_add(params, F_TARGET, varlink_name_new(target));
        }
        if (!arg_json)
                json_object_object_add(params, P_HISTORY_S, json_object_new_int(3600));
        r = call(METHOD_GET_STATUS, TAKE_PTR(params), &reply);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                return print_json(reply);

        if (!json_object_object_get_ex(reply, F_MOUNTS, &mounts) || !json_object_is_type(mounts, json_type_array))
                return fail("malformed reply from atimed: no \"%s\" list", F_MOUNTS);
        t = table_new(ELEMENTSOF(headers), headers);
        if (!t)
                return fail("out of memory");
        n = json_object_array_length(mounts);
        for (size_t i = 0; i < n; i++) {
                json_object *mnt = json_object_array_get_idx(mounts, i), *a;
                const char *atime = get_str(mnt, F_ATIME);
                char policy[96], probe[64], activity[64], dev[64], io[64], spark[128];
                double s;

                format_policy(mnt, policy, sizeof policy);
                format_probe(mnt, probe, sizeof probe);
                format_activity(mnt, activity, sizeof activity);
                format_device(mnt, dev, sizeof dev, io, sizeof io);
                format_sparkline(mnt, unicode, spark, sizeof spark);
                if (table_add_row(t, (const char *const[]) { get_str(mnt, F_TARGET), get_str(mnt, F_FSTYPE), dev, policy,
                                                             probe, activity, spark, io }) < 0)
                        return fail("out of memory");
                strict += streq_ptr(atime, ATIME_STRICT_NAME);
                rel += streq_ptr(atime, ATIME_RELATIME_NAME);
                noat += streq_ptr(atime, ATIME_NOATIME_NAME);
                stalled += get_bool(mnt, F_STALLED);
                if (json_object_object_get_ex(mnt, F_ACTIVITY, &a) && get_double(a, F_INTERVAL_S, &s) && s > interval)
                        interval = s;
        }
        table_print(t, stdout, arg_legend);
        if (arg_legend) {
                printf("\n%zu mount%s: %u strictatime, %u relatime, %u noatime", n, n == 1 ? "" : "s", strict, rel, noat);
                if (stalled)
                        printf("; %u stalled (the filesystem does not answer)", stalled);
                printf(".\n");
                if (interval > 0)
                        printf("Atime updates: what the kernel wrote, per minute, over the last %.0fs interval.\n",
                               interval);
        }
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int terminal_width(void) {
        struct winsize ws;
        const char *c = getenv("COLUMNS");

        if (c && atoi(c) > 20)
                return atoi(c);
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
                return ws.ws_col;
        return 80;
}

static int cmd_history(int argc, char **argv) {
        enum { ARG_SINCE = 0x100, ARG_RESOLUTION };
        static const struct option options[] = {
                { "since", required_argument, NULL, ARG_SINCE },
                { "resolution", required_argument, NULL, ARG_RESOLUTION },
                { "json", no_argument, NULL, 'j' },
                {},
        };
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        uint64_t since_usec = 6 * 3600 * USEC_PER_SEC, res_usec = 0;
        struct owned_series act = {}, iops = {};
        _cleanup_free_ bool *marks = NULL;
        json_object *points;
        char target[PATH_MAX], a[16], b[16], c[16], d[32];
        bool unicode = chart_unicode();
        int64_t res, from, until;
        double sum = 0, peak = 0, last = -1, dsum = 0;
        size_t n, have = 0, dhave = 0, gaps = 0;
        int opt, r;

        if (!params)
                return fail("out of memory");
        optind = 0;
        while ((opt = getopt_long(argc, argv, "j", options, NULL)) >= 0)
                switch (opt) {
                case ARG_SINCE:
                        if (parse_duration(optarg, &since_usec) < 0 || since_usec == 0) {
                                fprintf(stderr, "atimectl: --since: expected a duration such as 6h or 7d\n");
                                return EXIT_USAGE;
                        }
                        break;
                case ARG_RESOLUTION:
                        if (parse_duration(optarg, &res_usec) < 0 || res_usec < USEC_PER_SEC || res_usec % USEC_PER_SEC) {
                                fprintf(stderr, "atimectl: --resolution: expected whole seconds, such as 1min or 1h\n");
                                return EXIT_USAGE;
                        }
                        break;
                case 'j':
                        arg_json = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc) {
                fprintf(stderr, "atimectl: history takes one MOUNT. Try 'atimectl --help'.\n");
                return EXIT_USAGE;
        }
        normalize_path(argv[optind], target, sizeof target);
        json_object_object_add(params, F_TARGET, varlink_name_new(target));
        json_object_object_add(params, P_SINCE,
                               json_object_new_int64((int64_t) time(NULL) - (int64_t) (since_usec / USEC_PER_SEC)));
        if (res_usec)
                json_object_object_add(params, P_RESOLUTION, json_object_new_int64((int64_t) (res_usec / USEC_PER_SEC)));
        r = call(METHOD_GET_HISTORY, TAKE_PTR(params), &reply);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                return print_json(reply);

        if (!json_object_object_get_ex(reply, F_POINTS, &points) || !json_object_is_type(points, json_type_array))
                return fail("malformed reply from atimed: no \"%s\"", F_POINTS);
        res = json_object_get_int64(json_object_object_get(reply, F_RESOLUTION_S));
        from = json_object_get_int64(json_object_object_get(reply, F_SINCE));
        until = json_object_get_int64(json_object_object_get(reply, F_UNTIL));
        n = json_object_array_length(points);
        format_duration(d, sizeof d, (uint64_t) res * USEC_PER_SEC);
        printf("%s: atime updates per minute (points of %s)\n", escape_tmp(get_str(reply, F_TARGET)), d);
        if (n == 0) {
                const char *why = json_object_get_string(json_object_object_get(reply, F_REASON));

                printf("No history in that period yet%s%s.\n", why ? ": " : "", why ? why : "");
                return EXIT_OK;
        }
        if (series_from_points(points, F_ATIME_UPDATES_PER_MIN, &act) < 0 ||
            series_from_points(points, F_WRITE_IOPS, &iops) < 0 || !(marks = calloc(n, sizeof *marks))) {
                owned_series_done(&act);
                owned_series_done(&iops);
                return fail("out of memory");
        }

        /* Policy changes: within a point, or from one point to the next. */
        {
                const char *prev = NULL;

                for (size_t i = 0; i < n; i++) {
                        json_object *pt = json_object_array_get_idx(points, i);
                        const char *at = get_str(pt, F_ATIME);

                        marks[i] = get_bool(pt, F_POLICY_CHANGED) || (at && prev && !streq(at, prev));
                        if (marks[i] && at) {
                                time_t tt = (time_t) json_object_get_int64(json_object_object_get(pt, F_T));
                                char when[32];

                                strftime(when, sizeof when, "%m-%d %H:%M", localtime(&tt));
                                if (prev && !streq(at, prev))
                                        printf("  %s  policy %s -> %s\n", when, prev, at);
                                else
                                        printf("  %s  policy changed within the point\n", when);
                        }
                        if (at)
                                prev = at;
                        if (act.p[i]) {
                                sum += act.v[i];
                                peak = fmax(peak, act.v[i]);
                                last = act.v[i];
                                have++;
                        }
                        if (iops.p[i]) {
                                dsum += iops.v[i];
                                dhave++;
                        }
                        gaps += json_object_get_int(json_object_object_get(pt, F_SAMPLES)) == 0;
                }
        }
        chart_plot(stdout, &act.s, marks, (size_t) MAX(terminal_width() - 12, 20), 6, (time_t) from, (time_t) until,
                   unicode);
        if (have > 0)
                printf("mean %s/min, peak %s/min, last %s/min", chart_format_count(a, sizeof a, sum / (double) have),
                       chart_format_count(b, sizeof b, peak), chart_format_count(c, sizeof c, last));
        else
                printf("no atime updates measured in this period");
        if (dhave > 0)
                printf("; device writes %s IO/s on average", chart_format_count(a, sizeof a, dsum / (double) dhave));
        printf(".\n");
        if (gaps > 0) {
                format_duration(d, sizeof d, (uint64_t) gaps * (uint64_t) res * USEC_PER_SEC);
                printf("%zu gap%s (atimed not running): %s in all.\n", gaps, gaps == 1 ? "" : "s", d);
        }
        owned_series_done(&act);
        owned_series_done(&iops);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int cmd_metrics(int argc, char **argv) {
        _cleanup_json_ json_object *status = NULL, *recs = NULL;
        _cleanup_(report_freep) Report *rep = NULL;
        int r;

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
        normalize_path(argv[1], target, sizeof target);
        json_object_object_add(params, F_TARGET, varlink_name_new(target));
        r = call(METHOD_PROBE, TAKE_PTR(params), &reply);
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
                printf("%s: %s in force (verified %s)\n", escape_tmp(get_str(reply, F_TARGET)), escape_tmp(eff), when);
                if (!get_bool(p, F_MATCHES_TABLE))
                        printf("  The mount table says otherwise: the filesystem or the kernel overrides it.\n");
        } else
                printf("%s: not verified (%s): %s\n", escape_tmp(get_str(reply, F_TARGET)), when,
                       reason ? escape_tmp(reason) : "unknown reason");
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
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
        return print_json(reply);
}

static void help(void) {
        printf("Usage: atimectl [OPTIONS] COMMAND [ARGS]\n"
               "\n"
               "Shows what atimed measured about this host's mounts.\n"
               "\n"
               "Commands:\n"
               "  status [MOUNT]        each tracked mount: atime policy, probe, atime updates\n"
               "  probe MOUNT           verify the policy in force on MOUNT now (root)\n"
               "  history MOUNT [--since 6h|7d] [--resolution 10min]\n"
               "                        atime updates over time, policy changes marked\n"
               "  recommend [MOUNT]     what to change, with the evidence and the saving\n"
               "  fstab [--file PATH] [--set MOUNT=POLICY ...] [--write]\n"
               "                        the change to fstab that applies the advice, as a diff;\n"
               "                        --write writes it (root), safely\n"
               "  remount MOUNT [POLICY]\n"
               "                        apply the advice (or POLICY) to the live mount now (root)\n"
               "  metrics               every mount's figures for Prometheus (text format)\n"
               "  call METHOD [JSON]    call a control method and print its reply\n"
               "\n"
               "Options:\n"
               "  -s, --socket PATH     atimed's socket (default: $%s or %s)\n"
               "  -j, --json            print JSON instead of a table\n"
               "      --no-legend       print no header and no summary\n"
               "  -h, --help            show this help\n"
               "      --version         show the version\n"
               "\n"
               "Exit status: 0 success, 1 failure (atimed not reachable, error reply),\n"
               "2 invalid command line.\n",
               ATIMED_SOCKET_ENV, ATIMED_SOCKET_DEFAULT);
}

struct command {
        const char *name;
        int min_args, max_args; /* counting the command itself */
        int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
        { "status", 1, 2, cmd_status },
        { "probe", 2, 2, cmd_probe },
        { "history", 2, 8, cmd_history },
        { "recommend", 1, 2, cmd_recommend },
        { "metrics", 1, 1, cmd_metrics },
        { "fstab", 1, 64, cmd_fstab },
        { "remount", 2, 3, cmd_remount },
        { "call", 2, 3, cmd_call },
};

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_NO_LEGEND };
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'j' },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int c;

        /* '+': options end at the command, so its own arguments pass through. */
        while ((c = getopt_long(argc, argv, "+s:jh", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        arg_socket = optarg;
                        break;
                case 'j':
                        arg_json = true;
                        break;
                case ARG_NO_LEGEND:
                        arg_legend = false;
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case ARG_VERSION:
                        printf("atimectl %s\n", PACKAGE_VERSION);
                        return EXIT_OK;
                default:
                        fprintf(stderr, "Try 'atimectl --help'.\n");
                        return EXIT_USAGE;
                }
        }

        if (optind >= argc) {
                /* Like systemctl: no command means the overview. */
                static char status_cmd[] = "status";
                char *args[] = { status_cmd, NULL };
                return cmd_status(1, args);
        }
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                int n = argc - optind;

                if (!streq(commands[i].name, argv[optind]))
                        continue;
                if (n < commands[i].min_args || n > commands[i].max_args) {
                        fprintf(stderr, "atimectl: wrong number of arguments for '%s'. Try 'atimectl --help'.\n",
                                commands[i].name);
                        return EXIT_USAGE;
                }
                return commands[i].run(n, argv + optind);
        }
        fprintf(stderr, "atimectl: unknown command '%s'. Try 'atimectl --help'.\n", argv[optind]);
        return EXIT_USAGE;
}
