/* report.h: atimed's state as plain typed values, the one model that every
 * output is written from. The daemon fills a Report from its own state
 * (daemon/status.c) and writes GetStatus's Mount objects and the Prometheus
 * text from it; atimectl reads every reply it renders (GetStatus,
 * GetRecommendations, GetHistory, Probe, Reload, an error's parameters)
 * back into the same structs once (report-parse.c, the only reader of a
 * reply's JSON), then writes all its text from them (cli/render.c, and
 * metrics.h). A Report owns all its strings and arrays, so a snapshot can go
 * to a worker thread while the daemon moves on. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ReportDevice {
        int64_t major, minor;
        const char *name; /* the block device; NULL without one */
        const char *kind;
        const char *label, *parents; /* NULL: none */
        int rotational;   /* -1: unknown */
        bool have_rate;
        double write_iops, write_kib_per_s;
        bool have_totals; /* the kernel's counters since boot */
        uint64_t writes_total, written_bytes_total;
} ReportDevice;

typedef struct ReportProbe {
        bool have;
        bool verified;
        const char *effective; /* when verified */
        int64_t at;            /* Unix seconds */
        const char *reason;    /* when not verified */
        const char *explanation; /* why it disagrees with the mount table, where known */
        int matches_table;     /* -1: unknown */
} ReportProbe;

typedef struct ReportActivity {
        bool have;
        /* Distinct inodes whose atime moved, per minute, and its 95% interval. */
        double inodes_per_min, inodes_lo, inodes_hi;
        /* Atime updates the kernel made, per minute, and its 95% interval. */
        double updates_per_min, updates_lo, updates_hi;
        double writebacks_per_min; /* inode write-backs the updates cause */
        double tick_ms;            /* the timestamp tick updates were counted in */
        const char *source;        /* what stands behind the updates figure; NULL: unknown */
        const char *counter;       /* the kernel's count read; NULL: none */
        double counter_lo, counter_hi; /* transactions per minute, whole filesystem */
        bool disagrees;            /* sample and count exclude each other */
        double sets_per_min;       /* atimes set, not read (in no other figure) */
        double interval_s;
        uint64_t sample, population;
        bool exact, shared;
        int64_t at; /* Unix seconds; 0: none (an exact zero) */
        double coverage;    /* of the filesystem's inodes, the share the sample rests on (1: all) */
        int64_t ready_in_s; /* seconds until a figure from the whole walk's sample, about; -1: this is one */
} ReportActivity;

/* A mount's last change of policy (GetRecommendations' and GetHistory's
 * PolicyChange): when, from and to (as mount options), the advice in force
 * then (NULL: keep), the verdict's state and how it compared, the saving
 * promised (have_promise) and realized (have_saved: measured) in atime
 * updates per minute, with its 95% interval: saved_lo/hi are the reply's
 * saved_ci95 where have_saved_ci, else the saving itself. */
typedef struct ReportChange {
        bool have;
        int64_t at;
        const char *previous, *current, *advised, *state, *comparison;
        bool have_promise, have_saved, have_saved_ci;
        double promised_per_min, saved_per_min, saved_lo, saved_hi;
        double points_before, points_after;
        int64_t resolution_s; /* the points' length */
} ReportChange;

/* Who reads atime on a mount (GetRecommendations' Consumer). */
typedef struct ReportConsumer {
        const char *need, *why, *source;
} ReportConsumer;

/* The advice for the mount (GetRecommendations' Recommendation). */
typedef struct ReportAdvice {
        bool have;
        const char *action, *current, *recommended, *confidence; /* options as mount options */
        bool change;                                 /* the advice is to change */
        const char *current_atime, *recommended_atime; /* NULL: unknown */
        bool current_lazytime, recommended_lazytime;
        bool current_nodiratime, recommended_nodiratime;
        const char *basis;                           /* what it rests on; NULL: unknown */
        double observed_s;                           /* how much measurement */
        double saving_updates_per_min, saving_cpu_us_per_s, saving_kib_per_s;
        double saving_bytes_per_day; /* btrfs metadata no longer un-shared from snapshots */
        const char **reasons;
        size_t n_reasons;
        ReportConsumer *consumers;
        uint64_t n_consumers;
        ReportChange policy_change; /* the mount's last change of policy */
} ReportAdvice;

/* What a mount without a figure yet waits for. */
typedef struct ReportProgress {
        bool have;
        const char *stage; /* STAGE_* of protocol.h */
        uint64_t walked, inodes; /* inodes 0: unknown */
        int64_t eta_s;     /* -1: unknown */
} ReportProgress;

/* A btrfs mount's snapshots and the metadata atime un-shares (btrfs.h). */
typedef struct ReportBtrfs {
        bool have;
        int64_t subvol_id;               /* 0: unknown */
        const char *subvol_uuid, *subvol_path; /* NULL: unknown */
        bool subvol_deleted;             /* deleted while mounted */
        const char *seen;                /* all, beneath, none */
        const char *reason;              /* why none were looked for; NULL: looked */
        bool have_snapshots;
        int64_t snapshots, snapshots_read_only;
        int64_t newest_age_s;            /* -1: no snapshot */
        int64_t period_s;                /* the snapshot rhythm; 0: unknown (fewer than two) */
        bool have_metadata;
        int64_t metadata_bytes_used;     /* the whole filesystem's */
        const char *source;              /* what the last interval said */
        bool have_rate;                  /* a measured interval exists */
        double unshared_bytes_per_day;   /* the last measured interval's */
        double unshared_bytes;           /* measured since atimed began */
        const char *rate_source;         /* measured, modelled (btrfs-meter.h) */
        double unshared_lo, unshared_hi; /* the rate's 95% interval */
        bool have_since;                 /* the total since the newest snapshot: */
        const char *since_source;        /* measured, modelled */
        double since_bytes, since_lo, since_hi;
        double inodes_since;             /* distinct inodes written since it; <0: unknown */
        double bytes_per_inode;          /* the model's, learned here; 0: not yet */
        double table_bytes_per_inode;    /* until then: the cost table's starting value in use; 0: none */
        double table_bytes_per_dir;      /* and a directory's; 0: none */
        int64_t model_intervals;
        bool sampled;                    /* this mount's subvolume is the one the model samples */
        const char *model_note;          /* where snapshots share it but it is not: what that means; NULL: none */
        bool have_unseen;                /* every subvolume listed: what the sample does not cover is known: */
        int64_t unseen_subvolumes, unseen_tree_bytes;
        const char *unseen_reason;       /* why the modelled figure's interval is wide; NULL: it is not */
        int64_t pending;                 /* intervals held until their commit */
        bool quotas;                     /* the operator has quotas on: */
        bool have_qgroups, qgroups_inconsistent;
        int64_t exclusive, snapshots_exclusive;
        const char *qgroups_reason;      /* why not read; NULL: read */
} ReportBtrfs;

/* Numbers over time, a gap where present[i] is false. */
typedef struct ReportSeries {
        size_t n;
        double *value;
        bool *present;
} ReportSeries;

typedef struct ReportMount {
        int id; /* -1: unknown */
        const char *target, *source, *fstype, *root, *options, *super_options;
        const char *atime;
        bool nodiratime, lazytime, read_only, stalled;
        bool reachable; /* false: over-mounted (see protocol.h) */
        ReportDevice device;
        ReportProbe probe;
        ReportActivity activity;
        ReportProgress progress;
        ReportAdvice advice;
        ReportBtrfs btrfs;
        double atime_updates_total; /* the updates figure integrated since start */
        bool have_history;          /* GetStatus with history_s */
        ReportSeries history;       /* atime updates per minute */
} ReportMount;

/* One point of GetHistory's: when it starts, how many samples it holds (0:
 * atimed was not running), the policy then (NULL: unknown). */
typedef struct ReportPoint {
        int64_t t, samples;
        const char *atime;
        bool policy_changed;
        bool unshared_modelled; /* its btrfs bytes (ReportHistory.unshared) were modelled */
} ReportPoint;

/* A GetHistory reply: its points, and their figures as series. */
typedef struct ReportHistory {
        bool have;
        const char *target, *reason; /* reason: why there are no points */
        int64_t resolution_s, since, until;
        size_t n_points;
        ReportPoint *points;
        ReportSeries updates, iops; /* per point */
        ReportSeries unshared;      /* btrfs metadata un-shared from snapshots, bytes per day, per point */
        size_t n_resolutions;
        int64_t *resolutions_s;    /* every resolution kept, finest first */
        ReportChange policy_change;
} ReportHistory;

typedef struct Report {
        const char *version, *hostname;
        int64_t started_at, uptime_s, stuck_threads, advice_changes;
        int64_t taken_at; /* Unix seconds: when the figures were read */
        /* How the daemon follows the mount table (GetStatus's
         * mount_changes): "events" or "mountinfo"; NULL: not said. */
        struct {
                const char *source, *reason;
                int64_t events, resyncs, mounts;
        } mount_changes;
        bool have_advice; /* the mounts' advice was filled in */
        bool oom;         /* a report_strdup() failed: the report is incomplete */
        const char *config;  /* Reload: the file in force; NULL: the defaults */
        const char **errors; /* Reload's InvalidConfiguration: "file:line: ..." */
        size_t n_errors;
        ReportHistory history; /* GetHistory */
        /* An error reply's parameters (NoSuchMount's target and reason,
         * InvalidParameter's parameter); NULL where absent. */
        struct {
                const char *target, *reason, *parameter;
        } error;
        ReportMount *mounts;
        size_t n_mounts, n_allocated;
        struct report_chunk *strings;
} Report;

int report_new(Report **ret);
Report *report_free(Report *r);
static inline void report_freep(Report **r) {
        if (*r)
                report_free(*r);
}

/* A copy of s (NULL stays NULL) that lives as long as the report; on OOM,
 * NULL and r->oom set. */
const char *report_strdup(Report *r, const char *s);
/* n zeroed elements of size bytes, aligned for any type, that live as long
 * as the report; NULL (r->oom set) on OOM or overflow. */
void *report_alloc(Report *r, size_t n, size_t size);
/* Room for n mounts in all, so that adding them moves nothing. */
int report_reserve(Report *r, size_t n);
/* A new mount at the end, zeroed (probe.matches_table and
 * device.rotational at -1, reachable); NULL on OOM. Earlier pointers stay valid only
 * until the next call. */
ReportMount *report_add_mount(Report *r);

/* FNV-1a: for the tables that pair mounts by target. */
uint64_t report_string_hash(const char *s);

/* Whether a figure's upper bound says nothing to a person: a first walk's
 * figure (coverage below 1) that the sample alone stands behind (source
 * "sample", or none named by an older daemon), where the top of the
 * interval reckons with every inode the walk has not seen yet written at
 * every tick ("0 (0-1.49e9)"): only its lower bound tells, and that rises
 * as the walk goes on. A count of the kernel's, standing or bounding, makes
 * the interval one to show. The numbers stay as they are in the JSON. */
bool report_figure_lower_bound_only(double coverage, const char *source);
static inline bool report_activity_lower_bound_only(const ReportActivity *a) {
        return a->have && report_figure_lower_bound_only(a->coverage, a->source);
}

/* A number as JSON with at most 'decimals' digits after the point. */
json_object *report_json_rounded(double v, int decimals);
/* GetStatus's Mount object (without history), and its Probe. */
json_object *report_mount_to_json(const ReportMount *m);
json_object *report_probe_to_json(const ReportProbe *p);

/* ---------------------------------------------------------------- from JSON
 * Every reply atimectl reads becomes a Report here (report-parse.c), once:
 * the client renders from these types alone. A field missing or of the
 * wrong type, or a number that is NaN or infinite, reads as unknown; what a reply cannot do without (GetStatus's
 * mounts, each Mount's and Recommendation's target, GetHistory's points)
 * makes the parse fail with -EBADMSG, memory with -ENOMEM. */

/* The parameters of a GetStatus reply and, if not NULL, of a
 * GetRecommendations reply, into a Report: one pass over each, advice
 * paired with its mount by target through a hash. */
int report_from_json(json_object *status, json_object *recommendations, Report **ret);
/* A GetStatus reply alone: report_from_json(status, NULL, ret). */
int report_from_status(json_object *status, Report **ret);
/* A GetRecommendations reply alone: one mount for each recommendation, in
 * its order, with its target, fstype and advice. */
int report_from_recommendations(json_object *recommendations, Report **ret);
/* A GetConsumers reply: one mount, its target and its readers of atime
 * (advice.consumers, the rest of the advice unknown); -EBADMSG without a
 * target or a list of them. */
int report_from_consumers(json_object *consumers, Report **ret);
/* A GetHistory reply into r->history. */
int report_from_history(json_object *history, Report **ret);
/* A Probe reply: one mount, its target and probe. */
int report_from_probe(json_object *probe, Report **ret);
/* A Reload reply, or the parameters of its InvalidConfiguration error:
 * r->config, r->errors. */
int report_from_reload(json_object *reload, Report **ret);
/* The parameters of an error reply: r->error. */
int report_from_error(json_object *params, Report **ret);
