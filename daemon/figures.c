/* figures.c: a sweep's result turned into each mount's figures: the
 * estimator's for each writer, the kernel's count beside them, the btrfs
 * look's bytes (see figures.h). */
#include "figures.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "advisor.h"
#include "kcount.h"
#include "log.h"
#include "place.h"
#include "progress.h"

/* A writer's figures, from each stratum of the sample (estimate_strata()). */
static int stratified_estimates(const struct sweep_result *res, const struct sampler_writer *w, struct activity *a) {
        struct strata_input in = {
                .updates = w->updates,
                .seconds = res->seconds,
                .tick_ns = res->tick_ns,
                /* A first walk's sample so far: the inodes it has not seen yet. */
                .unseen = res->partial && res->used_inodes > res->population
                                  ? (double) (res->used_inodes - res->population) : 0,
        };
        struct strata_estimate e;

        for (unsigned k = 0; k < _STRATUM_MAX; k++) {
                in.sample[k] = res->stratum_sample[k];
                in.population[k] = res->stratum_population[k];
                in.changed[k] = w->changed[k];
                in.sets[k] = res->sets[k];
        }
        a->coverage = in.unseen > 0 ? (double) res->population / (double) res->used_inodes : 1;
        a->tick_ns = res->tick_ns;
        if (estimate_strata(&in, &e) < 0)
                return -EINVAL;
        a->est = e.inodes;
        a->updates = e.updates;
        a->writebacks_per_min = e.writebacks_per_min;
        a->sets_per_min = e.sets_per_min;
        return 0;
}

/* Whether the filesystem did nothing but atime updates over the interval
 * that ended with 'res', as far as atimed can tell, its free space aside:
 * no sampled inode's mtime or ctime moved, no inode was allocated or
 * freed, and no probe of atimed's own wrote there. */
static bool fs_only_atime_but_space(const Filesystem *fs, const struct sweep_result *prev,
                                    const struct sweep_result *res) {
        return !fs->probed && res->modified == 0 && prev->have_statfs && res->have_statfs &&
               prev->free_inodes == res->free_inodes;
}

/* The same, and nothing was allocated or freed. (On btrfs an atime update
 * itself allocates, where it un-shares metadata from a snapshot: there
 * the data's bytes stand for the space instead, btrfs_interval().) */
static bool fs_only_atime(const Filesystem *fs, const struct sweep_result *prev, const struct sweep_result *res) {
        return fs_only_atime_but_space(fs, prev, res) && prev->free_blocks == res->free_blocks;
}

/* The kernel's count of the filesystem's transactions over the interval,
 * against the sample's figures for its n writers (acts): kcount.h. */
static void fs_apply_count(Filesystem *fs, const struct fs_job *j, const struct fs_count *before,
                           const KcountEdge *before_edge, uint64_t before_mono, const struct sweep_result *prev,
                           struct activity *acts, size_t n) {
        /* A journal's count between two edges: the handles made between
         * them, the figure's interval where it is the figure. */
        bool edges = j->edge.count.valid && before_edge->count.valid && j->edge.at > before_edge->at;
        KcountInput in = {
                .kind = j->counter_kind,
                .seconds = j->res.seconds,
                .commit_s = j->commit_s,
                .lazytime = fs->n_mounts > 0 && fs->mounts[0]->entry->policy.lazytime,
                .pure = fs_only_atime(fs, prev, &j->res),
                .prev_lo = fs->count_prev,
                .ratio = fs->count_ratio,
                .ratio_age = fs->count_ratio_age,
                .edges = edges,
        };
        KcountVerdict v;

        if (edges) {
                in.seconds = (double) (j->edge.at - before_edge->at) / 1e6;
                in.edge_lag = (double) (j->edge.lag + before_edge->lag) / 1e6;
        } else if (j->counter_kind == FS_COUNTER_JBD2 && (j->edge.count.valid || before_edge->count.valid) &&
                   before_mono > 0 && j->count_mono > before_mono)
                /* One end at an edge (up to SCHEDULE_EDGE_WINDOW_USEC before its
                 * sweep), the other read at its sweep: the count spans the
                 * stretch between the two readings, not the sweeps'
                 * interval (a quarter shorter or longer at 30 s). */
                in.seconds = (double) (j->count_mono - before_mono) / 1e6;
        if (!j->count.valid || !fscounter_delta(before, &j->count, &in.lo, &in.hi))
                in.kind = FS_COUNTER_NONE;
        v = kcount_apply(&in, acts, n);
        for (size_t w = 0; w < n && v.used && edges; w++)
                if (acts[w].source == SOURCE_KERNEL) {
                        acts[w].at = j->edge.real;
                        acts[w].seconds = in.seconds;
                }
        fs->unexplained = v.unexplained;
        fs->count_jumped = v.jumped;
        fs->count_prev = v.lo;
        fs->count_ratio = v.ratio;
        fs->count_ratio_age = v.ratio_age;
}

/* The btrfs look that came back with a sweep: the metadata's growth is
 * atime's cost where the interval was pure as the sample tells it
 * (fs_only_atime_but_space(), as for the kernel's counts), modelled
 * where it was not (btrfs-meter.h). prev NULL: a look without a sweep
 * (FS_JOB_LOOK), whose facts are kept and no interval measured. */
void figures_apply_btrfs(Filesystem *fs, struct fs_job *j, const struct sweep_result *prev) {
        BtrfsSweep s = {
                .target = j->target,
                .pure = prev && j->res.valid && fs_only_atime_but_space(fs, prev, &j->res),
                .commit_s = j->commit_s,
                .now = (int64_t) (tracker_now(fs->tracker, CLOCK_REALTIME) / USEC_PER_SEC),
                .prior = { atime_cost_unshare_bytes("btrfs", fs->tracker->config->costs.v, fs->tracker->config->costs.n),
                           atime_cost_unshare_dir_bytes("btrfs", fs->tracker->config->costs.v, fs->tracker->config->costs.n) },
        };

        if (prev)
                btrfs_meter_apply(&fs->btrfs, &j->btrfs, &s);
        else
                btrfs_meter_look(&fs->btrfs, &j->btrfs, &s);
        place_choose_btrfs(fs);
}

/* What a sweep found, stratum by stratum, and what came of it: for
 * whoever asks why a figure is what it is (log_level = debug). */
static void fs_log_sweep(const Filesystem *fs, const struct fs_job *j, const struct activity *acts) {
        static const char *const name[_STRATUM_MAX] = { "rest", "fresh", "hot" };
        char buf[512], ratio[64] = "";
        size_t len = 0;

        if (fs->count_ratio > 0)
                snprintf(ratio, sizeof ratio, ", %.2f transactions an update%s", fs->count_ratio,
                         fs->count_ratio_age == 0 ? " (learnt now)" : "");
        for (unsigned k = 0; k < _STRATUM_MAX && len < sizeof buf; k++) {
                const struct sampler_writer *w = j->n_writers > 0 ? &j->writers[0] : NULL;
                int r = snprintf(buf + len, sizeof buf - len, "%s%s %llu of %llu, %.1f changed, %.1f updates",
                                 k ? "; " : "", name[k], (unsigned long long) j->res.stratum_sample[k],
                                 (unsigned long long) j->res.stratum_population[k], w ? w->changed[k] : 0.0,
                                 w ? w->updates[k].n : 0.0);

                if (r < 0)
                        return;
                len += (size_t) r;
        }
        log_mount_debug(j->target, "%s: sweep over %.1fs: %s; %.0f updates/min (%.0f-%.0f) over %.1fs, %s%s%s", j->target,
                        j->res.seconds, buf, j->n_writers ? acts[0].updates.per_min : 0.0,
                        j->n_writers ? acts[0].updates.lo : 0.0, j->n_writers ? acts[0].updates.hi : 0.0,
                        j->n_writers ? acts[0].seconds : 0.0,
                        fs->count_jumped ? "count jumped" : fs->unexplained ? "count unexplained" : "count explained",
                        j->edge.count.valid ? ", read at an edge of the journal's commits" : "", ratio);
}

void figures_apply_sweep(Filesystem *fs, struct fs_job *j) {
        Tracker *t = fs->tracker;
        _cleanup_free_ struct activity *acts = NULL;
        struct sweep_result prev = fs->last;

        struct fs_count before = fs->counter.prev;
        KcountEdge before_edge = fs->counter.prev_edge;
        uint64_t before_mono = fs->counter.prev_mono;

        fs->last = j->res;
        fs->counter.prev = j->count; /* a count that could not be read starts again */
        fs->counter.prev_edge = j->edge;
        fs->counter.prev_mono = j->count.valid ? j->count_mono : 0;
        figures_apply_btrfs(fs, j, &prev);
        if (!j->res.valid)
                goto done;
        fs->figured = true;
        acts = calloc(MAX(j->n_writers, (size_t) 1), sizeof *acts);
        if (!acts)
                goto done;
        for (size_t w = 0; w < j->n_writers; w++) {
                acts[w] = (struct activity) {
                        .have = true,
                        .seconds = j->res.seconds,
                        .sample = j->res.sample,
                        .population = j->res.population,
                        .at = j->end_at,
                        .shared = j->n_writers > 1,
                };
                if (stratified_estimates(&j->res, &j->writers[w], &acts[w]) < 0)
                        acts[w].have = false;
                if (j->res.partial)
                        acts[w].ready_at = progress_ready_at(fs, j);
        }
        fs_apply_count(fs, j, &before, &before_edge, before_mono, &prev, acts, j->n_writers);
        if (log_get_max_level() >= LOG_DEBUG)
                fs_log_sweep(fs, j, acts);
        for (size_t w = 0; w < j->n_writers; w++) {
                TrackedMount *m = tracker_lookup_mount(t, j->writer_ids[w]);

                if (!m || m->fs != fs || !acts[w].have)
                        continue;
                m->activity = acts[w];
                /* A figure from the part walked so far (the sample's,
                 * not the kernel's count) is shown, not kept: history and
                 * advice begin with the whole walk. */
                if (t->hooks.activity && !(acts[w].coverage < 1 && acts[w].source != SOURCE_KERNEL))
                        t->hooks.activity(m, &acts[w], t->hooks.userdata);
        }
done:
        fs->probed = false;
}
