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

bool btrfs_model_ready(const BtrfsModel *m) {
        return m->inodes > 0 && m->hits >= 1 && m->bytes >= 0;
}

void btrfs_model_learn(BtrfsModel *m, double bytes, double inodes, double hits) {
        if (!(bytes >= 0) || !(inodes >= 0) || !(hits >= 0) || !isfinite(bytes) || !isfinite(inodes))
                return;
        /* An interval with no sampled inode written teaches nothing of the
         * bytes each one costs (and its bytes are some other inodes'). */
        if (hits <= 0 || inodes <= 0)
                return;
        m->bytes += bytes;
        m->inodes += inodes;
        m->hits += hits;
        m->intervals++;
}

void btrfs_model_price(const BtrfsModel *m, double inodes, double hits, double *ret, double *ret_lo,
                       double *ret_hi) {
        double b, rel_m, rel_s;

        *ret = *ret_lo = *ret_hi = 0;
        if (!btrfs_model_ready(m) || !(inodes > 0))
                return;
        b = m->bytes / m->inodes;
        /* Both counts rest on sampled inodes: a Poisson count's relative
         * error, the model's and the figure's, added as variances. */
        rel_m = 1 / sqrt(m->hits);
        rel_s = hits > 0 ? 1 / sqrt(hits) : 1;
        *ret = inodes * b;
        double rel = Z95 * sqrt(rel_m * rel_m + rel_s * rel_s);
        *ret_lo = *ret * fmax(0, 1 - rel);
        *ret_hi = *ret * (1 + rel);
}

void btrfs_meter_seed(BtrfsMeter *m, const BtrfsModel *saved) {
        if (m->model.intervals > 0 || saved->intervals == 0 || !btrfs_model_ready(saved) || !isfinite(saved->bytes) ||
            !isfinite(saved->inodes) || !isfinite(saved->hits))
                return;
        m->model = *saved;
        m->status.bytes_per_inode = m->model.bytes / m->model.inodes;
        m->status.model_intervals = m->model.intervals;
        m->status.table_bytes_per_inode = m->status.table_bytes_per_dir = 0;
}

void btrfs_model_price_prior(const struct btrfs_prior *p, double inodes, double dirs, double hits, double *ret,
                             double *ret_lo, double *ret_hi) {
        double rel, d;

        *ret = *ret_lo = *ret_hi = 0;
        if (!(p->file > 0) || !(inodes > 0))
                return;
        /* The sample's Poisson error, then the table's spread. */
        rel = Z95 * (hits > 0 ? 1 / sqrt(hits) : 1);
        d = dirs > 0 ? fmin(dirs, inodes) : 0;
        *ret = (inodes - d) * p->file + d * (p->dir > 0 ? p->dir : p->file);
        *ret_lo = *ret * fmax(0, 1 - rel) / BTRFS_PRIOR_SPREAD;
        *ret_hi = *ret * (1 + rel) * BTRFS_PRIOR_SPREAD;
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

void btrfs_look_run(BtrfsLook *l, const char *target, const char *devname) {
        int fd;

        if (!l->fsid && devname)
                (void) btrfs_find_fsid(l->sysfs, devname, &l->fsid);
        l->at = now_usec(CLOCK_MONOTONIC);
        fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                l->r = -errno;
                return;
        }
        l->r = btrfs_look(fd, l->subvol, l->sysfs, l->fsid, &l->facts);
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

/* ---------------------------------------------------------------- the interval */

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
        if (f->sight == BTRFS_SIGHT_NONE && !m->sight_said) {
                m->sight_said = true;
                if (f->sight_error == -EPERM)
                        log_mount_info(target, "%s: btrfs snapshots not looked for: libbtrfsutil searches the tree "
                                       "of subvolumes as root, which needs CAP_SYS_ADMIN, and atimed does not keep it "
                                       "([btrfs] snapshot_search = yes does)", target);
                else
                        log_mount_full(LOG_INFO, f->sight_error, target, "%s: btrfs snapshots not looked for: %m",
                                       target);
        }
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

static void set_rate(BtrfsMeter *m, BtrfsFigureSource src, double bytes, double lo, double hi, double seconds) {
        struct btrfs_status *st = &m->status;

        m->sum_bytes += bytes;
        m->sum_lo += lo;
        m->sum_hi += hi;
        m->sum_seconds += seconds;
        /* A subvolume nothing shares un-shares nothing: that 0 is no
         * model's; nor does a modelled 0 make the mean's bytes modelled. */
        if (src == BTRFS_FIGURE_MODELLED && bytes > 0) {
                m->sum_modelled = true;
                m->sum_modelled_bytes += bytes;
        }
        st->mean_source = m->sum_modelled ? BTRFS_FIGURE_MODELLED : BTRFS_FIGURE_MEASURED;
        st->mean_modelled_per_day = m->sum_modelled_bytes * 86400.0 / m->sum_seconds;
        st->mean_seconds = m->sum_seconds;
        st->mean_per_day = m->sum_bytes * 86400.0 / m->sum_seconds;
        st->mean_lo = m->sum_lo * 86400.0 / m->sum_seconds;
        st->mean_hi = m->sum_hi * 86400.0 / m->sum_seconds;
        st->have_rate = true;
        st->rate_fresh = true;
        st->rate_source = src;
        st->per_day = bytes * 86400.0 / seconds;
        st->per_day_lo = lo * 86400.0 / seconds;
        st->per_day_hi = hi * 86400.0 / seconds;
        if (src == BTRFS_FIGURE_MEASURED)
                st->total += bytes;
}

/* The interval's bytes: measured where btrfs_interval() could, modelled
 * where a sweep's writes hid them and the model has learned. */
static void meter_interval(BtrfsMeter *m, const BtrfsLook *l, const BtrfsIntervalVerdict *v, double seconds) {
        double inodes = 0, dirs = 0, hits = 0, b, lo, hi;
        bool grew = since_growth(&m->since, &l->since, &inodes, &dirs, &hits);

        if (v->source == BTRFS_BYTES_MEASURED) {
                set_rate(m, BTRFS_FIGURE_MEASURED, v->bytes, v->bytes, v->bytes, seconds);
                if (grew)
                        btrfs_model_learn(&m->model, v->bytes, inodes, hits);
                m->since_bytes += v->bytes;
                return;
        }
        /* Unmeasured growth is atime's only where sampled inodes were
         * written since the snapshot: where none were, the total holds. */
        if (!grew || hits > 0)
                m->since_measured = false;
        if (v->source == BTRFS_BYTES_IMPURE && seconds > 0) {
                if (l->facts.sight != BTRFS_SIGHT_NONE && l->facts.have_info && !shares(&l->facts))
                        set_rate(m, BTRFS_FIGURE_MODELLED, 0, 0, 0, seconds); /* nothing shared: nothing un-shared */
                else if (grew && meter_can_price(m)) {
                        meter_price(m, inodes, dirs, hits, &b, &lo, &hi);
                        set_rate(m, BTRFS_FIGURE_MODELLED, b, lo, hi, seconds);
                }
        }
}

/* What the model has learned, as the status shows it. */
static void meter_model_status(BtrfsMeter *m) {
        struct btrfs_status *st = &m->status;

        st->bytes_per_inode = btrfs_model_ready(&m->model) ? m->model.bytes / m->model.inodes : 0;
        st->model_intervals = m->model.intervals;
        st->table_bytes_per_inode = btrfs_model_ready(&m->model) ? 0 : m->prior.file;
        /* As btrfs_model_price_prior() prices a directory. */
        st->table_bytes_per_dir = st->table_bytes_per_inode > 0 && m->prior.dir > 0 ? m->prior.dir
                                                                                    : st->table_bytes_per_inode;
}

/* The total since the newest snapshot: the kernel's where every interval
 * since it appeared was measured, the model's otherwise. */
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
        if (m->since_measured) {
                st->since_source = BTRFS_FIGURE_MEASURED;
                st->since = st->since_lo = st->since_hi = m->since_bytes;
        } else if (s->have && meter_can_price(m)) {
                st->since_source = BTRFS_FIGURE_MODELLED;
                meter_price(m, s->count.inodes, s->count.dirs, s->count.hits, &st->since, &st->since_lo, &st->since_hi);
        }
}

/* A look that failed: the next one starts a new interval; the figures
 * so far stay. */
static void meter_lost(BtrfsMeter *m) {
        btrfs_facts_done(&m->status.facts);
        m->status.have = false;
        m->status.source = BTRFS_BYTES_WAITING;
        m->at = 0;
        m->since = (struct btrfs_since) {};
        m->since_measured = false;
}

/* What every look brings, with or without a sweep: the cost table's
 * prices, what it cannot see (said once), the fsid. */
static void meter_take(BtrfsMeter *m, BtrfsLook *l, const BtrfsSweep *s) {
        m->status.rate_fresh = false;
        m->prior.file = s->prior.file > 0 && isfinite(s->prior.file) ? s->prior.file : 0;
        m->prior.dir = m->prior.file > 0 && s->prior.dir > 0 && isfinite(s->prior.dir) ? s->prior.dir : 0;
        meter_say(m, l, s->target);
        if (!m->fsid && l->fsid)
                m->fsid = TAKE_PTR(l->fsid);
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
        meter_model_status(m);
        st->error = l->r;
        st->at = s->now;
        if (l->r < 0)
                return;
        st->facts = l->facts;
        l->facts = (struct btrfs_facts) {};
        st->have = true;
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
        BtrfsIntervalVerdict v;
        uint64_t through;

        if (!l->on)
                return;
        meter_take(m, l, s);
        m->look_only = false;
        through = l->subvol ? l->subvol : l->facts.self.id;
        /* The place moved (place.c's place_of()): the sample counts
         * another subvolume's inodes now, from its own newest snapshot,
         * so the count since it starts anew; the bytes an inode, learned
         * of the filesystem, stay. */
        if (m->subvol && through && through != m->subvol) {
                m->since = (struct btrfs_since) {};
                m->since_measured = false;
                m->since_bytes = 0;
        }
        m->subvol = through;
        st->error = l->r;
        st->at = s->now;
        if (l->r < 0) {
                meter_lost(m);
                return;
        }
        in.tainted = btrfs_taint_check(&m->taint, &l->facts, l->at);
        v = btrfs_interval(&in);
        btrfs_taint_note(&m->taint, &v, &l->facts, l->at, s->commit_s);
        meter_interval(m, l, &v, in.seconds);
        /* A new newest snapshot shares all: the total since it begins
         * anew. The kernel's bytes can tell it only from a look at which
         * no sampled inode had been written since (none unseen before). */
        if (!in.prev || m->since.since != l->since.since || v.source == BTRFS_BYTES_SNAPSHOT_CHANGED) {
                m->since_measured = l->since.have && l->since.count.hits == 0;
                m->since_bytes = 0;
        }
        if (v.source == BTRFS_BYTES_SNAPSHOT_CHANGED) {
                log_mount_full(m->change_said ? LOG_DEBUG : LOG_INFO, 0, s->target,
                               "%s: a btrfs snapshot was made or deleted during the interval: its metadata growth is "
                               "not counted as atime's", s->target);
                m->change_said = true;
        }
        meter_since(m, l);
        st->source = v.source;
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

void btrfs_status_no_atime(struct btrfs_status *ret) {
        ret->no_atime = true;
        ret->sampled = false;
        ret->source = BTRFS_BYTES_NO_ATIME;
        ret->have_rate = ret->rate_fresh = true;
        ret->rate_source = ret->mean_source = BTRFS_FIGURE_MEASURED;
        ret->per_day = ret->per_day_lo = ret->per_day_hi = 0;
        ret->mean_per_day = ret->mean_lo = ret->mean_hi = ret->mean_modelled_per_day = ret->mean_seconds = 0;
        ret->since_source = BTRFS_FIGURE_NONE;
        ret->since = ret->since_lo = ret->since_hi = 0;
}
