/* sampler.c: the sampler's life and its borrow, the reservoir walk, and
 * how the sampler reaches a filesystem's inodes without following a
 * symlink, leaving the mount or touching an atime (see sampler.h); the
 * sweeps are sampler-sweep.c's. */
#include "sampler-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "time-util.h"

/* The walk is depth first and keeps no list of the directories it has yet
 * to visit: a directory's unread entries stay in the directory, found again
 * by their getdents offset. It holds the chain of directories it is in (their
 * names make up 'path', at most PATH_MAX) and a pool of subdirectory names
 * read ahead, at most WALK_PENDING_MAX bytes (one name more when a directory
 * must be entered to go on). So its memory is bounded by PATH_MAX, that pool
 * and the k sampled paths, whatever users create below a mount. Every inode
 * is still offered to the reservoir: the sample stays exactly uniform. */
#define WALK_PENDING_MAX (64 * 1024)

typedef struct WalkLevel {
        size_t path_len; /* of 'path' down to this directory */
        size_t pend;     /* where this directory's pending names begin in 'pending' */
        off_t off;       /* getdents position of the next entry to read */
        bool eof;        /* every entry read (or unreadable) */
} WalkLevel;

struct Walk {
        char *path; /* the directory being read, relative: "." is the top */
        size_t alloc_path; /* grows with the depth, to PATH_MAX at most */
        WalkLevel *levels;
        size_t n_levels, alloc_levels;
        char *pending; /* names read, not yet entered: "name\0name\0", a stack */
        size_t n_pending, alloc_pending;
        struct {
                SampleEntry *v;
                size_t n, alloc; /* grows to the stratum's share of k as the walk finds inodes */
                uint64_t seen;   /* the inodes offered to it */
        } strata[_STRATUM_MAX];
        double inodes;           /* the names seen, each weighing 1/nlink */
        uint64_t seen;
        uint64_t skipped;
        uint64_t inodes_hint; /* inodes in use by statfs() when the walk began; 0: unknown */
};

struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

static uint64_t rng_next(uint64_t *s) {
        /* xorshift64*: plenty for choosing reservoir slots. */
        uint64_t x = *s;

        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *s = x;
        return x * 0x2545F4914F6CDD1DULL;
}

void entries_free(SampleEntry *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].path);
        free(v);
}

Reservoir *reservoir_free(Reservoir *r) {
        if (r) {
                entries_free(r->v, r->n);
                free(r);
        }
        return NULL;
}

Walk *walk_free(Walk *w) {
        if (!w)
                return NULL;
        free(w->path);
        free(w->levels);
        free(w->pending);
        for (unsigned k = 0; k < _STRATUM_MAX; k++)
                entries_free(w->strata[k].v, w->strata[k].n);
        free(w);
        return NULL;
}

uint64_t sampler_walk_seen(const Sampler *s) {
        return s->walk ? s->walk->seen : 0;
}

uint64_t sampler_walk_inodes_hint(const Sampler *s) {
        return s->walk ? s->walk->inodes_hint : 0;
}

static char *path_join(const char *dir, const char *name) {
        char *p;

        if (streq(dir, "."))
                return strdup(name);
        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Opens the mount point and checks it is still the mount expected; a
 * mount whose root is a file (a file bind mount) is -ENOTDIR, nothing
 * else: what the path leads to is looked at before it is opened as a
 * directory. */
int open_place(const struct sampler_place *pl, int flags) {
        struct statx stx;
        int fd = open(pl->target, flags | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_INO | STATX_TYPE, &stx) < 0) {
                int r = -errno;
                safe_close(fd);
                return r;
        }
        if ((stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != (uint64_t) pl->mount_id) {
                safe_close(fd);
                return -ESTALE;
        }
        if (!S_ISDIR(stx.stx_mode)) {
                safe_close(fd);
                return -ENOTDIR;
        }
        return fd;
}

/* Opens 'rel' below rootfd without following a symlink, leaving the mount,
 * or touching an atime: openat2(RESOLVE_BENEATH | NO_XDEV | NO_SYMLINKS)
 * where the kernel has it (5.6 and later); before that, and under tools that
 * do not know the call, one component at a time with O_PATH | O_NOFOLLOW,
 * each checked to be on the root's mount, the last opened with 'flags'.
 * Both the walk (directories to read) and the sweep (inodes to statx, O_PATH)
 * find what they look for so: a directory a user replaced with a symlink is
 * not followed, into a hung filesystem or anywhere else. */
static atomic_bool no_openat2;

void sampler_disable_openat2(void) {
        atomic_store(&no_openat2, true);
}

static bool same_mount(int fd, const struct statx *root) {
        struct statx stx;

        return statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 && stx.stx_dev_major == root->stx_dev_major &&
               stx.stx_dev_minor == root->stx_dev_minor &&
               (!(stx.stx_mask & root->stx_mask & STATX_MNT_ID) || stx.stx_mnt_id == root->stx_mnt_id);
}

int open_beneath(int rootfd, const char *rel, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_NOFOLLOW | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_free_ char *copy = NULL;
        struct statx root;
        char *save = NULL, *c, *next_c;
        int fd;

        if (!atomic_load(&no_openat2)) {
                fd = (int) syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
                if (fd >= 0 || errno != ENOSYS)
                        return fd;
                atomic_store(&no_openat2, true);
        }
        if (streq(rel, "."))
                return openat(rootfd, ".", flags | O_CLOEXEC);
        if (statx(rootfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &root) < 0)
                return -1;
        copy = strdup(rel);
        if (!copy) {
                errno = ENOMEM;
                return -1;
        }
        fd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (c = strtok_r(copy, "/", &save); c && fd >= 0; c = next_c) {
                int next;

                next_c = strtok_r(NULL, "/", &save);
                if (streq(c, ".") || streq(c, "..")) {
                        /* The walk never makes such a path. */
                        safe_close(fd);
                        errno = EXDEV;
                        return -1;
                }
                next = openat(fd, c, (next_c ? O_PATH | O_DIRECTORY : flags) | O_NOFOLLOW | O_CLOEXEC);
                safe_close(fd);
                fd = next;
                if (fd >= 0 && !same_mount(fd, &root)) {
                        safe_close(fd);
                        errno = EXDEV;
                        return -1;
                }
        }
        return fd;
}

/* An atime written this recently when the walk sees it puts the inode in
 * the fresh stratum; this recently, in the hot one: a file read without
 * pause (its atime is the current tick's) is all but certain to be there,
 * a file read once among many seldom is. */
#define FRESH_NS (2LL * 1000 * 1000 * 1000)
#define HOT_NS (100LL * 1000 * 1000)

int64_t now_coarse_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME_COARSE, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Algorithm R over one stratum: the i-th inode offered takes a slot with
 * probability k/i. */
static int stratum_offer(Sampler *s, Walk *w, uint8_t stratum, const char *dir, const char *name, uint64_t ino,
                         uint32_t nlink, bool is_dir) {
        /* The uniform stratum takes k, each of the others a quarter of k. */
        size_t k = stratum == STRATUM_REST ? s->k : MAX(s->k / 4, 1u), slot;
        typeof(w->strata[0]) *st = &w->strata[stratum];
        char *p;

        st->seen++;
        if (st->n < k)
                slot = st->n;
        else {
                uint64_t j = rng_next(&s->rng) % st->seen;
                if (j >= k)
                        return 0;
                slot = (size_t) j;
        }
        p = path_join(dir, name);
        if (!p)
                return -ENOMEM;
        if (slot == st->n) {
                if (st->n == st->alloc) {
                        /* A small tree costs what it holds, not k entries. */
                        size_t na = MIN(MAX(st->alloc * 2, (size_t) 64), k);
                        SampleEntry *nr = reallocarray(st->v, na, sizeof *nr);

                        if (!nr) {
                                free(p);
                                return -ENOMEM;
                        }
                        st->v = nr;
                        st->alloc = na;
                }
                st->n++;
        } else
                free(st->v[slot].path);
        st->v[slot] = (SampleEntry) { .path = p, .ino = ino, .nlink = nlink, .dir = is_dir, .stratum = stratum };
        return 0;
}

/* Offers an inode to its stratum's reservoir. 'dir' holds name, relative to
 * the walked mount; 'atime_ns' is 0 where unknown, 'look_ns' when the walk
 * looked (taken before its statx). */
static int reservoir_offer(Sampler *s, Walk *w, const char *dir, const char *name, uint64_t ino, uint32_t nlink,
                           bool is_dir, int64_t atime_ns, int64_t look_ns) {
        int64_t age = look_ns - atime_ns;
        uint8_t stratum = STRATUM_REST;

        w->seen++;
        w->inodes += !is_dir && nlink > 1 ? 1.0 / nlink : 1.0;
        /* A fine-grained atime may stand a tick ahead of the coarse clock. */
        if (atime_ns > 0 && age > -HOT_NS && age < HOT_NS)
                stratum = STRATUM_HOT;
        else if (atime_ns > 0 && age > -FRESH_NS && age < FRESH_NS)
                stratum = STRATUM_FRESH;
        return stratum_offer(s, w, stratum, dir, name, ino, nlink, is_dir);
}


#define WALK_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOATIME)

static int push_level(Walk *w, size_t path_len) {
        if (w->n_levels == w->alloc_levels) {
                size_t na = w->alloc_levels ? w->alloc_levels * 2 : 16;
                WalkLevel *nl = reallocarray(w->levels, na, sizeof *nl);

                if (!nl)
                        return -ENOMEM;
                w->levels = nl;
                w->alloc_levels = na;
        }
        w->levels[w->n_levels++] = (WalkLevel) { .path_len = path_len, .pend = w->n_pending };
        return 0;
}

static int push_pending(Walk *w, const char *name) {
        size_t l = strlen(name) + 1;

        if (w->n_pending + l > w->alloc_pending) {
                size_t na = MAX(MIN(MAX(w->alloc_pending * 2, (size_t) 256), (size_t) WALK_PENDING_MAX), w->n_pending + l);
                char *np = realloc(w->pending, na);

                if (!np)
                        return -ENOMEM;
                w->pending = np;
                w->alloc_pending = na;
        }
        memcpy(w->pending + w->n_pending, name, l);
        w->n_pending += l;
        return 0;
}

/* A walk of a small tree costs what the tree takes, not PATH_MAX. */
static int path_room(Walk *w, size_t need) {
        if (need > w->alloc_path) {
                size_t na = MIN(MAX(need, w->alloc_path * 2), (size_t) PATH_MAX);
                char *np = realloc(w->path, MAX(na, need));

                if (!np)
                        return -ENOMEM;
                w->path = np;
                w->alloc_path = MAX(na, need);
        }
        return 0;
}

/* Enters the top directory's last pending subdirectory. */
static int walk_enter(Walk *w) {
        const WalkLevel *l = &w->levels[w->n_levels - 1];
        size_t start = w->n_pending - 1, len = l->path_len;

        while (start > l->pend && w->pending[start - 1] != 0)
                start--;
        if (path_room(w, len + 1 + (w->n_pending - 1 - start) + 1) < 0)
                return -ENOMEM;
        if (streq(w->path, "."))
                len = 0;
        else
                w->path[len++] = '/';
        /* walk_entry() took only names that fit. */
        strcpy(w->path + len, w->pending + start);
        len += w->n_pending - 1 - start;
        w->n_pending = start;
        return push_level(w, len);
}

static void walk_leave(Walk *w) {
        w->n_levels--;
        if (w->n_levels == 1)
                strcpy(w->path, "."); /* its children's paths overwrote the "." */
        else if (w->n_levels > 1)
                w->path[w->levels[w->n_levels - 1].path_len] = 0;
}

enum { ENTRY_NEXT, ENTRY_STOP_BEFORE, ENTRY_STOP_AFTER };

/* Handles one entry of the top directory: ENTRY_NEXT, or where reading must
 * stop because the pool of pending names is full (before this entry, or
 * after it when the directory has none pending and must be entered to go
 * on), or -ENOMEM. */
static int walk_entry(Sampler *s, Walk *w, int dfd, const struct linux_dirent64 *d, uint64_t mount_id) {
        const WalkLevel *l = &w->levels[w->n_levels - 1];
        size_t name_len = strlen(d->d_name);
        unsigned type = d->d_type;
        uint64_t ino = d->d_ino;
        uint32_t nlink = 0;
        int64_t atime = 0, look = 0;
        bool full;

        if (streq(d->d_name, ".") || streq(d->d_name, ".."))
                return ENTRY_NEXT;
        if (type == DT_DIR || type == DT_UNKNOWN || type == DT_REG) {
                struct statx stx;

                /* A directory may be a mount point: the dirent shows what is
                 * under it, statx what is on it. The atime sorts the inode
                 * into its stratum. */
                look = now_coarse_ns();
                if (statx(dfd, d->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
                          STATX_TYPE | STATX_INO | STATX_MNT_ID | STATX_ATIME | STATX_NLINK, &stx) < 0)
                        return ENTRY_NEXT;
                if ((stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != mount_id)
                        return ENTRY_NEXT;
                type = S_ISDIR(stx.stx_mode) ? DT_DIR : S_ISREG(stx.stx_mode) ? DT_REG : DT_UNKNOWN;
                ino = stx.stx_ino;
                if (stx.stx_mask & STATX_NLINK)
                        nlink = stx.stx_nlink;
                if (stx.stx_mask & STATX_ATIME)
                        atime = (int64_t) stx.stx_atime.tv_sec * 1000000000 + stx.stx_atime.tv_nsec;
        }
        if (type != DT_DIR && type != DT_REG)
                return ENTRY_NEXT;
        /* Deeper than PATH_MAX: no path reaches it, to sample or to enter. */
        if (l->path_len + 1 + name_len >= PATH_MAX)
                return ENTRY_NEXT;
        full = type == DT_DIR && w->n_pending + name_len + 1 > WALK_PENDING_MAX;
        if (full && w->n_pending > l->pend)
                return ENTRY_STOP_BEFORE;
        if (reservoir_offer(s, w, w->path, d->d_name, ino, nlink, type == DT_DIR, atime, look) < 0)
                return -ENOMEM;
        if (type == DT_DIR && push_pending(w, d->d_name) < 0)
                return -ENOMEM;
        return full ? ENTRY_STOP_AFTER : ENTRY_NEXT;
}

/* Reads the top directory on from where it stopped: to its end, the end of
 * the budget, or a full pool of pending names. */
static int walk_read(Sampler *s, Walk *w, int rootfd, uint64_t mount_id, uint64_t *budget, const atomic_bool *cancel) {
        WalkLevel *l = &w->levels[w->n_levels - 1];
        _cleanup_close_ int dfd = open_beneath(rootfd, w->path, WALK_DIR_FLAGS);
        char buf[32768];

        if (dfd < 0) {
                /* EPERM: O_NOATIME refused (not the owner, no CAP_FOWNER).
                 * Reading it otherwise would change its atime: skip it. */
                if (errno == EPERM || errno == EACCES)
                        w->skipped++;
                l->eof = true;
                return 0;
        }
        if (l->off != 0 && lseek(dfd, l->off, SEEK_SET) < 0) {
                l->eof = true;
                return 0;
        }
        while (*budget > 0 && !atomic_load(cancel)) {
                long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);

                if (n <= 0) {
                        l->eof = true;
                        return 0;
                }
                for (long off = 0; off < n;) {
                        const struct linux_dirent64 *d = (const void *) (buf + off);
                        int r = walk_entry(s, w, dfd, d, mount_id);

                        if (r < 0)
                                return r;
                        if (r == ENTRY_STOP_BEFORE)
                                return 0; /* read again from l->off */
                        off += d->d_reclen;
                        l->off = d->d_off;
                        (*budget)--;
                        if (r == ENTRY_STOP_AFTER || *budget == 0 || atomic_load(cancel))
                                return 0;
                }
        }
        return 0;
}

static int walk_start(Sampler *s, int rootfd) {
        struct statfs sfs;
        struct statx stx;
        Walk *w;
        int r;

        if (statx(rootfd, "", AT_EMPTY_PATH, STATX_INO, &stx) < 0)
                return -errno;
        w = s->walk = calloc(1, sizeof *w);
        if (!w)
                return -ENOMEM;
        /* For progress reports only: what the walk may have to see. */
        if (fstatfs(rootfd, &sfs) == 0 && sfs.f_files > sfs.f_ffree)
                w->inodes_hint = (uint64_t) (sfs.f_files - sfs.f_ffree);
        /* The top directory is an inode like any other: "." joined to "."
         * is ".". */
        r = path_room(w, 64);
        if (r >= 0) {
                strcpy(w->path, ".");
                r = reservoir_offer(s, w, ".", ".", stx.stx_ino, 1, true, 0, 0);
        }
        if (r >= 0)
                r = push_level(w, 1);
        if (r < 0)
                s->walk = walk_free(w);
        return r;
}

static int walk_finish(Sampler *s) {
        Walk *w = s->walk;
        Reservoir *res = calloc(1, sizeof *res);

        if (!res)
                return -ENOMEM;
        /* Walk done: one array of every stratum, no bigger than they take. */
        {
                size_t n = 0;
                SampleEntry *all;

                for (unsigned k = 0; k < _STRATUM_MAX; k++)
                        n += w->strata[k].n;
                all = reallocarray(w->strata[0].v, MAX(n, (size_t) 1), sizeof *all);
                if (!all) {
                        free(res);
                        return -ENOMEM;
                }
                w->strata[0].v = NULL;
                *res = (Reservoir) { .v = all, .n = n, .population = w->seen, .inodes = w->inodes, .skipped = w->skipped };
                n = w->strata[0].n;
                w->strata[0].n = w->strata[0].alloc = 0;
                res->stratum_population[0] = w->strata[0].seen;
                for (unsigned k = 1; k < _STRATUM_MAX; k++) {
                        if (w->strata[k].n > 0)
                                memcpy(all + n, w->strata[k].v, w->strata[k].n * sizeof *all);
                        n += w->strata[k].n;
                        res->stratum_population[k] = w->strata[k].seen;
                        free(w->strata[k].v);
                        w->strata[k].v = NULL;
                        w->strata[k].n = w->strata[k].alloc = 0;
                }
        }
        reservoir_free(s->next);
        s->next = res;
        s->walk = walk_free(w);
        return 1;
}

/* A copy of a first walk's reservoir so far, both strata: what a sweep can
 * measure before the walk is done (see sampler.h). */
int walk_snapshot(const Walk *w, Reservoir **ret) {
        _cleanup_free_ Reservoir *res = calloc(1, sizeof *res);
        size_t n = 0;

        if (!res)
                return -ENOMEM;
        for (unsigned k = 0; k < _STRATUM_MAX; k++)
                n += w->strata[k].n;
        res->v = calloc(MAX(n, (size_t) 1), sizeof *res->v);
        if (!res->v)
                return -ENOMEM;
        for (unsigned k = 0; k < _STRATUM_MAX; k++) {
                for (size_t i = 0; i < w->strata[k].n; i++) {
                        SampleEntry *e = &res->v[res->n];

                        *e = w->strata[k].v[i];
                        e->path = strdup(e->path);
                        if (!e->path) {
                                entries_free(res->v, res->n);
                                res->v = NULL;
                                return -ENOMEM;
                        }
                        res->n++;
                }
                res->stratum_population[k] = w->strata[k].seen;
        }
        res->population = w->seen;
        res->inodes = w->inodes;
        res->skipped = w->skipped;
        res->partial = true;
        *ret = TAKE_PTR(res);
        return 0;
}

bool walk_drew(const Walk *w) {
        for (unsigned k = 0; w && k < _STRATUM_MAX; k++)
                if (w->strata[k].n > 0)
                        return true;
        return false;
}

int sampler_walk_step(Sampler *s, const struct sampler_place *pl, uint64_t *budget, const atomic_bool *cancel) {
        _cleanup_close_ int rootfd = -1;
        int r;

        rootfd = open_place(pl, O_PATH);
        if (rootfd < 0)
                return rootfd;
        if (!s->walk) {
                r = walk_start(s, rootfd);
                if (r < 0)
                        return r;
        }
        while (*budget > 0 && !atomic_load(cancel)) {
                Walk *w = s->walk;
                const WalkLevel *l;

                if (w->n_levels == 0)
                        return walk_finish(s);
                l = &w->levels[w->n_levels - 1];
                if (w->n_pending > l->pend)
                        r = walk_enter(w);
                else if (!l->eof)
                        r = walk_read(s, w, rootfd, (uint64_t) pl->mount_id, budget, cancel);
                else {
                        walk_leave(w);
                        r = 0;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

int sampler_new(unsigned k, uint64_t seed, Sampler **ret) {
        Sampler *s = calloc(1, sizeof *s);
        struct timespec res;

        if (!s)
                return -ENOMEM;
        s->k = MAX(k, 1u);
        s->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
        /* Atimes come from the coarse clock (current_time()): it moves once
         * a kernel tick, and an inode's atime at most as often. */
        s->clock_tick = clock_getres(CLOCK_REALTIME_COARSE, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0
                                ? res.tv_nsec
                                : 4000000;
        *ret = s;
        return 0;
}

/* The lender touched a sampler it lent: a bug that would race the job's
 * thread. Said and stopped here, in every build, rather than left to
 * corrupt a reservoir some time later. */
static void sampler_assert_home(const Sampler *s, const char *what) {
        if (!s->lent)
                return;
        fprintf(stderr, "atimed: %s of a sampler lent to a job: its lender may read only the view it left\n", what);
        abort();
}

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        sampler_assert_home(s, "sampler_free()");
        reservoir_free(s->current);
        reservoir_free(s->next);
        walk_free(s->walk);
        free(s);
        return NULL;
}

void sampler_view(const Sampler *s, SamplerView *ret) {
        sampler_assert_home(s, "sampler_view()");
        *ret = (SamplerView) {
                .k = s->k,
                .walking = s->walk,
                .walk_seen = sampler_walk_seen(s),
                .walk_inodes_hint = sampler_walk_inodes_hint(s),
                .current = s->current,
                .current_partial = s->current && s->current->partial,
                .current_population = s->current ? s->current->population : 0,
                .last_sweep = s->last_sweep,
                .next = s->next,
                .next_population = s->next ? s->next->population : 0,
                .next_sample = s->next ? s->next->n : 0,
                .next_skipped = s->next ? s->next->skipped : 0,
                .whole = sampler_whole(s),
                .can_sweep = sampler_can_sweep(s),
                .has_hot = sampler_has_hot(s),
        };
}

void sampler_lend(Sampler *s) {
        sampler_assert_home(s, "sampler_lend()");
        s->lent = true;
}

void sampler_return(Sampler *s, SamplerView *ret) {
        if (!s->lent) {
                fputs("atimed: sampler_return() of a sampler that was not lent\n", stderr);
                abort();
        }
        s->lent = false;
        sampler_view(s, ret);
}

bool sampler_can_sweep(const Sampler *s) {
        return s && (s->current || s->next || walk_drew(s->walk));
}

bool sampler_whole(const Sampler *s) {
        return s && ((s->current && !s->current->partial) || (s->next && !s->next->partial));
}

bool sampler_has_hot(const Sampler *s) {
        return s && s->current && s->current->n_hot > 0;
}
