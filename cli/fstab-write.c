/* fstab-write.c: fstab replaced safely (see fstab-write.h): compared, backed up, written beside it and
 * renamed over it, each step fsync'd. */
#include "fstab-write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

/* /etc/fstab is small; anything bigger is not an fstab and is not worth reading whole (atimectl reads
 * it with the same bound). */
#define FSTAB_SIZE_MAX (16U * 1024U * 1024U)

/* Reads 'path' (not following a final symlink) and tells whether it still holds 'expected'. */
static int check_unchanged(const char *path, const char *expected, size_t expected_len, struct stat *ret_st) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        r = read_full_fd(fd, FSTAB_SIZE_MAX, &buf, &len);
        if (r < 0)
                return r;
        if (len != expected_len || (len > 0 && memcmp(buf, expected, len) != 0))
                return -ESTALE;
        if (ret_st)
                *ret_st = st;
        return 0;
}

/* Gives an open file the original's owner and mode: owner first, since chown may clear setuid/setgid bits. */
static int copy_owner_mode(int fd, const struct stat *st) {
        struct stat now;

        if (fstat(fd, &now) < 0)
                return negative_errno();
        if ((now.st_uid != st->st_uid || now.st_gid != st->st_gid) && fchown(fd, st->st_uid, st->st_gid) < 0)
                return negative_errno();
        if (fchmod(fd, st->st_mode & 07777) < 0)
                return negative_errno();
        return 0;
}

static int fsync_directory_of(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        _cleanup_close_ int fd = -1;
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash)
                strcpy(dir, ".");
        else if (slash == dir)
                dir[1] = 0;
        else
                *slash = 0;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fsync(fd) < 0)
                return negative_errno();
        return 0;
}

/* Gives the new file fd the owner and mode in st and the content text, fsync'd. */
static int fill_copy(int fd, const struct stat *st, const char *text, size_t len) {
        int r;

        r = copy_owner_mode(fd, st);
        if (r >= 0)
                r = loop_write(fd, text, len);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        return r;
}

/* Creates the backup file, never over an existing one: backup_path, or by default
 * "<path>.atimectl-<unix seconds>" with ".N" appended if that exists. Its name in *ret_name, the open file
 * in *ret_fd. */
static int create_backup(const char *path, const char *backup_path, char **ret_name, int *ret_fd) {
        _cleanup_free_ char *name = NULL;
        long long now = (long long) time(NULL);
        int fd = -1;

        if (backup_path) {
                name = strdup(backup_path);
                if (!name)
                        return -ENOMEM;
                fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd < 0)
                        return negative_errno();
        }
        /* Two runs within one second must not overwrite the first backup, the one that holds the file as the
         * operator left it. */
        for (unsigned attempt = 0; fd < 0; attempt++) {
                free(name);
                if ((attempt == 0 ? asprintf(&name, "%s.atimectl-%lld", path, now)
                                  : asprintf(&name, "%s.atimectl-%lld.%u", path, now, attempt)) < 0) {
                        name = NULL;
                        return -ENOMEM;
                }
                fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd < 0 && (errno != EEXIST || attempt >= 100))
                        return negative_errno();
        }
        *ret_name = TAKE_PTR(name);
        *ret_fd = fd;
        return 0;
}

/* Writes content to a new backup file (see create_backup()) with the owner and mode in st, fsync'd with its
 * directory; its name in *ret. On failure no backup is left. */
static int write_backup(const char *path, const char *backup_path, const char *content, size_t len,
                        const struct stat *st, char **ret) {
        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = create_backup(path, backup_path, &name, &fd);
        if (r < 0)
                return r;
        r = fill_copy(fd, st, content, len);
        if (r >= 0)
                r = fsync_directory_of(name);
        if (r < 0) {
                (void) unlink(name);
                return r;
        }
        *ret = TAKE_PTR(name);
        return 0;
}

static int temp_name_for(const char *path, char **ret) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        int dirlen = slash ? (int) (slash - path) + 1 : 0;

        if (!*base)
                return -EINVAL;
        return asprintf(ret, "%.*s.%s.atimectl-XXXXXX", dirlen, path, base) < 0 ? -ENOMEM : 0;
}

/* Writes text to a new temporary file beside 'path' with the owner and mode in st, fsync'd; its name in
 * *ret. On failure no temporary file is left. */
static int write_temp_copy(const char *path, const struct stat *st, const char *text, size_t len, char **ret) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = temp_name_for(path, &tmp);
        if (r < 0)
                return r;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = fill_copy(fd, st, text, len);
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        *ret = TAKE_PTR(tmp);
        return 0;
}

/* The old text unchanged in 'path', moves the written copy tmp over it. On failure tmp is removed. */
static int replace_with(const char *path, const char *tmp, const char *expected_old, size_t old_len) {
        int r;

        /* Someone may have edited the file while the backup and the new copy were being written. */
        r = check_unchanged(path, expected_old, old_len, NULL);
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

int fstab_write(const char *path, const char *expected_old, size_t old_len, const char *new_text, size_t new_len,
                const char *backup_path, char **ret_backup) {
        _cleanup_free_ char *backup = NULL, *tmp = NULL;
        struct stat st, lst;
        int r;

        if (!path || !*path || (!expected_old && old_len > 0) || (!new_text && new_len > 0) || !ret_backup)
                return -EINVAL;

        /* Renaming over a symlink would replace the link with a regular file; do not guess which was meant. */
        if (lstat(path, &lst) < 0)
                return negative_errno();
        if (S_ISLNK(lst.st_mode))
                return -ELOOP;

        r = check_unchanged(path, expected_old, old_len, &st);
        if (r < 0)
                return r;

        r = write_backup(path, backup_path, expected_old, old_len, &st, &backup);
        if (r < 0)
                return r;
        r = write_temp_copy(path, &st, new_text, new_len, &tmp);
        if (r >= 0)
                r = replace_with(path, tmp, expected_old, old_len);
        if (r < 0) {
                (void) unlink(backup);
                return r;
        }

        /* The file is replaced by now; a failure here only means the rename may not be durable yet, so the
         * backup is kept. */
        r = fsync_directory_of(path);
        if (r < 0)
                return r;

        *ret_backup = TAKE_PTR(backup);
        return 0;
}
