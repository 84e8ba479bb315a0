/* btrfs.c: a btrfs mount's subvolume and snapshots (libbtrfsutil), its
 * filesystem's bytes in use (sysfs), and what an interval of them says
 * (see btrfs.h). */
#include "btrfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/btrfs_tree.h>
#include <linux/magic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "string-table.h"

#if HAVE_BTRFSUTIL
#include <btrfsutil.h>
#endif

DEFINE_FREE_FUNC(DIR, closedir);

/* A sysfs counter is a line of digits. */
#define SYSFS_COUNTER_MAX 64
/* Past this many subvolumes a look stops listing: it must end within the
 * job's deadline, and snapper's or btrbk's hundreds are far below it. */
#define SUBVOLUMES_MAX 100000

static const char *const btrfs_sight_table[_BTRFS_SIGHT_MAX] = {
        [BTRFS_SIGHT_NONE] = "none",
        [BTRFS_SIGHT_ALL] = "all",
        [BTRFS_SIGHT_BENEATH] = "beneath",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(btrfs_sight, BtrfsSight);

static const char *const btrfs_bytes_source_table[_BTRFS_BYTES_SOURCE_MAX] = {
        [BTRFS_BYTES_WAITING] = "waiting",
        [BTRFS_BYTES_MEASURED] = "measured",
        [BTRFS_BYTES_IMPURE] = "impure",
        [BTRFS_BYTES_SNAPSHOT_CHANGED] = "snapshot_changed",
        [BTRFS_BYTES_UNREADABLE] = "unreadable",
        [BTRFS_BYTES_NO_ATIME] = "no_atime",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(btrfs_bytes_source, BtrfsBytesSource);

static bool uuid_is_null(const uint8_t u[16]) {
        for (size_t i = 0; i < 16; i++)
                if (u[i])
                        return false;
        return true;
}

static int cmp_int64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return x < y ? -1 : x > y;
}

/* The median gap between the creations of self's snapshots. */
static int64_t snapshot_period(const struct btrfs_subvol *self, const struct btrfs_subvol *subs, size_t n,
                               unsigned count) {
        _cleanup_free_ int64_t *t = count >= 2 ? calloc(count, sizeof *t) : NULL;
        size_t k = 0;

        if (!t)
                return 0;
        for (size_t i = 0; i < n && k < count; i++)
                if (subs[i].id != self->id && memcmp(subs[i].parent_uuid, self->uuid, 16) == 0)
                        t[k++] = subs[i].otime;
        qsort(t, k, sizeof *t, cmp_int64);
        for (size_t i = 0; i + 1 < k; i++)
                t[i] = t[i + 1] - t[i];
        if (k < 2)
                return 0;
        qsort(t, k - 1, sizeof *t, cmp_int64);
        return (k - 1) % 2 ? t[(k - 1) / 2] : (t[(k - 1) / 2 - 1] + t[(k - 1) / 2]) / 2;
}

void btrfs_snapshots_of(const struct btrfs_subvol *self, const struct btrfs_subvol *subs, size_t n,
                        struct btrfs_snapshots *ret) {
        *ret = (struct btrfs_snapshots) {};
        if (uuid_is_null(self->uuid))
                return;
        for (size_t i = 0; i < n; i++) {
                const struct btrfs_subvol *s = &subs[i];

                if (s->id == self->id || memcmp(s->parent_uuid, self->uuid, 16) != 0)
                        continue;
                ret->count++;
                ret->read_only += s->read_only;
                ret->ids_sum += s->id;
                ret->exclusive += s->exclusive;
                if (s->otime > ret->newest_otime)
                        ret->newest_otime = s->otime;
        }
        ret->period_s = snapshot_period(self, subs, n, ret->count);
}

bool btrfs_shares(const struct btrfs_subvol *self, const struct btrfs_snapshots *s, int64_t *ret_since) {
        bool snapshot = !uuid_is_null(self->parent_uuid);
        int64_t since = s->count > 0 ? s->newest_otime : 0;

        if (snapshot && self->otime > since)
                since = self->otime;
        *ret_since = since;
        return s->count > 0 || snapshot;
}

void btrfs_place_rank(const struct btrfs_facts *f, uint64_t subvol, size_t root_len, struct btrfs_place *ret) {
        struct btrfs_subvol self;
        struct btrfs_snapshots s;

        *ret = (struct btrfs_place) { .root_len = root_len };
        if (!f || f->sight != BTRFS_SIGHT_ALL || subvol == 0 || !btrfs_facts_of(f, subvol, &self, &s))
                return;
        /* A read-only subvolume (a snapshot mounted to look at) keeps its
         * atimes: nothing to sample there. */
        if (self.read_only || !btrfs_shares(&self, &s, &ret->since))
                return;
        ret->shares = true;
        ret->snapshots = s.count;
}

bool btrfs_place_better(const struct btrfs_place *a, const struct btrfs_place *b) {
        if (a->shares != b->shares)
                return a->shares;
        if (a->shares && a->since != b->since)
                return a->since > b->since;
        if (a->shares && a->snapshots != b->snapshots)
                return a->snapshots > b->snapshots;
        return a->root_len < b->root_len;
}

void btrfs_facts_done(struct btrfs_facts *f) {
        free(f->subs);
        f->subs = NULL;
        f->n_subs = 0;
}

bool btrfs_facts_of(const struct btrfs_facts *f, uint64_t id, struct btrfs_subvol *ret_self,
                    struct btrfs_snapshots *ret_snapshots) {
        if (f->have_info && f->self.id == id) {
                *ret_self = f->self;
                *ret_snapshots = f->snapshots;
                return f->sight != BTRFS_SIGHT_NONE;
        }
        for (size_t i = 0; i < f->n_subs; i++)
                if (f->subs[i].id == id) {
                        *ret_self = f->subs[i];
                        btrfs_snapshots_of(ret_self, f->subs, f->n_subs, ret_snapshots);
                        return true;
                }
        return false;
}

int btrfs_parse_bytes(const char *text, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!text || *text < '0' || *text > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(text, &end, 10);
        if (errno != 0 || (*end != 0 && strcmp(end, "\n") != 0))
                return -EBADMSG;
        *ret = v;
        return 0;
}

void btrfs_uuid_format(const uint8_t u[16], char ret[BTRFS_UUID_STRING_MAX]) {
        snprintf(ret, BTRFS_UUID_STRING_MAX,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The value of option 'key' in a comma-separated list, as a new string;
 * NULL where it is not there (or without memory: *oom). */
static char *option_value(const char *opts, const char *key, bool *oom) {
        size_t n = strlen(key);

        for (const char *o = opts; o && *o; o = strchr(o, ','), o = o ? o + 1 : NULL)
                if (strncmp(o, key, n) == 0 && o[n] == '=') {
                        const char *v = o + n + 1;
                        char *r = strndup(v, strcspn(v, ","));

                        *oom = !r;
                        return r;
                }
        return NULL;
}

int btrfs_subvol_from_options(const char *super_options, uint64_t *ret_id, char **ret_path) {
        _cleanup_free_ char *id = NULL;
        bool oom = false;
        char *end;

        *ret_id = 0;
        *ret_path = NULL;
        id = option_value(super_options, "subvolid", &oom);
        if (oom)
                return -ENOMEM;
        if (id) {
                unsigned long long v = strtoull(id, &end, 10);

                if (*id && *end == 0)
                        *ret_id = v;
        }
        *ret_path = option_value(super_options, "subvol", &oom);
        return oom ? -ENOMEM : 0;
}

int btrfs_parse_commits(const char *text, uint64_t *ret) {
        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                unsigned long long v;
                char *end;

                if (strncmp(l, "commits ", 8) != 0 || l[8] < '0' || l[8] > '9')
                        continue;
                errno = 0;
                v = strtoull(l + 8, &end, 10);
                if (errno != 0 || (*end != 0 && *end != '\n'))
                        return -EBADMSG;
                *ret = v;
                return 0;
        }
        return -EBADMSG;
}

bool btrfs_taint_check(BtrfsTaint *t, const struct btrfs_facts *cur, uint64_t now_usec) {
        bool tainted = t->on;

        if (!t->on)
                return false;
        if (!t->have_commits || !cur->have_commits) {
                if (now_usec >= t->until_usec)
                        t->on = false;
        } else if (cur->commits >= t->commits + 2 || cur->commits < t->commits)
                t->on = false; /* committed (or the filesystem was mounted again) */
        else if (now_usec >= t->until_usec) {
                if (cur->commits == t->commits)
                        t->on = false; /* a period without a commit: nothing was dirty */
                else {
                        /* One commit: the writes may have missed it; the
                         * next one, if any is due, comes within a period. */
                        t->commits = cur->commits;
                        t->until_usec = now_usec + t->period_usec;
                }
        }
        return tainted;
}

void btrfs_taint_note(BtrfsTaint *t, const BtrfsIntervalVerdict *v, const struct btrfs_facts *cur, uint64_t now_usec,
                      double commit_s) {
        uint64_t period = (uint64_t) (fmax(commit_s, 1) * 1e6) + BTRFS_TAINT_SLACK_USEC;

        if (!v->writes)
                return;
        *t = (BtrfsTaint) {
                .on = true,
                .have_commits = cur->have_commits,
                .commits = cur->commits,
                .period_usec = period,
                .until_usec = now_usec + (cur->have_commits ? period : 2 * period),
        };
}

BtrfsIntervalVerdict btrfs_interval(const BtrfsIntervalInput *in) {
        const struct btrfs_facts *a = in->prev, *b = in->cur;
        BtrfsIntervalVerdict v = { .source = BTRFS_BYTES_WAITING };

        /* A first look: what was written before it (atimed's first probe
         * among them) is not known, and may be committed after. */
        if (!a || !b || !(in->seconds > 0)) {
                v.writes = b != NULL;
                return v;
        }
        if (!a->have_space || !b->have_space) {
                v.source = BTRFS_BYTES_UNREADABLE;
                return v;
        }
        /* Snapshots made or deleted: a deletion frees metadata as the
         * cleaner gets to it, a new snapshot shares what was un-shared. */
        if (a->sight != b->sight || a->snapshots.count != b->snapshots.count ||
            a->snapshots.ids_sum != b->snapshots.ids_sum || a->n_subs != b->n_subs || a->subs_ids_sum != b->subs_ids_sum) {
                v.source = BTRFS_BYTES_SNAPSHOT_CHANGED;
                v.writes = true;
                return v;
        }
        /* Data written or freed, anything the sample saw change, or
         * metadata that shrank (something was deleted): not atime's. */
        v.writes = !in->pure || a->data_bytes_used != b->data_bytes_used ||
                   b->metadata_bytes_used < a->metadata_bytes_used;
        if (v.writes || in->tainted) {
                v.source = BTRFS_BYTES_IMPURE;
                return v;
        }
        v.source = BTRFS_BYTES_MEASURED;
        v.bytes = (double) (b->metadata_bytes_used - a->metadata_bytes_used);
        v.per_day = v.bytes * 86400.0 / in->seconds;
        return v;
}

int btrfs_find_fsid(const char *sysfs, const char *devname, char **ret) {
        _cleanup_free_ char *root = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        *ret = NULL;
        if (!devname || !*devname || strchr(devname, '/') || streq(devname, ".") || streq(devname, ".."))
                return -ENOENT;
        if (asprintf(&root, "%s/fs/btrfs", sysfs) < 0)
                return -ENOMEM;
        d = opendir(root);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (strlen(de->d_name) != BTRFS_UUID_STRING_MAX - 1)
                        continue;
                if (asprintf(&p, "%s/%s/devices/%s", root, de->d_name, devname) < 0)
                        return -ENOMEM;
                if (lstat(p, &st) == 0) {
                        *ret = strdup(de->d_name);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return -ENOENT;
}

static int read_commits(const char *sysfs, const char *fsid, uint64_t *ret) {
        _cleanup_free_ char *p = NULL, *text = NULL;
        size_t len;
        int r;

        if (asprintf(&p, "%s/fs/btrfs/%s/commit_stats", sysfs, fsid) < 0)
                return -ENOMEM;
        r = read_full_file(p, 4096, &text, &len);
        if (r < 0)
                return r;
        return btrfs_parse_commits(text, ret);
}

/* The counter at sysfs's fs/btrfs/FSID/WHAT. */
static int read_fs_counter(const char *sysfs, const char *fsid, const char *what, uint64_t *ret) {
        _cleanup_free_ char *p = NULL, *text = NULL;
        size_t len;
        int r;

        if (asprintf(&p, "%s/fs/btrfs/%s/%s", sysfs, fsid, what) < 0)
                return -ENOMEM;
        r = read_full_file(p, SYSFS_COUNTER_MAX, &text, &len);
        if (r < 0)
                return r;
        return btrfs_parse_bytes(text, ret);
}

static int read_counter(const char *sysfs, const char *fsid, const char *what, uint64_t *ret) {
        char path[64];

        snprintf(path, sizeof path, "allocation/%s/bytes_used", what);
        return read_fs_counter(sysfs, fsid, path, ret);
}

static int read_qgroup(const char *sysfs, const char *fsid, const char *what, uint64_t *ret) {
        char path[96];

        snprintf(path, sizeof path, "qgroups/%s", what);
        return read_fs_counter(sysfs, fsid, path, ret);
}

static int read_exclusive(const char *sysfs, const char *fsid, uint64_t id, uint64_t *ret) {
        char what[64];

        snprintf(what, sizeof what, "0_%" PRIu64 "/exclusive", id);
        return read_qgroup(sysfs, fsid, what, ret);
}

/* The qgroups' exclusive bytes of self and of every subvolume listed,
 * where quotas are on (btrfs.h). */
static int look_qgroups(const char *sysfs, const char *fsid, struct btrfs_subvol *subs, size_t n,
                        struct btrfs_facts *f) {
        uint64_t v = 0;
        int r = read_qgroup(sysfs, fsid, "enabled", &v);

        if (r == -ENOMEM)
                return r;
        f->quotas = r >= 0 && v != 0;
        if (!f->quotas || !f->have_info)
                return 0;
        f->qgroups_inconsistent = read_qgroup(sysfs, fsid, "inconsistent", &v) >= 0 && v != 0;
        r = read_exclusive(sysfs, fsid, f->self.id, &f->self.exclusive);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = read_exclusive(sysfs, fsid, subs[i].id, &subs[i].exclusive);
        if (r == -ENOMEM)
                return r;
        f->have_qgroups = r >= 0;
        f->qgroup_error = MIN(r, 0);
        return 0;
}

#if HAVE_BTRFSUTIL
/* libbtrfsutil's errors carry errno; a few of its own are not one. */
static int util_errno(enum btrfs_util_error e) {
        if (e == BTRFS_UTIL_ERROR_NO_MEMORY)
                return -ENOMEM;
        if (e == BTRFS_UTIL_ERROR_SUBVOLUME_NOT_FOUND)
                return -ENOENT;
        return errno > 0 ? -errno : -EIO;
}

static void subvol_from_info(const struct btrfs_util_subvolume_info *i, struct btrfs_subvol *ret) {
        *ret = (struct btrfs_subvol) {
                .id = i->id,
                .read_only = i->flags & BTRFS_ROOT_SUBVOL_RDONLY,
                .otime = i->otime.tv_sec,
        };
        memcpy(ret->uuid, i->uuid, 16);
        memcpy(ret->parent_uuid, i->parent_uuid, 16);
}

/* One more subvolume into a growing list. */
static int subs_push(struct btrfs_subvol **subs, size_t *n, size_t *allocated,
                     const struct btrfs_util_subvolume_info *info) {
        if (*n >= SUBVOLUMES_MAX)
                return -E2BIG;
        if (*n == *allocated) {
                size_t m = *allocated ? 2 * *allocated : 64;
                struct btrfs_subvol *p = reallocarray(*subs, m, sizeof *p);

                if (!p)
                        return -ENOMEM;
                *subs = p;
                *allocated = m;
        }
        subvol_from_info(info, &(*subs)[(*n)++]);
        return 0;
}

/* Every subvolume the library lets this process see, into *ret. */
static int list_subvolumes(int fd, BtrfsSight *sight, struct btrfs_subvol **ret, size_t *ret_n) {
        struct btrfs_util_subvolume_iterator *it = NULL;
        struct btrfs_subvol *subs = NULL;
        size_t n = 0, allocated = 0;
        enum btrfs_util_error e;
        /* As root the library searches the tree (top = the filesystem's
         * root: all of it); as another user only beneath fd's subvolume. */
        bool root = geteuid() == 0;
        int r = 0;

        *sight = root ? BTRFS_SIGHT_ALL : BTRFS_SIGHT_BENEATH;
        e = btrfs_util_create_subvolume_iterator_fd(fd, root ? BTRFS_FS_TREE_OBJECTID : 0, 0, &it);
        if (e)
                return util_errno(e);
        for (;;) {
                struct btrfs_util_subvolume_info info;

                e = btrfs_util_subvolume_iterator_next_info(it, NULL, &info);
                if (e == BTRFS_UTIL_ERROR_STOP_ITERATION)
                        break;
                if (e) {
                        r = util_errno(e);
                        break;
                }
                r = subs_push(&subs, &n, &allocated, &info);
                if (r < 0)
                        break;
        }
        btrfs_util_destroy_subvolume_iterator(it);
        /* The iterator lists what lies beneath the top level, not the top
         * level itself: it is listed too, for a mount of it to find its
         * own facts while the filesystem is looked at through another
         * (place.c's place). Where it cannot be read, it is left out. */
        if (r == 0 && root) {
                struct btrfs_util_subvolume_info info;

                if (btrfs_util_subvolume_info_fd(fd, BTRFS_FS_TREE_OBJECTID, &info) == BTRFS_UTIL_OK)
                        r = subs_push(&subs, &n, &allocated, &info);
        }
        if (r < 0) {
                free(subs);
                return r;
        }
        *ret = subs;
        *ret_n = n;
        return 0;
}

#endif

/* The filesystem's bytes in use and commits; -ENOMEM only. */
static int look_space(const char *sysfs, const char *fsid, struct btrfs_facts *ret) {
        int r;

        if (!fsid) {
                ret->space_error = -ENOENT;
                return 0;
        }
        r = read_counter(sysfs, fsid, "metadata", &ret->metadata_bytes_used);
        if (r >= 0)
                r = read_counter(sysfs, fsid, "data", &ret->data_bytes_used);
        if (r == -ENOMEM)
                return r;
        ret->have_space = r >= 0;
        ret->space_error = MIN(r, 0);
        r = read_commits(sysfs, fsid, &ret->commits);
        if (r == -ENOMEM)
                return r;
        ret->have_commits = r >= 0;
        return 0;
}

#if HAVE_BTRFSUTIL
/* The subvolume fd lies in, into ret->self: 1 with its info, 0 where the
 * library could not say (ret->sight_error), -ENOMEM. */
static int look_self(int fd, uint64_t subvol_id, struct btrfs_facts *ret) {
        struct btrfs_util_subvolume_info info;
        enum btrfs_util_error e;

        /* Its id needs no privilege (INO_LOOKUP of the subvolume's root
         * directory); a mount of a directory inside a subvolume has it too. */
        if (subvol_id == 0 && btrfs_util_subvolume_id_fd(fd, &subvol_id) != BTRFS_UTIL_OK)
                subvol_id = 0;
        if (subvol_id != 0) {
                ret->have_subvol = true;
                ret->self.id = subvol_id;
        }
        /* Asked by id, the library always searches the tree; asked for
         * the subvolume fd is the root of (id 0), it may use the
         * unprivileged ioctl. */
        e = btrfs_util_subvolume_info_fd(fd, btrfs_util_is_subvolume_fd(fd) == BTRFS_UTIL_OK ? 0 : subvol_id, &info);
        if (e) {
                ret->sight_error = util_errno(e);
                return ret->sight_error == -ENOMEM ? -ENOMEM : 0;
        }
        ret->have_subvol = ret->have_info = true;
        subvol_from_info(&info, &ret->self);
        /* An orphan: no parent but the top level's (libbtrfsutil's
         * parent_id). */
        ret->deleted = info.parent_id == 0 && info.id != BTRFS_FS_TREE_OBJECTID;
        return 1;
}

/* Every subvolume of the filesystem, as far as atimed may see them: the
 * snapshots of ret->self among them, and their qgroups. */
static int look_subvolumes(int fd, const char *sysfs, const char *fsid, struct btrfs_facts *ret) {
        _cleanup_free_ struct btrfs_subvol *subs = NULL;
        size_t n = 0;
        int r;

        r = list_subvolumes(fd, &ret->sight, &subs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                ret->sight = BTRFS_SIGHT_NONE;
                ret->sight_error = r;
                return 0;
        }
        r = fsid ? look_qgroups(sysfs, fsid, subs, n, ret) : 0;
        if (r < 0)
                return r;
        btrfs_snapshots_of(&ret->self, subs, n, &ret->snapshots);
        for (size_t i = 0; i < n; i++)
                ret->subs_ids_sum += subs[i].id;
        ret->subs = TAKE_PTR(subs);
        ret->n_subs = n;
        return 0;
}
#endif

int btrfs_look(int fd, uint64_t subvol_id, const char *sysfs, const char *fsid, struct btrfs_facts *ret) {
        struct statfs sfs;
        int r;

        *ret = (struct btrfs_facts) { .sight = BTRFS_SIGHT_NONE };
        if (fstatfs(fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type != BTRFS_SUPER_MAGIC)
                return -EMEDIUMTYPE;

        /* The space first: it needs no privilege, and the bytes are
         * measured whatever the snapshots' sight. */
        r = look_space(sysfs, fsid, ret);
        if (r < 0)
                return r;
#if HAVE_BTRFSUTIL
        r = look_self(fd, subvol_id, ret);
        if (r <= 0)
                return r;
        return look_subvolumes(fd, sysfs, fsid, ret);
#else
        /* Built without libbtrfsutil: the bytes, and no subvolume. */
        ret->have_subvol = subvol_id != 0;
        ret->self.id = subvol_id;
        ret->sight_error = -EOPNOTSUPP;
        return 0;
#endif
}
