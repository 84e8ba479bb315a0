/* fstab.h: the /etc/fstab editor behind `atimectl fstab`: edit the options field of the entries for
 * some mount points, show the edit as a unified diff, and replace the file safely. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fstab_request {
        const char *target;   /* mount point, as in /proc/self/mountinfo (unescaped) */
        const char *atime;    /* "noatime", "relatime", "strictatime", or NULL: leave the atime policy alone */
        int lazytime;         /* 1: add lazytime, 0: remove lazytime/nolazytime, -1: leave alone */
        bool nodiratime;      /* add nodiratime (not with noatime, which implies it); false: leave alone */
        bool named;           /* named explicitly by the user: edit even swap, "none" and network lines */
};

struct fstab_change {
        char *target;
        unsigned line;        /* 1-based */
        char *old_options;
        char *new_options;
};

struct fstab_result {
        char *text;                    /* the whole new file; identical bytes except the options fields changed */
        size_t len;
        struct fstab_change *changes;  /* lines actually changed */
        size_t n_changes;
        char **not_found;              /* request targets with no fstab entry (strv, NULL if none) */
        char **skipped;                /* human-readable notes, e.g. "line 7: /home is a network filesystem (nfs4): left alone" */
};

/* Applies the requests to fstab text (not NUL-terminated necessarily). Returns 0, -ENOMEM, or -EINVAL for a
 * request that makes no sense (unknown atime value, empty or relative target). Malformed fstab lines are left
 * byte-for-byte as they are and reported in 'skipped' with their line number; they never cause a failure.
 * Besides absolute paths, the fstab placeholders "none" and "swap" are accepted as targets, so that a named
 * request can reach swap entries. *ret is only written on success. */
int fstab_edit(const char *text, size_t len, const struct fstab_request *reqs, size_t n_reqs, struct fstab_result *ret);
/* Frees the members and zeroes the struct; safe on a zeroed struct and on NULL. */
void fstab_result_done(struct fstab_result *r);

/* A unified diff (like `diff -u`, 3 lines of context, hunk headers "@@ -a,b +c,d @@", ",b" left out when b
 * is 1 as diff does) of two texts, with the header lines "--- OLD_LABEL" and "+++ NEW_LABEL". Empty string
 * (not NULL) when the texts are equal. A last line without a newline is followed by
 * "\ No newline at end of file". Lines are compared by position, which is exact for fstab_edit() output
 * since it never adds or removes lines. */
int fstab_diff(const char *old_text, size_t old_len, const char *new_text, size_t new_len, const char *old_label,
               const char *new_label, char **ret);

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
