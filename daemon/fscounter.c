/* fscounter.c: the kernel's per-filesystem transaction counters (see
 * fscounter.h). */
#include "fscounter.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "string-table.h"

DEFINE_FREE_FUNC(DIR, closedir);

/* Both files are a few hundred bytes; anything larger is not one. */
#define COUNTER_FILE_MAX 16384

static const char *const fs_counter_kind_table[_FS_COUNTER_KIND_MAX] = {
        [FS_COUNTER_NONE] = "none",
        [FS_COUNTER_XFS] = "xfs_trans",
        [FS_COUNTER_JBD2] = "jbd2_handles",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(fs_counter_kind, FsCounterKind);

/* The line of 'text' that begins with 'key' followed by a blank, or NULL. */
static const char *line_starting(const char *text, const char *key) {
        size_t n = strlen(key);

        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                if (strncmp(l, key, n) == 0 && (l[n] == ' ' || l[n] == '\t'))
                        return l + n;
        return NULL;
}

/* "trans 12 25020 3": sync, async and empty transactions. An empty one
 * (cancelled clean) writes nothing: sync + async is what was logged. */
int fscounter_parse_xfs(const char *text, struct fs_count *ret) {
        const char *l = line_starting(text, "trans");
        uint64_t sync, async, empty;

        *ret = (struct fs_count) {};
        if (!l || sscanf(l, "%" SCNu64 " %" SCNu64 " %" SCNu64, &sync, &async, &empty) != 3 ||
            async > UINT64_MAX - sync)
                return -EBADMSG;
        *ret = (struct fs_count) { .valid = true, .lo = sync + async, .hi = sync + async };
        return 0;
}

/* "N transactions (R requested), each up to B blocks" on the first line
 * and "  H handles per transaction" further down, H the whole part of the
 * handles' average: the handles were N * H at least and N * (H + 1) - 1 at
 * most. */
int fscounter_parse_jbd2(const char *text, struct fs_count *ret) {
        uint64_t n, h;
        const char *l;
        char tail[16];

        *ret = (struct fs_count) {};
        if (sscanf(text, "%" SCNu64 " transaction%15s", &n, tail) != 2)
                return -EBADMSG;
        for (l = text; (l = strstr(l, " handles per transaction")); l++) {
                const char *b = l;

                while (b > text && b[-1] >= '0' && b[-1] <= '9')
                        b--;
                if (b == l || sscanf(b, "%" SCNu64, &h) != 1)
                        continue;
                if (h != 0 && n > (UINT64_MAX - n) / h)
                        return -EBADMSG;
                *ret = (struct fs_count) { .valid = true, .lo = n * h, .hi = n * h + (n > 0 ? n - 1 : 0),
                                           .commits = n };
                return 0;
        }
        return -EBADMSG;
}

/* The jbd2 entry of the filesystem's own journal: "DEVNAME-INO", INO the
 * journal's inode (8 for ext4's internal journal). */
static int find_jbd2(const char *jbd2, const char *devname, char **ret_path) {
        _cleanup_(closedirp) DIR *d = opendir(jbd2);
        size_t n = strlen(devname);
        struct dirent *de;

        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                const char *rest = de->d_name + n;

                if (strncmp(de->d_name, devname, n) != 0 || *rest != '-' || rest[1] == 0 ||
                    strspn(rest + 1, "0123456789") != strlen(rest + 1))
                        continue;
                return asprintf(ret_path, "%s/%s/info", jbd2, de->d_name) < 0 ? -ENOMEM : FS_COUNTER_JBD2;
        }
        return FS_COUNTER_NONE;
}

int fscounter_find(const char *sysfs, const char *jbd2, const char *fstype, const char *devname, char **ret_path) {
        *ret_path = NULL;
        /* A kernel name is one path component; anything else is not one. */
        if (!devname || !*devname || strchr(devname, '/') || streq(devname, ".") || streq(devname, ".."))
                return FS_COUNTER_NONE;
        if (streq(fstype, "xfs"))
                return asprintf(ret_path, "%s/fs/xfs/%s/stats/stats", sysfs, devname) < 0 ? -ENOMEM : FS_COUNTER_XFS;
        if (streq(fstype, "ext4") || streq(fstype, "ext3"))
                return find_jbd2(jbd2, devname, ret_path);
        return FS_COUNTER_NONE;
}

int fscounter_read(FsCounterKind kind, const char *path, struct fs_count *ret) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        *ret = (struct fs_count) {};
        if (kind == FS_COUNTER_NONE || !path)
                return -EOPNOTSUPP;
        r = read_full_file(path, COUNTER_FILE_MAX, &text, &len);
        if (r < 0)
                return r;
        return kind == FS_COUNTER_XFS ? fscounter_parse_xfs(text, ret) : fscounter_parse_jbd2(text, ret);
}

bool fscounter_delta(const struct fs_count *prev, const struct fs_count *cur, double *lo, double *hi) {
        if (!prev->valid || !cur->valid || cur->hi < prev->lo || cur->commits < prev->commits)
                return false;
        if (cur->lo == prev->lo && cur->hi == prev->hi && cur->commits == prev->commits) {
                *lo = *hi = 0; /* nothing committed: the same total */
                return true;
        }
        *lo = cur->lo > prev->hi ? (double) (cur->lo - prev->hi) : 0;
        *hi = (double) (cur->hi - prev->lo);
        return true;
}
