/* metrics.c: Prometheus exposition of atimed's state (see metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

/* A label value, escaped as the format requires (backslash, quote,
 * newline); the runs between those written whole. */
static void label(FILE *f, const char *name, const char *value, bool first) {
        const char *p = value ? value : "";

        if (!first)
                fputc_unlocked(',', f);
        fputs_unlocked(name, f);
        fputs_unlocked("=\"", f);
        for (;;) {
                size_t n = strcspn(p, "\\\"\n");

                fwrite_unlocked(p, 1, n, f);
                p += n;
                if (!*p)
                        break;
                fputc_unlocked('\\', f);
                fputc_unlocked(*p == '\n' ? 'n' : *p, f);
                p++;
        }
        fputc_unlocked('"', f);
}

/* A sample's value and the line's end: integers (flags, counters) without
 * going through printf, other values with every digit they need. */
static void value(FILE *f, double v) {
        char buf[32], *p = buf + sizeof buf;

        /* In range before the cast: a double beyond int64 (1e300 from a
         * reply) cast is undefined behaviour. */
        if (v >= 0 && v < 1e15 && v == (double) (int64_t) v) {
                uint64_t u = (uint64_t) v;

                *--p = '\n';
                do
                        *--p = (char) ('0' + u % 10);
                while ((u /= 10) > 0);
                *--p = ' ';
                fwrite_unlocked(p, 1, (size_t) (buf + sizeof buf - p), f);
        } else {
                /* The shortest text that reads back as the same double:
                 * 60.001, not 60.000999999999998. */
                for (int prec = 15; prec <= 17; prec++) {
                        snprintf(buf, sizeof buf, "%.*g", prec, v);
                        if (prec == 17 || strtod(buf, NULL) == v)
                                break;
                }
                fprintf(f, " %s\n", buf);
        }
}

static void header(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void scalar(FILE *f, const char *name, const char *type, const char *help, double v) {
        header(f, name, type, help);
        fputs_unlocked(name, f);
        value(f, v);
}

static const char *truth(bool b) {
        return b ? "true" : "false";
}

/* The device label: the block device's name, or the mount's source. */
static const char *device_of(const ReportMount *m) {
        return m->device.name ? m->device.name : m->source;
}

/* A mount's value of one family; false: no sample for it. */
typedef bool (*value_fn)(const ReportMount *m, double *ret);

struct family {
        const char *name, *type, *help;
        value_fn value;
        bool with_device;
};

/* The header once, then a sample for every mount that has a value. */
static void per_mount(FILE *f, const Report *r, const struct family *fam) {
        header(f, fam->name, fam->type, fam->help);
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportMount *m = &r->mounts[i];
                double v;

                if (!fam->value(m, &v))
                        continue;
                fputs_unlocked(fam->name, f);
                fputc_unlocked('{', f);
                label(f, "mountpoint", m->target, true);
                if (fam->with_device)
                        label(f, "device", device_of(m), false);
                fputc_unlocked('}', f);
                value(f, v);
        }
}

#define PER_MIN(fn, field)                                           \
        static bool fn(const ReportMount *m, double *ret) {           \
                *ret = m->activity.field / 60.0;                      \
                return m->activity.have;                              \
        }
PER_MIN(v_inodes, inodes_per_min)
PER_MIN(v_inodes_lo, inodes_lo)
PER_MIN(v_inodes_hi, inodes_hi)
PER_MIN(v_updates, updates_per_min)
PER_MIN(v_updates_lo, updates_lo)
PER_MIN(v_updates_hi, updates_hi)

static bool v_transactions(const ReportMount *m, double *ret) {
        *ret = (m->activity.counter_lo + m->activity.counter_hi) / 2 / 60.0;
        return m->activity.have && m->activity.counter;
}
static bool v_disagrees(const ReportMount *m, double *ret) {
        *ret = m->activity.disagrees;
        return m->activity.have && m->activity.counter;
}
static bool v_updates_total(const ReportMount *m, double *ret) {
        *ret = m->atime_updates_total;
        return m->activity.have;
}
static bool v_interval(const ReportMount *m, double *ret) {
        /* An exact zero that no sweep measured has no interval. */
        *ret = m->activity.interval_s;
        return m->activity.have && *ret > 0;
}
static bool v_coverage(const ReportMount *m, double *ret) {
        *ret = m->activity.coverage;
        return m->activity.have;
}
static bool v_ready_in(const ReportMount *m, double *ret) {
        *ret = (double) m->activity.ready_in_s;
        return m->activity.have && m->activity.ready_in_s >= 0;
}
static bool v_stalled(const ReportMount *m, double *ret) {
        *ret = m->stalled;
        return true;
}
static bool v_dev_writes(const ReportMount *m, double *ret) {
        *ret = m->device.write_iops;
        return m->device.have_rate;
}
static bool v_dev_bytes(const ReportMount *m, double *ret) {
        *ret = m->device.write_kib_per_s * 1024;
        return m->device.have_rate;
}
static bool v_dev_writes_total(const ReportMount *m, double *ret) {
        *ret = (double) m->device.writes_total;
        return m->device.have_totals;
}
static bool v_dev_bytes_total(const ReportMount *m, double *ret) {
        *ret = (double) m->device.written_bytes_total;
        return m->device.have_totals;
}
static bool v_save_updates(const ReportMount *m, double *ret) {
        *ret = m->advice.saving_updates_per_min / 60.0;
        return m->advice.have;
}
static bool v_save_cpu(const ReportMount *m, double *ret) {
        *ret = m->advice.saving_cpu_us_per_s / 1e6;
        return m->advice.have;
}
static bool v_save_bytes(const ReportMount *m, double *ret) {
        *ret = m->advice.saving_kib_per_s * 1024;
        return m->advice.have;
}
static bool v_save_btrfs(const ReportMount *m, double *ret) {
        *ret = m->advice.saving_bytes_per_day / 86400.0;
        return m->advice.have && m->btrfs.have;
}
/* btrfs: the metadata atime un-shares from snapshots (btrfs-meter.h). */
static bool v_unshared(const ReportMount *m, double *ret) {
        *ret = m->btrfs.unshared_bytes_per_day / 86400.0;
        return m->btrfs.have && m->btrfs.have_rate;
}
static bool v_unshared_lo(const ReportMount *m, double *ret) {
        *ret = m->btrfs.unshared_lo / 86400.0;
        return m->btrfs.have && m->btrfs.have_rate;
}
static bool v_unshared_hi(const ReportMount *m, double *ret) {
        *ret = m->btrfs.unshared_hi / 86400.0;
        return m->btrfs.have && m->btrfs.have_rate;
}
static bool v_unshared_total(const ReportMount *m, double *ret) {
        *ret = m->btrfs.unshared_bytes;
        return m->btrfs.have;
}
static bool v_unshared_since(const ReportMount *m, double *ret) {
        *ret = m->btrfs.since_bytes;
        return m->btrfs.have && m->btrfs.have_since;
}
static bool v_metadata_used(const ReportMount *m, double *ret) {
        *ret = (double) m->btrfs.metadata_bytes_used;
        return m->btrfs.have && m->btrfs.have_metadata;
}
static bool v_consumers(const ReportMount *m, double *ret) {
        *ret = (double) m->advice.n_consumers;
        return m->advice.have;
}

static const struct family mount_families[] = {
        { "atimed_mount_stalled", "gauge", "1 if a probe or sample job on the mount missed its deadline.", v_stalled },
        { "atimed_atime_inodes_per_second", "gauge",
          "Distinct inodes whose atime moved, per second, over the last measured interval.", v_inodes },
        { "atimed_atime_inodes_lower_per_second", "gauge",
          "Lower bound of the 95% interval of atimed_atime_inodes_per_second.", v_inodes_lo },
        { "atimed_atime_inodes_upper_per_second", "gauge",
          "Upper bound of the 95% interval of atimed_atime_inodes_per_second.", v_inodes_hi },
        { "atimed_atime_updates_per_second", "gauge",
          "Atime updates the kernel made, per second, over the last measured interval.", v_updates },
        { "atimed_atime_updates_lower_per_second", "gauge",
          "Lower bound of the 95% interval of atimed_atime_updates_per_second.", v_updates_lo },
        { "atimed_atime_updates_upper_per_second", "gauge",
          "Upper bound of the 95% interval of atimed_atime_updates_per_second.", v_updates_hi },
        { "atimed_atime_updates_total", "counter",
          "Atime updates since atimed started: atimed_atime_updates_per_second integrated over time.", v_updates_total },
        { "atimed_filesystem_transactions_per_second", "gauge",
          "Metadata transactions the kernel counted on the mount's filesystem (xfs, ext4's journal), per second, over "
          "the last measured interval: atime updates and every other change, all mounts of it together.",
          v_transactions },
        { "atimed_atime_updates_counter_disagrees", "gauge",
          "1 if the sample's 95% interval and the kernel's count of transactions exclude each other.", v_disagrees },
        { "atimed_measurement_interval_seconds", "gauge", "The length of the interval the atime figures cover.",
          v_interval },
        { "atimed_atime_sample_coverage_ratio", "gauge",
          "Of the filesystem's inodes, the share the atime figures rest on: below 1 while the first walk runs, and "
          "the figures' interval is then wider.",
          v_coverage },
        { "atimed_atime_sample_complete_in_seconds", "gauge",
          "While the first walk runs: seconds until the figures rest on the whole filesystem, about.", v_ready_in },
        { "atimed_btrfs_metadata_used_bytes", "gauge",
          "btrfs: the filesystem's metadata in use (sysfs allocation/metadata/bytes_used), all subvolumes.",
          v_metadata_used },
        { "atimed_btrfs_unshared_bytes_per_second", "gauge",
          "btrfs: metadata atime updates un-shared from the subvolume's snapshots, per second, over the last interval "
          "with a figure: measured (bytes_used growth in a pure interval) or modelled (GetStatus rate_source).",
          v_unshared },
        { "atimed_btrfs_unshared_lower_bytes_per_second", "gauge",
          "Lower bound of the 95% interval of atimed_btrfs_unshared_bytes_per_second.", v_unshared_lo },
        { "atimed_btrfs_unshared_upper_bytes_per_second", "gauge",
          "Upper bound of the 95% interval of atimed_btrfs_unshared_bytes_per_second.", v_unshared_hi },
        { "atimed_btrfs_unshared_measured_bytes_total", "counter",
          "btrfs: metadata growth of every interval measured as atime's alone since atimed started.", v_unshared_total },
        { "atimed_btrfs_unshared_since_snapshot_bytes", "gauge",
          "btrfs: metadata atime updates un-shared since the subvolume's newest snapshot (measured or modelled).",
          v_unshared_since },
        { "atimed_device_writes_per_second", "gauge", "Write I/Os completed per second by the mount's block device.",
          v_dev_writes, true },
        { "atimed_device_written_bytes_per_second", "gauge", "Bytes written per second by the mount's block device.",
          v_dev_bytes, true },
        { "atimed_device_writes_total", "counter", "Write I/Os completed by the mount's block device since boot.",
          v_dev_writes_total, true },
        { "atimed_device_written_bytes_total", "counter", "Bytes written by the mount's block device since boot.",
          v_dev_bytes_total, true },
};

static bool v_change_at(const ReportMount *m, double *ret) {
        *ret = (double) m->advice.policy_change.at;
        return m->advice.policy_change.have;
}
static bool v_promised(const ReportMount *m, double *ret) {
        *ret = m->advice.policy_change.promised_per_min / 60.0;
        return m->advice.policy_change.have && m->advice.policy_change.have_promise;
}
static bool v_realized(const ReportMount *m, double *ret) {
        *ret = m->advice.policy_change.saved_per_min / 60.0;
        return m->advice.policy_change.have && m->advice.policy_change.have_saved;
}
static bool v_realized_lo(const ReportMount *m, double *ret) {
        *ret = m->advice.policy_change.saved_lo / 60.0;
        return m->advice.policy_change.have && m->advice.policy_change.have_saved;
}
static bool v_realized_hi(const ReportMount *m, double *ret) {
        *ret = m->advice.policy_change.saved_hi / 60.0;
        return m->advice.policy_change.have && m->advice.policy_change.have_saved;
}

static const struct family advice_families[] = {
        { "atimed_recommendation_saving_atime_updates_per_second", "gauge",
          "Atime updates per second the advice would save.", v_save_updates },
        { "atimed_recommendation_saving_cpu_seconds_per_second", "gauge",
          "CPU seconds per second the advice would save (from the cost table).", v_save_cpu },
        { "atimed_recommendation_saving_written_bytes_per_second", "gauge",
          "Bytes written per second the advice would save (from the cost table).", v_save_bytes },
        { "atimed_recommendation_saving_btrfs_metadata_bytes_per_second", "gauge",
          "btrfs with snapshots: metadata per second the advice would stop atime updates un-sharing from them.",
          v_save_btrfs },
        { "atimed_atime_consumers", "gauge", "Software found to read atime on the mount.", v_consumers },
        { "atimed_policy_change_timestamp_seconds", "gauge",
          "When atimed saw the mount's last change of atime policy (atimed_policy_change_info), in seconds since the "
          "Unix epoch.",
          v_change_at },
        { "atimed_policy_change_promised_saving_atime_updates_per_second", "gauge",
          "Atime updates per second the advice in force just before the last change of policy promised to save.",
          v_promised },
        { "atimed_policy_change_realized_saving_atime_updates_per_second", "gauge",
          "Atime updates per second the last change of policy saved: before less after, over like windows; absent "
          "until there is enough history on both sides.",
          v_realized },
        { "atimed_policy_change_realized_saving_atime_updates_lower_per_second", "gauge",
          "Lower bound of the 95% interval of atimed_policy_change_realized_saving_atime_updates_per_second.",
          v_realized_lo },
        { "atimed_policy_change_realized_saving_atime_updates_upper_per_second", "gauge",
          "Upper bound of the 95% interval of atimed_policy_change_realized_saving_atime_updates_per_second.",
          v_realized_hi },
};

static void write_daemon(FILE *f, const Report *r) {
        scalar(f, "atimed_up", "gauge", "1 while atimed runs and exports; a stale textfile says otherwise through "
                                        "atimed_last_export_timestamp_seconds.", 1);
        header(f, "atimed_build_info", "gauge", "The version of atimed, as a label; always 1.");
        fprintf(f, "atimed_build_info{");
        label(f, "version", r->version, true);
        fprintf(f, "} 1\n");
        if (r->started_at >= 0)
                scalar(f, "atimed_start_time_seconds", "gauge", "When atimed started, in seconds since the Unix epoch.",
                       (double) r->started_at);
        if (r->uptime_s >= 0)
                scalar(f, "atimed_uptime_seconds", "gauge", "How long atimed has been running.", (double) r->uptime_s);
        if (r->taken_at >= 0)
                scalar(f, "atimed_last_export_timestamp_seconds", "gauge",
                       "When these figures were read, in seconds since the Unix epoch.", (double) r->taken_at);
        if (r->stuck_threads >= 0)
                scalar(f, "atimed_stuck_threads", "gauge", "Worker threads stuck on filesystems that do not answer.",
                       (double) r->stuck_threads);
        if (r->advice_changes >= 0)
                scalar(f, "atimed_recommendation_changes_total", "counter",
                       "Changes of a mount's advice announced since atimed started.", (double) r->advice_changes);
}

static void write_mount_info(FILE *f, const Report *r) {
        header(f, "atimed_mount_info", "gauge",
               "A tracked mount and the atime policy in force on it, as labels; always 1.");
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportMount *m = &r->mounts[i];
                bool verified = m->probe.have && m->probe.verified;

                fprintf(f, "atimed_mount_info{");
                label(f, "mountpoint", m->target, true);
                label(f, "device", device_of(m), false);
                label(f, "fstype", m->fstype, false);
                label(f, "atime", m->atime, false);
                label(f, "lazytime", truth(m->lazytime), false);
                label(f, "nodiratime", truth(m->nodiratime), false);
                label(f, "read_only", truth(m->read_only), false);
                label(f, "probe_verified", truth(verified), false);
                label(f, "probe_atime", verified ? m->probe.effective : "", false);
                fprintf(f, "} 1\n");
        }
}

static void write_sources(FILE *f, const Report *r) {
        header(f, "atimed_atime_updates_source", "gauge",
               "What stands behind atimed_atime_updates_per_second (sample, sample_bounded, kernel_count) and the "
               "kernel's counter read, as labels; always 1.");
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportMount *m = &r->mounts[i];

                if (!m->activity.have || !m->activity.source)
                        continue;
                fprintf(f, "atimed_atime_updates_source{");
                label(f, "mountpoint", m->target, true);
                label(f, "source", m->activity.source, false);
                label(f, "counter", m->activity.counter ? m->activity.counter : "", false);
                fprintf(f, "} 1\n");
        }
}

static void write_recommendations(FILE *f, const Report *r) {
        header(f, "atimed_recommendation", "gauge",
               "The advice for a mount, as labels (action, recommended options, confidence); always 1.");
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportMount *m = &r->mounts[i];

                if (!m->advice.have)
                        continue;
                fprintf(f, "atimed_recommendation{");
                label(f, "mountpoint", m->target, true);
                label(f, "action", m->advice.action, false);
                label(f, "current", m->advice.current, false);
                label(f, "recommended", m->advice.recommended, false);
                label(f, "confidence", m->advice.confidence, false);
                fprintf(f, "} 1\n");
        }
}

static void write_changes(FILE *f, const Report *r) {
        header(f, "atimed_policy_change_info", "gauge",
               "The mount's last change of atime policy, as labels (previous and current options, the verdict's state: "
               "too_early, too_little_before, measured); always 1.");
        for (size_t i = 0; i < r->n_mounts; i++) {
                const ReportMount *m = &r->mounts[i];

                if (!m->advice.have || !m->advice.policy_change.have)
                        continue;
                fprintf(f, "atimed_policy_change_info{");
                label(f, "mountpoint", m->target, true);
                label(f, "previous", m->advice.policy_change.previous, false);
                label(f, "current", m->advice.policy_change.current, false);
                label(f, "state", m->advice.policy_change.state, false);
                fprintf(f, "} 1\n");
        }
}

int metrics_write(FILE *f, const Report *r) {
        /* One lock for the whole text: the writes below are unlocked. */
        flockfile(f);
        write_daemon(f, r);
        write_mount_info(f, r);
        for (size_t i = 0; i < ELEMENTSOF(mount_families); i++)
                per_mount(f, r, &mount_families[i]);
        write_sources(f, r);
        if (r->have_advice) {
                write_recommendations(f, r);
                for (size_t i = 0; i < ELEMENTSOF(advice_families); i++)
                        per_mount(f, r, &advice_families[i]);
                write_changes(f, r);
        }
        funlockfile(f);
        return ferror(f) ? -EIO : 0;
}
