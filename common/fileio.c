/* fileio.c: reading a whole file. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return -errno;
        return read_full_fd(fd, max, ret, ret_len);
}
