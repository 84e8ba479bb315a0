/* fstab.h: the /etc/fstab editor behind `atimectl fstab`: edit the options field of the entries for
 * some mount points (here, fstab.c, on the text as fstab-parse.c reads it), show the edit as a unified diff
 * (fstab-diff.h), and replace the file safely (fstab-write.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "fstab-diff.h"
#include "fstab-write.h"

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
