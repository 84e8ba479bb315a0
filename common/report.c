/* report.c: the typed model of atimed's state (see report.h): its strings,
 * its JSON form, and its reading back from JSON. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "protocol.h"
#include "varlink.h"

/* Strings live in chunks that never move, so that pointers into them stay
 * valid while more are added; the report frees them all at once. */
#define CHUNK_MIN 16384

struct report_chunk {
        struct report_chunk *next;
        size_t used, size;
        char data[];
};

int report_new(Report **ret) {
        Report *r = calloc(1, sizeof *r);

        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

Report *report_free(Report *r) {
        if (!r)
                return NULL;
        for (struct report_chunk *c = r->strings, *next; c; c = next) {
                next = c->next;
                free(c);
        }
        free(r->mounts);
        free(r);
        return NULL;
}

const char *report_strdup(Report *r, const char *s) {
        struct report_chunk *c = r->strings;
        size_t len;
        char *p;

        if (!s)
                return NULL;
        len = strlen(s) + 1;
        if (!c || c->size - c->used < len) {
                size_t size = MAX(len, (size_t) CHUNK_MIN);

                c = malloc(sizeof *c + size);
                if (!c) {
                        r->oom = true;
                        return NULL;
                }
                *c = (struct report_chunk) { .next = r->strings, .size = size };
                r->strings = c;
        }
        p = c->data + c->used;
        memcpy(p, s, len);
        c->used += len;
        return p;
}

int report_reserve(Report *r, size_t n) {
        ReportMount *v;

        if (n <= r->n_allocated)
                return 0;
        v = reallocarray(r->mounts, n, sizeof *v);
        if (!v)
                return -ENOMEM;
        r->mounts = v;
        r->n_allocated = n;
        return 0;
}

ReportMount *report_add_mount(Report *r) {
        ReportMount *m;

        if (r->n_mounts == r->n_allocated && report_reserve(r, MAX(r->n_allocated * 2, (size_t) 16)) < 0)
                return NULL;
        m = &r->mounts[r->n_mounts++];
        *m = (ReportMount) { .reachable = true, .device.rotational = -1, .probe.matches_table = -1 };
        return m;
}

/* ---------------------------------------------------------------- to JSON */

json_object *report_json_rounded(double v, int decimals) {
        char buf[64];
        char *dot;

        snprintf(buf, sizeof buf, "%.*f", decimals, v);
        dot = strchr(buf, '.');
        if (dot) {
                char *end = buf + strlen(buf) - 1;

                while (end > dot && *end == '0')
                        *end-- = 0;
                if (end == dot)
                        *end = 0;
        }
        if (streq(buf, "-0"))
                strcpy(buf, "0");
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

/* json-c's NULL is JSON null: add() must not take it for OOM there. */
static int add_nullable(json_object *o, const char *key, json_object *v) {
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

static json_object *string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

static json_object *pair_rounded(double lo, double hi, int decimals) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a || json_object_array_add(a, report_json_rounded(lo, decimals)) < 0 ||
            json_object_array_add(a, report_json_rounded(hi, decimals)) < 0)
                return NULL;
        return TAKE_PTR(a);
}

json_object *report_probe_to_json(const ReportProbe *p) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (add_nullable(o, F_EFFECTIVE, p->verified ? string_or_null(p->effective) : NULL) < 0 ||
            add(o, F_VERIFIED, json_object_new_boolean(p->verified)) < 0 || add(o, F_AT, json_object_new_int64(p->at)) < 0 ||
            add_nullable(o, F_REASON, p->verified ? NULL : json_object_new_string(p->reason ? p->reason : "")) < 0 ||
            add_nullable(o, F_MATCHES_TABLE, p->matches_table >= 0 ? json_object_new_boolean(p->matches_table) : NULL) < 0 ||
            (p->explanation && add(o, F_EXPLANATION, json_object_new_string(p->explanation)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

static json_object *activity_to_json(const ReportActivity *a) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (add(o, F_ATIME_UPDATES_PER_MIN, report_json_rounded(a->updates_per_min, 2)) < 0 ||
            add(o, F_UPDATES_CI95, pair_rounded(a->updates_lo, a->updates_hi, 2)) < 0 ||
            add(o, F_WRITEBACKS_PER_MIN, report_json_rounded(a->writebacks_per_min, 2)) < 0 ||
            add(o, F_TICK_MS, report_json_rounded(a->tick_ms, 3)) < 0 ||
            add(o, F_ATIME_SETS_PER_MIN, report_json_rounded(a->sets_per_min, 2)) < 0 ||
            add(o, F_ATIME_INODES_PER_MIN, report_json_rounded(a->inodes_per_min, 2)) < 0 ||
            add(o, F_CI95, pair_rounded(a->inodes_lo, a->inodes_hi, 2)) < 0 ||
            add(o, F_INTERVAL_S, report_json_rounded(a->interval_s, 3)) < 0 ||
            add(o, F_SAMPLE_SIZE, json_object_new_int64((int64_t) a->sample)) < 0 ||
            add(o, F_POPULATION, json_object_new_int64((int64_t) a->population)) < 0 ||
            add(o, F_EXACT, json_object_new_boolean(a->exact)) < 0 ||
            add(o, F_SHARED, json_object_new_boolean(a->shared)) < 0 ||
            add_nullable(o, F_AT, a->at ? json_object_new_int64(a->at) : NULL) < 0 ||
            add_nullable(o, F_FIGURE_SOURCE, a->source ? json_object_new_string(a->source) : NULL) < 0 ||
            add_nullable(o, F_KERNEL_COUNTER, a->counter ? json_object_new_string(a->counter) : NULL) < 0 ||
            add_nullable(o, F_KERNEL_TRANSACTIONS_PER_MIN,
                         a->counter ? pair_rounded(a->counter_lo, a->counter_hi, 2) : NULL) < 0 ||
            add(o, F_COUNTER_DISAGREES, json_object_new_boolean(a->disagrees)) < 0 ||
            add(o, F_COVERAGE, report_json_rounded(a->coverage, 4)) < 0 ||
            add_nullable(o, F_READY_IN_S, a->ready_in_s >= 0 ? json_object_new_int64(a->ready_in_s) : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *device_to_json(const ReportDevice *d) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (add(o, F_MAJOR, json_object_new_int64(d->major)) < 0 || add(o, F_MINOR, json_object_new_int64(d->minor)) < 0 ||
            add_nullable(o, F_NAME, string_or_null(d->name)) < 0 || add(o, F_KIND, json_object_new_string(d->kind)) < 0 ||
            add_nullable(o, F_LABEL, string_or_null(d->label)) < 0 ||
            add_nullable(o, F_PARENTS, string_or_null(d->parents)) < 0 ||
            add_nullable(o, F_ROTATIONAL, d->rotational >= 0 ? json_object_new_boolean(d->rotational) : NULL) < 0 ||
            add_nullable(o, F_WRITE_IOPS, d->have_rate ? report_json_rounded(d->write_iops, 2) : NULL) < 0 ||
            add_nullable(o, F_WRITE_KIB_PER_S, d->have_rate ? report_json_rounded(d->write_kib_per_s, 2) : NULL) < 0 ||
            add_nullable(o, F_WRITES_TOTAL, d->have_totals ? json_object_new_int64((int64_t) d->writes_total) : NULL) < 0 ||
            add_nullable(o, F_WRITTEN_BYTES_TOTAL,
                         d->have_totals ? json_object_new_int64((int64_t) d->written_bytes_total) : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* Null once there is a figure; until then, what the mount waits for. */
static json_object *progress_to_json(const ReportProgress *p) {
        _cleanup_json_ json_object *o = NULL;

        if (!p->have)
                return NULL;
        o = json_object_new_object();
        if (!o || add(o, F_STAGE, json_object_new_string(p->stage)) < 0 ||
            add(o, F_WALKED, json_object_new_int64((int64_t) p->walked)) < 0 ||
            add_nullable(o, F_INODES, p->inodes ? json_object_new_int64((int64_t) p->inodes) : NULL) < 0 ||
            add_nullable(o, F_ETA_S, p->eta_s >= 0 ? json_object_new_int64(p->eta_s) : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* The bytes un-shared since the newest snapshot; null without a figure. */
static json_object *since_to_json(const ReportBtrfs *b) {
        _cleanup_json_ json_object *o = NULL;

        if (!b->have_since)
                return NULL;
        o = json_object_new_object();
        if (!o || add(o, F_BYTES, report_json_rounded(b->since_bytes, 0)) < 0 ||
            add(o, F_LO, report_json_rounded(b->since_lo, 0)) < 0 ||
            add(o, F_HI, report_json_rounded(b->since_hi, 0)) < 0 ||
            add(o, F_RATE_SOURCE, json_object_new_string(b->since_source ? b->since_source : "none")) < 0 ||
            add_nullable(o, F_INODES, b->inodes_since >= 0 ? report_json_rounded(b->inodes_since, 0) : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* The qgroups' bytes where quotas are on; null where they are off. */
static json_object *qgroups_to_json(const ReportBtrfs *b) {
        _cleanup_json_ json_object *o = NULL;

        if (!b->quotas)
                return NULL;
        o = json_object_new_object();
        if (!o ||
            add_nullable(o, F_EXCLUSIVE, b->have_qgroups ? json_object_new_int64(b->exclusive) : NULL) < 0 ||
            add_nullable(o, F_SNAPSHOTS_EXCLUSIVE, b->have_qgroups ? json_object_new_int64(b->snapshots_exclusive) : NULL) < 0 ||
            add(o, F_INCONSISTENT, json_object_new_boolean(b->qgroups_inconsistent)) < 0 ||
            add_nullable(o, F_REASON, string_or_null(b->qgroups_reason)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* The rate's interval and source, and the model: beside the rest. */
static int btrfs_model_to_json(json_object *o, const ReportBtrfs *b) {
        if (add_nullable(o, F_UNSHARED_LO, b->have_rate ? report_json_rounded(b->unshared_lo, 0) : NULL) < 0 ||
            add_nullable(o, F_UNSHARED_HI, b->have_rate ? report_json_rounded(b->unshared_hi, 0) : NULL) < 0 ||
            add_nullable(o, F_RATE_SOURCE, b->have_rate ? string_or_null(b->rate_source) : NULL) < 0 ||
            add_nullable(o, F_SINCE_SNAPSHOT, since_to_json(b)) < 0 ||
            add_nullable(o, F_BYTES_PER_INODE, b->bytes_per_inode > 0 ? report_json_rounded(b->bytes_per_inode, 1) : NULL) < 0 ||
            add(o, F_MODEL_INTERVALS, json_object_new_int64(b->model_intervals)) < 0 ||
            add_nullable(o, F_QGROUPS, qgroups_to_json(b)) < 0)
                return -ENOMEM;
        return 0;
}

/* Null on anything but btrfs. */
static json_object *btrfs_to_json(const ReportBtrfs *b) {
        _cleanup_json_ json_object *o = NULL, *sub = NULL, *snaps = NULL;

        if (!b->have)
                return NULL;
        o = json_object_new_object();
        sub = json_object_new_object();
        snaps = json_object_new_object();
        if (!o || !sub || !snaps ||
            add_nullable(sub, F_SUBVOLUME_ID, b->subvol_id ? json_object_new_int64(b->subvol_id) : NULL) < 0 ||
            add_nullable(sub, F_UUID, string_or_null(b->subvol_uuid)) < 0 ||
            add_nullable(sub, F_PATH, string_or_null(b->subvol_path)) < 0 ||
            add(sub, F_DELETED, json_object_new_boolean(b->subvol_deleted)) < 0 ||
            add(snaps, F_SEEN, json_object_new_string(b->seen ? b->seen : "none")) < 0 ||
            add_nullable(snaps, F_REASON, string_or_null(b->reason)) < 0 ||
            add_nullable(snaps, F_COUNT, b->have_snapshots ? json_object_new_int64(b->snapshots) : NULL) < 0 ||
            add_nullable(snaps, F_READ_ONLY, b->have_snapshots ? json_object_new_int64(b->snapshots_read_only) : NULL) < 0 ||
            add_nullable(snaps, F_NEWEST_AGE_S,
                         b->have_snapshots && b->newest_age_s >= 0 ? json_object_new_int64(b->newest_age_s) : NULL) < 0 ||
            add_nullable(snaps, F_PERIOD_S, b->have_snapshots && b->period_s > 0 ? json_object_new_int64(b->period_s) : NULL) < 0 ||
            add(o, F_SUBVOLUME, TAKE_PTR(sub)) < 0 || add(o, F_SNAPSHOTS, TAKE_PTR(snaps)) < 0 ||
            add_nullable(o, F_METADATA_BYTES_USED,
                         b->have_metadata ? json_object_new_int64(b->metadata_bytes_used) : NULL) < 0 ||
            add_nullable(o, F_UNSHARED_BYTES_PER_DAY,
                         b->have_rate ? report_json_rounded(b->unshared_bytes_per_day, 0) : NULL) < 0 ||
            add(o, F_UNSHARED_BYTES, report_json_rounded(b->unshared_bytes, 0)) < 0 ||
            add(o, F_BYTES_SOURCE, json_object_new_string(b->source ? b->source : "waiting")) < 0 ||
            btrfs_model_to_json(o, b) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *report_mount_to_json(const ReportMount *m) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *probe = NULL, *activity = NULL, *btrfs = NULL;

        if (!o)
                return NULL;
        if (add(o, F_MOUNT_ID, json_object_new_int(m->id)) < 0 || add(o, F_TARGET, json_object_new_string(m->target)) < 0 ||
            add(o, F_SOURCE, json_object_new_string(m->source)) < 0 ||
            add(o, F_FSTYPE, json_object_new_string(m->fstype)) < 0 || add(o, F_ROOT, json_object_new_string(m->root)) < 0 ||
            add(o, F_DEVICE, device_to_json(&m->device)) < 0 || add(o, F_ATIME, json_object_new_string(m->atime)) < 0 ||
            add(o, F_NODIRATIME, json_object_new_boolean(m->nodiratime)) < 0 ||
            add(o, F_LAZYTIME, json_object_new_boolean(m->lazytime)) < 0 ||
            add(o, F_READ_ONLY, json_object_new_boolean(m->read_only)) < 0 ||
            add(o, F_OPTIONS, json_object_new_string(m->options)) < 0 ||
            add(o, F_SUPER_OPTIONS, json_object_new_string(m->super_options)) < 0)
                return NULL;
        if (m->probe.have && !(probe = report_probe_to_json(&m->probe)))
                return NULL;
        if (add_nullable(o, F_PROBE, probe) < 0)
                return NULL;
        if (m->activity.have && !(activity = activity_to_json(&m->activity)))
                return NULL;
        if (add_nullable(o, F_ACTIVITY, activity) < 0 || add_nullable(o, F_PROGRESS, progress_to_json(&m->progress)) < 0 ||
            add(o, F_STALLED, json_object_new_boolean(m->stalled)) < 0 ||
            add(o, F_REACHABLE, json_object_new_boolean(m->reachable)) < 0 ||
            add(o, F_ATIME_UPDATES_TOTAL, report_json_rounded(m->atime_updates_total, 1)) < 0)
                return NULL;
        if (m->btrfs.have && !(btrfs = btrfs_to_json(&m->btrfs)))
                return NULL;
        if (add_nullable(o, F_BTRFS, btrfs) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* ---------------------------------------------------------------- from JSON */

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

static bool number(json_object *o, const char *key, double *ret) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return false;
        *ret = json_object_get_double(v);
        return true;
}

static int64_t integer(json_object *o, const char *key) {
        json_object *v = member(o, key, json_type_int);

        return v ? json_object_get_int64(v) : 0;
}

static bool pair(json_object *o, const char *key, double *lo, double *hi) {
        json_object *a = member(o, key, json_type_array);

        if (!a || json_object_array_length(a) != 2)
                return false;
        *lo = json_object_get_double(json_object_array_get_idx(a, 0));
        *hi = json_object_get_double(json_object_array_get_idx(a, 1));
        return true;
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
        d->writes_total = d->have_totals ? (uint64_t) v : 0;
        d->have_totals = d->have_totals && number(o, F_WRITTEN_BYTES_TOTAL, &v);
        d->written_bytes_total = d->have_totals ? (uint64_t) v : 0;
}

static void probe_from_json(Report *r, json_object *o, ReportProbe *p) {
        p->have = o != NULL;
        p->verified = boolean(o, F_VERIFIED);
        p->effective = str(r, o, F_EFFECTIVE);
        p->at = integer(o, F_AT);
        p->reason = str(r, o, F_REASON);
        p->matches_table = member(o, F_MATCHES_TABLE, json_type_boolean) ? boolean(o, F_MATCHES_TABLE) : -1;
}

static void activity_from_json(Report *r, json_object *o, ReportActivity *a) {
        a->have = number(o, F_ATIME_INODES_PER_MIN, &a->inodes_per_min) &&
                  pair(o, F_CI95, &a->inodes_lo, &a->inodes_hi);
        if (!a->have)
                return;
        /* A daemon without the updates figure: the inodes stand for it, as
         * in the daemon's own report (daemon/status.c). */
        if (!number(o, F_ATIME_UPDATES_PER_MIN, &a->updates_per_min) || !pair(o, F_UPDATES_CI95, &a->updates_lo, &a->updates_hi)) {
                a->updates_per_min = a->inodes_per_min;
                a->updates_lo = a->inodes_lo;
                a->updates_hi = a->inodes_hi;
        }
        (void) number(o, F_INTERVAL_S, &a->interval_s);
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
        a->ready_in_s = member(o, F_READY_IN_S, json_type_int) ? integer(o, F_READY_IN_S) : -1;
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
        b->snapshots = b->have_snapshots ? (int64_t) v : 0;
        b->snapshots_read_only = integer(snaps, F_READ_ONLY);
        b->newest_age_s = number(snaps, F_NEWEST_AGE_S, &v) ? (int64_t) v : -1;
        b->period_s = number(snaps, F_PERIOD_S, &v) ? (int64_t) v : 0;
        b->have_metadata = number(o, F_METADATA_BYTES_USED, &v);
        b->metadata_bytes_used = b->have_metadata ? (int64_t) v : 0;
        b->have_rate = number(o, F_UNSHARED_BYTES_PER_DAY, &b->unshared_bytes_per_day);
        (void) number(o, F_UNSHARED_BYTES, &b->unshared_bytes);
        b->source = str(r, o, F_BYTES_SOURCE);
        b->rate_source = str(r, o, F_RATE_SOURCE);
        (void) number(o, F_UNSHARED_LO, &b->unshared_lo);
        (void) number(o, F_UNSHARED_HI, &b->unshared_hi);
        (void) number(o, F_BYTES_PER_INODE, &b->bytes_per_inode);
        b->model_intervals = integer(o, F_MODEL_INTERVALS);
        json_object *since = member(o, F_SINCE_SNAPSHOT, json_type_object),
                    *q = member(o, F_QGROUPS, json_type_object);

        b->quotas = q != NULL;
        b->have_qgroups = q && number(q, F_EXCLUSIVE, &v);
        b->exclusive = b->have_qgroups ? (int64_t) v : 0;
        b->snapshots_exclusive = q && number(q, F_SNAPSHOTS_EXCLUSIVE, &v) ? (int64_t) v : 0;
        b->qgroups_inconsistent = q && boolean(q, F_INCONSISTENT);
        b->qgroups_reason = q ? str(r, q, F_REASON) : NULL;

        b->have_since = since != NULL;
        b->inodes_since = -1;
        if (since) {
                (void) number(since, F_BYTES, &b->since_bytes);
                (void) number(since, F_LO, &b->since_lo);
                (void) number(since, F_HI, &b->since_hi);
                (void) number(since, F_INODES, &b->inodes_since);
                b->since_source = str(r, since, F_RATE_SOURCE);
        }
}

static int mount_from_json(Report *r, json_object *o) {
        ReportMount *m = report_add_mount(r);

        if (!m)
                return -ENOMEM;
        if (!json_object_is_type(o, json_type_object) || !member(o, F_TARGET, json_type_string))
                return -EBADMSG;
        m->id = (int) integer(o, F_MOUNT_ID);
        m->target = str(r, o, F_TARGET);
        m->source = str(r, o, F_SOURCE);
        m->fstype = str(r, o, F_FSTYPE);
        m->root = str(r, o, F_ROOT);
        m->options = str(r, o, F_OPTIONS);
        m->super_options = str(r, o, F_SUPER_OPTIONS);
        m->atime = str(r, o, F_ATIME);
        m->nodiratime = boolean(o, F_NODIRATIME);
        m->lazytime = boolean(o, F_LAZYTIME);
        m->read_only = boolean(o, F_READ_ONLY);
        m->stalled = boolean(o, F_STALLED);
        m->reachable = !member(o, F_REACHABLE, json_type_boolean) || boolean(o, F_REACHABLE);
        (void) number(o, F_ATIME_UPDATES_TOTAL, &m->atime_updates_total);
        device_from_json(r, member(o, F_DEVICE, json_type_object), &m->device);
        probe_from_json(r, member(o, F_PROBE, json_type_object), &m->probe);
        activity_from_json(r, member(o, F_ACTIVITY, json_type_object), &m->activity);
        btrfs_from_json(r, member(o, F_BTRFS, json_type_object), &m->btrfs);
        return m->target ? 0 : -ENOMEM;
}

static void change_from_json(Report *r, json_object *o, ReportAdvice *a) {
        json_object *ci = member(o, F_SAVED_CI95, json_type_array);

        if (!o || !member(o, F_AT, json_type_int))
                return;
        a->have_change = true;
        a->change_at = integer(o, F_AT);
        a->change_previous = str(r, o, F_PREVIOUS);
        a->change_current = str(r, o, F_CURRENT);
        a->change_state = str(r, o, F_STATE);
        a->have_promise = number(o, F_PROMISED_PER_MIN, &a->promised_per_min);
        a->have_saved = number(o, F_SAVED_PER_MIN, &a->saved_per_min);
        a->saved_lo = a->saved_hi = a->saved_per_min;
        if (ci && json_object_array_length(ci) == 2) {
                json_object *lo = json_object_array_get_idx(ci, 0), *hi = json_object_array_get_idx(ci, 1);

                if (json_object_is_type(lo, json_type_double) || json_object_is_type(lo, json_type_int))
                        a->saved_lo = json_object_get_double(lo);
                if (json_object_is_type(hi, json_type_double) || json_object_is_type(hi, json_type_int))
                        a->saved_hi = json_object_get_double(hi);
        }
}

static int advice_from_json(Report *r, json_object *o, ReportAdvice *a) {
        json_object *saving = member(o, F_SAVING, json_type_object), *c = member(o, F_CONSUMERS, json_type_array);

        a->have = true;
        a->action = str(r, o, F_ACTION);
        a->current = str(r, member(o, F_CURRENT, json_type_object), F_OPTIONS);
        a->recommended = str(r, member(o, F_RECOMMENDED, json_type_object), F_OPTIONS);
        a->confidence = str(r, o, F_CONFIDENCE);
        if (!number(saving, F_ATIME_UPDATES_PER_MIN, &a->saving_updates_per_min))
                (void) number(saving, F_ATIME_WRITES_PER_MIN, &a->saving_updates_per_min);
        (void) number(saving, F_CPU_US_PER_S, &a->saving_cpu_us_per_s);
        (void) number(saving, F_WRITE_KIB_PER_S, &a->saving_kib_per_s);
        (void) number(saving, F_METADATA_BYTES_PER_DAY, &a->saving_bytes_per_day);
        a->n_consumers = c ? json_object_array_length(c) : 0;
        change_from_json(r, member(o, F_POLICY_CHANGE, json_type_object), a);
        return 0;
}

bool report_figure_lower_bound_only(double coverage, const char *source) {
        return coverage < 1 && (!source || streq(source, "sample"));
}

uint64_t report_string_hash(const char *s) {
        uint64_t h = 14695981039346656037ULL; /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return h;
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

int report_from_json(json_object *status, json_object *recs_reply, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        json_object *mounts = member(status, F_MOUNTS, json_type_array);
        json_object *recs = member(recs_reply, F_RECOMMENDATIONS, json_type_array);
        double v;
        int q;

        if (!mounts)
                return -EBADMSG;
        q = report_new(&r);
        if (q < 0)
                return q;
        q = report_reserve(r, json_object_array_length(mounts));
        if (q < 0)
                return q;
        r->version = str(r, status, F_VERSION);
        r->hostname = str(r, status, F_HOSTNAME);
        r->started_at = number(status, F_STARTED_AT, &v) ? (int64_t) v : -1;
        r->uptime_s = number(status, F_UPTIME_S, &v) ? (int64_t) v : -1;
        r->stuck_threads = number(status, F_STUCK_THREADS, &v) ? (int64_t) v : -1;
        r->advice_changes = number(status, F_ADVICE_CHANGES, &v) ? (int64_t) v : -1;
        r->taken_at = r->started_at >= 0 && r->uptime_s >= 0 ? r->started_at + r->uptime_s : -1;
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                q = mount_from_json(r, json_object_array_get_idx(mounts, i));
                if (q < 0)
                        return q;
        }
        if (recs) {
                q = pair_advice(r, recs);
                if (q < 0)
                        return q;
        }
        if (r->oom)
                return -ENOMEM;
        *ret = TAKE_PTR(r);
        return 0;
}
