/* advisor.c: the advice rules (see advisor.h). */
#include "advisor.h"

#include <assert.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "string-table.h"

static const char *const advice_confidence_table[_CONFIDENCE_MAX] = {
        [CONFIDENCE_LOW] = "low", [CONFIDENCE_MEDIUM] = "medium", [CONFIDENCE_HIGH] = "high",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(advice_confidence, AdviceConfidence);

static const char *const advice_basis_table[_BASIS_MAX] = {
        [BASIS_MEASUREMENT] = "measurement", [BASIS_CONSUMERS] = "consumers", [BASIS_RULE] = "rule",
        [BASIS_CONFIGURATION] = "configuration", [BASIS_NONE] = "none",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(advice_basis, AdviceBasis);

/* Measured by bench/atime-cost.sh (BENCHMARKS.md, section 1) on this
 * machine kind: open + read 1 KiB + close with strictatime minus the same
 * through a noatime bind mount of the same filesystem, per file, warm
 * cache: the CPU of an update that dirties its inode (usec); what the
 * device wrote per inode dirtied in a commit (KiB); the same difference with
 * lazytime on the superblock (lazy_usec); and, from the hot-file case (20
 * files read once per tick, updates counted by the kernel's tracepoint), an
 * update of an inode already dirty (again_usec; on ext4 the median of the
 * runs on a quiet host, hot-tick and streaming readers alike, BENCHMARKS.md
 * 1c: 1.9, measured under load, priced warm find 1.45x high). btrfs ignores lazytime for
 * atime (it dirties the inode in a transaction all the same): its lazy_usec
 * is its usec; its updates were not counted, so again_usec is usec. ext2/ext3
 * and the rest are not measured and take ext4's figures. btrfs's last
 * column is the metadata an inode updated since the newest snapshot
 * un-shares from it: 537 bytes, 16 KiB nodes, files of 8 KiB, measured by
 * `make bench BENCH=btrfs-snapshots` and btrfs.sh (BENCHMARKS.md, section
 * 10: 535-538 bytes a file); the field reports about 2 KB (btrfs-progs
 * #377), so it is used with a wide interval until the filesystem's own
 * measured intervals replace it. The column after it is a directory's:
 * 1,300 bytes, the middle of the 1,255-1,354 bytes a directory measured by
 * btrfs.sh's directory case (BENCHMARKS.md, section 10: 1,500 small
 * directories listed by find, three runs): a directory's inode un-shares
 * its entries' index items with it. */
#define BTRFS_UNSHARE_BYTES 537.0
#define BTRFS_UNSHARE_DIR_BYTES 1300.0
static const struct atime_cost builtin_costs[] = {
        { "ext4", 3.0, 0.5, 0.73, 1.5 },  { "ext3", 3.0, 0.5, 0.73, 1.5 },    { "ext2", 3.0, 0.5, 0.73, 1.5 },
        { "xfs", 3.2, 0.28, 0.49, 1.7 },  { "btrfs", 4.9, 4.8, 4.9, 4.9, BTRFS_UNSHARE_BYTES, BTRFS_UNSHARE_DIR_BYTES },    { "f2fs", 3.0, 0.5, 0.73, 1.5 },
        { "tmpfs", 0.42, 0, 0.42, 0.26 }, { "ramfs", 0.42, 0, 0.42, 0.26 },  { "overlay", 3.0, 0.5, 0.73, 1.5 },
};
static const struct atime_cost generic_cost = { "*", 3.0, 0.5, 0.73, 1.5 };

const struct atime_cost *atime_cost_for(const char *fstype, const struct atime_cost *overrides, size_t n_overrides) {
        assert(fstype && (overrides || n_overrides == 0));
        for (size_t i = 0; i < n_overrides; i++)
                if (fnmatch(overrides[i].fstype, fstype, 0) == 0)
                        return &overrides[i];
        for (size_t i = 0; i < ELEMENTSOF(builtin_costs); i++)
                if (streq(builtin_costs[i].fstype, fstype))
                        return &builtin_costs[i];
        return &generic_cost;
}

/* The first override that gives unshare bytes, else the built-in entry. */
static const struct atime_cost *unshare_entry(const char *fstype, const struct atime_cost *overrides, size_t n_overrides) {
        assert(fstype && (overrides || n_overrides == 0));
        for (size_t i = 0; i < n_overrides; i++)
                if (overrides[i].unshare_bytes > 0 && fnmatch(overrides[i].fstype, fstype, 0) == 0)
                        return &overrides[i];
        for (size_t i = 0; i < ELEMENTSOF(builtin_costs); i++)
                if (streq(builtin_costs[i].fstype, fstype))
                        return &builtin_costs[i];
        return NULL;
}

double atime_cost_unshare_bytes(const char *fstype, const struct atime_cost *overrides, size_t n_overrides) {
        const struct atime_cost *c = unshare_entry(fstype, overrides, n_overrides);

        return c ? c->unshare_bytes : 0;
}

double atime_cost_unshare_dir_bytes(const char *fstype, const struct atime_cost *overrides, size_t n_overrides) {
        const struct atime_cost *c = unshare_entry(fstype, overrides, n_overrides);

        return c ? c->unshare_dir_bytes : 0;
}

/* What an entry that gives only usec takes for the other CPU costs: the
 * generic entry's proportions. */
static double derived_lazy_usec(double usec) {
        return usec * generic_cost.lazy_usec / generic_cost.usec;
}

static double derived_again_usec(double usec) {
        return usec * generic_cost.again_usec / generic_cost.usec;
}

/* What an entry that gives only a file's unshare bytes takes for a
 * directory's: the built-in btrfs entry's proportion. */
static double derived_unshare_dir_bytes(double bytes) {
        return bytes * BTRFS_UNSHARE_DIR_BYTES / BTRFS_UNSHARE_BYTES;
}

double advisor_dir_bytes_share(double dir_share, double file_bytes, double dir_bytes) {
        double d, f;

        if (!(dir_share > 0))
                return 0;
        if (!(dir_share < 1))
                return 1;
        if (!(file_bytes > 0) || !(dir_bytes > 0) || !isfinite(file_bytes) || !isfinite(dir_bytes))
                return dir_share;
        d = dir_share * dir_bytes;
        f = (1 - dir_share) * file_bytes;
        return d / (d + f);
}

/* The directories' share of the bytes on the mount 'in' describes, at
 * the prices of its cost table entry 'c'. */
static double dirs_bytes_share(const struct advisor_input *in, const struct atime_cost *c) {
        return advisor_dir_bytes_share(in->dir_share, c ? c->unshare_bytes : 0, c ? c->unshare_dir_bytes : 0);
}

int atime_cost_parse(const char *s, struct atime_cost *c, char *buf, size_t buflen) {
        char *f[7] = {}, *save = NULL, *end;
        double v[6];
        size_t n = 0;

        assert(s && c && buf);
        if (strlen(s) >= buflen)
                return -EINVAL;
        strcpy(buf, s);
        /* A field past the seventh is refused, not dropped. */
        for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
                if (n == ELEMENTSOF(f))
                        return -EINVAL;
                f[n++] = tok;
        }
        if (n < 3)
                return -EINVAL;
        for (size_t i = 1; i < n; i++) {
                v[i - 1] = strtod(f[i], &end);
                if (*end || end == f[i] || !(v[i - 1] >= 0) || v[i - 1] > 1e6)
                        return -EINVAL;
        }
        *c = (struct atime_cost) {
                .fstype = f[0],
                .usec = v[0],
                .kib = v[1],
                .lazy_usec = n >= 4 ? v[2] : derived_lazy_usec(v[0]),
                .again_usec = n >= 5 ? v[3] : derived_again_usec(v[0]),
                .unshare_bytes = n >= 6 ? v[4] : 0,
                .unshare_dir_bytes = n == 7 ? v[5] : n == 6 ? derived_unshare_dir_bytes(v[4]) : 0,
        };
        /* A directory's bytes without a file's: nothing to derive from. */
        if (c->unshare_dir_bytes > 0 && !(c->unshare_bytes > 0))
                return -EINVAL;
        return 0;
}

/* The shortest "%g" that strtod() reads back as v exactly. */
static char *format_number(char *buf, size_t len, double v) {
        for (int prec = 1; prec <= 17; prec++) {
                snprintf(buf, len, "%.*g", prec, v);
                if (strtod(buf, NULL) == v)
                        break;
        }
        return buf;
}

char *atime_cost_format(const struct atime_cost *c, char *buf, size_t len) {
        char u[32], k[32], l[32], a[32], b[32], d[32];
        /* The optional fields only if they differ from what they default to. */
        bool dir = c->unshare_bytes > 0 && c->unshare_dir_bytes != derived_unshare_dir_bytes(c->unshare_bytes);
        bool unshare = c->unshare_bytes > 0;
        bool again = unshare || c->again_usec != derived_again_usec(c->usec);
        bool lazy = again || c->lazy_usec != derived_lazy_usec(c->usec);

        assert(c->fstype);
        snprintf(buf, len, "%s:%s:%s%s%s%s%s%s%s%s%s", c->fstype, format_number(u, sizeof u, c->usec),
                 format_number(k, sizeof k, c->kib), lazy ? ":" : "", lazy ? format_number(l, sizeof l, c->lazy_usec) : "",
                 again ? ":" : "", again ? format_number(a, sizeof a, c->again_usec) : "", unshare ? ":" : "",
                 unshare ? format_number(b, sizeof b, c->unshare_bytes) : "", dir ? ":" : "",
                 dir ? format_number(d, sizeof d, c->unshare_dir_bytes) : "");
        return buf;
}

/* lazytime only pays where atime updates would otherwise go to a journal. */
bool fstype_journals(const char *fstype) {
        static const char *const j[] = { "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "ocfs2", "gfs2" };

        for (size_t i = 0; i < ELEMENTSOF(j); i++)
                if (streq(j[i], fstype))
                        return true;
        return false;
}

static void reason(struct advice *a, const char *fmt, ...) _printf_(2, 3);
static void reason(struct advice *a, const char *fmt, ...) {
        va_list ap;

        if (a->n_reasons >= ADVICE_REASONS_MAX)
                return;
        va_start(ap, fmt);
        vsnprintf(a->reasons[a->n_reasons++], ADVICE_REASON_LEN, fmt, ap);
        va_end(ap);
}

/* 18000 -> "18,000"; 3.25 -> "3.2". */
static const char *num(char *buf, size_t len, double v) {
        char raw[64];
        size_t n, o = 0, lead;

        if (v < 10 && v != floor(v)) {
                snprintf(buf, len, "%.1f", v);
                return buf;
        }
        snprintf(raw, sizeof raw, "%.0f", v);
        n = strlen(raw);
        lead = n % 3 ? n % 3 : 3;
        for (size_t i = 0; i < n && o + 2 < len; i++) {
                if (i > 0 && (i - lead) % 3 == 0 && i >= lead)
                        buf[o++] = ',';
                buf[o++] = raw[i];
        }
        buf[o] = 0;
        return buf;
}

char *advice_options(const struct advice *a, char *buf, size_t len) {
        snprintf(buf, len, "%s%s%s", atime_mode_to_string(a->atime), a->nodiratime ? ",nodiratime" : "",
                 a->lazytime ? ",lazytime" : "");
        return buf;
}

static void set(struct advice *a, const struct advisor_input *in, AtimeMode atime, bool lazytime) {
        a->atime = atime;
        a->lazytime = lazytime;
        /* nodiratime as the mount has it: noatime implies it (so a
         * noatime mount's is not one to keep). */
        a->nodiratime = in->policy.nodiratime && in->policy.atime != ATIME_NOATIME && atime != ATIME_NOATIME;
        a->change = atime != in->policy.atime || lazytime != in->policy.lazytime;
        if (!a->change)
                a->action = "keep";
        else if (atime != in->policy.atime)
                a->action = atime_mode_to_string(atime);
        else
                a->action = "lazytime";
}

/* Whether lazytime keeps atime updates in memory on this filesystem, by
 * its costs: where it saves no CPU, it defers no write either (btrfs). */
static bool lazytime_defers(const struct atime_cost *c) {
        return c->lazy_usec < c->usec;
}

/* Of the updates strictatime makes, the ones relatime would still make:
 * each inode at most once a day (short of modifications). */
static double relatime_updates(const struct advisor_input *in, double per_min) {
        return fmin(per_min, (double) in->population / 1440.0);
}

/* Whether relatime would leave so few updates on a strictatime mount that
 * noatime is not worth it beyond: the most relatime leaves (every inode
 * once a day) under the threshold noatime is advised at. Then relatime
 * ends almost all of them, as noatime would, and keeps atime working for
 * whatever reads it. Not without a population (before the first walk). */
static bool relatime_suffices(const struct advisor_input *in, const struct advisor_params *p) {
        return in->policy.atime == ATIME_STRICT && in->population > 0 &&
               relatime_updates(in, in->per_min) < (double) p->noatime_threshold;
}

/* The updates a change would save, per minute, at a given rate. */
static double saved_updates(const struct advice *a, const struct advisor_input *in, double per_min) {
        if (!a->change)
                return 0;
        if (a->atime == ATIME_NOATIME && in->policy.atime != ATIME_NOATIME)
                return per_min;
        if (a->atime == ATIME_RELATIME && in->policy.atime == ATIME_STRICT)
                return fmax(0, per_min - relatime_updates(in, per_min));
        if (a->lazytime && !in->policy.lazytime && a->atime == in->policy.atime)
                return per_min; /* the same updates, kept in memory */
        return 0;
}

/* What the change saves. CPU follows updates; the bytes written follow
 * inode write-backs (one per inode per journal commit), which the updates'
 * write-back ratio gives. */
static void saving(struct advice *a, const struct advisor_input *in, const struct atime_cost *c) {
        double updates, usec = 0, kib = 0, wb = in->writeback_ratio > 0 ? fmin(1, in->writeback_ratio) : 1;
        /* An update that dirties its inode costs more than one of an inode
         * already dirty in the commit: the write-backs are the former. */
        double strict_usec = wb * c->usec + (1 - wb) * c->again_usec;
        bool deferred = in->policy.lazytime && lazytime_defers(c); /* written back later, if at all */

        if (a->change && a->atime == ATIME_NOATIME && in->policy.atime != ATIME_NOATIME && in->have_unshared)
                a->saving_bytes_per_day = in->unshared_per_day;
        else if (a->change && a->nodiratime && !in->policy.nodiratime && in->have_unshared)
                a->saving_bytes_per_day = dirs_bytes_share(in, c) * in->unshared_per_day;
        if (!a->change || !in->have_activity)
                return;
        updates = saved_updates(a, in, in->per_min);
        if (a->lazytime && !in->policy.lazytime && a->atime == in->policy.atime) {
                usec = fmax(0, strict_usec - c->lazy_usec);
                kib = c->kib;
        } else if (updates > 0) {
                usec = in->policy.lazytime ? c->lazy_usec : strict_usec;
                kib = deferred ? 0 : c->kib;
        }
        a->saving_updates_per_min = updates;
        a->saving_cpu_us_per_s = updates / 60.0 * usec;
        a->saving_kib_per_s = updates * wb / 60.0 * kib;
}

/* A saving of CPU under 1% of one CPU does not show in a workload's
 * throughput beside its own noise (BENCHMARKS.md, validate): say so, so that
 * the advice claims no more than the fewer writes it brings. */
#define MODEST_CPU_US_PER_S 10000.0

static void modest(struct advice *a) {
        if (!a->change || a->saving_updates_per_min <= 0 || a->saving_cpu_us_per_s >= MODEST_CPU_US_PER_S)
                return;
        reason(a, "it saves %.2g ms of CPU a second (%.2g%% of one CPU): too little to show in throughput",
               a->saving_cpu_us_per_s / 1000, a->saving_cpu_us_per_s / MODEST_CPU_US_PER_S);
}

/* Confidence from how long the figures cover. */
static AdviceConfidence confidence_of_time(double observed_s) {
        if (observed_s >= 86400)
                return CONFIDENCE_HIGH;
        if (observed_s >= 3600)
                return CONFIDENCE_MEDIUM;
        return CONFIDENCE_LOW;
}

/* A measured advice that turns on 'threshold' is only as sure as its
 * interval is on one side of it. */
static void straddles(struct advice *a, const struct advisor_input *in, double threshold) {
        if (in->have_activity && in->lo_per_min < threshold && in->hi_per_min >= threshold)
                a->confidence = CONFIDENCE_LOW;
}

static void by_rule(struct advice *a, AdviceBasis basis) {
        a->basis = basis;
        a->confidence = CONFIDENCE_HIGH;
}

static void advise_for_consumers(struct advice *a, const struct advisor_input *in, bool lazy_pays) {
        const char *now = atime_mode_to_string(in->policy.atime), *why = in->need_why ? in->need_why : "atime is read here";
        char n1[32];

        if (in->need == NEED_STRICT) {
                /* Every read must count: keep strictatime, but let lazytime keep
                 * the updates in memory where a journal would write them. */
                set(a, in, ATIME_STRICT, in->policy.lazytime || (lazy_pays && in->have_activity && in->per_min > 0));
                reason(a, "%s; it needs every read recorded", why);
                if (a->lazytime && !in->policy.lazytime)
                        reason(a, "lazytime keeps those updates in memory and writes them back later (%s updates/min)",
                               num(n1, sizeof n1, in->per_min));
                if (in->policy.atime != ATIME_STRICT || !a->change)
                        by_rule(a, BASIS_CONSUMERS);
                else
                        a->basis = BASIS_MEASUREMENT;
                if (in->policy.atime != ATIME_STRICT)
                        reason(a, "%s misses reads it needs", now);
                return;
        }
        /* NEED_RELATIME */
        by_rule(a, BASIS_CONSUMERS);
        if (in->policy.atime == ATIME_NOATIME) {
                set(a, in, ATIME_RELATIME, in->policy.lazytime);
                reason(a, "noatime breaks it: %s", why);
        } else if (in->policy.atime == ATIME_STRICT) {
                set(a, in, ATIME_RELATIME, in->policy.lazytime);
                if (in->have_activity)
                        reason(a, "strictatime: %s atime updates/min; %s, and relatime keeps that working",
                               num(n1, sizeof n1, in->per_min), why);
                else
                        reason(a, "strictatime; %s, and relatime keeps that working", why);
        } else {
                set(a, in, in->policy.atime, in->policy.lazytime);
                reason(a, "relatime is the least that keeps it working: %s", why);
        }
}

/* Below this, the space atime un-shares from btrfs snapshots is no
 * reason to change a mount: a MiB a day is a few hundred files read. */
#define SPACE_MIN_BYTES_PER_DAY (1024.0 * 1024.0)
/* Directories are the cost where they are at least this share of the
 * bytes atime un-shares: their share of the inodes written since the
 * newest snapshot, each weighed by its price (a directory un-shares more
 * than a file: 1,300 bytes against 537, BENCHMARKS.md 10;
 * advisor_dir_bytes_share()). */
#define DIR_COST_SHARE 0.5

/* "1.2 GiB/day (measured, 0.9-1.5 GiB), 8.4 GiB per snapshot period (7d)" */
static const char *space_cost(char *buf, size_t len, const struct advisor_input *in) {
        char b1[24], b2[24], b3[24], b4[24], d[32];
        int n = snprintf(buf, len, "%s/day (%s", format_bytes(b1, sizeof b1, in->unshared_per_day),
                         in->unshared_source ? in->unshared_source : "measured");

        if (n >= 0 && (size_t) n < len && in->unshared_hi > in->unshared_lo)
                n += snprintf(buf + n, len - (size_t) n, ", %s-%s", format_bytes(b2, sizeof b2, in->unshared_lo),
                              format_bytes(b3, sizeof b3, in->unshared_hi));
        if (n >= 0 && (size_t) n < len)
                n += snprintf(buf + n, len - (size_t) n, ")");
        if (n >= 0 && (size_t) n < len && in->snapshot_period_s > 0)
                snprintf(buf + n, len - (size_t) n, ", %s per snapshot period (%s)",
                         format_bytes(b4, sizeof b4, in->unshared_per_day * in->snapshot_period_s / 86400),
                         format_duration(d, sizeof d, (uint64_t) in->snapshot_period_s * 1000000));
        return buf;
}

static bool space_matters(const struct advisor_input *in) {
        return in->btrfs_shared && in->have_unshared && in->unshared_per_day >= SPACE_MIN_BYTES_PER_DAY;
}

/* On btrfs with snapshots, what atime costs is the metadata it un-shares
 * from them: nothing reads atime here, so noatime saves it all. */
static void advise_space(struct advice *a, const struct advisor_input *in, double dshare) {
        char c[160];

        set(a, in, ATIME_NOATIME, in->policy.lazytime);
        a->space = true;
        a->basis = BASIS_MEASUREMENT;
        a->confidence = MIN(a->confidence, confidence_of_time(in->unshared_s));
        if (in->unshared_lo < SPACE_MIN_BYTES_PER_DAY)
                a->confidence = CONFIDENCE_LOW;
        reason(a, "%s on btrfs with snapshots: atime updates un-share %s of metadata from them, kept as long as they "
                  "are; noatime saves it, and nothing here reads atime",
               atime_mode_to_string(in->policy.atime), space_cost(c, sizeof c, in));
        if (dshare >= DIR_COST_SHARE && !in->policy.nodiratime)
                reason(a, "directories are %.0f%% of the inodes written since the newest snapshot, %.0f%% of the bytes "
                          "(a directory un-shares more than a file): nodiratime alone would save that share",
                       100 * in->dir_share, 100 * dshare);
}

static bool dirs_are_the_cost(const struct advisor_input *in, double dshare) {
        return space_matters(in) && !in->policy.nodiratime && in->policy.atime != ATIME_NOATIME &&
               dshare >= DIR_COST_SHARE;
}

/* nodiratime alone: the directories' share of what atime un-shares is
 * saved, and files keep their atime ('why': what that keeps it for). */
static void advise_nodiratime(struct advice *a, const struct advisor_input *in, double dshare, const char *why) {
        struct advisor_input dirs = *in;
        char c[160];

        /* The directories' share of the bytes, as space_cost() says them. */
        dirs.unshared_per_day *= dshare;
        dirs.unshared_lo *= dshare;
        dirs.unshared_hi *= dshare;

        set(a, in, in->policy.atime, in->policy.lazytime);
        a->nodiratime = a->change = a->space = true;
        a->action = "nodiratime";
        a->basis = BASIS_MEASUREMENT;
        a->confidence = MIN(a->confidence, confidence_of_time(in->unshared_s));
        if (in->unshared_lo * dshare < SPACE_MIN_BYTES_PER_DAY)
                a->confidence = CONFIDENCE_LOW;
        reason(a, "%s on btrfs with snapshots: directories are %.0f%% of the inodes whose atime was written since the "
                  "newest snapshot, %.0f%% of the bytes; nodiratime saves their share of it, %s",
               atime_mode_to_string(in->policy.atime), 100 * in->dir_share, 100 * dshare,
               space_cost(c, sizeof c, &dirs));
        reason(a, "%s: nodiratime keeps it on files", why);
}

/* strictatime, below the threshold for noatime or not measured: relatime,
 * the kernel's default, which nothing here needs more than. */
static void advise_relatime(struct advice *a, const struct advisor_input *in, const struct advisor_params *p) {
        char n1[32];

        set(a, in, ATIME_RELATIME, in->policy.lazytime);
        if (in->have_activity && saved_updates(a, in, in->per_min) >= p->min_saving) {
                reason(a, "strictatime: %s atime updates/min; nothing needs every read recorded",
                       num(n1, sizeof n1, in->per_min));
                a->basis = BASIS_MEASUREMENT;
                straddles(a, in, p->noatime_threshold);
                return;
        }
        /* Whatever the rate: relatime, the kernel's default, costs
         * nothing where nothing needs every read. */
        if (in->have_activity)
                reason(a, "strictatime: %s atime updates/min; nothing needs every read recorded, and relatime "
                          "costs nothing",
                       num(n1, sizeof n1, in->per_min));
        else
                reason(a, "strictatime: nothing here needs every read recorded");
        by_rule(a, BASIS_RULE);
}

/* relatime or lazytime below the threshold for noatime, or not measured:
 * kept, saying why. */
static void advise_keep(struct advice *a, const struct advisor_input *in, const struct advisor_params *p) {
        const char *now = atime_mode_to_string(in->policy.atime);
        char n1[32], n2[32];

        set(a, in, in->policy.atime, in->policy.lazytime);
        if (in->have_activity) {
                reason(a, "%s: %s atime updates/min, not worth noatime (threshold %s/min)", now,
                       num(n1, sizeof n1, in->per_min), num(n2, sizeof n2, p->noatime_threshold));
                a->basis = BASIS_MEASUREMENT;
                straddles(a, in, p->noatime_threshold);
        } else {
                reason(a, "%s: not measured yet", now);
                a->basis = BASIS_NONE;
                a->confidence = CONFIDENCE_LOW;
        }
}

static void advise_without_consumers(struct advice *a, const struct advisor_input *in, const struct advisor_params *p,
                                     double dshare) {
        const char *now = atime_mode_to_string(in->policy.atime);
        char n1[32], n2[32], n3[32], n4[32];

        /* Where the files' share is too little to matter, nodiratime is
         * the smaller change, and atime keeps working on files. */
        if (dirs_are_the_cost(in, dshare) && (1 - dshare) * in->unshared_per_day < SPACE_MIN_BYTES_PER_DAY) {
                advise_nodiratime(a, in, dshare, "the files' share is too little to give up atime for");
                return;
        }
        if (in->policy.atime != ATIME_NOATIME && space_matters(in)) {
                advise_space(a, in, dshare);
                return;
        }
        if (in->policy.atime == ATIME_NOATIME) {
                set(a, in, ATIME_NOATIME, in->policy.lazytime);
                reason(a, "noatime already: no atime updates to save");
                by_rule(a, BASIS_RULE);
        } else if (in->have_activity && in->per_min >= p->noatime_threshold && relatime_suffices(in, p)) {
                set(a, in, ATIME_RELATIME, in->policy.lazytime);
                reason(a, "strictatime: %s atime updates/min; relatime leaves at most %s/min (each of %s inodes once a "
                          "day), under the threshold for noatime (%s/min), and keeps atime for what reads it",
                       num(n1, sizeof n1, in->per_min), num(n2, sizeof n2, relatime_updates(in, in->per_min)),
                       num(n3, sizeof n3, (double) in->population), num(n4, sizeof n4, p->noatime_threshold));
                /* Below the threshold too it would be relatime: nothing
                 * turns on where the figure stands. */
                a->basis = BASIS_MEASUREMENT;
        } else if (in->have_activity && in->per_min >= p->noatime_threshold) {
                set(a, in, ATIME_NOATIME, in->policy.lazytime);
                reason(a, "%s: %s atime updates/min; nothing here reads atime", now, num(n1, sizeof n1, in->per_min));
                a->basis = BASIS_MEASUREMENT;
                straddles(a, in, p->noatime_threshold);
        } else if (in->policy.atime == ATIME_STRICT)
                advise_relatime(a, in, p);
        else
                advise_keep(a, in, p);
}

/* Advice measured from a figure the kernel's own count contradicts is
 * no better than a guess until they agree again: say so. */
static void doubt(struct advice *a, const struct advisor_input *in) {
        char n1[32], n2[32], n3[32];

        if (!in->counter_disagrees || a->basis != BASIS_MEASUREMENT)
                return;
        a->confidence = CONFIDENCE_LOW;
        reason(a, "in doubt: the sample gives %s atime updates/min, the kernel counts %s-%s transactions/min on the filesystem",
               num(n1, sizeof n1, in->per_min), num(n2, sizeof n2, in->counter_lo_per_min),
               num(n3, sizeof n3, in->counter_hi_per_min));
}

/* A measured change that would save less than min_saving is not worth
 * making: keep the mount as it is, and say so. */
static void apply_min_saving(struct advice *a, const struct advisor_input *in, const struct advisor_params *p) {
        double saved = saved_updates(a, in, in->per_min), saved_hi = saved_updates(a, in, in->hi_per_min);
        char n1[32], n2[32];

        if (!a->change || a->basis != BASIS_MEASUREMENT || !in->have_activity || saved >= p->min_saving || a->space)
                return;
        set(a, in, in->policy.atime, in->policy.lazytime);
        reason(a, "the change would save %s atime updates/min, under the minimum worth advising (min_saving %s/min)",
               num(n1, sizeof n1, saved), num(n2, sizeof n2, p->min_saving));
        if (saved_hi >= p->min_saving)
                a->confidence = CONFIDENCE_LOW;
}

/* A figure from part of the filesystem, while its first walk runs: no
 * advice yet. Whatever it said now could turn round once the walk has
 * seen the rest: a hot corner may be there. */
static void advise_too_early(struct advice *a, const struct advisor_input *in) {
        char d[32];

        set(a, in, in->policy.atime, in->policy.lazytime);
        reason(a, "too early: the figure so far rests on %.0f%% of the filesystem; advice in about %s",
               fmin(99, floor(100 * in->coverage)),
               format_duration(d, sizeof d, (uint64_t) MAX(in->ready_in_s, (int64_t) 1) * 1000000));
        a->basis = BASIS_NONE;
        a->confidence = CONFIDENCE_LOW;
}

void advisor_advise(const struct advisor_input *in, const struct advisor_params *p, struct advice *ret) {
        const struct atime_cost *cost = atime_cost_for(in->fstype, p->costs, p->n_costs);
        double dshare = dirs_bytes_share(in, cost);
        /* lazytime pays where atime updates would go to a journal, and the
         * filesystem honours it. */
        bool lazy_pays = fstype_journals(in->fstype) && lazytime_defers(cost);
        char n1[32];
        struct advice a = { .confidence = confidence_of_time(in->observed_s) };

        /* The policy really in force, if the probe saw another. */
        if (in->probe_verified && in->probe_effective != in->policy.atime)
                reason(&a, "the probe finds %s in force, though the mount table says %s",
                       atime_mode_to_string(in->probe_effective), atime_mode_to_string(in->policy.atime));

        if (in->ignore) {
                set(&a, in, in->policy.atime, in->policy.lazytime);
                reason(&a, "ignored by configuration");
                by_rule(&a, BASIS_CONFIGURATION);
        } else if (in->policy.read_only) {
                set(&a, in, in->policy.atime, in->policy.lazytime);
                reason(&a, "read-only: no atime is ever written here");
                by_rule(&a, BASIS_RULE);
        } else if (in->too_early && in->need == NEED_NONE && in->policy.atime != ATIME_NOATIME)
                advise_too_early(&a, in);
        else {
                if (in->need != NEED_NONE)
                        advise_for_consumers(&a, in, lazy_pays);
                /* A reader of files' atime keeps it; the directories' need not
                 * pay for that. */
                if (in->need == NEED_RELATIME && !a.change && dirs_are_the_cost(in, dshare))
                        advise_nodiratime(&a, in, dshare, in->need_why ? in->need_why : "atime is read here");
                else if (in->need != NEED_NONE && space_matters(in)) {
                        char c[160];

                        reason(&a, "keeping atime costs %s of btrfs metadata un-shared from its snapshots",
                               space_cost(c, sizeof c, in));
                }
                if (in->need == NEED_NONE)
                        advise_without_consumers(&a, in, p, dshare);
                apply_min_saving(&a, in, p);
                /* A snapshotted subvolume the filesystem is not sampled
                 * through: its bytes are not modelled (a notice, not silence). */
                if (in->btrfs_shared && in->unshared_note)
                        reason(&a, "%s", in->unshared_note);
                if (in->have_activity && in->peak_per_min > in->per_min * 2 && in->peak_per_min >= p->noatime_threshold)
                        reason(&a, "peaks at %s updates/min", num(n1, sizeof n1, in->peak_per_min));
                saving(&a, in, cost);
                modest(&a);
                doubt(&a, in);
        }
        *ret = a;
}
