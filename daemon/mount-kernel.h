/* mount-kernel.h: the kernel's word on single mounts, where it gives one
 * (Linux 6.8 and later): listmount(2) for the ids of a mount namespace's
 * mounts, statmount(2) for one mount by its 64-bit id, and the records of
 * a fanotify group that reports mounts attached and detached (6.15,
 * FAN_REPORT_MNT). glibc 2.36 and Debian 12's kernel headers have none of
 * them: the calls are raw syscalls with the kernel's uapi numbers, the
 * structures ours, laid out as the uapi has them and read with every
 * length checked (a kernel answers what it knows; an older one's record
 * is shorter).
 *
 * A mount here is told as mountinfo tells it: the same 32-bit ids, its
 * options as the same words in the same order (mount_table_from_seeds()
 * and the mount log compare them), its mount point as the bytes the kernel
 * has (no escapes to undo). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mounts.h"

/* One mount, as statmount(2) says it: 'seed' borrows from 'strings'. */
typedef struct KMount {
        uint64_t id;     /* unique for the boot; never reused */
        uint64_t parent; /* the namespace's root: its own */
        MountSeed seed;
        char *strings;
} KMount;

void kmount_done(KMount *k);

/* A statmount(2) record of 'len' bytes parsed into *ret (its strings
 * copied): -EBADMSG where a length or an offset does not hold, -ENODATA
 * where the record lacks what a mount needs (its ids, type or mount point). */
int kmount_parse(const void *buf, size_t len, KMount *ret);

/* statmount(2) of the mount 'id' in this process's namespace, into *ret.
 * 'buf' (*buf_size bytes, grown as needed, the caller's to free) is
 * reused across calls. -ENOENT: no such mount here (detached since);
 * -ENOSYS/-EPERM: refused (an older kernel, a seccomp filter). */
int kmount_stat(uint64_t id, void **buf, size_t *buf_size, KMount *ret);

/* listmount(2): the ids of every mount in this process's namespace. */
int kmount_list(uint64_t **ret, size_t *ret_n);

/* Of the fanotify records in buf: each mount id reported to 'each'; an
 * overflow of the group's queue (the kernel dropped events: resync) to
 * *ret_overflow. -EBADMSG where a record's lengths do not hold (what came
 * before it is reported). */
typedef void (*kmount_event_fn)(uint64_t mnt_id, void *userdata);
int kmount_events_parse(const void *buf, size_t len, kmount_event_fn each, void *userdata, bool *ret_overflow);

/* A fanotify group reporting the mounts attached to and detached from the
 * mount namespace 'nsfd' (/proc/PID/ns/mnt), non-blocking and close-on-
 * exec: its fd, or -errno. Needs CAP_SYS_ADMIN (atimed-helper's). */
int kmount_events_open(int nsfd);
