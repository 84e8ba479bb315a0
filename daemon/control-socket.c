/* control-socket.c: the control socket's listening end (see
 * control-socket.h). */
#include "control-socket.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "varlink.h"

int control_socket_from_activation(int *ret_fd) {
        int n = sd_listen_fds(1), r;

        if (n < 0)
                return n;
        if (n == 0)
                return 0;
        if (n > 1)
                return -E2BIG;
        r = sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOTSOCK;
        if (fcntl(SD_LISTEN_FDS_START, F_SETFL, fcntl(SD_LISTEN_FDS_START, F_GETFL) | O_NONBLOCK) < 0 ||
            fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC) < 0)
                return -errno;
        *ret_fd = SD_LISTEN_FDS_START;
        return 1;
}

int control_socket_bind(const char *path, mode_t mode, gid_t gid, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);

        r = mkdir_parents(path, 0755);
        if (r < 0)
                return r;

        if (lstat(path, &st) == 0) {
                int probe;

                if (!S_ISSOCK(st.st_mode))
                        return -EEXIST; /* never unlink something that is not ours */
                r = varlink_connect(path, &probe);
                if (r >= 0) {
                        safe_close(probe);
                        return -EADDRINUSE; /* a live server answers there */
                }
                if (unlink(path) < 0 && errno != ENOENT)
                        return -errno;
        }

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* Create the inode with its final mode: no window in which a wider
         * mode lets someone connect. */
        {
                mode_t old = umask(~mode & 0777);

                r = bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ? -errno : 0;
                umask(old);
                if (r < 0)
                        return r;
        }
        if (chmod(path, mode) < 0 || (gid != (gid_t) -1 && chown(path, (uid_t) -1, gid) < 0)) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        if (listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}
