/* test-kcount: the kernel's count of a filesystem's transactions against
 * the sample's figures, on plain inputs: taken as the figure where the
 * filesystem did nothing but atime updates (shared among its writers),
 * a cap where it did other things too (exact counts only), the top of the
 * interval where the sample explains too little, and left alone where no
 * count applies (lazytime, a journal count over too few commits); and a
 * journal's edges: the moments its count holds every handle made before,
 * found from readings ten times a second, and its count between two edges
 * standing over any interval. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "../tap.h"
#include "kcount.h"

static bool near(double a, double b) {
        return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}
#define NEAR(a, b) near(a, b)

/* A writer whose sample says per_min in [lo, hi]. */
static struct activity writer(double per_min, double lo, double hi) {
        return (struct activity) {
                .have = true,
                .updates = { .per_min = per_min, .lo = lo, .hi = hi },
                .writebacks_per_min = per_min,
                .source = SOURCE_SAMPLE,
        };
}

/* An exact (xfs) count of 'n' transactions over 60 s. */
static KcountInput xfs(double n, bool pure) {
        return (KcountInput) {
                .kind = FS_COUNTER_XFS, .lo = n, .hi = n, .seconds = 60, .pure = pure, .prev_lo = -1,
        };
}

static void test_pure(void) {
        struct activity one = writer(900, 700, 1100);
        KcountInput in = xfs(1000, true);
        KcountVerdict v = kcount_apply(&in, &one, 1);

        ok(v.used, "an exact count over a pure interval is used");
        ok(one.source == SOURCE_KERNEL, "and is the figure's source");
        ok(NEAR(one.updates.per_min, 1000), "the figure is the count (%g)", one.updates.per_min);
        ok(NEAR(one.updates.hi, 1020) && NEAR(one.updates.lo, 700), "within the count's read margin, the lower bound no higher "
           "than the sample's (%g-%g)", one.updates.lo, one.updates.hi);
        ok(one.counter == FS_COUNTER_XFS && NEAR(one.counter_lo, 980) && NEAR(one.counter_hi, 1020),
           "the counter's own range is kept (%g-%g)", one.counter_lo, one.counter_hi);
        ok(NEAR(v.lo, 980) && !v.unexplained && !v.jumped, "a pure interval asks for no walk");

        /* Two writers (two mounts of one filesystem): the count shared in
         * proportion to the sample's figures. */
        struct activity two[2] = { writer(300, 200, 400), writer(100, 50, 150) };
        in = xfs(2000, true);
        kcount_apply(&in, two, 2);
        ok(NEAR(two[0].updates.per_min, 1500) && NEAR(two[1].updates.per_min, 500),
           "shared 3:1 as the sample saw it (%g, %g)", two[0].updates.per_min, two[1].updates.per_min);
        ok(NEAR(two[0].writebacks_per_min, 300), "write-backs are never raised by the count (%g)",
           two[0].writebacks_per_min);

        /* A writer whose sample saw nothing: the count is its figure. */
        struct activity quiet = writer(0, 0, 50);
        in = xfs(600, true);
        kcount_apply(&in, &quiet, 1);
        ok(NEAR(quiet.updates.per_min, 600) && quiet.source == SOURCE_KERNEL, "a lone writer takes the whole count");
        ok(quiet.disagrees, "and the sample's interval, far under it, disagrees");

        /* A count that began while the interval was pure: the figure is
         * right, but the sample lacks the files turned hot, and the next
         * impure interval's figure is the sample's. */
        quiet = writer(0, 0, 50);
        in = xfs(600, true);
        in.prev_lo = 10;
        v = kcount_apply(&in, &quiet, 1);
        ok(v.jumped, "a jump in a pure interval asks for a walk at once");
        quiet = writer(0, 0, 50);
        in.prev_lo = 500;
        v = kcount_apply(&in, &quiet, 1);
        ok(!v.jumped && !v.unexplained, "a pure count that stays high asks for none (the figure stands)");
}

static void test_bound(void) {
        struct activity a = writer(5000, 4000, 6000);
        KcountInput in = xfs(3000, false);
        KcountVerdict v = kcount_apply(&in, &a, 1);

        ok(v.used && a.source == SOURCE_SAMPLE_BOUNDED, "other writes: the sample's figure, bounded");
        ok(NEAR(a.updates.hi, 3060) && NEAR(a.updates.per_min, 3060), "capped at the count's top (%g, hi %g)",
           a.updates.per_min, a.updates.hi);
        ok(a.disagrees, "a sample above the count disagrees");

        /* A figure under the count: unchanged, the count is a bound. */
        struct activity b = writer(100, 80, 120);
        in = xfs(3000, false);
        v = kcount_apply(&in, &b, 1);
        ok(NEAR(b.updates.per_min, 100) && NEAR(b.updates.lo, 80), "a figure under the bound keeps its value");
        ok(NEAR(b.updates.hi, 3060), "its interval widened to the count: hot files outside the sample (%g)", b.updates.hi);
        ok(v.unexplained, "and a walk soon is asked for");
        ok(!v.jumped, "but not at once, with no interval before to compare");

        in.prev_lo = 500;
        b = writer(100, 80, 120);
        v = kcount_apply(&in, &b, 1);
        ok(v.jumped, "more than twice the interval before's count: a walk at once");
        in.prev_lo = 2000;
        b = writer(100, 80, 120);
        v = kcount_apply(&in, &b, 1);
        ok(!v.jumped && v.unexplained, "a count that stays high is unexplained, not a jump");
}

/* The transactions per update the sample sees, learnt where an exact
 * count stood and applied where it cannot: xfs readers of one file on two
 * CPUs in one tick each write it, and no atime shows the second. */
static void test_ratio(void) {
        struct activity a = writer(1000, 900, 1100);
        KcountInput in = xfs(1200, true);
        KcountVerdict v = kcount_apply(&in, &a, 1);

        ok(v.learnt && NEAR(v.ratio, 1.2), "a pure interval teaches the ratio (%g)", v.ratio);
        in = (KcountInput) { .kind = FS_COUNTER_XFS, .lo = 1300, .hi = 1300, .seconds = 60, .prev_lo = 1200, .ratio = 1.2 };
        v = kcount_apply(&in, &(struct activity) { 0 }, 0);
        ok(!v.used && NEAR(v.ratio, 1.2) && !v.learnt, "with no writer nothing is used, and the ratio kept");
        a = writer(1000, 900, 1100);
        v = kcount_apply(&in, &a, 1);
        ok(!v.learnt && NEAR(v.ratio, 1.2), "an impure interval keeps the ratio");
        ok(a.source == SOURCE_SAMPLE_BOUNDED && NEAR(a.updates.per_min, 1200) && NEAR(a.updates.hi, 1320) &&
                   NEAR(a.updates.lo, 900),
           "and applies it to the sample's figure, its bottom unraised (%g, %g-%g)", a.updates.per_min, a.updates.lo,
           a.updates.hi);
        ok(!v.unexplained && !v.jumped, "a count the scaled figure explains asks for no walk");
        in.lo = in.hi = 1000;
        a = writer(1000, 900, 1100);
        kcount_apply(&in, &a, 1);
        ok(NEAR(a.updates.per_min, 1020) && NEAR(a.updates.hi, 1020), "still capped by the count (%g)", a.updates.per_min);

        in = xfs(1600, true);
        in.ratio = 1.2;
        a = writer(1000, 900, 1100);
        v = kcount_apply(&in, &a, 1);
        ok(NEAR(v.ratio, 1.4), "a new ratio moves the old one halfway (%g)", v.ratio);

        /* Not learnt: a count the sample cannot account for (files it does
         * not hold), a figure too small to say, a journal's count. */
        in = xfs(30000, true);
        a = writer(1000, 900, 1100);
        v = kcount_apply(&in, &a, 1);
        ok(!v.learnt && v.ratio == 0, "not from a count far beyond the sample's interval");
        in = xfs(500, true);
        a = writer(300, 200, 400);
        v = kcount_apply(&in, &a, 1);
        ok(!v.learnt, "nor from a figure under %g a minute", KCOUNT_RATIO_MIN_PER_MIN);
        in = xfs(100000, true);
        a = writer(10000, 5000, 90000);
        v = kcount_apply(&in, &a, 1);
        ok(v.learnt && NEAR(v.ratio, KCOUNT_RATIO_MAX), "bounded at %g (%g)", KCOUNT_RATIO_MAX, v.ratio);
        in = (KcountInput) { .kind = FS_COUNTER_JBD2, .lo = 1200, .hi = 1200, .seconds = 60, .commit_s = 5,
                             .pure = true, .prev_lo = -1 };
        a = writer(1000, 900, 1100);
        v = kcount_apply(&in, &a, 1);
        ok(v.used && !v.learnt, "nor from a journal's count");
        in.pure = false;
        in.ratio = 2;
        a = writer(1000, 900, 1100);
        kcount_apply(&in, &a, 1);
        ok(NEAR(a.updates.per_min, 1000), "nor applied to one (%g)", a.updates.per_min);
}

/* The ratio's age, as the tracker keeps it between intervals (what the
 * verdict returns, given back as the next input). */
static KcountVerdict next_interval(KcountInput in, const KcountVerdict *before) {
        struct activity a = writer(1000, 900, 1100);

        in.ratio = before->ratio;
        in.ratio_age = before->ratio_age;
        return kcount_apply(&in, &a, 1);
}

/* The ratio is the workload's: kept through KCOUNT_RATIO_INTERVALS
 * intervals that do not renew it, forgotten at the next; a pure one
 * renews it, and ages it afresh. */
static void test_ratio_forgotten(void) {
        KcountInput impure = xfs(1300, false), none = xfs(1300, true);
        KcountVerdict v = next_interval(xfs(1200, true), &(KcountVerdict) { 0 });
        unsigned k;

        none.kind = FS_COUNTER_NONE;
        ok(v.learnt && v.ratio_age == 0 && NEAR(v.ratio, 1.2), "learnt: age 0 (%u)", v.ratio_age);
        for (k = 1; k <= KCOUNT_RATIO_INTERVALS; k++) {
                v = next_interval(k % 3 ? impure : none, &v);
                if (v.learnt || v.ratio_age != k || !NEAR(v.ratio, 1.2))
                        break;
        }
        ok(k > KCOUNT_RATIO_INTERVALS, "kept through %d intervals that do not learn it, counted or not (%g, age %u)",
           KCOUNT_RATIO_INTERVALS, v.ratio, v.ratio_age);
        v = next_interval(impure, &v);
        ok(v.ratio == 0 && v.ratio_age == KCOUNT_RATIO_INTERVALS + 1, "forgotten at the next (%g, age %u)", v.ratio,
           v.ratio_age);
        v = next_interval(impure, &v);
        ok(v.ratio == 0 && !v.learnt, "and stays forgotten (%g)", v.ratio);

        v = next_interval(xfs(1200, true), &(KcountVerdict) { 0 });
        for (k = 0; k < KCOUNT_RATIO_INTERVALS; k++)
                v = next_interval(impure, &v);
        v = next_interval(xfs(1600, true), &v);
        ok(v.learnt && v.ratio_age == 0 && NEAR(v.ratio, 1.4), "a pure interval resets the age (%u) and moves it (%g)",
           v.ratio_age, v.ratio);
        for (k = 0; k < KCOUNT_RATIO_INTERVALS; k++)
                v = next_interval(impure, &v);
        ok(NEAR(v.ratio, 1.4) && v.ratio_age == KCOUNT_RATIO_INTERVALS, "so it is kept %d intervals more (%g)",
           KCOUNT_RATIO_INTERVALS, v.ratio);
        v = next_interval(impure, &v);
        ok(v.ratio == 0, "and forgotten after them");
        v = next_interval(xfs(1200, true), &v);
        ok(v.learnt && v.ratio_age == 0 && NEAR(v.ratio, 1.2), "then learnt afresh, not halfway from the old (%g)",
           v.ratio);
}

static void test_jbd2(void) {
        struct activity a = writer(500, 400, 600);
        KcountInput in = {
                .kind = FS_COUNTER_JBD2, .lo = 1000, .hi = 1009, .seconds = 20, .commit_s = 5,
                .pure = true, .prev_lo = -1,
        };
        KcountVerdict v = kcount_apply(&in, &a, 1);

        ok(!v.used && v.lo < 0, "a journal count over four commits is not used");
        ok(a.source == SOURCE_SAMPLE && NEAR(a.updates.per_min, 500) && a.counter == FS_COUNTER_NONE,
           "and the figure is the sample's, untouched");

        in.seconds = 30;
        v = kcount_apply(&in, &a, 1);
        ok(v.used && a.source == SOURCE_KERNEL, "over six commits it is");
        ok(NEAR(a.updates.per_min, 2009), "the figure is the handles per minute (%g)", a.updates.per_min);
        ok(NEAR(a.counter_lo, 1000.0 * 30 / 35 * 2) && NEAR(a.counter_hi, 1009.0 * 30 / 25 * 2),
           "its range a commit period either way (%g-%g)", a.counter_lo, a.counter_hi);

        struct activity b = writer(5000, 4500, 5500);
        in.pure = false;
        kcount_apply(&in, &b, 1);
        ok(NEAR(b.updates.per_min, 5000) && b.source == SOURCE_SAMPLE, "a journal count bounds nothing: handles of a "
           "burst at the end are counted in the next interval");
}

/* A journal's reading: 'commits' transactions, 'handles' handles in all
 * (a whole number per transaction, for simple bounds). */
static struct fs_count journal(uint64_t commits, uint64_t handles) {
        return (struct fs_count) { .valid = true, .lo = handles, .hi = handles, .commits = commits };
}

#define MS 1000ULL
#define SEC 1000000ULL

static void test_edges(void) {
        KcountEdges e = {};
        KcountEdge edge;
        struct fs_count r;
        uint64_t t;

        /* Polls every 100 ms from 100 s on: no commit over the first 3 s. */
        for (t = 100 * SEC; t <= 103 * SEC; t += 100 * MS) {
                r = journal(10, 5000);
                kcount_poll(&e, &r, t, t + 7);
        }
        ok(!kcount_edge(&e, 5, &edge), "3 s with no commit: a transaction may be open, no edge");
        /* A commit between 103.0 and 103.1: the reading after it is one. */
        r = journal(11, 6250);
        kcount_poll(&e, &r, 103 * SEC + 100 * MS, 103 * SEC + 100 * MS + 7);
        ok(kcount_edge(&e, 5, &edge) && edge.count.lo == 6250 && edge.at == 103 * SEC + 100 * MS &&
           edge.real == edge.at + 7, "the reading just after a commit is an edge, at its own time");
        for (t = 103 * SEC + 200 * MS; t <= 106 * SEC; t += 100 * MS) {
                r = journal(11, 6250);
                kcount_poll(&e, &r, t, t + 7);
        }
        ok(kcount_edge(&e, 5, &edge) && edge.at == 103 * SEC + 100 * MS, "and stays the edge while no commit follows");
        /* 6 s and more with no commit: nothing was open 6 s before. */
        for (; t <= 110 * SEC; t += 100 * MS) {
                r = journal(11, 6250);
                kcount_poll(&e, &r, t, t + 7);
        }
        t -= 100 * MS;
        bool found = kcount_edge(&e, 5, &edge);
        /* No handle from 103.1 s to 104.0 s: the edge half way. */
        ok(found && edge.at == 103 * SEC + 550 * MS && edge.real == edge.at + 7 && edge.count.lo == 6250,
           "a commit period and its slack with no commit: the edge moves on, inside the stretch with no "
           "handle (%.2f s)", (double) edge.at / (double) SEC);
        found = kcount_edge(&e, 10, &edge);
        ok(found && edge.at == 103 * SEC + 100 * MS, "for a journal of commit=10, it stays just after the commit");
        for (; t <= 115 * SEC; t += 100 * MS) {
                r = journal(11, 6250);
                kcount_poll(&e, &r, t, t + 7);
        }
        t -= 100 * MS;
        found = kcount_edge(&e, 5, &edge);
        ok(found && edge.at == t - 7 * SEC, "a second inside it at most (%.2f s)", (double) edge.at / (double) SEC);

        /* A commit seen only after a gap: the handles since it are not
         * known, and the edge stays the last one seen promptly. */
        r = journal(12, 7000);
        kcount_poll(&e, &r, t + 2 * SEC, t + 2 * SEC);
        found = kcount_edge(&e, 5, &edge);
        ok(found && edge.at == 103 * SEC + 100 * MS && edge.count.lo == 6250 && edge.lag == 100 * MS,
           "a commit seen 2 s after the reading before is no edge: the one before stands");

        /* A reading that fails forgets them all; the count going back (a new
         * mount) is no commit. */
        r = (struct fs_count) {};
        kcount_poll(&e, &r, t + 2100 * MS, 0);
        ok(!e.last.count.valid && !kcount_edge(&e, 5, &edge), "a failed reading: no edge");
        r = journal(40, 90000);
        kcount_poll(&e, &r, t + 2200 * MS, 0);
        r = journal(3, 100);
        kcount_poll(&e, &r, t + 2300 * MS, 0);
        ok(!kcount_edge(&e, 5, &edge), "a count that went back is no edge, nor any of the count before");
}

/* Reads in bursts, 1,250 every 4 s (the first at 0.5 s), on a journal of
 * commit=5: a transaction opens with a burst and commits 5 s later. The
 * count between two edges is the reads between them, whatever the phase;
 * read at fixed times (the old way), one interval gets a burst more or
 * fewer. */
static void test_bursts(void) {
        KcountEdges e = {};
        uint64_t commits = 0, handles = 0, pending = 0, open_at = 0, made = 0;
        uint64_t made_at_edge[3] = {}, count_at_edge[3] = {}, edge_at[3] = {};
        int n_edges = 0;

        for (uint64_t t = 0; t <= 95 * SEC && n_edges < 3; t += 10 * MS) {
                if (t % (4 * SEC) == 500 * MS) {
                        if (pending == 0)
                                open_at = t;
                        pending += 1250;
                        made += 1250;
                }
                if (pending > 0 && t >= open_at + 5 * SEC) {
                        commits++;
                        handles += pending;
                        pending = 0;
                }
                if (t % (100 * MS) == 0) {
                        struct fs_count r = journal(commits, handles);
                        KcountEdge edge;

                        kcount_poll(&e, &r, t, t);
                        /* A sweep every 30 s, at 29.5, 59.5, 89.5 s. */
                        if (t % (30 * SEC) == 29 * SEC + 500 * MS && kcount_edge(&e, 5, &edge)) {
                                made_at_edge[n_edges] = 0;
                                /* The reads made before the edge: every burst up to it. */
                                for (uint64_t b = 500 * MS; b < edge.at; b += 4 * SEC)
                                        made_at_edge[n_edges] += 1250;
                                count_at_edge[n_edges] = edge.count.lo;
                                edge_at[n_edges++] = edge.at;
                        }
                }
        }
        ok(n_edges == 3, "each sweep found an edge (%d)", n_edges);
        for (int i = 0; i < n_edges; i++)
                ok(count_at_edge[i] == made_at_edge[i], "sweep %d: the count at its edge (%.1f s) is every read made "
                   "before it (%llu, %llu)", i + 1, (double) edge_at[i] / (double) SEC,
                   (unsigned long long) count_at_edge[i], (unsigned long long) made_at_edge[i]);

        /* The count between two edges stands over a short interval, exact. */
        struct activity a = writer(20000, 15000, 25000);
        KcountInput in = {
                .kind = FS_COUNTER_JBD2, .lo = 2500, .hi = 2501, .seconds = 8, .commit_s = 5,
                .pure = true, .prev_lo = -1, .edges = true,
        };
        KcountVerdict v = kcount_apply(&in, &a, 1);
        ok(v.used && a.source == SOURCE_KERNEL && NEAR(a.updates.per_min, 2500.5 * 60 / 8),
           "between two edges 8 s apart, the count is the figure (%g)", a.updates.per_min);
        ok(NEAR(a.counter_lo, 2500 * 0.98 * 60 / 8) && NEAR(a.counter_hi, 2501 * 1.02 * 60 / 8),
           "its range a read margin, not a commit period (%g-%g)", a.counter_lo, a.counter_hi);
        in.edge_lag = 0.8;
        a = writer(20000, 15000, 25000);
        kcount_apply(&in, &a, 1);
        ok(NEAR(a.counter_lo, 2500 * 0.98 * 8 / 8.8 * 60 / 8) && NEAR(a.counter_hi, 2501 * 1.02 * 8 / 7.2 * 60 / 8),
           "and the lags of its readings after their commits (0.8 s: %g-%g)", a.counter_lo, a.counter_hi);
}

static void test_not_applied(void) {
        struct activity a = writer(500, 400, 600), before = a;
        KcountInput in = xfs(100, true);
        KcountVerdict v;

        in.lazytime = true;
        v = kcount_apply(&in, &a, 1);
        ok(!v.used && NEAR(a.updates.per_min, before.updates.per_min) && a.source == before.source,
           "lazytime: no atime update is a transaction; the count says nothing");
        in = xfs(100, true);
        in.kind = FS_COUNTER_NONE;
        v = kcount_apply(&in, &a, 1);
        ok(!v.used && !v.unexplained && !v.jumped && v.lo < 0, "no count: nothing used, nothing asked");
        in = xfs(100, true);
        v = kcount_apply(&in, NULL, 0);
        ok(!v.used, "no writer: nothing to apply it to");
}

int main(void) {
        test_pure();
        test_bound();
        test_ratio();
        test_ratio_forgotten();
        test_jbd2();
        test_not_applied();
        test_edges();
        test_bursts();
        return tap_done();
}
