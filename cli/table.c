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
};

/* Display width: counts UTF-8 code points, not bytes. */
static size_t width(const char *s) {
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

void table_print(const Table *t, FILE *f, bool header) {
        size_t *w = calloc(t->n_columns, sizeof *w);

        if (!w)
                return;
        for (size_t r = header ? 0 : 1; r < t->n_rows; r++)
                for (size_t c = 0; c < t->n_columns; c++)
                        w[c] = MAX(w[c], width(t->cells[r * t->n_columns + c]));
        for (size_t r = header ? 0 : 1; r < t->n_rows; r++) {
                for (size_t c = 0; c < t->n_columns; c++) {
                        const char *s = t->cells[r * t->n_columns + c];

                        if (c + 1 == t->n_columns)
                                fprintf(f, "%s\n", s);
                        else
                                fprintf(f, "%s%*s  ", s, (int) (w[c] - width(s)), "");
                }
        }
        free(w);
}
