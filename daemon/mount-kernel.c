/* mount-kernel.c: statmount(2), listmount(2) and fanotify's mount events,
 * by raw syscall, their records read with every length checked (see
 * mount-kernel.h). */
#include "mount-kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "macro.h"

/* The kernel's uapi (include/uapi/linux/mount.h, fanotify.h, 6.8-6.18),
 * which Debian 12's headers predate. The syscall numbers are those of
 * the unified table every architecture but alpha shares. */
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif

#define KM_STATMOUNT_SB_BASIC 0x00000001U
#define KM_STATMOUNT_MNT_BASIC 0x00000002U
#define KM_STATMOUNT_MNT_ROOT 0x00000008U
#define KM_STATMOUNT_MNT_POINT 0x00000010U
#define KM_STATMOUNT_FS_TYPE 0x00000020U
#define KM_STATMOUNT_MNT_OPTS 0x00000080U
#define KM_STATMOUNT_FS_SUBTYPE 0x00000100U
#define KM_STATMOUNT_SB_SOURCE 0x00000200U
#define KM_LSMT_ROOT UINT64_C(0xffffffffffffffff)
#define KM_MNT_ID_REQ_SIZE_VER0 24

#define KM_FAN_REPORT_MNT 0x00004000U
#define KM_FAN_MARK_MNTNS 0x00000110U
#define KM_FAN_MNT_ATTACH UINT64_C(0x01000000)
#define KM_FAN_MNT_DETACH UINT64_C(0x02000000)
#define KM_FAN_EVENT_INFO_TYPE_MNT 7

/* The superblock flags statmount reports (SB_* in linux/fs.h). */
#define KM_SB_RDONLY 0x1U
#define KM_SB_SYNCHRONOUS 0x10U
#define KM_SB_DIRSYNC 0x80U
#define KM_SB_LAZYTIME (1U << 25)

struct km_id_req {
        uint32_t size;
        uint32_t spare;
        uint64_t mnt_id;
        uint64_t param;
};

struct km_statmount {
        uint32_t size;
        uint32_t mnt_opts;
        uint64_t mask;
        uint32_t sb_dev_major;
        uint32_t sb_dev_minor;
        uint64_t sb_magic;
        uint32_t sb_flags;
        uint32_t fs_type;
        uint64_t mnt_id;
        uint64_t mnt_parent_id;
        uint32_t mnt_id_old;
        uint32_t mnt_parent_id_old;
        uint64_t mnt_attr;
        uint64_t mnt_propagation;
        uint64_t mnt_peer_group;
        uint64_t mnt_master;
        uint64_t propagate_from;
        uint32_t mnt_root;
        uint32_t mnt_point;
        uint64_t mnt_ns_id;
        uint32_t fs_subtype;
        uint32_t sb_source;
        uint32_t opt_num;
        uint32_t opt_array;
        uint32_t opt_sec_num;
        uint32_t opt_sec_array;
        uint64_t spare2[46];
        /* char str[]: the strings, at offsets given above */
};

_Static_assert(sizeof(struct km_statmount) == 512, "struct statmount's fixed part is 512 bytes");

void kmount_done(KMount *k) {
        free(k->strings);
        *k = (KMount) {};
}

/* The string at 'off' in the record's string area (strs, n bytes): NULL
 * where it runs past the end. */
static const char *record_string(const char *strs, size_t n, uint32_t off) {
        if (off >= n || !memchr(strs + off, 0, n - off))
                return NULL;
        return strs + off;
}

/* mountinfo's per-mount options (fs/proc_namespace.c show_mnt_opts()),
 * in its order. */
static void format_vfs(uint64_t attr, char *buf, size_t len) {
        snprintf(buf, len, "%s%s%s%s%s%s%s%s%s", attr & MOUNT_ATTR_RDONLY ? "ro" : "rw",
                 attr & MOUNT_ATTR_NOSUID ? ",nosuid" : "", attr & MOUNT_ATTR_NODEV ? ",nodev" : "",
                 attr & MOUNT_ATTR_NOEXEC ? ",noexec" : "",
                 (attr & MOUNT_ATTR__ATIME) == MOUNT_ATTR_NOATIME ? ",noatime" : "",
                 attr & MOUNT_ATTR_NODIRATIME ? ",nodiratime" : "",
                 (attr & MOUNT_ATTR__ATIME) == MOUNT_ATTR_RELATIME ? ",relatime" : "",
                 attr & MOUNT_ATTR_NOSYMFOLLOW ? ",nosymfollow" : "", attr & MOUNT_ATTR_IDMAP ? ",idmapped" : "");
}

/* mountinfo's super options: ro/rw, the superblock's flags, then the
 * filesystem's own (show_sb_opts() and ->show_options()). */
static void format_super_flags(uint32_t flags, char *buf, size_t len) {
        snprintf(buf, len, "%s%s%s%s", flags & KM_SB_RDONLY ? "ro" : "rw", flags & KM_SB_SYNCHRONOUS ? ",sync" : "",
                 flags & KM_SB_DIRSYNC ? ",dirsync" : "", flags & KM_SB_LAZYTIME ? ",lazytime" : "");
}

/* Appends s (and its NUL) at *p: the next string's place. */
static char *put(char **p, const char *a, const char *b, const char *c) {
        char *start = *p;

        *p = stpcpy(stpcpy(stpcpy(*p, a), b), c) + 1;
        return start;
}

int kmount_parse(const void *buf, size_t len, KMount *ret) {
        struct km_statmount sm;
        const char *strs = (const char *) buf + sizeof sm;
        const char *point, *type, *subtype = "", *root = "", *source = "", *opts = "";
        char vfs[96], sflags[48];
        size_t n, total;
        char *p;

        if (len < sizeof sm)
                return -EBADMSG;
        memcpy(&sm, buf, sizeof sm);
        if (sm.size < sizeof sm || sm.size > len)
                return -EBADMSG;
        n = sm.size - sizeof sm;
        if ((sm.mask & (KM_STATMOUNT_MNT_BASIC | KM_STATMOUNT_SB_BASIC | KM_STATMOUNT_MNT_POINT | KM_STATMOUNT_FS_TYPE)) !=
            (KM_STATMOUNT_MNT_BASIC | KM_STATMOUNT_SB_BASIC | KM_STATMOUNT_MNT_POINT | KM_STATMOUNT_FS_TYPE))
                return -ENODATA;
        point = record_string(strs, n, sm.mnt_point);
        type = record_string(strs, n, sm.fs_type);
        if ((sm.mask & KM_STATMOUNT_FS_SUBTYPE) && !(subtype = record_string(strs, n, sm.fs_subtype)))
                return -EBADMSG;
        if ((sm.mask & KM_STATMOUNT_MNT_ROOT) && !(root = record_string(strs, n, sm.mnt_root)))
                return -EBADMSG;
        if ((sm.mask & KM_STATMOUNT_SB_SOURCE) && !(source = record_string(strs, n, sm.sb_source)))
                return -EBADMSG;
        if ((sm.mask & KM_STATMOUNT_MNT_OPTS) && !(opts = record_string(strs, n, sm.mnt_opts)))
                return -EBADMSG;
        if (!point || !type)
                return -EBADMSG;
        if (sm.mnt_id_old > INT32_MAX || sm.mnt_parent_id_old > INT32_MAX)
                return -EBADMSG;

        format_vfs(sm.mnt_attr, vfs, sizeof vfs);
        format_super_flags(sm.sb_flags, sflags, sizeof sflags);
        total = strlen(point) + strlen(type) + 1 + strlen(subtype) + strlen(root) + strlen(source) + strlen(vfs) +
                strlen(sflags) + 1 + strlen(opts) + 6;
        *ret = (KMount) {
                .id = sm.mnt_id,
                .parent = sm.mnt_parent_id,
                .strings = malloc(total),
        };
        if (!ret->strings)
                return -ENOMEM;
        p = ret->strings;
        ret->seed = (MountSeed) {
                .id = (int) sm.mnt_id_old,
                .parent_id = (int) sm.mnt_parent_id_old,
                .devno = makedev(sm.sb_dev_major, sm.sb_dev_minor),
                .target = put(&p, point, "", ""),
                .fstype = put(&p, type, *subtype ? "." : "", subtype),
                .root = put(&p, root, "", ""),
                .source = put(&p, source, "", ""),
                .vfs_options = put(&p, vfs, "", ""),
                .super_options = put(&p, sflags, *opts ? "," : "", opts),
        };
        return 0;
}

/* Far beyond a real mount's record (a mount point is at most PATH_MAX). */
#define STATMOUNT_BUF_MAX ((size_t) 1 << 20)

int kmount_stat(uint64_t id, void **buf, size_t *buf_size, KMount *ret) {
        struct km_id_req req = {
                .size = KM_MNT_ID_REQ_SIZE_VER0,
                .mnt_id = id,
                .param = KM_STATMOUNT_SB_BASIC | KM_STATMOUNT_MNT_BASIC | KM_STATMOUNT_MNT_ROOT | KM_STATMOUNT_MNT_POINT |
                         KM_STATMOUNT_FS_TYPE | KM_STATMOUNT_MNT_OPTS | KM_STATMOUNT_FS_SUBTYPE | KM_STATMOUNT_SB_SOURCE,
        };

        for (;;) {
                if (*buf_size < 4096) {
                        void *nb = realloc(*buf, 4096);

                        if (!nb)
                                return -ENOMEM;
                        *buf = nb;
                        *buf_size = 4096;
                }
                if (syscall(__NR_statmount, &req, *buf, *buf_size, 0) == 0)
                        return kmount_parse(*buf, *buf_size, ret);
                if (errno == EINVAL && (req.param & (KM_STATMOUNT_FS_SUBTYPE | KM_STATMOUNT_SB_SOURCE))) {
                        /* A kernel before 6.14 knows neither. */
                        req.param &= ~(KM_STATMOUNT_FS_SUBTYPE | KM_STATMOUNT_SB_SOURCE);
                        continue;
                }
                if (errno != EOVERFLOW)
                        return -errno;
                if (*buf_size >= STATMOUNT_BUF_MAX)
                        return -E2BIG;
                {
                        void *nb = realloc(*buf, *buf_size * 2);

                        if (!nb)
                                return -ENOMEM;
                        *buf = nb;
                        *buf_size *= 2;
                }
        }
}

int kmount_list(uint64_t **ret, size_t *ret_n) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n = 0, alloc = 0;
        struct km_id_req req = { .size = KM_MNT_ID_REQ_SIZE_VER0, .mnt_id = KM_LSMT_ROOT };

        for (;;) {
                long got;

                if (alloc - n < 1024) {
                        size_t na = alloc ? alloc * 2 : 4096;
                        uint64_t *ni = realloc(ids, na * sizeof *ids);

                        if (!ni)
                                return -ENOMEM;
                        ids = ni;
                        alloc = na;
                }
                /* Pages of ids, each after the last id of the one before. */
                req.param = n > 0 ? ids[n - 1] : 0;
                got = syscall(__NR_listmount, &req, ids + n, alloc - n, 0);
                if (got < 0)
                        return -errno;
                if (got == 0)
                        break;
                n += (size_t) got;
        }
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

int kmount_events_parse(const void *buf, size_t len, kmount_event_fn each, void *userdata, bool *ret_overflow) {
        const uint8_t *p = buf;

        *ret_overflow = false;
        while (len > 0) {
                struct fanotify_event_metadata md;
                size_t off;

                if (len < sizeof md)
                        return -EBADMSG;
                memcpy(&md, p, sizeof md);
                if (md.event_len < sizeof md || md.event_len > len || md.metadata_len < sizeof md ||
                    md.metadata_len > md.event_len || md.vers != FANOTIFY_METADATA_VERSION)
                        return -EBADMSG;
                if (md.mask & FAN_Q_OVERFLOW)
                        *ret_overflow = true;
                for (off = md.metadata_len; off < md.event_len;) {
                        struct fanotify_event_info_header h;
                        uint64_t id;

                        if (md.event_len - off < sizeof h)
                                return -EBADMSG;
                        memcpy(&h, p + off, sizeof h);
                        if (h.len < sizeof h || h.len > md.event_len - off)
                                return -EBADMSG;
                        /* struct fanotify_event_info_mnt: the header, then
                         * the id at the next 8-byte boundary. */
                        if (h.info_type == KM_FAN_EVENT_INFO_TYPE_MNT && h.len >= 8 + sizeof id) {
                                memcpy(&id, p + off + 8, sizeof id);
                                each(id, userdata);
                        }
                        off += h.len;
                }
                p += md.event_len;
                len -= md.event_len;
        }
        return 0;
}

int kmount_events_open(int nsfd) {
        _cleanup_close_ int fd = fanotify_init(FAN_CLASS_NOTIF | KM_FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK,
                                               O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fanotify_mark(fd, FAN_MARK_ADD | KM_FAN_MARK_MNTNS, KM_FAN_MNT_ATTACH | KM_FAN_MNT_DETACH, nsfd, NULL) < 0)
                return -errno;
        return TAKE_FD(fd);
}
