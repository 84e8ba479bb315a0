/* helper-proto.c: one message sent or received between atimed and its
 * helper, with the file descriptor it carries (see helper-proto.h). */
#include "helper-proto.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "macro.h"
#include "time-util.h"

int helper_send(int sock, const void *buf, size_t len, int fd) {
        /* sendmsg() takes a non-const iovec, and only reads it. */
        struct iovec iov = { .iov_len = len };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        memcpy(&iov.iov_base, &buf, sizeof buf);
        if (fd >= 0) {
                struct cmsghdr *c;

                mh.msg_control = &control;
                mh.msg_controllen = sizeof control;
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t) n == len ? 0 : -EIO;
}

static int wait_readable(int sock, uint64_t deadline_usec) {
        for (;;) {
                struct pollfd p = { .fd = sock, .events = POLLIN };
                int timeout = -1, r;

                if (deadline_usec) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);

                        if (now >= deadline_usec)
                                return -ETIMEDOUT;
                        timeout = (int) MIN((deadline_usec - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC, (uint64_t) 60000);
                }
                r = poll(&p, 1, timeout);
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r > 0)
                        return 0;
        }
}

/* The file descriptors a message carried: the first in *ret_fd, the
 * number of them returned; all closed where ret_fd is NULL. */
static int take_fds(struct msghdr *mh, int *ret_fd) {
        int n = 0;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                size_t k;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                        if (n == 0 && ret_fd)
                                *ret_fd = fd;
                        else
                                safe_close(fd);
                        n++;
                }
        }
        return n;
}

ssize_t helper_recv(int sock, void *buf, size_t size, int *ret_fd, uint64_t deadline_usec) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(4 * sizeof(int))];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
        ssize_t n;
        int r, fds;

        if (ret_fd)
                *ret_fd = -1;
        do {
                r = wait_readable(sock, deadline_usec);
                if (r < 0)
                        return r;
                n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        } while (n < 0 && (errno == EINTR || errno == EAGAIN));
        if (n < 0)
                return -errno;
        fds = take_fds(&mh, ret_fd);
        if (fds > 1 || (mh.msg_flags & MSG_CTRUNC)) {
                if (ret_fd)
                        *ret_fd = safe_close(*ret_fd);
                return -EBADMSG;
        }
        if (mh.msg_flags & MSG_TRUNC) {
                if (ret_fd)
                        *ret_fd = safe_close(*ret_fd);
                return -EMSGSIZE;
        }
        return n == 0 ? -ECONNRESET : n;
}

int helper_reply_check(const void *buf, size_t len) {
        struct helper_reply h;

        if (len < sizeof h)
                return -EPROTO;
        memcpy(&h, buf, sizeof h);
        if (h.magic != HELPER_MAGIC || h.version != HELPER_VERSION)
                return -EPROTO;
        if (h.type == HELPER_REPLY_ROOTS && h.count <= HELPER_ROOTS_PER_MESSAGE &&
            len == sizeof h + (size_t) h.count * sizeof(struct btrfs_root_record))
                return h.type;
        if (h.type == HELPER_REPLY_END && h.status <= 0)
                return h.type;
        return -EPROTO;
}
