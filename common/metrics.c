/* metrics.c: Prometheus exposition of atimed's state (see metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "protocol.h"

/* A label value, escaped as the format requires (backslash, quote, newline). */
static void label(FILE *f, const char *name, const char *value, bool first) {
        fprintf(f, "%s%s=\"", first ? "" : ",", name);
        for (const char *p = value ? value : ""; *p; p++) {
                if (*p == '\\' || *p == '"')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

static void header(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *str(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                                : NULL;
}

static bool boolean(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static bool number(json_object *o, const char *key, double *ret) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return false;
        *ret = json_object_get_double(v);
        return true;
}

static const char *truth(bool b) {
        return b ? "true" : "false";
}

/* The device label: the block device's name, or the mount's source. */
static const char *device_of(json_object *mnt) {
        json_object *d = json_object_object_get(mnt, F_DEVICE);
        const char *n = d ? str(d, F_NAME) : NULL;

        return n ? n : str(mnt, F_SOURCE);
}

typedef bool (*value_fn)(json_object *mnt, json_object *rec, double *ret);

/* One gauge per mount: the header once, then a sample for every mount
 * that has a value. */
static void per_mount(FILE *f, json_object *mounts, json_object *recs, const char *name, const char *help, value_fn fn,
                      bool with_device) {
        header(f, name, "gauge", help);
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i), *rec = NULL;
                double v;

                for (size_t k = 0; recs && k < json_object_array_length(recs); k++) {
                        json_object *r = json_object_array_get_idx(recs, k);
                        if (streq_ptr(str(r, F_TARGET), str(m, F_TARGET)))
                                rec = r;
                }
                if (!fn(m, rec, &v))
                        continue;
                fprintf(f, "%s{", name);
                label(f, "mountpoint", str(m, F_TARGET), true);
                if (with_device)
                        label(f, "device", device_of(m), false);
                fprintf(f, "} %.17g\n", v);
        }
}

static bool activity_value(json_object *m, const char *key, double *ret) {
        json_object *a = json_object_object_get(m, F_ACTIVITY), *ci;
        double v;

        if (!a || !json_object_is_type(a, json_type_object))
                return false;
        if (streq(key, "estimate")) {
                if (!number(a, F_ATIME_INODES_PER_MIN, &v))
                        return false;
        } else {
                if (!json_object_object_get_ex(a, F_CI95, &ci) || json_object_array_length(ci) != 2)
                        return false;
                v = json_object_get_double(json_object_array_get_idx(ci, streq(key, "lower") ? 0 : 1));
        }
        *ret = v / 60.0;
        return true;
}

static bool v_estimate(json_object *m, json_object *r, double *ret) {
        return activity_value(m, "estimate", ret);
}
static bool v_lower(json_object *m, json_object *r, double *ret) {
        return activity_value(m, "lower", ret);
}
static bool v_upper(json_object *m, json_object *r, double *ret) {
        return activity_value(m, "upper", ret);
}
static bool v_interval(json_object *m, json_object *r, double *ret) {
        /* An exact zero that no sweep measured has no interval. */
        return number(json_object_object_get(m, F_ACTIVITY), F_INTERVAL_S, ret) && *ret > 0;
}
static bool v_stalled(json_object *m, json_object *r, double *ret) {
        *ret = boolean(m, F_STALLED);
        return true;
}
static bool v_dev_writes(json_object *m, json_object *r, double *ret) {
        return number(json_object_object_get(m, F_DEVICE), F_WRITE_IOPS, ret);
}
static bool v_dev_bytes(json_object *m, json_object *r, double *ret) {
        if (!number(json_object_object_get(m, F_DEVICE), F_WRITE_KIB_PER_S, ret))
                return false;
        *ret *= 1024;
        return true;
}
static bool v_save_writes(json_object *m, json_object *r, double *ret) {
        if (!r || !number(json_object_object_get(r, F_SAVING), F_ATIME_WRITES_PER_MIN, ret))
                return false;
        *ret /= 60.0;
        return true;
}
static bool v_save_cpu(json_object *m, json_object *r, double *ret) {
        if (!r || !number(json_object_object_get(r, F_SAVING), F_CPU_US_PER_S, ret))
                return false;
        *ret /= 1e6;
        return true;
}
static bool v_save_bytes(json_object *m, json_object *r, double *ret) {
        if (!r || !number(json_object_object_get(r, F_SAVING), F_WRITE_KIB_PER_S, ret))
                return false;
        *ret *= 1024;
        return true;
}
static bool v_consumers(json_object *m, json_object *r, double *ret) {
        json_object *c;

        if (!r || !json_object_object_get_ex(r, F_CONSUMERS, &c))
                return false;
        *ret = (double) json_object_array_length(c);
        return true;
}

int metrics_write(FILE *f, json_object *status, json_object *recs_reply) {
        json_object *mounts = json_object_object_get(status, F_MOUNTS);
        json_object *recs = recs_reply ? json_object_object_get(recs_reply, F_RECOMMENDATIONS) : NULL;
        double v;

        if (!mounts || !json_object_is_type(mounts, json_type_array))
                return -EBADMSG;

        header(f, "atimed_build_info", "gauge", "The version of atimed, as a label; always 1.");
        fprintf(f, "atimed_build_info{");
        label(f, "version", str(status, F_VERSION), true);
        fprintf(f, "} 1\n");
        if (number(status, F_STARTED_AT, &v)) {
                header(f, "atimed_start_time_seconds", "gauge", "When atimed started, in seconds since the Unix epoch.");
                fprintf(f, "atimed_start_time_seconds %.17g\n", v);
        }
        if (number(status, F_UPTIME_S, &v)) {
                header(f, "atimed_uptime_seconds", "gauge", "How long atimed has been running.");
                fprintf(f, "atimed_uptime_seconds %.17g\n", v);
        }
        if (number(status, F_STUCK_THREADS, &v)) {
                header(f, "atimed_stuck_threads", "gauge", "Worker threads stuck on filesystems that do not answer.");
                fprintf(f, "atimed_stuck_threads %.17g\n", v);
        }
        if (number(status, F_ADVICE_CHANGES, &v)) {
                header(f, "atimed_recommendation_changes_total", "counter",
                       "Changes of a mount's advice announced since atimed started.");
                fprintf(f, "atimed_recommendation_changes_total %.17g\n", v);
        }

        header(f, "atimed_mount_info", "gauge",
               "A tracked mount and the atime policy in force on it, as labels; always 1.");
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i), *p = json_object_object_get(m, F_PROBE);
                bool verified = p && json_object_is_type(p, json_type_object) && boolean(p, F_VERIFIED);

                fprintf(f, "atimed_mount_info{");
                label(f, "mountpoint", str(m, F_TARGET), true);
                label(f, "device", device_of(m), false);
                label(f, "fstype", str(m, F_FSTYPE), false);
                label(f, "atime", str(m, F_ATIME), false);
                label(f, "lazytime", truth(boolean(m, F_LAZYTIME)), false);
                label(f, "nodiratime", truth(boolean(m, F_NODIRATIME)), false);
                label(f, "read_only", truth(boolean(m, F_READ_ONLY)), false);
                label(f, "probe_verified", truth(verified), false);
                label(f, "probe_atime", verified ? str(p, F_EFFECTIVE) : "", false);
                fprintf(f, "} 1\n");
        }
        per_mount(f, mounts, recs, "atimed_mount_stalled", "1 if a probe or sample job on the mount missed its deadline.",
                  v_stalled, false);
        per_mount(f, mounts, recs, "atimed_atime_updates_per_second",
                  "Inodes whose atime was written, per second, over the last measured interval.", v_estimate, false);
        per_mount(f, mounts, recs, "atimed_atime_updates_lower_per_second",
                  "Lower bound of the 95% interval of atimed_atime_updates_per_second.", v_lower, false);
        per_mount(f, mounts, recs, "atimed_atime_updates_upper_per_second",
                  "Upper bound of the 95% interval of atimed_atime_updates_per_second.", v_upper, false);
        per_mount(f, mounts, recs, "atimed_measurement_interval_seconds",
                  "The length of the interval the atime figures cover.", v_interval, false);
        per_mount(f, mounts, recs, "atimed_device_writes_per_second",
                  "Write I/Os completed per second by the mount's block device.", v_dev_writes, true);
        per_mount(f, mounts, recs, "atimed_device_written_bytes_per_second",
                  "Bytes written per second by the mount's block device.", v_dev_bytes, true);
        if (!recs)
                return ferror(f) ? -EIO : 0;

        header(f, "atimed_recommendation", "gauge",
               "The advice for a mount, as labels (action, recommended options, confidence); always 1.");
        for (size_t i = 0; i < json_object_array_length(recs); i++) {
                json_object *r = json_object_array_get_idx(recs, i);

                fprintf(f, "atimed_recommendation{");
                label(f, "mountpoint", str(r, F_TARGET), true);
                label(f, "action", str(r, F_ACTION), false);
                label(f, "current", str(json_object_object_get(r, F_CURRENT), F_OPTIONS), false);
                label(f, "recommended", str(json_object_object_get(r, F_RECOMMENDED), F_OPTIONS), false);
                label(f, "confidence", str(r, F_CONFIDENCE), false);
                fprintf(f, "} 1\n");
        }
        per_mount(f, mounts, recs, "atimed_recommendation_saving_atime_updates_per_second",
                  "Atime writes per second the advice would save.", v_save_writes, false);
        per_mount(f, mounts, recs, "atimed_recommendation_saving_cpu_seconds_per_second",
                  "CPU seconds per second the advice would save (from the cost table).", v_save_cpu, false);
        per_mount(f, mounts, recs, "atimed_recommendation_saving_written_bytes_per_second",
                  "Bytes written per second the advice would save (from the cost table).", v_save_bytes, false);
        per_mount(f, mounts, recs, "atimed_atime_consumers", "Software found to read atime on the mount.", v_consumers,
                  false);
        return ferror(f) ? -EIO : 0;
}
