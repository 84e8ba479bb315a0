/* fstab-parse.h: fstab text read just enough to find each entry's fields, for the editor (fstab.c): where
 * each field of an entry lies in the text, its mount point decoded, which entries share one. A line that is
 * no entry is noted and left out, never a failure. Private to fstab.c and fstab-parse.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

enum {
        FIELD_SPEC,
        FIELD_FILE,
        FIELD_TYPE,
        FIELD_OPTS,
        FIELD_FREQ,
        FIELD_PASSNO,
        _FIELD_MAX,
};

struct span {
        size_t start, end; /* byte offsets into the text, [start, end) */
};

struct entry {
        unsigned line;
        struct span field[_FIELD_MAX];
        size_t n_fields;
        bool bare;    /* three fields: no options field, which means "defaults" */
        char *target; /* unescaped mount point, trailing slashes dropped */
        size_t first; /* index of the first entry with the same target */
        size_t count; /* how many entries share the target */
};

/* The entries of the text in line order, comments and blank lines passed over, each with its target and how
 * many entries share it (count, the same in every entry of a group). A malformed line is noted ("line N:
 * malformed entry: left alone") and is no entry. The whole text is read before anything is edited, so that
 * duplicates are known. The text need not end in a NUL. Returns 0 or -ENOMEM; on failure nothing is
 * returned. */
int fstab_parse_entries(const char *text, size_t len, char ***notes, struct entry **ret, size_t *ret_n);
void fstab_entries_free(struct entry *e, size_t n);

/* A field's bytes as a string (the text need not end in a NUL); NULL on OOM. */
char *fstab_span_dup(const char *text, struct span s);
/* Drops the trailing slashes of a path, as entry targets are kept. */
void fstab_normalize_path(char *p);
/* Adds a note to the strv *notes, once however often it is made. 0 or -ENOMEM. */
int fstab_note(char ***notes, const char *fmt, ...) _printf_(2, 3);
