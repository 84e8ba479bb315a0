/* test-chart.c: atimectl's terminal output: the table fitted to a width
 * (shortened in the middle, columns chosen), sparklines on one scale, and
 * the history chart's symbols for "not running" and "not measured yet". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "table.h"
#include "../tap.h"

/* What f printed, NUL-terminated (f is closed). */
static char *drain(FILE *f, char **buf) {
        fclose(f);
        return *buf;
}

static void test_table(void) {
        static const char *const headers[] = { "TARGET", "TYPE", "NOTE" };
        _cleanup_(table_freep) Table *t = table_new(3, headers);
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        ok(t, "table_new");
        if (!t)
                return;
        ok(table_add_row(t, (const char *const[]) { "/srv/a-long-mount-point/that-does-not-fit", "ext4", "x" }) == 0,
           "a row");
        ok(table_add_row(t, (const char *const[]) { "/", "tmpfs", "esc\x1b[2J" }) == 0, "a row with an escape");
        ok(table_add_fit(t, 0, TABLE_FIT_ELIDE) == 0, "the target may be shortened");
        ok(table_add_fit(t, 3, TABLE_FIT_DROP) < 0, "a step for an unknown column is refused");

        f = open_memstream(&buf, &len);
        table_print(t, f, true);
        is_str(drain(f, &buf),
               "TARGET                                     TYPE   NOTE\n"
               "/srv/a-long-mount-point/that-does-not-fit  ext4   x\n"
               "/                                          tmpfs  esc\\x1b[2J\n",
               "no width: nothing shortened, control bytes escaped");
        free(buf);

        table_set_width(t, 40, "...");
        f = open_memstream(&buf, &len);
        table_print(t, f, false);
        is_str(drain(f, &buf),
               ".../that-does-not-fit  ext4   x\n"
               "/                      tmpfs  esc\\x1b[2J\n",
               "40 columns: the target shortened, its last component whole, the others kept");
        free(buf);

        table_set_width(t, 10, "\u2026");
        ok(table_set_display(t, (const size_t[]) { 2, 0 }, 2) == 0, "columns chosen and reordered");
        f = open_memstream(&buf, &len);
        table_print(t, f, true);
        is_str(drain(f, &buf),
               "NOTE        TARGET\n"
               "x           \u2026s-not-fit\n"
               "esc\\x1b[2J  /\n",
               "never below 10 cells; a last component too long keeps its end; UTF-8 ellipsis counts one cell");
        free(buf);
        ok(table_set_display(t, (const size_t[]) { 3 }, 1) < 0, "an unknown column is refused");
}

/* What t prints at width w, without the header. */
static char *print_at(Table *t, size_t w, char **buf) {
        size_t len = 0;
        FILE *f = open_memstream(buf, &len);

        table_set_width(t, w, "\u2026");
        table_print(t, f, false);
        return drain(f, buf);
}

/* The order columns give way in, short forms, and rows that stay apart. */
static void test_table_fit(void) {
        static const char *const headers[] = { "TARGET", "STATE", "SPARK" };
        _cleanup_(table_freep) Table *t = table_new(3, headers);
        char *buf = NULL;

        ok(t, "table_new");
        if (!t)
                return;
        ok(table_add_row(t, (const char *const[]) { "/run/host/os-release", "measuring ~1min 3s", "abcdefghij" }) == 0 &&
                   table_set_short(t, 1, "measuring") == 0 &&
                   table_add_row(t, (const char *const[]) { "/run/host/incoming", "0", "abcdefghij" }) == 0 &&
                   table_add_row(t, (const char *const[]) { "/srv/long-common-prefix-of-many/alpha/data", "0", "-" }) == 0 &&
                   table_add_row(t, (const char *const[]) { "/srv/long-common-prefix-of-many/beta/data", "0", "-" }) == 0,
           "rows, one with a short form");
        ok(table_add_fit(t, 1, TABLE_FIT_SHORT) == 0 && table_add_fit(t, 2, TABLE_FIT_DROP) == 0 &&
                   table_add_fit(t, 0, TABLE_FIT_ELIDE) == 0,
           "steps: the short form, then drop SPARK, then shorten TARGET");
        is_str(print_at(t, 80, &buf),
               "/run/host/os-release                        measuring ~1min 3s  abcdefghij\n"
               "/run/host/incoming                          0                   abcdefghij\n"
               "/srv/long-common-prefix-of-many/alpha/data  0                   -\n"
               "/srv/long-common-prefix-of-many/beta/data   0                   -\n",
               "wide enough: nothing gives way");
        free(buf);
        ok(table_column_printed(t, 2), "SPARK printed");
        is_str(print_at(t, 66, &buf),
               "/run/host/os-release                        measuring  abcdefghij\n"
               "/run/host/incoming                          0          abcdefghij\n"
               "/srv/long-common-prefix-of-many/alpha/data  0          -\n"
               "/srv/long-common-prefix-of-many/beta/data   0          -\n",
               "first the short form");
        free(buf);
        is_str(print_at(t, 53, &buf),
               "/run/host/os-release                        measuring\n"
               "/run/host/incoming                          0\n"
               "/srv/long-common-prefix-of-many/alpha/data  0\n"
               "/srv/long-common-prefix-of-many/beta/data   0\n",
               "then a column dropped, before the target gives way");
        free(buf);
        ok(!table_column_printed(t, 2), "and SPARK said not printed");
        is_str(print_at(t, 50, &buf),
               "/run/host/os-release                     measuring\n"
               "/run/host/incoming                       0\n"
               "/srv/long-common-prefix-of-\u2026/alpha/data  0\n"
               "/srv/long-common-prefix-of-m\u2026/beta/data  0\n",
               "then the target: two that end alike keep the component that differs");
        free(buf);
        is_str(print_at(t, 33, &buf),
               "/run/host/os-release    measuring\n"
               "/run/host/incoming      0\n"
               "/srv/long-\u2026/alpha/data  0\n"
               "/srv/long-c\u2026/beta/data  0\n",
               "narrower: the start gives way, not the ends");
        free(buf);
        is_str(print_at(t, 21, &buf),
               "\u2026s-release  measuring\n"
               "\u2026/incoming  0\n"
               "/s\u2026ha/data  0\n"
               "/s\u2026ta/data  0\n",
               "at 10 cells: the ends, and still every row its own");
        free(buf);
}

/* Two rows that differ only far from their ends: the column widens rather
 * than print them the same. */
static void test_table_apart(void) {
        static const char *const headers[] = { "TARGET", "X" };
        _cleanup_(table_freep) Table *t = table_new(2, headers);
        char *buf = NULL;

        ok(t && table_add_row(t, (const char *const[]) { "/mnt/one/the-same-long-end", "x" }) == 0 &&
                   table_add_row(t, (const char *const[]) { "/mnt/two/the-same-long-end", "x" }) == 0 &&
                   table_add_fit(t, 0, TABLE_FIT_ELIDE) == 0,
           "two rows alike but in the middle");
        if (!t)
                return;
        is_str(print_at(t, 13, &buf),
               "\u2026e/the-same-long-end  x\n"
               "\u2026o/the-same-long-end  x\n",
               "wider than asked, but told apart");
        free(buf);
}

static void test_sparkline(void) {
        double v[] = { 0, 10, 20, 40 };
        bool p[] = { true, true, true, true };
        struct series s = { .value = v, .present = p, .n = 4 };
        char buf[64];

        chart_sparkline(&s, 4, 0, false, buf, sizeof buf);
        ok(strchr(buf, '@') != NULL, "own scale: the peak is a full block (%s)", buf);
        chart_sparkline(&s, 4, 80, false, buf, sizeof buf);
        ok(strchr(buf, '@') == NULL && buf[0] == '_', "a common scale twice the peak: no full block, zero flat (%s)",
           buf);
        ok(chart_sparkline_peak(&s, 2) == 30, "the peak of the columns drawn (means of their points)");
}

static void test_plot(void) {
        double v[] = { 0, 0, 0, 0, 0, 0, 5, 5, 5, 5 };
        bool p[] = { false, false, false, false, false, false, true, true, true, true };
        bool running[] = { false, false, false, true, true, true, true, true, true, true };
        struct series s = { .value = v, .present = p, .n = 10 };
        char *buf = NULL, *last = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        chart_plot(f, &s, NULL, running, 10, 2, 0, 600, false);
        drain(f, &buf);
        /* The baseline row: the one labelled 0. */
        for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
                if (strncmp(l, "  0 |", 5) == 0)
                        last = l;
        is_str(last, "  0 |...\?\?\?@@@@", "not running: dots; running, not measured yet: '?'; values: blocks");
        free(buf);
}

/* Counts past any measure (a reply's 1e308, a sum of them that is inf):
 * their order of magnitude or '?', never the first 15 digits of 303. */
static void test_format_extremes(void) {
        char b[16];

        is_str(chart_format_count(b, sizeof b, 18200), "18.2k", "an ordinary count");
        is_str(chart_format_count(b, sizeof b, 1e308), "1e+308", "1e308");
        is_str(chart_format_count(b, sizeof b, -1.7e308), "-1.7e+308", "-1.7e308");
        is_str(chart_format_count(b, sizeof b, 999.9e9), "999900.0M", "just below the cut");
        is_str(chart_format_count(b, sizeof b, INFINITY), "?", "infinity");
        is_str(chart_format_count(b, sizeof b, NAN), "?", "NaN");
}

int main(void) {
        test_format_extremes();
        test_table();
        test_table_fit();
        test_table_apart();
        test_sparkline();
        test_plot();
        return tap_done();
}
