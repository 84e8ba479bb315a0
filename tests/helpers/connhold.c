/* connhold: a hostile client of a stream socket. It tries to hold N
 * connections for a while, sending one space on each every MSEC ms (bytes
 * that never complete a request), and opens again at once any connection
 * the server closes or refuses.
 *
 *   connhold [-n N] [-t SECONDS] [-i MSEC] PATH
 *   connhold -m|-f [-t SECONDS] [-r REQUEST] PATH
 *
 * Prints one line of figures:
 *   attempts A refused R idle_closed C max_held H max_idle_life_ms L
 * refused: connections answered with a reply (the server's refusal) and
 * closed; idle_closed: closed without any reply; held: open for over
 * 500 ms without a reply (the server accepted them); max_idle_life_ms: the
 * longest an idle-closed connection lived. Raises its own RLIMIT_NOFILE to
 * fit N.
 *
 * With -f it floods: the same calls as -m, one after another without a
 * pause (the figures are the flood's own).
 *
 * With -m it is the victim instead: every 100 ms it connects, asks
 * io.atimed.GetStatus and reads the whole reply, timing each call (from
 * connect to the reply's NUL), and prints
 *   calls N failures F p50_ms P max_ms M
 * where a failure is an error reply, a refused connection or no reply
 * within 10 s. -r sends REQUEST (a whole JSON message) instead of the
 * bare GetStatus: {"method":"io.atimed.GetStatus","parameters":
 * {"target":"/","history_s":3600}} is what `atimectl status /` asks.
 * Exit 0, or 1 on a setup error. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct conn {
        int fd;
        bool replied;
        uint64_t opened, last_sent;
};

static struct sockaddr_un sa = { .sun_family = AF_UNIX };
static unsigned long attempts, refused, idle_closed;
static uint64_t max_idle_life;

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void conn_open(struct conn *c, uint64_t now) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        c->fd = -1;
        if (fd < 0)
                return;
        attempts++;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                close(fd); /* backlog full (EAGAIN): again on the next turn */
                return;
        }
        *c = (struct conn) { .fd = fd, .opened = now, .last_sent = now };
}

static void conn_closed(struct conn *c, uint64_t now) {
        if (c->replied)
                refused++;
        else {
                idle_closed++;
                if (now - c->opened > max_idle_life)
                        max_idle_life = now - c->opened;
        }
        close(c->fd);
        c->fd = -1;
}

static const char *request = "{\"method\":\"io.atimed.GetStatus\"}";
/* The pause between calls: -m's 100 ms, none with -f. */
static unsigned pause_us = 100000;

/* One call of 'request' on a new connection: its duration in µs, or -1. */
static int64_t timed_call(void) {
        const char *req = request;
        uint64_t t0;
        struct timespec ts;
        char buf[65536];
        bool ok = false, done = false;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct timeval tv = { .tv_sec = 10 };

        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        if (fd < 0)
                return -1;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || send(fd, req, strlen(req) + 1, MSG_NOSIGNAL) < 0) {
                close(fd);
                return -1;
        }
        for (bool first = true; !done; first = false) {
                ssize_t k = recv(fd, buf, sizeof buf, 0);

                if (k <= 0)
                        break;
                /* A reply to GetStatus starts with its parameters, an error
                 * with "error". */
                if (first)
                        ok = k > 2 && memcmp(buf, "{\"parameters\"", k < 13 ? (size_t) k : 13) == 0;
                done = memchr(buf, 0, (size_t) k) != NULL;
        }
        close(fd);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ok && done ? (int64_t) ((uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000 - t0) : -1;
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return x < y ? -1 : x > y;
}

static int measure(unsigned seconds) {
        size_t cap = (size_t) seconds * (pause_us ? 10 : 20000) + 16, n = 0, failures = 0;
        int64_t *us = calloc(cap, sizeof *us);
        uint64_t end = now_ms() + (uint64_t) seconds * 1000;

        if (!us)
                return 1;
        while (now_ms() < end && n < cap) {
                int64_t d = timed_call();

                if (d < 0)
                        failures++;
                else
                        us[n++] = d;
                if (pause_us)
                        usleep(pause_us);
        }
        qsort(us, n, sizeof *us, cmp_i64);
        printf("calls %zu failures %zu p50_ms %.1f max_ms %.1f\n", n + failures, failures,
               n ? us[(n - 1) / 2] / 1000.0 : -1.0, n ? us[n - 1] / 1000.0 : -1.0);
        free(us);
        return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char *argv[]) {
        unsigned n = 1000, seconds = 10, interval = 1000, max_held = 0;
        bool victim = false;
        struct conn *conns;
        struct pollfd *pfd;
        struct rlimit rl;
        uint64_t end;
        int opt;

        while ((opt = getopt(argc, argv, "n:t:i:mfr:")) >= 0)
                switch (opt) {
                case 'm': victim = true; break;
                case 'f': victim = true; pause_us = 0; break;
                case 'r': request = optarg; break;
                case 'n': n = (unsigned) atoi(optarg); break;
                case 't': seconds = (unsigned) atoi(optarg); break;
                case 'i': interval = (unsigned) atoi(optarg); break;
                default: return 1;
                }
        if (optind != argc - 1 || strlen(argv[optind]) >= sizeof sa.sun_path || n == 0) {
                fprintf(stderr, "usage: connhold [-n N] [-t SECONDS] [-i MSEC] PATH\n");
                return 1;
        }
        strcpy(sa.sun_path, argv[optind]);
        if (victim)
                return measure(seconds);
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n + 16) {
                rl.rlim_cur = rl.rlim_max < n + 16 ? rl.rlim_max : n + 16;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        conns = calloc(n, sizeof *conns);
        pfd = calloc(n, sizeof *pfd);
        if (!conns || !pfd)
                return 1;
        for (unsigned i = 0; i < n; i++)
                conns[i].fd = -1;

        end = now_ms() + (uint64_t) seconds * 1000;
        for (uint64_t now = now_ms(); now < end; now = now_ms()) {
                unsigned held = 0;

                for (unsigned i = 0; i < n; i++) {
                        struct conn *c = &conns[i];

                        if (c->fd < 0)
                                conn_open(c, now);
                        if (c->fd >= 0 && now - c->last_sent >= interval) {
                                if (send(c->fd, " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN) {
                                        char b[256];

                                        /* Refused: the reply may still be unread. */
                                        if (recv(c->fd, b, sizeof b, MSG_DONTWAIT) > 0)
                                                c->replied = true;
                                        conn_closed(c, now);
                                }
                                else
                                        c->last_sent = now;
                        }
                        if (c->fd >= 0 && !c->replied && now - c->opened > 500)
                                held++;
                        pfd[i] = (struct pollfd) { .fd = c->fd, .events = POLLIN };
                }
                if (held > max_held)
                        max_held = held;
                if (poll(pfd, n, 50) < 0 && errno != EINTR)
                        return 1;
                now = now_ms();
                for (unsigned i = 0; i < n; i++) {
                        struct conn *c = &conns[i];
                        char buf[4096];
                        ssize_t k;

                        if (c->fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        k = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
                        if (k > 0)
                                c->replied = true;
                        else if (k == 0 || (errno != EAGAIN && errno != EINTR))
                                conn_closed(c, now);
                }
        }
        printf("attempts %lu refused %lu idle_closed %lu max_held %u max_idle_life_ms %llu\n", attempts, refused,
               idle_closed, max_held, (unsigned long long) max_idle_life);
        for (unsigned i = 0; i < n; i++)
                if (conns[i].fd >= 0)
                        close(conns[i].fd);
        free(conns);
        free(pfd);
        return fflush(stdout) == 0 ? 0 : 1;
}
