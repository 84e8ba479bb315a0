/* fileio.c: reading a whole file. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macro.h"

#define READ_CHUNK 65536

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, alloc = 0;

        for (;;) {
                ssize_t n;

                /* Every read asks for a good share: a /proc file is formatted
                 * anew from where each read stops. */
                if (alloc - len < MIN(max + 2, (size_t) READ_CHUNK) && alloc < max + 2) {
                        size_t na = alloc ? alloc * 2 : READ_CHUNK;
                        char *nb;

                        na = MIN(na, max + 2); /* room for one byte too many, and the NUL */
                        nb = realloc(buf, na);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = na;
                }
                n = read(fd, buf + len, alloc - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static bool is_dev_null(const struct stat *st) {
        return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
}

int open_regular_at(int dfd, const char *path, int flags) {
        const int base = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        _cleanup_close_ int fd = -1;
        struct stat st;

        /* A type seen before opening spares a device its open(); the
         * fstat() after is what counts. */
        if (fstatat(dfd, path, &st, (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) == 0) {
                if (S_ISDIR(st.st_mode))
                        return -EISDIR;
                if (S_ISLNK(st.st_mode))
                        return -ELOOP;
                if (!S_ISREG(st.st_mode) && !is_dev_null(&st))
                        return -EBADFD;
        }
        fd = openat(dfd, path, base | flags);
        if (fd < 0 && errno == EPERM && (flags & O_NOATIME))
                fd = openat(dfd, path, base | (flags & ~O_NOATIME));
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode) && !is_dev_null(&st))
                return -EBADFD;
        /* A regular file on a slow filesystem is read as any other. */
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
                return -errno;
        return TAKE_FD(fd);
}

int read_full_file_at(int dfd, const char *path, int flags, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = open_regular_at(dfd, path, flags);

        if (fd < 0)
                return fd;
        return read_full_fd(fd, max, ret, ret_len);
}

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len) {
        return read_full_file_at(AT_FDCWD, path, 0, max, ret, ret_len);
}

const char *fileio_strerror(int r) {
        return r == -EBADFD ? "not a regular file (a FIFO, a socket or a device): refused" : strerror(-r);
}
