/* render.c: atimectl's text from the parsed replies (see render.h). */
#include "render.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chart.h"
#include "escape.h"
#include "fstab-drift.h"
#include "parse-util.h"
#include "protocol.h"
#include "strv.h"
#include "table.h"

const char *const status_columns[_COL_MAX] = {
        [COL_TARGET] = "TARGET",     [COL_FSTYPE] = "FSTYPE", [COL_DEVICE] = "DEVICE",       [COL_ATIME] = "ATIME",
        [COL_PROBE] = "PROBE",       [COL_WRITES] = "UPDATES/MIN", [COL_HOUR] = "LAST-HOUR", [COL_IO] = "DEV-WRITES",
};
const size_t status_default_columns[6] = { COL_TARGET, COL_FSTYPE, COL_ATIME, COL_PROBE, COL_WRITES, COL_HOUR };

int status_parse_columns(const char *list, size_t *ret, size_t *ret_n) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;

        if (*list == '+') {
                memcpy(ret, status_default_columns, sizeof status_default_columns);
                n = ELEMENTSOF(status_default_columns);
                list++;
        }
        if (strv_split(list, ",", &l) < 0)
                return -ENOMEM;
        STRV_FOREACH(name, l) {
                size_t c;

                for (c = 0; c < _COL_MAX; c++)
                        if (strcasecmp(*name, status_columns[c]) == 0)
                                break;
                if (c == _COL_MAX) {
                        fprintf(stderr, "atimectl: unknown column '%s'; the columns are:", *name);
                        for (size_t i = 0; i < _COL_MAX; i++)
                                fprintf(stderr, "%s%s", i ? "," : " ", status_columns[i]);
                        fprintf(stderr, ".\n");
                        return -EINVAL;
                }
                if (n >= 2 * _COL_MAX)
                        return -E2BIG;
                ret[n++] = c;
        }
        if (n == 0)
                return -EINVAL;
        *ret_n = n;
        return 0;
}

/* A duration of s seconds (at least one, at most a century: a reply's
 * nonsense stays text) as format_duration() writes it. */
static char *format_seconds(char *buf, size_t len, int64_t s) {
        return format_duration(buf, len, (uint64_t) MIN(MAX(s, (int64_t) 1), (int64_t) 100 * 366 * 86400) * USEC_PER_SEC);
}

/* Unix time t in local time as strftime() writes it with fmt; "?" where it
 * is no time. */
#define format_time(buf, len, fmt, t)                                                   \
        do {                                                                            \
                time_t _tt = (time_t) (t);                                              \
                struct tm _tm;                                                          \
                if (!localtime_r(&_tt, &_tm) || strftime((buf), (len), fmt, &_tm) == 0) \
                        snprintf((buf), (len), "?");                                    \
        } while (0)

static struct series series_of(const ReportSeries *s) {
        return (struct series) { .value = s->value, .present = s->present, .n = s->n };
}

/* ---------------------------------------------------------------- status */

/* "relatime,lazytime,ro", as mount(8) would write it. */
static void format_policy(const ReportMount *m, char *buf, size_t len) {
        snprintf(buf, len, "%s%s%s%s", m->atime ? m->atime : "?",
                 m->nodiratime && !streq_ptr(m->atime, ATIME_NOATIME_NAME) ? ",nodiratime" : "",
                 m->lazytime ? ",lazytime" : "", m->read_only ? ",ro" : "");
}

/* "walking 12% ~8m", "measuring ~40s": what a mount without a figure waits
 * for; brief: without the time left ("walking 12%", "measuring"). */
static void format_progress(const ReportProgress *p, bool brief, char *buf, size_t len) {
        char pct[16] = "", when[FORMAT_DURATION_MAX + 2] = "", d[FORMAT_DURATION_MAX];

        if (!p->have) {
                snprintf(buf, len, "-");
                return;
        }
        /* Mounts never sampled say why in words. */
        if (streq(p->stage, STAGE_FILE_MOUNT) || streq(p->stage, STAGE_OVERMOUNTED)) {
                snprintf(buf, len, "%s", streq(p->stage, STAGE_FILE_MOUNT) ? "file mount" : "over-mounted");
                return;
        }
        if (p->inodes > 0 && streq(p->stage, STAGE_WALKING))
                snprintf(pct, sizeof pct, " %.0f%%", fmin(99, 100 * (double) p->walked / (double) p->inodes));
        if (!brief && p->eta_s >= 0)
                snprintf(when, sizeof when, " ~%s", format_seconds(d, sizeof d, p->eta_s));
        snprintf(buf, len, "%s%s%s", p->stage, pct, when);
}

/* The mark after a figure: '*' where the kernel counted it, '!' where the
 * sample and the kernel's count disagree (the legend says so). */
static const char *activity_mark(const ReportActivity *a) {
        if (a->disagrees)
                return "!";
        return streq_ptr(a->source, "kernel_count") ? "*" : "";
}

/* While the first walk runs: " 12% ~4min", the share of the filesystem
 * the figure rests on so far and the time until it rests on all of it
 * (brief: the share alone). */
static void format_coverage(const ReportActivity *a, bool brief, char *buf, size_t len) {
        char d[FORMAT_DURATION_MAX + 2] = "";

        buf[0] = 0;
        if (a->coverage >= 1)
                return;
        if (!brief && a->ready_in_s >= 0) {
                d[0] = ' ';
                d[1] = '~';
                format_seconds(d + 2, sizeof d - 2, a->ready_in_s);
        }
        snprintf(buf, len, " %.0f%%%s", fmin(99, floor(100 * a->coverage)), d);
}

/* "3000 (2870-3130)", "0", "walking 12% ~8m" before the first interval,
 * "≥1200, rising 3% ~4m" for a first walk's figure whose upper bound is
 * the unwalked inodes' worst case; brief: the figure without its
 * interval, the progress without its time ("3000", "walking 12%",
 * "≥1200 3%"), for a table that must give way. */
static void format_activity(const ReportMount *m, bool brief, bool unicode, char *buf, size_t len) {
        const ReportActivity *a = &m->activity;
        char b1[16], b2[16], b3[16], cov[FORMAT_DURATION_MAX + 16];
        const char *mark = activity_mark(a);

        if (m->stalled) {
                snprintf(buf, len, "stalled");
                return;
        }
        if (!a->have) {
                format_progress(&m->progress, brief, buf, len);
                return;
        }
        format_coverage(a, brief, cov, sizeof cov);
        chart_format_count(b1, sizeof b1, a->updates_per_min);
        chart_format_count(b2, sizeof b2, a->updates_lo);
        chart_format_count(b3, sizeof b3, a->updates_hi);
        if (report_activity_lower_bound_only(a))
                /* "0 (0-1.49e9)" tells a person nothing: at least the
                 * lower bound, which rises as the walk goes on. */
                snprintf(buf, len, "%s%s%s%s%s", unicode ? "≥" : ">=", b2, mark, brief ? "" : ", rising", cov);
        else if (brief || streq(b2, b3)) /* nothing uncertain at this precision */
                snprintf(buf, len, "%s%s%s", b1, mark, cov);
        else
                snprintf(buf, len, "%s%s (%s-%s)%s", b1, mark, b2, b3, cov);
}

/* "ok", "MISMATCH: noatime", "unverified", "-" before the first probe;
 * "n/a (...)" where no probe is made. */
static void format_probe(const ReportMount *m, char *buf, size_t len) {
        const ReportProbe *p = &m->probe;
        const char *stage = m->progress.stage;

        if (!p->have)
                snprintf(buf, len, "-");
        else if (m->read_only)
                snprintf(buf, len, "n/a (ro)");
        else if (streq_ptr(stage, STAGE_FILE_MOUNT))
                snprintf(buf, len, "n/a (file)");
        else if (streq_ptr(stage, STAGE_OVERMOUNTED))
                snprintf(buf, len, "n/a (hidden)");
        else if (!p->verified || !p->effective)
                snprintf(buf, len, "unverified");
        else if (p->matches_table != 1)
                snprintf(buf, len, "MISMATCH: %s%s", p->effective, p->explanation ? " (+A)" : "");
        else
                snprintf(buf, len, "ok");
}

static void format_device(const ReportMount *m, char *name, size_t nlen, char *io, size_t iolen) {
        const ReportDevice *d = &m->device;
        char b1[16], b2[16];

        snprintf(name, nlen, "%s", d->name ? d->name : m->source ? m->source : "-");
        if (d->name && d->have_rate)
                snprintf(io, iolen, "%s/s %s KiB/s", chart_format_count(b1, sizeof b1, d->write_iops),
                         chart_format_count(b2, sizeof b2, d->write_kib_per_s));
        else
                snprintf(io, iolen, "-");
}

/* The sparkline cells of the last hour: 20 of 3 minutes, or 10 of 6 in a
 * terminal under 100 columns, where the mount points need the room. */
static size_t spark_cells(const RenderContext *c) {
        return !c->full && c->width < 100 ? 10 : 20;
}

static double history_peak(const RenderContext *c, const ReportMount *m) {
        struct series s = series_of(&m->history);

        return m->have_history ? chart_sparkline_peak(&s, spark_cells(c)) : 0;
}

/* The last hour on the common scale: '-' when there is no history yet. */
static void format_sparkline(const RenderContext *c, const ReportMount *m, double scale, char *buf, size_t len) {
        struct series s = series_of(&m->history);

        snprintf(buf, len, "-");
        if (m->history.n > 0)
                chart_sparkline(&s, spark_cells(c), scale > 0 ? scale : 1, c->unicode, buf, len);
}

/* What the legend under the status table counts. */
struct status_counts {
        unsigned strict, rel, noat, stalled;
        unsigned kernel, disagree; /* figures marked '*' and '!' */
        unsigned partial;          /* figures resting on part of a filesystem */
        unsigned lower_bound;      /* of those, figures shown as their lower bound */
        double interval; /* the longest measuring interval, seconds */
};

/* The table with the columns asked for, fitted to the terminal unless
 * --full. */
static int status_table(const RenderContext *c, const size_t *cols, size_t n_cols, Table **ret) {
        _cleanup_(table_freep) Table *t = table_new(_COL_MAX, status_columns);

        if (!t || table_set_display(t, cols, n_cols) < 0)
                return -ENOMEM;
        /* Too wide: what gives way first is what an operator misses least;
         * the mount points go last, and keep their last component. */
        if (table_add_fit(t, COL_WRITES, TABLE_FIT_SHORT) < 0 || table_add_fit(t, COL_DEVICE, TABLE_FIT_ELIDE) < 0 ||
            table_add_fit(t, COL_HOUR, TABLE_FIT_DROP) < 0 || table_add_fit(t, COL_TARGET, TABLE_FIT_ELIDE) < 0)
                return -ENOMEM;
        if (!c->full)
                table_set_width(t, c->width, c->unicode ? "\u2026" : "...");
        *ret = TAKE_PTR(t);
        return 0;
}

static int cmp_label(const void *a, const void *b, void *labels) {
        char **l = labels;

        return strcmp(l[*(const size_t *) a], l[*(const size_t *) b]);
}

/* Two or more labels that read the same (order[i..j)) add the mount ids
 * that findmnt shows, inside the over-mounted note if there is one. */
static int labels_tell_apart(const Report *r, char **l, const size_t *order, size_t i, size_t j) {
        for (size_t k = i; j - i > 1 && k < j; k++) {
                const ReportMount *m = &r->mounts[order[k]];
                char *s;

                /* From the mount, not the label: a target may itself end
                 * in "(over-mounted)", or be nothing else. */
                if (asprintf(&s, "%s (%smount id %d)", m->target ? m->target : "-",
                             m->reachable ? "" : "over-mounted, ", m->id) < 0)
                        return -ENOMEM;
                free(l[order[k]]);
                l[order[k]] = s;
        }
        return 0;
}

/* Each mount's TARGET cell: the target, and where it cannot be told from
 * another by that, what tells it apart. An over-mounted mount (its target
 * leads to another mount, see "reachable" in atimed(8)) says so; two rows
 * that would still read the same add the mount ids that findmnt shows. */
static int status_labels(const Report *r, char ***ret) {
        size_t n = r->n_mounts;
        _cleanup_strv_free_ char **l = calloc(n + 1, sizeof(char *));
        _cleanup_free_ size_t *order = calloc(n ? n : 1, sizeof *order);

        if (!l || !order)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const ReportMount *m = &r->mounts[i];

                if (asprintf(&l[i], "%s%s", m->target ? m->target : "-", m->reachable ? "" : " (over-mounted)") < 0) {
                        l[i] = NULL;
                        return -ENOMEM;
                }
                order[i] = i;
        }
        /* Equal labels next to each other. */
        if (n > 0)
                qsort_r(order, n, sizeof *order, cmp_label, l);
        for (size_t i = 0, j; i < n; i = j) {
                for (j = i; j < n && streq(l[order[j]], l[order[i]]);)
                        j++;
                if (labels_tell_apart(r, l, order, i, j) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* What one mount adds to the counts. */
static void status_count(const ReportMount *m, struct status_counts *n) {
        const ReportActivity *a = &m->activity;

        n->strict += streq_ptr(m->atime, ATIME_STRICT_NAME);
        n->rel += streq_ptr(m->atime, ATIME_RELATIME_NAME);
        n->noat += streq_ptr(m->atime, ATIME_NOATIME_NAME);
        n->stalled += m->stalled;
        n->interval = fmax(n->interval, a->interval_s);
        if (a->have) {
                n->kernel += streq(activity_mark(a), "*");
                n->disagree += streq(activity_mark(a), "!");
                n->partial += a->coverage < 1;
                n->lower_bound += report_activity_lower_bound_only(a);
        }
}

/* One mount's row. */
static int status_add_row(const RenderContext *c, Table *t, const ReportMount *m, const char *label, double scale) {
        char policy[96], probe[64], activity[64], brief[64], dev[64], io[64], spark[128];

        format_policy(m, policy, sizeof policy);
        format_probe(m, probe, sizeof probe);
        format_activity(m, false, c->unicode, activity, sizeof activity);
        format_activity(m, true, c->unicode, brief, sizeof brief);
        format_device(m, dev, sizeof dev, io, sizeof io);
        format_sparkline(c, m, scale, spark, sizeof spark);
        if (table_add_row(t, (const char *const[]) { label, m->fstype, dev, policy, probe, activity, spark, io }) < 0 ||
            table_set_short(t, COL_WRITES, brief) < 0)
                return -ENOMEM;
        return 0;
}

/* The lines that explain the marks and columns the table shows. */
static void status_legend_marks(const RenderContext *c, const struct status_counts *n, double scale, bool sparklines) {
        FILE *f = c->out;
        char b[16];

        if (n->interval > 0)
                fprintf(f, "UPDATES/MIN: atime updates the kernel made per minute, last %.0fs.\n", n->interval);
        if (n->kernel)
                fprintf(f, "*: counted by the kernel (the filesystem's transactions: it made nothing else).\n");
        if (n->disagree)
                fprintf(f, "!: the sample and the kernel's count of transactions disagree: the figure is in doubt.\n");
        if (n->partial)
                fprintf(f, "N%% ~T: the first walk has seen N%% of the filesystem so far; the interval covers the rest, "
                           "the\nfigure rests on all of it (for advice) in about T.\n");
        if (n->lower_bound)
                fprintf(f, "%sN, rising: at least N a minute; the part not walked yet may add any amount (the "
                           "interval's\ntop, in --json), and N rises as the walk finds what is read there.\n",
                        c->unicode ? "≥" : ">=");
        if (scale > 0 && sparklines)
                fprintf(f, "LAST-HOUR: one scale for all rows, full block = %s/min.\n",
                        chart_format_count(b, sizeof b, scale));
}

/* On btrfs: what atime un-shares from the snapshots, a line for a mount
 * that has a figure (atimed(8), BTRFS). */
static void btrfs_note(const RenderContext *c, const ReportMount *m) {
        const ReportBtrfs *b = &m->btrfs;
        char b1[24], b2[24];

        if (b->have && b->model_note)
                fprintf(c->out, "btrfs %s: %s.\n", escape_tmp(m->target), escape_tmp(b->model_note));
        if (b->have && b->unseen_reason)
                fprintf(c->out, "btrfs %s: %s.\n", escape_tmp(m->target), escape_tmp(b->unseen_reason));
        if (!b->have || !b->have_rate || (b->unshared_bytes_per_day <= 0 && !b->have_since))
                return;
        fprintf(c->out, "btrfs %s: atime un-shares %s/day of metadata from snapshots (%s, last interval)",
                escape_tmp(m->target), format_bytes(b1, sizeof b1, b->unshared_bytes_per_day),
                b->rate_source ? escape_tmp(b->rate_source) : "measured");
        if (b->have_since)
                fprintf(c->out, "; %s since the newest (%s)", format_bytes(b2, sizeof b2, b->since_bytes),
                        b->since_source ? escape_tmp(b->since_source) : "measured");
        fprintf(c->out, ".\n");
}

/* The summary under the table: the policies counted, what the columns
 * measure, the btrfs bytes, and the drifts between the live mounts and
 * fstab. */
static void status_legend(const RenderContext *c, const Report *r, const struct status_counts *n, double scale,
                          bool sparklines) {
        fprintf(c->out, "\n%zu mount%s: %u strictatime, %u relatime, %u noatime", r->n_mounts,
                r->n_mounts == 1 ? "" : "s", n->strict, n->rel, n->noat);
        if (n->stalled)
                fprintf(c->out, "; %u stalled (not answering)", n->stalled);
        fprintf(c->out, ".\n");
        status_legend_marks(c, n, scale, sparklines);
        /* Live changes that the next mount would undo, or the reverse. */
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportMount *m = &r->mounts[i];
                char note[PATH_MAX * 4];

                btrfs_note(c, m);
                if (fstab_drift(c->fstab, m->target, m->atime, m->lazytime, note, sizeof note) > 0)
                        fprintf(c->out, "Drift: %s.\n", escape_tmp(note));
        }
}

int render_status(const RenderContext *c, const Report *r) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_strv_free_ char **labels = NULL;
        struct status_counts counts = {};
        double scale = 0;

        if (status_table(c, c->columns ? c->columns : status_default_columns,
                         c->columns ? c->n_columns : ELEMENTSOF(status_default_columns), &t) < 0 ||
            status_labels(r, &labels) < 0)
                return -ENOMEM;
        /* One scale for every row's sparkline: the busiest mount's peak. */
        for (size_t i = 0; i < r->n_mounts; i++)
                scale = fmax(scale, history_peak(c, &r->mounts[i]));
        for (size_t i = 0; i < r->n_mounts; i++) {
                if (status_add_row(c, t, &r->mounts[i], labels[i], scale) < 0)
                        return -ENOMEM;
                status_count(&r->mounts[i], &counts);
        }
        table_print(t, c->out, c->legend);
        if (c->legend)
                status_legend(c, r, &counts, scale, table_column_printed(t, COL_HOUR));
        return 0;
}

/* ---------------------------------------------------------------- policy changes */

/* "1 min", "10 s": a bucket's length. */
static void format_res(char *buf, size_t len, int64_t s) {
        if (s >= 3600 && s % 3600 == 0)
                snprintf(buf, len, "%" PRId64 " h", s / 3600);
        else if (s >= 60 && s % 60 == 0)
                snprintf(buf, len, "%" PRId64 " min", s / 60);
        else
                snprintf(buf, len, "%" PRId64 " s", s);
}

/* The measured saving, its interval and what it was compared over. */
static void print_saved(FILE *f, const ReportChange *pc, const char *res) {
        char a[16], b[16], c[16];
        double lo = pc->have_saved_ci ? pc->saved_lo : 0, hi = pc->have_saved_ci ? pc->saved_hi : 0;
        double promised = pc->have_promise ? pc->promised_per_min : 0;

        if (pc->advised && pc->have_promise && streq_ptr(pc->advised, pc->current))
                fprintf(f, "%s of the promised %s atime updates/min saved", chart_format_count(a, sizeof a, pc->saved_per_min),
                        chart_format_count(b, sizeof b, promised));
        else
                fprintf(f, "%s atime updates/min saved", chart_format_count(a, sizeof a, pc->saved_per_min));
        fprintf(f, " (95%%: %s to %s; ", chart_format_count(b, sizeof b, lo), chart_format_count(c, sizeof c, hi));
        if (streq_ptr(pc->comparison, "same_hours"))
                fprintf(f, "the same hours of the day, %.0f points of %s", pc->points_after, res);
        else
                fprintf(f, "%.0f points of %s either side: less than a day of history before the change for the same "
                           "hours", pc->points_after, res);
        fprintf(f, ")");
        if (!pc->advised)
                fprintf(f, "; no saving was promised: the advice was to keep");
        else if (!streq_ptr(pc->advised, pc->current))
                fprintf(f, "; the advice was %s, promising %s", escape_tmp(pc->advised),
                        chart_format_count(a, sizeof a, promised));
        fprintf(f, "\n");
}

void render_policy_change(FILE *f, const ReportChange *pc, const char *indent) {
        char when[32], r[32];

        if (!pc->have || !pc->state)
                return;
        format_time(when, sizeof when, "%Y-%m-%d %H:%M", pc->at);
        format_res(r, sizeof r, pc->resolution_s);
        fprintf(f, "%s%s since %s (was %s): ", indent, escape_tmp(pc->current), when, escape_tmp(pc->previous));
        if (streq(pc->state, VERDICT_TOO_EARLY_NAME))
                fprintf(f, "too early to tell (%.0f of %d points of %s after the change)\n", pc->points_after,
                        VERDICT_MIN_POINTS, r);
        else if (streq(pc->state, VERDICT_TOO_LITTLE_BEFORE_NAME))
                fprintf(f, "too little history before the change to compare (%.0f of %d points of %s)\n",
                        pc->points_before, VERDICT_MIN_POINTS, r);
        else
                print_saved(f, pc, r);
}

/* ---------------------------------------------------------------- history */

/* What the summary line under the chart says. */
struct history_summary {
        double sum, peak, last, dsum;
        size_t have, dhave, gaps, unmeasured;
};

/* Marks point i when the policy changed within it or since the last one
 * that named it (*prev), and says so on a line of its own. */
static void history_mark_policy(FILE *f, const ReportPoint *pt, const char **prev, bool *mark) {
        const char *at = pt->atime;
        char when[32];

        *mark = pt->policy_changed || (at && *prev && !streq(at, *prev));
        if (*mark && at) {
                format_time(when, sizeof when, "%m-%d %H:%M", pt->t);
                if (*prev && !streq(at, *prev))
                        fprintf(f, "  %s  policy %s -> %s\n", when, escape_tmp(*prev), escape_tmp(at));
                else
                        fprintf(f, "  %s  policy changed within the point\n", when);
        }
        if (at)
                *prev = at;
}

/* Point i's share of the summary, and whether atimed was running then. */
static void history_count(const ReportHistory *h, size_t i, bool *running, struct history_summary *s) {
        if (h->updates.present[i]) {
                s->sum += h->updates.value[i];
                s->peak = fmax(s->peak, h->updates.value[i]);
                s->last = h->updates.value[i];
                s->have++;
        }
        if (h->iops.present[i]) {
                s->dsum += h->iops.value[i];
                s->dhave++;
        }
        *running = h->points[i].samples > 0;
        s->gaps += !*running;
        s->unmeasured += *running && !h->updates.present[i];
}

/* The lines under the chart: the figures, then the gaps and the points not
 * measured yet, each with the time they cover (points of res seconds). */
static void history_print_summary(FILE *f, const struct history_summary *s, int64_t res, bool unicode) {
        char a[16], b[16], c[16], d[FORMAT_DURATION_MAX];

        if (s->have > 0)
                fprintf(f, "mean %s/min, peak %s/min, last %s/min", chart_format_count(a, sizeof a, s->sum / (double) s->have),
                        chart_format_count(b, sizeof b, s->peak), chart_format_count(c, sizeof c, s->last));
        else
                fprintf(f, "no atime updates measured in this period");
        if (s->dhave > 0)
                fprintf(f, "; device writes %s IO/s on average", chart_format_count(a, sizeof a, s->dsum / (double) s->dhave));
        fprintf(f, ".\n");
        if (s->gaps > 0) {
                format_duration(d, sizeof d, (uint64_t) s->gaps * (uint64_t) res * USEC_PER_SEC);
                fprintf(f, "%s %zu gap%s (atimed not running): %s in all.\n", unicode ? "\u00b7" : ".", s->gaps,
                        s->gaps == 1 ? "" : "s", d);
        }
        if (s->unmeasured > 0) {
                format_duration(d, sizeof d, (uint64_t) s->unmeasured * (uint64_t) res * USEC_PER_SEC);
                fprintf(f, "? not measured yet (atimed running, no interval finished): %s in all.\n", d);
        }
}

/* On a btrfs mount snapshots share: the metadata atime un-shared from
 * them, per day, point by point (a sparkline), and its summary. Nothing
 * where no point carries it. */
static void history_print_unshared(const RenderContext *c, const ReportHistory *h) {
        const ReportSeries *u = &h->unshared;
        struct series s = series_of(u);
        char line[1024], a[24], b[24], l[24];
        double sum = 0, peak = 0, last = 0;
        size_t have = 0, modelled = 0;

        for (size_t i = 0; i < u->n; i++)
                if (u->present[i]) {
                        sum += u->value[i];
                        peak = fmax(peak, u->value[i]);
                        last = u->value[i];
                        have++;
                        modelled += h->points[i].unshared_modelled;
                }
        if (have == 0)
                return;
        chart_sparkline(&s, MIN(MAX(c->width, (size_t) 32) - 12, sizeof line / 4), 0, c->unicode, line, sizeof line);
        fprintf(c->out, "btrfs metadata un-shared from snapshots by atime, per day:\n  %s\n", line);
        fprintf(c->out, "mean %s/day, peak %s/day, last %s/day; %zu point%s with a figure, %zu modelled.\n",
                format_bytes(a, sizeof a, sum / (double) have), format_bytes(b, sizeof b, peak),
                format_bytes(l, sizeof l, last), have, have == 1 ? "" : "s", modelled);
}

/* The chart of a non-empty history, its policy changes and summary. */
static int history_print(const RenderContext *c, const ReportHistory *h) {
        _cleanup_free_ bool *marks = calloc(h->n_points, sizeof(bool)), *running = calloc(h->n_points, sizeof(bool));
        struct history_summary s = { .last = -1 };
        struct series act = series_of(&h->updates);
        const char *prev = NULL;

        if (!marks || !running)
                return -ENOMEM;
        /* Policy changes: within a point, or from one point to the next. */
        for (size_t i = 0; i < h->n_points; i++) {
                history_mark_policy(c->out, &h->points[i], &prev, &marks[i]);
                history_count(h, i, &running[i], &s);
        }
        chart_plot(c->out, &act, marks, running, MAX(c->width, (size_t) 32) - 12, 6, (time_t) h->since,
                   (time_t) h->until, c->unicode);
        history_print_summary(c->out, &s, h->resolution_s, c->unicode);
        history_print_unshared(c, h);
        render_policy_change(c->out, &h->policy_change, "Policy change: ");
        return 0;
}

int render_history(const RenderContext *c, const Report *r) {
        const ReportHistory *h = &r->history;
        char d[FORMAT_DURATION_MAX];

        format_duration(d, sizeof d, (uint64_t) h->resolution_s * USEC_PER_SEC);
        fprintf(c->out, "%s: atime updates per minute (points of %s)\n", escape_tmp(h->target), d);
        if (h->n_points == 0) {
                fprintf(c->out, "No history in that period yet%s%s.\n", h->reason ? ": " : "", h->reason ? escape_tmp(h->reason) : "");
                return 0;
        }
        return history_print(c, h);
}

/* ---------------------------------------------------------------- recommend */

/* What the advice rests on: "2.5 hours measured", "by rule", "not measured
 * yet"... */
static void format_basis(const ReportAdvice *a, char *buf, size_t len) {
        const char *basis = a->basis;
        double observed = a->observed_s;

        if (basis && !streq(basis, "measurement") && !streq(basis, "none"))
                /* Advice that needs no measurement says what it rests on. */
                snprintf(buf, len, "%s", streq(basis, "consumers") ? "from the atime readers found"
                                         : streq(basis, "configuration") ? "by configuration"
                                                                         : "by rule");
        else if (basis && streq(basis, "none"))
                snprintf(buf, len, "not measured yet");
        else if (observed >= 86400)
                snprintf(buf, len, "%.1f days measured", observed / 86400);
        else if (observed >= 3600)
                snprintf(buf, len, "%.1f hours measured", observed / 3600);
        else if (observed >= 60)
                snprintf(buf, len, "%.0f minutes measured", observed / 60);
        else
                snprintf(buf, len, "%.0f seconds measured", observed);
}

/* The reasons, the readers of atime, the saving a change brings. */
static void print_evidence(FILE *f, const ReportAdvice *a) {
        for (size_t i = 0; i < a->n_reasons; i++)
                fprintf(f, "    - %s\n", escape_tmp(a->reasons[i]));
        for (size_t i = 0; i < a->n_consumers; i++)
                fprintf(f, "    - reads atime (%s): %s [%s]\n", escape_tmp(a->consumers[i].need),
                        escape_tmp(a->consumers[i].why), escape_tmp(a->consumers[i].source));
        if (a->change && (a->saving_updates_per_min > 0 || a->saving_cpu_us_per_s > 0))
                fprintf(f, "    saves about %.0f atime updates/min, %.1f us/s of CPU, %.1f KiB/s written\n",
                        a->saving_updates_per_min, a->saving_cpu_us_per_s, a->saving_kib_per_s);
}

static void print_recommendation(const RenderContext *c, const ReportMount *m) {
        const ReportAdvice *a = &m->advice;
        char basis[40], note[PATH_MAX * 4];

        format_basis(a, basis, sizeof basis);
        /* Every string from atimed may hold a name anyone chose: escaped
         * (escape.h) so it cannot drive the terminal. */
        if (a->change)
                fprintf(c->out, "%s (%s): %s -> %s", escape_tmp(m->target), escape_tmp(m->fstype),
                        escape_tmp(a->current), escape_tmp(a->recommended));
        else
                fprintf(c->out, "%s (%s): keep %s", escape_tmp(m->target), escape_tmp(m->fstype), escape_tmp(a->current));
        fprintf(c->out, "  [confidence %s, %s]\n", escape_tmp(a->confidence), basis);
        print_evidence(c->out, a);
        render_policy_change(c->out, &a->policy_change, "    - changed: ");
        if (fstab_drift(c->fstab, m->target, a->current_atime, a->current_lazytime, note, sizeof note) > 0)
                fprintf(c->out, "    - drift: %s\n", escape_tmp(note));
}

int render_recommendations(const RenderContext *c, const Report *r) {
        unsigned changes = 0;

        for (size_t i = 0; i < r->n_mounts; i++) {
                print_recommendation(c, &r->mounts[i]);
                changes += r->mounts[i].advice.change;
        }
        if (!c->legend)
                return 0;
        if (changes)
                fprintf(c->out, "\n%u change%s advised. Apply now: atimectl remount MOUNT. Make it last: atimectl "
                                "fstab --write.\n",
                        changes, changes == 1 ? "" : "s");
        else
                fprintf(c->out, "\nNothing to change.\n");
        return 0;
}

/* ---------------------------------------------------------------- probe, reload */

int render_probe(const RenderContext *c, const Report *r) {
        const ReportProbe *p = r->n_mounts > 0 ? &r->mounts[0].probe : NULL;
        char when[64];

        if (!p)
                return -EBADMSG;
        format_time(when, sizeof when, "%Y-%m-%d %H:%M:%S", p->at);
        if (p->verified && p->effective) {
                fprintf(c->out, "%s: %s in force (verified %s)\n", escape_tmp(c->target), escape_tmp(p->effective), when);
                if (p->matches_table != 1 && p->explanation)
                        fprintf(c->out, "  The mount table says otherwise: %s.\n", escape_tmp(p->explanation));
                else if (p->matches_table != 1)
                        fprintf(c->out, "  The mount table says otherwise: the filesystem or the kernel overrides it.\n");
        } else
                fprintf(c->out, "%s: not verified (%s): %s\n", escape_tmp(r->mounts[0].target), when,
                        p->reason ? escape_tmp(p->reason) : "unknown reason");
        return 0;
}

int render_reload(const RenderContext *c, const Report *r, bool ok) {
        if (ok) {
                fprintf(c->out, "Configuration reloaded from %s.\n",
                        r->config ? escape_tmp(r->config) : "the built-in defaults");
                return 0;
        }
        fprintf(c->err, "atimectl: the configuration was not reloaded; the running one stays in force:\n");
        for (size_t i = 0; i < r->n_errors; i++)
                fprintf(c->err, "  %s\n", escape_tmp(r->errors[i]));
        return 0;
}
