/* table.c: aligned terminal tables (see table.h). */
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "escape.h"

struct fit_step {
        size_t column;
        TableFit how;
};

struct Table {
        size_t n_columns;
        char **cells; /* row-major; row 0 is the header */
        char **shorts; /* the same, the short forms or NULL */
        size_t n_rows;
        size_t alloc_rows; /* cells and shorts hold this many rows */
        size_t *display; /* the columns to print, in order */
        size_t n_display;
        struct fit_step *steps;
        size_t n_steps;
        bool *dropped; /* per column: what the last table_print() left out */
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
        t->dropped = calloc(n_columns ? n_columns : 1, sizeof(bool));
        if (!t->dropped)
                return table_free(t);
        if (table_add_row(t, headers) < 0)
                return table_free(t);
        return t;
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++) {
                free(t->cells[i]);
                free(t->shorts[i]);
        }
        free(t->cells);
        free(t->shorts);
        free(t->display);
        free(t->steps);
        free(t->dropped);
        free(t);
        return NULL;
}

/* Room for one more row: doubled when full, so a table of many rows is
 * built in linear time (an allocator that copies on every realloc, as
 * ASan's does, made it quadratic). */
static int table_grow(Table *t) {
        size_t rows = t->alloc_rows ? t->alloc_rows * 2 : 16;
        char **nc, **ns;

        if (t->n_rows < t->alloc_rows)
                return 0;
        nc = realloc(t->cells, sizeof(char *) * rows * t->n_columns);
        if (!nc)
                return -ENOMEM;
        t->cells = nc;
        ns = realloc(t->shorts, sizeof(char *) * rows * t->n_columns);
        if (!ns)
                return -ENOMEM;
        t->shorts = ns;
        t->alloc_rows = rows;
        return 0;
}

int table_add_row(Table *t, const char *const *cells) {
        if (table_grow(t) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_columns; i++)
                t->shorts[t->n_rows * t->n_columns + i] = NULL;
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

int table_set_short(Table *t, size_t column, const char *s) {
        char **c;

        if (column >= t->n_columns || t->n_rows < 2)
                return -EINVAL;
        c = &t->shorts[(t->n_rows - 1) * t->n_columns + column];
        free(*c);
        *c = s ? escape_controls(s) : NULL;
        return !s || *c ? 0 : -ENOMEM;
}

int table_add_fit(Table *t, size_t column, TableFit how) {
        struct fit_step *ns;

        if (column >= t->n_columns)
                return -EINVAL;
        ns = realloc(t->steps, sizeof *ns * (t->n_steps + 1));
        if (!ns)
                return -ENOMEM;
        t->steps = ns;
        t->steps[t->n_steps++] = (struct fit_step) { .column = column, .how = how };
        return 0;
}

bool table_column_printed(const Table *t, size_t column) {
        if (column >= t->n_columns || t->dropped[column])
                return false;
        if (!t->display)
                return true;
        for (size_t i = 0; i < t->n_display; i++)
                if (t->display[i] == column)
                        return true;
        return false;
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

/* How a displayed column is laid out: its width, whether it shows the
 * short forms, and for a shortened one, how many code points of each row
 * end it after the ellipsis. */
struct column_layout {
        size_t c, w;
        bool shown, use_short;
        size_t *tail; /* per row; NULL: nothing shortened */
};

static const char *cell(const Table *t, size_t r, size_t c, bool use_short) {
        const char *s = use_short ? t->shorts[r * t->n_columns + c] : NULL;

        return s ? s : t->cells[r * t->n_columns + c];
}

static size_t column_width(const Table *t, size_t c, bool use_short) {
        size_t w = 0;

        /* The header counts even without a legend, so that columns do not
         * move with --no-legend. */
        for (size_t r = 0; r < t->n_rows; r++)
                w = MAX(w, table_text_width(cell(t, r, c, use_short)));
        return w;
}

static size_t total_width(const struct column_layout *l, size_t n) {
        size_t total = 0, shown = 0;

        for (size_t i = 0; i < n; i++)
                if (l[i].shown) {
                        total += l[i].w;
                        shown++;
                }
        return total + (shown > 1 ? 2 * (shown - 1) : 0);
}

/* The code points at the end of s after its last '/' (with it), or 0 if
 * it has none past its first byte. */
static size_t last_component(const char *s) {
        const char *slash = strrchr(s, '/');

        return slash && slash > s ? table_text_width(slash) : slash && slash[1] ? table_text_width(slash) : 0;
}

/* The code points of the tail of s that starts at the component which holds
 * its last 'n' code points: the whole component, with its '/'. */
static size_t tail_to_component(const char *s, size_t n) {
        size_t sw = table_text_width(s);
        const char *p;

        if (n >= sw)
                return sw;
        p = s + utf8_offset(s, sw - n);

        while (p > s && *p != '/')
                p--;
        return table_text_width(p);
}

struct by_end {
        const char *s;
        size_t len, row;
};

/* Compares two strings from their ends. */
static int cmp_by_end(const void *a, const void *b) {
        const struct by_end *x = a, *y = b;
        size_t i = 0;

        for (; i < x->len && i < y->len; i++) {
                unsigned char cx = (unsigned char) x->s[x->len - 1 - i], cy = (unsigned char) y->s[y->len - 1 - i];

                if (cx != cy)
                        return cx < cy ? -1 : 1;
        }
        return (x->len > i) - (y->len > i);
}

/* The code points two strings share at their ends. */
static size_t common_end(const struct by_end *x, const struct by_end *y) {
        size_t i = 0;

        while (i < x->len && i < y->len && x->s[x->len - 1 - i] == y->s[y->len - 1 - i])
                i++;
        return table_text_width(x->s + x->len - i);
}

/* For each row of column c, the code points at its end that it shares with
 * the nearest other row that reads differently: so much of the end must be
 * shown, and one more, for the two to print differently. */
static int shared_ends(const Table *t, size_t c, size_t *ret) {
        size_t n = t->n_rows - 1;
        _cleanup_free_ struct by_end *v = calloc(n ? n : 1, sizeof *v);

        if (!v)
                return -ENOMEM;
        for (size_t r = 0; r < n; r++) {
                const char *s = t->cells[(r + 1) * t->n_columns + c];

                v[r] = (struct by_end) { .s = s, .len = strlen(s), .row = r + 1 };
                ret[r + 1] = 0;
        }
        if (n > 0)
                qsort(v, n, sizeof *v, cmp_by_end);
        for (size_t k = 0; k < n; k++) {
                size_t a = k, b = k;

                /* Identical rows cannot be told apart: skip them. */
                while (a > 0 && cmp_by_end(&v[a - 1], &v[k]) == 0)
                        a--;
                while (b + 1 < n && cmp_by_end(&v[b + 1], &v[k]) == 0)
                        b++;
                if (a > 0)
                        ret[v[k].row] = MAX(ret[v[k].row], common_end(&v[a - 1], &v[k]));
                if (b + 1 < n)
                        ret[v[k].row] = MAX(ret[v[k].row], common_end(&v[b + 1], &v[k]));
        }
        return 0;
}

/* How many code points of s end it when it must fit in 'avail' cells (the
 * width less the ellipsis): a path keeps its last component whole and the
 * start takes the rest; when even that does not fit, the end of it; text
 * without a '/' is cut in the middle. At least 'need' + 1 when need > 0
 * (the row differs from another in that much of its end), more than
 * 'avail' if that must be. */
static size_t tail_of(const char *s, size_t avail, size_t need) {
        size_t comp = last_component(s), t;

        if (comp > 0)
                t = comp < avail ? comp : avail;
        else
                t = avail / 2;
        if (need > 0 && need + 1 > t) {
                size_t whole = tail_to_component(s, need + 1);

                t = whole < avail ? whole : need + 1;
        }
        return MIN(t, table_text_width(s));
}

/* Shortens column l to l->w cells, widening it if two rows would
 * otherwise print the same; then every row's tail is set. */
static int elide_column(const Table *t, struct column_layout *l, size_t ew, size_t full) {
        _cleanup_free_ size_t *need = calloc(t->n_rows, sizeof *need);
        int r;

        if (!need || !(l->tail = calloc(t->n_rows, sizeof *l->tail)))
                return -ENOMEM;
        r = shared_ends(t, l->c, need);
        if (r < 0)
                return r;
        for (size_t row = 1; row < t->n_rows; row++) {
                const char *s = cell(t, row, l->c, l->use_short);

                if (table_text_width(s) > l->w && l->w > ew) {
                        size_t tl = tail_of(s, l->w - ew, need[row]);

                        if (tl + ew > l->w) /* told apart only wider */
                                l->w = MIN(tl + ew, full);
                }
        }
        for (size_t row = 1; row < t->n_rows; row++) {
                const char *s = cell(t, row, l->c, l->use_short);

                l->tail[row] = table_text_width(s) > l->w && l->w > ew ? MIN(tail_of(s, l->w - ew, need[row]), l->w - ew)
                                                                      : SIZE_MAX;
        }
        return 0;
}

/* s in w cells: as is, padded unless last, or shortened to keep its last
 * 'tail' code points. */
static void print_cell(FILE *f, const char *s, size_t w, size_t tail, bool last, const char *ellipsis) {
        size_t sw = table_text_width(s), ew = table_text_width(ellipsis);

        if (sw > w && w > ew && tail != SIZE_MAX) {
                size_t head = w - ew - tail;
                size_t hb = utf8_offset(s, head), tb = utf8_offset(s, sw - tail);

                fprintf(f, "%.*s%s%s", (int) hb, s, ellipsis, s + tb);
                sw = w;
        } else
                fputs(s, f);
        if (!last)
                fprintf(f, "%*s  ", (int) (w > sw ? w - sw : 0), "");
}

/* One step of fitting: the columns it applies to give way. */
static void fit_step(const Table *t, const struct fit_step *st, struct column_layout *l, size_t n, size_t *total) {
        for (size_t i = 0; i < n && *total > t->width; i++) {
                size_t min;

                if (l[i].c != st->column || !l[i].shown)
                        continue;
                switch (st->how) {
                case TABLE_FIT_SHORT:
                        l[i].use_short = true;
                        l[i].w = column_width(t, l[i].c, true);
                        break;
                case TABLE_FIT_DROP:
                        l[i].shown = false;
                        break;
                case TABLE_FIT_ELIDE:
                        /* never below its header or 10 cells */
                        min = MAX(table_text_width(t->cells[l[i].c]), (size_t) 10);
                        if (l[i].w > min)
                                l[i].w -= MIN(l[i].w - min, *total - t->width);
                        break;
                }
                *total = total_width(l, n);
        }
}

void table_print(const Table *t, FILE *f, bool header) {
        size_t n = t->display ? t->n_display : t->n_columns, total, last = 0;
        const char *ellipsis = t->width > 0 && t->ellipsis ? t->ellipsis : "";
        _cleanup_free_ struct column_layout *l = calloc(n ? n : 1, sizeof *l);

        if (!l)
                return;
        for (size_t i = 0; i < n; i++) {
                l[i] = (struct column_layout) { .c = t->display ? t->display[i] : i, .shown = true };
                l[i].w = column_width(t, l[i].c, false);
        }
        total = total_width(l, n);
        /* Too wide: the steps in their order, until it fits. */
        for (size_t s = 0; t->width > 0 && s < t->n_steps && total > t->width; s++)
                fit_step(t, &t->steps[s], l, n, &total);
        for (size_t c = 0; c < t->n_columns; c++)
                t->dropped[c] = true;
        for (size_t i = 0; i < n; i++) {
                size_t full = column_width(t, l[i].c, l[i].use_short);

                if (!l[i].shown)
                        continue;
                t->dropped[l[i].c] = false;
                last = i;
                if (l[i].w < full && elide_column(t, &l[i], table_text_width(ellipsis), full) < 0)
                        goto finish;
        }
        for (size_t r = header ? 0 : 1; r < t->n_rows; r++) {
                for (size_t i = 0; i < n; i++)
                        if (l[i].shown)
                                print_cell(f, cell(t, r, l[i].c, l[i].use_short), l[i].w,
                                           l[i].tail && r > 0 ? l[i].tail[r] : SIZE_MAX, i == last, ellipsis);
                fputc('\n', f);
        }
finish:
        for (size_t i = 0; i < n; i++)
                free(l[i].tail);
}
