/* report-parse.c: atimed's replies read back into a Report (report.h), once,
 * so that atimectl renders every command from the same typed values. A
 * field missing or of another type reads as unknown; numbers out of range
 * are held at the range's ends, never converted with undefined behaviour. */
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "protocol.h"
#include "varlink.h"

static json_object *member(json_object *o, const char *key, json_type type) {
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static const char *str(Report *r, json_object *o, const char *key) {
        json_object *v = member(o, key, json_type_string);

        return v ? report_strdup(r, json_object_get_string(v)) : NULL;
}

static bool boolean(json_object *o, const char *key) {
        json_object *v = member(o, key, json_type_boolean);

        return v && json_object_get_boolean(v);
}

/* A number, and finite: json-c reads NaN, Infinity and 1e999 (inf) too,
 * which no field of atimed's holds; they read as unknown. */
static bool is_number(json_object *v) {
        return json_object_is_type(v, json_type_int) ||
               (json_object_is_type(v, json_type_double) && isfinite(json_object_get_double(v)));
}

static bool number(json_object *o, const char *key, double *ret) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) || !is_number(v))
                return false;
        *ret = json_object_get_double(v);
        return true;
}

static int64_t clamp_i64(double v) {
        if (isnan(v))
                return 0;
        return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t) v;
}

static uint64_t clamp_u64(double v) {
        return !(v > 0) ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t) v;
}

/* A JSON number as a whole number: an integer as it is, else held in range. */
static int64_t whole_of(json_object *v) {
        return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : clamp_i64(json_object_get_double(v));
}

/* o[key] as a whole number; 'missing' where it is not a number. */
static int64_t integer_or(json_object *o, const char *key, int64_t missing) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) || !is_number(v))
                return missing;
        return whole_of(v);
}

static int64_t integer(json_object *o, const char *key) {
        return integer_or(o, key, 0);
}

static bool pair(json_object *o, const char *key, double *lo, double *hi) {
        json_object *a = member(o, key, json_type_array);

        if (!a || json_object_array_length(a) != 2 || !is_number(json_object_array_get_idx(a, 0)) ||
            !is_number(json_object_array_get_idx(a, 1)))
                return false;
        *lo = json_object_get_double(json_object_array_get_idx(a, 0));
        *hi = json_object_get_double(json_object_array_get_idx(a, 1));
        return true;
}

/* The elements of a JSON array as strings (an element that is not one: its
 * JSON text; null: NULL). A missing array is an empty list. */
static int strings_from_json(Report *r, json_object *arr, const char ***ret, size_t *ret_n) {
        size_t n = arr ? json_object_array_length(arr) : 0;
        const char **l = report_alloc(r, n, sizeof *l);

        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                l[i] = report_strdup(r, json_object_get_string(json_object_array_get_idx(arr, i)));
        *ret = l;
        *ret_n = n;
        return r->oom ? -ENOMEM : 0;
}

/* A JSON array of numbers and nulls as a series; with field, of objects,
 * each one's field. */
static int series_from_json(Report *r, json_object *arr, const char *field, ReportSeries *ret) {
        size_t n = json_object_array_length(arr);

        ret->n = n;
        ret->value = report_alloc(r, n, sizeof *ret->value);
        ret->present = report_alloc(r, n, sizeof *ret->present);
        if (!ret->value || !ret->present)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(arr, i);

                if (field)
                        ret->present[i] = number(e, field, &ret->value[i]);
                else if ((ret->present[i] = is_number(e)))
                        ret->value[i] = json_object_get_double(e);
        }
        return 0;
}

static void device_from_json(Report *r, json_object *o, ReportDevice *d) {
        double v;

        d->major = integer(o, F_MAJOR);
        d->minor = integer(o, F_MINOR);
        d->name = str(r, o, F_NAME);
        d->kind = str(r, o, F_KIND);
        d->label = str(r, o, F_LABEL);
        d->parents = str(r, o, F_PARENTS);
        d->rotational = member(o, F_ROTATIONAL, json_type_boolean) ? boolean(o, F_ROTATIONAL) : -1;
        d->have_rate = number(o, F_WRITE_IOPS, &d->write_iops) && number(o, F_WRITE_KIB_PER_S, &d->write_kib_per_s);
        d->have_totals = number(o, F_WRITES_TOTAL, &v);
        d->writes_total = d->have_totals ? clamp_u64(v) : 0;
        d->have_totals = d->have_totals && number(o, F_WRITTEN_BYTES_TOTAL, &v);
        d->written_bytes_total = d->have_totals ? clamp_u64(v) : 0;
}

static void probe_from_json(Report *r, json_object *o, ReportProbe *p) {
        p->have = o != NULL;
        p->verified = boolean(o, F_VERIFIED);
        p->effective = str(r, o, F_EFFECTIVE);
        p->at = integer(o, F_AT);
        p->reason = str(r, o, F_REASON);
        p->explanation = str(r, o, F_EXPLANATION);
        p->matches_table = member(o, F_MATCHES_TABLE, json_type_boolean) ? boolean(o, F_MATCHES_TABLE) : -1;
}

static void progress_from_json(Report *r, json_object *o, ReportProgress *p) {
        double v;

        p->stage = str(r, o, F_STAGE);
        p->have = p->stage != NULL;
        p->walked = number(o, F_WALKED, &v) ? clamp_u64(v) : 0;
        p->inodes = number(o, F_INODES, &v) ? clamp_u64(v) : 0;
        p->eta_s = number(o, F_ETA_S, &v) && v >= 0 ? clamp_i64(v) : -1;
}

static void activity_from_json(Report *r, json_object *o, ReportActivity *a) {
        double v;

        a->have = number(o, F_ATIME_INODES_PER_MIN, &a->inodes_per_min) &&
                  pair(o, F_CI95, &a->inodes_lo, &a->inodes_hi);
        /* Before the first figure, the interval may be known already. */
        (void) number(o, F_INTERVAL_S, &a->interval_s);
        if (!a->have)
                return;
        /* A daemon without the updates figure: the inodes stand for it, as
         * in the daemon's own report (daemon/status.c). */
        if (!number(o, F_ATIME_UPDATES_PER_MIN, &a->updates_per_min) || !pair(o, F_UPDATES_CI95, &a->updates_lo, &a->updates_hi)) {
                a->updates_per_min = a->inodes_per_min;
                a->updates_lo = a->inodes_lo;
                a->updates_hi = a->inodes_hi;
        }
        (void) number(o, F_ATIME_SETS_PER_MIN, &a->sets_per_min);
        a->sample = (uint64_t) integer(o, F_SAMPLE_SIZE);
        a->population = (uint64_t) integer(o, F_POPULATION);
        a->exact = boolean(o, F_EXACT);
        a->shared = boolean(o, F_SHARED);
        a->at = integer(o, F_AT);
        a->source = str(r, o, F_FIGURE_SOURCE);
        a->counter = str(r, o, F_KERNEL_COUNTER);
        if (!a->counter || !pair(o, F_KERNEL_TRANSACTIONS_PER_MIN, &a->counter_lo, &a->counter_hi))
                a->counter = NULL;
        a->disagrees = boolean(o, F_COUNTER_DISAGREES);
        /* A daemon before coverage: its figures rest on whole walks. */
        if (!number(o, F_COVERAGE, &a->coverage))
                a->coverage = 1;
        a->ready_in_s = number(o, F_READY_IN_S, &v) && v >= 0 ? clamp_i64(v) : -1;
}

/* The model's side of a btrfs object: the rate's interval and source,
 * the total since the newest snapshot, and the qgroups. */
static void btrfs_model_from_json(Report *r, json_object *o, ReportBtrfs *b) {
        json_object *since = member(o, F_SINCE_SNAPSHOT, json_type_object), *q = member(o, F_QGROUPS, json_type_object);
        json_object *u = member(o, F_UNSEEN, json_type_object);
        double v;

        b->rate_source = str(r, o, F_RATE_SOURCE);
        (void) number(o, F_UNSHARED_LO, &b->unshared_lo);
        (void) number(o, F_UNSHARED_HI, &b->unshared_hi);
        (void) number(o, F_BYTES_PER_INODE, &b->bytes_per_inode);
        (void) number(o, F_TABLE_BYTES_PER_INODE, &b->table_bytes_per_inode);
        (void) number(o, F_TABLE_BYTES_PER_DIR, &b->table_bytes_per_dir);
        b->model_intervals = integer(o, F_MODEL_INTERVALS);
        /* A daemon before the field sampled every mount it modelled. */
        b->sampled = member(o, F_SAMPLED, json_type_boolean) ? boolean(o, F_SAMPLED) : true;
        b->model_note = str(r, o, F_MODEL_NOTE);
        b->quotas = q != NULL;
        b->have_qgroups = q && number(q, F_EXCLUSIVE, &v);
        b->exclusive = b->have_qgroups ? clamp_i64(v) : 0;
        b->snapshots_exclusive = q && number(q, F_SNAPSHOTS_EXCLUSIVE, &v) ? clamp_i64(v) : 0;
        b->qgroups_inconsistent = q && boolean(q, F_INCONSISTENT);
        b->qgroups_reason = q ? str(r, q, F_REASON) : NULL;
        /* Both optional: a daemon before them has neither. */
        b->have_unseen = u && number(u, F_SUBVOLUMES, &v);
        b->unseen_subvolumes = b->have_unseen ? clamp_i64(v) : 0;
        b->unseen_tree_bytes = u && number(u, F_TREE_BYTES, &v) ? clamp_i64(v) : 0;
        b->unseen_reason = u ? str(r, u, F_REASON) : NULL;
        b->pending = integer(o, F_PENDING);
        b->have_since = since != NULL;
        b->inodes_since = -1;
        if (!since)
                return;
        (void) number(since, F_BYTES, &b->since_bytes);
        (void) number(since, F_LO, &b->since_lo);
        (void) number(since, F_HI, &b->since_hi);
        (void) number(since, F_INODES, &b->inodes_since);
        b->since_source = str(r, since, F_RATE_SOURCE);
}

static void btrfs_from_json(Report *r, json_object *o, ReportBtrfs *b) {
        json_object *sub = member(o, F_SUBVOLUME, json_type_object), *snaps = member(o, F_SNAPSHOTS, json_type_object);
        double v;

        b->have = o != NULL;
        if (!b->have)
                return;
        b->subvol_id = integer(sub, F_SUBVOLUME_ID);
        b->subvol_uuid = str(r, sub, F_UUID);
        b->subvol_path = str(r, sub, F_PATH);
        b->subvol_deleted = boolean(sub, F_DELETED);
        b->seen = str(r, snaps, F_SEEN);
        b->reason = str(r, snaps, F_REASON);
        b->have_snapshots = number(snaps, F_COUNT, &v);
        b->snapshots = b->have_snapshots ? clamp_i64(v) : 0;
        b->snapshots_read_only = integer(snaps, F_READ_ONLY);
        b->newest_age_s = number(snaps, F_NEWEST_AGE_S, &v) ? clamp_i64(v) : -1;
        b->have_metadata = number(o, F_METADATA_BYTES_USED, &v);
        b->metadata_bytes_used = b->have_metadata ? clamp_i64(v) : 0;
        b->have_rate = number(o, F_UNSHARED_BYTES_PER_DAY, &b->unshared_bytes_per_day);
        (void) number(o, F_UNSHARED_BYTES, &b->unshared_bytes);
        b->source = str(r, o, F_BYTES_SOURCE);
        b->period_s = number(snaps, F_PERIOD_S, &v) && v > 0 ? clamp_i64(v) : 0;
        btrfs_model_from_json(r, o, b);
}

/* A new mount at the end with the target of o, which must be an object
 * with one: -EBADMSG if not. */
static int mount_add(Report *r, json_object *o, ReportMount **ret) {
        ReportMount *m;

        if (!json_object_is_type(o, json_type_object) || !member(o, F_TARGET, json_type_string))
                return -EBADMSG;
        m = report_add_mount(r);
        if (!m)
                return -ENOMEM;
        m->target = str(r, o, F_TARGET);
        m->id = (int) MAX(MIN(integer_or(o, F_MOUNT_ID, -1), (int64_t) INT_MAX), (int64_t) -1);
        m->fstype = str(r, o, F_FSTYPE);
        *ret = m;
        return m->target ? 0 : -ENOMEM;
}

/* A policy as a reply gives it: its mount options, its atime mode and
 * its two flags (a mount's, and an advice's current and recommended). */
static void policy_from_json(Report *r, json_object *o, const char **options, const char **atime, bool *lazytime,
                             bool *nodiratime) {
        *options = str(r, o, F_OPTIONS);
        *atime = str(r, o, F_ATIME);
        *lazytime = boolean(o, F_LAZYTIME);
        *nodiratime = boolean(o, F_NODIRATIME);
}

static int mount_from_json(Report *r, json_object *o) {
        json_object *h = member(o, F_HISTORY, json_type_array);
        ReportMount *m;
        int q = mount_add(r, o, &m);

        if (q < 0)
                return q;
        m->source = str(r, o, F_SOURCE);
        m->root = str(r, o, F_ROOT);
        m->super_options = str(r, o, F_SUPER_OPTIONS);
        policy_from_json(r, o, &m->options, &m->atime, &m->lazytime, &m->nodiratime);
        m->read_only = boolean(o, F_READ_ONLY);
        m->stalled = boolean(o, F_STALLED);
        m->reachable = !member(o, F_REACHABLE, json_type_boolean) || boolean(o, F_REACHABLE);
        (void) number(o, F_ATIME_UPDATES_TOTAL, &m->atime_updates_total);
        device_from_json(r, member(o, F_DEVICE, json_type_object), &m->device);
        probe_from_json(r, member(o, F_PROBE, json_type_object), &m->probe);
        activity_from_json(r, member(o, F_ACTIVITY, json_type_object), &m->activity);
        progress_from_json(r, member(o, F_PROGRESS, json_type_object), &m->progress);
        btrfs_from_json(r, member(o, F_BTRFS, json_type_object), &m->btrfs);
        m->have_history = h != NULL;
        return h ? series_from_json(r, h, NULL, &m->history) : 0;
}

static void change_from_json(Report *r, json_object *o, ReportChange *c) {
        json_object *ci = member(o, F_SAVED_CI95, json_type_array);

        if (!o || !member(o, F_AT, json_type_int))
                return;
        c->have = true;
        c->at = integer(o, F_AT);
        c->previous = str(r, o, F_PREVIOUS);
        c->current = str(r, o, F_CURRENT);
        c->advised = str(r, o, F_ADVISED);
        c->state = str(r, o, F_STATE);
        c->comparison = str(r, o, F_COMPARISON);
        c->have_promise = number(o, F_PROMISED_PER_MIN, &c->promised_per_min);
        c->have_saved = number(o, F_SAVED_PER_MIN, &c->saved_per_min);
        (void) number(o, F_POINTS_BEFORE, &c->points_before);
        (void) number(o, F_POINTS_AFTER, &c->points_after);
        c->resolution_s = integer(o, F_RESOLUTION_S);
        c->saved_lo = c->saved_hi = c->saved_per_min;
        c->have_saved_ci = ci && json_object_array_length(ci) == 2;
        if (c->have_saved_ci) {
                json_object *lo = json_object_array_get_idx(ci, 0), *hi = json_object_array_get_idx(ci, 1);

                if (is_number(lo))
                        c->saved_lo = json_object_get_double(lo);
                if (is_number(hi))
                        c->saved_hi = json_object_get_double(hi);
        }
}

static int consumers_from_json(Report *r, json_object *arr, ReportAdvice *a) {
        size_t n = arr ? json_object_array_length(arr) : 0;

        a->consumers = report_alloc(r, n, sizeof *a->consumers);
        if (!a->consumers)
                return -ENOMEM;
        a->n_consumers = n;
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(arr, i);

                a->consumers[i] = (ReportConsumer) { .need = str(r, c, F_NEED), .why = str(r, c, F_WHY),
                                                     .source = str(r, c, F_SOURCE) };
        }
        return 0;
}

static int advice_from_json(Report *r, json_object *o, ReportAdvice *a) {
        json_object *saving = member(o, F_SAVING, json_type_object), *cur = member(o, F_CURRENT, json_type_object);
        json_object *want = member(o, F_RECOMMENDED, json_type_object);

        a->have = true;
        a->action = str(r, o, F_ACTION);
        a->change = boolean(o, F_CHANGE);
        policy_from_json(r, cur, &a->current, &a->current_atime, &a->current_lazytime, &a->current_nodiratime);
        policy_from_json(r, want, &a->recommended, &a->recommended_atime, &a->recommended_lazytime,
                         &a->recommended_nodiratime);
        a->confidence = str(r, o, F_CONFIDENCE);
        a->basis = str(r, o, F_BASIS);
        (void) number(member(o, F_EVIDENCE, json_type_object), F_OBSERVED_S, &a->observed_s);
        if (!number(saving, F_ATIME_UPDATES_PER_MIN, &a->saving_updates_per_min))
                (void) number(saving, F_ATIME_WRITES_PER_MIN, &a->saving_updates_per_min);
        (void) number(saving, F_CPU_US_PER_S, &a->saving_cpu_us_per_s);
        (void) number(saving, F_WRITE_KIB_PER_S, &a->saving_kib_per_s);
        (void) number(saving, F_METADATA_BYTES_PER_DAY, &a->saving_bytes_per_day);
        change_from_json(r, member(o, F_POLICY_CHANGE, json_type_object), &a->policy_change);
        if (strings_from_json(r, member(o, F_REASONS, json_type_array), &a->reasons, &a->n_reasons) < 0)
                return -ENOMEM;
        return consumers_from_json(r, member(o, F_CONSUMERS, json_type_array), a);
}

/* Each recommendation goes to the first mount at its target that has no
 * advice yet: over-mounted targets pair up in order, as both replies list
 * mounts in the order of the mount table. */
static int pair_advice(Report *r, json_object *recs) {
        size_t size = 16, n = json_object_array_length(recs);
        _cleanup_free_ size_t *slots = NULL; /* index + 1; 0: empty */

        while (size < 2 * r->n_mounts)
                size *= 2;
        slots = calloc(size, sizeof *slots);
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_mounts; i++) {
                size_t s = report_string_hash(r->mounts[i].target) & (size - 1);

                while (slots[s])
                        s = (s + 1) & (size - 1);
                slots[s] = i + 1;
        }
        for (size_t k = 0; k < n; k++) {
                json_object *o = json_object_array_get_idx(recs, k), *t = member(o, F_TARGET, json_type_string);
                const char *target = t ? json_object_get_string(t) : NULL;

                if (!target)
                        return -EBADMSG;
                for (size_t s = report_string_hash(target) & (size - 1); slots[s]; s = (s + 1) & (size - 1)) {
                        ReportMount *m = &r->mounts[slots[s] - 1];

                        if (!m->advice.have && streq(m->target, target)) {
                                int q = advice_from_json(r, o, &m->advice);
                                if (q < 0)
                                        return q;
                                break;
                        }
                }
        }
        r->have_advice = true;
        return 0;
}

/* A new Report with room for n mounts, for a reply that has what it
 * cannot do without (required): -EBADMSG if it has not. */
static int report_begin(bool required, size_t n, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        int q = required ? report_new(&r) : -EBADMSG;

        if (q >= 0)
                q = report_reserve(r, n);
        if (q < 0)
                return q;
        *ret = TAKE_PTR(r);
        return 0;
}

/* The end of every parse: the report, unless a copy failed on the way. */
static int report_end(Report **r, int q, Report **ret) {
        if (q >= 0 && (*r)->oom)
                q = -ENOMEM;
        if (q < 0)
                return q;
        *ret = TAKE_PTR(*r);
        return 0;
}

static void daemon_from_json(Report *r, json_object *status) {
        r->version = str(r, status, F_VERSION);
        r->hostname = str(r, status, F_HOSTNAME);
        r->started_at = integer_or(status, F_STARTED_AT, -1);
        r->uptime_s = integer_or(status, F_UPTIME_S, -1);
        r->stuck_threads = integer_or(status, F_STUCK_THREADS, -1);
        r->advice_changes = integer_or(status, F_ADVICE_CHANGES, -1);
        {
                json_object *mc = member(status, F_MOUNT_CHANGES, json_type_object);

                if (mc) {
                        r->mount_changes.source = str(r, mc, F_MC_SOURCE);
                        r->mount_changes.reason = str(r, mc, F_MC_REASON);
                        r->mount_changes.events = integer_or(mc, F_MC_EVENTS, -1);
                        r->mount_changes.resyncs = integer_or(mc, F_MC_RESYNCS, -1);
                        r->mount_changes.mounts = integer_or(mc, F_MC_MOUNTS, -1);
                }
        }
        r->taken_at = r->started_at >= 0 && r->uptime_s >= 0 && r->started_at <= INT64_MAX - r->uptime_s
                              ? r->started_at + r->uptime_s
                              : -1;
}

int report_from_json(json_object *status, json_object *recs_reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        json_object *mounts = member(status, F_MOUNTS, json_type_array);
        json_object *recs = member(recs_reply, F_RECOMMENDATIONS, json_type_array);
        int q;

        q = report_begin(mounts, mounts ? json_object_array_length(mounts) : 0, &r);
        if (q < 0)
                return q;
        daemon_from_json(r, status);
        for (size_t i = 0; q >= 0 && i < json_object_array_length(mounts); i++)
                q = mount_from_json(r, json_object_array_get_idx(mounts, i));
        if (q >= 0 && recs)
                q = pair_advice(r, recs);
        return report_end(&r, q, ret);
}

int report_from_status(json_object *status, Report **ret) {
        return report_from_json(status, NULL, ret);
}

int report_from_recommendations(json_object *reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        json_object *recs = member(reply, F_RECOMMENDATIONS, json_type_array);
        int q;

        q = report_begin(recs, recs ? json_object_array_length(recs) : 0, &r);
        for (size_t i = 0; q >= 0 && i < json_object_array_length(recs); i++) {
                json_object *o = json_object_array_get_idx(recs, i);
                ReportMount *m;

                q = mount_add(r, o, &m);
                if (q >= 0)
                        q = advice_from_json(r, o, &m->advice);
        }
        if (q >= 0)
                r->have_advice = true;
        return report_end(&r, q, ret);
}

/* The beginning of a reply about the one mount it names (its target), not
 * one of the table's (no id); 'required': what it cannot do without is there. */
static int report_begin_one(json_object *reply, bool required, Report **r, ReportMount **ret) {
        int q = report_begin(required, 1, r);

        if (q < 0)
                return q;
        *ret = report_add_mount(*r);
        (*ret)->id = -1;
        (*ret)->target = str(*r, reply, F_TARGET);
        return 0;
}

int report_from_consumers(json_object *reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        json_object *list = member(reply, F_CONSUMERS, json_type_array);
        ReportMount *m;
        int q;

        q = report_begin_one(reply, list && member(reply, F_TARGET, json_type_string), &r, &m);
        if (q < 0)
                return q;
        m->advice.have = true;
        q = consumers_from_json(r, list, &m->advice);
        return report_end(&r, q, ret);
}

static int points_from_json(Report *r, json_object *arr, ReportHistory *h) {
        size_t n = json_object_array_length(arr);

        h->n_points = n;
        h->points = report_alloc(r, n, sizeof *h->points);
        if (!h->points || series_from_json(r, arr, F_ATIME_UPDATES_PER_MIN, &h->updates) < 0 ||
            series_from_json(r, arr, F_WRITE_IOPS, &h->iops) < 0 ||
            series_from_json(r, arr, F_UNSHARED_BYTES_PER_DAY, &h->unshared) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *pt = json_object_array_get_idx(arr, i);

                h->points[i] = (ReportPoint) { .t = integer(pt, F_T), .samples = integer(pt, F_SAMPLES),
                                               .atime = str(r, pt, F_ATIME),
                                               .policy_changed = boolean(pt, F_POLICY_CHANGED) };
                h->points[i].unshared_modelled = h->unshared.present[i] && str(r, pt, F_UNSHARED_SOURCE) &&
                                                 streq(str(r, pt, F_UNSHARED_SOURCE), "modelled");
        }
        return 0;
}

int report_from_history(json_object *reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        json_object *points = member(reply, F_POINTS, json_type_array), *rs = member(reply, F_RESOLUTIONS_S, json_type_array);
        ReportHistory *h;
        int q;

        q = report_begin(points, 0, &r);
        if (q < 0)
                return q;
        h = &r->history;
        h->have = true;
        h->target = str(r, reply, F_TARGET);
        h->reason = str(r, reply, F_REASON);
        h->resolution_s = integer(reply, F_RESOLUTION_S);
        h->since = integer(reply, F_SINCE);
        h->until = integer(reply, F_UNTIL);
        change_from_json(r, member(reply, F_POLICY_CHANGE, json_type_object), &h->policy_change);
        h->n_resolutions = rs ? json_object_array_length(rs) : 0;
        h->resolutions_s = report_alloc(r, h->n_resolutions, sizeof *h->resolutions_s);
        for (size_t i = 0; h->resolutions_s && i < h->n_resolutions; i++)
                h->resolutions_s[i] = whole_of(json_object_array_get_idx(rs, i));
        q = h->resolutions_s ? points_from_json(r, points, h) : -ENOMEM;
        return report_end(&r, q, ret);
}

int report_from_probe(json_object *reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        json_object *p = member(reply, F_PROBE, json_type_object);
        ReportMount *m;
        int q;

        q = report_begin_one(reply, p, &r, &m);
        if (q < 0)
                return q;
        probe_from_json(r, p, &m->probe);
        return report_end(&r, 0, ret);
}

int report_from_reload(json_object *reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        int q = report_begin(true, 0, &r);

        if (q < 0)
                return q;
        r->config = str(r, reply, F_CONFIG);
        q = strings_from_json(r, member(reply, P_ERRORS, json_type_array), &r->errors, &r->n_errors);
        return report_end(&r, q, ret);
}

int report_from_error(json_object *params, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        int q = report_begin(true, 0, &r);

        if (q < 0)
                return q;
        r->error.target = str(r, params, F_TARGET);
        r->error.reason = str(r, params, P_REASON);
        r->error.parameter = str(r, params, P_PARAMETER);
        return report_end(&r, 0, ret);
}
