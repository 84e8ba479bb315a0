/* chart.h: small terminal charts for atimectl: a one-line sparkline and a
 * bar chart with axis labels. Values may be missing (gaps). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/* A series: value[i] is meaningful where present[i]. */
struct series {
        const double *value;
        const bool *present;
        size_t n;
};

/* Whether to draw with Unicode blocks (a UTF-8 locale) or ASCII. */
bool chart_unicode(void);

/* Resamples s into 'width' columns (mean of each column's values; a column
 * with none is a gap). Returns the column count; NaN marks gaps. */
size_t chart_columns(const struct series *s, size_t width, double *out);

/* One line, 'width' cells at most: a full block is 'scale' (0: the series'
 * own maximum), so that rows drawn with one scale compare. */
void chart_sparkline(const struct series *s, size_t width, double scale, bool unicode, char *buf, size_t len);
/* The highest cell chart_sparkline() would draw for s: a common scale. */
double chart_sparkline_peak(const struct series *s, size_t width);

/* A bar chart 'height' rows high, with the maximum and 0 labelled on the
 * left, time labels under it ('t0' to 't1'), and a row of markers under the
 * columns where 'marks' is set (policy changes). A column without a value
 * is drawn '?' where 'running' is set for one of its points (atimed ran but
 * had not measured yet), else as a dot (atimed not running). */
void chart_plot(FILE *f, const struct series *s, const bool *marks, const bool *running, size_t width, size_t height,
                time_t t0, time_t t1, bool unicode);

/* 1234 -> "1234", 18200 -> "18.2k"; 1e15 -> "1e+15", "?" for NaN or
 * infinity: at most 9 bytes whatever v is. */
char *chart_format_count(char *buf, size_t len, double v);
