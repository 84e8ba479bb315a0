/* sampler.c: the reservoir walk and the statx sweep (see sampler.h). */
#include "sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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
        SampleEntry *res;
        size_t n_res, alloc_res; /* the reservoir grows to k as the walk finds inodes */
        uint64_t seen;
        uint64_t skipped;
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

static void entries_free(SampleEntry *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].path);
        free(v);
}

static Reservoir *reservoir_free(Reservoir *r) {
        if (r) {
                entries_free(r->v, r->n);
                free(r);
        }
        return NULL;
}

static Walk *walk_free(Walk *w) {
        if (!w)
                return NULL;
        free(w->path);
        free(w->levels);
        free(w->pending);
        entries_free(w->res, w->n_res);
        free(w);
        return NULL;
}

int sampler_new(unsigned k, uint64_t seed, Sampler **ret) {
        Sampler *s = calloc(1, sizeof *s);

        if (!s)
                return -ENOMEM;
        s->k = MAX(k, 1u);
        s->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
        *ret = s;
        return 0;
}

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        reservoir_free(s->current);
        reservoir_free(s->next);
        walk_free(s->walk);
        free(s);
        return NULL;
}

uint64_t sampler_walk_seen(const Sampler *s) {
        return s->walk ? s->walk->seen : 0;
}

static char *path_join(const char *dir, const char *name) {
        char *p;

        if (streq(dir, "."))
                return strdup(name);
        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Opens the mount point and checks it is still the mount expected. */
static int open_place(const struct sampler_place *pl, int flags) {
        struct statx stx;
        int fd = open(pl->target, flags | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_INO, &stx) < 0) {
                int r = -errno;
                safe_close(fd);
                return r;
        }
        if ((stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != (uint64_t) pl->mount_id) {
                safe_close(fd);
                return -ESTALE;
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

static int open_beneath(int rootfd, const char *rel, int flags) {
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

/* Algorithm R: the i-th eligible inode takes a slot with probability k/i. */
static int reservoir_offer(Sampler *s, Walk *w, const char *dir, const char *name, uint64_t ino) {
        /* dir is the directory holding name, relative to the walked mount. */
        size_t slot;
        char *p;

        w->seen++;
        if (w->n_res < s->k)
                slot = w->n_res;
        else {
                uint64_t j = rng_next(&s->rng) % w->seen;
                if (j >= s->k)
                        return 0;
                slot = (size_t) j;
        }
        p = path_join(dir, name);
        if (!p)
                return -ENOMEM;
        if (slot == w->n_res) {
                if (w->n_res == w->alloc_res) {
                        /* A small tree costs what it holds, not k entries. */
                        size_t na = MIN(MAX(w->alloc_res * 2, (size_t) 64), s->k);
                        SampleEntry *nr = reallocarray(w->res, na, sizeof *nr);

                        if (!nr) {
                                free(p);
                                return -ENOMEM;
                        }
                        w->res = nr;
                        w->alloc_res = na;
                }
                w->n_res++;
        } else
                free(w->res[slot].path);
        w->res[slot] = (SampleEntry) { .path = p, .ino = ino };
        return 0;
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
        bool full;

        if (streq(d->d_name, ".") || streq(d->d_name, ".."))
                return ENTRY_NEXT;
        if (type == DT_DIR || type == DT_UNKNOWN) {
                struct statx stx;

                /* A directory may be a mount point: the dirent shows what is
                 * under it, statx what is on it. */
                if (statx(dfd, d->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
                          STATX_TYPE | STATX_INO | STATX_MNT_ID, &stx) < 0)
                        return ENTRY_NEXT;
                if ((stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != mount_id)
                        return ENTRY_NEXT;
                type = S_ISDIR(stx.stx_mode) ? DT_DIR : S_ISREG(stx.stx_mode) ? DT_REG : DT_UNKNOWN;
                ino = stx.stx_ino;
        }
        if (type != DT_DIR && type != DT_REG)
                return ENTRY_NEXT;
        /* Deeper than PATH_MAX: no path reaches it, to sample or to enter. */
        if (l->path_len + 1 + name_len >= PATH_MAX)
                return ENTRY_NEXT;
        full = type == DT_DIR && w->n_pending + name_len + 1 > WALK_PENDING_MAX;
        if (full && w->n_pending > l->pend)
                return ENTRY_STOP_BEFORE;
        if (reservoir_offer(s, w, w->path, d->d_name, ino) < 0)
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
        struct statx stx;
        Walk *w;
        int r;

        if (statx(rootfd, "", AT_EMPTY_PATH, STATX_INO, &stx) < 0)
                return -errno;
        w = s->walk = calloc(1, sizeof *w);
        if (!w)
                return -ENOMEM;
        /* The top directory is an inode like any other: "." joined to "."
         * is ".". */
        r = path_room(w, 64);
        if (r >= 0) {
                strcpy(w->path, ".");
                r = reservoir_offer(s, w, ".", ".", stx.stx_ino);
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
        /* Walk done: keep no more room than the sample takes. */
        if (w->n_res > 0 && w->n_res < w->alloc_res) {
                SampleEntry *fit = reallocarray(w->res, w->n_res, sizeof *fit);

                if (fit)
                        w->res = fit;
        }
        *res = (Reservoir) { .v = w->res, .n = w->n_res, .population = w->seen, .skipped = w->skipped };
        w->res = NULL;
        w->n_res = w->alloc_res = 0;
        reservoir_free(s->next);
        s->next = res;
        s->walk = walk_free(w);
        return 1;
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

/* Finds a sampled inode again as the walk found it: beneath the mount, no
 * symlink followed, no mount crossed. */
static int statx_beneath(int rootfd, const char *rel, struct statx *stx) {
        _cleanup_close_ int fd = open_beneath(rootfd, rel, O_PATH);

        if (fd < 0)
                return -errno;
        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_ATIME | STATX_INO | STATX_MNT_ID, stx) < 0)
                return -errno;
        return 0;
}

/* statx()es every entry, counting moved atimes among those with a baseline
 * and attributing them to writers; then records the new atimes. */
static int sweep_entries(Reservoir *res, int rootfd, const struct sampler_place *pl, struct sampler_writer *writers,
                         size_t n_writers, const atomic_bool *cancel, struct sweep_result *out) {

        for (size_t i = 0; i < res->n; i++) {
                SampleEntry *e = &res->v[i];
                struct statx stx;
                bool moved;

                if (atomic_load(cancel))
                        return -ECANCELED;
                if (e->gone)
                        continue;
                if (statx_beneath(rootfd, e->path, &stx) < 0 ||
                    stx.stx_ino != e->ino || ((stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != (uint64_t) pl->mount_id)) {
                        /* Deleted, replaced, or now under another mount. */
                        e->gone = true;
                        if (out)
                                out->gone++;
                        continue;
                }
                moved = e->baseline && (stx.stx_atime.tv_sec != e->atime_sec || stx.stx_atime.tv_nsec != e->atime_nsec);
                if (out && e->baseline) {
                        out->sample++;
                        if (moved)
                                out->changed++;
                }
                if (moved && n_writers > 0) {
                        /* Which mounts let this inode's atime be written? */
                        char fspath[PATH_MAX];
                        size_t covering = 0;

                        snprintf(fspath, sizeof fspath, "%s/%s", streq(pl->fs_root, "/") ? "" : pl->fs_root,
                                 streq(e->path, ".") ? "" : e->path);
                        for (int pass = 0; pass < 2; pass++)
                                for (size_t w = 0; w < n_writers; w++) {
                                        const char *rest = streq(writers[w].fs_root, "/") ? fspath
                                                                                         : startswith(fspath, writers[w].fs_root);
                                        if (!rest || (*rest != 0 && *rest != '/'))
                                                continue;
                                        if (pass == 0)
                                                covering++;
                                        else
                                                writers[w].changed += 1.0 / (double) covering;
                                }
                }
                e->atime_sec = stx.stx_atime.tv_sec;
                e->atime_nsec = stx.stx_atime.tv_nsec;
                e->baseline = true;
        }
        return 0;
}

int sampler_sweep(Sampler *s, const struct sampler_place *pl, struct sampler_writer *writers, size_t n_writers,
                  uint64_t now_usec, const atomic_bool *cancel, struct sweep_result *ret) {
        struct sweep_result res = {};
        _cleanup_close_ int fd = -1;
        bool compared = false;
        int r;

        *ret = res;
        if (!s->current && !s->next)
                return -EAGAIN;
        fd = open_place(pl, O_PATH);
        if (fd < 0)
                return fd;

        for (size_t w = 0; w < n_writers; w++)
                writers[w].changed = 0;
        if (s->current && s->last_sweep > 0 && now_usec > s->last_sweep) {
                r = sweep_entries(s->current, fd, pl, writers, n_writers, cancel, &res);
                if (r < 0)
                        return r;
                res.valid = res.sample > 0;
                res.seconds = (double) (now_usec - s->last_sweep) / 1e6;
                res.population = s->current->population;
                compared = true;
        }
        if (s->next) {
                reservoir_free(s->current);
                s->current = s->next;
                s->next = NULL;
                compared = false;
        }
        if (!compared) {
                /* A new reservoir (or the first sweep): record its baseline. */
                r = sweep_entries(s->current, fd, pl, NULL, 0, cancel, NULL);
                if (r < 0)
                        return r;
        }
        s->last_sweep = now_usec;
        *ret = res;
        return 0;
}
