/* tick.c: each sampler interval's pass over every mount (see tick.h). */
#include "tick.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "journal.h"
#include "log.h"
#include "recommend.h"
#include "time-util.h"
#include "verdict.h"

/* ---------------------------------------------------------------- per-mount notes */

/* What the pass keeps of each tracked mount, apart from what the tracker
 * knows: the advice it announced and a new one waiting to hold long enough
 * to be announced; and, since a mount's first samples wait until it has been
 * there a whole sampler interval (so churn leaves no history), those held.
 * One per entry of the view's table, sorted by the mount id the tracker
 * uses too. */
typedef struct MountNotes {
        int id;
        struct {
                int announced, pending;
                unsigned pending_ticks;
        } advice;
        struct {
                unsigned ticks;
                unsigned n_held;
                struct stats_sample held[4];
                bool refused; /* its key could not be stored: said once */
                int64_t tick_t; /* the last tick whose sample is recorded */
        } history;
} MountNotes;

static MountNotes *notes_find(MountNotes *v, size_t n, int id) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (v[mid].id == id)
                        return &v[mid];
                if (v[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* Once per sampler interval, for every mount: the tick's sample in its
 * history, its advice (announced once it has held), and its part of the
 * textfile's report. At thousands of mounts that is tens of milliseconds,
 * and a request behind it would wait as long: the pass runs in slices of
 * TICK_SLICE_USEC from a defer source of idle priority, so that requests,
 * timers and completions come first between slices. A new table restarts
 * it from the first mount (samples already taken are not taken again); a
 * tick or a reload that comes while one is out finishes it first. */
#define TICK_SLICE_USEC 1000

struct Tick {
        const View *view;
        Store *store;
        Exporter *exporter;
        TickHooks hooks;
        StatusCounters *counters;
        MountNotes *notes;
        size_t n_notes;
        bool stopping;          /* no export from here on */

        sd_event_source *defer; /* enabled while a pass is out */
        bool active;
        int64_t t;              /* the tick: Unix seconds */
        size_t next;            /* the next entry of the view's table */
        Recommender *rec;       /* NULL: (re)start from the first mount */
        Report *report;         /* for the textfile, if there is one */
        ExportTiming loop;      /* what the report took on the loop, summed over slices */
};

static MountNotes *tick_notes(Tick *t, int mount_id) {
        return notes_find(t->notes, t->n_notes, mount_id);
}

bool tick_history_refused(const Tick *t, int mount_id) {
        const MountNotes *n = t ? notes_find(t->notes, t->n_notes, mount_id) : NULL;

        return n && n->history.refused;
}

const StatusCounters *tick_counters(const Tick *t) {
        return t ? t->counters : NULL;
}

bool tick_active(const Tick *t) {
        return t && t->active;
}

/* The tick a pass is out for, or 0. */
static int64_t pass_tick(const Tick *t) {
        return t->active ? t->t : 0;
}

int tick_set_table(Tick *t, const MountTable *table) {
        MountNotes *v = calloc(table->n ? table->n : 1, sizeof *v);
        size_t j = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < table->n; i++) {
                int id = table->entries[i].id;

                assert(i == 0 || table->entries[i - 1].id < id); /* the table is sorted by id */
                while (j < t->n_notes && t->notes[j].id < id)
                        j++;
                if (j < t->n_notes && t->notes[j].id == id)
                        v[i] = t->notes[j];
                else
                        /* New since the tick a pass is out for: its first
                         * tick is the next one, as it would have been had
                         * the pass been done at once. */
                        v[i] = (MountNotes) { .id = id, .history.tick_t = pass_tick(t) };
        }
        free(t->notes);
        t->notes = v;
        t->n_notes = table->n;
        tick_restart(t);
        return 0;
}

/* ---------------------------------------------------------------- history */

static struct stats_sample policy_sample(const TrackedMount *tm, int64_t t) {
        const struct mount_policy *p = &tm->entry->policy;
        struct stats_sample s = {
                .t = t,
                .has_policy = true,
                .atime = (uint8_t) p->atime,
                .flags = (uint8_t) ((p->nodiratime ? STATS_NODIRATIME : 0) | (p->lazytime ? STATS_LAZYTIME : 0) |
                                    (p->read_only ? STATS_READ_ONLY : 0) |
                                    (tracker_mount_stalled(tm) ? STATS_STALLED : 0)),
        };

        if (tm->probe.have) {
                s.flags |= STATS_PROBED;
                if (tm->probe.result.verified) {
                        s.flags |= STATS_PROBE_VERIFIED;
                        s.probe = (uint8_t) tm->probe.result.effective;
                }
        }
        return s;
}

/* A change of policy the store has just recorded, said once: the verdict
 * on it follows in atimectl recommend and history. */
static void change_log(const TrackedMount *tm, const struct stats_change *c) {
        char was[64], now[64], promise[128] = "the advice then was to keep the policy";

        snprintf(was, sizeof was, "%s%s", atime_mode_to_string((AtimeMode) c->from), c->from_flags & STATS_LAZYTIME ? ",lazytime" : "");
        snprintf(now, sizeof now, "%s%s", atime_mode_to_string((AtimeMode) c->to), c->to_flags & STATS_LAZYTIME ? ",lazytime" : "");
        if (c->promise.t > 0)
                snprintf(promise, sizeof promise, "the advice then was %s%s, saving %.0f atime updates/min",
                         atime_mode_to_string((AtimeMode) c->promise.atime), c->promise.flags & STATS_LAZYTIME ? ",lazytime" : "",
                         c->promise.saving_per_min);
        log_mount_notice(tm->entry->target, "%s: atime policy changed from %s to %s; %s. The saving is judged once %d points lie on each side.",
                         tm->entry->target, was, now, promise, VERDICT_MIN_POINTS);
}

static void history_record(Tick *t, const TrackedMount *tm, MountNotes *n, const struct stats_sample *s) {
        const char *key = tracker_mount_key(tm);
        const MountHistory *h;
        int64_t change_t;
        int r;

        if (!key || !t->store)
                return; /* who the filesystem is is not known yet, or no history is kept */
        h = store_find(t->store, key);
        change_t = h ? h->change.t : 0;
        r = store_add(t->store, key, s);
        if (r >= 0 && (h = store_find(t->store, key)) && h->change.t != change_t)
                change_log(tm, &h->change);
        if (r >= 0 && tracker_mount_is_users(tm->entry))
                store_mark_users(t->store, key); /* it gives way first when slots run short */
        if (r < 0 && !n->history.refused)
                log_mount_warning_errno(tm->entry->target, r, "%s: cannot record history: %m", tm->entry->target);
        n->history.refused = r < 0;
}

/* A mount that comes and goes within one sampler interval (a container's,
 * a test's, an automount probing) would otherwise leave a history the
 * store keeps for months: its samples are held until it has been seen at
 * two ticks, then recorded in order. */
#define HISTORY_SETTLE_TICKS 2

static void history_add_sample(Tick *t, const TrackedMount *tm, const struct stats_sample *s) {
        MountNotes *n = tick_notes(t, tm->id);

        if (!n)
                return; /* not in the view's table (yet): nothing to record it under */
        if (n->history.ticks < HISTORY_SETTLE_TICKS) {
                if (n->history.n_held < ELEMENTSOF(n->history.held))
                        n->history.held[n->history.n_held++] = *s;
                return;
        }
        for (unsigned i = 0; i < n->history.n_held; i++)
                history_record(t, tm, n, &n->history.held[i]);
        n->history.n_held = 0;
        history_record(t, tm, n, s);
}

/* On a btrfs mount snapshots share, looked at through itself: the bytes
 * atime un-shared over the interval its filesystem's sweep just ended
 * (measured or modelled, btrfs-meter.h), into the activity's sample. */
static void btrfs_sample(const TrackedMount *tm, struct stats_sample *s) {
        struct btrfs_status b;

        if (!tracker_mount_btrfs(tm, &b) || !b.rate_fresh || !btrfs_status_shows_bytes(&b))
                return;
        s->has_unshared = true;
        /* A modelled 0 gives the point no modelled byte (as the meter's
         * mean_source): the point is not said modelled for it. */
        s->unshared_modelled = b.rate_source == BTRFS_FIGURE_MODELLED && b.per_day > 0;
        /* Over this interval alone: held intervals confirmed now count here. */
        s->unshared_per_day = (float) b.step_per_day;
        s->unshared_lo = (float) b.step_lo;
        s->unshared_hi = (float) b.step_hi;
}

/* The btrfs model travels with the history of the mount it is learned
 * through (store_set_unshare_model()), and a filesystem whose meter has
 * learned nothing yet (a restart) starts from the one kept. */
static void btrfs_model_keep(Tick *t, const TrackedMount *tm) {
        const char *key = tracker_mount_key(tm);
        const MountHistory *h = key && t->store ? store_find(t->store, key) : NULL;
        BtrfsModel m;

        if (!h || !tracker_mount_btrfs_model(tm, &m))
                return;
        if (m.intervals == 0 && h->unshare_model.intervals > 0) {
                BtrfsModel saved = { .bytes = h->unshare_model.bytes, .inodes = h->unshare_model.inodes,
                                     .hits = h->unshare_model.hits, .intervals = h->unshare_model.intervals,
                                     .agreed = h->unshare_model.agreed };

                tracker_mount_btrfs_seed(tm, &saved);
        } else if (m.intervals > 0 && m.keep) { /* one beyond the cost table's range is not saved (btrfs-model.h) */
                struct btrfs_status b;

                /* Kept with the mount looked through, not every mount of the filesystem. */
                if (tracker_mount_btrfs(tm, &b) && b.looked && b.sampled)
                        store_set_unshare_model(t->store, key,
                                                &(struct stats_unshare_model) { .bytes = m.bytes, .inodes = m.inodes,
                                                                                .hits = m.hits, .intervals = m.intervals,
                                                                                .agreed = m.agreed });
        }
}

/* Mount tm's sample of the tick at t, once (the tick pass, or an
 * activity that comes before the pass reached it). */
static void tick_sample(Tick *t, const TrackedMount *tm, int64_t at) {
        struct stats_sample s = policy_sample(tm, at);
        MountNotes *n = tick_notes(t, tm->id);
        struct device_rate rate;

        if (n) {
                if (n->history.tick_t == at)
                        return;
                n->history.tick_t = at;
                if (n->history.ticks < HISTORY_SETTLE_TICKS)
                        n->history.ticks++;
        }

        if (tracker_mount_device_rate(tm, &rate)) {
                s.has_device = true;
                s.write_iops = (float) rate.write_iops;
                s.write_kib = (float) rate.write_kib_per_s;
        }
        if (!tracker_mount_writes_atime(tm))
                s.has_activity = true; /* exactly zero, measured by construction */
        history_add_sample(t, tm, &s);
        btrfs_model_keep(t, tm);
}

void tick_activity(Tick *t, const TrackedMount *tm, const struct activity *a) {
        double per_min, lo, hi;
        struct stats_sample s = {
                .t = (int64_t) (a->at / USEC_PER_SEC),
                .has_activity = true,
                /* History keeps what the kernel writes: updates, not inodes. */
                .per_min = (float) a->updates.per_min,
                .lo = (float) a->updates.lo,
                .hi = (float) a->updates.hi,
        };

        /* The tick's sample first, as if the pass had been through. */
        if (t->active)
                tick_sample(t, tm, t->t);
        /* The counter of atime updates: the interval's rate times its length. */
        status_activity_updates(a, &per_min, &lo, &hi);
        if (status_counters_add(t->counters, tm->entry->target, per_min * a->seconds / 60.0) < 0)
                log_oom();
        btrfs_sample(tm, &s);
        history_add_sample(t, tm, &s);
}
/* ---------------------------------------------------------------- advice events */

#define MESSAGE_ID_RECOMMENDATION "9a1f3c7e2b5d48e6a0c4f8d2e6b1a7c3"

/* What a mount's advice says, as one number: the policy advised and
 * whether that is a change. */
static int advice_state(const struct advice *a) {
        return 1 + (((int) a->atime * 2 + (a->nodiratime ? 1 : 0)) * 2 + (a->lazytime ? 1 : 0)) * 2 + (a->change ? 1 : 0);
}

static void state_format(int state, char *buf, size_t len) {
        int policy = (state - 1) / 2;

        snprintf(buf, len, "%s %s%s%s", (state - 1) % 2 ? "change to" : "keep",
                 atime_mode_to_string((AtimeMode) (policy / 4)), (policy / 2) % 2 ? ",nodiratime" : "",
                 policy % 2 ? ",lazytime" : "");
}

static void announce(const struct recommendation *r, int previous) {
        char opts[64], prev[64], now[64], saving[128] = "";
        const struct advice *a = &r->advice;
        bool journal = journal_socket_available();

        advice_options(a, opts, sizeof opts);
        state_format(previous, prev, sizeof prev);
        state_format(advice_state(a), now, sizeof now);
        if (a->saving_updates_per_min > 0)
                snprintf(saving, sizeof saving, "; saves %.0f atime updates/min", a->saving_updates_per_min);
        /* Where stderr is the journal's stream, the native entry alone. */
        if (!journal_available())
                log_mount_notice(r->in.target, "Recommendation for %s changed from '%s' to '%s' (confidence %s): %s%s", r->in.target, prev,
                           now, advice_confidence_to_string(a->confidence), a->n_reasons ? a->reasons[0] : "", saving);
        if (journal)
                (void) sd_journal_send("MESSAGE=Recommendation for %s changed from '%s' to '%s': %s%s", r->in.target,
                                       prev, now, a->n_reasons ? a->reasons[0] : "", saving,
                                       "MESSAGE_ID=" MESSAGE_ID_RECOMMENDATION, "PRIORITY=%d", LOG_NOTICE,
                                       "SYSLOG_IDENTIFIER=atimed", "ATIMED_TARGET=%s", r->in.target,
                                       "ATIMED_FSTYPE=%s", r->in.fstype, "ATIMED_CURRENT=%s",
                                       atime_mode_to_string(r->in.policy.atime), "ATIMED_RECOMMENDED=%s", opts,
                                       "ATIMED_PREVIOUS=%s", prev, "ATIMED_ACTION=%s", a->action,
                                       "ATIMED_CONFIDENCE=%s", advice_confidence_to_string(a->confidence),
                                       "ATIMED_SAVING_UPDATES_PER_MIN=%.0f", a->saving_updates_per_min,
                                       "ATIMED_SAVING_CPU_US_PER_S=%.1f", a->saving_cpu_us_per_s,
                                       "ATIMED_SAVING_KIB_PER_S=%.1f", a->saving_kib_per_s, NULL);
}

/* Advice must hold this many sampler intervals before it is announced: a
 * rate hovering around the threshold must not fill the journal. */
#define ADVICE_STABLE_TICKS 3

/* A mount's advice this tick: announced once it has held long enough and
 * differs from what was announced. The first advice is settled silently. */
static void advice_settle(Tick *t, MountNotes *n, const struct recommendation *r) {
        int state = advice_state(&r->advice);

        if (state == n->advice.announced) {
                n->advice.pending = 0;
                return;
        }
        if (state != n->advice.pending) {
                n->advice.pending = state;
                n->advice.pending_ticks = 0;
        }
        if (++n->advice.pending_ticks < ADVICE_STABLE_TICKS)
                return;
        if (n->advice.announced != 0) {
                announce(r, n->advice.announced);
                status_counters_advice_changed(t->counters);
                if (t->hooks.changed)
                        t->hooks.changed(t->hooks.userdata); /* shown in GetStatus at once */
        }
        n->advice.announced = state;
        n->advice.pending = 0;
}

/* What the advice promises, for the store to hold against a change of
 * policy: advice to keep promises nothing, nor advice of nodiratime alone
 * (its saving is in bytes, not in the atime updates a verdict weighs). */
static void promise_record(Tick *t, const TrackedMount *tm, const struct recommendation *r) {
        const char *key = tracker_mount_key(tm);
        bool policy = r->advice.atime != r->in.policy.atime || r->advice.lazytime != r->in.policy.lazytime;
        struct stats_promise p = {
                .t = r->advice.change && policy ? t->t : 0,
                .atime = (uint8_t) r->advice.atime,
                .flags = r->advice.lazytime ? STATS_LAZYTIME : 0,
                .for_atime = (uint8_t) r->in.policy.atime,
                .for_flags = r->in.policy.lazytime ? STATS_LAZYTIME : 0,
                .saving_per_min = (float) r->advice.saving_updates_per_min,
        };

        if (key && t->store)
                store_set_promise(t->store, key, &p);
}

/* ---------------------------------------------------------------- the pass */

static void pass_reset(Tick *t) {
        t->rec = recommender_free(t->rec);
        t->report = report_free(t->report);
        t->loop = (ExportTiming) {};
        t->next = 0;
}

void tick_restart(Tick *t) {
        if (t)
                t->rec = recommender_free(t->rec); /* the next slice starts from the first mount */
}

/* From the first mount of the table as it is now. */
static int pass_restart(Tick *t) {
        const View *v = t->view;
        int r;

        pass_reset(t);
        r = recommender_new(v, &t->rec);
        if (r >= 0 && t->exporter && v->config->textfile && !t->stopping)
                r = status_report_begin(v, true, v->mounts ? v->mounts->n : 0, &t->report);
        return r;
}

/* Entry i of the table: its sample and its advice (false: not tracked). */
static bool pass_advise(Tick *t, size_t i, struct recommendation *ret) {
        const MountEntry *e = &t->view->mounts->entries[i];
        const TrackedMount *tm = tracker_find(t->view->tracker, e->id);
        MountNotes *n = tick_notes(t, e->id);

        if (!tm)
                return false;
        tick_sample(t, tm, t->t);
        if (!recommender_advise(t->rec, i, ret))
                return false;
        if (n)
                advice_settle(t, n, ret);
        promise_record(t, tm, ret);
        return true;
}

/* Mounts are taken a batch at a time: their samples and advice, then
 * their part of the report, timed as one block (the export's figure on
 * the loop) rather than reading two clocks per mount. */
#define PASS_BATCH 16 /* 16 recommendations: 20 KiB of stack */

static int pass_batch(Tick *t) {
        const View *v = t->view;
        struct recommendation rec[PASS_BATCH];
        bool advised[PASS_BATCH];
        size_t first = t->next, n = MIN((size_t) PASS_BATCH, v->mounts->n - first);
        ExportTiming tt;
        int r = 0;

        for (size_t k = 0; k < n; k++)
                advised[k] = pass_advise(t, first + k, &rec[k]);
        t->next += n;
        if (!t->report)
                return 0;
        export_timing_start(&tt);
        for (size_t k = 0; k < n && r >= 0; k++) {
                const MountEntry *e = &v->mounts->entries[first + k];

                r = status_report_add(v, t->report, e, tracker_find(v->tracker, e->id), advised[k] ? &rec[k] : NULL);
        }
        export_timing_stop(&tt);
        t->loop.wall_usec += tt.wall_usec;
        t->loop.cpu_usec += tt.cpu_usec;
        return r;
}

/* The pass is through every mount: counters of mounts gone forgotten, the
 * report to the exporter's worker. */
static void pass_finish(Tick *t) {
        const struct config *c = t->view->config;
        int r;

        status_counters_prune(t->counters, t->view->mounts);
        if (t->report) {
                r = exporter_submit(t->exporter, TAKE_PTR(t->report), &t->loop, c->textfile, c->textfile_mode,
                                    c->sampler_timeout_usec);
                if (r < 0 && r != -EBUSY)
                        log_warning_errno(r, "Cannot export to %s: %m", c->textfile);
        }
        pass_reset(t);
        t->active = false;
        (void) sd_event_source_set_enabled(t->defer, SD_EVENT_OFF);
        if (t->hooks.pass_done)
                t->hooks.pass_done(t->hooks.userdata);
}

/* Mounts until 'budget' usec have passed (UINT64_MAX: all of them); the
 * pass finishes after the last. */
static void pass_run(Tick *t, uint64_t budget) {
        const View *v = t->view;
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        int r = 0;

        if (!t->active)
                return;
        if (!t->rec)
                r = pass_restart(t);
        while (r >= 0 && v->mounts && t->next < v->mounts->n) {
                r = pass_batch(t);
                if (budget != UINT64_MAX && now_usec(CLOCK_MONOTONIC) - start >= budget)
                        return; /* the next slice goes on from here */
        }
        if (r < 0) {
                log_oom();
                t->report = report_free(t->report); /* no export this tick */
        }
        pass_finish(t);
}

static int on_pass_slice(sd_event_source *s, void *userdata) {
        pass_run(userdata, TICK_SLICE_USEC);
        return 0;
}

void tick_complete(Tick *t) {
        if (t && t->active)
                pass_run(t, UINT64_MAX);
}

void tick_stop(Tick *t) {
        if (!t)
                return;
        t->stopping = true;
        t->report = report_free(t->report); /* the textfile is removed at a clean stop */
        tick_complete(t);
}

void tick_begin(Tick *t, int64_t at) {
        tick_complete(t);
        t->active = true;
        t->t = at;
        t->rec = recommender_free(t->rec); /* from the first mount */
        (void) sd_event_source_set_enabled(t->defer, SD_EVENT_ON);
}

int tick_new(sd_event *e, const View *view, Store *store, Exporter *exporter, const TickHooks *hooks, Tick **ret) {
        _cleanup_(tick_freep) Tick *t = calloc(1, sizeof *t);
        int r;

        if (!t)
                return -ENOMEM;
        t->view = view;
        t->store = store;
        t->exporter = exporter;
        if (hooks)
                t->hooks = *hooks;
        r = status_counters_new(&t->counters);
        if (r < 0)
                return r;
        r = sd_event_add_defer(e, &t->defer, on_pass_slice, t);
        if (r >= 0)
                r = sd_event_source_set_priority(t->defer, SD_EVENT_PRIORITY_IDLE);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(t->defer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(t->defer, "tick-pass");
        *ret = TAKE_PTR(t);
        return 0;
}

Tick *tick_free(Tick *t) {
        if (!t)
                return NULL;
        pass_reset(t);
        sd_event_source_disable_unref(t->defer);
        status_counters_free(t->counters);
        free(t->notes);
        free(t);
        return NULL;
}
