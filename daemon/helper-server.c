/* helper-server.c: the privileged helper's connections and requests
 * (see helper-server.h). */
#include "helper-server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btrfs-roots.h"
#include "caps.h"
#include "helper-proto.h"
#include "log.h"
#include "macro.h"
#include "mount-kernel.h"
#include "time-util.h"

/* A connection with no request for this long is closed. */
#define IDLE_USEC (60 * USEC_PER_SEC)
/* A request's own deadline is at most this. */
#define REQUEST_TIMEOUT_MAX_MS 60000u

/* The records of one reply message, sent when full and at the end. */
struct batch {
        int conn;
        struct {
                struct helper_reply h;
                struct btrfs_root_record r[HELPER_ROOTS_PER_MESSAGE];
        } m;
};

static int batch_send(struct batch *b) {
        int r;

        if (b->m.h.count == 0)
                return 0;
        r = helper_send(b->conn, &b->m, sizeof b->m.h + b->m.h.count * sizeof *b->m.r, -1);
        b->m.h.count = 0;
        return r;
}

static int batch_add(const struct btrfs_root_record *rec, void *userdata) {
        struct batch *b = userdata;

        b->m.r[b->m.h.count++] = *rec;
        return b->m.h.count == HELPER_ROOTS_PER_MESSAGE ? batch_send(b) : 0;
}

static int reply_end_fd(int conn, int status, const void *data, size_t len, int fd) {
        struct {
                struct helper_reply h;
                struct btrfs_roots_end end;
        } m = {
                .h = { .magic = HELPER_MAGIC, .version = HELPER_VERSION, .type = HELPER_REPLY_END, .status = status },
        };

        if (len > sizeof m.end)
                return -EINVAL;
        if (data)
                memcpy(&m.end, data, len);
        return helper_send(conn, &m, sizeof m.h + (status == 0 ? len : 0), fd);
}

static int reply_end(int conn, int status, const void *data, size_t len) {
        return reply_end_fd(conn, status, data, len, -1);
}

/* The group is made here, where CAP_SYS_ADMIN is held, and handed over:
 * reading it needs nothing. */
static int serve_mount_events(int conn, int nsfd) {
        _cleanup_close_ int fan = kmount_events_open(nsfd);

        if (fan < 0)
                return reply_end(conn, fan, NULL, 0);
        return reply_end_fd(conn, 0, NULL, 0, fan);
}

static int serve_roots(int conn, int fd, uint32_t timeout_ms) {
        _cleanup_free_ struct batch *b = calloc(1, sizeof *b);
        struct btrfs_roots_end end;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + MIN(timeout_ms, REQUEST_TIMEOUT_MAX_MS) * USEC_PER_MSEC;
        int r;

        if (!b)
                return reply_end(conn, -ENOMEM, NULL, 0);
        b->conn = conn;
        b->m.h = (struct helper_reply) { .magic = HELPER_MAGIC, .version = HELPER_VERSION, .type = HELPER_REPLY_ROOTS };
        r = btrfs_roots_scan(fd, deadline, batch_add, b, &end);
        if (r >= 0)
                r = batch_send(b);
        if (r == -EPIPE || r == -ECONNRESET)
                return r; /* the daemon went away: nobody to answer */
        return reply_end(conn, MIN(r, 0), &end, sizeof end);
}

int helper_serve_connection(int conn) {
        int fl = fcntl(conn, F_GETFL);

        /* Replies wait for the daemon to read them (a passed socketpair
         * comes non-blocking): a daemon that gave up closes its end, and
         * the send fails then. */
        if (fl < 0 || fcntl(conn, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return -errno;
        for (;;) {
                struct helper_request q;
                _cleanup_close_ int fd = -1;
                ssize_t n = helper_recv(conn, &q, sizeof q, &fd, now_usec(CLOCK_MONOTONIC) + IDLE_USEC);
                int r;

                if (n == -ECONNRESET || n == -ETIMEDOUT)
                        return 0;
                if (n < 0)
                        return (int) n;
                if ((size_t) n != sizeof q || q.magic != HELPER_MAGIC || q.version != HELPER_VERSION) {
                        /* Not atimed's protocol, or another version of it: said, and done. */
                        (void) reply_end(conn, -EPROTO, NULL, 0);
                        return -EPROTO;
                }
                if (fd < 0)
                        r = reply_end(conn, -EBADF, NULL, 0);
                else if (q.op == HELPER_OP_BTRFS_ROOTS)
                        r = serve_roots(conn, fd, q.timeout_ms);
                else if (q.op == HELPER_OP_MOUNT_EVENTS)
                        r = serve_mount_events(conn, fd);
                else
                        r = reply_end(conn, -EOPNOTSUPP, NULL, 0);
                if (r < 0)
                        return r;
        }
}

/* The next connection: accepted, or passed by the daemon; -ECONNRESET
 * where the daemon closed its end. */
static int next_connection(int fd, HelperListen kind, int *ret) {
        char c;
        ssize_t n;

        if (kind == HELPER_LISTEN_ACCEPT) {
                *ret = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                return *ret < 0 ? -errno : 0;
        }
        n = helper_recv(fd, &c, sizeof c, ret, 0);
        if (n < 0)
                return (int) n;
        return *ret >= 0 ? 0 : -EBADMSG;
}

static bool peer_is_root(int conn) {
        struct ucred u;
        socklen_t l = sizeof u;

        return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &u, &l) == 0 && u.uid == 0;
}

static void reap(unsigned *n_children) {
        while (*n_children > 0 && waitpid(-1, NULL, WNOHANG) > 0)
                (*n_children)--;
}

/* conn in a child of its own; the parent's count of them. */
static void serve_forked(int fd, int conn, unsigned *n_children, bool *busy_said) {
        pid_t pid;

        if (*n_children >= HELPER_CONNECTIONS_MAX) {
                if (!*busy_said)
                        log_warning("%u connections are being served (a filesystem that does not answer?): "
                                    "more are refused until one ends", *n_children);
                *busy_said = true;
                return;
        }
        *busy_said = false;
        pid = fork();
        if (pid < 0) {
                log_warning_errno(-errno, "Cannot fork to serve a connection: %m");
                return;
        }
        if (pid == 0) {
                /* An ioctl stuck on a filesystem must not outlive the helper. */
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                safe_close(fd);
                _exit(helper_serve_connection(conn) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
        }
        (*n_children)++;
}

int helper_server_run(int fd, HelperListen kind) {
        unsigned n_children = 0;
        bool busy_said = false;
        LogRatelimit rl = LOG_RATELIMIT_INIT(60 * USEC_PER_SEC, 5);

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int conn = -1, r;

                reap(&n_children);
                /* Woken once a second at least, to reap. */
                r = poll(&p, 1, n_children > 0 ? 1000 : -1);
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                r = next_connection(fd, kind, &conn);
                if (r == -ECONNRESET)
                        return 0;
                if (r == -EINTR || r == -ECONNABORTED || r == -EAGAIN)
                        continue;
                if (r < 0)
                        return r;
                if (!peer_is_root(conn))
                        log_ratelimit_full(&rl, LOG_WARNING, "A connection not from root was refused");
                else
                        serve_forked(fd, conn, &n_children, &busy_said);
                safe_close(conn);
        }
}

/* The spawned helper's process: only its end of the pair open (as fd 3),
 * default signals, CAP_SYS_ADMIN alone. */
static _noreturn_ void spawned(int control) {
        sigset_t all;
        int r;

        if (dup2(control, 3) < 0)
                _exit(EXIT_FAILURE);
        (void) close_range(4, ~0U, 0);
        (void) fcntl(3, F_SETFD, FD_CLOEXEC);
        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        for (int s = 1; s < _NSIG; s++)
                if (s != SIGKILL && s != SIGSTOP)
                        (void) signal(s, SIG_DFL);
        (void) setsid();
        (void) chdir("/");
        log_set_program("atimed-helper");
        r = caps_keep_only_sys_admin();
        if (r < 0) {
                log_error_errno(r, "Cannot reduce the helper's capabilities to CAP_SYS_ADMIN: %m");
                _exit(EXIT_FAILURE);
        }
        r = helper_server_run(3, HELPER_LISTEN_PASSED);
        if (r < 0)
                log_error_errno(r, "The helper stopped: %m");
        _exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

int helper_spawn(int *ret_control, pid_t *ret_pid) {
        pid_t parent = getpid(), pid;
        int pair[2];

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                safe_close(pair[0]);
                safe_close(pair[1]);
                return r;
        }
        if (pid == 0) {
                /* Killed with the daemon, even by SIGKILL; and gone at
                 * once if the daemon died before that was asked. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                safe_close(pair[0]);
                spawned(pair[1]);
        }
        safe_close(pair[1]);
        *ret_control = pair[0];
        *ret_pid = pid;
        return 0;
}
