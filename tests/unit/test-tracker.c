/* test-tracker: the tracker's schedule, driven by a clock the test moves,
 * with a real event loop, a real worker pool and real tmpfs mounts (in a
 * private mount namespace: root only, skipped otherwise):
 *  - walk ticks: a walk takes walk_rate entries per tick and waits for the
 *    clock's next second; a refresh walk waits for its minute;
 *  - kick: jobs that come back start the next at once, so small
 *    filesystems are walked and swept within one tick;
 *  - back-off: a filesystem whose job missed its deadline is stalled and
 *    not tried again before its back-off (10 s) is over. The job is held
 *    in its thread by the test (tracker_set_job_hook()), as a stopped FUSE
 *    daemon would hold it, so it misses its deadline on a machine of any
 *    speed;
 *  - first figure: half an interval after the baseline, whatever the
 *    timed sweeps' phase, while the first walk runs or after it ended;
 *  - device: a filesystem whose UUID is looked up first walks right
 *    after, not at the next timed sweep;
 *  - fine turns: with more filesystems that have inodes to look at again
 *    than job slots, the fine passes (the test's, tracker_fine_pass(): with
 *    a clock of the test's there are no others) offer the slots to each in
 *    turn: every one has its fine sweep within as many passes as there
 *    are filesystems;
 *  - a btrfs look: a btrfs mounted noatime alone (a loop device of the
 *    test's; skipped without mkfs.btrfs) is looked at in a job of its own
 *    at the timed sweep, one that hangs marks it stalled and is tried
 *    again after its back-off, and then its facts are there;
 *  - a btrfs look's time: the tracker's clock's, not the system's;
 *  - the borrow: while a sweep holds the sampler, the loop plans walks and
 *    reports progress from what the last job left, never the sampler.
 * Every wait for something the tracker does returns as soon as it is done;
 * its bound (seconds) only ends a test that would otherwise hang. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "mounts.h"
#include "protocol.h"
#include "../tap.h"
#include "btrfs-meter.h"
#include "tracker.h"
#include "worker.h"

static char base[] = "/tmp/test-tracker-XXXXXX";

/* The test's clock: it stands still but when the test moves it. Read by
 * the worker threads too (a sweep's time is the tracker's). */
static uint64_t clock_start[2];
static _Atomic uint64_t clock_moved;

static uint64_t test_clock(clockid_t clock, void *userdata) {
        (void) userdata;
        return clock_start[clock == CLOCK_REALTIME] + clock_moved;
}

static void clock_reset(void) {
        for (int i = 0; i < 2; i++) {
                struct timespec ts;

                clock_gettime(i ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
                clock_start[i] = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
        }
        clock_moved = 0;
}

static void advance(Tracker *t, uint64_t usec) {
        clock_moved += usec;
        tracker_set_clock(t, test_clock, NULL);
}

/* A tmpfs at base/name holding n files in directories of 100. */
static int make_mount(const char *name, unsigned n) {
        char path[512];

        snprintf(path, sizeof path, "%s/%s", base, name);
        if (mkdir(path, 0755) < 0 || mount("tmpfs", path, "tmpfs", 0, "mode=0755") < 0)
                return -errno;
        for (unsigned i = 0; i < n; i++) {
                int fd;

                snprintf(path, sizeof path, "%s/%s/d%u", base, name, i / 100);
                if (i % 100 == 0 && mkdir(path, 0755) < 0)
                        return -errno;
                snprintf(path, sizeof path, "%s/%s/d%u/f%u", base, name, i / 100, i);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd < 0)
                        return -errno;
                close(fd);
        }
        return 0;
}

/* The mount table of the test's mounts whose name begins with 'prefix'. */
static int load_table(const char *prefix, MountTable **ret) {
        FILE *in = fopen("/proc/self/mountinfo", "re"), *out;
        char line[4096], want[512], path[512];
        struct mount_filter f = {};
        bool written = true;

        snprintf(want, sizeof want, " %s/%s", base, prefix);
        snprintf(path, sizeof path, "%s/mountinfo-%s", base, prefix);
        if (!in)
                return -errno;
        out = fopen(path, "we");
        if (!out) {
                fclose(in);
                return -errno;
        }
        while (fgets(line, sizeof line, in))
                if (strstr(line, want))
                        written = written && fputs(line, out) >= 0;
        fclose(in);
        if (fclose(out) != 0 || !written)
                return -EIO;
        return mount_table_load(path, &f, ret);
}

static const TrackedMount *mount_at(const Tracker *t, const MountTable *table, const char *name) {
        char target[512];
        const MountEntry *e;

        snprintf(target, sizeof target, "%s/%s", base, name);
        e = mount_table_find_target(table, target);
        return e ? tracker_find(t, e->id) : NULL;
}

/* The test's stopped filesystem: the jobs on the mount at 'held' wait in
 * their thread until the test lets them go. */
static struct {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        char held[512]; /* "": none */
} gate = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void gate_hook(const char *target, void *userdata) {
        (void) userdata;
        pthread_mutex_lock(&gate.lock);
        while (gate.held[0] && streq(target, gate.held))
                pthread_cond_wait(&gate.cond, &gate.lock);
        pthread_mutex_unlock(&gate.lock);
}

static void gate_hold(const char *name) {
        pthread_mutex_lock(&gate.lock);
        snprintf(gate.held, sizeof gate.held, "%s/%s", base, name);
        pthread_mutex_unlock(&gate.lock);
}

static void gate_release(void) {
        pthread_mutex_lock(&gate.lock);
        gate.held[0] = '\0';
        pthread_cond_broadcast(&gate.cond);
        pthread_mutex_unlock(&gate.lock);
}

/* What a mount waits for; "measured" once it has a figure. */
static const char *stage(const TrackedMount *m, struct progress *p) {
        struct progress ignored;

        if (!p)
                p = &ignored;
        if (!m)
                return "gone";
        return tracker_mount_progress(m, p) ? p->stage : "measured";
}

typedef bool (*cond_fn)(const Tracker *t, const MountTable *table, const void *arg);

/* Runs the loop (the test's clock standing still) until cond holds or
 * 'ms' of the system's pass. */
static bool run_until(sd_event *e, const Tracker *t, const MountTable *table, cond_fn cond, const void *arg,
                      unsigned ms) {
        struct timespec start, now;

        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                if (cond && cond(t, table, arg))
                        return true;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms)
                        return false;
                (void) sd_event_run(e, 10 * USEC_PER_MSEC);
        }
}

/* Dispatches what is ready now (a job's completion already in the pool's
 * queue, say), without waiting for anything more. */
static void drain(sd_event *e) {
        for (unsigned i = 0; i < 10000 && sd_event_run(e, 0) > 0; i++)
                ;
}

static bool stage_is(const Tracker *t, const MountTable *table, const void *arg) {
        const char *const *want = arg; /* name, stage */

        return streq(stage(mount_at(t, table, want[0]), NULL), want[1]);
}

static bool walked_past(const Tracker *t, const MountTable *table, const void *arg) {
        const uint64_t *past = arg;
        struct progress p = {};

        return streq(stage(mount_at(t, table, "walk"), &p), STAGE_WALKING) && p.walked > *past;
}

struct walk_tick {
        const char *name;
        uint64_t past; /* entries walked before the tick */
};

/* A walk's step of this tick is back (it walked past 'past', and the part
 * walked is baselined), or the walk is done and measuring. */
static bool walk_stepped(const Tracker *t, const MountTable *table, const void *arg) {
        const struct walk_tick *w = arg;
        struct progress p = {};
        const char *now = stage(mount_at(t, table, w->name), &p);

        return streq(now, STAGE_MEASURING) || (streq(now, STAGE_WALKING) && p.walked > w->past && p.eta_s >= 0);
}

static bool stalled(const Tracker *t, const MountTable *table, const void *arg) {
        const TrackedMount *m = mount_at(t, table, arg);

        return m && tracker_mount_stalled(m);
}

static bool not_stalled(const Tracker *t, const MountTable *table, const void *arg) {
        return !stalled(t, table, arg);
}

static bool no_thread_stuck(const Tracker *t, const MountTable *table, const void *arg) {
        (void) table;
        (void) arg;
        return tracker_stuck_threads(t) == 0;
}

static bool all_baselined(const Tracker *t, const MountTable *table, const void *arg) {
        (void) arg;
        for (size_t i = 0; i < table->n; i++) {
                const TrackedMount *m = tracker_find(t, table->entries[i].id);
                struct progress p;

                if (!m || !tracker_mount_progress(m, &p) || !streq(p.stage, STAGE_MEASURING))
                        return false;
        }
        return table->n > 0;
}

static struct config *test_config(void) {
        struct config *c = NULL;

        if (config_new(&c) < 0)
                return NULL;
        c->worker_threads = 2;
        c->sample_size = 64;
        c->sampler_interval_usec = 86400 * USEC_PER_SEC; /* no timed sweep while the test runs */
        c->walk_refresh_usec = 60 * USEC_PER_SEC;
        c->sampler_timeout_usec = 30 * USEC_PER_SEC;
        c->probe_interval_usec = 3600 * USEC_PER_SEC;
        c->probe_timeout_usec = 30 * USEC_PER_SEC;
        return c;
}

typedef struct Rig {
        sd_event *event;
        WorkerPool *pool;
        Tracker *tracker;
        MountTable *table;
} Rig;

static int rig_start(Rig *r, const struct config *c, const char *prefix) {
        *r = (Rig) {};
        if (sd_event_new(&r->event) < 0 || worker_pool_new(r->event, c->worker_threads, &r->pool) < 0 ||
            tracker_new(r->event, r->pool, c, &r->tracker) < 0 || load_table(prefix, &r->table) < 0)
                return -1;
        clock_reset();
        tracker_set_clock(r->tracker, test_clock, NULL);
        tracker_set_job_hook(r->tracker, gate_hook, NULL); /* a no-op but for the mount gate_hold() names */
        return tracker_update(r->tracker, r->table);
}

static void rig_stop(Rig *r) {
        /* A thread still out on a job would outlive its filesystem. */
        (void) run_until(r->event, r->tracker, r->table, no_thread_stuck, NULL, 20000);
        tracker_shutdown(r->tracker);
        worker_pool_free(r->pool);
        tracker_free(r->tracker);
        mount_table_free(r->table);
        sd_event_unref(r->event);
}

/* A walk of 500 entries at 100 a tick: a step per tick of the test's
 * clock, none while it stands still; a refresh a minute after. */
static void test_walk_ticks(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        const char *const walking[] = { "walk", STAGE_WALKING }, *const measuring[] = { "walk", STAGE_MEASURING };
        struct progress p = {};
        uint64_t first;
        unsigned ticks = 0;
        Rig r;

        /* Paced at walk_rate, even on an idle host (where a first walk
         * would otherwise take idle_walk_rate). */
        c->walk_rate = c->idle_walk_rate = 100;
        ok(rig_start(&r, c, "walk") == 0 && r.table->n == 1, "walk: one mount tracked");
        ok(run_until(r.event, r.tracker, r.table, stage_is, walking, 60000), "walk: its first step is out and back");
        (void) stage(mount_at(r.tracker, r.table, "walk"), &p);
        first = p.walked;
        ok(first > 0 && first <= 100, "walk: the first tick walked %" PRIu64 " entries, at most walk_rate", first);
        ok(!run_until(r.event, r.tracker, r.table, walked_past, &first, 1500),
           "walk: the clock standing still, no further step (1.5 s of the system's)");
        advance(r.tracker, USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, walked_past, &first, 60000), "walk: a second later, the next step");
        (void) stage(mount_at(r.tracker, r.table, "walk"), &p);
        ok(p.walked - first <= 100, "walk: of %" PRIu64 " entries", p.walked - first);

        /* A tick at a time, the clock moving on only once the step is back
         * (however long it took on this host). */
        for (ticks = 2; ticks < 30 && !stage_is(r.tracker, r.table, measuring); ticks++) {
                struct walk_tick w = { "walk", 0 };

                (void) stage(mount_at(r.tracker, r.table, "walk"), &p);
                w.past = p.walked;
                advance(r.tracker, USEC_PER_SEC);
                (void) run_until(r.event, r.tracker, r.table, walk_stepped, &w, 60000);
        }
        ok(ticks >= 4 && ticks < 30, "walk: done and baselined after %u ticks (some 600 entries at 100 a tick)", ticks);

        advance(r.tracker, 30 * USEC_PER_SEC);
        ok(!run_until(r.event, r.tracker, r.table, stage_is, walking, 500), "walk: no refresh 30 s after");
        /* The interval's sweep falls due with the refresh. Where it still
         * holds the filesystem when the walk's tick comes (a slow host),
         * the walk waits for the next tick, which the test's clock gives
         * a second at a time until the walk is out. */
        advance(r.tracker, 31 * USEC_PER_SEC);
        for (ticks = 0; ticks < 5 && !run_until(r.event, r.tracker, r.table, stage_is, walking, ticks < 4 ? 2000 : 60000);
             ticks++)
                advance(r.tracker, USEC_PER_SEC);
        ok(ticks < 5, "walk: a refresh walk a minute after (%u tick(s) more)", ticks);
        rig_stop(&r);
}

/* Four small filesystems and a tick's budget for all: each job that comes
 * back starts the next, so all are walked and swept while the clock
 * stands still. */
static void test_kick(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        Rig r;

        c->walk_rate = 100000;
        c->worker_threads = 1;
        ok(rig_start(&r, c, "kick") == 0 && r.table->n == 4, "kick: four mounts tracked");
        ok(run_until(r.event, r.tracker, r.table, all_baselined, NULL, 60000),
           "kick: all four walked and baselined in one tick");
        rig_stop(&r);
}

/* A walk that misses its deadline: stalled, and not tried again before its
 * back-off (10 s of the clock) is over, though it would answer; tried
 * after, it answers and is no longer stalled. The walk misses its deadline
 * because the test holds it in its thread (gate_hook()) until it has seen
 * the stall, whatever the machine's speed. */
static void test_backoff(void) {
        _cleanup_(config_freep) struct config *tight = test_config(), *loose = test_config();
        Rig r;

        tight->walk_rate = loose->walk_rate = 10000000;
        /* A deadline a thread meets in taking the job on any host, however
         * loaded: a job that expires still queued never ran, and is no
         * stall (worker.h). */
        tight->sampler_timeout_usec = 1 * USEC_PER_SEC;
        gate_hold("stall");
        ok(rig_start(&r, tight, "stall") == 0 && r.table->n == 1, "back-off: one mount tracked");
        ok(run_until(r.event, r.tracker, r.table, stalled, "stall", 60000), "back-off: the held walk times out: stalled");
        gate_release();
        ok(run_until(r.event, r.tracker, r.table, no_thread_stuck, NULL, 60000), "back-off: let go, its thread comes back");
        drain(r.event); /* and its completion, queued before the thread came back, is taken in */

        tracker_set_config(r.tracker, loose);
        advance(r.tracker, 5 * USEC_PER_SEC);
        ok(!run_until(r.event, r.tracker, r.table, not_stalled, "stall", 2000),
           "back-off: 5 s after, not tried yet (it would answer now)");
        advance(r.tracker, 4 * USEC_PER_SEC);
        ok(!run_until(r.event, r.tracker, r.table, not_stalled, "stall", 1000), "back-off: nor 9 s after");
        advance(r.tracker, 2 * USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, not_stalled, "stall", 60000),
           "back-off: 11 s after, tried again: it answers, no longer stalled");
        rig_stop(&r);
}

/* Sets the test's wall clock to 'into' usec past a minute: where in the
 * timed sweeps' buckets (a minute here) the next baseline falls. */
static void clock_phase(Tracker *t, uint64_t into) {
        uint64_t real = clock_start[1] + clock_moved, iv = 60 * USEC_PER_SEC;

        clock_start[1] = real - real % iv + into - clock_moved;
        advance(t, 0);
}

static bool measured(const Tracker *t, const MountTable *table, const void *arg) {
        return streq(stage(mount_at(t, table, arg), NULL), "measured");
}

struct waits {
        const char *name, *stage;
        int64_t eta_s;
};

/* A mount at a stage, its first figure due in eta_s (the clock standing
 * still: a baseline taken now says half an interval). */
static bool waits_for(const Tracker *t, const MountTable *table, const void *arg) {
        const struct waits *w = arg;
        struct progress p = {};

        return streq(stage(mount_at(t, table, w->name), &p), w->stage) && p.eta_s == w->eta_s;
}

/* A walk's step of this tick is back (it walked past 'past') and the part
 * walked baselined (the first step's baseline is a sweep of its own: the
 * filesystem is busy with it, and a tick then would pass it by), or the
 * walk is done and the whole sample baselined again (its figure due in
 * 30 s, the clock standing still since). */
static bool walk_ticked(const Tracker *t, const MountTable *table, const void *arg) {
        const struct walk_tick *w = arg;
        const struct waits done = { w->name, STAGE_MEASURING, 30 };
        struct progress p = {};

        return waits_for(t, table, &done) ||
               (streq(stage(mount_at(t, table, w->name), &p), STAGE_WALKING) && p.walked > w->past && p.eta_s >= 0);
}

/* The first figure, sweeps timed every minute at :30: a baseline taken
 * at :01 has the next timed sweep 29 s after it, too close to measure
 * anything, and the one after that 89 s after it. The first figure comes
 * 30 s after the baseline all the same: while the first walk runs (from
 * the part walked) and where the walk ended before (the whole sample,
 * baselined again when it ended). */
static void test_first_figure(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        const struct waits walking = { "first", STAGE_WALKING, 30 }, measuring = { "quick", STAGE_MEASURING, 30 };
        const TrackedMount *m;
        struct progress p = {};
        struct walk_tick w;
        unsigned ticks;
        Rig r;

        c->sampler_interval_usec = 60 * USEC_PER_SEC;
        c->walk_rate = c->idle_walk_rate = 100;
        ok(rig_start(&r, c, "first") == 0 && r.table->n == 1, "first figure, walking: one mount tracked");
        clock_phase(r.tracker, USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, waits_for, &walking, 60000),
           "first figure, walking: the first step's part baselined, the figure due in 30 s");
        advance(r.tracker, 29 * USEC_PER_SEC); /* the timed sweep at :30: too close */
        ok(!run_until(r.event, r.tracker, r.table, measured, "first", 1000), "first figure, walking: none 29 s after");
        advance(r.tracker, USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, measured, "first", 60000), "first figure, walking: 30 s after");
        m = mount_at(r.tracker, r.table, "first");
        ok(m && m->activity.have && m->activity.coverage < 1 && m->activity.seconds == 30,
           "first figure, walking: from the part walked (coverage %.3f), over %.1f s", m ? m->activity.coverage : -1,
           m ? m->activity.seconds : -1);
        rig_stop(&r);

        ok(rig_start(&r, c, "quick") == 0 && r.table->n == 1, "first figure, walked: one mount tracked");
        clock_phase(r.tracker, USEC_PER_SEC);
        /* A tick at a time until the walk is done and baselined again:
         * the clock moves on only once a step is back (however long it
         * took), and not after the last, whose end baselines the whole
         * sample at once. */
        w = (struct walk_tick) { "quick", 0 };
        (void) run_until(r.event, r.tracker, r.table, walk_ticked, &w, 60000); /* the first step needs no tick */
        for (ticks = 0; ticks < 30 && !waits_for(r.tracker, r.table, &measuring); ticks++) {
                (void) stage(mount_at(r.tracker, r.table, "quick"), &p);
                w.past = p.walked;
                advance(r.tracker, USEC_PER_SEC);
                (void) run_until(r.event, r.tracker, r.table, walk_ticked, &w, 60000);
        }
        ok(ticks >= 2 && ticks < 30,
           "first figure, walked: the walk done after %u ticks, baselined again, the figure due in 30 s", ticks);
        advance(r.tracker, 29 * USEC_PER_SEC);
        ok(!run_until(r.event, r.tracker, r.table, measured, "quick", 1000), "first figure, walked: none 29 s after");
        advance(r.tracker, USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, measured, "quick", 60000), "first figure, walked: 30 s after");
        m = mount_at(r.tracker, r.table, "quick");
        ok(m && m->activity.have && m->activity.coverage == 1 && m->activity.seconds == 30,
           "first figure, walked: from the whole sample (coverage %.3f), over %.1f s", m ? m->activity.coverage : -1,
           m ? m->activity.seconds : -1);
        rig_stop(&r);
}

/* A filesystem on a block device: its UUID is looked up first, a job of
 * its own, and the first walk may not wait for anything but that job:
 * with the clock standing still (and no timed sweep for a day), its first
 * step comes. It waited for the next timed sweep before. */
static bool walk_began(const Tracker *t, const MountTable *table, const void *arg) {
        const char *st = stage(mount_at(t, table, arg), NULL);

        return streq(st, STAGE_WALKING) || streq(st, STAGE_BASELINE) || streq(st, STAGE_MEASURING);
}

static void test_device_walk(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        char cmd[1024];
        Rig r;

        snprintf(cmd, sizeof cmd,
                 "truncate -s 16M %1$s/disk.img && mkfs.ext4 -q -F %1$s/disk.img && mkdir -p %1$s/disk && "
                 "mount -o loop,strictatime %1$s/disk.img %1$s/disk && mkdir %1$s/disk/d && touch %1$s/disk/d/f",
                 base);
        if (system(cmd) != 0) {
                printf("ok %u # SKIP no ext4 on a loop device here\n", ++tap_n);
                return;
        }
        c->walk_rate = c->idle_walk_rate = 100;
        ok(rig_start(&r, c, "disk") == 0 && r.table->n == 1, "device: one mount tracked");
        ok(run_until(r.event, r.tracker, r.table, walk_began, "disk", 60000),
           "device: its UUID looked up, the first walk steps with the clock standing still");
        rig_stop(&r);
        snprintf(cmd, sizeof cmd, "%s/disk", base);
        (void) umount2(cmd, MNT_DETACH);
        (void) rmdir(cmd);
        snprintf(cmd, sizeof cmd, "%s/disk.img", base);
        (void) unlink(cmd);
        snprintf(cmd, sizeof cmd, "%s/mountinfo-disk", base);
        (void) unlink(cmd);
}

/* The test's wait for the tracker to be idle: every job it made is back,
 * and nothing it planned is due with the clock standing still. */
static bool no_job_out(const Tracker *t, const MountTable *table, const void *arg) {
        (void) table;
        (void) arg;
        return tracker_jobs_out(t) == 0;
}

static bool settle(Rig *r) {
        for (unsigned i = 0; i < 100; i++) {
                if (!run_until(r->event, r->tracker, r->table, no_job_out, NULL, 60000))
                        return false;
                drain(r->event); /* a timer that came due as the last job came back */
                if (tracker_jobs_out(r->tracker) == 0)
                        return true;
        }
        return false;
}

static bool all_measured(const Tracker *t, const MountTable *table, const void *arg) {
        (void) arg;
        for (size_t i = 0; i < table->n; i++) {
                const TrackedMount *m = tracker_find(t, table->entries[i].id);
                struct progress p;

                if (!m || tracker_mount_progress(m, &p))
                        return false;
        }
        return table->n > 0;
}

#define TURN_MOUNTS 3
static const char *const turn_mounts[TURN_MOUNTS] = { "turn1", "turn2", "turn3" };

/* The jobs begun on the turn mounts, counted in the worker's thread. */
static struct {
        pthread_mutex_t lock;
        unsigned jobs[TURN_MOUNTS];
        unsigned total; /* on any mount */
} turns = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void turn_hook(const char *target, void *userdata) {
        char want[512];

        (void) userdata;
        pthread_mutex_lock(&turns.lock);
        turns.total++;
        for (size_t i = 0; i < TURN_MOUNTS; i++) {
                snprintf(want, sizeof want, "%s/%s", base, turn_mounts[i]);
                turns.jobs[i] += streq(target, want);
        }
        pthread_mutex_unlock(&turns.lock);
}

static unsigned turn_jobs(size_t i) {
        unsigned n;

        pthread_mutex_lock(&turns.lock);
        n = i < TURN_MOUNTS ? turns.jobs[i] : turns.total;
        pthread_mutex_unlock(&turns.lock);
        return n;
}

/* A pass's jobs have begun (the total counted is 'arg') and are back. */
static bool pass_back(const Tracker *t, const MountTable *table, const void *arg) {
        return turn_jobs(TURN_MOUNTS) == *(const unsigned *) arg && no_job_out(t, table, NULL);
}

/* A file of each turn mount, read an hour after its last write (the
 * times set back: under relatime, the read writes its atime). */
static bool turn_files(bool read_them) {
        struct timeval back[2];
        char path[512], c;

        gettimeofday(&back[1], NULL);
        back[0] = back[1];
        back[0].tv_sec -= 7200;
        back[1].tv_sec -= 3600;
        for (size_t i = 0; i < TURN_MOUNTS; i++) {
                int fd;
                bool done;

                snprintf(path, sizeof path, "%s/%s/d0/f0", base, turn_mounts[i]);
                fd = open(path, (read_them ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
                if (fd < 0)
                        return false;
                done = read_them ? read(fd, &c, 1) == 1 : write(fd, "x", 1) == 1;
                close(fd);
                if (!done || (!read_them && utimes(path, back) < 0))
                        return false;
        }
        return true;
}

/* Three filesystems with inodes to look at again every second, and two
 * job slots (twice the one worker thread: max_jobs()): a fine pass that
 * offered the slots from the first filesystem on every time would give
 * the same two a fine sweep at every pass and the third none. Each pass
 * begins where the last one's slots ran out, so each filesystem has its
 * fine sweep within three passes, and the slots go round evenly. The
 * passes are the test's (tracker_fine_pass()), the clock standing still,
 * each once the last one's jobs are back: no pass finds a filesystem
 * still busy with the last. */
static void test_fine_turns(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        unsigned want = 0;
        bool each = true, even = true;
        Rig r;

        c->walk_rate = 100000;
        c->worker_threads = 1;
        c->sampler_interval_usec = 60 * USEC_PER_SEC;
        ok(turn_files(false), "fine turns: a file in each mount, its times an hour back");
        ok(rig_start(&r, c, "turn") == 0 && r.table->n == TURN_MOUNTS, "fine turns: %d mounts tracked", TURN_MOUNTS);
        clock_phase(r.tracker, USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, all_baselined, NULL, 60000) && settle(&r),
           "fine turns: all walked and baselined, the clock standing still");
        /* Read now, found moved by the first figure's sweep 30 s on: an
         * inode to look at again every second on each filesystem for two
         * intervals (sampler.h). */
        ok(turn_files(true), "fine turns: each mount's file read");
        advance(r.tracker, 30 * USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, all_measured, NULL, 60000) && settle(&r),
           "fine turns: all measured, their read files hot");

        tracker_set_job_hook(r.tracker, turn_hook, NULL);
        for (unsigned pass = 1; pass <= TURN_MOUNTS; pass++) {
                bool back;

                want += 2;
                tracker_fine_pass(r.tracker);
                back = run_until(r.event, r.tracker, r.table, pass_back, &want, 60000);
                ok(back, "fine turns: pass %u: its two slots taken, the jobs back (%u, %u, %u)", pass, turn_jobs(0),
                   turn_jobs(1), turn_jobs(2));
        }
        for (size_t i = 0; i < TURN_MOUNTS; i++) {
                each = each && turn_jobs(i) > 0;
                even = even && turn_jobs(i) == 2;
        }
        ok(each, "fine turns: each filesystem had its fine sweep within %d passes (%u, %u, %u)", TURN_MOUNTS,
           turn_jobs(0), turn_jobs(1), turn_jobs(2));
        ok(even && turn_jobs(TURN_MOUNTS) == 2 * TURN_MOUNTS, "fine turns: two each, and no other job (%u in all)",
           turn_jobs(TURN_MOUNTS));
        tracker_set_job_hook(r.tracker, gate_hook, NULL);
        rig_stop(&r);
}

/* The borrow: a walk or sweep is lent its filesystem's sampler, and the
 * loop reads only what the last job left (sampler.h) while the job has
 * it. Here the sweep that takes the first walk's baseline is held in its
 * thread as the walk comes back, and the loop plans the walks again
 * (kick(), and once more as the clock moves) and reports progress
 * meanwhile: it must do so from the view, for the sweep moves the
 * finished walk's reservoir ('next') into 'current' as it runs. Where the
 * loop read the sampler, its token aborts the test (sampler_lend()); with
 * that token gone too, ThreadSanitizer reports the race. The job waits on
 * a relaxed atomic, so that no lock orders what the loop does meanwhile
 * before what the sweep does after. */
static char spin_target[512];
static atomic_uint spin_jobs; /* jobs begun on spin_target */
static atomic_bool spin_hold, spin_in;

static void spin_hook(const char *target, void *userdata) {
        (void) userdata;
        if (!streq(target, spin_target) || atomic_fetch_add_explicit(&spin_jobs, 1, memory_order_relaxed) != 1)
                return; /* the walk step passes; the sweep after it waits */
        atomic_store_explicit(&spin_in, true, memory_order_relaxed);
        while (atomic_load_explicit(&spin_hold, memory_order_relaxed))
                sched_yield();
}

static bool spin_entered(const Tracker *t, const MountTable *table, const void *arg) {
        (void) t;
        (void) table;
        (void) arg;
        return atomic_load_explicit(&spin_in, memory_order_relaxed);
}

static void test_borrow(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        const char *const measuring[] = { "borrow", STAGE_MEASURING };
        bool in;
        Rig r;

        c->walk_rate = c->idle_walk_rate = 100000; /* the walk in one step */
        snprintf(spin_target, sizeof spin_target, "%s/borrow", base);
        atomic_store(&spin_hold, true);
        ok(rig_start(&r, c, "borrow") == 0 && r.table->n == 1, "borrow: one mount tracked");
        tracker_set_job_hook(r.tracker, spin_hook, NULL);
        in = run_until(r.event, r.tracker, r.table, spin_entered, NULL, 60000);
        ok(in, "borrow: the walk back, the sweep for its baseline is out, held in its thread");
        /* The kick that sent the sweep planned the walks; this move of the
         * clock plans them again, and the progress is asked for. */
        advance(r.tracker, USEC_PER_SEC);
        drain(r.event);
        ok(streq(stage(mount_at(r.tracker, r.table, "borrow"), NULL), STAGE_BASELINE),
           "borrow: meanwhile the loop planned and reported from the view: a walk done, its baseline to take (%s)",
           stage(mount_at(r.tracker, r.table, "borrow"), NULL));
        atomic_store_explicit(&spin_hold, false, memory_order_relaxed);
        ok(run_until(r.event, r.tracker, r.table, stage_is, measuring, 60000),
           "borrow: let go, the sweep back: baselined, measuring");
        tracker_set_job_hook(r.tracker, gate_hook, NULL);
        rig_stop(&r);
}

/* A btrfs at base/btrfs mounted noatime alone, on a loop device of its
 * own (its name in base/btrfs.loop): false where this host cannot. */
static bool make_btrfs(void) {
        char cmd[4096];

        snprintf(cmd, sizeof cmd,
                 "command -v mkfs.btrfs >/dev/null && truncate -s 128M %1$s/btrfs.img && "
                 "mkfs.btrfs -q -f %1$s/btrfs.img >/dev/null 2>&1 && mkdir -p %1$s/btrfs && "
                 "losetup -f --show %1$s/btrfs.img >%1$s/btrfs.loop && "
                 "mount -t btrfs -o noatime $(cat %1$s/btrfs.loop) %1$s/btrfs 2>/dev/null",
                 base);
        return system(cmd) == 0;
}

static void drop_btrfs(void) {
        char cmd[4096];

        snprintf(cmd, sizeof cmd,
                 "umount %1$s/btrfs 2>/dev/null; [ -s %1$s/btrfs.loop ] && losetup -d $(cat %1$s/btrfs.loop); "
                 "rm -f %1$s/btrfs.img %1$s/btrfs.loop %1$s/mountinfo-btrfs; rmdir %1$s/btrfs 2>/dev/null",
                 base);
        (void) system(cmd);
}

static bool looked(const Tracker *t, const MountTable *table, const void *arg) {
        const TrackedMount *m = mount_at(t, table, arg);
        struct btrfs_status b;

        return m && tracker_mount_btrfs(m, &b) && b.have && b.facts.have_space && b.facts.metadata_bytes_used > 0 &&
               b.source == BTRFS_BYTES_NO_ATIME && b.per_day == 0;
}

/* No mount of the btrfs writes atime: no walk, no sweep, but a look of
 * its own at each timed sweep. One that hangs (held by the test) misses
 * its deadline: the filesystem is stalled, the loop goes on, and it is
 * looked at again after its back-off (10 s), at a timed sweep. On the
 * system's clock, with timed sweeps every 2 s (the test's clock never
 * makes them due); every wait ends as soon as what it waits for is done. */
static void test_btrfs_look(void) {
        _cleanup_(config_freep) struct config *tight = test_config(), *loose = test_config();
        struct progress p;
        Rig r;

        tight->sampler_interval_usec = loose->sampler_interval_usec = 2 * USEC_PER_SEC;
        tight->sampler_timeout_usec = 1 * USEC_PER_SEC;
        tight->probe_interval_usec = loose->probe_interval_usec = 365ULL * 86400 * USEC_PER_SEC;
        ok(rig_start(&r, tight, "btrfs") == 0 && r.table->n == 1, "btrfs look: one mount tracked");
        tracker_set_clock(r.tracker, NULL, NULL);
        ok(run_until(r.event, r.tracker, r.table, looked, "btrfs", 60000),
           "btrfs look: looked at a timed sweep: its metadata bytes there, 0 bytes a day, said no_atime");
        ok(!tracker_mount_progress(mount_at(r.tracker, r.table, "btrfs"), &p), "btrfs look: nothing to walk or sweep");
        gate_hold("btrfs");
        ok(run_until(r.event, r.tracker, r.table, stalled, "btrfs", 60000),
           "btrfs look: the next look, held, misses its deadline: stalled, the loop goes on");
        gate_release();
        ok(run_until(r.event, r.tracker, r.table, no_thread_stuck, NULL, 60000), "btrfs look: let go, its thread back");
        drain(r.event);
        tracker_set_config(r.tracker, loose);
        ok(run_until(r.event, r.tracker, r.table, not_stalled, "btrfs", 60000) && looked(r.tracker, r.table, "btrfs"),
           "btrfs look: after its back-off, a look answers: no longer stalled, its facts there");
        rig_stop(&r);
}

/* A btrfs look's time is the tracker's (tracker_set_clock()), as a
 * sweep's is: the status says when the look was taken on the clock the
 * schedule runs on, here the test's, its wall clock a day behind the
 * system's. A mount of the btrfs that writes atime (a bind mount,
 * strictatime) is sampled: its first walk's baseline sweep brings a look
 * with it. */
static bool looked_once(const Tracker *t, const MountTable *table, const void *arg) {
        const TrackedMount *m = mount_at(t, table, arg);
        struct btrfs_status b;

        return m && tracker_mount_btrfs(m, &b) && b.at != 0;
}

static void test_btrfs_clock(void) {
        _cleanup_(config_freep) struct config *c = test_config();
        const TrackedMount *m;
        struct btrfs_status b = {};
        char cmd[4096];
        int64_t want;
        Rig r;

        snprintf(cmd, sizeof cmd,
                 "mkdir -p %1$s/btrfsclock && mount --bind %1$s/btrfs %1$s/btrfsclock && "
                 "mount -o remount,bind,strictatime %1$s/btrfsclock",
                 base);
        if (system(cmd) != 0) {
                printf("ok %u # SKIP no bind mount of the btrfs here\n", ++tap_n);
                return;
        }
        c->walk_rate = c->idle_walk_rate = 100000;
        ok(rig_start(&r, c, "btrfsclock") == 0 && r.table->n == 1, "btrfs clock: one mount tracked");
        clock_start[1] -= 86400 * USEC_PER_SEC;
        advance(r.tracker, 0);
        want = (int64_t) ((clock_start[1] + clock_moved) / USEC_PER_SEC);
        ok(run_until(r.event, r.tracker, r.table, looked_once, "btrfsclock", 60000), "btrfs clock: looked at with a sweep");
        m = mount_at(r.tracker, r.table, "btrfsclock");
        if (!m || !tracker_mount_btrfs(m, &b))
                b = (struct btrfs_status) {};
        ok(b.at >= want - 2 && b.at <= want + 2,
           "btrfs clock: the look's time, %lld, is the tracker's clock's (%lld), not the system's (%lld)",
           (long long) b.at, (long long) want, (long long) (want + 86400));
        rig_stop(&r);
        snprintf(cmd, sizeof cmd, "umount %1$s/btrfsclock; rmdir %1$s/btrfsclock; rm -f %1$s/mountinfo-btrfsclock", base);
        (void) system(cmd);
}

int main(void) {
        static const char *const mounts[] = { "kick1", "kick2", "kick3", "kick4" };
        char path[512];
        bool ready;

        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            !mkdtemp(base)) {
                printf("1..0 # SKIP needs root and a mount namespace of its own\n");
                return 0;
        }
        log_set_max_level(getenv("TEST_DEBUG") ? LOG_DEBUG : LOG_ERR);
        ready = make_mount("walk", 500) == 0 && make_mount("stall", 100) == 0 && make_mount("first", 2000) == 0 &&
                make_mount("quick", 300) == 0;
        for (size_t i = 0; i < ELEMENTSOF(mounts); i++)
                ready = ready && make_mount(mounts[i], 3) == 0;
        for (size_t i = 0; i < TURN_MOUNTS; i++)
                ready = ready && make_mount(turn_mounts[i], 3) == 0;
        ready = ready && make_mount("borrow", 300) == 0;
        ok(ready, "tmpfs mounts made under %s", base);
        if (ready) {
                test_walk_ticks();
                test_kick();
                test_backoff();
                test_first_figure();
                test_device_walk();
                test_fine_turns();
                test_borrow();
        }
        if (make_btrfs()) {
                test_btrfs_look();
                test_btrfs_clock();
        }
        else
                printf("# no btrfs here (mkfs.btrfs, a loop device): the btrfs look not tested\n");
        drop_btrfs();

        for (const char *const *n = (const char *const[]) { "walk", "stall", "kick1", "kick2", "kick3", "kick4", "first", "quick",
                                                             "turn1", "turn2", "turn3", "borrow", NULL };
             *n; n++) {
                snprintf(path, sizeof path, "%s/%s", base, *n);
                (void) umount2(path, MNT_DETACH);
                (void) rmdir(path);
        }
        for (const char *const *n = (const char *const[]) { "walk", "kick", "stall", "first", "quick", "turn", "borrow", NULL }; *n;
             n++) {
                snprintf(path, sizeof path, "%s/mountinfo-%s", base, *n);
                (void) unlink(path);
        }
        (void) rmdir(base);
        return tap_done();
}
