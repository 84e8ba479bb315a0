/* probe.c: the O_TMPFILE atime experiment (see probe.h). */
#include "probe.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define OLD_ATIME_AGO (3 * 86400)
#define OLD_MTIME_AGO (2 * 86400)
#define FRESH_ATIME_AHEAD 60
#define FRESH_MTIME_AGO (2 * 3600)

bool probe_classify(bool old_moved, bool fresh_moved, AtimeMode *ret) {
        if (old_moved && fresh_moved)
                *ret = ATIME_STRICT;
        else if (old_moved)
                *ret = ATIME_RELATIME;
        else if (!fresh_moved)
                *ret = ATIME_NOATIME;
        else
                return false; /* fresh moved but old did not: no policy does that */
        return true;
}

static int unverified(struct probe_result *r, const char *fmt, ...) _printf_(2, 3);
static int unverified(struct probe_result *r, const char *fmt, ...) {
        va_list ap;

        r->verified = false;
        va_start(ap, fmt);
        vsnprintf(r->reason, sizeof r->reason, fmt, ap);
        va_end(ap);
        return 0;
}

/* Sets atime and mtime, reads one byte, and says whether atime moved. */
static int read_moves_atime(int fd, time_t atime, time_t mtime, bool *ret) {
        struct timespec ts[2] = { { .tv_sec = atime }, { .tv_sec = mtime } };
        struct stat st;
        char c;

        if (futimens(fd, ts) < 0)
                return -errno;
        if (pread(fd, &c, 1, 0) != 1)
                return errno ? -errno : -EIO;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret = st.st_atim.tv_sec != atime || st.st_atim.tv_nsec != 0;
        return 0;
}

static const char *tmpfile_error(int err) {
        switch (err) {
        case EOPNOTSUPP:
        case EISDIR: /* kernels and filesystems without O_TMPFILE */
        case EINVAL:
                return "the filesystem does not support O_TMPFILE";
        case EROFS:
                return "read-only filesystem";
        case EACCES:
        case EPERM:
                return "permission denied creating a temporary file";
        case ENOSPC:
        case EDQUOT:
                return "no space left for a temporary file";
        default:
                return NULL;
        }
}

static int probe_do(const char *dir, int mount_id, struct probe_result *ret) {
        _cleanup_close_ int dfd = -1, fd = -1;
        struct statx stx;
        struct timespec now;
        const char *why;
        int r;

        *ret = (struct probe_result) {};
        clock_gettime(CLOCK_REALTIME, &now);
        ret->at = (uint64_t) now.tv_sec * USEC_PER_SEC + (uint64_t) now.tv_nsec / NSEC_PER_USEC;

        /* What the path leads to is looked at before it is taken for a
         * directory: a file bind mount's root is a file. */
        dfd = open(dir, O_PATH | O_CLOEXEC);
        if (dfd < 0)
                return unverified(ret, "cannot open %s: %s", dir, strerror(errno));
        if (statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_TYPE, &stx) < 0)
                return unverified(ret, "cannot stat %s: %s", dir, strerror(errno));
        if ((stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != (uint64_t) mount_id)
                return unverified(ret, "%s is no longer on the mount probed", dir);
        if (!S_ISDIR(stx.stx_mode)) {
                ret->not_directory = true;
                return unverified(ret, PROBE_REASON_NOT_DIRECTORY);
        }

        fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) {
                int e = errno;

                why = tmpfile_error(e);
                return why ? unverified(ret, "%s", why) : unverified(ret, "O_TMPFILE in %s: %s", dir, strerror(e));
        }
        /* A directory with the no-atime attribute (chattr +A) passes it to
         * new files, this one too: then noatime is what the probe sees,
         * whatever the mount says, and files made elsewhere may differ. */
        {
                int flags = 0;

                ret->noatime_attr = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_NOATIME_FL);
        }
        if (write(fd, "a", 1) != 1) {
                int e = errno;

                why = tmpfile_error(e);
                return unverified(ret, "writing the temporary file: %s", why ? why : strerror(e));
        }

        r = read_moves_atime(fd, now.tv_sec - OLD_ATIME_AGO, now.tv_sec - OLD_MTIME_AGO, &ret->old_moved);
        if (r >= 0)
                r = read_moves_atime(fd, now.tv_sec + FRESH_ATIME_AHEAD, now.tv_sec - FRESH_MTIME_AGO, &ret->fresh_moved);
        if (r < 0)
                return unverified(ret, "setting or reading times: %s", strerror(-r));

        if (!probe_classify(ret->old_moved, ret->fresh_moved, &ret->effective))
                return unverified(ret, "inconsistent: a fresh atime moved but an old one did not");
        ret->verified = true;
        return 0;
}

void probe_run(const char *dir, int mount_id, struct probe_result *ret) {
        (void) probe_do(dir, mount_id, ret);
}
