/* table.c: aligned terminal tables (see table.h). */
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "escape.h"

struct Table {
        size_t n_columns;
        char **cells; /* row-major; row 0 is the header */
        size_t n_rows;
        size_t *display; /* the columns to print, in order */
        size_t n_display;
        bool *shrinkable;
        size_t width; /* 0: unlimited */
        const char *ellipsis;
};

/* Display width: counts UTF-8 code points, not bytes. */
size_t table_text_width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        w++;
        return w;
}

Table *table_new(size_t n_columns, const char *const *headers) {
        Table *t = calloc(1, sizeof *t);

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        t->shrinkable = calloc(n_columns, sizeof(bool));
        if (!t->shrinkable)
                return table_free(t);
        if (table_add_row(t, headers) < 0)
                return table_free(t);
        return t;
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t->display);
        free(t->shrinkable);
        free(t);
        return NULL;
}

int table_add_row(Table *t, const char *const *cells) {
        char **nc = realloc(t->cells, sizeof(char *) * (t->n_rows + 1) * t->n_columns);

        if (!nc)
                return -ENOMEM;
        t->cells = nc;
        for (size_t i = 0; i < t->n_columns; i++) {
                char **c = &t->cells[t->n_rows * t->n_columns + i];

                *c = escape_controls(cells[i] ? cells[i] : "-"); /* C0, C1, bidi: see escape.h */
                if (!*c) {
                        for (size_t j = 0; j < i; j++)
                                free(t->cells[t->n_rows * t->n_columns + j]);
                        return -ENOMEM;
                }
        }
        t->n_rows++;
        return 0;
}

size_t table_rows(const Table *t) {
        return t->n_rows - 1;
}

int table_set_display(Table *t, const size_t *columns, size_t n) {
        size_t *d = malloc(sizeof(size_t) * (n ? n : 1));

        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (columns[i] >= t->n_columns) {
                        free(d);
                        return -EINVAL;
                }
                d[i] = columns[i];
        }
        free(t->display);
        t->display = d;
        t->n_display = n;
        return 0;
}

void table_set_shrinkable(Table *t, size_t column) {
        if (column < t->n_columns)
                t->shrinkable[column] = true;
}

void table_set_width(Table *t, size_t width, const char *ellipsis) {
        t->width = width;
        t->ellipsis = ellipsis;
}

/* Byte offset of the n-th code point of s (or its end). */
static size_t utf8_offset(const char *s, size_t n) {
        size_t i = 0;

        for (; s[i]; i++)
                if (((unsigned char) s[i] & 0xc0) != 0x80 && n-- == 0)
                        break;
        return i;
}

/* s in w cells: as is, padded unless last, or shortened in the middle. */
static void print_cell(FILE *f, const char *s, size_t w, bool last, const char *ellipsis) {
        size_t sw = table_text_width(s), ew = table_text_width(ellipsis);

        if (sw > w && w > ew) {
                size_t keep = w - ew, head = (keep + 1) / 2, tail = keep - head;
                size_t hb = utf8_offset(s, head), tb = utf8_offset(s, sw - tail);

                fprintf(f, "%.*s%s%s", (int) hb, s, ellipsis, s + tb);
                sw = w;
        } else
                fputs(s, f);
        if (!last)
                fprintf(f, "%*s  ", (int) (w > sw ? w - sw : 0), "");
}

void table_print(const Table *t, FILE *f, bool header) {
        size_t n = t->display ? t->n_display : t->n_columns, total = 0;
        _cleanup_free_ size_t *w = calloc(n ? n : 1, sizeof *w);

        if (!w)
                return;
        for (size_t r = 0; r < t->n_rows; r++)
                for (size_t i = 0; i < n; i++) {
                        size_t c = t->display ? t->display[i] : i;

                        /* The header counts even without a legend, so
                         * that columns do not move with --no-legend. */
                        w[i] = MAX(w[i], table_text_width(t->cells[r * t->n_columns + c]));
                }
        for (size_t i = 0; i < n; i++)
                total += w[i] + (i + 1 < n ? 2 : 0);
        /* Too wide: shorten the shrinkable columns, never below their
         * header or 10 cells. */
        for (size_t i = 0; t->width > 0 && total > t->width && i < n; i++) {
                size_t c = t->display ? t->display[i] : i;
                size_t min = MAX(table_text_width(t->cells[c]), (size_t) 10), cut;

                if (!t->shrinkable[c] || w[i] <= min)
                        continue;
                cut = MIN(w[i] - min, total - t->width);
                w[i] -= cut;
                total -= cut;
        }
        for (size_t r = header ? 0 : 1; r < t->n_rows; r++)
                for (size_t i = 0; i < n; i++) {
                        size_t c = t->display ? t->display[i] : i;

                        print_cell(f, t->cells[r * t->n_columns + c], w[i], i + 1 == n,
                                   t->width > 0 && t->ellipsis ? t->ellipsis : "");
                        if (i + 1 == n)
                                fputc('\n', f);
                }
}
