/* test-helper: atimed's privileged helper and the daemon's side of it,
 * over real sockets and processes, on what needs no btrfs: the protocol's
 * messages and the file descriptors they carry, what the helper answers
 * to a request it cannot serve (not a btrfs, an operation it does not
 * know, no file, another protocol), that each connection is served by a
 * process of its own, and that the daemon's side gives up at its deadline
 * on a helper that does not answer. The tree of roots itself is read on a
 * real btrfs by tests/integration/btrfs.sh and btrfs-attacks.sh. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "../tap.h"
#include "caps.h"
#include "helper-client.h"
#include "helper-proto.h"
#include "helper-server.h"
#include "macro.h"
#include "time-util.h"

/* One request on 'conn' with 'fd' passed (-1: none): the END's status. */
static int ask(int conn, uint32_t magic, uint16_t op, int fd) {
        struct helper_request q = { .magic = magic, .version = HELPER_VERSION, .op = op, .timeout_ms = 1000 };
        uint8_t buf[HELPER_MESSAGE_MAX];
        struct helper_reply h;
        ssize_t n;

        if (helper_send(conn, &q, sizeof q, fd) < 0)
                return -999;
        n = helper_recv(conn, buf, sizeof buf, NULL, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC);
        if (n < 0)
                return (int) n;
        if (helper_reply_check(buf, (size_t) n) != HELPER_REPLY_END)
                return -998;
        memcpy(&h, buf, sizeof h);
        return h.status;
}

static pid_t serve_in_child(int conn, int other) {
        pid_t pid = fork();

        if (pid == 0) {
                close(other);
                _exit(helper_serve_connection(conn) < 0 ? 1 : 0);
        }
        close(conn);
        return pid;
}

static void test_requests(void) {
        int pair[2], tmp = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), status = -1;
        pid_t pid;

        ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0 && tmp >= 0, "a connection and a file");
        pid = serve_in_child(pair[1], pair[0]);
        /* / is whatever the test runs on; a btrfs root would be read. */
        int r = ask(pair[0], HELPER_MAGIC, HELPER_OP_BTRFS_ROOTS, tmp);
        ok(r == -EMEDIUMTYPE || r == 0 || r == -EPERM, "the tree of roots of a file: read, or refused by what it is on (%d)", r);
        is_int(ask(pair[0], HELPER_MAGIC, HELPER_OP_MOUNT_EVENTS, tmp), -EINVAL,
               "mount events on a file that is no mount namespace: refused, and the connection goes on");
        {
                int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

                r = ask(pair[0], HELPER_MAGIC, HELPER_OP_MOUNT_EVENTS, ns);
                ok(caps_have(CAP_SYS_ADMIN) ? r == 0 : r == -EPERM,
                   "mount events on a mount namespace: a group made where CAP_SYS_ADMIN is held, else -EPERM (%d)", r);
                safe_close(ns);
        }
        is_int(ask(pair[0], HELPER_MAGIC, 99, tmp), -EOPNOTSUPP, "an operation it does not know: said");
        is_int(ask(pair[0], HELPER_MAGIC, HELPER_OP_BTRFS_ROOTS, -1), -EBADF, "no file passed: said");
        is_int(ask(pair[0], 0x12345678, HELPER_OP_BTRFS_ROOTS, tmp), -EPROTO, "another protocol: said");
        ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 1,
           "and the connection is closed after it");
        close(pair[0]);
        close(tmp);
}

static void test_messages(void) {
        int pair[2], fds[2], got = -1;
        uint8_t buf[64], big[256] = {};
        struct helper_reply h = { .magic = HELPER_MAGIC, .version = HELPER_VERSION, .type = HELPER_REPLY_ROOTS, .count = 1 };

        ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0 && pipe2(fds, O_CLOEXEC) == 0, "a pair");
        ok(helper_send(pair[0], "x", 1, fds[0]) == 0 && helper_recv(pair[1], buf, sizeof buf, &got, 0) == 1 && got >= 0,
           "a message and the file it carries");
        safe_close(got);
        ok(helper_send(pair[0], big, sizeof big, -1) == 0 && helper_recv(pair[1], buf, sizeof buf, NULL, 0) == -EMSGSIZE,
           "a message larger than the buffer: -EMSGSIZE, never half of one");
        uint64_t t = now_usec(CLOCK_MONOTONIC);
        ok(helper_recv(pair[1], buf, sizeof buf, NULL, t + 100 * USEC_PER_MSEC) == -ETIMEDOUT &&
                   now_usec(CLOCK_MONOTONIC) - t < 2 * USEC_PER_SEC,
           "nothing to read: -ETIMEDOUT at the deadline");
        is_int(helper_reply_check(&h, sizeof h), -EPROTO, "a ROOTS reply shorter than its count: refused");
        h.count = 0;
        is_int(helper_reply_check(&h, sizeof h), HELPER_REPLY_ROOTS, "an empty one: taken");
        h.type = HELPER_REPLY_END;
        h.status = 5;
        is_int(helper_reply_check(&h, sizeof h), -EPROTO, "an END with a positive status: refused");
        h.magic = 1;
        h.status = 0;
        is_int(helper_reply_check(&h, sizeof h), -EPROTO, "another magic: refused");
        close(pair[0]);
        ok(helper_recv(pair[1], buf, sizeof buf, NULL, 0) == -ECONNRESET, "the other end closed: -ECONNRESET");
        close(pair[1]);
        close(fds[0]);
        close(fds[1]);
}

static int count_record(const struct btrfs_root_record *rec, void *userdata) {
        (void) rec;
        (*(unsigned *) userdata)++;
        return 0;
}

/* As atimed.service, which holds no CAP_SYS_ADMIN: the helper at its
 * socket, answering, then stopped. Bits of the exit status: what failed. */
static int client_at_socket(const char *path, pid_t server, int fd) {
        struct btrfs_roots_end end;
        unsigned n = 0;
        uint64_t t;
        int r, failed = 0;

        if (caps_drop_to_minimum() < 0 || helper_client_start(true, path) != HELPER_VIA_SOCKET)
                return 1;
        r = helper_btrfs_roots(fd, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, count_record, &n, &end);
        if (!(r == -EMEDIUMTYPE || r == 0))
                failed |= 2;
        kill(server, SIGSTOP);
        t = now_usec(CLOCK_MONOTONIC);
        r = helper_btrfs_roots(fd, t + 300 * USEC_PER_MSEC, count_record, &n, &end);
        if (r != -ETIMEDOUT || now_usec(CLOCK_MONOTONIC) - t > 3 * USEC_PER_SEC)
                failed |= 4;
        kill(server, SIGCONT);
        helper_client_stop();
        return failed;
}

/* The daemon's side: no helper, the one it forks (root holding
 * CAP_SYS_ADMIN), and one at a socket as under the service manager. */
static void test_client(void) {
        char dir[] = "/tmp/test-helper.XXXXXX", path[64];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct btrfs_roots_end end;
        int lfd, tmp = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r, status = -1;
        unsigned n = 0;
        pid_t server, client;

        is_int(helper_client_start(false, "/nowhere"), HELPER_VIA_NONE, "snapshot_search = no: no helper");
        is_int(helper_btrfs_roots(tmp, now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC, count_record, &n, &end), -ENXIO,
               "and asking it says so");
        if (geteuid() != 0 || !caps_have(CAP_SYS_ADMIN)) {
                ok(1, "# SKIP the helper serves root alone, and needs CAP_SYS_ADMIN: not here");
                close(tmp);
                return;
        }
        is_int(helper_client_start(true, "/nowhere"), HELPER_VIA_CHILD, "root holding CAP_SYS_ADMIN forks its helper");
        r = helper_btrfs_roots(tmp, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, count_record, &n, &end);
        ok(r == -EMEDIUMTYPE || r == 0, "and it answers (%s)", r ? strerror(-r) : "a btrfs");
        {
                int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), fan = -1;

                is_int(helper_mount_events(ns, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, &fan), 0,
                       "it makes the fanotify group for mount events");
                ok(fan >= 0 && (fcntl(fan, F_GETFL) & O_NONBLOCK), "and hands its fd over, non-blocking");
                safe_close(fan);
                safe_close(ns);
        }
        helper_client_stop();

        ok(mkdtemp(dir) != NULL, "a directory for the socket");
        snprintf(path, sizeof path, "%s/helper", dir);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        ok(lfd >= 0 && bind(lfd, (struct sockaddr *) &sa, sizeof sa) == 0 && listen(lfd, 16) == 0, "listening");
        server = fork();
        if (server == 0)
                _exit(helper_server_run(lfd, HELPER_LISTEN_ACCEPT) < 0 ? 1 : 0);
        client = fork();
        if (client == 0)
                _exit(client_at_socket(path, server, tmp));
        ok(waitpid(client, &status, 0) == client && WIFEXITED(status), "a daemon without CAP_SYS_ADMIN asked");
        is_int(WEXITSTATUS(status) & 1, 0, "it reaches the helper at its socket");
        is_int(WEXITSTATUS(status) & 2, 0, "which answers");
        is_int(WEXITSTATUS(status) & 4, 0, "and, stopped, is given up at the request's deadline");
        kill(server, SIGKILL);
        waitpid(server, NULL, 0);
        close(lfd);
        unlink(path);
        rmdir(dir);
        close(tmp);
}

int main(void) {
        test_messages();
        test_requests();
        test_client();
        return tap_done();
}
