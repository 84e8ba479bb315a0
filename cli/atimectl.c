/* atimectl: the client of atimed's control socket. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "metrics.h"
#include "parse-util.h"
#include "protocol.h"
#include "render.h"
#include "report.h"
#include "strv.h"
#include "varlink.h"

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

static int cmd_status(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        RenderContext c = cli_render_context();
        size_t cols[2 * _COL_MAX], n_cols = ELEMENTSOF(status_default_columns);
        int r;

        memcpy(cols, status_default_columns, sizeof status_default_columns);
        if (arg_output && (r = status_parse_columns(arg_output, cols, &n_cols)) < 0)
                return r == -ENOMEM ? fail("out of memory") : EXIT_USAGE;
        c.columns = cols;
        c.n_columns = n_cols;
        r = status_call(argc > 1 ? argv[1] : NULL, &reply);
        return show_reply(r, reply, METHOD_GET_STATUS, report_from_status, render_status, &c);
}

/* The resolutions the daemon keeps for target, named in the error. */
static int fail_resolution(const char *target, uint64_t res_usec) {
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        _cleanup_(report_freep) Report *rep = NULL;
        char want[FORMAT_DURATION_MAX], d[FORMAT_DURATION_MAX];
        const ReportHistory *h;

        format_duration(want, sizeof want, res_usec);
        if (params)
                json_object_object_add(params, F_TARGET, varlink_name_new(target));
        if (!params || call(METHOD_GET_HISTORY, TAKE_PTR(params), &reply) != EXIT_OK ||
            report_from_history(reply, &rep) < 0 || rep->history.n_resolutions == 0)
                return fail("--resolution %s: atimed keeps no such resolution.", want);
        h = &rep->history;
        fprintf(stderr, "atimectl: --resolution %s: atimed keeps", want);
        for (size_t i = 0; i < h->n_resolutions; i++)
                fprintf(stderr, "%s%s", i == 0 ? " " : i + 1 == h->n_resolutions ? " and " : ", ",
                        format_duration(d, sizeof d, (uint64_t) h->resolutions_s[i] * USEC_PER_SEC));
        fprintf(stderr, " (the rings in atimed.conf, [store] rings).\n");
        return EXIT_FAIL;
}

/* Calls GetHistory for the mount that holds path, over --since at
 * --resolution; an unknown resolution is named with the ones kept. */
static int history_call(const char *path, json_object **ret) {
        _cleanup_json_ json_object *params = json_object_new_object();
        _cleanup_(report_freep) Report *e = NULL;
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
        if (r != EXIT_OK && streq_ptr(error, ERROR_INVALID_PARAMETER) && (e = error_params(*ret)) &&
            streq_ptr(e->error.parameter, P_RESOLUTION))
                return fail_resolution(target, res_usec);
        if (r != EXIT_OK)
                return error ? fail_remote(error, *ret) : r;
        return EXIT_OK;
}

static int cmd_history(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        RenderContext c = cli_render_context();
        int r;

        r = history_call(argv[1], &reply);
        return show_reply(r, reply, METHOD_GET_HISTORY, report_from_history, render_history, &c);
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
        r = report_from_json(status, recs, &rep);
        if (r < 0)
                return fail_parse(METHOD_GET_STATUS, r);
        if (print_metrics(stdout, rep, isatty(STDOUT_FILENO)) < 0)
                return fail("cannot write the metrics");
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int cmd_probe(int argc, char **argv) {
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        RenderContext c = cli_render_context();
        char target[PATH_MAX];
        int r;

        if (!params)
                return fail("out of memory");
        c.target = target;
        r = call_target(METHOD_PROBE, argv[1], params, &reply, target, sizeof target, NULL);
        return show_reply(r, reply, METHOD_PROBE, report_from_probe, render_probe, &c);
}

/* The daemon reads its configuration again; the reply comes once the new
 * one is in force, or with the errors that kept the running one. */
static int cmd_reload(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_(report_freep) Report *rep = NULL;
        _cleanup_free_ char *error = NULL;
        RenderContext c = cli_render_context();
        int r, q;

        /* Whoever else serves the socket, root's configuration is not
         * what it puts in force: say so, rather than "reloaded". */
        require_root_server();
        r = call_error(METHOD_RELOAD, NULL, &reply, &error);
        if (r != EXIT_OK && !streq_ptr(error, ERROR_INVALID_CONFIGURATION))
                return error ? fail_remote(error, reply) : r;
        if (arg_json)
                return print_json(reply) == EXIT_OK && r == EXIT_OK ? EXIT_OK : EXIT_FAIL;
        q = report_from_reload(reply, &rep);
        if (q < 0)
                return fail_parse(METHOD_RELOAD, q);
        (void) render_reload(&c, rep, r == EXIT_OK);
        if (r != EXIT_OK)
                return EXIT_FAIL;
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
        /* A reply of one string (an interface description) reads as text. */
        if (!arg_json && json_object_object_length(reply) == 1) {
                json_object_object_foreach(reply, key, val) {
                        (void) key;
                        if (json_object_is_type(val, json_type_string)) {
                                print_text(stdout, json_object_get_string(val));
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
