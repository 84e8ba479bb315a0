/* kcount.h: what the kernel's count of a filesystem's transactions
 * (fscounter.h) says about the sample's figures for an interval. Pure: it
 * reads nothing and keeps nothing; the tracker gives it the count, the
 * interval and the sample's figures, and keeps what it says.
 *
 * The count is a bound on the sum of the figures of the filesystem's
 * writers always (exact counters: xfs), the figure itself where the
 * filesystem did nothing but atime updates, and where it wrote other things
 * too and the sample accounts for less than the count, the top of their
 * interval: the rest may be atime updates of files the sample does not
 * hold. Under lazytime an atime update is no transaction until written
 * back: the count bounds nothing there. See atimed(8), KERNEL COUNTS. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "activity.h"
#include "fscounter.h"

/* The journal's count read at a sweep, not at an edge (below), stands
 * over this many commit periods or more (an interval of 30 s at ext4's
 * default commit=5 is one, even when the thread that reads it comes a
 * little early). */
#define JBD2_MIN_COMMITS 5.5

/* ext4's journal counts a handle only when its transaction commits, a
 * commit period after the transaction opened with its first handle. So a
 * reading holds every handle made before it, exactly, at two kinds of
 * moment only (an edge): just after a commit (what is made since goes to
 * the next transaction), and at any moment followed by more than a commit
 * period, and a late commit's slack, with no commit (a transaction open
 * then would have committed). Between two edges the count is the handles
 * made, whatever their timing: reads in bursts as much as steady ones,
 * and over an interval of any length. The tracker reads the count about
 * ten times a second in the seconds before each sweep (kcount_poll()) and
 * ends the count's interval at the latest edge (kcount_edge()). Pure. */
#define KCOUNT_POLL_USEC 100000ULL
/* A reading further than this after the one before is no edge of a commit
 * between them: the handles made since the commit, which the edge puts
 * before it, may be many. (A daemon at Nice=10 on a host with no idle CPU
 * reads late; what a reading's lag may put on the wrong side widens the
 * count's interval: kcount_apply().) */
#define KCOUNT_EDGE_LAG_USEC 1000000ULL
/* How late a commit may come after its period: kjournald2 on a busy host. */
#define KCOUNT_COMMIT_SLACK_USEC 1000000ULL
/* How far inside a stretch with no handle an edge found there is put. */
#define KCOUNT_EDGE_BACK_USEC 1000000ULL

typedef struct KcountEdge {
        struct fs_count count; /* invalid: no edge */
        uint64_t at, real;     /* its CLOCK_MONOTONIC and CLOCK_REALTIME usec */
        uint64_t lag;          /* usec since the reading before, where a commit came between; 0: none */
} KcountEdge;

typedef struct KcountEdges {
        KcountEdge last;   /* the last reading */
        KcountEdge since;  /* the first reading since the last commit seen */
        KcountEdge prompt; /* the latest reading within KCOUNT_EDGE_LAG_USEC of a commit */
} KcountEdges;

/* Takes a reading (at, real: when it was read); an invalid one forgets
 * every reading before it. */
void kcount_poll(KcountEdges *e, const struct fs_count *r, uint64_t at, uint64_t real);
/* The latest edge the readings so far show for a journal of commit_s
 * seconds: false where there is none (no commit seen just after it, and no
 * stretch long enough without one). */
bool kcount_edge(const KcountEdges *e, double commit_s, KcountEdge *ret);

typedef struct KcountInput {
        FsCounterKind kind;  /* FS_COUNTER_NONE: no count this interval */
        double lo, hi;       /* the filesystem's transactions over the interval (fscounter_delta()) */
        double seconds;      /* the interval's length */
        double commit_s;     /* jbd2: the journal's commit period */
        bool lazytime;       /* atime updates are no transactions until written back */
        bool pure;           /* nothing but atime updates, as far as atimed can tell */
        double prev_lo;      /* the interval before's lower count per minute; < 0: none */
        bool edges;          /* jbd2: both readings were edges (kcount_edge()); 'seconds' is
                              * the time between them */
        double edge_lag;     /* and the seconds of their readings' lags (KcountEdge.lag) */
        double ratio;        /* transactions per update the sample sees, learnt where the count
                              * stood (KcountVerdict.ratio); 0: none */
        unsigned ratio_age;  /* and the intervals since it was last learnt (KcountVerdict.ratio_age) */
} KcountInput;

typedef struct KcountVerdict {
        bool used;        /* the count was read against the figures */
        double lo;        /* its lower bound per minute (the next interval's prev_lo); -1 when not used */
        bool unexplained; /* half again what the sample's interval allows: worth a walk soon */
        bool jumped;      /* far above the sample and twice the interval before's: walk at once */
        double ratio;     /* the ratio to keep: the input's, or learnt anew where 'learnt' */
        bool learnt;      /* the interval was pure and its count exact: 'ratio' is from it */
        unsigned ratio_age; /* the intervals since 'ratio' was last learnt, this one counted: 0 where
                             * 'learnt'; past KCOUNT_RATIO_INTERVALS 'ratio' is 0 (forgotten) */
} KcountVerdict;

/* The ratio of an exact count to the sample's figure, learnt over pure
 * intervals and applied to the sample's figure where the count cannot
 * stand: on xfs, readers of one file on several CPUs in one tick each
 * write it, transactions no atime shows. Learnt only from a figure of
 * this many updates a minute or more, within these bounds. */
#define KCOUNT_RATIO_MIN_PER_MIN 600.0
#define KCOUNT_RATIO_MIN 0.5
#define KCOUNT_RATIO_MAX 4.0
/* Intervals a ratio outlives the last pure one it was learnt in: kept
 * through this many intervals that do not learn it (impure, or no count
 * read), forgotten at the next. */
#define KCOUNT_RATIO_INTERVALS 10

/* Applies the count to the figures of the filesystem's n writers (acts):
 * sets their counter fields and source, takes the count as their figure
 * where the interval was pure, bounds them by it otherwise (their figures
 * first scaled by in->ratio where an exact count has taught one); returns
 * what the tracker keeps: the ratio learnt, moved halfway or kept, aged by
 * the interval and forgotten once too old, whatever else applies. Where no count applies (none read, lazytime, a
 * journal count over too short an interval, no writer) the figures are
 * left as they are and 'used' is false. A journal's count between two
 * edges is exact to within its transactions, over any interval. */
KcountVerdict kcount_apply(const KcountInput *in, struct activity *acts, size_t n);
