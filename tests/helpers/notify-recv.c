/* notify-recv: a NOTIFY_SOCKET of the tests' own. Binds a datagram socket
 * at PATH and prints every message it receives, one assignment per line
 * (binary fields as they came), until killed. With -t each message starts
 * with the CLOCK_MONOTONIC milliseconds of its arrival and a space, so a
 * test can tell how far apart the watchdog's pings came: the kernel's
 * stamp of the datagram as it was queued (SO_TIMESTAMPNS), not the time
 * this reader got round to it, which on a loaded host came hundreds of
 * milliseconds later and made two pings look further apart than they
 * were. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The datagram's arrival, CLOCK_MONOTONIC milliseconds: the kernel's
 * stamp (CLOCK_REALTIME) moved by the clocks' offset now; the time of
 * reading where there is no stamp. */
static long long arrival_ms(struct msghdr *mh) {
        struct timespec mono, real;
        long long ns;

        clock_gettime(CLOCK_MONOTONIC, &mono);
        clock_gettime(CLOCK_REALTIME, &real);
        ns = (long long) mono.tv_sec * 1000000000 + mono.tv_nsec;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                        struct timespec at;

                        memcpy(&at, CMSG_DATA(c), sizeof at);
                        ns -= ((long long) real.tv_sec - at.tv_sec) * 1000000000 + (real.tv_nsec - at.tv_nsec);
                }
        return ns / 1000000;
}

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char buf[4097];
        int fd, stamp = argc == 3 && strcmp(argv[1], "-t") == 0;
        const char *path = argv[argc - 1];

        if ((argc != 2 && !stamp) || strlen(path) >= sizeof sa.sun_path) {
                fprintf(stderr, "usage: notify-recv [-t] PATH\n");
                return 2;
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                fprintf(stderr, "notify-recv: %s: %s\n", path, strerror(errno));
                return 1;
        }
        if (stamp && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &(int) { 1 }, sizeof(int)) < 0) {
                fprintf(stderr, "notify-recv: SO_TIMESTAMPNS: %s\n", strerror(errno));
                return 1;
        }
        for (;;) {
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(sizeof(struct timespec))];
                } control;
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf - 1 };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
                ssize_t n = recvmsg(fd, &mh, 0);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return 1;
                if (stamp)
                        printf("%lld ", arrival_ms(&mh));
                /* As received, NULs and all (the journal's native protocol
                 * frames a binary field with its length). */
                fwrite(buf, 1, (size_t) n, stdout);
                if (n == 0 || buf[n - 1] != '\n')
                        putchar('\n');
                fflush(stdout);
        }
}
