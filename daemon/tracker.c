/* tracker.c: the tracker's registry and life: the tracked mounts and
 * their filesystems, kept in step with the mount table, and what others
 * may ask of them (see tracker.h; its rooms: tracker-base.h). */
#include "tracker.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "prober.h"
#include "progress.h"
#include "string-table.h"
#include "time-util.h"
#include "tracker-base.h"

static const char *const activity_source_table[_SOURCE_MAX] = {
        [SOURCE_SAMPLE] = "sample",
        [SOURCE_SAMPLE_BOUNDED] = "sample_bounded",
        [SOURCE_KERNEL] = "kernel_count",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(activity_source, ActivitySource);

bool tracker_mount_activity(const TrackedMount *m, struct activity *ret) {
        if (!tracker_mount_writes_atime(m)) {
                /* No atime can be written through this mount: exactly zero. */
                *ret = (struct activity) {
                        .have = true,
                        .est = { .exact = true },
                        .updates = { .exact = true },
                        .seconds = m->fs && m->fs->last.valid ? m->fs->last.seconds : 0,
                        .population = m->fs ? m->fs->last.population : 0,
                };
                return true;
        }
        if (!tracker_mount_sampled(m))
                return false; /* nothing is known of what it writes */
        *ret = m->activity;
        return m->activity.have;
}

/* The rooms' answers, as tracker.h gives them. */
bool tracker_mount_writes_atime(const TrackedMount *m) {
        return mount_writes_atime(m);
}

bool tracker_mount_sampled(const TrackedMount *m) {
        return mount_sampled(m);
}

bool tracker_mount_stalled(const TrackedMount *m) {
        return mount_stalled(m);
}

bool tracker_mount_is_users(const MountEntry *e) {
        return mount_is_users(e);
}

bool tracker_mount_progress(const TrackedMount *m, struct progress *ret) {
        return progress_of(m, ret);
}

int tracker_probe_now(Tracker *t, int mount_id, tracker_probe_cb cb, void *userdata) {
        return prober_probe_now(t, mount_id, cb, userdata);
}

void tracker_fine_pass(Tracker *t) {
        planner_fine_pass(t);
}

const TrackedMount *tracker_find(const Tracker *t, int mount_id) {
        return tracker_lookup_mount(t, mount_id);
}

bool tracker_mount_btrfs_model(const TrackedMount *m, BtrfsModel *ret) {
        if (!mount_on_btrfs(m))
                return false;
        btrfs_meter_model(&m->fs->btrfs, ret);
        return true;
}

void tracker_mount_btrfs_seed(const TrackedMount *m, const BtrfsModel *saved) {
        if (mount_on_btrfs(m))
                btrfs_meter_seed(&m->fs->btrfs, saved);
}

bool tracker_mount_btrfs(const TrackedMount *m, struct btrfs_status *ret) {
        if (!mount_on_btrfs(m))
                return false;
        btrfs_meter_status(&m->fs->btrfs, m->entry->super_options, ret);
        if (!fs_writes_atime(m->fs))
                btrfs_status_no_atime(ret);
        return true;
}

const DeviceInfo *tracker_mount_device(const TrackedMount *m) {
        assert(m);
        return m->fs && m->fs->device.kind != DEVICE_NONE ? &m->fs->device : NULL;
}

bool tracker_mount_device_rate(const TrackedMount *m, struct device_rate *ret) {
        assert(m);
        assert(ret);
        if (!m->fs || !m->fs->disk.rate.valid)
                return false;
        *ret = m->fs->disk.rate;
        return true;
}

bool tracker_mount_device_totals(const TrackedMount *m, DiskStat *ret) {
        assert(m);
        assert(ret);
        if (!m->fs || m->fs->disk.last_at == 0)
                return false;
        *ret = m->fs->disk.last;
        return true;
}

uint64_t tracker_mount_population(const TrackedMount *m) {
        assert(m);
        return m->fs ? m->fs->last.population : 0;
}

void tracker_set_hooks(Tracker *t, const TrackerHooks *hooks) {
        t->hooks = *hooks;
}

const char *tracker_mount_key(const TrackedMount *m) {
        return m->key;
}

static void mount_free(TrackedMount *m) {
        if (!m)
                return;
        free(m->key);
        free(m);
}

unsigned tracker_stuck_threads(const Tracker *t) {
        return t ? worker_pool_stuck(t->pool) : 0;
}

unsigned tracker_jobs_out(const Tracker *t) {
        return t->fs_jobs + t->probe_jobs + t->bounded_jobs;
}

static int cmp_mount_devno(const void *a, const void *b) {
        const TrackedMount *x = *(TrackedMount *const *) a, *y = *(TrackedMount *const *) b;

        if (x->entry->devno != y->entry->devno)
                return x->entry->devno < y->entry->devno ? -1 : 1;
        return (x->id > y->id) - (x->id < y->id);
}

/* Index of the filesystem with devno in the sorted array, or n. */
static size_t find_fs(Filesystem *const *fss, size_t n, dev_t devno) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (fss[mid]->devno == devno)
                        return mid;
                if (fss[mid]->devno < devno)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return n;
}

/* The state for entry e of the new table: the mount's as it was if it was
 * tracked (its policy changed: verified and measured afresh), else new.
 * 'old' holds the previous list by id from *cursor on: what is passed
 * over is gone from the table and freed, what is found is taken. */
static TrackedMount *mount_for_entry(TrackedMount **old, size_t n_old, size_t *cursor, const MountEntry *e,
                                     uint64_t now) {
        TrackedMount *m;

        while (*cursor < n_old && old[*cursor]->id < e->id) {
                mount_free(old[*cursor]);
                old[(*cursor)++] = NULL;
        }
        if (*cursor < n_old && old[*cursor]->id == e->id) {
                m = TAKE_PTR(old[*cursor]);
                (*cursor)++;
                if (m->entry->policy.atime != e->policy.atime || m->entry->policy.read_only != e->policy.read_only ||
                    m->entry->reachable != e->reachable) {
                        m->probe.next_due = now;
                        m->activity = (struct activity) {};
                }
        } else {
                m = calloc(1, sizeof *m);
                if (!m)
                        return NULL;
                m->id = e->id;
                m->probe.next_due = now;
        }
        m->entry = e;
        m->fs = NULL; /* until the filesystems are grouped again */
        return m;
}

/* Mounts: the state of those still here (same id) kept, new ones added,
 * those gone freed. Without memory the tracker is left unusable: the
 * manager exits. */
static int update_mounts(Tracker *t, const MountTable *table, uint64_t now) {
        _cleanup_free_ TrackedMount **mounts = calloc(table->n ? table->n : 1, sizeof *mounts);
        size_t cursor = 0;

        if (!mounts)
                return -ENOMEM;
        for (size_t i = 0; i < table->n; i++) {
                assert(i == 0 || table->entries[i - 1].id < table->entries[i].id); /* sorted by id */
                mounts[i] = mount_for_entry(t->mounts, t->n_mounts, &cursor, &table->entries[i], now);
                if (!mounts[i]) {
                        for (size_t k = 0; k < i; k++)
                                mount_free(mounts[k]);
                        return -ENOMEM;
                }
        }
        for (; cursor < t->n_mounts; cursor++)
                mount_free(t->mounts[cursor]);
        free(t->mounts);
        t->mounts = TAKE_PTR(mounts);
        t->n_mounts = table->n;
        return 0;
}

/* The filesystem with device number d: the one tracked already (marked
 * taken), or a new one, its device resolved ('source' names it). */
static Filesystem *fs_for_devno(Tracker *t, dev_t d, const char *source, bool *taken, bool *ret_new) {
        size_t idx = find_fs(t->fss, t->n_fss, d);
        Filesystem *fs;

        if (idx < t->n_fss) {
                taken[idx] = true;
                return t->fss[idx];
        }
        fs = calloc(1, sizeof *fs);
        if (!fs)
                return NULL;
        fs->tracker = t;
        fs->devno = d;
        fs->count_prev = -1;
        (void) device_resolve(t->config->sysfs_path, "/dev", d, source, &fs->device);
        fs->identified = fs->device.kind == DEVICE_NONE; /* nothing to read a UUID from */
        *ret_new = true;
        return fs;
}

/* Gives fs its mounts (n of them, all on its device) and them their fs. */
static int fs_set_mounts(Filesystem *fs, TrackedMount *const *mounts, size_t n) {
        TrackedMount **list = malloc(n * sizeof *list);

        assert(n > 0);
        if (!list)
                return -ENOMEM;
        memcpy(list, mounts, n * sizeof *list);
        for (size_t i = 0; i < n; i++) {
                assert(mounts[i]->entry->devno == fs->devno);
                mounts[i]->fs = fs;
                mount_set_key(mounts[i]); /* its entry may have moved (mount --move) */
        }
        free(fs->mounts);
        fs->mounts = list;
        fs->n_mounts = n;
        return 0;
}

/* Filesystems no longer in the table: freed, or once their job is back. */
static void drop_filesystems(Tracker *t, const bool *taken) {
        for (size_t i = 0; i < t->n_fss; i++) {
                Filesystem *fs = t->fss[i];

                if (taken[i])
                        continue;
                if (t->walking == fs)
                        t->walking = NULL;
                if (fs->busy)
                        fs->orphaned = true; /* freed when its job returns */
                else
                        fs_free(fs);
        }
}

/* Filesystems: the mounts grouped by device number; the state of those
 * still here kept. *ret_new: some are new. Without memory, as for the
 * mounts, the tracker is left unusable and the manager exits. */
static int update_filesystems(Tracker *t, bool *ret_new) {
        size_t n = MAX(t->n_mounts, (size_t) 1), n_fss = 0;
        _cleanup_free_ TrackedMount **by_dev = malloc(n * sizeof *by_dev);
        _cleanup_free_ Filesystem **fss = calloc(n, sizeof *fss);
        _cleanup_free_ bool *taken = calloc(MAX(t->n_fss, (size_t) 1), sizeof *taken);

        if (!by_dev || !fss || !taken)
                return -ENOMEM;
        memcpy(by_dev, t->mounts, t->n_mounts * sizeof *by_dev);
        qsort(by_dev, t->n_mounts, sizeof *by_dev, cmp_mount_devno);
        for (size_t i = 0, k; i < t->n_mounts; i = k) {
                dev_t d = by_dev[i]->entry->devno;
                Filesystem *fs;

                for (k = i; k < t->n_mounts && by_dev[k]->entry->devno == d; k++)
                        ;
                fs = fs_for_devno(t, d, by_dev[i]->entry->source, taken, ret_new);
                if (!fs)
                        return -ENOMEM;
                if (fs_set_mounts(fs, by_dev + i, k - i) < 0)
                        return -ENOMEM;
                fss[n_fss++] = fs;
        }
        drop_filesystems(t, taken);
        free(t->fss);
        t->fss = TAKE_PTR(fss);
        t->n_fss = n_fss;
        return 0;
}

int tracker_update(Tracker *t, const MountTable *table) {
        bool new_fs = false;
        int r;

        assert(t);
        assert(table);
        tracker_changed(t);
        r = update_mounts(t, table, tracker_now(t, CLOCK_MONOTONIC));
        if (r < 0)
                return r;
        r = update_filesystems(t, &new_fs);
        if (r < 0)
                return r;
        if (new_fs)
                planner_update_devices(t, true);
        t->sweep_cursor = 0;
        tracker_plan(t, PLAN_ALL & ~PLAN_FIRSTS);
        return 0;
}

void tracker_set_config(Tracker *t, const struct config *config) {
        uint64_t now = tracker_now(t, CLOCK_MONOTONIC);

        tracker_changed(t);
        t->config = config;
        for (size_t i = 0; i < t->n_mounts; i++)
                t->mounts[i]->probe.next_due = MIN(t->mounts[i]->probe.next_due, now + config->probe_interval_usec);
        planner_replan(t); /* samplers of another size are rebuilt */
}

void tracker_set_clock(Tracker *t, tracker_clock_fn now, void *userdata) {
        assert(t);
        tracker_changed(t);
        t->clock = now;
        t->clock_userdata = userdata;
        planner_set_clock(t);
}

void tracker_set_job_hook(Tracker *t, tracker_job_hook_fn hook, void *userdata) {
        assert(t);
        t->job_hook = hook;
        t->job_hook_userdata = userdata;
}

int tracker_new(sd_event *e, WorkerPool *pool, const struct config *config, Tracker **ret) {
        _cleanup_(tracker_freep) Tracker *t = calloc(1, sizeof *t);
        int r;

        if (!t)
                return -ENOMEM;
        t->event = sd_event_ref(e);
        t->config = config;
        t->pool = pool;
        /* Failures starting or ending: 20 lines a minute at most, whatever
         * the mount churn (the rest are counted in a "Suppressed" line). */
        t->fail_log = (LogRatelimit) LOG_RATELIMIT_INIT(60 * USEC_PER_SEC, 20);
        r = planner_start(t);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

void tracker_shutdown(Tracker *t) {
        if (t)
                t->shutting_down = true; /* completions still arrive; nothing new starts */
}

Tracker *tracker_free(Tracker *t) {
        if (!t)
                return NULL;
        t->shutting_down = true;
        planner_stop(t);
        for (size_t i = 0; i < t->n_fss; i++)
                if (!t->fss[i]->busy)
                        fs_free(t->fss[i]);
        free(t->fss);
        for (size_t i = 0; i < t->n_mounts; i++)
                mount_free(t->mounts[i]);
        free(t->mounts);
        sd_event_unref(t->event);
        free(t);
        return NULL;
}
