/* render.h: atimectl's text for every reply of atimed's, written from the
 * parsed replies (common/report.h) alone: a command calls atimed, parses
 * the reply into a Report once (report_from_*()), and hands it here. No
 * JSON is read in this module. A new field of a reply is added to the
 * Report (report.h), read in report-parse.c, and shown here: a new status
 * column is a COL_ name below, its header in status_columns, and its cell
 * in status_add_row(); a new line of the advice goes in
 * print_recommendation().
 *
 * Contract: every function writes to the context's streams only, never
 * reads the environment (the caller puts the terminal's width, the locale's
 * charset and the options into the RenderContext), and escapes every string
 * from atimed (escape.h). Fields a reply lacks show as unknown ("-", "?");
 * nothing in a Report, however malformed the reply it came from, makes
 * them fail but memory (-ENOMEM). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report.h"

typedef struct RenderContext {
        FILE *out, *err;
        bool unicode;      /* Unicode blocks and symbols, else ASCII */
        bool legend;       /* headers and the lines under a table (--no-legend: false) */
        bool full;         /* never shorten a cell (--full) */
        size_t width;      /* the terminal's columns */
        const char *fstab; /* the fstab the drift notes compare with */
        const size_t *columns; /* status's, as status_parse_columns() gives them; NULL: the defaults */
        size_t n_columns;
        const char *target; /* probe: the mount point asked */
} RenderContext;

/* status's columns, as -o names them; documented in atimectl(8). */
enum { COL_TARGET, COL_FSTYPE, COL_DEVICE, COL_ATIME, COL_PROBE, COL_WRITES, COL_HOUR, COL_IO, _COL_MAX };
extern const char *const status_columns[_COL_MAX];
extern const size_t status_default_columns[6];

/* "-o TARGET,ATIME" or "-o +DEVICE" (the defaults and more), as findmnt:
 * the columns in ret (room for 2 * _COL_MAX), their number in ret_n.
 * -EINVAL (an unknown column named on stderr, with the valid ones),
 * -E2BIG, -ENOMEM. */
int status_parse_columns(const char *list, size_t *ret, size_t *ret_n);
/* Each command's text; 0 or -ENOMEM.
 * status: one row per mount of r with the context's columns, the legend
 * under it. */
int render_status(const RenderContext *c, const Report *r);
/* history: the chart of r->history, its policy changes and summary. */
int render_history(const RenderContext *c, const Report *r);
/* recommend: each mount's advice, the count of changes under it. */
int render_recommendations(const RenderContext *c, const Report *r);
/* probe: the verdict of r's one mount, asked of the context's target. */
int render_probe(const RenderContext *c, const Report *r);
/* reload: the file now in force (ok), or why the running one stays (on
 * the error stream). */
int render_reload(const RenderContext *c, const Report *r, bool ok);
/* A PolicyChange as one line after 'indent': "noatime since 2026-12-07
 * 09:10: 17.6k of the promised 18.0k atime updates/min saved (95%: ...)",
 * or why there is no figure yet. Nothing without one. */
void render_policy_change(FILE *f, const ReportChange *pc, const char *indent);
