/* fileio.h: reading a whole file. */
#pragma once

#include <stddef.h>

/* Reads fd to its end into a NUL-terminated buffer. /proc files have no
 * size to stat, so the buffer grows as it reads. More than max bytes:
 * -EFBIG. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len);
/* The same for a path, opened O_RDONLY|O_CLOEXEC|O_NOCTTY. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len);
