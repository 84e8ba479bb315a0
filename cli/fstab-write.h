/* fstab-write.h: fstab replaced safely: never over a change made meanwhile, never without a backup,
 * never half written, never by a regular file where a link was. */
#pragma once

#include <stddef.h>

/* Writes new_text to 'path' safely: (1) re-reads 'path' and returns -ESTALE, writing nothing, if it is not
 * 'expected_old' byte for byte; (2) writes a backup of the old content to backup_path (default
 * "<path>.atimectl-<unix seconds>", with ".N" appended if that exists), mode and owner of the original,
 * fsync'd; (3) writes new_text to "<dir>/.<name>.atimectl-XXXXXX" with the original's mode and owner, fsync;
 * (4) compares 'path' with expected_old again (-ESTALE); (5) renames the temp file over 'path'; (6) fsyncs
 * the directory. On failure before the rename, the temp file and the backup are removed. A 'path' that is a
 * symlink or not a regular file is refused (-ELOOP, -EINVAL) rather than replaced by a regular file.
 * On success the backup path used is returned in *ret_backup (malloc'd). */
int fstab_write(const char *path, const char *expected_old, size_t old_len, const char *new_text, size_t new_len,
                const char *backup_path, char **ret_backup);
