/* remount.c: `atimectl remount`: atimed's advice, or a POLICY given, set
 * on the live mount now, until it is mounted again. Every step acts through
 * a descriptor of the mount opened once, never through its path, so that a
 * symlink swapped in by a user who may write a directory on the way cannot
 * redirect the change; the mount_setattr() and fsconfig() of Linux 5.12,
 * never mount(2) by path. */
#include <errno.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "escape.h"
#include "fileio.h"
#include "policy.h"
#include "protocol.h"
#include "report.h"
#include "varlink.h"

/* The options of a mount, from the kernel: the one with id 'id', or with
 * 'id' 0, the top one at target, its id in *id. */
static int current_options(const char *target, int *id, char **ret_vfs, char **ret_fs) {
        struct libmnt_table *tb = NULL;
        struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
        struct libmnt_fs *fs, *found = NULL;
        int r;

        r = it ? mount_table_live(&tb) : -ENOMEM;
        if (r < 0) {
                mnt_free_iter(it);
                return r == -ENOMEM ? r : -EIO;
        }
        while (mnt_table_next_fs(tb, it, &fs) == 0)
                if (*id > 0 ? mnt_fs_get_id(fs) == *id : streq_ptr(mnt_fs_get_target(fs), target))
                        found = fs; /* the last one on that target is on top */
        r = -ENOENT;
        if (found) {
                *id = mnt_fs_get_id(found);
                *ret_vfs = strdup(mnt_fs_get_vfs_options(found) ?: "");
                *ret_fs = strdup(mnt_fs_get_fs_options(found) ?: "");
                r = *ret_vfs && *ret_fs ? 0 : -ENOMEM;
        }
        mnt_free_iter(it);
        mnt_unref_table(tb);
        return r;
}

/* The mount id of an open file, from /proc/self/fdinfo (any kernel since
 * 3.15; statx()'s STATX_MNT_ID came in 5.8). */
static int fd_mount_id(int fd) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        const char *m;
        size_t len;
        int r;

        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
        r = read_full_file(path, 4096, &text, &len);
        if (r < 0)
                return r;
        m = strstr(text, "\nmnt_id:");
        return m ? atoi(m + 8) : -ENODATA;
}

/* The mount at target, opened once: every step of the change acts through
 * this descriptor, not the path, so a symlink swapped in under a directory
 * a user controls between the check and the change cannot redirect it.
 * target was resolved with its symlinks (resolve_mount()): any found on
 * the way now is such a swap, refused. It must be the mount 'id' whose
 * options were read; -ESTALE if it is not. */
static int open_mount(const char *target, int id) {
        struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, AT_FDCWD, target, &how, sizeof how);
        int r;

        if (fd < 0)
                return -errno;
        r = fd_mount_id(fd);
        if (r < 0)
                return r;
        if (r != id)
                return -ESTALE;
        return TAKE_FD(fd);
}

/* The object 'path' leads to as root typed it, reached without following
 * any symlink: -ELOOP if the path passes through one. The mount that
 * remount finds from the path (through realpath() and the mount table)
 * must hold this object, or a symlink swapped in between them redirected
 * it. */
static int open_typed(const char *path) {
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);

        return fd < 0 ? -errno : fd;
}

/* Whether fds a and b lie on the same mount (a path inside a mount names
 * the mount that holds it). */
static bool same_mount(int a, int b) {
        int ma = fd_mount_id(a);

        return ma >= 0 && ma == fd_mount_id(b);
}

/* The atime bits of this mount alone (mount_setattr(), Linux 5.12). On an
 * older kernel it refuses rather than remount by path: mount(2) acts on a
 * path, which a user may redirect. */
static int set_atime(int fd, const char *atime) {
        struct mount_attr attr = {
                .attr_clr = MOUNT_ATTR__ATIME,
                .attr_set = streq(atime, "noatime")    ? MOUNT_ATTR_NOATIME
                            : streq(atime, "relatime") ? MOUNT_ATTR_RELATIME
                                                       : MOUNT_ATTR_STRICTATIME,
        };

        return mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ? -errno : 0;
}

/* nodiratime, a flag of the mount beside its atime policy. */
static int set_nodiratime(int fd) {
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_NODIRATIME };

        return mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ? -errno : 0;
}

/* lazytime belongs to the superblock: reconfigure just that flag. */
static int set_lazytime(int mfd, bool on) {
        _cleanup_close_ int fd = fspick(mfd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fsconfig(fd, FSCONFIG_SET_FLAG, on ? "lazytime" : "nolazytime", NULL, 0) < 0 ||
            fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
                return -errno;
        return 0;
}

static json_object *options_json(const char *vfs, const char *fs) {
        json_object *o = json_object_new_object();

        if (o) {
                json_object_object_add(o, "vfs_options", varlink_name_new(vfs));
                json_object_object_add(o, "fs_options", varlink_name_new(fs));
        }
        return o;
}

/* {"target", "changed", "before", "after"} or {"target", "changed": false, "reason"}. */
static int print_remount_json(const char *target, bool changed, const char *vfs, const char *fs, const char *vfs_after,
                              const char *fs_after, const char *reason) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return fail("out of memory");
        json_object_object_add(o, F_TARGET, varlink_name_new(target));
        json_object_object_add(o, "changed", json_object_new_boolean(changed));
        if (vfs)
                json_object_object_add(o, "before", options_json(vfs, fs));
        if (vfs_after)
                json_object_object_add(o, "after", options_json(vfs_after, fs_after));
        if (reason)
                json_object_object_add(o, F_REASON, json_object_new_string(reason));
        return print_json(o);
}

/* The POLICY given on the command line, for the mount that holds path (as
 * findmnt -T finds it), once the atime readers there agree. */
static int remount_policy_given(const char *path, const char *words, struct policy_spec *p, char *target,
                                size_t len) {
        int r;

        if (policy_parse(words, p) < 0) {
                fprintf(stderr, "atimectl: remount: '%s' is not a policy. %s\n", words, POLICY_HELP);
                return EXIT_USAGE;
        }
        r = resolve_mount(path, target, len);
        if (r < 0)
                return fail("cannot find the mount that holds %s: %s", path, strerror(-r));
        return guard_atime_readers(target, p->atime);
}

/* atimed's advice for the mount that holds path. When it advises keeping,
 * says so (text or JSON) and sets *ret_done. */
static int remount_policy_advised(const char *path, struct policy_spec *p, char *target, size_t len, bool *ret_done) {
        _cleanup_(report_freep) Report *rep = NULL;
        const ReportAdvice *a;
        const char *why;
        int r;

        *ret_done = false;
        r = policy_advice(path, &rep, target, len);
        if (r != EXIT_OK)
                return r;
        a = rep->n_mounts > 0 ? &rep->mounts[0].advice : NULL;
        if (a && policy_of_advice(a, p))
                return guard_atime_readers(target, p->atime); /* as for a POLICY given */
        *ret_done = true;
        why = a && a->n_reasons > 0 ? a->reasons[0] : NULL;
        if (arg_json)
                return print_remount_json(target, false, NULL, NULL, NULL, NULL, why);
        printf("Nothing to change on %s: %s\n", escape_name_tmp(target), escape_tmp(why));
        return EXIT_OK;
}

/* Sets the policy on the live mount, through its descriptor: the atime
 * flag of the mount, lazytime of the superblock when it differs from
 * fsopts. */
static int remount_apply(int fd, const char *target, const struct policy_spec *p, const char *fsopts) {
        int r;

        if (p->atime && (r = set_atime(fd, p->atime)) < 0)
                return fail("cannot set %s on %s: %s", p->atime, escape_name_tmp(target),
                            r == -ENOSYS ? "this kernel has no mount_setattr() (Linux 5.12), and atimectl does not "
                                           "remount by path; nothing changed"
                                         : strerror(-r));
        if (p->nodiratime == 1 && (r = set_nodiratime(fd)) < 0)
                return fail("cannot set nodiratime on %s: %s", escape_name_tmp(target), strerror(-r));
        if (p->lazytime >= 0 && options_have(fsopts, "lazytime") != (p->lazytime == 1) &&
            (r = set_lazytime(fd, p->lazytime == 1)) < 0)
                return fail("cannot set %s on %s: %s", p->lazytime ? "lazytime" : "nolazytime", escape_name_tmp(target),
                            strerror(-r));
        return EXIT_OK;
}

/* The options after the change and, when they changed, how to keep them. */
static int remount_report(const char *target, const char *spec, bool changed, const char *vfs_after,
                          const char *fs_after) {
        _cleanup_free_ char *set = NULL, *q = NULL;

        printf("%s after:  %s (superblock: %s)\n", escape_name_tmp(target), escape_tmp(vfs_after), escape_tmp(fs_after));
        if (!changed) {
                printf("%s already had %s: nothing changed.\n", escape_name_tmp(target), spec);
                return EXIT_OK;
        }
        if (asprintf(&set, "%s=%s", target, spec) < 0 || !(q = shell_quote(set)))
                return fail("out of memory");
        printf("This lasts until %s is mounted again. To keep it: atimectl fstab --set %s --write\n",
               escape_name_tmp(target), q);
        return EXIT_OK;
}

int cmd_remount(int argc, char **argv) {
        _cleanup_free_ char *vfs = NULL, *fsopts = NULL, *vfs_after = NULL, *fs_after = NULL;
        _cleanup_close_ int fd = -EBADF, typed = -EBADF;
        struct policy_spec p;
        char target[PATH_MAX], spec[64];
        bool changed, done = false;
        int r, id = 0;

        require_root_server();
        if (argc > 2)
                r = remount_policy_given(argv[1], argv[2], &p, target, sizeof target);
        else
                r = remount_policy_advised(argv[1], &p, target, sizeof target, &done);
        if (r != EXIT_OK || done)
                return r;
        if (geteuid() != 0)
                return fail("remounting needs root.");
        typed = open_typed(argv[1]);
        if (typed == -ELOOP)
                return fail("%s passes through a symlink, which anyone who may write its directory could swap; "
                            "name the mount by its own path (%s). Nothing changed.", escape_name_tmp(argv[1]),
                            escape_name_tmp(target));
        if (typed < 0)
                return fail("cannot open %s: %s", escape_name_tmp(argv[1]), strerror(-typed));
        r = current_options(target, &id, &vfs, &fsopts);
        if (r == -ENOENT)
                return fail("nothing is mounted on %s.", escape_name_tmp(target));
        if (r < 0)
                return fail("cannot read the mount table: %s", strerror(-r));
        fd = open_mount(target, id);
        if (fd == -ELOOP || fd == -ESTALE)
                return fail("%s is no longer the mount that was checked (a symlink or a mount changed on the way); "
                            "nothing changed.", escape_name_tmp(target));
        if (fd < 0)
                return fail("cannot open %s: %s", escape_name_tmp(target), strerror(-fd));
        if (!same_mount(typed, fd))
                return fail("%s is no longer the mount that was checked (a symlink or a mount changed on the way); "
                            "nothing changed.", escape_name_tmp(target));
        policy_format(&p, spec, sizeof spec);
        if (!arg_json)
                printf("%s before: %s (superblock: %s)\n", escape_name_tmp(target), escape_tmp(vfs), escape_tmp(fsopts));
        r = remount_apply(fd, target, &p, fsopts);
        if (r != EXIT_OK)
                return r;
        r = current_options(target, &id, &vfs_after, &fs_after);
        if (r < 0)
                return fail("cannot read the mount table: %s", strerror(-r));
        changed = !streq(vfs, vfs_after) || !streq(fsopts, fs_after);
        if (arg_json)
                return print_remount_json(target, changed, vfs, fsopts, vfs_after, fs_after, NULL);
        return remount_report(target, spec, changed, vfs_after, fs_after);
}
