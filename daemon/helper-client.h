/* helper-client.h: the daemon's way to its privileged helper
 * (helper-proto.h): chosen once at start, used from any worker thread.
 *
 * Started as root holding CAP_SYS_ADMIN (no service manager took it),
 * the daemon forks the helper itself, before it drops its capabilities
 * (helper_spawn()); otherwise (atimed.service, whose bounding set never
 * has it) it connects to the helper's socket (atimed-helper.socket). Each
 * request opens a connection of its own and waits with a deadline, so a
 * helper that hangs on a filesystem never holds a worker longer than its
 * deadline, and the next request reaches a fresh helper process. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "btrfs-roots.h"

typedef enum HelperVia {
        HELPER_VIA_NONE,   /* no helper: [btrfs] snapshot_search = no, or it could not be started */
        HELPER_VIA_CHILD,  /* forked by this daemon */
        HELPER_VIA_SOCKET, /* the service manager's, at a socket */
} HelperVia;

/* At start, single-threaded, before the capabilities are dropped: how the
 * helper is reached, set for the process's life. 'enabled' false: none.
 * Returns the way chosen, or -errno where the helper could not be forked
 * (then none). */
int helper_client_start(bool enabled, const char *socket_path);
/* Closes the way to a forked helper, which then exits, and reaps it
 * (killed after 5 s). */
void helper_client_stop(void);
HelperVia helper_client_via(void);
/* Whether btrfs subvolumes are asked of the helper: it is there, and
 * [btrfs] snapshot_search did not say no (the helper may run for mount
 * events alone). Set at start; true unless said. */
void helper_client_set_btrfs(bool on);
bool helper_client_btrfs(void);
/* The socket the helper is reached at (HELPER_VIA_SOCKET); else NULL. */
const char *helper_client_socket(void);

/* HELPER_OP_BTRFS_ROOTS on 'fd' (any file on a btrfs): each subvolume's
 * record to 'each', the scan's end into *ret_end; until deadline_usec
 * (CLOCK_MONOTONIC). 0, or -errno: -ENXIO without a helper, -ETIMEDOUT,
 * -ECONNRESET (the helper closed the connection: busy, or gone), -EPROTO
 * (an answer atimed does not understand), or what the helper said (-EPERM:
 * it lacks CAP_SYS_ADMIN). */
int helper_btrfs_roots(int fd, uint64_t deadline_usec, btrfs_root_fn each, void *userdata,
                       struct btrfs_roots_end *ret_end);

/* HELPER_OP_MOUNT_EVENTS on 'nsfd' (a mount namespace): the fanotify
 * group reporting its mounts attached and detached, into *ret_fd. 0, or
 * -errno as helper_btrfs_roots() says them. */
int helper_mount_events(int nsfd, uint64_t deadline_usec, int *ret_fd);
