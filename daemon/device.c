/* device.c: block devices behind mounts and their write rates. */
#include "device.h"

#include <blkid/blkid.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "string-table.h"
#include "strv.h"

#define DISKSTATS_MAX (16 * 1024 * 1024)

static const char *const device_kind_table[_DEVICE_KIND_MAX] = {
        [DEVICE_NONE] = "none", [DEVICE_DISK] = "disk", [DEVICE_PARTITION] = "partition",
        [DEVICE_LOOP] = "loop", [DEVICE_DM] = "dm",     [DEVICE_MD] = "md",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(device_kind, DeviceKind);

DiskStats *diskstats_free(DiskStats *s) {
        if (!s)
                return NULL;
        free(s->v);
        free(s);
        return NULL;
}

/* One line: major minor name then at least 7 counters; the 5th counter is
 * writes completed, the 7th sectors written (Documentation/admin-guide/iostats). */
static bool parse_line(const char *line, size_t len, DiskStat *ret) {
        char buf[512], name[64];
        unsigned long long c[7];
        unsigned maj, min;
        int n = 0;

        if (len >= sizeof buf)
                return false;
        memcpy(buf, line, len);
        buf[len] = 0;
        if (sscanf(buf, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu%n", &maj, &min, name, &c[0], &c[1], &c[2], &c[3],
                   &c[4], &c[5], &c[6], &n) != 10)
                return false;
        if (strlen(name) >= sizeof ret->name)
                return false;
        *ret = (DiskStat) { .major = maj, .minor = min, .writes = c[4], .write_sectors = c[6] };
        strcpy(ret->name, name);
        return true;
}

int diskstats_parse(const char *text, size_t len, DiskStats **ret) {
        DiskStats *s = calloc(1, sizeof *s);
        size_t alloc = 0;

        if (!s)
                return -ENOMEM;
        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(text + pos, '\n', len - pos);
                size_t l = nl ? (size_t) (nl - (text + pos)) : len - pos;
                DiskStat d;

                if (l > 0) {
                        if (!parse_line(text + pos, l, &d))
                                s->n_bad_lines++;
                        else {
                                if (s->n == alloc) {
                                        size_t na = alloc ? alloc * 2 : 32;
                                        DiskStat *nv = realloc(s->v, na * sizeof *nv);
                                        if (!nv) {
                                                diskstats_free(s);
                                                return -ENOMEM;
                                        }
                                        s->v = nv;
                                        alloc = na;
                                }
                                s->v[s->n++] = d;
                        }
                }
                pos += l + 1;
        }
        *ret = s;
        return 0;
}

int diskstats_read(const char *path, DiskStats **ret) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_full_file(path, DISKSTATS_MAX, &text, &len);

        if (r < 0)
                return r;
        return diskstats_parse(text, len, ret);
}

const DiskStat *diskstats_find(const DiskStats *s, unsigned major, unsigned minor) {
        for (size_t i = 0; s && i < s->n; i++)
                if (s->v[i].major == major && s->v[i].minor == minor)
                        return &s->v[i];
        return NULL;
}

void device_rate(const DiskStat *prev, const DiskStat *cur, double seconds, struct device_rate *ret) {
        *ret = (struct device_rate) {};
        if (!prev || !cur || seconds <= 0 || cur->writes < prev->writes || cur->write_sectors < prev->write_sectors)
                return;
        ret->valid = true;
        ret->write_iops = (double) (cur->writes - prev->writes) / seconds;
        ret->write_kib_per_s = (double) (cur->write_sectors - prev->write_sectors) * 512.0 / 1024.0 / seconds;
}

void device_meter_update(DeviceMeter *m, const DiskStat *cur, uint64_t now_usec) {
        if (!cur) {
                *m = (DeviceMeter) {};
                return;
        }
        if (m->last_at > 0) /* no time gone by (or back): no rate */
                device_rate(&m->last, cur, now_usec > m->last_at ? (double) (now_usec - m->last_at) / 1e6 : 0, &m->rate);
        m->last = *cur;
        m->last_at = now_usec;
}

/* The first line of a sysfs attribute, trimmed; NULL if unreadable. */
static char *read_attr(const char *path) {
        char *text = NULL;
        size_t len;

        if (read_full_file(path, 65536, &text, &len) < 0)
                return NULL;
        text[strcspn(text, "\n")] = 0;
        return text;
}

/* "vda2 dm-1" from a slaves/ directory; NULL if empty. */
static char *list_dir(const char *path) {
        _cleanup_strv_free_ char **l = NULL;
        DIR *d = opendir(path);
        struct dirent *de;
        char *r;

        if (!d)
                return NULL;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && strv_extend(&l, de->d_name) < 0)
                        break;
        closedir(d);
        if (strv_length(l) == 0)
                return NULL;
        r = strv_join(l, " ");
        return r;
}

void device_info_done(DeviceInfo *d) {
        free(d->label);
        free(d->parents);
        *d = (DeviceInfo) { .rotational = -1 };
}

/* The block device that 'name' (a mount's source less "/dev/": anyone who
 * can mount, FUSE users included, chooses it) names under devfs, looked up
 * without ever leaving devfs's own filesystem: no "..", no mount crossed
 * (a user's FUSE mount under /dev/shm, stopped, would hang the lookup,
 * and the lookup runs on the event loop), symlinks only within it (as
 * /dev/mapper's are). Where openat2() is missing (before Linux 5.6), only
 * a name directly in devfs is looked up: nothing is mounted there but by
 * root. 0 with *ret, or -errno. */
static int devfs_block_device(const char *devfs, const char *name, dev_t *ret) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
        };
        int dfd, fd;
        struct stat st;

        if (!*name || strlen(name) >= PATH_MAX)
                return -EINVAL;
        dfd = open(devfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        fd = (int) syscall(SYS_openat2, dfd, name, &how, sizeof how);
        if (fd < 0 && errno == ENOSYS)
                fd = strchr(name, '/') || streq(name, "..") || streq(name, ".") ? -EXDEV
                                                                                 : openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        fd = fd < 0 && fd != -EXDEV ? -errno : fd;
        safe_close(dfd);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode)) {
                safe_close(fd);
                return -ENOTBLK;
        }
        safe_close(fd);
        *ret = st.st_rdev;
        return 0;
}

/* An attribute, or the entries, of 'rel' in the sysfs directory 'dir'. */
static char *read_attr_at(const char *dir, const char *rel) {
        char path[PATH_MAX + 64];

        snprintf(path, sizeof path, "%s/%s", dir, rel);
        return read_attr(path);
}

static char *list_dir_at(const char *dir, const char *rel) {
        char path[PATH_MAX + 64];

        snprintf(path, sizeof path, "%s/%s", dir, rel);
        return list_dir(path);
}

/* device_classify: the kind of the block device at sysfs directory real
 * (a partition, loop, dm, md or whole disk), with its label and parents. */
static void device_classify(char *real, const char *name, DeviceInfo *ret) {
        char path[PATH_MAX + 64];

        snprintf(path, sizeof path, "%s/partition", real);
        if (access(path, F_OK) == 0) {
                char *slash = strrchr(real, '/');

                ret->kind = DEVICE_PARTITION;
                if (slash) {
                        *slash = 0; /* the disk holding the partition */
                        ret->parents = strdup(strrchr(real, '/') ? strrchr(real, '/') + 1 : real);
                }
        } else if (startswith(name, "loop")) {
                ret->kind = DEVICE_LOOP;
                ret->label = read_attr_at(real, "loop/backing_file");
        } else if (startswith(name, "dm-")) {
                ret->kind = DEVICE_DM;
                ret->label = read_attr_at(real, "dm/name");
                ret->parents = list_dir_at(real, "slaves");
        } else if (startswith(name, "md")) {
                ret->kind = DEVICE_MD;
                ret->parents = list_dir_at(real, "slaves");
        } else
                ret->kind = DEVICE_DISK;
}

int device_resolve(const char *sysfs, const char *devfs, dev_t devno, const char *source, DeviceInfo *ret) {
        char link[512], target[PATH_MAX], real[PATH_MAX], path[PATH_MAX + 64];
        _cleanup_free_ char *rot = NULL;
        const char *name;
        ssize_t n;

        *ret = (DeviceInfo) { .kind = DEVICE_NONE, .rotational = -1 };

        /* Anonymous device numbers (btrfs, overlay...): a /dev source names
         * the real one. */
        if (major(devno) == 0) {
                const char *rest = source ? startswith(source, "/dev/") : NULL;

                if (!rest || devfs_block_device(devfs, rest, &devno) < 0)
                        return 0;
        }

        snprintf(link, sizeof link, "%s/dev/block/%u:%u", sysfs, major(devno), minor(devno));
        n = readlink(link, target, sizeof target - 1);
        if (n < 0)
                return 0; /* not a block device known to sysfs */
        target[n] = 0;
        name = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
        if (strlen(name) >= sizeof ret->name || !realpath(link, real))
                return 0;

        ret->major = major(devno);
        ret->minor = minor(devno);
        strcpy(ret->name, name);

        device_classify(real, name, ret);
        snprintf(path, sizeof path, "%s/queue/rotational", real);
        rot = read_attr(path);
        if (rot)
                ret->rotational = streq(rot, "1");
        return 0;
}

int device_read_uuid(const char *devfs, const char *name, char **ret) {
        char path[PATH_MAX];
        blkid_probe pr;
        const char *uuid = NULL;
        int r;

        if (strchr(name, '/') || snprintf(path, sizeof path, "%s/%s", devfs, name) >= (int) sizeof path)
                return -EINVAL;
        pr = blkid_new_probe_from_filename(path);
        if (!pr)
                return errno > 0 ? -errno : -EIO;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_UUID);
        r = blkid_do_safeprobe(pr);
        if (r == 0 && blkid_probe_lookup_value(pr, "UUID", &uuid, NULL) == 0 && uuid && *uuid) {
                *ret = strdup(uuid);
                r = *ret ? 0 : -ENOMEM;
        } else
                r = -ENODATA;
        blkid_free_probe(pr);
        return r;
}
