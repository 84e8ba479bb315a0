/* helper-main.c: atimed-helper, the privileged helper as a program of its
 * own, for atimed-helper.service (socket activation) and for systems
 * without systemd (--listen). See helper-server.h. */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "caps.h"
#include "helper-server.h"
#include "log.h"
#include "macro.h"
#include "protocol.h"

static void help(void) {
        printf("Usage: atimed-helper [--listen PATH]\n\n"
               "atimed's privileged helper: reads btrfs filesystems' trees of subvolumes for atimed,\n"
               "which never holds CAP_SYS_ADMIN itself. Serves root alone.\n\n"
               "  -l, --listen PATH  bind a socket at PATH (default: the one the service\n"
               "                     manager passes; atimed's default is %s)\n"
               "  -h, --help         show this help\n",
               ATIMED_HELPER_SOCKET_DEFAULT);
}

/* A socket of our own at 'path', root's alone. */
static int listen_at(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        mode_t old;
        int r;

        if (path[0] != '/' || strlen(path) >= sizeof sa.sun_path)
                return -EINVAL;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void) unlink(path);
        old = umask(0077);
        r = bind(fd, (const struct sockaddr *) &sa, sizeof sa);
        umask(old);
        if (r < 0 || listen(fd, SOMAXCONN) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* The one socket the service manager passed. */
static int listen_passed(void) {
        int n = sd_listen_fds(true);

        if (n < 0)
                return n;
        if (n != 1)
                return -EBADF;
        return SD_LISTEN_FDS_START;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "listen", required_argument, NULL, 'l' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *path = NULL;
        int c, fd, r;

        log_set_program("atimed-helper");
        while ((c = getopt_long(argc, argv, "l:h", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        path = optarg;
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        fprintf(stderr, "Try 'atimed-helper --help'.\n");
                        return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "atimed-helper: unexpected argument '%s'.\n", argv[optind]);
                return 2;
        }
        if (!caps_have(CAP_SYS_ADMIN))
                log_warning("Running without CAP_SYS_ADMIN: every request will fail (EPERM)");
        fd = path ? listen_at(path) : listen_passed();
        if (fd < 0) {
                if (path)
                        return log_error_errno(fd, "Cannot listen at %s: %m", path), 1;
                return log_error_errno(fd, "Expected one socket from the service manager (or --listen PATH): %m"), 1;
        }
        r = helper_server_run(fd, HELPER_LISTEN_ACCEPT);
        if (r < 0)
                return log_error_errno(r, "Stopped: %m"), 1;
        return 0;
}
