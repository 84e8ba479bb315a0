/* test-control: the control server's limits over a real socket, with
 * clients of other uids in child processes (root only, skipped
 * otherwise): connections per user, the slots reserved for privileged
 * clients, the size of a request, the idle timeout, a user's share of the
 * loop's time and the budget of reply bytes held unread. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "control.h"
#include "share.h"
#include "protocol.h"
#include "../tap.h"
#include "loop-wait.h"
#include "varlink.h"

static char dir[] = "/tmp/test-control-XXXXXX";
static char sock_path[96];

static unsigned calls; /* dispatched, all clients */

/* GetStatus's reply here: a MiB of text, more than a socket's buffer takes,
 * so a client that does not read leaves most of it held by the server. */
#define BIG_REPLY (1024 * 1024)
static const char big_request[] = "{\"method\":\"io.atimed.GetStatus\"}";

static int dispatch(void *userdata, ControlCall *call, const char *method, json_object *params,
                    json_object **ret) {
        json_object *p = json_object_new_object();

        (void) userdata;
        (void) call;
        (void) params;
        calls++;
        if (p && streq(method, METHOD_GET_STATUS)) {
                char *big = malloc(BIG_REPLY);

                if (big) {
                        memset(big, 'x', BIG_REPLY);
                        json_object_object_add(p, "big", json_object_new_string_len(big, BIG_REPLY));
                        free(big);
                }
        }
        *ret = p ? varlink_reply_new(p) : NULL;
        return *ret ? 0 : -ENOMEM;
}

static int connect_client(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* The first message the server sends on fd within 'ms', into buf; "" if
 * none came, "EOF" if it closed. */
static const char *read_message(int fd, char *buf, size_t size, int ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        size_t n = 0;

        buf[0] = 0;
        while (n + 1 < size && poll(&p, 1, ms) == 1) {
                ssize_t k = read(fd, buf + n, size - 1 - n);

                if (k <= 0)
                        return n ? buf : "EOF";
                n += (size_t) k;
                buf[n] = 0;
                if (memchr(buf, 0, n) != buf + n)
                        break; /* a whole message, NUL-terminated */
        }
        return buf;
}

/* Whether a connection is served: a request is answered with a reply. */
static bool served(int fd) {
        static const char req[] = "{\"method\":\"io.atimed.GetInfo\"}";
        char buf[4096];

        return write(fd, req, sizeof req) == (ssize_t) sizeof req &&
               strstr(read_message(fd, buf, sizeof buf, 2000), "\"parameters\"") &&
               !strstr(buf, "\"error\"");
}

static bool refused(int fd, const char *why) {
        char buf[4096];

        return strstr(read_message(fd, buf, sizeof buf, 2000), ERROR_TOO_MANY_CLIENTS) && strstr(buf, why);
}

/* Forks a child that runs as 'uid'. The parent gets the child's pid, the
 * end of 'hold' to close when the child may go (*ret_hold) and the end of
 * 'ready' the child answers on (*ret_ready); the child gets 0 and its own
 * ends in *ret_hold and *ret_ready (child_report()). -1 on failure. */
static pid_t fork_as(uid_t uid, int *ret_hold, int *ret_ready) {
        int hold[2], ready[2];
        pid_t pid;

        if (pipe(hold) < 0 || pipe(ready) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                close(hold[1]);
                close(ready[0]);
                if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(2);
                *ret_hold = hold[0];
                *ret_ready = ready[1];
                return 0;
        }
        close(hold[0]);
        close(ready[1]);
        *ret_hold = hold[1];
        *ret_ready = ready[0];
        return pid;
}

/* In the child: says 'y' (good) or 'n' on 'ready', holds its connections
 * until the parent closes its end of 'hold', and exits 0 if good. */
_noreturn_ static void child_report(int hold, int ready, bool good) {
        char c;

        (void) write(ready, good ? "y" : "n", 1);
        (void) read(hold, &c, 1);
        _exit(good ? 0 : 1);
}

/* In a child of 'uid': opens 'n' connections and checks the first
 * 'n_served' are served, the rest refused for 'why'; keeps them open
 * until the parent closes 'hold'. Exit status 0: as expected. */
static pid_t clients_of(uid_t uid, unsigned n, unsigned n_served, const char *why, int *ret_hold, int *ret_ready) {
        pid_t pid = fork_as(uid, ret_hold, ret_ready);

        if (pid == 0) {
                int fds[8];
                bool good = true;

                for (unsigned i = 0; i < n && i < 8; i++) {
                        fds[i] = connect_client();
                        good = good && fds[i] >= 0 && (i < n_served ? served(fds[i]) : refused(fds[i], why));
                }
                child_report(*ret_hold, *ret_ready, good);
        }
        return pid;
}

/* In a child of 'uid' (in a user namespace of its own, owned by 'uid',
 * where it is 0 and the parent's 'mapped', if 'mapped' is not -1): connects
 * and writes 'n' copies of 'msg' (with its NUL) in one go; then, for a
 * oneway 'msg', says 'y' on *ret_ready, else waits for the answer and says
 * whether the connection was served ('y') or refused ('n'); and holds it
 * until the parent closes *ret_hold. */
static pid_t flood_as(uid_t uid, uid_t mapped, const char *msg, size_t n, int *ret_hold, int *ret_ready) {
        int hold[2], ready[2], unshared[2], map_done[2];
        pid_t pid;

        if (pipe(hold) < 0 || pipe(ready) < 0 || pipe(unshared) < 0 || pipe(map_done) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                size_t len = strlen(msg) + 1;
                char *buf = malloc(n * len), c, answer[512];
                struct pollfd p;
                bool wrote;
                int fd;

                close(hold[1]);
                close(ready[0]);
                close(unshared[0]);
                close(map_done[1]);
                if (!buf || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(2);
                /* In a namespace of its own, once the parent has mapped its
                 * 0: that uid, as a user's subordinate one would be. */
                if (mapped != (uid_t) -1 &&
                    (unshare(CLONE_NEWUSER) < 0 || write(unshared[1], "u", 1) != 1 || read(map_done[0], &c, 1) != 1 ||
                     c != 'm' || setresuid(0, 0, 0) < 0))
                        _exit(3);
                for (size_t i = 0; i < n; i++)
                        memcpy(buf + i * len, msg, len);
                fd = connect_client();
                if (fd < 0)
                        _exit(4);
                /* A refused connection may be closed before this write:
                 * its refusal is still there to read. */
                wrote = write(fd, buf, n * len) == (ssize_t) (n * len);
                p = (struct pollfd) { .fd = fd, .events = POLLIN };
                memset(answer, 0, sizeof answer);
                if (strstr(msg, "oneway"))
                        c = wrote ? 'y' : '?';
                else if (poll(&p, 1, 60000) != 1 || read(fd, answer, sizeof answer - 1) <= 0)
                        c = '?';
                else
                        c = strstr(answer, ERROR_TOO_MANY_CLIENTS) ? 'n' : strstr(answer, "\"error\"") ? '?' : 'y';
                (void) write(ready[1], &c, 1);
                (void) read(hold[0], &c, 1);
                _exit(0);
        }
        close(hold[0]);
        close(ready[1]);
        close(unshared[1]);
        close(map_done[0]);
        if (mapped != (uid_t) -1) {
                char path[64], map[64], c;
                int fd;
                bool written = false;

                snprintf(path, sizeof path, "/proc/%d/uid_map", (int) pid);
                snprintf(map, sizeof map, "0 %u 1\n", (unsigned) mapped);
                if (read(unshared[0], &c, 1) == 1 && (fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
                        written = write(fd, map, strlen(map)) == (ssize_t) strlen(map);
                        if (!written)
                                printf("# writing %s: %s\n", path, strerror(errno));
                        close(fd);
                } else
                        printf("# opening %s: %s\n", path, strerror(errno));
                (void) write(map_done[1], written ? "m" : "x", 1);
        }
        close(unshared[0]);
        close(map_done[1]);
        *ret_hold = hold[1];
        *ret_ready = ready[0];
        return pid;
}

/* Reads a whole message from fd (up to 'ms' for each part): 1 for a reply
 * with parameters, 0 for a ReplyBudgetExceeded naming 'why', -1 else. */
static int read_whole(int fd, const char *why, int ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char *buf = malloc(BIG_REPLY + 4096);
        size_t n = 0;
        int r = -1;

        while (buf && n < BIG_REPLY + 4096 && poll(&p, 1, ms) == 1) {
                ssize_t k = read(fd, buf + n, BIG_REPLY + 4096 - n);

                if (k <= 0)
                        break;
                n += (size_t) k;
                if (memchr(buf, 0, n)) {
                        if (strncmp(buf, "{\"parameters\"", 13) == 0)
                                r = 1;
                        else if (strstr(buf, ERROR_REPLY_BUDGET_EXCEEDED) && strstr(buf, why))
                                r = 0;
                        break;
                }
        }
        free(buf);
        return r;
}

/* Reads fd up to the end of the message begun: whether it came. */
static bool drain(int fd, int ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char buf[65536];

        while (poll(&p, 1, ms) == 1) {
                ssize_t k = read(fd, buf, sizeof buf);

                if (k <= 0)
                        return false;
                if (memchr(buf, 0, (size_t) k))
                        return true;
        }
        return false;
}

/* In a child of 'uid': opens 'n' connections (at most 8) and sends
 * GetStatus on each before reading any, then reads the answers. Expects
 * 'n_served' of them served, the others refused for 'why'; then, unless
 * 'hold_one', reads all and asks again on a refused one: served. Says 'y'
 * on *ret_ready if all went so, and holds its connections (the one reply
 * unread, if 'hold_one') until the parent closes *ret_hold. */
static pid_t budget_child(uid_t uid, unsigned n, unsigned n_served, const char *why, bool hold_one, int *ret_hold,
                          int *ret_ready) {
        pid_t pid = fork_as(uid, ret_hold, ret_ready);

        if (pid == 0) {
                int fds[8], served_fd = -1, refused_fd = -1;
                unsigned n_ok = 0, n_refused = 0;
                bool good = true;

                for (unsigned i = 0; i < n && i < 8; i++) {
                        fds[i] = connect_client();
                        good = good && fds[i] >= 0 && write(fds[i], big_request, sizeof big_request) == sizeof big_request;
                }
                /* The refused answer first: the served one is read only
                 * after, as a client that reads late would. */
                for (unsigned i = 0; good && i < n && i < 8; i++) {
                        char buf[256];
                        const char *m = read_message(fds[i], buf, sizeof buf, 10000);

                        if (strstr(m, ERROR_REPLY_BUDGET_EXCEEDED) && strstr(m, why)) {
                                n_refused++;
                                refused_fd = fds[i];
                        } else if (strncmp(m, "{\"parameters\"", 13) == 0) {
                                n_ok++;
                                served_fd = fds[i];
                        }
                }
                good = good && n_ok == n_served && n_refused == n - n_served;
                if (good && !hold_one) {
                        /* Read the rest of the served reply, then ask again. */
                        good = drain(served_fd, 10000) && write(refused_fd, big_request, sizeof big_request) == sizeof big_request &&
                               read_whole(refused_fd, why, 10000) == 1;
                }
                child_report(*ret_hold, *ret_ready, good);
        }
        return pid;
}

static bool readable(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };

        return poll(&p, 1, 0) == 1;
}

/* Runs the loop until fd is readable. */
static bool run_until_readable(sd_event *e, int fd) {
        RUN_LOOP_UNTIL(e, readable(fd));
        return readable(fd);
}

static int child_status(pid_t pid) {
        int status;

        return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The refill of a user's share of the loop: a second a second up to a
 * second's worth, for any gap. elapsed * rate wrapped past 2^64: 213.5 days
 * at a 1 s share (2^64 + 448384) refilled nothing. */
static void test_budget_refill(void) {
        const uint64_t day = 86400 * USEC_PER_SEC;

        is_int(user_share_refill(-500, 250, USEC_PER_SEC), -250, "a quarter of a millisecond refills as much");
        is_int(user_share_refill(-10 * (int64_t) USEC_PER_SEC, 5 * USEC_PER_SEC, USEC_PER_SEC),
               -5 * (int64_t) USEC_PER_SEC, "half of the longest debt in five seconds");
        is_int(user_share_refill(0, 2 * USEC_PER_SEC, 100000), 100000, "full at the rate, no further");
        is_int(user_share_refill(-5, 108 * day, USEC_PER_SEC), (int64_t) USEC_PER_SEC, "108 days later: full");
        is_int(user_share_refill(-5, UINT64_C(18446744073710), USEC_PER_SEC), (int64_t) USEC_PER_SEC,
               "213.5 days later, where elapsed * rate wraps: full");
        is_int(user_share_refill(-5, UINT64_MAX, USEC_PER_SEC), (int64_t) USEC_PER_SEC, "any gap at all: full");
}

/* A server with only the capabilities the daemon keeps (caps.c), in a
 * child process of its own (capabilities the test's clients need to
 * change uid are not the server's): it binds 'path' with 'lim' and runs
 * until SIGTERM. It says its effective capabilities on *ret_ready (a
 * line of /proc/self/status), once it listens. */
static pid_t server_without_caps(const char *path, const struct control_limits *lim, int *ret_ready) {
        int ready[2];
        pid_t pid;

        if (pipe(ready) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                ControlServer *srv = NULL;
                sigset_t ss;
                char status[8192], *eff;
                int lfd = -1, fd;
                ssize_t n;

                close(ready[0]);
                sigemptyset(&ss);
                sigaddset(&ss, SIGTERM);
                if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0 || caps_drop_to_minimum() < 0 || sd_event_new(&e) < 0 ||
                    sd_event_add_signal(e, NULL, SIGTERM, NULL, NULL) < 0 ||
                    control_socket_bind(path, 0666, (gid_t) -1, &lfd) < 0 ||
                    control_server_new(e, lfd, lim, dispatch, NULL, &srv) < 0)
                        _exit(2);
                fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
                n = fd >= 0 ? read(fd, status, sizeof status - 1) : -1;
                status[n > 0 ? n : 0] = 0;
                eff = strstr(status, "CapEff:");
                if (!eff || write(ready[1], eff, strcspn(eff, "\n") + 1) < 0)
                        _exit(3);
                (void) sd_event_loop(e);
                control_server_free(srv);
                _exit(0);
        }
        close(ready[1]);
        *ret_ready = ready[0];
        return pid;
}

/* In the server without capabilities on 'path' (2 connections a user):
 * the connections of 'n' clients, each made by flood_as(uid[i],
 * mapped[i]) and kept open, served ('y') or refused ('n') in 'got', in
 * order (each admitted before the next connects). */
static void connect_each(const char *path, unsigned n, const uid_t *uid, const uid_t *mapped, char *got) {
        static const char req[] = "{\"method\":\"io.atimed.GetInfo\"}";
        int hold[8], ready[8];
        pid_t kids[8];

        snprintf(sock_path, sizeof sock_path, "%s", path);
        for (unsigned i = 0; i < n && i < 8; i++) {
                kids[i] = flood_as(uid[i], mapped[i], req, 1, &hold[i], &ready[i]);
                if (kids[i] <= 0 || read(ready[i], &got[i], 1) != 1)
                        got[i] = '?';
        }
        got[n] = 0;
        /* All let go first: each later child holds the earlier ones' pipes too. */
        for (unsigned i = 0; i < n && i < 8; i++) {
                close(hold[i]);
                close(ready[i]);
        }
        for (unsigned i = 0; i < n && i < 8; i++)
                if (kids[i] <= 0 || child_status(kids[i]) != 0)
                        got[i] = '!';
}

/* Users, however many uids they hold (peer.h), counted by a server that
 * has no ptrace rights: the daemon's capabilities and no more. A
 * namespace's owner is out of its reach: what counts is /etc/subuid (a
 * fixture here) and the peer's /proc/PID/uid_map. */
static void test_users_without_caps(void) {
        struct control_limits lim = {
                .max_clients = 16, .max_clients_per_user = 2, .privileged_gid = (gid_t) -1,
                .max_message_size = 4096, .idle_timeout_usec = 30 * USEC_PER_SEC,
        };
        char path[96], subuid[96], caps[128] = "", got[9];
        const uid_t block = 0x6F000000; /* a container's block of 65,536 uids, as systemd-nspawn picks */
        int ready = -1, fd;
        ssize_t n;
        pid_t server;

        snprintf(path, sizeof path, "%s/sock-nocaps", dir);
        snprintf(subuid, sizeof subuid, "%s/subuid", dir);
        fd = open(subuid, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        ok(fd >= 0 && dprintf(fd, "65531:165531:65536\n") > 0 && close(fd) == 0, "a subuid file: uid 65531 owns 165531-231066");
        lim.subuid_path = subuid;
        server = server_without_caps(path, &lim, &ready);
        n = server > 0 ? read(ready, caps, sizeof caps - 1) : -1;
        caps[n > 0 ? n : 0] = 0;
        is_str(caps, "CapEff:\t000000000000000e\n", "a server with the daemon's capabilities alone (DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER)");

        /* The subordinate uid in a namespace of its owner's, as newuidmap
         * would map it for them. */
        connect_each(path, 3, (uid_t[]) { 65531, 65531, 65531 }, (uid_t[]) { (uid_t) -1, (uid_t) -1, 165531 + 7 }, got);
        is_str(got, "yyn", "a user's two connections served, a third from its subordinate uid in its namespace refused");
        connect_each(path, 3, (uid_t[]) { 65530, 65530, 65531 }, (uid_t[]) { 165531 + 1, 165531 + 2, (uid_t) -1 }, got);
        is_str(got, "yyn", "two from subordinate uids (two namespaces) served, their owner's own third refused");
        /* A container's uids, each in a namespace of its own (as the
         * container's root could nest them): one user. */
        connect_each(path, 3, (uid_t[]) { 65529, 65528, 65527 }, (uid_t[]) { block + 1, block + 2, block + 3 }, got);
        is_str(got, "yyn", "a container's block of uids counts once, however its namespaces split it");
        /* The same uids in the daemon's own namespace: users of their own. */
        connect_each(path, 3, (uid_t[]) { block + 1, block + 2, block + 3 }, (uid_t[]) { (uid_t) -1, (uid_t) -1, (uid_t) -1 }, got);
        is_str(got, "yyy", "high uids in the daemon's namespace each count as themselves");
        ok(server > 0 && kill(server, SIGTERM) == 0 && child_status(server) == 0, "the server exits cleanly");
        close(ready);
        (void) unlink(subuid);
        (void) unlink(path);
}

int main(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ControlServer *srv = NULL;
        struct control_limits lim = {
                .max_clients = 4,
                .max_clients_per_user = 2,
                .reserved_clients = 1,
                .privileged_gid = (gid_t) -1,
                .max_message_size = 128,
                .idle_timeout_usec = 30 * USEC_PER_SEC,
        };
        int lfd = -1, hold_a, ready_a, hold_b, ready_b, root_fd;
        pid_t a, b;
        char c, buf[4096];

        if (geteuid() != 0 || !mkdtemp(dir) || chmod(dir, 0755) < 0) {
                printf("1..0 # SKIP needs root, to connect as other users\n");
                return 0;
        }
        snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
        (void) signal(SIGPIPE, SIG_IGN);
        test_budget_refill();
        ok(sd_event_new(&e) >= 0 && control_socket_bind(sock_path, 0666, (gid_t) -1, &lfd) >= 0 &&
                   control_server_new(e, lfd, &lim, dispatch, NULL, &srv) >= 0,
           "a control server on %s: 4 clients, 2 a user, 1 reserved", sock_path);

        a = clients_of(65534, 3, 2, "too many connections from this user", &hold_a, &ready_a);
        ok(a > 0 && run_until_readable(e, ready_a) && read(ready_a, &c, 1) == 1 && c == 'y',
           "a user's third connection is refused, its first two served");
        is_int(control_server_n_clients(srv), 2, "two clients held");

        b = clients_of(65533, 2, 1, "reserved for privileged clients", &hold_b, &ready_b);
        ok(b > 0 && run_until_readable(e, ready_b) && read(ready_b, &c, 1) == 1 && c == 'y',
           "another user gets the third slot; the last is reserved: refused");

        root_fd = connect_client();
        ok(root_fd >= 0, "root connects");
        {
                static const char req[] = "{\"method\":\"io.atimed.GetInfo\"}";

                ok(write(root_fd, req, sizeof req) == (ssize_t) sizeof req && run_until_readable(e, root_fd) &&
                           strstr(read_message(root_fd, buf, sizeof buf, 100), "\"parameters\""),
                   "and is served in the reserved slot");
        }
        is_int(control_server_n_clients(srv), 4, "four clients held");
        {
                int fd = connect_client();

                ok(fd >= 0 && run_until_readable(e, fd) &&
                           strstr(read_message(fd, buf, sizeof buf, 100), ERROR_TOO_MANY_CLIENTS) &&
                           strstr(buf, "too many clients connected"),
                   "a fifth, even root's, is refused: all slots taken");
                if (fd >= 0)
                        close(fd);
        }

        close(hold_a);
        close(hold_b);
        is_int(child_status(a), 0, "the first user's child saw what it expected");
        is_int(child_status(b), 0, "so did the second's");
        RUN_LOOP_UNTIL(e, control_server_n_clients(srv) <= 1);
        is_int(control_server_n_clients(srv), 1, "their connections are closed; root's is left");

        {
                char big[300];

                memset(big, ' ', sizeof big);
                ok(write(root_fd, big, sizeof big) == (ssize_t) sizeof big && run_until_readable(e, root_fd) &&
                           strstr(read_message(root_fd, buf, sizeof buf, 100), ERROR_REQUEST_TOO_LARGE) &&
                           strstr(buf, "128"),
                   "a request over max_message_size: RequestTooLarge, saying the limit");
        }
        close(root_fd);

        lim.idle_timeout_usec = 200 * USEC_PER_MSEC;
        control_server_set_limits(srv, &lim);
        {
                int fd = connect_client();

                ok(fd >= 0 && run_until_readable(e, fd) && streq(read_message(fd, buf, sizeof buf, 100), "EOF"),
                   "a connection that sends nothing is closed after idle_timeout");
                if (fd >= 0)
                        close(fd);
        }

        /* A flood of oneway calls in one write: they queue no reply, yet
         * each counts against the wakeup's limit, and a client with a
         * request of its own is answered before the flood is through. */
        lim.max_message_size = 65536;
        lim.idle_timeout_usec = 30 * USEC_PER_SEC;
        control_server_set_limits(srv, &lim);
        {
                static const char one[] = "{\"method\":\"io.atimed.GetInfo\",\"oneway\":true}";
                static const char req[] = "{\"method\":\"io.atimed.GetInfo\"}";
                char flood[800 * sizeof one];
                int fd = connect_client(), other = connect_client();
                unsigned before, first_turn, at_answer = 0;

                for (size_t i = 0; i < 800; i++)
                        memcpy(flood + i * sizeof one, one, sizeof one);
                /* Both accepted, and idle, before the flood comes. */
                RUN_LOOP_UNTIL(e, control_server_n_clients(srv) == 2);
                ok(fd >= 0 && other >= 0 && write(fd, flood, sizeof flood) == (ssize_t) sizeof flood &&
                           write(other, req, sizeof req) == (ssize_t) sizeof req,
                   "800 oneway calls in one write, and another client's request");
                before = calls;
                RUN_LOOP_UNTIL(e, calls > before);
                first_turn = calls - before;
                ok(first_turn >= 1 && first_turn <= 16, "one turn of the loop handles %u of them, at most 16", first_turn);
                RUN_LOOP_UNTIL(e, readable(other) || calls - before >= 801);
                at_answer = calls - before;
                ok(readable(other) && strstr(read_message(other, buf, sizeof buf, 100), "\"parameters\""),
                   "the other client is answered");
                ok(at_answer < 100, "after %u calls, not behind the flood", at_answer);
                RUN_LOOP_UNTIL(e, calls - before == 801);
                is_int(calls - before, 801, "every oneway call is handled in the end");
                ok(!readable(fd), "and none is answered");
                close(fd);
                close(other);
        }

        /* A user's share of the loop's time: once spent, their requests
         * wait unread, and root's are answered; they resume as it refills. */
        lim.user_usec_per_s = 2000;
        control_server_set_limits(srv, &lim);
        {
                static const char one[] = "{\"method\":\"io.atimed.GetInfo\",\"oneway\":true}";
                static const char req[] = "{\"method\":\"io.atimed.GetInfo\"}";
                int hold, ready, other;
                unsigned before = calls, at_answer;
                pid_t child = flood_as(65532, (uid_t) -1, one, 800, &hold, &ready);

                ok(child > 0 && read(ready, &c, 1) == 1 && c == 'y', "a user writes 800 oneway calls");
                RUN_LOOP_UNTIL(e, calls - before >= 40);
                other = connect_client();
                ok(other >= 0 && write(other, req, sizeof req) == (ssize_t) sizeof req && run_until_readable(e, other) &&
                           strstr(read_message(other, buf, sizeof buf, 100), "\"parameters\""),
                   "root is answered");
                at_answer = calls - before;
                ok(at_answer >= 40 && at_answer < 400,
                   "while the user, past a share of 2 ms a second (40 calls of 50 us at least), was held at %u", at_answer);
                RUN_LOOP_UNTIL(e, calls - before > at_answer);
                ok(calls - before > at_answer, "and resumes as the share refills");
                close(hold);
                close(other);
                is_int(child_status(child), 0, "the user's child saw what it expected");
                close(ready);
        }
        lim.user_usec_per_s = 0;
        control_server_set_limits(srv, &lim);

        /* The reply bytes a user's connections hold unread: past the
         * budget, a request is answered ReplyBudgetExceeded; reading
         * frees it. All users' together, the same; root is never counted. */
        lim.max_clients = 16;
        lim.max_clients_per_user = 8;
        lim.user_reply_bytes = 3 * BIG_REPLY / 2;
        control_server_set_limits(srv, &lim);
        {
                int hold, ready;
                pid_t child;

                RUN_LOOP_UNTIL(e, control_server_n_clients(srv) == 0);
                child = budget_child(65530, 3, 1, "up to user_reply_memory", false, &hold, &ready);
                ok(child > 0 && run_until_readable(e, ready) && read(ready, &c, 1) == 1 && c == 'y',
                   "a user's three GetStatus of a MiB, unread: one served, two refused (ReplyBudgetExceeded, "
                   "user_reply_memory); once read, served again");
                close(hold);
                is_int(child_status(child), 0, "the user's child saw what it expected");
                close(ready);
        }
        lim.user_reply_bytes = 0;
        lim.reply_bytes = 3 * BIG_REPLY / 2;
        control_server_set_limits(srv, &lim);
        {
                size_t held;
                int fd;

                RUN_LOOP_UNTIL(e, control_server_n_clients(srv) == 0);
                a = budget_child(65530, 1, 1, "", true, &hold_a, &ready_a);
                ok(a > 0 && run_until_readable(e, ready_a) && read(ready_a, &c, 1) == 1 && c == 'y',
                   "a user holds a reply of a MiB unread");
                held = control_server_reply_bytes(srv, 65530);
                ok(held > BIG_REPLY && held < BIG_REPLY + 4096, "counted against them: %zu bytes", held);
                ok(control_server_reply_bytes(srv, (uid_t) -1) == held, "and against all users");
                b = budget_child(65529, 1, 0, "up to reply_memory", true, &hold_b, &ready_b);
                ok(b > 0 && run_until_readable(e, ready_b) && read(ready_b, &c, 1) == 1 && c == 'y',
                   "another user's GetStatus is refused: all users' budget (reply_memory) is spent");
                fd = connect_client();
                ok(fd >= 0 && write(fd, big_request, sizeof big_request) == sizeof big_request &&
                           run_until_readable(e, fd) && strstr(read_message(fd, buf, 64, 100), "{\"parameters\""),
                   "root's is served");
                ok(control_server_reply_bytes(srv, (uid_t) -1) == held, "and its reply, unread, is not counted");
                close(hold_a);
                close(hold_b);
                is_int(child_status(a), 0, "the first user's child saw what it expected");
                is_int(child_status(b), 0, "so did the second's");
                close(ready_a);
                close(ready_b);
                RUN_LOOP_UNTIL(e, control_server_reply_bytes(srv, (uid_t) -1) == 0);
                is_int(control_server_reply_bytes(srv, (uid_t) -1), 0, "their connections closed, nothing is held");
                if (fd >= 0)
                        close(fd);
        }

        /* Time spent for a user outside their requests (a reply built
         * later, in slices) is charged to their share: their next request
         * waits for it to refill. Root is never charged. */
        lim.reply_bytes = 0;
        lim.user_usec_per_s = USEC_PER_SEC;
        control_server_set_limits(srv, &lim);
        {
                static const char req[] = "{\"method\":\"io.atimed.GetInfo\"}";
                ControlPeer user = { .uid = 65528, .user = 65528, .gid = 65528 }, root = { .user = 0 };
                uint64_t t0 = now_usec(CLOCK_MONOTONIC), waited;
                int hold, ready, fd;
                pid_t child;

                control_server_charge(srv, &root, 60 * USEC_PER_SEC);
                fd = connect_client();
                ok(fd >= 0 && write(fd, req, sizeof req) == (ssize_t) sizeof req && run_until_readable(e, fd) &&
                           strstr(read_message(fd, buf, sizeof buf, 100), "\"parameters\""),
                   "root, charged a minute, is answered at once");
                if (fd >= 0)
                        close(fd);
                t0 = now_usec(CLOCK_MONOTONIC);
                control_server_charge(srv, &user, 1300 * USEC_PER_MSEC);
                child = flood_as(65528, (uid_t) -1, req, 1, &hold, &ready);
                ok(child > 0 && run_until_readable(e, ready) && read(ready, &c, 1) == 1 && c == 'y',
                   "a user charged 1.3 s of a 1 s share is answered");
                waited = now_usec(CLOCK_MONOTONIC) - t0;
                ok(waited >= 290 * USEC_PER_MSEC, "once the share refilled: after %" PRIu64 " ms, 300 at least",
                   waited / USEC_PER_MSEC);
                close(hold);
                is_int(child_status(child), 0, "the user's child saw what it expected");
                close(ready);
        }

        control_server_free(srv);
        (void) unlink(sock_path);
        test_users_without_caps();
        (void) rmdir(dir);
        return tap_done();
}
