/* mountstorm: a container host's churn of mounts, for tests/integration/
 * mount-storm.sh and bench/mount-storm.sh.
 *
 *   mountstorm base DIR N [FROM]
 *       tmpfs mounts at DIR/b/FROM ... DIR/b/N-1 (the table's bulk; FROM
 *       0 unless said).
 *   mountstorm storm DIR N OPS SECONDS [SOCKET TARGET]
 *       OPS mount operations spread over SECONDS, by mount(2) directly (a
 *       mount(8) each would cost more than atimed): new tmpfs mounts on
 *       fresh directories of DIR/x, some nested in one of those, bind
 *       mounts of the base mounts, moves of a mount (with what is nested
 *       in it) to DIR/y, remounts that flip noatime and strictatime, and
 *       lazy umounts (of a subtree, where something is nested), at most
 *       500 of them at a time (pods come and go). With
 *       SOCKET, a thread asks GetStatus of TARGET on one connection every
 *       20 ms throughout. Prints "ops=N seconds=S live=L status=K
 *       status_max_ms=M status_p99_ms=P errors=E".
 *   mountstorm cost DIR N CHANGES GAP_MS
 *       CHANGES changes (a tmpfs mounted on DIR/c, then umounted: two
 *       each), GAP_MS apart: for the daemon's CPU per change.
 *   mountstorm floor DIR N CHANGES GAP_MS
 *       The same changes, watched by the least a watcher can do: a child
 *       that waits on a fanotify group of this namespace and reads each
 *       mount reported with one statmount(2). Prints its CPU per change in
 *       microseconds (schedstat): the floor of this machine's kernel and
 *       wakeups, beside which atimed's figure is read. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms) {
        struct timespec ts = { .tv_sec = (time_t) (ms / 1000), .tv_nsec = (long) ((ms - (double) (long) (ms / 1000) * 1000) * 1e6) };

        if (ms > 0)
                nanosleep(&ts, NULL);
}

static int mount_tmpfs(const char *dir) {
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -1;
        return mount("storm", dir, "tmpfs", 0, "size=64k,nr_inodes=64");
}

static int do_base(const char *top, long from, long n) {
        char p[4096];

        snprintf(p, sizeof p, "%s/b", top);
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return 1;
        for (long i = from; i < n; i++) {
                snprintf(p, sizeof p, "%s/b/%ld", top, i);
                if (mount_tmpfs(p) < 0) {
                        fprintf(stderr, "mount %s: %m\n", p);
                        return 1;
                }
        }
        return 0;
}

/* ---------------------------------------------------------------- status */

static const char *sock_path, *status_target;
static atomic_bool stop;
static double lat[100000];
static size_t n_lat;
static long status_errors;

static int connect_socket(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        strncpy(sa.sun_path, sock_path, sizeof sa.sun_path - 1);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

/* One call: the reply read to its NUL; 0 or -1. */
static int call(int fd, const char *req, size_t len) {
        static char buf[1 << 16];

        if (send(fd, req, len + 1, MSG_NOSIGNAL) != (ssize_t) len + 1)
                return -1;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);

                if (n <= 0)
                        return -1;
                if (memchr(buf, 0, (size_t) n))
                        return strstr(buf, "\"error\"") ? -1 : 0;
        }
}

static void *status_thread(void *arg) {
        char req[8192];
        int fd = connect_socket();
        size_t len;

        len = (size_t) snprintf(req, sizeof req,
                                "{\"method\":\"io.atimed.GetStatus\",\"parameters\":{\"target\":\"%s\"}}", status_target);
        while (!atomic_load(&stop)) {
                double t0 = now_ms();

                if (fd < 0 || call(fd, req, len) < 0) {
                        status_errors++;
                        if (fd >= 0)
                                close(fd);
                        fd = connect_socket();
                } else if (n_lat < sizeof lat / sizeof lat[0])
                        lat[n_lat++] = now_ms() - t0;
                sleep_ms(20);
        }
        if (fd >= 0)
                close(fd);
        return NULL;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* ---------------------------------------------------------------- storm */

struct live {
        char path[256];
        int noatime;
        int nested; /* something is mounted inside */
};

/* The storm's own mounts at most (tracked, besides the base). */
#define LIVE_CAP 500

static struct live *live;
static size_t n_live;

static void live_drop(size_t i) {
        live[i] = live[--n_live];
}

static int do_storm(const char *top, long base, long ops, double seconds) {
        double start = now_ms(), gap = seconds * 1000.0 / (double) ops;
        long done = 0, serial = 0, failed = 0;
        char p[4096];
        pthread_t th;

        live = calloc((size_t) ops + 1, sizeof *live);
        if (!live)
                return 1;
        snprintf(p, sizeof p, "%s/x", top);
        (void) mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/y", top);
        (void) mkdir(p, 0755);
        if (sock_path && pthread_create(&th, NULL, status_thread, NULL) != 0)
                return 1;
        srand(47);
        while (done < ops) {
                int pick = rand() % 100, r = 0;

                /* A steady state, as pods come and go: past the cap, what
                 * would add a mount takes one away. */
                if (n_live >= LIVE_CAP && pick < 55)
                        pick = 77 + pick % 23;

                if (n_live < 8 || pick < 25) {
                        /* a fresh tmpfs */
                        struct live *l = &live[n_live];

                        snprintf(l->path, sizeof l->path, "%s/x/t%ld", top, serial++);
                        l->noatime = 0;
                        l->nested = 0;
                        r = mount_tmpfs(l->path);
                        if (r == 0)
                                n_live++;
                } else if (pick < 40) {
                        /* nested in a live one */
                        size_t k = (size_t) rand() % n_live;
                        struct live *l = &live[n_live];
                        char parent[256];

                        memcpy(parent, live[k].path, sizeof parent);
                        if (strlen(parent) > 200)
                                continue;
                        if ((size_t) snprintf(l->path, sizeof l->path, "%.200s/n%ld", parent, serial++) >= sizeof l->path)
                                continue;
                        l->noatime = 0;
                        l->nested = 0;
                        r = mount_tmpfs(l->path);
                        if (r == 0) {
                                live[k].nested = 1;
                                n_live++;
                        }
                } else if (pick < 55) {
                        /* a bind mount of a base mount */
                        struct live *l = &live[n_live];
                        char src[4096];

                        snprintf(src, sizeof src, "%s/b/%ld", top, base > 0 ? rand() % base : 0);
                        snprintf(l->path, sizeof l->path, "%s/x/bind%ld", top, serial++);
                        l->noatime = 0;
                        l->nested = 0;
                        if (mkdir(l->path, 0755) < 0 || mount(src, l->path, NULL, MS_BIND, NULL) < 0)
                                r = -1;
                        else
                                n_live++;
                } else if (pick < 62) {
                        /* a move, to a fresh directory (with what is nested in it) */
                        size_t k = (size_t) rand() % n_live;
                        char to[256];

                        if (strncmp(live[k].path + strlen(top), "/x/", 3) != 0)
                                continue; /* only the top-level ones: nested paths would go stale */
                        snprintf(to, sizeof to, "%s/y/m%ld", top, serial++);
                        if (mkdir(to, 0755) < 0 || mount(live[k].path, to, NULL, MS_MOVE, NULL) < 0)
                                r = -1;
                        else {
                                /* what was nested under it moved with it: forget those */
                                size_t plen = strlen(live[k].path);

                                for (size_t j = 0; j < n_live;)
                                        if (j != k && strncmp(live[j].path, live[k].path, plen) == 0 &&
                                            live[j].path[plen] == '/') {
                                                live_drop(j);
                                                if (k == n_live)
                                                        k = j;
                                        } else
                                                j++;
                                snprintf(live[k].path, sizeof live[k].path, "%s", to);
                                live[k].nested = 0; /* no longer followed */
                        }
                } else if (pick < 77) {
                        /* a remount that flips noatime */
                        size_t k = (size_t) rand() % n_live;
                        unsigned long fl = MS_REMOUNT | MS_BIND | (live[k].noatime ? MS_STRICTATIME : MS_NOATIME);

                        r = mount(NULL, live[k].path, NULL, fl, NULL);
                        if (r == 0)
                                live[k].noatime = !live[k].noatime;
                } else {
                        /* a lazy umount, of the subtree */
                        size_t k = (size_t) rand() % n_live;
                        size_t plen = strlen(live[k].path);

                        r = umount2(live[k].path, MNT_DETACH);
                        if (r == 0) {
                                char gone[256];

                                snprintf(gone, sizeof gone, "%s", live[k].path);
                                live_drop(k);
                                for (size_t j = 0; j < n_live;)
                                        if (strncmp(live[j].path, gone, plen) == 0 && live[j].path[plen] == '/')
                                                live_drop(j);
                                        else
                                                j++;
                        }
                }
                if (r < 0)
                        failed++;
                done++;
                sleep_ms(start + (double) done * gap - now_ms());
        }
        {
                double took = (now_ms() - start) / 1000.0, max = 0, p99 = 0;

                atomic_store(&stop, true);
                if (sock_path)
                        pthread_join(th, NULL);
                if (n_lat > 0) {
                        qsort(lat, n_lat, sizeof *lat, cmp_double);
                        max = lat[n_lat - 1];
                        p99 = lat[(size_t) ((double) (n_lat - 1) * 0.99)];
                }
                printf("ops=%ld seconds=%.1f live=%zu failed=%ld status=%zu status_max_ms=%.1f status_p99_ms=%.1f "
                       "errors=%ld\n",
                       done, took, n_live, failed, n_lat, max, p99, status_errors);
        }
        return 0;
}

static int do_cost(const char *top, long changes, double gap_ms) {
        char p[4096];

        snprintf(p, sizeof p, "%s/c", top);
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return 1;
        for (long i = 0; i < changes; i += 2) {
                if (mount("cost", p, "tmpfs", 0, "size=64k") < 0)
                        return 1;
                sleep_ms(gap_ms);
                if (umount2(p, 0) < 0)
                        return 1;
                sleep_ms(gap_ms);
        }
        return 0;
}

static double task_cpu_ns(pid_t pid) {
        char p[64];
        double ns = -1;
        FILE *f;

        snprintf(p, sizeof p, "/proc/%d/schedstat", (int) pid);
        f = fopen(p, "re");
        if (f) {
                if (fscanf(f, "%lf", &ns) != 1)
                        ns = -1;
                fclose(f);
        }
        return ns;
}

static int do_floor(const char *top, long changes, double gap_ms) {
        int nsfd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        int fan = fanotify_init(FAN_CLASS_NOTIF | 0x00004000 /* FAN_REPORT_MNT */ | FAN_CLOEXEC, O_RDONLY);
        double c0, c1;
        pid_t child;

        if (nsfd < 0 || fan < 0 ||
            fanotify_mark(fan, FAN_MARK_ADD | 0x00000110 /* FAN_MARK_MNTNS */, 0x01000000 | 0x02000000, nsfd, NULL) < 0) {
                fprintf(stderr, "fanotify mount events: %m\n");
                return 1;
        }
        child = fork();
        if (child == 0) {
                static uint8_t buf[16384] __attribute__((aligned(8)));
                static uint8_t sm[4096] __attribute__((aligned(8)));

                for (;;) {
                        struct pollfd p = { .fd = fan, .events = POLLIN };
                        ssize_t n;

                        if (poll(&p, 1, -1) < 0)
                                continue;
                        n = read(fan, buf, sizeof buf);
                        for (ssize_t off = 0; n > 0 && off + 24 + 16 <= n;) {
                                uint32_t len;
                                struct {
                                        uint32_t size, spare;
                                        uint64_t id, param;
                                } req = { 24, 0, 0, 0x1 | 0x2 | 0x10 | 0x20 };

                                memcpy(&len, buf + off, sizeof len);
                                memcpy(&req.id, buf + off + 24 + 8, sizeof req.id);
                                (void) syscall(457 /* statmount */, &req, sm, sizeof sm, 0);
                                if (len == 0)
                                        break;
                                off += len;
                        }
                }
        }
        sleep_ms(200);
        c0 = task_cpu_ns(child);
        if (do_cost(top, changes, gap_ms) != 0)
                return 1;
        sleep_ms(200);
        c1 = task_cpu_ns(child);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        printf("%.1f\n", (c1 - c0) / (double) changes / 1000.0);
        return 0;
}

int main(int argc, char **argv) {
        if ((argc == 4 || argc == 5) && strcmp(argv[1], "base") == 0)
                return do_base(argv[2], argc == 5 ? atol(argv[4]) : 0, atol(argv[3]));
        if ((argc == 6 || argc == 8) && strcmp(argv[1], "storm") == 0) {
                if (argc == 8) {
                        sock_path = argv[6];
                        status_target = argv[7];
                }
                return do_storm(argv[2], atol(argv[3]), atol(argv[4]), atof(argv[5]));
        }
        if (argc == 6 && strcmp(argv[1], "cost") == 0)
                return do_cost(argv[2], atol(argv[4]), atof(argv[5]));
        if (argc == 6 && strcmp(argv[1], "floor") == 0)
                return do_floor(argv[2], atol(argv[4]), atof(argv[5]));
        fprintf(stderr, "usage: mountstorm base DIR N [FROM] | storm DIR N OPS SECONDS [SOCKET TARGET] | cost DIR N CHANGES GAP_MS | floor DIR N CHANGES GAP_MS\n");
        return 2;
}
