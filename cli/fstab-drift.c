/* fstab-drift.c: a live atime policy that fstab would undo at the next mount (see fstab-drift.h). */
#include "fstab-drift.h"

#include <errno.h>
#include <libmount/libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "macro.h"

/* The atime policy an fstab options field asks for: the last of noatime,
 * relatime and strictatime; none of them means relatime, the kernel's
 * default. */
static const char *fstab_atime(const char *opts) {
        const char *r = "relatime";
        char *name, *value;
        size_t nsz, vsz;
        /* libmount's iterator takes a char **, though it never writes. */
        _cleanup_free_ char *copy = strdup(opts ? opts : "");
        char *o = copy;

        if (!copy)
                return r;
        while (mnt_optstr_next_option(&o, &name, &nsz, &value, &vsz) == 0) {
                if (nsz == 7 && strncmp(name, "noatime", 7) == 0)
                        r = "noatime";
                else if (nsz == 8 && strncmp(name, "relatime", 8) == 0)
                        r = "relatime";
                else if (nsz == 11 && strncmp(name, "strictatime", 11) == 0)
                        r = "strictatime";
        }
        return r;
}

/* s as one shell word: as it is where no character means anything to a
 * shell, else shell_quote()'s. NULL on OOM. */
static char *shell_word(const char *s) {
        static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._,=+:@%-";

        return *s && s[strspn(s, plain)] == 0 ? strdup(s) : shell_quote(s);
}

/* The note of a drift: the live policy, fstab's, and the two commands,
 * each argument a shell word, to keep either. */
static int drift_note(const char *fstab, const char *target, const char *live_atime, bool live_lazytime,
                      const char *want, bool lazy, char *buf, size_t len) {
        const char *lz_live = lazy == live_lazytime ? "" : live_lazytime ? ",lazytime" : ",nolazytime";
        const char *lz_want = lazy == live_lazytime ? "" : lazy ? ",lazytime" : ",nolazytime";
        _cleanup_free_ char *set = NULL, *qset = NULL, *qt = NULL;

        if (asprintf(&set, "%s=%s%s", target, live_atime, lz_live) < 0) {
                set = NULL;
                return -ENOMEM;
        }
        qset = shell_word(set);
        qt = shell_word(target);
        if (!qset || !qt)
                return -ENOMEM;
        snprintf(buf, len,
                 "%s is %s%s live but %s says %s%s: the next mount brings that back. Keep the live one: "
                 "atimectl fstab --set %s --write; or undo it: atimectl remount %s %s%s",
                 target, live_atime, live_lazytime ? ",lazytime" : "", fstab, want, lazy ? ",lazytime" : "", qset, qt,
                 want, lz_want);
        return 1;
}

int fstab_drift(const char *fstab, const char *target, const char *live_atime, bool live_lazytime, char *buf,
                size_t len) {
        struct libmnt_table *tb = mnt_new_table();
        struct libmnt_fs *fs;
        const char *want, *opts;
        bool lazy;
        int r = 0;

        if (!tb)
                return -ENOMEM;
        if (!live_atime || mnt_table_parse_fstab(tb, fstab) < 0 ||
            !(fs = mnt_table_find_target(tb, target, MNT_ITER_BACKWARD))) {
                mnt_unref_table(tb);
                return 0;
        }
        opts = mnt_fs_get_options(fs);
        want = fstab_atime(opts);
        lazy = opts && mnt_optstr_get_option(opts, "lazytime", NULL, NULL) == 0;
        if (!streq(want, live_atime) || lazy != live_lazytime)
                r = drift_note(fstab, target, live_atime, live_lazytime, want, lazy, buf, len);
        mnt_unref_table(tb);
        return r;
}
