/* fileio.h: reading a whole file. */
#pragma once

#include <stddef.h>

/* Reads fd to its end into a NUL-terminated buffer. /proc files have no
 * size to stat, so the buffer grows as it reads. More than max bytes:
 * -EFBIG. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len);

/* Opens a file to read whatever it turned out to be, without blocking: a
 * FIFO or a device put where a file was expected (by a user, in a directory
 * atimed scans) must neither hang the caller nor be read. Opens with
 * O_NONBLOCK|O_NOCTTY|O_CLOEXEC and the flags given (O_NOFOLLOW,
 * O_NOATIME: where refused, without it), then checks the type with fstat():
 * a regular file is returned ready to read (blocking again); /dev/null, the
 * conventional empty file (a masked tmpfiles.d entry, an empty
 * configuration), too; anything else: -EBADFD, a directory -EISDIR, a
 * symlink under O_NOFOLLOW -ELOOP. */
int open_regular_at(int dfd, const char *path, int flags);
/* The same, read whole. */
int read_full_file_at(int dfd, const char *path, int flags, size_t max, char **ret, size_t *ret_len);
/* read_full_file_at(AT_FDCWD, path, 0, ...). */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len);
/* What went wrong, for a log line: "not a regular file" for -EBADFD. */
const char *fileio_strerror(int r);
