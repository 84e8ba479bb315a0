/* ctlbench: a load generator for the control socket, speaking the protocol
 * directly (NUL-terminated JSON, Varlink's form).
 *
 *   ctlbench SOCKET latency N [connect]
 *       N GetStatus calls one after the other on one connection (or, with
 *       "connect", each on a new connection, as atimectl does); prints
 *       "P50_US P99_US MAX_US REPLY_BYTES"
 *   ctlbench SOCKET throughput CLIENTS SECONDS
 *       CLIENTS connections (one thread each) calling GetStatus back to back
 *       for SECONDS; prints "REQUESTS_PER_S P50_US P99_US ERRORS" */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char request[] = "{\"method\":\"io.atimed.GetStatus\",\"parameters\":{}}";
static const char *sock_path;

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

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

struct conn {
        int fd;
        char *buf;
        size_t cap;
};

/* One call: the request, then the reply up to its NUL. Returns the reply's
 * length, or -1; an error reply counts as -2. */
static ssize_t call(struct conn *c) {
        size_t len = 0;

        if (write(c->fd, request, sizeof request) != (ssize_t) sizeof request)
                return -1;
        for (;;) {
                ssize_t n;

                if (len == c->cap) {
                        char *nb = realloc(c->buf, c->cap = c->cap ? 2 * c->cap : 1 << 16);
                        if (!nb)
                                return -1;
                        c->buf = nb;
                }
                n = read(c->fd, c->buf + len, c->cap - len);
                if (n <= 0)
                        return -1;
                len += (size_t) n;
                if (c->buf[len - 1] == 0)
                        break;
        }
        if (len > 9 && !strncmp(c->buf, "{\"error\"", 8))
                return -2;
        return (ssize_t) len;
}

static int latency(int n, int reconnect) {
        struct conn c = { .fd = -1 };
        double *v = calloc((size_t) n, sizeof *v);
        ssize_t size = 0;

        if (!v)
                return 1;
        for (int i = 0; i < n; i++) {
                double t0 = now_us();

                if (c.fd < 0 && (c.fd = connect_socket()) < 0) {
                        perror(sock_path);
                        return 1;
                }
                size = call(&c);
                if (reconnect) {
                        close(c.fd);
                        c.fd = -1;
                }
                v[i] = now_us() - t0;
                if (size < 0) {
                        fprintf(stderr, "ctlbench: call failed (%zd)\n", size);
                        return 1;
                }
        }
        qsort(v, (size_t) n, sizeof *v, cmp_double);
        printf("%.0f %.0f %.0f %zd\n", v[n / 2], v[(size_t) (0.99 * n)], v[n - 1], size - 1);
        return 0;
}

struct worker {
        pthread_t thread;
        double until;
        double *lat;
        size_t n, cap;
        unsigned long errors;
};

static atomic_int go;

static void *worker_run(void *arg) {
        struct worker *w = arg;
        struct conn c = { .fd = connect_socket() };

        while (!atomic_load(&go))
                ;
        if (c.fd < 0) {
                w->errors++;
                return NULL;
        }
        for (;;) {
                double t0 = now_us(), t1;
                ssize_t r = call(&c);

                t1 = now_us();
                if (r < 0) {
                        w->errors++;
                        if (r == -1)
                                break;
                }
                if (w->n == w->cap) {
                        double *nl = realloc(w->lat, (w->cap = w->cap ? 2 * w->cap : 4096) * sizeof *nl);
                        if (!nl)
                                break;
                        w->lat = nl;
                }
                w->lat[w->n++] = t1 - t0;
                if (t1 >= w->until)
                        break;
        }
        close(c.fd);
        free(c.buf);
        return NULL;
}

static int throughput(int clients, double seconds) {
        struct worker *w = calloc((size_t) clients, sizeof *w);
        double start, elapsed, *all;
        size_t total = 0, k = 0;
        unsigned long errors = 0;

        if (!w)
                return 1;
        start = now_us() + 50000; /* the threads connect first */
        for (int i = 0; i < clients; i++) {
                w[i].until = start + seconds * 1e6;
                if (pthread_create(&w[i].thread, NULL, worker_run, &w[i]) != 0)
                        return 1;
        }
        while (now_us() < start)
                usleep(1000);
        start = now_us();
        atomic_store(&go, 1);
        for (int i = 0; i < clients; i++) {
                pthread_join(w[i].thread, NULL);
                total += w[i].n;
                errors += w[i].errors;
        }
        elapsed = (now_us() - start) / 1e6;
        all = malloc((total ? total : 1) * sizeof *all);
        if (!all)
                return 1;
        for (int i = 0; i < clients; i++) {
                memcpy(all + k, w[i].lat, w[i].n * sizeof *all);
                k += w[i].n;
                free(w[i].lat);
        }
        qsort(all, total, sizeof *all, cmp_double);
        printf("%.0f %.0f %.0f %lu\n", (double) total / elapsed, total ? all[total / 2] : 0,
               total ? all[(size_t) (0.99 * total)] : 0, errors);
        free(all);
        free(w);
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc < 4) {
                fprintf(stderr, "usage: ctlbench SOCKET latency N [connect] | SOCKET throughput CLIENTS SECONDS\n");
                return 2;
        }
        sock_path = argv[1];
        if (!strcmp(argv[2], "latency"))
                return latency(atoi(argv[3]), argc > 4 && !strcmp(argv[4], "connect"));
        if (!strcmp(argv[2], "throughput") && argc > 4)
                return throughput(atoi(argv[3]), atof(argv[4]));
        fprintf(stderr, "ctlbench: unknown mode %s\n", argv[2]);
        return 2;
}
