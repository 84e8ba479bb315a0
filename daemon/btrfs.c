/* btrfs.c: a btrfs mount's subvolume and snapshots (atimed's helper, or
 * libbtrfsutil), its filesystem's bytes in use (sysfs), and what an
 * interval of them says (see btrfs.h). */
#include "btrfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/btrfs_tree.h>
#include <linux/magic.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fileio.h"
#include "helper-client.h"
#include "macro.h"
#include "string-table.h"
#include "time-util.h"

#if HAVE_BTRFSUTIL
#include <btrfsutil.h>
#endif

DEFINE_FREE_FUNC(DIR, closedir);

/* A sysfs counter is a line of digits. */
#define SYSFS_COUNTER_MAX 64
/* libbtrfsutil lists each subvolume with a search of its own (some 11 us
 * each): past this many a look stops listing and says the rest is not
 * seen. The helper's scan has no such bound (btrfs-roots.h). */
#define UTIL_SUBVOLUMES_MAX 100000
/* The listing's deadline where the caller gives none. */
#define LIST_TIMEOUT_USEC (10 * USEC_PER_SEC)

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
        [BTRFS_BYTES_PENDING] = "pending",
        [BTRFS_BYTES_UNPROVEN] = "unproven",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(btrfs_bytes_source, BtrfsBytesSource);

static bool uuid_is_null(const uint8_t u[16]) {
        for (size_t i = 0; i < 16; i++)
                if (u[i])
                        return false;
        return true;
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
        btrfs_tracked_free_all(f->tracked, f->n_tracked);
        f->tracked = NULL;
        f->n_tracked = 0;
}

static const struct btrfs_tracked *tracked_find(const struct btrfs_facts *f, uint64_t id) {
        for (size_t i = 0; i < f->n_tracked; i++)
                if (f->tracked[i].sub.id == id)
                        return &f->tracked[i];
        return NULL;
}

bool btrfs_facts_wanted(const struct btrfs_facts *f, uint64_t id) {
        for (size_t i = 0; i < f->n_wanted; i++)
                if (f->wanted[i] == id)
                        return true;
        return false;
}

bool btrfs_facts_of(const struct btrfs_facts *f, uint64_t id, struct btrfs_subvol *ret_self,
                    struct btrfs_snapshots *ret_snapshots) {
        const struct btrfs_tracked *t;

        if (f->have_info && f->self.id == id) {
                *ret_self = f->self;
                *ret_snapshots = f->snapshots;
                return f->sight != BTRFS_SIGHT_NONE;
        }
        t = tracked_find(f, id);
        if (!t)
                return false;
        *ret_self = t->sub;
        *ret_snapshots = t->snapshots;
        return true;
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

void btrfs_settle_arm(BtrfsTaint *t, const struct btrfs_facts *cur, uint64_t now_usec, double commit_s) {
        BtrfsIntervalVerdict v = { .writes = true };

        btrfs_taint_note(t, &v, cur, now_usec, commit_s);
}

/* Whether the snapshots of a subvolume both looks saw changed: only the
 * tracked ones' count (another's snapshot made by any user says nothing
 * of the bytes the tracked ones share, and is only a write). */
static bool snapshots_changed(const struct btrfs_facts *a, const struct btrfs_facts *b) {
        if (a->sight != b->sight || a->snapshots.count != b->snapshots.count ||
            a->snapshots.ids_sum != b->snapshots.ids_sum)
                return true;
        for (size_t i = 0; i < b->n_tracked; i++) {
                const struct btrfs_tracked *x = tracked_find(a, b->tracked[i].sub.id), *y = &b->tracked[i];

                if (x && (x->snapshots.count != y->snapshots.count || x->snapshots.ids_sum != y->snapshots.ids_sum))
                        return true;
        }
        return false;
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
        if (snapshots_changed(a, b)) {
                v.source = BTRFS_BYTES_SNAPSHOT_CHANGED;
                v.writes = true;
                return v;
        }
        /* Data written or freed, anything the sample saw change, metadata
         * that shrank (something was deleted), or the filesystem's own
         * evidence of a write (a tree grown or shrunk, a checksum, a
         * subvolume made or deleted, by anyone): not atime's. */
        v.writes = !in->pure || a->data_bytes_used != b->data_bytes_used ||
                   b->metadata_bytes_used < a->metadata_bytes_used ||
                   (a->evidence.have && b->evidence.have && !btrfs_evidence_still(&a->evidence, &b->evidence));
        if (v.writes || in->tainted) {
                v.source = BTRFS_BYTES_IMPURE;
                return v;
        }
        if (!a->evidence.have || !b->evidence.have) {
                v.source = BTRFS_BYTES_UNPROVEN;
                return v;
        }
        v.source = BTRFS_BYTES_PENDING;
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


/* The exclusive bytes of a tracked subvolume's qgroup and of its newest
 * snapshots' (btrfs.h). */
static int tracked_qgroups(const char *sysfs, const char *fsid, struct btrfs_tracked *t) {
        int r = read_exclusive(sysfs, fsid, t->sub.id, &t->sub.exclusive);

        t->snapshots.exclusive = 0;
        for (size_t i = 0; r >= 0 && i < t->n_snapshot_ids; i++) {
                uint64_t v = 0;

                r = read_exclusive(sysfs, fsid, t->snapshot_ids[i], &v);
                t->snapshots.exclusive += v;
        }
        return r;
}

/* The qgroups' exclusive bytes of self and of the tracked subvolumes,
 * where quotas are on (btrfs.h). */
static int look_qgroups(const char *sysfs, const char *fsid, struct btrfs_facts *f) {
        const struct btrfs_tracked *t;
        uint64_t v = 0;
        int r = read_qgroup(sysfs, fsid, "enabled", &v);

        if (r == -ENOMEM)
                return r;
        f->quotas = r >= 0 && v != 0;
        if (!f->quotas || !f->have_info)
                return 0;
        f->qgroups_inconsistent = read_qgroup(sysfs, fsid, "inconsistent", &v) >= 0 && v != 0;
        r = 0;
        for (size_t i = 0; r >= 0 && i < f->n_tracked; i++)
                r = tracked_qgroups(sysfs, fsid, &f->tracked[i]);
        if (r >= 0 && (t = tracked_find(f, f->self.id))) {
                f->self.exclusive = t->sub.exclusive;
                f->snapshots.exclusive = t->snapshots.exclusive;
        } else if (r >= 0)
                r = read_exclusive(sysfs, fsid, f->self.id, &f->self.exclusive);
        if (r == -ENOMEM)
                return r;
        f->have_qgroups = r >= 0;
        f->qgroup_error = MIN(r, 0);
        return 0;
}

/* The filesystem's bytes in use, commits and node size; -ENOMEM only. */
static int look_space(const char *sysfs, const char *fsid, struct btrfs_facts *ret) {
        uint64_t v;
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
        r = read_fs_counter(sysfs, fsid, "nodesize", &v);
        if (r == -ENOMEM)
                return r;
        ret->nodesize = r >= 0 && v <= UINT32_MAX ? (uint32_t) v : 0;
        return 0;
}

/* ---------------------------------------------------------------- the subvolumes */

/* The digests' key: one per process, so that no one can make two states
 * of the filesystem digest alike (btrfs_evidence). */
static uint64_t digest_key;
static pthread_once_t digest_once = PTHREAD_ONCE_INIT;

static void digest_init(void) {
        if (getrandom(&digest_key, sizeof digest_key, GRND_NONBLOCK) != sizeof digest_key)
                digest_key = now_usec(CLOCK_MONOTONIC) ^ (uint64_t) getpid() << 32;
}

/* The wanted subvolumes and the one looked through, gathered from the
 * records 'list' brings. */
typedef int (*list_fn)(int fd, const BtrfsLookArgs *a, BtrfsRoots *roots, struct btrfs_roots_end *end, void *userdata);

static int gather(int fd, const BtrfsLookArgs *a, uint64_t self, list_fn list, void *userdata,
                  struct btrfs_roots_result *ret, struct btrfs_facts *f) {
        struct btrfs_wanted w[BTRFS_TRACKED_MAX];
        size_t n = 0;
        BtrfsRoots *roots = NULL;
        struct btrfs_roots_end end;
        int r;

        (void) pthread_once(&digest_once, digest_init);
        /* The one looked through first: it is tracked whatever the cap. */
        if (self != 0)
                w[n++] = (struct btrfs_wanted) { .id = self };
        for (size_t i = 0; i < a->n_wanted && n < BTRFS_TRACKED_MAX; i++)
                w[n++] = a->wanted[i];
        f->n_wanted = n;
        for (size_t i = 0; i < n; i++)
                f->wanted[i] = w[i].id;
        r = btrfs_roots_new(w, n, self, digest_key, &roots);
        if (r < 0)
                return r;
        r = list(fd, a, roots, &end, userdata);
        if (r > 0) /* listed, with no end to say */
                r = btrfs_roots_finish(roots, NULL, ret);
        else if (r == 0)
                r = btrfs_roots_finish(roots, &end, ret);
        btrfs_roots_free(roots);
        return r;
}

static uint64_t list_deadline(const BtrfsLookArgs *a) {
        return a->deadline_usec ? a->deadline_usec : now_usec(CLOCK_MONOTONIC) + LIST_TIMEOUT_USEC;
}

static int list_roots(int fd, const BtrfsLookArgs *a, BtrfsRoots *roots, struct btrfs_roots_end *end,
                      _unused_ void *userdata) {
        if (a->lister == BTRFS_LIST_SCAN)
                return btrfs_roots_scan(fd, list_deadline(a), btrfs_roots_add, roots, end);
        return helper_btrfs_roots(fd, list_deadline(a), btrfs_roots_add, roots, end);
}

/* The facts of self and its snapshots, from what was gathered. */
static void take_gathered(struct btrfs_roots_result *g, BtrfsSight sight, struct btrfs_facts *ret) {
        const struct btrfs_tracked *t;

        ret->sight = sight;
        ret->tracked = TAKE_PTR(g->tracked);
        ret->n_tracked = g->n_tracked;
        ret->subvolumes = g->subvolumes;
        ret->partial = g->truncated;
        ret->evidence = g->evidence;
        ret->unseen = g->unseen;
        t = ret->have_subvol ? tracked_find(ret, ret->self.id) : NULL;
        if (!t)
                return;
        ret->have_info = true;
        ret->self = t->sub;
        ret->snapshots = t->snapshots;
        /* An orphan: no parent but the top level's. */
        ret->deleted = t->sub.parent_id == 0 && t->sub.id != BTRFS_FS_TREE_OBJECTID;
}

/* Through the helper (or this process's own scan): every subvolume. 1
 * where it answered, 0 where it did not (ret->helper_error), -ENOMEM. */
static int look_listed(int fd, const BtrfsLookArgs *a, struct btrfs_facts *ret) {
        struct btrfs_roots_result g;
        int r;

        if (a->lister == BTRFS_LIST_UTIL || (a->lister == BTRFS_LIST_AUTO && !helper_client_btrfs())) {
                ret->helper_error = -ENXIO;
                return 0;
        }
        r = gather(fd, a, ret->self.id, list_roots, NULL, &g, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                ret->helper_error = r;
                return 0;
        }
        take_gathered(&g, BTRFS_SIGHT_ALL, ret);
        return 1;
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

static void record_from_info(const struct btrfs_util_subvolume_info *i, struct btrfs_root_record *ret) {
        *ret = (struct btrfs_root_record) {
                .id = i->id,
                .parent_id = i->parent_id,
                .generation = i->generation,
                .ctransid = i->ctransid,
                .otransid = i->otransid,
                .otime = i->otime.tv_sec,
                .refs = 1,
                .read_only = (i->flags & BTRFS_ROOT_SUBVOL_RDONLY) != 0,
        };
        memcpy(ret->uuid, i->uuid, 16);
        memcpy(ret->parent_uuid, i->parent_uuid, 16);
}

struct util_list {
        struct btrfs_root_record *v;
        size_t n, allocated;
        BtrfsSight sight;
        bool stopped; /* before the end: too many, or the deadline */
};

static int util_push(struct util_list *l, const struct btrfs_util_subvolume_info *info) {
        if (array_grow((void **) &l->v, &l->allocated, l->n, 64, sizeof *l->v) < 0)
                return -ENOMEM;
        record_from_info(info, &l->v[l->n++]);
        return 0;
}

/* Every subvolume the library lets this process see, up to
 * UTIL_SUBVOLUMES_MAX and the deadline: 1 where it stopped before the
 * end. */
static int util_iterate(int fd, uint64_t deadline, bool root, struct util_list *l) {
        struct btrfs_util_subvolume_iterator *it = NULL;
        enum btrfs_util_error e;
        int r = 0;

        /* As root the library searches the tree (top = the filesystem's
         * root: all of it); as another user only beneath fd's subvolume. */
        e = btrfs_util_create_subvolume_iterator_fd(fd, root ? BTRFS_FS_TREE_OBJECTID : 0, 0, &it);
        if (e)
                return util_errno(e);
        for (;;) {
                struct btrfs_util_subvolume_info info;

                if (l->n >= UTIL_SUBVOLUMES_MAX || now_usec(CLOCK_MONOTONIC) >= deadline) {
                        r = 1;
                        break;
                }
                e = btrfs_util_subvolume_iterator_next_info(it, NULL, &info);
                if (e == BTRFS_UTIL_ERROR_STOP_ITERATION)
                        break;
                r = e ? util_errno(e) : util_push(l, &info);
                if (r < 0)
                        break;
        }
        btrfs_util_destroy_subvolume_iterator(it);
        return r;
}

static int cmp_record(const void *a, const void *b) {
        const struct btrfs_root_record *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

/* A list_fn over libbtrfsutil: the records in order of id, origins before
 * their snapshots, as the tree of roots has them. */
static int list_util(int fd, const BtrfsLookArgs *a, BtrfsRoots *roots, _unused_ struct btrfs_roots_end *end,
                     void *userdata) {
        struct util_list *l = userdata;
        bool root = geteuid() == 0;
        int r;

        l->sight = root ? BTRFS_SIGHT_ALL : BTRFS_SIGHT_BENEATH;
        r = util_iterate(fd, list_deadline(a), root, l);
        if (r < 0)
                return r;
        l->stopped = r > 0;
        /* The iterator lists what lies beneath the top level, not the top
         * level itself: it is listed too, for a mount of it to find its
         * own facts while the filesystem is looked at through another
         * (place.c's place). Where it cannot be read, it is left out. */
        if (root) {
                struct btrfs_util_subvolume_info info;

                if (btrfs_util_subvolume_info_fd(fd, BTRFS_FS_TREE_OBJECTID, &info) == BTRFS_UTIL_OK &&
                    (r = util_push(l, &info)) < 0)
                        return r;
        }
        if (l->n > 0)
                qsort(l->v, l->n, sizeof *l->v, cmp_record);
        for (size_t i = 0; i < l->n; i++) {
                r = btrfs_roots_add(&l->v[i], roots);
                if (r < 0)
                        return r;
        }
        /* No end: no evidence (libbtrfsutil shows no tree's size). */
        return 1;
}

/* The subvolume fd lies in, into ret->self: 1 with its info, 0 where the
 * library could not say (ret->sight_error), -ENOMEM. */
static int look_self(int fd, struct btrfs_facts *ret) {
        struct btrfs_util_subvolume_info info;
        struct btrfs_root_record rec;
        enum btrfs_util_error e;

        /* Asked by id, the library always searches the tree; asked for
         * the subvolume fd is the root of (id 0), it may use the
         * unprivileged ioctl. */
        e = btrfs_util_subvolume_info_fd(fd, btrfs_util_is_subvolume_fd(fd) == BTRFS_UTIL_OK ? 0 : ret->self.id, &info);
        if (e) {
                ret->sight_error = util_errno(e);
                return ret->sight_error == -ENOMEM ? -ENOMEM : 0;
        }
        ret->have_subvol = ret->have_info = true;
        record_from_info(&info, &rec);
        ret->self = (struct btrfs_subvol) { .id = rec.id, .parent_id = rec.parent_id, .read_only = rec.read_only,
                                            .otime = rec.otime, .generation = rec.generation };
        memcpy(ret->self.uuid, rec.uuid, 16);
        memcpy(ret->self.parent_uuid, rec.parent_uuid, 16);
        /* An orphan: no parent but the top level's (libbtrfsutil's
         * parent_id). */
        ret->deleted = info.parent_id == 0 && info.id != BTRFS_FS_TREE_OBJECTID;
        return 1;
}

/* Without the helper: libbtrfsutil, as far as this process's privileges
 * let it see (btrfs.h). */
static int look_util(int fd, const BtrfsLookArgs *a, struct btrfs_facts *ret) {
        struct util_list l = {};
        struct btrfs_roots_result g;
        int r;

        r = look_self(fd, ret);
        if (r <= 0)
                return r;
        r = gather(fd, a, ret->self.id, list_util, &l, &g, ret);
        free(l.v);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                ret->sight = BTRFS_SIGHT_NONE;
                ret->sight_error = r;
                return 0;
        }
        /* Not every subvolume, or not their trees' sizes: what lies
         * beneath a mount is not known. */
        g.unseen.known = false;
        g.truncated = l.stopped;
        take_gathered(&g, l.sight, ret);
        return 0;
}
#endif

int btrfs_look(int fd, const BtrfsLookArgs *a, struct btrfs_facts *ret) {
        struct statfs sfs;
        uint64_t id = a->subvol_id;
        int r;

        *ret = (struct btrfs_facts) { .sight = BTRFS_SIGHT_NONE };
        if (fstatfs(fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type != BTRFS_SUPER_MAGIC)
                return -EMEDIUMTYPE;
#if HAVE_BTRFSUTIL
        /* Its id needs no privilege (INO_LOOKUP of the subvolume's root
         * directory); a mount of a directory inside a subvolume has it too. */
        if (id == 0 && btrfs_util_subvolume_id_fd(fd, &id) != BTRFS_UTIL_OK)
                id = 0;
#endif
        ret->have_subvol = id != 0;
        ret->self.id = id;
        /* The subvolumes first, the bytes after (btrfs.h). */
        r = look_listed(fd, a, ret);
        if (r < 0)
                return r;
#if HAVE_BTRFSUTIL
        if (r == 0 && (r = look_util(fd, a, ret)) < 0)
                return r;
#else
        if (r == 0)
                ret->sight_error = -EOPNOTSUPP; /* built without libbtrfsutil: the helper alone lists them */
#endif
        r = look_space(a->sysfs, a->fsid, ret);
        if (r < 0)
                return r;
        return a->fsid ? look_qgroups(a->sysfs, a->fsid, ret) : 0;
}
