/* notify-recv: a NOTIFY_SOCKET of the tests' own. Binds a datagram socket
 * at PATH and prints every message it receives, one assignment per line
 * (binary fields as they came), until killed. With -t each message starts
 * with the CLOCK_MONOTONIC milliseconds of its arrival and a space, so a
 * test can tell how far apart the watchdog's pings came. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

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
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof buf - 1, 0);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return 1;
                if (stamp) {
                        struct timespec ts;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        printf("%lld ", (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
                }
                /* As received, NULs and all (the journal's native protocol
                 * frames a binary field with its length). */
                fwrite(buf, 1, (size_t) n, stdout);
                if (n == 0 || buf[n - 1] != '\n')
                        putchar('\n');
                fflush(stdout);
        }
}
