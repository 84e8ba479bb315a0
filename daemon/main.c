/* main.c: atimed's command line. The daemon never forks into the
 * background: systemd (or whoever starts it) supervises it. */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "helper-client.h"
#include "log.h"
#include "journal.h"
#include "manager.h"
#include "reload.h"
#include "protocol.h"

static void help(void) {
        printf("Usage: atimed [OPTIONS]\n"
               "\n"
               "Measures the atime policy and activity of this host's mounts and serves\n"
               "them on a Unix socket (see atimectl(8)).\n"
               "\n"
               "  -c, --config FILE     read FILE (default: %s if present)\n"
               "  -s, --socket PATH     serve on PATH (default: %s)\n"
               "  -d, --state-dir DIR   keep state in DIR (default: %s)\n"
               "      --check-config    validate the configuration, print it, and exit\n"
               "  -h, --help            show this help\n"
               "      --version         show the version\n",
               ATIMED_CONFIG_DEFAULT, ATIMED_SOCKET_DEFAULT, ATIMED_STATE_DIR_DEFAULT);
}

struct arguments {
        const char *config_path, *socket_path, *state_dir;
        bool check_config;
};

/* An option's argument that must be an absolute path: 0, or -EINVAL said
 * on stderr. */
static int absolute_path_arg(const char *option, const char *arg, const char **ret) {
        if (arg[0] != '/') {
                fprintf(stderr, "atimed: --%s: expected an absolute path\n", option);
                return -EINVAL;
        }
        *ret = arg;
        return 0;
}

/* > 0: go on; 0: done (--help, --version); < 0: a bad command line, said
 * on stderr. */
static int parse_argv(int argc, char *argv[], struct arguments *args) {
        enum { ARG_CHECK_CONFIG = 0x100, ARG_VERSION };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "socket", required_argument, NULL, 's' },
                { "state-dir", required_argument, NULL, 'd' },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int c, r;

        assert(argc >= 0 && argv && args);

        while ((c = getopt_long(argc, argv, "c:s:d:h", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        args->config_path = optarg;
                        break;
                case 's':
                        r = absolute_path_arg("socket", optarg, &args->socket_path);
                        if (r < 0)
                                return r;
                        break;
                case 'd':
                        r = absolute_path_arg("state-dir", optarg, &args->state_dir);
                        if (r < 0)
                                return r;
                        break;
                case ARG_CHECK_CONFIG:
                        args->check_config = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
                        return 0;
                default:
                        fprintf(stderr, "Try 'atimed --help'.\n");
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "atimed: unexpected argument '%s'. Try 'atimed --help'.\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(config_freep) struct config *config = NULL;
        _cleanup_(manager_freep) Manager *m = NULL;
        struct arguments args = {};
        int r;

        /* One malloc arena for the event loop and the workers alike: the
         * workers allocate little, and per-thread arenas would each keep
         * their own free memory that churn never gives back. */
        (void) mallopt(M_ARENA_MAX, 1);

        log_set_program("atimed");
        (void) journal_log_setup();
        r = parse_argv(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (reload_read_config(args.config_path, args.socket_path, args.state_dir, &config, NULL) < 0)
                return 1;
        if (args.check_config) {
                r = config_print(config, stdout);
                if (r < 0)
                        return log_error_errno(r, "Failed to print the configuration: %m"), 1;
                return fflush(stdout) == 0 ? 0 : 1;
        }

        r = manager_new(TAKE_PTR(config), args.config_path, args.socket_path, args.state_dir, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up: %m"), 1;
        r = manager_start(m);
        if (r < 0)
                return 1;
        r = manager_run(m);
        log_debug("Exiting.");
        /* The workers first, so that none is still asking the helper;
         * then the helper this process forked, if it did, is reaped. */
        m = manager_free(m);
        helper_client_stop();
        return r < 0 ? 1 : 0;
}
