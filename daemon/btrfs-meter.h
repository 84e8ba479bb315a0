/* btrfs-meter.h: the bytes atime un-shares on one btrfs filesystem, kept
 * by the tracker beside its sampler (issue 31).
 *
 * Contract. The tracker keeps a BtrfsMeter per btrfs filesystem and only
 * calls it:
 *  - btrfs_look_prepare() on the event loop, as a sweep's job is made: it
 *    copies what the look needs (the configuration and the table may
 *    change while the job runs);
 *  - btrfs_look_run() in the job's thread, where the sweep's time is taken
 *    (it touches the filesystem), then btrfs_look_since() once the sweep
 *    has run (it reads the sampler, which is the job's while it is out);
 *  - btrfs_meter_apply() on the event loop when the job is back, with the
 *    sweep's purity: it says once what it cannot see, keeps the last look,
 *    and turns the interval into bytes, measured or modelled;
 *  - btrfs_meter_status() for a mount of the filesystem, at any time, and
 *    btrfs_meter_facts() and btrfs_meter_model(), for where it samples
 *    and what it keeps across a restart: nothing else of the meter.
 * A filesystem nothing samples (no mount of it writes atime) is looked at
 * all the same, in a job of its own with no sweep: btrfs_look_prepare()
 * and btrfs_look_run() as above, then btrfs_meter_look() on the event
 * loop, which keeps the facts and measures no interval; the next sweep's
 * look, once a mount writes atime again, begins a new one.
 * Nothing here blocks on the event loop, and nothing is lost where the
 * look fails: the figures so far stay, the next look starts anew.
 *
 * Measured: the metadata's growth (sysfs bytes_used) over an interval in
 * which nothing but atime updates happened (btrfs_interval()), held until
 * the commit that would show a write in it has come and counted only if
 * the filesystem's evidence is still the same then (BtrfsPending).
 * Modelled, otherwise: the distinct inodes whose atime was written since
 * the newest snapshot (the sample's share of them, scaled:
 * sampler_count_since()), times the bytes each one un-shares, learned from
 * the measured intervals of this filesystem (btrfs-model.h). Each with a
 * 95% interval, which a modelled interval widens to hold what the reads
 * of snapshotted subvolumes the sample does not cover can un-share
 * (btrfs_unseen). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "btrfs-model.h"
#include "btrfs.h"
#include "sampler.h"

/* What the figures say, as btrfs_meter_status() gives them. */
typedef enum BtrfsFigureSource {
        BTRFS_FIGURE_NONE,     /* nothing to say yet */
        BTRFS_FIGURE_MEASURED, /* the kernel's bytes_used */
        BTRFS_FIGURE_MODELLED, /* distinct inodes times the learned bytes each */
        _BTRFS_FIGURE_SOURCE_MAX,
} BtrfsFigureSource;

const char *btrfs_figure_source_to_string(BtrfsFigureSource s);

/* What a mean of bytes came from, for the advice's reason: "measured"
 * where no modelled interval gave it a byte, "modelled" where every byte
 * of it is modelled, "partly modelled" between. 'modelled': the share of
 * 'total' (both in the same unit) that modelled intervals gave. */
const char *btrfs_bytes_label(double modelled, double total);

/* A btrfs mount's snapshots and the metadata atime un-shares, as the last
 * sweep of its filesystem left them (btrfs.h). The look goes through the
 * mount the filesystem is sampled through: 'looked' says whether its
 * subvolume is this mount's. */
struct btrfs_status {
        bool looked;     /* this mount's subvolume was seen: self and snapshots are its */
        uint64_t subvol; /* the mount's subvolid= (0: unknown) */
        /* This mount's subvolume is the one sampled (the place the look
         * went through, place.c): the model counts its inodes. Where it
         * is not, its reads un-share bytes only measured intervals see. */
        bool sampled;
        struct btrfs_subvol self;
        struct btrfs_snapshots snapshots;
        bool have;       /* a look came back (facts valid until the filesystem's next sweep) */
        struct btrfs_facts facts; /* of the subvolume looked through, and the filesystem's bytes */
        int error;       /* the look's own failure (-errno), when there was one */
        int64_t at;      /* Unix seconds of the look */
        BtrfsBytesSource source; /* what the last interval said */
        bool have_rate;  /* a rate exists (measured or modelled) */
        bool rate_fresh; /* and it is of the interval the last look ended (not an earlier one's) */
        BtrfsFigureSource rate_source;
        double per_day, per_day_lo, per_day_hi; /* the last intervals' growth, per day, and its 95% interval */
        /* The same bytes over the stretch since the previous look alone:
         * intervals held before are confirmed at once, and the history
         * (tick.c) must add up to the bytes, not repeat a rate. */
        double step_per_day, step_lo, step_hi;
        double total;    /* every measured interval's growth, summed */
        /* The mean over every interval with a figure, measured or
         * modelled, per day, and its 95% interval (the intervals' bounds
         * added up: conservative); seconds: how long those intervals
         * cover (0: none). What advice rests on. */
        double mean_per_day, mean_lo, mean_hi, mean_seconds;
        BtrfsFigureSource mean_source; /* modelled where any modelled interval gave it bytes */
        double mean_modelled_per_day; /* of mean_per_day, what modelled intervals gave (btrfs_bytes_label()) */
        BtrfsFigureSource since_source; /* the total since the newest snapshot: */
        double since, since_lo, since_hi;
        double inodes_since; /* distinct inodes written since the newest snapshot (the sample's); <0: unknown */
        double dirs_since;   /* of which directories */
        double bytes_per_inode; /* the model's; 0: not learned yet */
        double table_bytes_per_inode; /* until it is: the cost table's starting value the model uses; 0: none */
        double table_bytes_per_dir;   /* and its value for a directory (a file's where it gives none); 0: none */
        unsigned model_intervals;
        /* No mount of the filesystem writes atime (noatime or read-only,
         * each one): it is not sampled, only looked at (btrfs_meter_look()),
         * and atime un-shares exactly nothing (btrfs_status_no_atime()). */
        bool no_atime;
        /* A modelled figure's top, in the mean since atimed started, was
         * raised to hold what reads of snapshotted subvolumes the sample
         * does not cover may un-share (facts.unseen says which; without
         * the helper's full list, what the metadata grew by). */
        bool widened;
        /* The last look that could list every subvolume found snapshotted
         * ones that mounts writing atime reach beyond the sample
         * (facts.unseen: nested below the mount sampled, Docker's layers):
         * their reads un-share bytes the figures hold. */
        bool reaches_unseen;
        unsigned pending;   /* intervals held until their commit (BtrfsPending) */
        const char *model_why; /* why the model is not saved, or saved though beyond the table's range; NULL: none */
};

/* What the sample says of the inodes written since the newest snapshot. */
struct btrfs_since {
        bool have;
        int64_t since;      /* the newest snapshot's creation (Unix seconds) it counts from */
        struct sampler_since count;
};

/* An interval that passed btrfs_interval(), held until whatever was
 * written in it has been committed (its settle window, btrfs_settle_arm()):
 * measured then if the evidence is still as at its start, modelled if it
 * moved. */
#define BTRFS_PENDING_MAX 32
typedef struct BtrfsPending {
        struct btrfs_evidence start; /* at the look it began with */
        double bytes, seconds;       /* the metadata's growth over it */
        bool grew;                   /* the count since the newest snapshot grew over it by: */
        double inodes, dirs, hits;
        uint64_t subvol;             /* the place, and the newest snapshot, that count was of */
        int64_t since;
        uint64_t end_usec;           /* CLOCK_MONOTONIC usec of its end */
        bool have_commits;           /* the transactions committed at its end are known: */
        uint64_t commits;
        BtrfsTaint settle;
} BtrfsPending;

/* One sweep's look, carried by its job. */
typedef struct BtrfsLook {
        bool on;            /* the sweep is of a btrfs: look */
        uint64_t subvol;    /* the place's subvolid= */
        struct btrfs_wanted wanted[BTRFS_TRACKED_MAX]; /* the filesystem's mounts' subvolumes (btrfs_look_want()) */
        size_t n_wanted;
        char *fsid;         /* as the meter knew it, or as the look found it */
        char *sysfs;
        struct btrfs_facts facts;
        int r;
        uint64_t at;        /* CLOCK_MONOTONIC usec of the look */
        struct btrfs_since since;
} BtrfsLook;

typedef struct BtrfsMeter {
        char *fsid;        /* its directory under sysfs's fs/btrfs; NULL: not found yet */
        uint64_t subvol;   /* the subvolume the last look went through (subvolid=) */
        struct btrfs_status status;
        uint64_t at;       /* CLOCK_MONOTONIC usec of the last look */
        BtrfsTaint taint;  /* an impure interval's writes, not committed yet */
        BtrfsPending pending[BTRFS_PENDING_MAX]; /* oldest first */
        unsigned n_pending;
        /* Consecutive measured intervals, learnt from as one run: the
         * bytes an interval's reads un-share land at the commit, often in
         * the next interval. */
        struct {
                double bytes, inodes, hits;
                unsigned intervals;
                uint64_t last_read_usec; /* the end of its last interval with sampled inodes written */
                bool have_commits;       /* and the transactions committed then, where known */
                uint64_t last_read_commits;
        } run;
        BtrfsModel model;
        struct btrfs_prior prior; /* the cost table's bytes an inode, as the last sweep gave it (file 0: none) */
        double sum_bytes, sum_lo, sum_hi, sum_seconds; /* every interval with a figure */
        double sum_modelled_bytes; /* of sum_bytes, the modelled intervals' */
        bool sum_modelled;
        bool sum_widened;  /* a modelled interval of the sums was widened (status.widened) */
        struct btrfs_since since; /* at the last look */
        bool since_measured; /* every interval since the newest snapshot appeared was measured */
        double since_bytes;  /* and their growth */
        bool look_only;    /* the last look was btrfs_meter_look()'s: no interval ends at it */
        bool priced;       /* a look brought the cost table's prices (btrfs_meter_seed() waits for them) */
        bool seed_refused; /* the model kept from before was not taken (status.model_why says why) */
        bool deleted_said, sight_said, space_said, error_said, change_said, qgroup_said, inconsistent_said;
        bool unseen_said, helper_said;
        const char *model_said; /* the model_why last logged */
} BtrfsMeter;

/* A model kept from before a restart (stats_unshare_model, in the
 * store) into a meter that has learned nothing yet: the intervals learned
 * since start go on from it. Nothing where the meter has learned, or the
 * saved model is not one. */
void btrfs_meter_seed(BtrfsMeter *m, const BtrfsModel *saved);

/* Frees what the meter holds; it stays usable, empty. */
void btrfs_meter_done(BtrfsMeter *m);

/* Event loop: what a sweep's look needs, copied into 'l' (zeroed first). */
int btrfs_look_prepare(const BtrfsMeter *m, const char *super_options, const char *sysfs, BtrfsLook *l);
/* Event loop, after btrfs_look_prepare(): one more mount of the
 * filesystem, of subvolume 'id' (its subvolid=; 0: unknown, ignored),
 * through which atime is written or not. The look finds its facts in the
 * same pass, and relates the snapshotted subvolumes to them. */
void btrfs_look_want(BtrfsLook *l, uint64_t id, bool writes_atime);
/* The job's thread: looks at the btrfs mounted at 'target' (its device's
 * kernel name 'devname', to find the fsid; may be NULL). */
void btrfs_look_run(BtrfsLook *l, const char *target, const char *devname);
/* The job's thread, after the sweep: the sample's count of the inodes
 * written since the newest snapshot the look saw. */
void btrfs_look_since(BtrfsLook *l, const Sampler *s);
void btrfs_look_done(BtrfsLook *l);

/* What the sweep that came back with the look says of the interval. */
typedef struct BtrfsSweep {
        const char *target; /* for the log */
        bool pure;          /* nothing but atime updates, as far as the sample tells */
        double commit_s;
        int64_t now;        /* Unix seconds */
        struct btrfs_prior prior; /* the cost table's bytes an inode un-shares (btrfs_model_price_prior()) */
} BtrfsSweep;

/* Event loop: takes the look's facts (l is left empty). */
void btrfs_meter_apply(BtrfsMeter *m, BtrfsLook *l, const BtrfsSweep *s);
/* Event loop: takes the facts of a look made without a sweep, on a
 * filesystem no mount writes atime through (l is left empty): said once
 * what it cannot see, as btrfs_meter_apply() does; the facts shown; no
 * interval measured or modelled, and the count since the newest snapshot
 * starts over (the next sweep's look begins an interval, as a first look
 * does). 's->pure' and 's->commit_s' are not read. */
void btrfs_meter_look(BtrfsMeter *m, BtrfsLook *l, const BtrfsSweep *s);
/* The status as a mount with 'super_options' sees it. */
void btrfs_meter_status(const BtrfsMeter *m, const char *super_options, struct btrfs_status *ret);
/* The facts of the last look that came back (the subvolumes it saw, for
 * the place the filesystem is sampled through: btrfs_place_rank()); NULL
 * before one has. */
const struct btrfs_facts *btrfs_meter_facts(const BtrfsMeter *m);
/* The model as the measured intervals taught it (or the seed gave it),
 * to keep across a restart. */
void btrfs_meter_model(const BtrfsMeter *m, BtrfsModel *ret);
/* Whether a mount shows the bytes atime un-shares (its history, its
 * advice): its own subvolume shares its tree with snapshots, or it is the
 * mount the filesystem is sampled through and reads reach snapshotted
 * subvolumes the sample does not cover (reaches_unseen): the figures,
 * their tops raised for those, are its. */
bool btrfs_status_shows_bytes(const struct btrfs_status *b);
/* The status of a mount of a filesystem no mount writes atime through,
 * looked at or not: a rate of exactly 0 bytes a day, as the atime updates
 * through noatime are exactly 0 (a figure, source BTRFS_BYTES_NO_ATIME,
 * not "waiting"); no mean, no total since the newest snapshot, and not
 * sampled. The facts of the last look stay. */
void btrfs_status_no_atime(struct btrfs_status *ret);
