/* helper-client.c: requests to the privileged helper, each on a
 * connection of its own, with a deadline (see helper-client.h). */
#include "helper-client.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <time.h>

#include "caps.h"
#include "helper-proto.h"
#include "helper-server.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

/* Set once at start, before any thread; read only after. */
static HelperVia via = HELPER_VIA_NONE;
static int control = -1;
static pid_t child;
static char *socket_path;

int helper_client_start(bool enabled, const char *path) {
        int r;

        helper_client_stop();
        if (!enabled)
                return HELPER_VIA_NONE;
        if (geteuid() == 0 && caps_have(CAP_SYS_ADMIN)) {
                r = helper_spawn(&control, &child);
                if (r < 0)
                        return r;
                /* A helper that stops reading must not hold a worker. */
                if (fcntl(control, F_SETFL, O_NONBLOCK) < 0) {
                        r = -errno;
                        control = safe_close(control);
                        return r;
                }
                via = HELPER_VIA_CHILD;
                return via;
        }
        socket_path = strdup(path);
        if (!socket_path)
                return -ENOMEM;
        via = HELPER_VIA_SOCKET;
        return via;
}

/* The forked helper, told to go by its control socket's close: reaped,
 * killed if it has not gone within HELPER_STOP_USEC (an ioctl stuck on a
 * filesystem). */
#define HELPER_STOP_USEC (5 * USEC_PER_SEC)
static void reap_child(void) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + HELPER_STOP_USEC;
        pid_t r;

        if (child <= 0)
                return;
        while ((r = waitpid(child, NULL, WNOHANG)) == 0 && now_usec(CLOCK_MONOTONIC) < deadline)
                (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        if (r == 0) {
                log_warning("The btrfs helper (pid %d) has not stopped within %u s: killed", (int) child,
                            (unsigned) (HELPER_STOP_USEC / USEC_PER_SEC));
                (void) kill(child, SIGKILL);
                while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        child = 0;
}

void helper_client_stop(void) {
        control = safe_close(control);
        reap_child();
        free(socket_path);
        socket_path = NULL;
        via = HELPER_VIA_NONE;
}

HelperVia helper_client_via(void) {
        return via;
}

static bool btrfs_on = true;

void helper_client_set_btrfs(bool on) {
        btrfs_on = on;
}

bool helper_client_btrfs(void) {
        return via != HELPER_VIA_NONE && btrfs_on;
}

const char *helper_client_socket(void) {
        return via == HELPER_VIA_SOCKET ? socket_path : NULL;
}

static int connect_socket(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        if (strlen(socket_path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, socket_path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* A Unix socket connects at once or not at all (EAGAIN: its
         * backlog is full). */
        if (connect(fd, (const struct sockaddr *) &sa, sizeof sa) < 0)
                return errno == EAGAIN ? -EBUSY : -errno;
        return TAKE_FD(fd);
}

/* A new connection: a pair whose other end the forked helper is handed. */
static int connect_child(void) {
        int pair[2], r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) < 0)
                return -errno;
        r = helper_send(control, "c", 1, pair[1]);
        safe_close(pair[1]);
        if (r < 0) {
                safe_close(pair[0]);
                return r == -EAGAIN ? -EBUSY : r;
        }
        return pair[0];
}

static int helper_connect(void) {
        if (via == HELPER_VIA_CHILD)
                return connect_child();
        if (via == HELPER_VIA_SOCKET)
                return connect_socket();
        return -ENXIO;
}

/* One reply: the records of a ROOTS message to 'each', or the END. */
static int roots_reply(const uint8_t *buf, size_t len, btrfs_root_fn each, void *userdata,
                       struct btrfs_roots_end *ret_end, bool *ret_done) {
        struct helper_reply h;
        int type = helper_reply_check(buf, len), r;

        if (type < 0)
                return type;
        memcpy(&h, buf, sizeof h);
        if (type == HELPER_REPLY_END) {
                *ret_done = true;
                if (h.status < 0)
                        return h.status;
                if (len != sizeof h + sizeof *ret_end)
                        return -EPROTO;
                memcpy(ret_end, buf + sizeof h, sizeof *ret_end);
                return 0;
        }
        for (uint32_t i = 0; i < h.count; i++) {
                struct btrfs_root_record rec;

                memcpy(&rec, buf + sizeof h + i * sizeof rec, sizeof rec);
                r = each(&rec, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

int helper_btrfs_roots(int fd, uint64_t deadline_usec, btrfs_root_fn each, void *userdata,
                       struct btrfs_roots_end *ret_end) {
        _cleanup_close_ int conn = -1;
        _cleanup_free_ uint8_t *buf = NULL;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct helper_request q = {
                .magic = HELPER_MAGIC,
                .version = HELPER_VERSION,
                .op = HELPER_OP_BTRFS_ROOTS,
                /* Its scan ends a little before we stop waiting: a part, said so, rather than nothing. */
                .timeout_ms = deadline_usec > now ? (uint32_t) MIN((deadline_usec - now) * 3 / 4 / USEC_PER_MSEC,
                                                                    (uint64_t) UINT32_MAX)
                                                  : 0,
        };
        bool done = false;
        int r;

        *ret_end = (struct btrfs_roots_end) {};
        conn = helper_connect();
        if (conn < 0)
                return conn;
        buf = malloc(HELPER_MESSAGE_MAX);
        if (!buf)
                return -ENOMEM;
        r = helper_send(conn, &q, sizeof q, fd);
        while (r >= 0 && !done) {
                ssize_t n = helper_recv(conn, buf, HELPER_MESSAGE_MAX, NULL, deadline_usec);

                r = n < 0 ? (int) n : roots_reply(buf, (size_t) n, each, userdata, ret_end, &done);
        }
        return r == -EPIPE ? -ECONNRESET : r;
}

int helper_mount_events(int nsfd, uint64_t deadline_usec, int *ret_fd) {
        _cleanup_close_ int conn = -1, fd = -1;
        struct helper_request q = {
                .magic = HELPER_MAGIC,
                .version = HELPER_VERSION,
                .op = HELPER_OP_MOUNT_EVENTS,
        };
        struct helper_reply h;
        uint8_t buf[sizeof h + sizeof(struct btrfs_roots_end)];
        ssize_t n;
        int r;

        conn = helper_connect();
        if (conn < 0)
                return conn;
        r = helper_send(conn, &q, sizeof q, nsfd);
        if (r < 0)
                return r == -EPIPE ? -ECONNRESET : r;
        n = helper_recv(conn, buf, sizeof buf, &fd, deadline_usec);
        if (n < 0)
                return (int) n;
        r = helper_reply_check(buf, (size_t) n);
        if (r < 0)
                return r;
        if (r != HELPER_REPLY_END)
                return -EPROTO;
        memcpy(&h, buf, sizeof h);
        if (h.status < 0)
                return h.status;
        if (fd < 0)
                return -EPROTO;
        *ret_fd = TAKE_FD(fd);
        return 0;
}
