/* status.c: the daemon's state as a Report (see status.h). */
#include "status.h"

#include <errno.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "recommend.h"
#include "time-util.h"

void status_activity_updates(const struct activity *a, double *per_min, double *lo, double *hi) {
        *per_min = a->updates.per_min;
        *lo = a->updates.lo;
        *hi = a->updates.hi;
}

void status_probe(const struct probe_result *pr, const MountEntry *e, ReportProbe *ret) {
        *ret = (ReportProbe) {
                .have = true,
                .verified = pr->verified,
                .effective = pr->verified ? atime_mode_to_string(pr->effective) : NULL,
                .at = (int64_t) (pr->at / USEC_PER_SEC),
                .reason = pr->verified ? NULL : pr->reason,
                .matches_table = pr->verified && e ? pr->effective == e->policy.atime : -1,
        };
        /* Why the probe disagrees with the mount table, where it can tell. */
        if (pr->verified && e && pr->effective != e->policy.atime && pr->noatime_attr)
                ret->explanation = "the probed directory has the no-atime attribute (chattr +A), which new files "
                                   "inherit: they are never atime-updated, whatever the mount says; other files "
                                   "follow the mount's policy";
}

/* A Report holds names in their protocol form (valid UTF-8, see escape.h),
 * as atimectl reads them back: every output written from it carries them
 * so, the JSON replies and the Prometheus labels alike. */
static const char *report_name(Report *r, const char *raw) {
        _cleanup_free_ char *n = NULL;

        if (!raw)
                return NULL;
        if (name_escape(raw, &n) < 0) {
                r->oom = true;
                return NULL;
        }
        return report_strdup(r, n);
}

static void fill_device(Report *r, ReportDevice *d, const MountEntry *e, const TrackedMount *tm) {
        const DeviceInfo *di = tm ? tracker_mount_device(tm) : NULL;
        struct device_rate rate;
        DiskStat totals;

        d->major = major(e->devno);
        d->minor = minor(e->devno);
        d->kind = device_kind_to_string(di ? di->kind : DEVICE_NONE);
        if (!di)
                return;
        d->name = report_name(r, di->name);
        d->label = report_name(r, di->label);
        d->parents = report_name(r, di->parents);
        d->rotational = di->rotational >= 0 ? di->rotational : -1;
        d->have_rate = tracker_mount_device_rate(tm, &rate);
        if (d->have_rate) {
                d->write_iops = rate.write_iops;
                d->write_kib_per_s = rate.write_kib_per_s;
        }
        d->have_totals = tracker_mount_device_totals(tm, &totals);
        if (d->have_totals) {
                d->writes_total = totals.writes;
                d->written_bytes_total = totals.write_sectors * 512;
        }
}

static void fill_activity(ReportActivity *ra, const TrackedMount *tm) {
        struct activity a;

        if (!tm || !tracker_mount_activity(tm, &a))
                return;
        *ra = (ReportActivity) {
                .have = true,
                .inodes_per_min = a.est.per_min,
                .inodes_lo = a.est.lo,
                .inodes_hi = a.est.hi,
                .interval_s = a.seconds,
                .sample = a.sample,
                .population = a.population,
                .exact = a.est.exact,
                .shared = a.shared,
                .at = (int64_t) (a.at / USEC_PER_SEC),
        };
        status_activity_updates(&a, &ra->updates_per_min, &ra->updates_lo, &ra->updates_hi);
        ra->writebacks_per_min = a.writebacks_per_min;
        ra->sets_per_min = a.sets_per_min;
        ra->tick_ms = (double) a.tick_ns / 1e6;
        ra->source = activity_source_to_string(a.source);
        ra->counter = a.counter != FS_COUNTER_NONE ? fs_counter_kind_to_string(a.counter) : NULL;
        ra->counter_lo = a.counter_lo;
        ra->counter_hi = a.counter_hi;
        ra->disagrees = a.disagrees;
        ra->coverage = a.coverage > 0 ? a.coverage : 1;
        ra->ready_in_s = -1;
        if (a.ready_at > 0) {
                int64_t now = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC);

                ra->ready_in_s = a.ready_at > now ? a.ready_at - now : 0;
        }
}

static void fill_progress(ReportProgress *rp, const TrackedMount *tm) {
        struct progress p;

        if (!tm || !tracker_mount_progress(tm, &p))
                return;
        *rp = (ReportProgress) { .have = true, .stage = p.stage, .walked = p.walked, .inodes = p.inodes, .eta_s = p.eta_s };
}

/* Why atimed's helper did not list the subvolumes (btrfs.h). */
static const char *btrfs_helper_reason(const struct btrfs_facts *f) {
        if (f->helper_error == -ENXIO)
                return "atimed's helper is not used ([btrfs] snapshot_search = no, or it could not be started)";
        if (f->helper_error == -ENOENT || f->helper_error == -ECONNREFUSED)
                return "atimed's helper is not running (atimed-helper.socket)";
        return "atimed's helper could not read the subvolumes (see the log)";
}

/* Why a btrfs mount's snapshots were not all seen; NULL: they were. */
static const char *btrfs_reason(const struct btrfs_status *b) {
        const struct btrfs_facts *f = &b->facts;

        if (!b->have && b->no_atime && b->error >= 0)
                return "no mount of this filesystem writes atime (noatime or read-only): not looked at yet";
        if (!b->have)
                return b->error < 0 ? "the filesystem's subvolume could not be looked at" : "not looked at yet";
        if (f->sight != BTRFS_SIGHT_NONE && b->subvol != 0 && !b->looked && !btrfs_facts_wanted(f, b->subvol))
                return "more subvolumes of this filesystem are mounted than atimed looks up at once (64): not this one";
        if (f->sight == BTRFS_SIGHT_ALL && f->helper_error == 0)
                return b->looked ? (f->partial ? "the listing of the subvolumes ended before its end (its deadline): "
                                                 "snapshots made last may be missing"
                                               : NULL)
                                 : "this mount's subvolume is no longer among the filesystem's: deleted";
        if (f->sight == BTRFS_SIGHT_ALL)
                return b->looked ? btrfs_helper_reason(f) : "this mount's subvolume is no longer among the filesystem's: deleted";
        if (f->sight == BTRFS_SIGHT_BENEATH)
                return b->looked ? "atimed does not run as root and has no helper: libbtrfsutil shows it only the "
                                   "subvolumes beneath this one"
                                 : "atimed does not run as root and has no helper, and this mount's subvolume is not "
                                   "beneath the one it looks through";
        if (f->sight_error == -EPERM)
                return f->helper_error == -ENXIO
                               ? "atimed's helper is not used ([btrfs] snapshot_search = no), and atimed never holds "
                                 "the CAP_SYS_ADMIN libbtrfsutil's search of the subvolumes needs"
                               : "atimed's helper is not running or could not read them (see the log), and atimed never "
                                 "holds the CAP_SYS_ADMIN libbtrfsutil's search of the subvolumes needs";
        if (f->sight_error == -EOPNOTSUPP)
                return "atimed was built without libbtrfsutil, and its helper did not list them";
        return "libbtrfsutil could not list the subvolumes";
}

/* Why the figures' intervals are wider than the sample's: reads the
 * sample does not cover (btrfs-meter.h); NULL: they are not. */
static const char *btrfs_unseen_reason(const struct btrfs_status *b) {
        const struct btrfs_facts *f = &b->facts;

        if (!b->widened || !b->have)
                return NULL;
        if (f->sight == BTRFS_SIGHT_ALL && f->unseen.known)
                return "snapshotted subvolumes that mounts writing atime reach are not in the sample (those beneath "
                       "the sampled one, or mounted elsewhere): the interval's top holds what their reads may "
                       "un-share (their trees' size, or the metadata's growth where smaller)";
        return "atimed could not list every subvolume: the interval's top holds the metadata's growth, in case reads "
               "of snapshotted subvolumes the sample does not cover made it";
}

/* Where snapshots share this mount's subvolume but the filesystem is
 * sampled through another: the model does not see its reads. Where no
 * mount writes atime: why the bytes are exactly 0. */
static const char *btrfs_model_note(const struct btrfs_status *b) {
        int64_t since;

        if (b->no_atime)
                return "no mount of this filesystem writes atime (noatime or read-only): atime un-shares nothing "
                       "here; it is looked at, not sampled";
        if (b->sampled || !b->looked || !btrfs_shares(&b->self, &b->snapshots, &since))
                return NULL;
        return "the filesystem is sampled through another subvolume, whose snapshots are newer or more: what reads "
               "of this one un-share is counted only in measured intervals, never modelled";
}

/* What the sample does not cover, the intervals held, and the qgroups. */
static void fill_btrfs_rest(ReportBtrfs *rb, const struct btrfs_status *b) {
        rb->have_unseen = b->have && b->facts.sight == BTRFS_SIGHT_ALL && b->facts.unseen.known;
        rb->unseen_subvolumes = b->facts.unseen.count;
        rb->unseen_tree_bytes = (int64_t) MIN(b->facts.unseen.tree_bytes, (uint64_t) INT64_MAX);
        rb->unseen_reason = btrfs_unseen_reason(b);
        rb->pending = b->pending;
        rb->quotas = b->have && b->facts.quotas;
        rb->have_qgroups = rb->quotas && b->facts.have_qgroups && b->looked;
        rb->exclusive = (int64_t) b->self.exclusive;
        rb->snapshots_exclusive = (int64_t) b->snapshots.exclusive;
        rb->qgroups_inconsistent = b->facts.qgroups_inconsistent;
        rb->qgroups_reason = !rb->quotas || rb->have_qgroups ? NULL
                             : b->facts.qgroup_error < 0 ? "the qgroups' bytes could not be read under sysfs"
                                                         : "this mount's subvolume was not seen";
}

static void fill_btrfs(Report *r, ReportBtrfs *rb, const MountEntry *e, const TrackedMount *tm) {
        _cleanup_free_ char *path = NULL;
        struct btrfs_status b;
        char uuid[BTRFS_UUID_STRING_MAX];
        uint64_t id = 0;

        if (!tm || !tracker_mount_btrfs(tm, &b))
                return;
        if (btrfs_subvol_from_options(e->super_options, &id, &path) < 0)
                r->oom = true;
        rb->have = true;
        rb->subvol_id = (int64_t) id;
        rb->subvol_path = report_name(r, path);
        if (b.looked) {
                btrfs_uuid_format(b.self.uuid, uuid);
                rb->subvol_uuid = report_strdup(r, uuid);
        }
        /* Deleted under its mount: the one looked through says so itself;
         * another is missing from the full list. */
        rb->subvol_deleted = b.have && id != 0 &&
                             ((b.facts.deleted && b.facts.self.id == id) ||
                              (b.facts.sight == BTRFS_SIGHT_ALL && !b.looked && !b.facts.partial &&
                               btrfs_facts_wanted(&b.facts, id)));
        rb->seen = btrfs_sight_to_string(b.looked ? b.facts.sight : BTRFS_SIGHT_NONE);
        rb->reason = btrfs_reason(&b);
        rb->have_snapshots = b.looked;
        rb->snapshots = b.snapshots.count;
        rb->snapshots_read_only = b.snapshots.read_only;
        rb->period_s = b.snapshots.period_s;
        /* At the look: the reply is cached between sweeps. */
        rb->newest_age_s = b.snapshots.count ? MAX(b.at - b.snapshots.newest_otime, (int64_t) 0) : -1;
        rb->have_metadata = b.have && b.facts.have_space;
        rb->metadata_bytes_used = (int64_t) b.facts.metadata_bytes_used;
        rb->source = btrfs_bytes_source_to_string(b.source);
        rb->have_rate = b.have_rate;
        rb->unshared_bytes_per_day = b.per_day;
        rb->unshared_bytes = b.total;
        rb->rate_source = btrfs_figure_source_to_string(b.rate_source);
        rb->unshared_lo = b.per_day_lo;
        rb->unshared_hi = b.per_day_hi;
        /* The meter counts the inodes of the subvolume it looks through. */
        rb->have_since = b.since_source != BTRFS_FIGURE_NONE && b.looked && b.self.id == b.facts.self.id;
        rb->since_source = btrfs_figure_source_to_string(b.since_source);
        rb->since_bytes = b.since;
        rb->since_lo = b.since_lo;
        rb->since_hi = b.since_hi;
        rb->inodes_since = b.inodes_since;
        rb->bytes_per_inode = b.bytes_per_inode;
        rb->table_bytes_per_inode = b.table_bytes_per_inode;
        rb->table_bytes_per_dir = b.table_bytes_per_dir;
        rb->model_intervals = b.model_intervals;
        rb->sampled = b.sampled;
        rb->model_note = btrfs_model_note(&b);
        fill_btrfs_rest(rb, &b);
}

static void fill_mount(const View *v, Report *r, ReportMount *rm, const MountEntry *e, const TrackedMount *tm) {
        rm->id = e->id;
        rm->target = report_name(r, e->target);
        rm->source = report_name(r, e->source);
        rm->fstype = report_name(r, e->fstype);
        rm->root = report_name(r, e->root);
        rm->options = report_name(r, e->vfs_options);
        rm->super_options = report_name(r, e->super_options);
        rm->atime = atime_mode_to_string(e->policy.atime);
        rm->nodiratime = e->policy.nodiratime;
        rm->lazytime = e->policy.lazytime;
        rm->read_only = e->policy.read_only;
        rm->stalled = tm && tracker_mount_stalled(tm);
        rm->reachable = e->reachable;
        fill_device(r, &rm->device, e, tm);
        if (tm && tm->probe.have) {
                status_probe(&tm->probe.result, e, &rm->probe);
                rm->probe.reason = report_name(r, rm->probe.reason);
        }
        fill_activity(&rm->activity, tm);
        fill_progress(&rm->progress, tm);
        fill_btrfs(r, &rm->btrfs, e, tm);
        rm->atime_updates_total = v->counters ? status_counters_get(v->counters, e->target) : 0;
}

static const char *policy_options(Report *r, AtimeMode atime, bool lazytime, bool nodiratime) {
        char opts[64];

        snprintf(opts, sizeof opts, "%s%s%s", atime_mode_to_string(atime),
                 nodiratime && atime != ATIME_NOATIME ? ",nodiratime" : "", lazytime ? ",lazytime" : "");
        return report_strdup(r, opts);
}

static void fill_advice(Report *r, ReportAdvice *ra, const struct recommendation *rec) {
        const struct advice *a = &rec->advice;

        *ra = (ReportAdvice) {
                .have = true,
                .action = a->action,
                .current = policy_options(r, rec->in.policy.atime, rec->in.policy.lazytime, rec->in.policy.nodiratime),
                .recommended = policy_options(r, a->atime, a->lazytime, a->nodiratime),
                .confidence = advice_confidence_to_string(a->confidence),
                .saving_updates_per_min = a->saving_updates_per_min,
                .saving_cpu_us_per_s = a->saving_cpu_us_per_s,
                .saving_kib_per_s = a->saving_kib_per_s,
                .saving_bytes_per_day = a->saving_bytes_per_day,
                /* As GetRecommendations lists them, a [mount:PATH]
                 * needs_atime among them. */
                .n_consumers = rec->n_consumers,
        };
        if (rec->change.t > 0) {
                const struct stats_change *c = &rec->change;
                const struct verdict *v = &rec->verdict;

                ra->policy_change.have = true;
                ra->policy_change.at = c->t;
                ra->policy_change.previous = policy_options(r, (AtimeMode) c->from, c->from_flags & STATS_LAZYTIME, false);
                ra->policy_change.current = policy_options(r, (AtimeMode) c->to, c->to_flags & STATS_LAZYTIME, false);
                ra->policy_change.state = verdict_state_to_string(v->state);
                ra->policy_change.have_promise = c->promise.t > 0;
                ra->policy_change.promised_per_min = c->promise.saving_per_min;
                ra->policy_change.have_saved = v->state == VERDICT_MEASURED;
                ra->policy_change.saved_per_min = v->saved_per_min;
                ra->policy_change.saved_lo = v->saved_lo;
                ra->policy_change.saved_hi = v->saved_hi;
        }
}

static void fill_daemon(const View *v, Report *r) {
        char host[256] = "";

        (void) gethostname(host, sizeof host - 1);
        r->version = PACKAGE_VERSION;
        r->hostname = report_strdup(r, host);
        r->started_at = (int64_t) (v->started_realtime / USEC_PER_SEC);
        r->uptime_s = (int64_t) ((now_usec(CLOCK_MONOTONIC) - v->started_monotonic) / USEC_PER_SEC);
        r->taken_at = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC);
        r->stuck_threads = tracker_stuck_threads(v->tracker);
        r->advice_changes = v->counters ? (int64_t) status_counters_advice_changes(v->counters) : 0;
        if (v->ops.mount_changes)
                v->ops.mount_changes(v->ops.userdata, r);
}

int status_report_begin(const View *v, bool with_advice, size_t n_mounts, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        int q;

        q = report_new(&r);
        if (q < 0)
                return q;
        q = report_reserve(r, n_mounts);
        if (q < 0)
                return q;
        r->have_advice = with_advice;
        fill_daemon(v, r);
        *ret = TAKE_PTR(r);
        return 0;
}

int status_report_add(const View *v, Report *r, const MountEntry *e, const TrackedMount *tm,
                      const struct recommendation *rec) {
        ReportMount *rm = report_add_mount(r);

        if (!rm)
                return -ENOMEM;
        fill_mount(v, r, rm, e, tm);
        if (rec)
                fill_advice(r, &rm->advice, rec);
        return r->oom ? -ENOMEM : 0;
}

/* Mounts and advice paired in one pass: recommend() lists the tracked
 * mounts in the table's order. */
static int build(const View *v, const char *target, const struct recommendation *recs, size_t n, bool with_advice,
                 Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        size_t k = 0;
        bool found = false;
        int q;

        q = status_report_begin(v, with_advice, target || !v->mounts ? 1 : v->mounts->n, &r);
        if (q < 0)
                return q;
        for (size_t i = 0; v->mounts && i < v->mounts->n; i++) {
                const MountEntry *e = &v->mounts->entries[i];
                const TrackedMount *tm;
                const struct recommendation *rec = NULL;

                if (target && !streq(target, e->target))
                        continue;
                found = true;
                tm = tracker_find(v->tracker, e->id);
                if (tm && k < n && recs[k].tm == tm)
                        rec = &recs[k++];
                q = status_report_add(v, r, e, tm, rec);
                if (q < 0)
                        return q;
        }
        if (target && !found)
                return -ENOENT;
        *ret = TAKE_PTR(r);
        return 0;
}

int status_report(const View *v, const char *target, bool with_advice, Report **ret) {
        _cleanup_free_ struct recommendation *recs = NULL;
        size_t n = 0;
        int q;

        if (with_advice) {
                q = recommend(v, target, &recs, &n);
                if (q < 0 && q != -ENOENT)
                        return q;
        }
        return build(v, target, recs, n, with_advice, ret);
}

/* ---------------------------------------------------------------- counters */

struct counter {
        struct counter *next;
        uint64_t mark;
        double updates;
        char target[];
};

struct StatusCounters {
        struct counter **buckets;
        size_t n_buckets, n;
        uint64_t mark;
        uint64_t advice_changes;
};

int status_counters_new(StatusCounters **ret) {
        StatusCounters *c = calloc(1, sizeof *c);

        if (!c)
                return -ENOMEM;
        c->n_buckets = 64;
        c->buckets = calloc(c->n_buckets, sizeof *c->buckets);
        if (!c->buckets) {
                free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

StatusCounters *status_counters_free(StatusCounters *c) {
        if (!c)
                return NULL;
        for (size_t b = 0; b < c->n_buckets; b++)
                for (struct counter *x = c->buckets[b], *next; x; x = next) {
                        next = x->next;
                        free(x);
                }
        free(c->buckets);
        free(c);
        return NULL;
}

static struct counter *find(const StatusCounters *c, const char *target) {
        for (struct counter *x = c->buckets[report_string_hash(target) & (c->n_buckets - 1)]; x; x = x->next)
                if (streq(x->target, target))
                        return x;
        return NULL;
}

static void grow(StatusCounters *c) {
        size_t n = c->n_buckets * 2;
        struct counter **b = calloc(n, sizeof *b);

        if (!b)
                return; /* longer chains, still correct */
        for (size_t i = 0; i < c->n_buckets; i++)
                for (struct counter *x = c->buckets[i], *next; x; x = next) {
                        size_t h = report_string_hash(x->target) & (n - 1);

                        next = x->next;
                        x->next = b[h];
                        b[h] = x;
                }
        free(c->buckets);
        c->buckets = b;
        c->n_buckets = n;
}

int status_counters_add(StatusCounters *c, const char *target, double updates) {
        struct counter *x = find(c, target);
        size_t h, len;

        if (!x) {
                if (c->n >= c->n_buckets)
                        grow(c);
                len = strlen(target) + 1;
                x = malloc(sizeof *x + len);
                if (!x)
                        return -ENOMEM;
                *x = (struct counter) { .mark = c->mark };
                memcpy(x->target, target, len);
                h = report_string_hash(target) & (c->n_buckets - 1);
                x->next = c->buckets[h];
                c->buckets[h] = x;
                c->n++;
        }
        if (updates > 0)
                x->updates += updates;
        return 0;
}

double status_counters_get(const StatusCounters *c, const char *target) {
        const struct counter *x = find(c, target);

        return x ? x->updates : 0;
}

void status_counters_prune(StatusCounters *c, const MountTable *t) {
        c->mark++;
        for (size_t i = 0; t && i < t->n; i++) {
                struct counter *x = find(c, t->entries[i].target);

                if (x)
                        x->mark = c->mark;
        }
        for (size_t b = 0; b < c->n_buckets; b++)
                for (struct counter **p = &c->buckets[b]; *p;) {
                        struct counter *x = *p;

                        if (x->mark == c->mark) {
                                p = &x->next;
                                continue;
                        }
                        *p = x->next;
                        free(x);
                        c->n--;
                }
}

void status_counters_advice_changed(StatusCounters *c) {
        c->advice_changes++;
}

uint64_t status_counters_advice_changes(const StatusCounters *c) {
        return c->advice_changes;
}
