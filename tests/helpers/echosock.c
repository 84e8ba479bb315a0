/* echosock: a server that does nothing, the control beside the daemon in
 * the hostile tests. It listens on a stream socket and answers each
 * connection's first message (up to its NUL) with {"parameters":{}} and a
 * NUL, then closes it: one connection at a time, one thread, as the
 * daemon's loop serves them. A call timed against it (connhold -m) costs
 * what the host's load costs any server's call (waiting for a CPU to
 * accept, read and answer); the same call to the daemon costs that and
 * what the daemon makes it wait, so the ratio of the two is the daemon's
 * own, whatever else the host runs.
 *
 *   echosock PATH
 *
 * Runs until killed; exit 1 if it cannot listen. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char reply[] = "{\"parameters\":{}}";

/* Reads up to the message's NUL (10 s at most), then answers. */
static void serve(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char buf[4096];

        while (poll(&p, 1, 10000) == 1) {
                ssize_t n = read(fd, buf, sizeof buf);

                if (n <= 0)
                        return;
                if (memchr(buf, 0, (size_t) n)) {
                        (void) send(fd, reply, sizeof reply, MSG_NOSIGNAL);
                        return;
                }
        }
}

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int l;

        if (argc != 2 || strlen(argv[1]) >= sizeof sa.sun_path) {
                fprintf(stderr, "usage: echosock PATH\n");
                return 1;
        }
        strcpy(sa.sun_path, argv[1]);
        (void) unlink(argv[1]);
        l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (l < 0 || bind(l, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(l, SOMAXCONN) < 0) {
                fprintf(stderr, "echosock: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
                int fd = accept(l, NULL, NULL);

                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return 1;
                }
                serve(fd);
                close(fd);
        }
}
