/* privileged.c: what atimed does while it holds the privileges it was
 * started with, then the drop (see privileged.h). */
#include "privileged.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "caps.h"
#include "control.h"
#include "fileio.h"
#include "group.h"
#include "helper-client.h"
#include "log.h"

/* Under socket activation the service manager made the socket: the
 * configuration's socket, socket_mode and socket_group are not applied.
 * Says so at start when they differ from the socket served, so that an
 * operator who set them learns where to set them instead. */
static void note_activated_socket(const struct config *c, int fd) {
        struct sockaddr_un sa = {};
        socklen_t len = sizeof(sa);
        gid_t gid = (gid_t) -1;
        struct stat st;

        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0 || len <= offsetof(struct sockaddr_un, sun_path) ||
            sa.sun_path[0] == 0 || stat(sa.sun_path, &st) < 0)
                return;
        if ((st.st_mode & 07777) == c->socket_mode &&
            (!c->socket_group || (group_lookup(c->socket_group, &gid) >= 0 && gid == st.st_gid)) &&
            streq(sa.sun_path, c->socket_path))
                return;
        log_notice("The service manager passed the socket %s (mode %04o, group %u): the configuration's "
                   "socket = %s, socket_mode = %04o and socket_group = %s are not applied under socket activation. "
                   "Set SocketMode=, SocketGroup= (and ListenStream=) in a drop-in for atimed.socket instead.",
                   sa.sun_path, (unsigned) (st.st_mode & 07777), (unsigned) st.st_gid, c->socket_path,
                   (unsigned) c->socket_mode, c->socket_group ?: "(unset)");
}

static int open_socket(const struct config *c, int *ret_fd, char **ret_bound) {
        int fd, r;
        gid_t gid = (gid_t) -1;

        r = control_socket_from_activation(&fd);
        if (r < 0)
                return log_error_errno(r, "Invalid socket passed by the service manager: %m");
        if (r > 0) {
                log_info("Serving on the socket passed by the service manager");
                note_activated_socket(c, fd);
                *ret_fd = fd;
                return 0;
        }

        if (c->socket_group) {
                r = group_lookup(c->socket_group, &gid);
                if (r == -ENOENT)
                        return log_error_errno(r, "socket_group %s: no such group", c->socket_group);
                if (r < 0)
                        return log_error_errno(r, "socket_group %s: cannot look it up: %m", c->socket_group);
        }
        r = control_socket_bind(c->socket_path, c->socket_mode, gid, &fd);
        if (r == -EADDRINUSE)
                return log_error_errno(r, "Another atimed is serving %s; not taking it over.", c->socket_path);
        if (r == -EEXIST)
                return log_error_errno(r, "%s exists and is not a socket; not removing it.", c->socket_path);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", c->socket_path);
        *ret_bound = strdup(c->socket_path);
        if (!*ret_bound) {
                safe_close(fd);
                return log_oom();
        }
        log_info("Serving on %s", c->socket_path);
        *ret_fd = fd;
        return 0;
}

#define STATE_LOCK "lock"

/* The state dir is ours alone: owned by us, writable by no one else, and
 * locked, so that a second atimed pointed at it (another --socket) exits
 * before it reads or writes anything there. */
static int lock_state_dir(const char *d, int dfd, int *ret_lock) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (fstat(dfd, &st) < 0)
                return log_error_errno(errno, "Cannot check state directory %s: %m", d);
        if (st.st_uid != geteuid()) {
                log_error("State directory %s belongs to uid %u, not to atimed's (%u): refusing to use it.", d,
                          (unsigned) st.st_uid, (unsigned) geteuid());
                return -EPERM;
        }
        if (st.st_mode & 022) {
                mode_t fixed = st.st_mode & 0755 & ~(mode_t) 022;

                if (fchmod(dfd, fixed) < 0)
                        return log_error_errno(errno, "State directory %s is writable by others (mode %04o) and cannot be fixed: %m",
                                               d, (unsigned) (st.st_mode & 07777));
                log_warning("State directory %s was writable by group or others (mode %04o); made it %04o.", d,
                            (unsigned) (st.st_mode & 07777), (unsigned) fixed);
        }
        /* Read-only: a descriptor open for writing would keep /var from being
         * remounted read-only. flock() needs no more. */
        fd = openat(dfd, STATE_LOCK, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0 && errno != ELOOP) {
                /* A read-only state dir, say: no other daemon writes there
                 * either, and history is kept in memory meanwhile. */
                log_warning_errno(errno, "Cannot open %s/%s to lock the state directory: %m", d, STATE_LOCK);
                return 0;
        }
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                log_error("%s/%s is not a regular file: refusing to use the state directory.", d, STATE_LOCK);
                return -EBADFD;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EWOULDBLOCK) {
                        log_error("Another atimed is using the state directory %s (%s/%s is locked); exiting. "
                                  "Give each daemon its own state_dir.", d, d, STATE_LOCK);
                        return -EBUSY;
                }
                return log_error_errno(errno, "Cannot lock %s/%s: %m", d, STATE_LOCK);
        }
        *ret_lock = TAKE_FD(fd);
        return 0;
}

static int prepare_state_dir(const char *d, int *ret_lock) {
        _cleanup_close_ int dfd = -1;

        /* Create missing parents (0755) and the directory itself (0700). A
         * state dir we cannot create is logged: the daemon still measures. */
        (void) mkdir_parents(d, 0755);
        if (mkdir(d, 0700) < 0 && errno != EEXIST)
                log_warning_errno(errno, "Cannot create state directory %s: %m", d);
        dfd = open(d, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (dfd < 0) {
                log_warning_errno(errno, "Cannot open state directory %s: %m", d);
                return 0;
        }
        return lock_state_dir(d, dfd, ret_lock);
}

/* Before the capabilities are dropped: atimed's privileged helper, forked
 * here where CAP_SYS_ADMIN is held, else reached at its socket
 * (helper-client.h). The daemon itself never keeps CAP_SYS_ADMIN. */
static void start_helper(const struct config *c) {
        int r = helper_client_start(c->btrfs_snapshot_search || c->mount_events, c->helper_socket);

        helper_client_set_btrfs(c->btrfs_snapshot_search);

        if (r < 0)
                log_warning_errno(r, "Cannot start the helper that reads btrfs subvolumes and watches mounts: %m; "
                                  "btrfs snapshots are looked for as far as atimed's own privileges allow, and "
                                  "the mount table is read again on each change");
        else if (r == HELPER_VIA_CHILD)
                log_debug("btrfs subvolumes and mount events come from a helper process that keeps CAP_SYS_ADMIN "
                          "alone");
        else if (r == HELPER_VIA_SOCKET)
                log_debug("btrfs subvolumes and mount events come from atimed-helper, at %s", c->helper_socket);
}

/* Capabilities dropped, and said at the level of what it means: in a
 * container or a user namespace, what cannot be done is said once, plainly. */
static void drop_capabilities(const struct config *c) {
        uint32_t outside;
        int r;

        start_helper(c);
        r = caps_drop_to_minimum();
        if (r < 0)
                log_warning_errno(r, "Failed to drop capabilities; atimed runs on with those it was started with: %m");
        else if (r > 0)
                log_info("The capability bounding set is left as it is (no CAP_SETPCAP here, as in a container): atimed "
                         "holds only CAP_DAC_READ_SEARCH, CAP_FOWNER and CAP_DAC_OVERRIDE, and no_new_privs keeps "
                         "anything it runs from gaining more");
        else
                log_debug("Capabilities reduced to CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_DAC_OVERRIDE");
        if (caps_user_namespace(&outside) > 0 && geteuid() == 0)
                log_notice("Running in a user namespace (root here is %s outside): directories of users not mapped "
                           "here cannot be read without changing their atime and are skipped, and no probe can be "
                           "made where only they may write; figures cover what this namespace may read",
                           outside == UINT32_MAX ? "no uid" : outside == 0 ? "root" : "an unprivileged uid");
}

/* What needs more than the three capabilities kept comes first: the
 * socket (its group, say) and the state dir. Then drop, before any worker
 * thread exists: capabilities are per thread, and the threads inherit what
 * the main thread has left. */
int privileged_start(const struct config *c, int *ret_fd, char **ret_bound_socket, int *ret_state_lock) {
        int r;

        r = open_socket(c, ret_fd, ret_bound_socket);
        if (r < 0)
                return r;
        /* After the socket: a second daemon on the same socket says so
         * first; one on another socket stops here, its socket removed. */
        r = prepare_state_dir(c->state_dir, ret_state_lock);
        if (r < 0)
                return r;
        drop_capabilities(c);
        return 0;
}
