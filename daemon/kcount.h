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

#include "activity.h"
#include "fscounter.h"

/* The journal's count stands over this many commit periods or more (an
 * interval of 30 s at ext4's default commit=5 is one, even when the
 * thread that reads it comes a little early). */
#define JBD2_MIN_COMMITS 5.5

typedef struct KcountInput {
        FsCounterKind kind;  /* FS_COUNTER_NONE: no count this interval */
        double lo, hi;       /* the filesystem's transactions over the interval (fscounter_delta()) */
        double seconds;      /* the interval's length */
        double commit_s;     /* jbd2: the journal's commit period */
        bool lazytime;       /* atime updates are no transactions until written back */
        bool pure;           /* nothing but atime updates, as far as atimed can tell */
        double prev_lo;      /* the interval before's lower count per minute; < 0: none */
} KcountInput;

typedef struct KcountVerdict {
        bool used;        /* the count was read against the figures */
        double lo;        /* its lower bound per minute (the next interval's prev_lo); -1 when not used */
        bool unexplained; /* half again what the sample's interval allows: worth a walk soon */
        bool jumped;      /* far above the sample and twice the interval before's: walk at once */
} KcountVerdict;

/* Applies the count to the figures of the filesystem's n writers (acts):
 * sets their counter fields and source, takes the count as their figure
 * where the interval was pure, bounds them by it otherwise; returns what
 * the tracker keeps. Where no count applies (none read, lazytime, a
 * journal count over too short an interval, no writer) the figures are
 * left as they are and 'used' is false. */
KcountVerdict kcount_apply(const KcountInput *in, struct activity *acts, size_t n);
