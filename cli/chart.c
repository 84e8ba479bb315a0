/* chart.c: terminal charts (see chart.h). */
#include "chart.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

/* Eighths of a cell, from empty to full. */
static const char *const blocks[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588" };
static const char ascii[] = " .:-=+*#@";

bool chart_unicode(void) {
        const char *cs;

        (void) setlocale(LC_CTYPE, "");
        cs = nl_langinfo(CODESET);
        return cs && (streq(cs, "UTF-8") || streq(cs, "utf8"));
}

char *chart_format_count(char *buf, size_t len, double v) {
        if (!isfinite(v))
                snprintf(buf, len, "?");
        else if (fabs(v) >= 999.95e9)
                /* A sum past a double's range, a reply's nonsense: its
                 * order of magnitude, not its first digits cut off. */
                snprintf(buf, len, "%.2g", v);
        else if (v >= 999500)
                snprintf(buf, len, "%.1fM", v / 1e6);
        else if (v >= 99950)
                snprintf(buf, len, "%.0fk", v / 1e3);
        else if (v >= 9999.5)
                snprintf(buf, len, "%.1fk", v / 1e3);
        else if (v >= 99.95 || v == 0)
                snprintf(buf, len, "%.0f", v);
        else
                snprintf(buf, len, "%.1f", v);
        return buf;
}

size_t chart_columns(const struct series *s, size_t width, double *out) {
        size_t cols = MIN(s->n, width);

        for (size_t c = 0; c < cols; c++) {
                /* Points [from, to) fall in column c. */
                size_t from = c * s->n / cols, to = (c + 1) * s->n / cols;
                double sum = 0;
                size_t k = 0;

                for (size_t i = from; i < to; i++)
                        if (s->present[i]) {
                                sum += s->value[i];
                                k++;
                        }
                out[c] = k ? sum / (double) k : NAN;
        }
        return cols;
}

static double column_max(const double *col, size_t n) {
        double m = 0;

        for (size_t i = 0; i < n; i++)
                if (!isnan(col[i]))
                        m = fmax(m, col[i]);
        return m;
}

/* A cell for v of max, in eighths; a value above 0 shows at least a sliver. */
static int eighths(double v, double max) {
        int e;

        if (isnan(v) || v <= 0 || max <= 0)
                return 0;
        e = (int) lround(v / max * 8);
        return MAX(MIN(e, 8), 1);
}

double chart_sparkline_peak(const struct series *s, size_t width) {
        _cleanup_free_ double *col = calloc(MAX(width, 1u), sizeof *col);

        return col ? column_max(col, chart_columns(s, width, col)) : 0;
}

void chart_sparkline(const struct series *s, size_t width, double scale, bool unicode, char *buf, size_t len) {
        double *col = calloc(MAX(width, 1u), sizeof *col);
        size_t n, used = 0;
        double max;

        buf[0] = 0;
        if (!col)
                return;
        n = chart_columns(s, width, col);
        max = scale > 0 ? scale : column_max(col, n);
        for (size_t c = 0; c < n; c++) {
                /* A gap is a dot on the baseline; zero a flat line. */
                const char *cell;
                char a[2] = { 0, 0 };

                if (isnan(col[c]))
                        cell = unicode ? "\u00b7" : " ";
                else if (unicode)
                        cell = col[c] > 0 ? blocks[eighths(col[c], max)] : "\u2581";
                else {
                        a[0] = col[c] > 0 ? ascii[eighths(col[c], max)] : '_';
                        cell = a;
                }
                if (used + strlen(cell) + 1 > len)
                        break;
                used += (size_t) snprintf(buf + used, len - used, "%s", cell);
        }
        free(col);
}

static void time_label(char *buf, size_t len, time_t t, time_t span) {
        struct tm tm;

        if (!localtime_r(&t, &tm)) {
                snprintf(buf, len, "?");
                return;
        }
        strftime(buf, len,
                 span < 600         ? "%H:%M:%S"
                 : span <= 86400    ? "%H:%M"
                 : span <= 14 * 86400 ? "%m-%d %H:%M"
                                    : "%Y-%m-%d",
                 &tm);
}

/* The columns of a plot: their values, whether a point in each is marked,
 * whether atimed ran during one of them, and the values' scale. */
struct plot {
        double *col;
        bool *mark, *up;
        size_t n;
        double max;
        char top[16]; /* max, as the top label */
        size_t lw;    /* the labels' width */
        bool unicode;
};

static void plot_done(struct plot *p) {
        free(p->col);
        free(p->mark);
        free(p->up);
}

/* Averages the series into at most 'width' columns, and carries each
 * point's flags to its column. */
static int plot_columns(const struct series *s, const bool *marks, const bool *running, size_t width, struct plot *p) {
        p->col = calloc(MAX(width, 1u), sizeof *p->col);
        p->mark = calloc(MAX(width, 1u), sizeof *p->mark);
        p->up = calloc(MAX(width, 1u), sizeof *p->up);
        if (!p->col || !p->mark || !p->up)
                return -ENOMEM;
        p->n = chart_columns(s, width, p->col);
        for (size_t c = 0; c < p->n; c++)
                for (size_t i = c * s->n / p->n; i < (c + 1) * s->n / p->n; i++) {
                        p->mark[c] = p->mark[c] || (marks && marks[i]);
                        p->up[c] = p->up[c] || (running && running[i]);
                }
        p->max = column_max(p->col, p->n);
        chart_format_count(p->top, sizeof p->top, p->max);
        p->lw = MAX(strlen(p->top), 1u);
        return 0;
}

/* Column c's cell in row 'row' (1 at the bottom) of 'height'. */
static void plot_cell(FILE *f, const struct plot *p, size_t c, size_t row, size_t height) {
        double level = isnan(p->col[c]) || p->max <= 0 ? 0 : p->col[c] / p->max * (double) height;
        double in = level - (double) (row - 1);
        int e = in >= 1 ? 8 : in <= 0 ? 0 : MAX(1, (int) lround(in * 8));

        /* No value: '?' while atimed ran but had not
         * measured yet, a dot when it was not running. */
        if (isnan(p->col[c]) && p->up[c])
                fputs(row == 1 ? "?" : " ", f);
        else if (isnan(p->col[c]))
                fputs(row == 1 ? (p->unicode ? "\u00b7" : ".") : " ", f);
        else if (row == 1 && e == 0)
                fputs(p->unicode ? "\u2581" : "_", f); /* measured zero: a flat line */
        else if (p->unicode)
                fputs(blocks[e], f);
        else
                fputc(ascii[e], f);
}

/* The bars, top row first, with the scale on the left, and the axis. Row
 * 'row' shows what is between (row-1)/height and row/height of max. */
static void plot_bars(FILE *f, const struct plot *p, size_t height) {
        for (size_t row = height; row > 0; row--) {
                fprintf(f, "%*s %s", (int) p->lw, row == height ? p->top : row == 1 ? "0" : "",
                        p->unicode ? (row == height || row == 1 ? "\u2524" : "\u2502") : "|");
                for (size_t c = 0; c < p->n; c++)
                        plot_cell(f, p, c, row, height);
                fputc('\n', f);
        }
        fprintf(f, "%*s %s", (int) p->lw, "", p->unicode ? "\u2514" : "+");
        for (size_t c = 0; c < p->n; c++)
                fputs(p->unicode ? "\u2500" : "-", f);
        fputc('\n', f);
}

/* Time labels at the start, the middle and the end, under the columns
 * when they fit, else "start .. end". */
static void plot_time_labels(FILE *f, const struct plot *p, time_t t0, time_t t1) {
        char l0[32], l1[32], l2[32], line[1024];
        size_t lw = p->lw, n = p->n, w = lw + 2 + n;
        time_t span, tm;

        /* Times from a reply may be anything: no overflow on the way. */
        if (__builtin_sub_overflow(t1, t0, &span)) {
                span = 0;
                tm = t0 / 2 + t1 / 2;
        } else
                tm = t0 + span / 2;
        time_label(l0, sizeof l0, t0, span);
        time_label(l1, sizeof l1, tm, span);
        time_label(l2, sizeof l2, t1, span);
        memset(line, ' ', sizeof line);
        line[MIN(w, sizeof line - 1)] = 0;
        if (w < sizeof line && strlen(l0) + strlen(l1) + strlen(l2) + 4 < n) {
                size_t mid = lw + 2 + n / 2 - strlen(l1) / 2;

                memcpy(line + lw + 2, l0, strlen(l0));
                memcpy(line + mid, l1, strlen(l1));
                memcpy(line + w - strlen(l2), l2, strlen(l2));
                fprintf(f, "%s\n", line);
        } else
                fprintf(f, "%*s %s .. %s\n", (int) lw, "", l0, l2);
}

/* A marker under every marked column; no line when none is. */
static void plot_marks(FILE *f, const struct plot *p) {
        bool any = false;

        for (size_t c = 0; c < p->n; c++)
                any = any || p->mark[c];
        if (!any)
                return;
        fprintf(f, "%*s  ", (int) p->lw, "");
        for (size_t c = 0; c < p->n; c++)
                fputs(p->mark[c] ? (p->unicode ? "\u25b2" : "^") : " ", f);
        fputc('\n', f);
}

void chart_plot(FILE *f, const struct series *s, const bool *marks, const bool *running, size_t width, size_t height,
                time_t t0, time_t t1, bool unicode) {
        _cleanup_(plot_done) struct plot p = { .unicode = unicode };

        if (plot_columns(s, marks, running, width, &p) < 0)
                return;
        plot_bars(f, &p, height);
        plot_time_labels(f, &p, t0, t1);
        if (marks)
                plot_marks(f, &p);
}
