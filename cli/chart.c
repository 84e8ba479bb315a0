/* chart.c: terminal charts (see chart.h). */
#include "chart.h"

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
        if (v >= 999500)
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

        localtime_r(&t, &tm);
        strftime(buf, len,
                 span < 600         ? "%H:%M:%S"
                 : span <= 86400    ? "%H:%M"
                 : span <= 14 * 86400 ? "%m-%d %H:%M"
                                    : "%Y-%m-%d",
                 &tm);
}

void chart_plot(FILE *f, const struct series *s, const bool *marks, const bool *running, size_t width, size_t height,
                time_t t0, time_t t1, bool unicode) {
        double *col = calloc(MAX(width, 1u), sizeof *col);
        bool *mark = calloc(MAX(width, 1u), sizeof *mark);
        _cleanup_free_ bool *up = calloc(MAX(width, 1u), sizeof *up);
        char top[16], l0[32], l1[32], l2[32];
        size_t n, lw;
        double max;

        if (!col || !mark || !up)
                goto finish;
        n = chart_columns(s, width, col);
        for (size_t c = 0; c < n; c++)
                for (size_t i = c * s->n / n; i < (c + 1) * s->n / n; i++) {
                        mark[c] = mark[c] || (marks && marks[i]);
                        up[c] = up[c] || (running && running[i]);
                }
        max = column_max(col, n);
        chart_format_count(top, sizeof top, max);
        lw = MAX(strlen(top), 1u);

        for (size_t row = height; row > 0; row--) {
                /* Row 'row' shows what is between (row-1)/height and row/height of max. */
                fprintf(f, "%*s %s", (int) lw, row == height ? top : row == 1 ? "0" : "",
                        unicode ? (row == height || row == 1 ? "\u2524" : "\u2502") : "|");
                for (size_t c = 0; c < n; c++) {
                        double level = isnan(col[c]) || max <= 0 ? 0 : col[c] / max * (double) height;
                        double in = level - (double) (row - 1);
                        int e = in >= 1 ? 8 : in <= 0 ? 0 : MAX(1, (int) lround(in * 8));

                        /* No value: '?' while atimed ran but had not
                         * measured yet, a dot when it was not running. */
                        if (isnan(col[c]) && up[c])
                                fputs(row == 1 ? "?" : " ", f);
                        else if (isnan(col[c]))
                                fputs(row == 1 ? (unicode ? "\u00b7" : ".") : " ", f);
                        else if (row == 1 && e == 0)
                                fputs(unicode ? "\u2581" : "_", f); /* measured zero: a flat line */
                        else if (unicode)
                                fputs(blocks[e], f);
                        else
                                fputc(ascii[e], f);
                }
                fputc('\n', f);
        }
        fprintf(f, "%*s %s", (int) lw, "", unicode ? "\u2514" : "+");
        for (size_t c = 0; c < n; c++)
                fputs(unicode ? "\u2500" : "-", f);
        fputc('\n', f);

        /* Time labels at the start, the middle and the end. */
        time_label(l0, sizeof l0, t0, t1 - t0);
        time_label(l1, sizeof l1, t0 + (t1 - t0) / 2, t1 - t0);
        time_label(l2, sizeof l2, t1, t1 - t0);
        {
                char line[1024];
                size_t w = lw + 2 + n;

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
        if (marks) {
                bool any = false;

                for (size_t c = 0; c < n; c++)
                        any = any || mark[c];
                if (any) {
                        fprintf(f, "%*s  ", (int) lw, "");
                        for (size_t c = 0; c < n; c++)
                                fputs(mark[c] ? (unicode ? "\u25b2" : "^") : " ", f);
                        fputc('\n', f);
                }
        }
finish:
        free(col);
        free(mark);
}
