/* main.c: atimed's command line. The daemon never forks into the
 * background: systemd (or whoever starts it) supervises it. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "strv.h"

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

int main(int argc, char *argv[]) {
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
        const char *config_path = NULL, *socket_path = NULL, *state_dir = NULL;
        _cleanup_(config_freep) struct config *config = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_(manager_freep) Manager *m = NULL;
        bool check_config = false;

        /* One malloc arena for the event loop and the workers alike: the
         * workers allocate little, and per-thread arenas would each keep
         * their own free memory that churn never gives back. */
        (void) mallopt(M_ARENA_MAX, 1);
        int c, r;

        log_set_program("atimed");
        while ((c = getopt_long(argc, argv, "c:s:d:h", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        config_path = optarg;
                        break;
                case 's':
                        if (optarg[0] != '/') {
                                fprintf(stderr, "atimed: --socket: expected an absolute path\n");
                                return 2;
                        }
                        socket_path = optarg;
                        break;
                case 'd':
                        if (optarg[0] != '/') {
                                fprintf(stderr, "atimed: --state-dir: expected an absolute path\n");
                                return 2;
                        }
                        state_dir = optarg;
                        break;
                case ARG_CHECK_CONFIG:
                        check_config = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
                        return 0;
                default:
                        fprintf(stderr, "Try 'atimed --help'.\n");
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "atimed: unexpected argument '%s'. Try 'atimed --help'.\n", argv[optind]);
                return 2;
        }

        r = manager_read_config(config_path, socket_path, state_dir, &config, &errors);
        if (r < 0) {
                STRV_FOREACH(e, errors)
                        log_error("%s", *e);
                if (!errors)
                        log_error("Failed to read configuration %s: %s", config_path ? config_path : ATIMED_CONFIG_DEFAULT,
                                  fileio_strerror(r));
                return 1;
        }
        if (check_config) {
                config_print(config, stdout);
                return fflush(stdout) == 0 ? 0 : 1;
        }

        r = manager_new(TAKE_PTR(config), config_path, socket_path, state_dir, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up: %m"), 1;
        r = manager_start(m);
        if (r < 0)
                return 1;
        r = manager_run(m);
        log_debug("Exiting.");
        return r < 0 ? 1 : 0;
}
