/* btrfs-meter.c: the bytes atime un-shares on one btrfs filesystem,
 * measured where the interval was pure and modelled where it was not
 * (see btrfs-meter.h). */
#include "btrfs-meter.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "string-table.h"
#include "time-util.h"

#define Z95 1.959963984540054

static const char *const btrfs_figure_source_table[_BTRFS_FIGURE_SOURCE_MAX] = {
        [BTRFS_FIGURE_NONE] = "none",
        [BTRFS_FIGURE_MEASURED] = "measured",
        [BTRFS_FIGURE_MODELLED] = "modelled",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(btrfs_figure_source, BtrfsFigureSource);

const char *btrfs_bytes_label(double modelled, double total) {
        if (!(modelled > 0))
                return "measured";
        /* A mean's float rounding leaves a modelled-only sum a hair off. */
        if (!(total > 0) || modelled >= total * (1 - 1e-6))
                return "modelled";
        return "partly modelled";
}

/* ---------------------------------------------------------------- the model */

/* What the model has learned, as the status shows it. */
static void meter_model_status(BtrfsMeter *m) {
        struct btrfs_status *st = &m->status;

        st->bytes_per_inode = btrfs_model_value(&m->model);
        st->model_intervals = m->model.intervals;
        st->table_bytes_per_inode = btrfs_model_ready(&m->model) ? 0 : m->prior.file;
        /* As btrfs_model_price_prior() prices a directory. */
        st->table_bytes_per_dir = st->table_bytes_per_inode > 0 && m->prior.dir > 0 ? m->prior.dir
                                                                                    : st->table_bytes_per_inode;
}

void btrfs_meter_seed(BtrfsMeter *m, const BtrfsModel *saved) {
        const char *why;

        /* Judged against the cost table, which the first look brings. */
        if (m->model.intervals > 0 || saved->intervals == 0 || !m->priced || m->seed_refused)
                return;
        if (!btrfs_model_seedable(saved, m->prior.file, m->status.facts.nodesize, &why)) {
                m->seed_refused = true;
                m->status.model_why = why;
                return;
        }
        m->model = (BtrfsModel) { .bytes = saved->bytes, .inodes = saved->inodes, .hits = saved->hits,
                                  .intervals = saved->intervals, .keep = true, .agreed = saved->agreed };
        meter_model_status(m);
}

/* The model's price where it has learned, else the cost table's. */
static void meter_price(const BtrfsMeter *m, double inodes, double dirs, double hits, double *ret, double *ret_lo,
                        double *ret_hi) {
        if (btrfs_model_ready(&m->model))
                btrfs_model_price(&m->model, inodes, hits, ret, ret_lo, ret_hi);
        else
                btrfs_model_price_prior(&m->prior, inodes, dirs, hits, ret, ret_lo, ret_hi);
}

static bool meter_can_price(const BtrfsMeter *m) {
        return btrfs_model_ready(&m->model) || m->prior.file > 0;
}

/* ---------------------------------------------------------------- the look */

/* The helper's part of a look: well within the sweep's deadline. */
#define LOOK_LIST_TIMEOUT_USEC (10 * USEC_PER_SEC)

void btrfs_meter_done(BtrfsMeter *m) {
        free(m->fsid);
        m->fsid = NULL;
        btrfs_facts_done(&m->status.facts);
}

void btrfs_look_done(BtrfsLook *l) {
        free(l->fsid);
        free(l->sysfs);
        l->fsid = l->sysfs = NULL;
        btrfs_facts_done(&l->facts);
}

int btrfs_look_prepare(const BtrfsMeter *m, const char *super_options, const char *sysfs, BtrfsLook *l) {
        _cleanup_free_ char *path = NULL;

        *l = (BtrfsLook) { .on = true };
        if (btrfs_subvol_from_options(super_options, &l->subvol, &path) < 0)
                return -ENOMEM;
        if (!(l->sysfs = strdup(sysfs)))
                return -ENOMEM;
        if (m->fsid && !(l->fsid = strdup(m->fsid)))
                return -ENOMEM;
        return 0;
}

void btrfs_look_want(BtrfsLook *l, uint64_t id, bool writes_atime) {
        if (!l->on || id == 0)
                return;
        for (size_t i = 0; i < l->n_wanted; i++)
                if (l->wanted[i].id == id) {
                        l->wanted[i].writes_atime |= writes_atime;
                        return;
                }
        if (l->n_wanted < BTRFS_TRACKED_MAX)
                l->wanted[l->n_wanted++] = (struct btrfs_wanted) { .id = id, .writes_atime = writes_atime };
}

void btrfs_look_run(BtrfsLook *l, const char *target, const char *devname) {
        BtrfsLookArgs a;
        int fd;

        if (!l->fsid && devname)
                (void) btrfs_find_fsid(l->sysfs, devname, &l->fsid);
        l->at = now_usec(CLOCK_MONOTONIC);
        fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                l->r = -errno;
                return;
        }
        a = (BtrfsLookArgs) {
                .subvol_id = l->subvol,
                .sysfs = l->sysfs,
                .fsid = l->fsid,
                .wanted = l->wanted,
                .n_wanted = l->n_wanted,
                .deadline_usec = l->at + LOOK_LIST_TIMEOUT_USEC,
        };
        l->r = btrfs_look(fd, &a, &l->facts);
        close(fd);
}

void btrfs_look_since(BtrfsLook *l, const Sampler *s) {
        const struct btrfs_facts *f = &l->facts;

        int64_t since;

        l->since = (struct btrfs_since) {};
        /* Without a snapshot seen there is nothing to count from. */
        if (l->r < 0 || !f->have_info || f->sight == BTRFS_SIGHT_NONE || !btrfs_shares(&f->self, &f->snapshots, &since))
                return;
        l->since.since = since;
        l->since.have = sampler_count_since(s, l->since.since, &l->since.count) == 0;
}

/* ---------------------------------------------------------------- what is said */

static void meter_say_sight(BtrfsMeter *m, const struct btrfs_facts *f, const char *target) {
        if (f->helper_error < 0 && f->helper_error != -ENXIO && !m->helper_said)
                log_mount_full(LOG_NOTICE, f->helper_error, target,
                               "%s: atimed's helper could not read the btrfs subvolumes (%m): they are looked for as "
                               "far as atimed's own privileges allow, and no interval can be shown pure", target);
        m->helper_said = f->helper_error < 0 && f->helper_error != -ENXIO;
        if (f->sight != BTRFS_SIGHT_NONE || m->sight_said)
                return;
        m->sight_said = true;
        if (f->sight_error == -EPERM)
                log_mount_info(target, "%s: btrfs snapshots not looked for: without atimed's helper ([btrfs] "
                               "snapshot_search = no, or it is not running), libbtrfsutil searches the tree of "
                               "subvolumes as root, which needs CAP_SYS_ADMIN, and atimed never keeps it", target);
        else
                log_mount_full(LOG_INFO, f->sight_error, target, "%s: btrfs snapshots not looked for: %m", target);
}

static void meter_say_unseen(BtrfsMeter *m, const struct btrfs_facts *f, const char *target) {
        bool unseen = f->sight == BTRFS_SIGHT_ALL && f->unseen.known && f->unseen.count > 0;

        if (unseen && !m->unseen_said)
                log_mount_info(target, "%s: %u snapshotted btrfs subvolume%s (id %llu%s) reached through mounts that "
                               "write atime %s not in the sample: the modelled figures' intervals widen to hold "
                               "what their reads may un-share", target, f->unseen.count,
                               f->unseen.count == 1 ? "" : "s", (unsigned long long) f->unseen.ids[0],
                               f->unseen.count > 1 ? ", ..." : "", f->unseen.count == 1 ? "is" : "are");
        m->unseen_said = unseen;
}

/* Said once per filesystem, at the level it deserves: what atimed cannot
 * see of a btrfs, and why. The figures go on without it. */
static void meter_say(BtrfsMeter *m, const BtrfsLook *l, const char *target) {
        const struct btrfs_facts *f = &l->facts;

        if (l->r < 0) {
                if (!m->error_said)
                        log_mount_full(LOG_NOTICE, l->r, target,
                                       "%s: cannot look at its btrfs subvolume (%m): no snapshot or metadata figure "
                                       "until it can; the atime figures go on", target);
                m->error_said = true;
                return;
        }
        m->error_said = false;
        if (f->deleted && !m->deleted_said)
                log_mount_notice(target, "%s: its btrfs subvolume (id %llu) was deleted: it lives on until unmounted; "
                                 "its snapshots stay", target, (unsigned long long) f->self.id);
        m->deleted_said = f->deleted;
        meter_say_sight(m, f, target);
        meter_say_unseen(m, f, target);
        if (f->quotas && f->qgroup_error < 0 && !m->qgroup_said)
                log_mount_notice(target,
                                 "%s: btrfs quotas are on, but its qgroups' bytes are not readable under %s/fs/btrfs "
                                 "(%s): no exclusive bytes shown", target, l->sysfs, fileio_strerror(f->qgroup_error));
        m->qgroup_said = f->quotas && f->qgroup_error < 0;
        if (f->qgroups_inconsistent && !m->inconsistent_said)
                log_mount_notice(target, "%s: btrfs quotas are inconsistent (a rescan is due): the qgroups' exclusive "
                                 "bytes are shown as the kernel has them, and may be wrong until it ends", target);
        m->inconsistent_said = f->qgroups_inconsistent;
        if (!f->have_space && !m->space_said) {
                m->space_said = true;
                /* fileio_strerror(): a FIFO or device there is said as such. */
                log_mount_notice(target,
                                 "%s: btrfs metadata bytes not readable under %s/fs/btrfs (%s): no bytes figure, "
                                 "measured or modelled", target, l->sysfs, fileio_strerror(f->space_error));
        }
}

/* The model's standing, said when it changes: not saved, or saved though
 * beyond the cost table's range, and why. */
static void meter_say_model(BtrfsMeter *m, const char *target) {
        const char *why = m->status.model_why;

        if (why == m->model_said)
                return;
        m->model_said = why;
        if (why && btrfs_model_ready(&m->model))
                log_mount_notice(target, "%s: the btrfs bytes an inode learnt here, %.0f, is %s: %s", target,
                                 btrfs_model_value(&m->model), m->model.keep ? "saved" : "used, not saved", why);
        else if (why)
                log_mount_notice(target, "%s: the btrfs model kept from before is not used: %s", target, why);
}

/* ---------------------------------------------------------------- the interval */

/* Past this many measured intervals a run is learnt from, reads or not. */
#define RUN_INTERVALS_MAX 16
/* What un-sharing a node adds beside it (its extent item, the free space
 * tree's): a bound's margin over the nodes alone. */
#define UNSHARE_MARGIN 1.1

static bool shares(const struct btrfs_facts *f) {
        int64_t since;

        return btrfs_shares(&f->self, &f->snapshots, &since);
}

/* The growth of the distinct inodes written since the newest snapshot
 * over the interval, where both ends counted from the same snapshot. */
static bool since_growth(const struct btrfs_since *a, const struct btrfs_since *b, double *inodes, double *dirs,
                         double *hits) {
        if (!a->have || !b->have || a->since != b->since)
                return false;
        *inodes = fmax(0, b->count.inodes - a->count.inodes);
        *dirs = fmax(0, b->count.dirs - a->count.dirs);
        *hits = fmax(0, b->count.hits - a->count.hits);
        return true;
}

/* The intervals one look resolves (those held and now confirmed or
 * judged, and its own), published as one figure. */
struct resolved {
        double bytes, lo, hi, seconds;
        double measured;  /* of bytes, what measured intervals gave */
        double modelled;  /* and modelled ones */
        bool any, any_modelled, any_measured, widened;
};

static void resolved_add(struct resolved *r, bool modelled, double bytes, double lo, double hi, double seconds) {
        r->bytes += bytes;
        r->lo += lo;
        r->hi += hi;
        r->seconds += seconds;
        if (modelled)
                r->modelled += bytes;
        else
                r->measured += bytes;
        r->any = true;
        r->any_modelled |= modelled;
        r->any_measured |= !modelled;
}

static void meter_publish(BtrfsMeter *m, const struct resolved *r, double step_s) {
        struct btrfs_status *st = &m->status;

        if (!r->any || !(r->seconds > 0))
                return;
        step_s = step_s > 0 ? step_s : r->seconds;
        st->step_per_day = r->bytes * 86400.0 / step_s;
        st->step_lo = r->lo * 86400.0 / step_s;
        st->step_hi = r->hi * 86400.0 / step_s;
        m->sum_bytes += r->bytes;
        m->sum_lo += r->lo;
        m->sum_hi += r->hi;
        m->sum_seconds += r->seconds;
        /* A subvolume nothing shares un-shares nothing: that 0 is no
         * model's; nor does a modelled 0 make the mean's bytes modelled. */
        if (r->modelled > 0) {
                m->sum_modelled = true;
                m->sum_modelled_bytes += r->modelled;
        }
        st->mean_source = m->sum_modelled ? BTRFS_FIGURE_MODELLED : BTRFS_FIGURE_MEASURED;
        st->mean_modelled_per_day = m->sum_modelled_bytes * 86400.0 / m->sum_seconds;
        st->mean_seconds = m->sum_seconds;
        st->mean_per_day = m->sum_bytes * 86400.0 / m->sum_seconds;
        st->mean_lo = m->sum_lo * 86400.0 / m->sum_seconds;
        st->mean_hi = m->sum_hi * 86400.0 / m->sum_seconds;
        st->have_rate = st->rate_fresh = true;
        st->rate_source = r->any_modelled ? BTRFS_FIGURE_MODELLED : BTRFS_FIGURE_MEASURED;
        st->per_day = r->bytes * 86400.0 / r->seconds;
        st->per_day_lo = r->lo * 86400.0 / r->seconds;
        st->per_day_hi = r->hi * 86400.0 / r->seconds;
        m->sum_widened |= r->widened;
        st->widened = m->sum_widened;
        st->total += r->measured;
}

/* What reads of the snapshotted subvolumes the sample does not cover may
 * have un-shared over an interval in which the metadata grew by
 * 'growth': at most their trees' size (each node once until the next
 * snapshot), and no more than the growth where nothing was freed (a
 * growth of 0 too: what reads un-share lands at a commit, and the
 * interval it lands in holds it); where atimed could not list them all,
 * the growth itself. 0: nothing unseen. */
static double unseen_bound(const struct btrfs_facts *f, double growth) {
        double g = fmax(growth, 0), trees;

        if (f->sight != BTRFS_SIGHT_ALL || !f->unseen.known)
                return g;
        if (f->unseen.count == 0)
                return 0;
        trees = (double) f->unseen.tree_bytes * UNSHARE_MARGIN;
        return growth >= 0 && f->evidence.dead == 0 ? fmin(trees, g) : trees;
}

/* One interval modelled: the sample's count priced, its top raised to
 * hold what the sample does not cover (btrfs-meter.h). */
static void meter_model_interval(BtrfsMeter *m, const struct btrfs_facts *f, const BtrfsPending *p,
                                 struct resolved *r) {
        double b = 0, lo = 0, hi = 0, extra = unseen_bound(f, p->bytes);
        bool priced = false;

        /* Unmeasured growth is atime's only where sampled inodes were
         * written since the snapshot: where none were, the total holds. */
        if (!p->grew || p->hits > 0)
                m->since_measured = false;
        m->run.bytes = m->run.inodes = m->run.hits = 0;
        m->run.intervals = 0;
        if (!(p->seconds > 0))
                return;
        if (f->sight != BTRFS_SIGHT_NONE && f->have_info && !shares(f))
                priced = true; /* nothing shared: nothing un-shared */
        else if (p->grew && meter_can_price(m)) {
                meter_price(m, p->inodes, p->dirs, p->hits, &b, &lo, &hi);
                priced = true;
        }
        if (!priced && !(extra > 0))
                return;
        resolved_add(r, true, b, lo, hi + extra, p->seconds);
        r->widened |= extra > 0;
}

/* The most one inode's atime can un-share: its leaf and the nodes above
 * it in the sampled subvolume's tree. 0: not known. */
static double meter_ceiling(const struct btrfs_facts *f) {
        if (!f->nodesize || !f->have_info || f->self.tree_bytes == 0)
                return 0;
        return (double) f->nodesize * (f->self.level + 1) * UNSHARE_MARGIN;
}

static void meter_learn(BtrfsMeter *m, const struct btrfs_facts *f) {
        const char *why;

        btrfs_model_learn(&m->model, m->run.bytes, m->run.inodes, m->run.hits, meter_ceiling(f), m->prior.file);
        m->run.bytes = m->run.inodes = m->run.hits = 0;
        m->run.intervals = 0;
        m->model.keep = btrfs_model_keepable(&m->model, m->prior.file, f->nodesize, &why);
        m->model.agreed = m->model.keep && why;
        m->status.model_why = why;
}

/* Whether the run holds the bytes its reads un-shared, at the end of 'p',
 * an interval without reads: they land at the first commit that began
 * after the last reads, so two commits since (the one under way as they
 * ended may not hold them), or one and a commit period with the slack
 * (nothing was left dirty for a second); where the kernel keeps no count,
 * two periods. A period alone is not enough: on a loaded host the commit
 * can come later, and a run learnt before it saw half its bytes. */
static bool run_over(const BtrfsMeter *m, const BtrfsPending *p) {
        uint64_t period = p->settle.period_usec, last = m->run.last_read_commits;

        if (!(m->run.hits >= 1) || p->hits > 0)
                return false;
        if (!m->run.have_commits || !p->have_commits)
                return p->end_usec >= m->run.last_read_usec + 2 * period;
        if (p->commits < last)
                return true; /* mounted again: whatever was dirty was committed */
        return p->commits >= last + 2 || (p->commits >= last + 1 && p->end_usec >= m->run.last_read_usec + period);
}

/* A held interval confirmed: its growth measured. Consecutive ones are
 * one run to learn from: the bytes an interval's reads un-share land at
 * the commit after them, often in a later interval, so a run is learnt
 * from once an interval without reads ends past that commit (run_over()),
 * or once it is long. */
static void meter_measured(BtrfsMeter *m, const struct btrfs_facts *f, const BtrfsPending *p, struct resolved *r) {
        resolved_add(r, false, p->bytes, p->bytes, p->bytes, p->seconds);
        if (p->subvol == m->subvol && p->since == m->since.since)
                m->since_bytes += p->bytes;
        if (!p->grew) {
                m->run.bytes = m->run.inodes = m->run.hits = 0;
                m->run.intervals = 0;
                return;
        }
        m->run.bytes += p->bytes;
        m->run.inodes += p->inodes;
        m->run.hits += p->hits;
        m->run.intervals++;
        if (p->hits > 0) {
                m->run.last_read_usec = p->end_usec;
                m->run.have_commits = p->have_commits;
                m->run.last_read_commits = p->commits;
        }
        if (run_over(m, p) || m->run.intervals >= RUN_INTERVALS_MAX)
                meter_learn(m, f);
}

/* The held intervals, at a new look: measured where their writes have
 * been committed and the evidence has not moved since they began,
 * modelled where it has, held on otherwise. What was written before a
 * younger interval's end was written before an older one's: once the
 * younger one's commit has come, so has the older one's, and they are
 * measured in the order they ended, for the run they make
 * (meter_measured()). */
static void meter_settle(BtrfsMeter *m, const BtrfsLook *l, struct resolved *r) {
        unsigned kept = 0, settled = 0;

        for (unsigned i = 0; i < m->n_pending; i++) {
                (void) btrfs_taint_check(&m->pending[i].settle, &l->facts, l->at);
                if (!m->pending[i].settle.on)
                        settled = i + 1;
        }
        for (unsigned i = 0; i < m->n_pending; i++) {
                BtrfsPending *p = &m->pending[i];

                if (!btrfs_evidence_still(&p->start, &l->facts.evidence))
                        meter_model_interval(m, &l->facts, p, r);
                else if (i < settled)
                        meter_measured(m, &l->facts, p, r);
                else
                        m->pending[kept++] = *p;
        }
        m->n_pending = kept;
}

/* Two consecutive held intervals as one: both passed, the older's
 * evidence is the start, the younger's settle window the end (once it is
 * settled, so is the older). Only where they counted from the same place
 * and snapshot. */
static bool pending_mergeable(const BtrfsPending *a, const BtrfsPending *b) {
        return a->subvol == b->subvol && a->since == b->since;
}

static void pending_merge(BtrfsPending *a, const BtrfsPending *b) {
        a->bytes += b->bytes;
        a->seconds += b->seconds;
        a->grew = a->grew && b->grew;
        a->inodes += b->inodes;
        a->dirs += b->dirs;
        a->hits += b->hits;
        a->end_usec = b->end_usec;
        a->have_commits = b->have_commits;
        a->commits = b->commits;
        a->settle = b->settle;
}

/* An interval that passed, held until its commit. */
static void meter_hold(BtrfsMeter *m, const BtrfsLook *l, BtrfsPending *p, double commit_s, struct resolved *r) {
        if (m->n_pending == BTRFS_PENDING_MAX) {
                /* Looks come faster than commits (the fine sweeps', a
                 * second apart, against a 30 s commit): the two
                 * neighbours that together cover the least time are held
                 * as one, so that the oldest reaches back further and
                 * its commit comes; nothing pure is lost to the bound.
                 * Where none can be, the oldest is modelled. */
                unsigned best = BTRFS_PENDING_MAX, gone;

                for (unsigned i = 0; i + 1 < m->n_pending; i++)
                        if (pending_mergeable(&m->pending[i], &m->pending[i + 1]) &&
                            (best == BTRFS_PENDING_MAX || m->pending[i].seconds + m->pending[i + 1].seconds <
                                                                  m->pending[best].seconds + m->pending[best + 1].seconds))
                                best = i;
                if (best < BTRFS_PENDING_MAX) {
                        pending_merge(&m->pending[best], &m->pending[best + 1]);
                        gone = best + 1;
                } else {
                        meter_model_interval(m, &l->facts, &m->pending[0], r);
                        gone = 0;
                }
                memmove(m->pending + gone, m->pending + gone + 1, (m->n_pending - gone - 1) * sizeof *m->pending);
                m->n_pending--;
        }
        p->start = m->status.facts.evidence;
        p->subvol = m->subvol;
        p->since = l->since.since;
        p->end_usec = l->at;
        p->have_commits = l->facts.have_commits;
        p->commits = l->facts.commits;
        btrfs_settle_arm(&p->settle, &l->facts, l->at, commit_s);
        m->pending[m->n_pending++] = *p;
}

/* The interval that ends at this look: held where it passed, modelled
 * where the filesystem did more than atime updates or nothing could
 * prove it did not. */
static void meter_interval(BtrfsMeter *m, const BtrfsLook *l, const BtrfsIntervalVerdict *v, double seconds,
                           double growth, double commit_s, struct resolved *r) {
        BtrfsPending p = { .bytes = growth, .seconds = seconds };

        p.grew = since_growth(&m->since, &l->since, &p.inodes, &p.dirs, &p.hits);
        if (v->source == BTRFS_BYTES_PENDING)
                meter_hold(m, l, &p, commit_s, r);
        else if (v->source == BTRFS_BYTES_IMPURE || v->source == BTRFS_BYTES_UNPROVEN)
                meter_model_interval(m, &l->facts, &p, r);
        else {
                if (!p.grew || p.hits > 0)
                        m->since_measured = false;
                m->run.bytes = m->run.inodes = m->run.hits = 0;
                m->run.intervals = 0;
        }
}

/* Whether a held interval saw sampled inodes written: the total since the
 * snapshot waits for it. */
static bool pending_reads(const BtrfsMeter *m) {
        for (unsigned i = 0; i < m->n_pending; i++)
                if (m->pending[i].grew && m->pending[i].hits > 0)
                        return true;
        return false;
}

/* The total since the newest snapshot: the kernel's where every interval
 * since it appeared was measured (none with reads still held), the
 * model's otherwise. */
static void meter_since(BtrfsMeter *m, const BtrfsLook *l) {
        struct btrfs_status *st = &m->status;
        const struct btrfs_since *s = &l->since;

        st->since_source = BTRFS_FIGURE_NONE;
        st->since = st->since_lo = st->since_hi = 0;
        st->inodes_since = s->have ? s->count.inodes : -1;
        st->dirs_since = s->have ? s->count.dirs : 0;
        meter_model_status(m);
        if (l->facts.sight == BTRFS_SIGHT_NONE || !shares(&l->facts))
                return;
        if (m->since_measured && !pending_reads(m)) {
                st->since_source = BTRFS_FIGURE_MEASURED;
                st->since = st->since_lo = st->since_hi = m->since_bytes;
        } else if (s->have && meter_can_price(m)) {
                st->since_source = BTRFS_FIGURE_MODELLED;
                meter_price(m, s->count.inodes, s->count.dirs, s->count.hits, &st->since, &st->since_lo, &st->since_hi);
        }
}

static void meter_forget(BtrfsMeter *m) {
        m->n_pending = 0;
        m->run.bytes = m->run.inodes = m->run.hits = 0;
        m->run.intervals = 0;
}

/* A look that failed: the next one starts a new interval; the figures
 * so far stay, the intervals held are dropped (nothing can confirm them). */
static void meter_lost(BtrfsMeter *m) {
        btrfs_facts_done(&m->status.facts);
        m->status.have = false;
        m->status.source = BTRFS_BYTES_WAITING;
        m->at = 0;
        m->since = (struct btrfs_since) {};
        m->since_measured = false;
        meter_forget(m);
}

/* What every look brings, with or without a sweep: the cost table's
 * prices, what it cannot see (said once), the fsid. */
static void meter_take(BtrfsMeter *m, BtrfsLook *l, const BtrfsSweep *s) {
        m->status.rate_fresh = false;
        m->status.widened = m->sum_widened;
        m->prior.file = s->prior.file > 0 && isfinite(s->prior.file) ? s->prior.file : 0;
        m->prior.dir = m->prior.file > 0 && s->prior.dir > 0 && isfinite(s->prior.dir) ? s->prior.dir : 0;
        m->priced = true;
        meter_say(m, l, s->target);
        if (!m->fsid && l->fsid)
                m->fsid = TAKE_PTR(l->fsid);
        /* As the last look that could tell found it: a look that could
         * not list the subvolumes (a helper that does not answer) leaves
         * it, for the reads it cannot see go on all the same. */
        if (l->r >= 0 && l->facts.sight == BTRFS_SIGHT_ALL && l->facts.unseen.known)
                m->status.reaches_unseen = l->facts.unseen.count > 0;
}

void btrfs_meter_look(BtrfsMeter *m, BtrfsLook *l, const BtrfsSweep *s) {
        struct btrfs_status *st = &m->status;

        if (!l->on)
                return;
        meter_take(m, l, s);
        /* No interval ends here, and none since the newest snapshot goes
         * on: what was written before the next sweep is not known. */
        meter_lost(m);
        m->look_only = true;
        m->since_bytes = 0;
        st->since_source = BTRFS_FIGURE_NONE;
        st->since = st->since_lo = st->since_hi = 0;
        st->inodes_since = -1;
        st->dirs_since = 0;
        st->pending = 0;
        meter_model_status(m);
        st->error = l->r;
        st->at = s->now;
        if (l->r < 0)
                return;
        st->facts = l->facts;
        l->facts = (struct btrfs_facts) {};
        st->have = true;
}

/* The place moved (place.c's place_of()): the sample counts another
 * subvolume's inodes now, from its own newest snapshot, so the count
 * since it starts anew; the bytes an inode, learned of the filesystem,
 * stay. */
static void meter_place(BtrfsMeter *m, const BtrfsLook *l) {
        uint64_t through = l->subvol ? l->subvol : l->facts.self.id;

        if (m->subvol && through && through != m->subvol) {
                m->since = (struct btrfs_since) {};
                m->since_measured = false;
                m->since_bytes = 0;
        }
        m->subvol = through;
}

/* After the interval: a new newest snapshot shares all, and the total
 * since it begins anew. The kernel's bytes can tell it only from a look
 * at which no sampled inode had been written since (none unseen before). */
static void meter_snapshot(BtrfsMeter *m, const BtrfsLook *l, bool first, BtrfsBytesSource source,
                           const char *target) {
        if (first || m->since.since != l->since.since || source == BTRFS_BYTES_SNAPSHOT_CHANGED) {
                m->since_measured = l->since.have && l->since.count.hits == 0;
                m->since_bytes = 0;
        }
        if (source == BTRFS_BYTES_SNAPSHOT_CHANGED) {
                log_mount_full(m->change_said ? LOG_DEBUG : LOG_INFO, 0, target,
                               "%s: a snapshot of a btrfs subvolume mounted here was made or deleted during the "
                               "interval: its metadata growth is not counted as atime's", target);
                m->change_said = true;
        }
}

void btrfs_meter_apply(BtrfsMeter *m, BtrfsLook *l, const BtrfsSweep *s) {
        struct btrfs_status *st = &m->status;
        BtrfsIntervalInput in = {
                /* After looks without a sweep, an interval begins here. */
                .prev = st->have && !m->look_only ? &st->facts : NULL,
                .cur = &l->facts,
                .seconds = m->at && l->at > m->at ? (double) (l->at - m->at) / 1e6 : 0,
                .pure = s->pure,
        };
        struct resolved r = {};
        BtrfsIntervalVerdict v;
        double growth;

        if (!l->on)
                return;
        meter_take(m, l, s);
        m->look_only = false;
        meter_place(m, l);
        st->error = l->r;
        st->at = s->now;
        if (l->r < 0) {
                meter_lost(m);
                return;
        }
        in.tainted = btrfs_taint_check(&m->taint, &l->facts, l->at);
        v = btrfs_interval(&in);
        btrfs_taint_note(&m->taint, &v, &l->facts, l->at, s->commit_s);
        growth = in.prev && in.prev->have_space && l->facts.have_space
                         ? (double) l->facts.metadata_bytes_used - (double) in.prev->metadata_bytes_used
                         : 0;
        meter_settle(m, l, &r);
        meter_interval(m, l, &v, in.seconds, growth, s->commit_s, &r);
        meter_publish(m, &r, in.seconds);
        meter_snapshot(m, l, !in.prev, v.source, s->target);
        /* While reads go on, each interval is held as the last ones are
         * confirmed: those are what the look says. */
        st->source = v.source == BTRFS_BYTES_PENDING && r.any_measured ? BTRFS_BYTES_MEASURED : v.source;
        st->pending = m->n_pending;
        log_mount_debug(s->target, "%s: btrfs interval of %.1fs: %s (the sample %s, %s, the filesystem's evidence %s), "
                        "metadata %+.0f bytes, commits %llu; %.0f bytes measured, %.0f modelled at this look; %u held",
                        s->target, in.seconds, btrfs_bytes_source_to_string(v.source), in.pure ? "pure" : "impure",
                        in.tainted ? "tainted" : "untainted",
                        !in.prev || !in.prev->evidence.have || !l->facts.evidence.have ? "unknown"
                        : btrfs_evidence_still(&in.prev->evidence, &l->facts.evidence) ? "still" : "moved",
                        growth, (unsigned long long) l->facts.commits, r.measured, r.modelled, m->n_pending);
        meter_since(m, l);
        meter_say_model(m, s->target);
        btrfs_facts_done(&st->facts);
        st->facts = l->facts;
        l->facts = (struct btrfs_facts) {};
        st->have = true;
        m->at = l->at;
        m->since = l->since;
}

const struct btrfs_facts *btrfs_meter_facts(const BtrfsMeter *m) {
        return m->status.have ? &m->status.facts : NULL;
}

void btrfs_meter_model(const BtrfsMeter *m, BtrfsModel *ret) {
        *ret = m->model;
}

void btrfs_meter_status(const BtrfsMeter *m, const char *super_options, struct btrfs_status *ret) {
        _cleanup_free_ char *path = NULL;
        uint64_t id = 0;

        *ret = m->status;
        if (btrfs_subvol_from_options(super_options, &id, &path) < 0)
                id = 0;
        ret->subvol = id;
        ret->sampled = id == 0 || id == m->subvol;
        ret->looked = ret->have && id != 0 && btrfs_facts_of(&ret->facts, id, &ret->self, &ret->snapshots);
}

bool btrfs_status_shows_bytes(const struct btrfs_status *b) {
        int64_t since;

        if (b->looked && btrfs_shares(&b->self, &b->snapshots, &since))
                return true;
        return b->have && b->sampled && !b->no_atime && b->reaches_unseen;
}

void btrfs_status_no_atime(struct btrfs_status *ret) {
        ret->no_atime = true;
        ret->sampled = false;
        ret->widened = false;
        ret->source = BTRFS_BYTES_NO_ATIME;
        ret->have_rate = ret->rate_fresh = true;
        ret->rate_source = ret->mean_source = BTRFS_FIGURE_MEASURED;
        ret->per_day = ret->per_day_lo = ret->per_day_hi = 0;
        ret->step_per_day = ret->step_lo = ret->step_hi = 0;
        ret->mean_per_day = ret->mean_lo = ret->mean_hi = ret->mean_modelled_per_day = ret->mean_seconds = 0;
        ret->since_source = BTRFS_FIGURE_NONE;
        ret->since = ret->since_lo = ret->since_hi = 0;
}
