/* peer.c: whom a control connection counts against (see peer.h). */
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "parse-util.h"
#include "time-util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* /etc/subuid is a few lines a user; a file past this is not read. */
#define SUBUID_MAX (4 * 1024 * 1024)
/* A uid_map holds at most 340 lines of three numbers. */
#define UID_MAP_MAX 16384
#define SUBUID_LOOK_USEC USEC_PER_SEC

struct PeerUsers {
        char *subuid_path;
        struct subuid_range *ranges;
        size_t n_ranges;
        bool looked;         /* the file was looked at once */
        int failed;          /* the last look's error, said already */
        struct stat seen;    /* as it was when read (st_ino 0: absent) */
        uint64_t looked_at;  /* CLOCK_MONOTONIC of the last look */
        char *self_map;      /* the daemon's own uid_map; NULL: unknown */
        size_t self_map_len;
};

static int cmp_range(const void *a, const void *b) {
        const struct subuid_range *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/* One "owner:start:count" line, owner resolved: 0, or -EINVAL to skip.
 * The fields as shadow reads them: no spaces, numbers in decimal. */
static int parse_line(char *line, peer_resolve_t resolve, struct subuid_range *ret) {
        char *start, *count;
        uint64_t s, n, owner;

        line[strcspn(line, "\r")] = 0;
        start = strchr(line, ':');
        count = start ? strchr(start + 1, ':') : NULL;
        if (!count || start == line)
                return -EINVAL;
        *start++ = 0;
        *count++ = 0;
        if (parse_uint64(start, &s) < 0 || parse_uint64(count, &n) < 0 || n == 0 || s + n > UINT32_MAX)
                return -EINVAL;
        /* A name first, as newuidmap matches it; all digits: a uid. */
        if (resolve(line, &ret->owner) < 0) {
                if (parse_uint64(line, &owner) < 0 || owner >= UINT32_MAX)
                        return -EINVAL;
                ret->owner = (uid_t) owner;
        }
        ret->start = (uid_t) s;
        ret->count = (uint32_t) n;
        return 0;
}

int peer_subuid_parse(const char *text, size_t len, peer_resolve_t resolve, struct subuid_range **ret, size_t *ret_n,
                      unsigned *ret_skipped) {
        _cleanup_free_ struct subuid_range *v = NULL;
        size_t n = 0, cap = 0;
        unsigned skipped = 0;

        for (size_t i = 0; i < len;) {
                const char *end = memchr(text + i, '\n', len - i);
                size_t l = (end ? (size_t) (end - text) : len) - i;
                _cleanup_free_ char *line = strndup(text + i, l);

                i += l + 1;
                if (!line)
                        return -ENOMEM;
                if (line[0] == '#' || line[strspn(line, " \t\r")] == 0)
                        continue;
                if (n == cap) {
                        struct subuid_range *nv = reallocarray(v, cap ? cap * 2 : 16, sizeof *v);

                        if (!nv)
                                return -ENOMEM;
                        v = nv;
                        cap = cap ? cap * 2 : 16;
                }
                if (parse_line(line, resolve, &v[n]) < 0)
                        skipped++;
                else
                        n++;
        }
        if (n > 0)
                qsort(v, n, sizeof *v, cmp_range);
        for (size_t i = 0; i < n; i++)
                v[i].reach = MAX(i > 0 ? v[i - 1].reach : 0, (uint64_t) v[i].start + v[i].count);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        *ret_skipped = skipped;
        return 0;
}

bool peer_subuid_owner(const struct subuid_range *r, size_t n, uid_t uid, uid_t *ret_owner) {
        size_t lo = 0, hi = n;

        /* Past the last range that begins at or before uid, then back
         * while some range that far back still reaches it. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (r[mid].start <= uid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        while (lo > 0 && r[lo - 1].reach > uid) {
                const struct subuid_range *x = &r[--lo];

                if ((uint64_t) uid < (uint64_t) x->start + x->count) {
                        *ret_owner = x->owner;
                        return true;
                }
        }
        return false;
}

bool peer_uid_map_same(const char *map, size_t len, const char *self, size_t self_len) {
        return map && self && len == self_len && memcmp(map, self, len) == 0;
}

uid_t peer_user_of(uid_t uid, const struct subuid_range *r, size_t n, int (*ask)(void *userdata), void *userdata,
                   PeerUserFrom *ret_from) {
        uid_t owner;

        if (uid != 0 && peer_subuid_owner(r, n, uid, &owner) && owner != 0) {
                *ret_from = PEER_USER_SUBUID;
                return owner;
        }
        if (uid < PEER_RANGE || uid == (uid_t) -1 || (ask && ask(userdata) > 0)) {
                *ret_from = PEER_USER_UID;
                return uid;
        }
        *ret_from = PEER_USER_RANGE;
        return uid & ~(PEER_RANGE - 1);
}

/* ---------------------------------------------------------------- the daemon's view */

int peer_users_new(const char *subuid_path, PeerUsers **ret) {
        _cleanup_(peer_users_freep) PeerUsers *u = calloc(1, sizeof *u);

        if (!u)
                return -ENOMEM;
        u->subuid_path = strdup(subuid_path ? subuid_path : "/etc/subuid");
        if (!u->subuid_path)
                return -ENOMEM;
        /* Ours does not change: read once. Unreadable, every peer of a
         * high uid counts by its block (no namespace compares equal). */
        if (read_full_file("/proc/self/uid_map", UID_MAP_MAX, &u->self_map, &u->self_map_len) < 0)
                u->self_map = NULL;
        *ret = TAKE_PTR(u);
        return 0;
}

PeerUsers *peer_users_free(PeerUsers *u) {
        if (!u)
                return NULL;
        free(u->subuid_path);
        free(u->ranges);
        free(u->self_map);
        free(u);
        return NULL;
}

const char *peer_users_subuid_path(const PeerUsers *u) {
        return u->subuid_path;
}

static int resolve_name(const char *name, uid_t *ret) {
        struct passwd pw, *found = NULL;
        char buf[4096];
        int r = getpwnam_r(name, &pw, buf, sizeof buf, &found);

        if (r != 0)
                return -r;
        if (!found)
                return -ENOENT;
        *ret = found->pw_uid;
        return 0;
}

static bool same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
               a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Reads the file anew: its ranges, or none if it is absent. */
static int subuid_read(PeerUsers *u, const struct stat *st, unsigned *ret_skipped, const char **ret_why) {
        _cleanup_free_ char *text = NULL;
        struct subuid_range *v = NULL;
        size_t len = 0, n = 0;
        int r;

        free(u->ranges);
        u->ranges = NULL;
        u->n_ranges = 0;
        *ret_skipped = 0;
        if (st->st_ino == 0)
                return 1; /* absent: no one has subordinate uids */
        if (st->st_uid != 0 || (st->st_mode & 022)) {
                *ret_why = "not owned by root, or writable by others: not believed";
                return -EPERM;
        }
        r = read_full_file(u->subuid_path, SUBUID_MAX, &text, &len);
        if (r >= 0)
                r = peer_subuid_parse(text, len, resolve_name, &v, &n, ret_skipped);
        if (r < 0) {
                *ret_why = fileio_strerror(r);
                return r;
        }
        u->ranges = v;
        u->n_ranges = n;
        return 1;
}

int peer_users_refresh(PeerUsers *u, uint64_t now, unsigned *ret_skipped, const char **ret_why) {
        struct stat st = {};
        int r;

        if (u->looked && now - u->looked_at < SUBUID_LOOK_USEC)
                return 0;
        u->looked_at = now;
        if (stat(u->subuid_path, &st) < 0 && errno != ENOENT) {
                r = -errno;
                *ret_why = "cannot be looked at";
        } else {
                if (u->looked && same_file(&st, &u->seen))
                        return 0;
                u->seen = st;
                r = subuid_read(u, &st, ret_skipped, ret_why);
        }
        u->looked = true;
        /* A failure is said once, until the file changes or reads. */
        if (r < 0 && r == u->failed)
                return 0;
        u->failed = r < 0 ? r : 0;
        return r;
}

struct asking {
        const PeerUsers *u;
        int fd;
        pid_t pid;
};

/* Whether the peer's process has exited since it connected: then its pid
 * may be another's. A kernel without SO_PEERPIDFD (before 6.5) cannot
 * say: taken as there. */
static bool peer_exited(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };

        return pidfd >= 0 && poll(&p, 1, 0) != 0;
}

/* 1 if the peer's user namespace is the daemon's, 0 if not, -errno if
 * it cannot be told. */
static int ask_namespace(void *userdata) {
        const struct asking *a = userdata;
        _cleanup_close_ int pidfd = -1, fd = -1;
        _cleanup_free_ char *map = NULL;
        socklen_t sl = sizeof pidfd;
        char path[64];
        size_t len = 0;
        int r;

        if (a->pid <= 0 || !a->u->self_map)
                return -ESRCH;
        if (getsockopt(a->fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &sl) < 0) {
                if (errno != ENOPROTOOPT)
                        return -errno; /* the peer is gone (ESRCH, EINVAL) */
                pidfd = -1;
        }
        snprintf(path, sizeof path, "/proc/%d/uid_map", (int) a->pid);
        /* The open binds the file to the task the pid names now: if the
         * peer is still there after it, that task was the peer. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (peer_exited(pidfd))
                return -ESRCH;
        r = read_full_fd(fd, UID_MAP_MAX, &map, &len);
        if (r < 0)
                return r;
        return peer_uid_map_same(map, len, a->u->self_map, a->u->self_map_len);
}

uid_t peer_users_key(PeerUsers *u, int fd, pid_t pid, uid_t uid, PeerUserFrom *ret_from) {
        struct asking a = { .u = u, .fd = fd, .pid = pid };

        return peer_user_of(uid, u->ranges, u->n_ranges, ask_namespace, &a, ret_from);
}
