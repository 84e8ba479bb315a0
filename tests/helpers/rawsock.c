/* rawsock: sends raw bytes to a stream socket and prints what comes back,
 * NUL separators turned into newlines. For feeding the control socket what
 * atimectl never would: malformed, oversize, pipelined or slow requests.
 *
 *   rawsock [-t SECONDS] [-d MSEC] [-k] [-n REPLIES] [-c] PATH < bytes
 *     -t  give up reading after SECONDS (default 10)
 *     -d  send one byte every MSEC milliseconds (a slow client)
 *     -k  keep the write side open (no shutdown after sending)
 *     -n  stop after this many replies
 *     -c  close as soon as everything is sent, reading nothing (a client
 *         that asks and goes away)
 * Exit: 0 when the server closed the connection or -n replies arrived,
 * 3 on timeout, 1 on error. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char *atexit_free;

static void free_input(void) {
        free(atexit_free);
}

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int timeout = 10, delay = 0, keep = 0, want = -1, replies = 0, quit = 0, c, fd;
        size_t len = 0, cap = 1 << 16;
        char *in = malloc(cap), buf[65536];
        ssize_t n;

        while ((c = getopt(argc, argv, "t:d:kn:c")) >= 0)
                switch (c) {
                case 't': timeout = atoi(optarg); break;
                case 'd': delay = atoi(optarg); break;
                case 'k': keep = 1; break;
                case 'n': want = atoi(optarg); break;
                case 'c': quit = 1; break;
                default: return 2;
                }
        atexit(free_input);
        if (optind + 1 != argc || strlen(argv[optind]) >= sizeof sa.sun_path || !in)
                return 2;
        while ((n = read(STDIN_FILENO, in + len, cap - len)) > 0) {
                len += (size_t) n;
                if (len == cap && !(in = realloc(in, cap *= 2)))
                        return 1;
        }
        strcpy(sa.sun_path, argv[optind]);
        atexit_free = in;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                fprintf(stderr, "rawsock: %s: %s\n", argv[optind], strerror(errno));
                return 1;
        }
        for (size_t off = 0; off < len;) {
                size_t chunk = delay ? 1 : len - off;
                n = send(fd, in + off, chunk, MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno != EPIPE && errno != ECONNRESET)
                                fprintf(stderr, "rawsock: send: %s\n", strerror(errno));
                        break; /* the server may have closed on us: still read its reply */
                }
                off += (size_t) n;
                if (delay) {
                        struct timespec ts = { delay / 1000, (delay % 1000) * 1000000L };
                        nanosleep(&ts, NULL);
                }
        }
        if (quit) {
                close(fd);
                return 0;
        }
        if (!keep)
                shutdown(fd, SHUT_WR);

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int r = poll(&p, 1, timeout * 1000);

                if (r == 0) {
                        fflush(stdout);
                        return 3;
                }
                if (r < 0 && errno == EINTR)
                        continue;
                n = recv(fd, buf, sizeof buf, 0);
                if (n < 0 && errno == ECONNRESET)
                        break;
                if (n < 0) {
                        fprintf(stderr, "rawsock: recv: %s\n", strerror(errno));
                        return 1;
                }
                if (n == 0)
                        break;
                for (ssize_t i = 0; i < n; i++) {
                        putchar(buf[i] ? buf[i] : '\n');
                        if (!buf[i] && ++replies == want) {
                                fflush(stdout);
                                return 0;
                        }
                }
        }
        fflush(stdout);
        return 0;
}
