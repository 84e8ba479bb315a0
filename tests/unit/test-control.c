/* test-control: the control server's limits over a real socket, with
 * clients of other uids in child processes (root only, skipped
 * otherwise): connections per user, the slots reserved for privileged
 * clients, the size of a request, and the idle timeout. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "protocol.h"
#include "../tap.h"
#include "loop-wait.h"
#include "varlink.h"

static char dir[] = "/tmp/test-control-XXXXXX";
static char sock_path[96];

static unsigned calls; /* dispatched, all clients */

static int dispatch(void *userdata, ControlCall *call, const char *method, json_object *params,
                    json_object **ret) {
        (void) userdata;
        (void) call;
        (void) method;
        (void) params;
        calls++;
        *ret = varlink_reply_new(json_object_new_object());
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

/* In a child of 'uid': opens 'n' connections and checks the first
 * 'n_served' are served, the rest refused for 'why'; keeps them open
 * until the parent closes 'hold'. Exit status 0: as expected. */
static pid_t clients_of(uid_t uid, unsigned n, unsigned n_served, const char *why, int *ret_hold, int *ret_ready) {
        int hold[2], ready[2];
        pid_t pid;

        if (pipe(hold) < 0 || pipe(ready) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                int fds[8];
                bool good = true;
                char c;

                close(hold[1]);
                close(ready[0]);
                if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(2);
                for (unsigned i = 0; i < n && i < 8; i++) {
                        fds[i] = connect_client();
                        good = good && fds[i] >= 0 && (i < n_served ? served(fds[i]) : refused(fds[i], why));
                }
                (void) write(ready[1], good ? "y" : "n", 1);
                (void) read(hold[0], &c, 1);
                _exit(good ? 0 : 1);
        }
        close(hold[0]);
        close(ready[1]);
        *ret_hold = hold[1];
        *ret_ready = ready[0];
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

        control_server_free(srv);
        (void) unlink(sock_path);
        (void) rmdir(dir);
        return tap_done();
}
