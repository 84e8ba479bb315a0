/* test-fileio: whole files, at and around the size limit, and /proc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "../tap.h"

static void put(int fd, size_t n) {
        char b[4096];
        size_t done = 0;

        memset(b, 'x', sizeof b);
        if (ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0)
                while (done < n) {
                        ssize_t k = write(fd, b, MIN(sizeof b, n - done));

                        if (k <= 0)
                                break;
                        done += (size_t) k;
                }
        ok(done == n, "%zu bytes written", n);
}

int main(void) {
        char path[] = "/tmp/test-fileio.XXXXXX";
        int fd = mkstemp(path);
        char *t = NULL;
        size_t len = 1;

        ok(fd >= 0, "temporary file");
        ok(read_full_file(path, 100, &t, &len) == 0 && t && len == 0 && t[0] == 0, "empty file: empty string");
        free(t);
        t = NULL;
        put(fd, 4096);
        ok(read_full_file(path, 4096, &t, &len) == 0 && len == 4096 && t[4095] == 'x' && t[4096] == 0,
           "exactly the limit, across the first buffer's end, NUL-terminated");
        free(t);
        t = NULL;
        put(fd, 4097);
        is_int(read_full_file(path, 4096, &t, &len), -EFBIG, "one byte over the limit: EFBIG");
        ok(!t, "and nothing returned");
        put(fd, 200000);
        ok(read_full_file(path, 1 << 20, &t, &len) == 0 && len == 200000 && t[199999] == 'x' && !t[200000],
           "grows past its first buffer");
        free(t);
        t = NULL;
        {
                char fifo[64], dir[64];

                snprintf(fifo, sizeof fifo, "%s.fifo", path);
                snprintf(dir, sizeof dir, "%s.dir", path);
                ok(mkfifo(fifo, 0600) == 0 && mkdir(dir, 0700) == 0, "a FIFO and a directory");
                is_int(read_full_file(fifo, 100, &t, &len), -EBADFD, "a FIFO: refused, not waited on");
                is_int(read_full_file_at(AT_FDCWD, fifo, O_NOFOLLOW | O_NOATIME, 100, &t, &len), -EBADFD,
                       "a FIFO with O_NOFOLLOW|O_NOATIME: refused too");
                is_int(read_full_file(dir, 100, &t, &len), -EISDIR, "a directory: EISDIR");
                ok(!t, "and nothing returned");
                ok(strstr(fileio_strerror(-EBADFD), "not a regular file") != NULL, "said plainly");
                unlink(fifo);
                rmdir(dir);
        }
        ok(read_full_file("/dev/null", 100, &t, &len) == 0 && len == 0, "/dev/null: empty");
        free(t);
        t = NULL;
        is_int(read_full_file("/dev/zero", 100, &t, &len), -EBADFD, "another device: refused");
        ok(read_full_file("/proc/self/mountinfo", 1 << 26, &t, &len) == 0 && len > 0 && strlen(t) == len,
           "/proc/self/mountinfo, which has no size to stat");
        free(t);
        is_int(read_full_file("/nonexistent/x", 10, &t, &len), -ENOENT, "missing file: ENOENT");
        close(fd);
        unlink(path);
        return tap_done();
}
