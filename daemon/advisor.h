/* advisor.h: what to change on a mount, and why. Pure: everything it
 * decides from is in advisor_input, so the rules are table-tested.
 *
 * The rules (docs/architecture.md, "Advice"): a mount with an atime consumer never gets
 * noatime; strictatime with a consumer that needs day granularity gets
 * relatime; one that needs every read keeps strictatime and gets lazytime on
 * a journaling filesystem; without consumers strictatime gets at least
 * relatime, and noatime when the saving is above the threshold; otherwise the
 * mount is kept, saying why. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumers.h"
#include "mounts.h"

#define ADVICE_REASONS_MAX 4
#define ADVICE_REASON_LEN 256

typedef enum AdviceConfidence {
        CONFIDENCE_LOW,    /* under an hour observed */
        CONFIDENCE_MEDIUM, /* under a day */
        CONFIDENCE_HIGH,   /* a day or more, or a rule that needs no measurement */
        _CONFIDENCE_MAX,
} AdviceConfidence;

const char *advice_confidence_to_string(AdviceConfidence c);

/* What an advice rests on. */
typedef enum AdviceBasis {
        BASIS_MEASUREMENT,   /* the atime updates measured here */
        BASIS_CONSUMERS,     /* the atime readers found or declared, whatever the rate */
        BASIS_RULE,          /* a rule that needs no measurement (read-only, noatime already, strictatime) */
        BASIS_CONFIGURATION, /* ignored by configuration */
        BASIS_NONE,          /* nothing yet: not measured */
        _BASIS_MAX,
} AdviceBasis;

const char *advice_basis_to_string(AdviceBasis b);

/* The cost of atime updates on a filesystem type (docs/architecture.md,
 * "Facts the design rests on"; the figures: BENCHMARKS.md section 1). */
struct atime_cost {
        const char *fstype;
        double usec;      /* CPU of an update that dirties the inode (its first in a commit) */
        double kib;       /* written per inode write-back (per inode dirty in a journal commit) */
        double lazy_usec; /* CPU per update with lazytime */
        double again_usec; /* CPU of an update of an inode already dirty in the commit */
        /* btrfs: the metadata each distinct inode updated since the newest
         * snapshot un-shares from it (bytes), the model's starting value
         * until the filesystem's own measured intervals replace it
         * (btrfs-meter.h); 0: none given (elsewhere: not a btrfs). */
        double unshare_bytes;
        /* The same for a directory (its inode's items and its entries'
         * index un-share more than a file's); 0 where unshare_bytes is 0.
         * An entry that gives unshare_bytes alone derives it in the
         * built-in table's proportion (atime_cost_parse()). */
        double unshare_dir_bytes;
};

/* The built-in table, and a lookup that falls back on a generic entry. */
const struct atime_cost *atime_cost_for(const char *fstype, const struct atime_cost *overrides, size_t n_overrides);
/* "ext4:1.46:0.5" (fstype:usec:KiB[:lazy usec[:again usec[:unshare bytes[:unshare dir bytes]]]])
 * into c; fstype points into buf. */
int atime_cost_parse(const char *s, struct atime_cost *c, char *buf, size_t buflen);
/* c in the syntax atime_cost_parse() reads: lazy and again usec only where
 * they differ from what a shorter entry derives; numbers as short as they
 * read back exactly. */
char *atime_cost_format(const struct atime_cost *c, char *buf, size_t len);
bool fstype_journals(const char *fstype);
/* The bytes an inode un-shares on 'fstype' (atime_cost.unshare_bytes): the
 * first override that gives them, else the built-in table's; 0: none. */
double atime_cost_unshare_bytes(const char *fstype, const struct atime_cost *overrides, size_t n_overrides);
/* The same entry's bytes a directory un-shares (atime_cost.unshare_dir_bytes). */
double atime_cost_unshare_dir_bytes(const char *fstype, const struct atime_cost *overrides, size_t n_overrides);

/* The directories' share of the bytes atime un-shares on btrfs (0 to 1),
 * from 'dir_share', their share of the inodes written since the newest
 * snapshot, each inode weighed by its price: 'file_bytes' and 'dir_bytes'
 * a file and a directory un-share (atime_cost.unshare_bytes and
 * unshare_dir_bytes: the cost table's btrfs fields 6 and 7). Where either
 * price is unknown (0), the inodes' share. */
double advisor_dir_bytes_share(double dir_share, double file_bytes, double dir_bytes);

struct advisor_input {
        const char *target;
        const char *fstype;
        struct mount_policy policy;
        bool probe_verified;
        AtimeMode probe_effective;
        bool ignore;                  /* [mount:PATH] ignore = yes */
        AtimeNeed need;               /* the strongest consumer's */
        const char *need_why;         /* and what it is */
        bool have_activity;           /* measured for some time */
        double per_min;               /* mean atime updates per minute over the window */
        double lo_per_min, hi_per_min; /* its 95% interval */
        double peak_per_min;
        double writeback_ratio;       /* inode write-backs per update (0 to 1); 0: unknown, taken as 1 */
        double observed_s;            /* how long that mean covers */
        uint64_t population;          /* inodes in the filesystem */
        bool counter_disagrees;       /* the last interval's sample and the kernel's count exclude each other */
        double counter_lo_per_min, counter_hi_per_min; /* that count: the filesystem's transactions */
        /* No figure to advise on yet, only one from the part of the
         * filesystem a first walk has seen (coverage, 0 to 1): the
         * advice would change. ready_in_s: seconds until it rests on all
         * of it, about. */
        bool too_early;
        int64_t ready_in_s;
        double coverage;
        /* On a btrfs subvolume that snapshots share: the metadata atime
         * updates un-share from them and that stays as long as they do
         * (btrfs-meter.h), its mean per day over 'unshared_s' seconds, with
         * a 95% interval, measured or modelled; the snapshot rhythm (0:
         * unknown); of the inodes written since the newest snapshot, the
         * directories' share (0 to 1; the advisor weighs it by the cost
         * table's prices for their share of the bytes). */
        bool btrfs_shared;
        bool have_unshared;
        double unshared_per_day, unshared_lo, unshared_hi, unshared_s;
        const char *unshared_source;
        const char *unshared_note; /* what the figure leaves out (btrfs_status.sampled); NULL: nothing */
        double snapshot_period_s;
        double dir_share;
};

struct advisor_params {
        double noatime_threshold;     /* updates per minute worth noatime */
        double min_saving;            /* updates per minute below which no change is worth advising */
        const struct atime_cost *costs; /* overrides of the built-in table */
        size_t n_costs;
};

struct advice {
        AtimeMode atime;              /* the policy advised */
        bool lazytime;
        bool nodiratime;              /* with nodiratime (never with noatime, which implies it) */
        bool change;                  /* differs from the mount's now */
        const char *action;           /* "keep", "relatime", "noatime", "strictatime", "lazytime", "nodiratime" */
        char reasons[ADVICE_REASONS_MAX][ADVICE_REASON_LEN];
        unsigned n_reasons;
        double saving_updates_per_min; /* atime updates that would no longer happen (or be deferred) */
        double saving_cpu_us_per_s;
        double saving_kib_per_s;
        double saving_bytes_per_day;  /* btrfs metadata no longer un-shared from snapshots */
        bool space;                   /* the advice rests on that space (btrfs snapshots) */
        AdviceConfidence confidence;
        AdviceBasis basis;
};

void advisor_advise(const struct advisor_input *in, const struct advisor_params *p, struct advice *ret);
/* "noatime", "relatime,lazytime", "relatime,nodiratime": the mount options
 * the advice stands for. */
char *advice_options(const struct advice *a, char *buf, size_t len);
