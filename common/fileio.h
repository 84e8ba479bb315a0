/* fileio.h: files whole: read to their end, written all or not at all,
 * and the directories they go in.
 *
 * Every file atimed reads or replaces may sit where a user or a mistake
 * put something else: a FIFO, a device, a symlink, a hard link to another
 * file. The helpers here neither block on nor follow nor overwrite such a
 * thing: reads take regular files only (opened O_NONBLOCK, the type
 * checked on the open fd); replacements write a new file under a name
 * nobody can guess (O_CREAT|O_EXCL|O_NOFOLLOW) and rename it over the old.
 * Errors are negative errno values. */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "macro.h"

/* _cleanup_(fclosep) FILE *f: closed when the scope is left. */
DEFINE_FREE_FUNC(FILE, fclose);

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

/* Writes all n bytes of buf to fd, again after a short write or EINTR. */
int loop_write(int fd, const void *buf, size_t n);

/* Creates the directories above 'path' (not its last component) with
 * 'mode', as mkdir -p of its dirname: those that exist are left as they
 * are. The first that cannot be made: its -errno. */
int mkdir_parents(const char *path, mode_t mode);

/* Writes the file 'name' in the directory dfd all or not at all. A new
 * file is made beside it as ".NAME.<16 random hex digits>.tmp" with
 * O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK (whatever sits at a predictable name
 * is never opened: a FIFO does not block, a link is not followed), given
 * 'mode' whatever the umask, filled by write_fn through a buffered FILE,
 * and renamed over 'name'. On any failure (write_fn's negative return
 * too) the new file is removed and 'name' left as it was. 'name' is a
 * plain file name; longer than NAME_MAX - 24: -ENAMETOOLONG. */
typedef enum WriteAtomicFlags {
        WRITE_ATOMIC_FSYNC = 1 << 0,     /* fsync() the file before the rename */
        WRITE_ATOMIC_FSYNC_DIR = 1 << 1, /* and the directory after it */
} WriteAtomicFlags;
typedef int (*write_file_fn)(FILE *f, void *userdata);
int write_file_atomic_at(int dfd, const char *name, mode_t mode, WriteAtomicFlags flags, write_file_fn write_fn,
                         void *userdata);

/* Removes the temporary files of 'name' that write_file_atomic_at() left
 * in dfd when it was interrupted (a crash, kill -9): regular files named
 * as it names them, nothing else. Only for a caller that knows no other
 * writer of 'name' is at work (it holds a lock). Returns how many were
 * removed, or -errno if the directory cannot be read. */
int remove_stale_temporaries_at(int dfd, const char *name);
