/* helper-proto.h: what atimed and its privileged helper (atimed-helper,
 * helper-server.h) say to each other.
 *
 * The daemon keeps three capabilities and never CAP_SYS_ADMIN (caps.h).
 * The few things that need CAP_SYS_ADMIN are asked of a helper that
 * holds it alone and can do nothing else: it works on a file descriptor
 * the daemon hands it (so its own mount namespace and sandbox do not
 * matter) and hands back plain facts. The pattern of OpenBSD's ntpd and
 * of systemd's helpers.
 *
 * The wire: a SOCK_SEQPACKET Unix socket, one message a datagram of at
 * most HELPER_MESSAGE_MAX bytes, in host byte order (both ends are the
 * same build, on the same machine: the magic and the version say so).
 * On a connection the daemon sends requests one at a time; each carries
 * exactly one file descriptor (SCM_RIGHTS) and is answered by zero or
 * more data messages and one HELPER_REPLY_END, whose status is 0 or a
 * negative errno. A request the helper does not know is answered
 * HELPER_REPLY_END with -EOPNOTSUPP, so that operations can be added
 * without breaking either side:
 *
 *   HELPER_OP_BTRFS_ROOTS: the fd is any file or directory on a btrfs.
 *     Replies: HELPER_REPLY_ROOTS messages, each 'count' records (struct
 *     btrfs_root_record, btrfs-roots.h), then HELPER_REPLY_END followed
 *     by struct btrfs_roots_end.
 *   HELPER_OP_MOUNT_EVENTS: the fd is a mount
 *     namespace (/proc/self/ns/mnt); the helper makes a fanotify group
 *     reporting its mounts being attached and detached
 *     (fanotify_init(FAN_REPORT_MNT), fanotify_mark(FAN_MARK_MNTNS)),
 *     which needs CAP_SYS_ADMIN only to be made, and hands its fd back
 *     with HELPER_REPLY_END (SCM_RIGHTS), status 0.
 *
 * Every helper process serves one connection: a request that hangs (a
 * filesystem that does not answer) holds that connection alone, and the
 * daemon, which waits with a deadline, opens another. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrfs-roots.h"

#define HELPER_MAGIC UINT32_C(0x41544850) /* "ATHP" */
#define HELPER_VERSION 1
#define HELPER_MESSAGE_MAX 65536

typedef enum HelperOp {
        HELPER_OP_BTRFS_ROOTS = 1,
        HELPER_OP_MOUNT_EVENTS = 2,
} HelperOp;

typedef enum HelperReply {
        HELPER_REPLY_ROOTS = 1,
        HELPER_REPLY_END = 2,
} HelperReply;

struct helper_request {
        uint32_t magic;
        uint16_t version;
        uint16_t op;          /* HelperOp */
        uint32_t timeout_ms;  /* the work's own deadline: past it, what came is a part */
        uint32_t reserved;
};

struct helper_reply {
        uint32_t magic;
        uint16_t version;
        uint16_t type;        /* HelperReply */
        int32_t status;       /* END: 0 or -errno */
        uint32_t count;       /* ROOTS: records that follow */
};

/* Records in one HELPER_REPLY_ROOTS message. */
#define HELPER_ROOTS_PER_MESSAGE \
        ((HELPER_MESSAGE_MAX - sizeof(struct helper_reply)) / sizeof(struct btrfs_root_record))

/* Sends 'len' bytes as one message, with 'fd' (-1: none) passed along. */
int helper_send(int sock, const void *buf, size_t len, int fd);
/* Receives one message into buf (at most 'size' bytes): its length, or
 * -errno (0 bytes: the other end closed, -ECONNRESET; a message that did
 * not fit: -EMSGSIZE). A file descriptor passed with it lands in *ret_fd
 * (-1: none; ret_fd NULL: any is closed); more than one: -EBADMSG, all
 * closed. Waits until 'deadline_usec' (CLOCK_MONOTONIC; 0: no end):
 * -ETIMEDOUT. */
ssize_t helper_recv(int sock, void *buf, size_t size, int *ret_fd, uint64_t deadline_usec);
/* A reply's header checked: its type, or -EPROTO. */
int helper_reply_check(const void *buf, size_t len);
