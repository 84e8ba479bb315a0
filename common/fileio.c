/* fileio.c: files whole (see fileio.h). */
#include "fileio.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macro.h"

#define READ_CHUNK 65536

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, alloc = 0;

        assert(fd >= 0);
        assert(ret && ret_len);

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

        assert(dfd >= 0 || dfd == AT_FDCWD);
        assert(path);

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

int loop_write(int fd, const void *buf, size_t n) {
        const uint8_t *p = buf;

        assert(fd >= 0);
        assert(p || n == 0);

        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = NULL;

        assert(path);

        p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *slash = '/';
        }
        return 0;
}

/* The length the temporary name adds to the final one: ".", ".", 16 hex
 * digits, ".tmp", with room to spare. */
#define TEMPORARY_NAME_EXTRA 24
/* Streamed through a buffer of its own: large enough for few writes, and
 * no copy of the whole text in memory. */
#define WRITE_BUFFER_SIZE (256 * 1024)

/* Whether 'entry' is a name create_temporary() gives for 'name':
 * ".NAME.<16 hex digits>.tmp". */
static bool is_temporary_of(const char *entry, const char *name) {
        size_t l = strlen(name);
        const char *p;

        if (entry[0] != '.' || strncmp(entry + 1, name, l) != 0 || entry[1 + l] != '.')
                return false;
        p = entry + 1 + l + 1;
        if (strlen(p) != 16 + 4 || !streq(p + 16, ".tmp"))
                return false;
        for (int i = 0; i < 16; i++)
                if (!strchr("0123456789abcdef", p[i]))
                        return false;
        return true;
}

/* A new regular file in dfd under a name nobody can guess, written into
 * 'tmp'. Returns its fd. */
static int create_temporary(int dfd, const char *name, char tmp[static NAME_MAX + 1]) {
        for (int attempt = 0; attempt < 16; attempt++) {
                uint64_t rnd;
                int fd;

                if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
                        return -EIO;
                snprintf(tmp, NAME_MAX + 1, ".%s.%016llx.tmp", name, (unsigned long long) rnd);
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
                            0600);
                if (fd >= 0 || errno != EEXIST)
                        return fd >= 0 ? fd : -errno;
        }
        return -EEXIST;
}

/* The new file's content, and its mode whatever the umask; the fd is the
 * FILE's from here on, and closed. */
static int fill_temporary(int fd, mode_t mode, WriteAtomicFlags flags, write_file_fn write_fn, void *userdata) {
        FILE *f;
        int r;

        if (fchmod(fd, mode) < 0 || fcntl(fd, F_SETFL, 0) < 0) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        f = fdopen(fd, "w");
        if (!f) {
                safe_close(fd);
                return -ENOMEM;
        }
        (void) setvbuf(f, NULL, _IOFBF, WRITE_BUFFER_SIZE);
        r = write_fn(f, userdata);
        if (r >= 0 && (flags & WRITE_ATOMIC_FSYNC) && (fflush(f) != 0 || fsync(fileno(f)) < 0))
                r = negative_errno();
        if (fclose(f) != 0 && r >= 0)
                r = negative_errno();
        return r;
}

int write_file_atomic_at(int dfd, const char *name, mode_t mode, WriteAtomicFlags flags, write_file_fn write_fn,
                         void *userdata) {
        char tmp[NAME_MAX + 1];
        int fd, r;

        assert(dfd >= 0 || dfd == AT_FDCWD);
        assert(name && *name && !strchr(name, '/'));
        assert(write_fn);
        assert(dfd >= 0 || !(flags & WRITE_ATOMIC_FSYNC_DIR));

        if (strlen(name) > NAME_MAX - TEMPORARY_NAME_EXTRA)
                return -ENAMETOOLONG;
        fd = create_temporary(dfd, name, tmp);
        if (fd < 0)
                return fd;
        r = fill_temporary(fd, mode, flags, write_fn, userdata);
        if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dfd, tmp, 0);
                return r;
        }
        if ((flags & WRITE_ATOMIC_FSYNC_DIR) && fsync(dfd) < 0)
                return -errno;
        return 0;
}

int remove_stale_temporaries_at(int dfd, const char *name) {
        struct dirent *de;
        DIR *d;
        int fd, n = 0;

        assert(dfd >= 0);
        assert(name && *name && !strchr(name, '/'));

        /* A directory stream of its own: closedir() closes the fd it owns. */
        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (!is_temporary_of(de->d_name, name))
                        continue;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) == 0)
                        n++;
        }
        closedir(d);
        return n;
}
