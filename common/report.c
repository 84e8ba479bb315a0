/* report.c: the typed model of atimed's state (see report.h): its strings,
 * its JSON form, and its reading back from JSON. */
#include "report.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
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
        alignas(max_align_t) char data[];
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

/* Room for len bytes at an offset aligned for any type, from the newest
 * chunk or a new one. */
static void *chunk_take(Report *r, size_t len) {
        struct report_chunk *c = r->strings;
        size_t align = alignof(max_align_t), at = c ? (c->used + align - 1) / align * align : 0;
        void *p;

        if (!c || at > c->size || c->size - at < len) {
                size_t size = MAX(len, (size_t) CHUNK_MIN);

                c = malloc(sizeof *c + size);
                if (!c) {
                        r->oom = true;
                        return NULL;
                }
                *c = (struct report_chunk) { .next = r->strings, .size = size };
                r->strings = c;
                at = 0;
        }
        p = c->data + at;
        c->used = at + len;
        return p;
}

void *report_alloc(Report *r, size_t n, size_t size) {
        void *p;

        if (size && n > SIZE_MAX / size) {
                r->oom = true;
                return NULL;
        }
        p = chunk_take(r, n * size > 0 ? n * size : 1);
        return p ? memset(p, 0, n * size) : NULL;
}

const char *report_strdup(Report *r, const char *s) {
        size_t len;
        char *p;

        if (!s)
                return NULL;
        len = strlen(s) + 1;
        p = chunk_take(r, len);
        return p ? memcpy(p, s, len) : NULL;
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

/* What the sample does not cover, where it is known or the interval was
 * widened for it; null otherwise. */
static json_object *unseen_to_json(const ReportBtrfs *b) {
        _cleanup_json_ json_object *o = NULL;

        if (!b->have_unseen && !b->unseen_reason)
                return NULL;
        o = json_object_new_object();
        if (!o ||
            add_nullable(o, F_SUBVOLUMES, b->have_unseen ? json_object_new_int64(b->unseen_subvolumes) : NULL) < 0 ||
            add_nullable(o, F_TREE_BYTES, b->have_unseen ? json_object_new_int64(b->unseen_tree_bytes) : NULL) < 0 ||
            add(o, F_WIDENED, json_object_new_boolean(b->unseen_reason != NULL)) < 0 ||
            add_nullable(o, F_REASON, string_or_null(b->unseen_reason)) < 0)
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
            add(o, F_SAMPLED, json_object_new_boolean(b->sampled)) < 0 ||
            add_nullable(o, F_MODEL_NOTE, string_or_null(b->model_note)) < 0 ||
            add_nullable(o, F_TABLE_BYTES_PER_INODE,
                         b->table_bytes_per_inode > 0 ? report_json_rounded(b->table_bytes_per_inode, 1) : NULL) < 0 ||
            add_nullable(o, F_TABLE_BYTES_PER_DIR,
                         b->table_bytes_per_dir > 0 ? report_json_rounded(b->table_bytes_per_dir, 1) : NULL) < 0 ||
            add_nullable(o, F_QGROUPS, qgroups_to_json(b)) < 0 || add_nullable(o, F_UNSEEN, unseen_to_json(b)) < 0 ||
            add(o, F_PENDING, json_object_new_int64(b->pending)) < 0)
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

bool report_figure_lower_bound_only(double coverage, const char *source) {
        return coverage < 1 && (!source || streq(source, "sample"));
}

uint64_t report_string_hash(const char *s) {
        uint64_t h = 14695981039346656037ULL; /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return h;
}
