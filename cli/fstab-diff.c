/* fstab-diff.c: a unified diff of two texts, lines paired by position (see fstab-diff.h). */
#include "fstab-diff.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

struct text_line {
        const char *p;
        size_t n;     /* without the "\n" */
        bool newline; /* false only for a last line without one */
};

static int split_text(const char *t, size_t len, struct text_line **ret, size_t *ret_n) {
        _cleanup_free_ struct text_line *l = NULL;
        size_t n = 0, cap = 0;

        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(t + pos, '\n', len - pos);
                size_t end = nl ? (size_t) (nl - t) : len;

                if (n == cap) {
                        struct text_line *nn;

                        cap = cap ? cap * 2 : 64;
                        nn = realloc(l, cap * sizeof(*l));
                        if (!nn)
                                return -ENOMEM;
                        l = nn;
                }
                l[n++] = (struct text_line) { t + pos, end - pos, !!nl };
                pos = nl ? end + 1 : len;
        }
        *ret = TAKE_PTR(l);
        *ret_n = n;
        return 0;
}

static bool line_eq(const struct text_line *a, const struct text_line *b) {
        return a->n == b->n && a->newline == b->newline && memcmp(a->p, b->p, a->n) == 0;
}

static void print_line(FILE *f, char prefix, const struct text_line *l) {
        fputc(prefix, f);
        fwrite(l->p, 1, l->n, f);
        fputc('\n', f);
        if (!l->newline)
                fputs("\\ No newline at end of file\n", f);
}

/* As diff prints a range: ",count" only when it is not 1, and for an empty range the line before it. */
static void print_range(FILE *f, size_t start, size_t count) {
        if (count == 1)
                fprintf(f, "%zu", start + 1);
        else
                fprintf(f, "%zu,%zu", count == 0 ? start : start + 1, count);
}

#define DIFF_CONTEXT 3

/* Which lines differ, paired by position: past the end of the shorter text every line is a change. The
 * flags in *ret (one more than needed, false), their number, the longer text's line count, in *ret_n. */
static int changed_lines(const struct text_line *a, size_t na, const struct text_line *b, size_t nb, bool **ret,
                         size_t *ret_n) {
        size_t n = MAX(na, nb);
        bool *changed = calloc(n + 1, sizeof(bool));

        if (!changed)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                changed[i] = i >= na || i >= nb || !line_eq(&a[i], &b[i]);
        *ret = changed;
        *ret_n = n;
        return 0;
}

/* The last changed line of the hunk that begins with the change at 'first': changes with at most
 * 2 * context unchanged lines between them share a hunk, as in diff. */
static size_t hunk_last(const bool *changed, size_t n, size_t first) {
        size_t last = first;

        for (size_t k = first + 1; k < n && k <= last + 2 * DIFF_CONTEXT + 1; k++)
                if (changed[k])
                        last = k;
        return last;
}

/* Prints the hunk of lines [start, end): its header, then context lines and each run of changes as the old
 * lines, then the new ones. */
static void print_hunk(FILE *f, const struct text_line *a, size_t na, const struct text_line *b, size_t nb,
                       const bool *changed, size_t start, size_t end) {
        fputs("@@ -", f);
        print_range(f, MIN(start, na), MIN(end, na) - MIN(start, na));
        fputs(" +", f);
        print_range(f, MIN(start, nb), MIN(end, nb) - MIN(start, nb));
        fputs(" @@\n", f);

        for (size_t k = start; k < end;) {
                size_t run;

                if (!changed[k]) {
                        print_line(f, ' ', &a[k]);
                        k++;
                        continue;
                }
                for (run = k; run < end && changed[run]; run++)
                        ;
                for (size_t m = k; m < run && m < na; m++)
                        print_line(f, '-', &a[m]);
                for (size_t m = k; m < run && m < nb; m++)
                        print_line(f, '+', &b[m]);
                k = run;
        }
}

/* The hunks of two split texts, with their header lines, into the memory stream's buffer in *ret. */
static int write_diff(const struct text_line *a, size_t na, const struct text_line *b, size_t nb,
                      const char *old_label, const char *new_label, char **ret) {
        _cleanup_free_ bool *changed = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t n, size = 0;
        FILE *f;
        int r;

        r = changed_lines(a, na, b, nb, &changed, &n);
        if (r < 0)
                return r;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "--- %s\n+++ %s\n", old_label, new_label);
        for (size_t i = 0; i < n;) {
                size_t start, end;

                if (!changed[i]) {
                        i++;
                        continue;
                }
                start = i > DIFF_CONTEXT ? i - DIFF_CONTEXT : 0;
                end = MIN(n, hunk_last(changed, n, i) + 1 + DIFF_CONTEXT);
                print_hunk(f, a, na, b, nb, changed, start, end);
                i = end;
        }
        if (ferror(f)) {
                fclose(f);
                return -ENOMEM;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int fstab_diff(const char *old_text, size_t old_len, const char *new_text, size_t new_len, const char *old_label,
               const char *new_label, char **ret) {
        _cleanup_free_ struct text_line *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        int r;

        if ((!old_text && old_len > 0) || (!new_text && new_len > 0) || !old_label || !new_label || !ret)
                return -EINVAL;

        if (old_len == new_len && (old_len == 0 || memcmp(old_text, new_text, old_len) == 0)) {
                *ret = strdup("");
                return *ret ? 0 : -ENOMEM;
        }

        r = split_text(old_text, old_len, &a, &na);
        if (r < 0)
                return r;
        r = split_text(new_text, new_len, &b, &nb);
        if (r < 0)
                return r;
        return write_diff(a, na, b, nb, old_label, new_label, ret);
}
