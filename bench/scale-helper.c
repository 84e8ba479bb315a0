/* scale-helper: the parts of the scale benchmark that a shell would time
 * badly.
 *
 *   scale-helper mount DIR N          N tmpfs mounts DIR/m0 .. DIR/m(N-1)
 *   scale-helper umount DIR N         unmounts them (lazily)
 *   scale-helper parse FILE [REPS=20] time libmount's own parse of FILE
 *                                     (mnt_table_parse_file into a new
 *                                     table) and atimed's mount_table_load
 *                                     (the same parse plus its filter and
 *                                     copies); prints "LIBMOUNT_MS ATIMED_MS"
 *                                     medians
 *   scale-helper ready NOTIFY_PATH CMD [ARG...]
 *                                     binds a NOTIFY_SOCKET at NOTIFY_PATH,
 *                                     then becomes CMD (exec, same pid) with
 *                                     NOTIFY_SOCKET set; a child prints the
 *                                     milliseconds from just before the exec
 *                                     to READY=1 on stdout, then exits
 *   scale-helper absorb log LOGFILE TARGET
 *   scale-helper absorb status SOCKET TARGET
 *                                     mounts a tmpfs at TARGET and prints the
 *                                     milliseconds until the daemon shows it:
 *                                     the "Tracking TARGET (" line appended to
 *                                     LOGFILE (inotify), or a GetStatus for
 *                                     TARGET that is not an error (polled
 *                                     every 100 us on one connection)
 *   scale-helper latency SOCKET TARGET SECONDS
 *                                     GetStatus for TARGET on a new
 *                                     connection each time (as atimectl
 *                                     status TARGET does), every 20 ms for
 *                                     SECONDS; prints "P50_MS P99_MS MAX_MS
 *                                     CALLS" */
#include <errno.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mounts.h"

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static int do_mount(const char *dir, int n) {
        char p[4096];

        for (int i = 0; i < n; i++) {
                snprintf(p, sizeof p, "%s/m%d", dir, i);
                if ((mkdir(p, 0755) < 0 && errno != EEXIST) || mount("bench-scale", p, "tmpfs", 0, "size=1m,nr_inodes=64") < 0) {
                        fprintf(stderr, "scale-helper: %s: %s\n", p, strerror(errno));
                        return 1;
                }
        }
        return 0;
}

static int do_umount(const char *dir, int n) {
        char p[4096];

        for (int i = 0; i < n; i++) {
                snprintf(p, sizeof p, "%s/m%d", dir, i);
                (void) umount2(p, MNT_DETACH);
        }
        return 0;
}

static int do_parse(const char *file, int reps) {
        double lm[1000], at[1000];
        struct mount_filter f = {};

        if (reps < 1 || reps > 1000)
                return 2;
        for (int r = 0; r < reps; r++) {
                struct libmnt_table *tb = mnt_new_table();
                MountTable *t = NULL;
                double t0 = now_ms();

                if (!tb || mnt_table_parse_file(tb, file) < 0) {
                        fprintf(stderr, "scale-helper: cannot parse %s\n", file);
                        return 1;
                }
                mnt_unref_table(tb);
                lm[r] = now_ms() - t0;

                t0 = now_ms();
                if (mount_table_load(file, &f, &t) < 0) {
                        fprintf(stderr, "scale-helper: mount_table_load %s failed\n", file);
                        return 1;
                }
                mount_table_free(t);
                at[r] = now_ms() - t0;
        }
        qsort(lm, (size_t) reps, sizeof(double), cmp_double);
        qsort(at, (size_t) reps, sizeof(double), cmp_double);
        printf("%.3f %.3f\n", lm[reps / 2], at[reps / 2]);
        return 0;
}

static int do_ready(const char *path, char **cmd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char buf[4097];
        double t0;
        int fd;
        pid_t child;

        if (strlen(path) >= sizeof sa.sun_path)
                return 2;
        strcpy(sa.sun_path, path);
        unlink(path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                fprintf(stderr, "scale-helper: %s: %s\n", path, strerror(errno));
                return 1;
        }
        fflush(stdout);
        t0 = now_ms();
        child = fork();
        if (child < 0)
                return 1;
        if (child == 0) {
                /* The waiter: the parent becomes the daemon. */
                for (;;) {
                        struct pollfd pfd = { .fd = fd, .events = POLLIN };
                        ssize_t n;

                        if (poll(&pfd, 1, 300000) <= 0) {
                                printf("timeout\n");
                                return 1;
                        }
                        n = recv(fd, buf, sizeof buf - 1, 0);
                        if (n < 0)
                                continue;
                        buf[n] = 0;
                        if (strstr(buf, "READY=1")) {
                                printf("%.1f\n", now_ms() - t0);
                                return 0;
                        }
                }
        }
        setenv("NOTIFY_SOCKET", path, 1);
        execv(cmd[0], cmd);
        fprintf(stderr, "scale-helper: %s: %s\n", cmd[0], strerror(errno));
        return 127;
}

static int absorb_log(const char *log, const char *target) {
        char needle[4200], buf[65536], tail[8400] = "";
        int in = inotify_init1(IN_CLOEXEC), fd = open(log, O_RDONLY | O_CLOEXEC);
        double t0;

        if (in < 0 || fd < 0 || inotify_add_watch(in, log, IN_MODIFY) < 0) {
                fprintf(stderr, "scale-helper: %s: %s\n", log, strerror(errno));
                return 1;
        }
        snprintf(needle, sizeof needle, "Tracking %s (", target);
        lseek(fd, 0, SEEK_END);
        t0 = now_ms();
        if (mount("bench-scale", target, "tmpfs", 0, "size=1m,nr_inodes=64") < 0) {
                fprintf(stderr, "scale-helper: mount %s: %s\n", target, strerror(errno));
                return 1;
        }
        for (;;) {
                struct pollfd pfd = { .fd = in, .events = POLLIN };
                ssize_t n;

                while ((n = read(fd, buf, sizeof buf - 1)) > 0) {
                        /* Keep the end of what was read, for a line cut in two. */
                        char joined[sizeof tail + sizeof buf];

                        buf[n] = 0;
                        snprintf(joined, sizeof joined, "%s%s", tail, buf);
                        if (strstr(joined, needle)) {
                                printf("%.3f\n", now_ms() - t0);
                                return 0;
                        }
                        snprintf(tail, sizeof tail, "%s", joined + (strlen(joined) > 4200 ? strlen(joined) - 4200 : 0));
                }
                if (poll(&pfd, 1, 30000) <= 0) {
                        printf("timeout\n");
                        return 1;
                }
                (void) read(in, buf, sizeof buf);
        }
}

static int absorb_status(const char *sock, const char *target) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char req[4300], reply[1 << 20];
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        double t0;

        if (strlen(sock) >= sizeof sa.sun_path)
                return 2;
        strcpy(sa.sun_path, sock);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                fprintf(stderr, "scale-helper: %s: %s\n", sock, strerror(errno));
                return 1;
        }
        snprintf(req, sizeof req, "{\"method\":\"io.atimed.GetStatus\",\"parameters\":{\"target\":\"%s\"}}", target);
        t0 = now_ms();
        if (mount("bench-scale", target, "tmpfs", 0, "size=1m,nr_inodes=64") < 0) {
                fprintf(stderr, "scale-helper: mount %s: %s\n", target, strerror(errno));
                return 1;
        }
        while (now_ms() - t0 < 30000) {
                size_t len = 0;

                if (write(fd, req, strlen(req) + 1) != (ssize_t) strlen(req) + 1)
                        return 1;
                for (;;) {
                        ssize_t n = read(fd, reply + len, sizeof reply - 1 - len);

                        if (n <= 0)
                                return 1;
                        len += (size_t) n;
                        if (reply[len - 1] == 0 || len == sizeof reply - 1)
                                break;
                }
                reply[len] = 0;
                if (strncmp(reply, "{\"error\"", 8) != 0) {
                        printf("%.3f\n", now_ms() - t0);
                        return 0;
                }
                usleep(100);
        }
        printf("timeout\n");
        return 1;
}

/* One GetStatus for target on a new connection: its milliseconds, or -1. */
static double status_once(const char *sock, const char *req, char *reply, size_t size) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        double t0 = now_ms();
        size_t len = 0;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        strcpy(sa.sun_path, sock);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
            write(fd, req, strlen(req) + 1) != (ssize_t) strlen(req) + 1) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        for (;;) {
                ssize_t n = read(fd, reply + len, size - 1 - len);

                if (n <= 0) {
                        close(fd);
                        return -1;
                }
                len += (size_t) n;
                if (reply[len - 1] == 0 || len == size - 1)
                        break;
        }
        close(fd);
        reply[len] = 0;
        return strncmp(reply, "{\"error\"", 8) == 0 ? -1 : now_ms() - t0;
}

static int latency(const char *sock, const char *target, double seconds) {
        static double v[100000];
        static char reply[1 << 20];
        char req[4300];
        size_t n = 0;
        double t0 = now_ms();

        if (strlen(sock) >= sizeof ((struct sockaddr_un *) 0)->sun_path)
                return 2;
        snprintf(req, sizeof req, "{\"method\":\"io.atimed.GetStatus\",\"parameters\":{\"target\":\"%s\"}}", target);
        while (now_ms() - t0 < seconds * 1e3 && n < sizeof v / sizeof v[0]) {
                double ms = status_once(sock, req, reply, sizeof reply);

                if (ms < 0) {
                        fprintf(stderr, "scale-helper: GetStatus %s failed\n", target);
                        return 1;
                }
                v[n++] = ms;
                usleep(20000);
        }
        if (n == 0)
                return 1;
        qsort(v, n, sizeof(double), cmp_double);
        printf("%.3f %.3f %.3f %zu\n", v[n / 2], v[(size_t) ((double) n * 0.99)], v[n - 1], n);
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc >= 4 && !strcmp(argv[1], "mount"))
                return do_mount(argv[2], atoi(argv[3]));
        if (argc >= 4 && !strcmp(argv[1], "umount"))
                return do_umount(argv[2], atoi(argv[3]));
        if (argc >= 3 && !strcmp(argv[1], "parse"))
                return do_parse(argv[2], argc > 3 ? atoi(argv[3]) : 20);
        if (argc >= 4 && !strcmp(argv[1], "ready"))
                return do_ready(argv[2], argv + 3);
        if (argc == 5 && !strcmp(argv[1], "absorb") && !strcmp(argv[2], "log"))
                return absorb_log(argv[3], argv[4]);
        if (argc == 5 && !strcmp(argv[1], "absorb") && !strcmp(argv[2], "status"))
                return absorb_status(argv[3], argv[4]);
        if (argc == 5 && !strcmp(argv[1], "latency"))
                return latency(argv[2], argv[3], atof(argv[4]));
        fprintf(stderr, "usage: see the top of bench/scale-helper.c\n");
        return 2;
}
