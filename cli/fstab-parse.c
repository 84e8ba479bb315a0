/* fstab-parse.c: fstab text read just enough to find each entry's fields (see fstab-parse.h). */
#include "fstab-parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

void fstab_entries_free(struct entry *e, size_t n) {
        for (size_t i = 0; e && i < n; i++)
                free(e[i].target);
        free(e);
}

void fstab_normalize_path(char *p) {
        size_t l = strlen(p);

        while (l > 1 && p[l - 1] == '/')
                p[--l] = 0;
}

/* fstab(5) writes blanks and a few other bytes in fields as \ooo (getmntent's \040, \011, \012, \134, \043);
 * any three-digit octal escape is decoded, as libmount does. \000 would cut the string short, so it stays
 * literal. */
static char *unescape_field(const char *s, size_t n) {
        char *r = malloc(n + 1), *p = r;

        if (!r)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        unsigned v = (unsigned) (s[i + 1] - '0') << 6 | (unsigned) (s[i + 2] - '0') << 3 |
                                     (unsigned) (s[i + 3] - '0');

                        if (v != 0) {
                                *p++ = (char) v;
                                i += 3;
                                continue;
                        }
                }
                *p++ = s[i];
        }
        *p = 0;
        return r;
}

char *fstab_span_dup(const char *text, struct span s) {
        return memdup_str(text + s.start, s.end - s.start);
}

static bool span_is_number(const char *text, struct span s) {
        if (s.start == s.end)
                return false;
        for (size_t i = s.start; i < s.end; i++)
                if (text[i] < '0' || text[i] > '9')
                        return false;
        return true;
}

/* Splits one line (without its "\n", and without a "\r" before it) into fields. Returns 1 for an entry,
 * 0 for a comment or blank line, -EBADMSG for a line that is neither: it is then only reported. */
static int split_line(const char *text, size_t start, size_t end, struct entry *e) {
        size_t i = start;

        while (i < end && is_blank(text[i]))
                i++;
        if (i == end || text[i] == '#')
                return 0;
        /* Fields are handled as C strings. */
        if (memchr(text + start, 0, end - start))
                return -EBADMSG;

        e->n_fields = 0;
        for (;;) {
                size_t s;

                while (i < end && is_blank(text[i]))
                        i++;
                /* A field starting with '#' begins a trailing comment; a '#' inside a field is data
                 * (a literal one in the mount point is written \043). */
                if (i == end || text[i] == '#')
                        break;
                if (e->n_fields == _FIELD_MAX)
                        return -EBADMSG;
                s = i;
                while (i < end && !is_blank(text[i]))
                        i++;
                e->field[e->n_fields++] = (struct span) { s, i };
        }

        /* "spec file type" alone is an entry: mount(8) and findmnt --verify
         * take the options as "defaults" and dump and pass as 0. An edit
         * adds the options field after the type. */
        if (e->n_fields == FIELD_OPTS) {
                e->field[FIELD_OPTS] = (struct span) { e->field[FIELD_TYPE].end, e->field[FIELD_TYPE].end };
                e->bare = true;
                return 1;
        }
        if (e->n_fields < FIELD_OPTS)
                return -EBADMSG;
        for (size_t f = FIELD_FREQ; f < e->n_fields; f++)
                if (!span_is_number(text, e->field[f]))
                        return -EBADMSG;
        return 1;
}

int fstab_note(char ***notes, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (strv_contains(*notes, s))
                return 0;
        return strv_extend(notes, s);
}

/* The bounds of the line at pos: [pos, *ret_end) without its "\n" and without a "\r" before it (a CRLF file
 * keeps its "\r": it is part of the line end, not of the last field); the next line starts at *ret_next. */
static void line_bounds(const char *text, size_t len, size_t pos, size_t *ret_end, size_t *ret_next) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t) (nl - text) : len;

        *ret_next = nl ? end + 1 : len;
        if (end > pos && text[end - 1] == '\r')
                end--;
        *ret_end = end;
}

/* Appends e to the entries, with its unescaped target, and joins it to the group of earlier entries with the
 * same target (first: the group's first entry, whose count grows). -ENOMEM leaves the entries as they were. */
static int entries_append(const char *text, struct entry e, struct entry **entries, size_t *n_entries) {
        struct entry *ne = realloc(*entries, sizeof(struct entry) * (*n_entries + 1));

        if (!ne)
                return -ENOMEM;
        *entries = ne;
        e.target = unescape_field(text + e.field[FIELD_FILE].start, e.field[FIELD_FILE].end - e.field[FIELD_FILE].start);
        if (!e.target)
                return -ENOMEM;
        fstab_normalize_path(e.target);
        e.first = *n_entries;
        e.count = 1;
        for (size_t j = 0; j < *n_entries; j++)
                if (streq(ne[j].target, e.target)) {
                        e.first = ne[j].first;
                        ne[e.first].count++;
                        break;
                }
        ne[(*n_entries)++] = e;
        return 0;
}

int fstab_parse_entries(const char *text, size_t len, char ***notes, struct entry **ret, size_t *ret_n) {
        struct entry *entries = NULL;
        size_t n_entries = 0;
        unsigned line = 0;
        int r;

        for (size_t pos = 0, end, next; pos < len; pos = next) {
                struct entry e = { .line = ++line };

                line_bounds(text, len, pos, &end, &next);
                r = split_line(text, pos, end, &e);
                if (r == -EBADMSG)
                        r = fstab_note(notes, "line %u: malformed entry: left alone", e.line);
                else if (r > 0)
                        r = entries_append(text, e, &entries, &n_entries);
                if (r < 0) {
                        fstab_entries_free(entries, n_entries);
                        return r;
                }
        }
        for (size_t j = 0; j < n_entries; j++)
                entries[j].count = entries[entries[j].first].count;
        *ret = entries;
        *ret_n = n_entries;
        return 0;
}
