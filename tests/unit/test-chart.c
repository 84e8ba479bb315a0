/* test-chart.c: atimectl's terminal output: the table fitted to a width
 * (shortened in the middle, columns chosen), sparklines on one scale, and
 * the history chart's symbols for "not running" and "not measured yet". */
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
        table_set_shrinkable(t, 0);

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
               "/srv/a-lo...s-not-fit  ext4   x\n"
               "/                      tmpfs  esc\\x1b[2J\n",
               "40 columns: the target shortened in the middle, the others kept");
        free(buf);

        table_set_width(t, 10, "\u2026");
        ok(table_set_display(t, (const size_t[]) { 2, 0 }, 2) == 0, "columns chosen and reordered");
        f = open_memstream(&buf, &len);
        table_print(t, f, true);
        is_str(drain(f, &buf),
               "NOTE        TARGET\n"
               "x           /srv/\u2026-fit\n"
               "esc\\x1b[2J  /\n",
               "never below 10 cells; UTF-8 ellipsis counts one cell");
        free(buf);
        ok(table_set_display(t, (const size_t[]) { 3 }, 1) < 0, "an unknown column is refused");
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

int main(void) {
        test_table();
        test_sparkline();
        test_plot();
        return tap_done();
}
