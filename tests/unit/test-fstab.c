/* test-fstab: the fstab editor (cli/fstab.c): golden fixtures, option edits, notes, the diff and the safe
 * write.
 *
 * Golden fixtures live in $top_srcdir/tests/fixtures/fstab (or "." without top_srcdir). For each NAME:
 *   NAME.fstab  the input file;
 *   NAME.args   the requests, one per line: "TARGET ATIME LAZY NAMED", where
 *                 TARGET may use fstab's octal escapes (\040 for a space),
 *                 ATIME  is noatime | relatime | strictatime | - (leave the policy alone),
 *                 LAZY   is + (add lazytime) | - (remove lazytime/nolazytime) | = (leave alone),
 *                 NAMED  is named | auto (whether the user named the mount explicitly);
 *               blank lines are ignored;
 *   NAME.diff   the exact expected output of fstab_diff() with labels "a/NAME.fstab" and "b/NAME.fstab";
 *               empty when nothing changes.
 * Every fixture must also be idempotent: applying its requests to the result changes nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fstab.h"
#include "macro.h"
#include "strv.h"
#include "../tap.h"

static int read_file(const char *path, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = fopen(path, "re");
        char chunk[4096];
        size_t k;

        if (!f)
                return -errno;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
                char *nb = realloc(buf, len + k + 1);

                if (!nb) {
                        fclose(f);
                        return -ENOMEM;
                }
                buf = nb;
                memcpy(buf + len, chunk, k);
                len += k;
        }
        fclose(f);
        if (!buf && !(buf = calloc(1, 1)))
                return -ENOMEM;
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static int write_file(const char *path, const char *text, mode_t mode) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        size_t n = strlen(text);

        if (fd < 0 || write(fd, text, n) != (ssize_t) n)
                return -errno;
        return 0;
}

static bool file_is(const char *path, const char *text) {
        _cleanup_free_ char *buf = NULL;
        size_t len;

        return read_file(path, &buf, &len) == 0 && len == strlen(text) && memcmp(buf, text, len) == 0;
}

/* Written independently of fstab.c on purpose: decodes \ooo in an .args target. */
static char *decode_octal(const char *s) {
        char *r = malloc(strlen(s) + 1), *p = r;

        if (!r)
                return NULL;
        while (*s) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *p++ = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 4;
                } else
                        *p++ = *s++;
        }
        *p = 0;
        return r;
}

struct args {
        struct fstab_request *reqs;
        size_t n;
        char **strings; /* owns the targets */
};

static void args_done(struct args *a) {
        free(a->reqs);
        strv_free(a->strings);
}

static int parse_args(const char *text, struct args *ret) {
        _cleanup_strv_free_ char **lines = NULL;
        struct args a = {};
        int r;

        r = strv_split(text, "\n", &lines);
        if (r < 0)
                return r;
        a.reqs = calloc(strv_length(lines) + 1, sizeof(struct fstab_request));
        a.strings = calloc(1, sizeof(char *));
        if (!a.reqs || !a.strings) {
                args_done(&a);
                return -ENOMEM;
        }
        STRV_FOREACH(l, lines) {
                _cleanup_strv_free_ char **w = NULL;
                _cleanup_free_ char *target = NULL;
                struct fstab_request *q = &a.reqs[a.n];

                if (strv_split(*l, " \t", &w) < 0)
                        goto nomem;
                if (strv_length(w) == 0)
                        continue;
                if (strv_length(w) != 4)
                        goto bad;
                target = decode_octal(w[0]);
                if (!target || strv_extend(&a.strings, target) < 0)
                        goto nomem;
                q->target = a.strings[strv_length(a.strings) - 1];

                if (streq(w[1], "-"))
                        q->atime = NULL;
                else if (streq(w[1], "noatime"))
                        q->atime = "noatime";
                else if (streq(w[1], "relatime"))
                        q->atime = "relatime";
                else if (streq(w[1], "strictatime"))
                        q->atime = "strictatime";
                else
                        goto bad;

                if (streq(w[2], "+"))
                        q->lazytime = 1;
                else if (streq(w[2], "-"))
                        q->lazytime = 0;
                else if (streq(w[2], "="))
                        q->lazytime = -1;
                else
                        goto bad;

                if (streq(w[3], "named"))
                        q->named = true;
                else if (streq(w[3], "auto"))
                        q->named = false;
                else
                        goto bad;
                a.n++;
        }
        *ret = a;
        return 0;
nomem:
        args_done(&a);
        return -ENOMEM;
bad:
        args_done(&a);
        return -EINVAL;
}

/* Finds the 4th field of a line, with the blanks before it, by its own simple rules; false if there is
 * none. A line of three fields has an empty one at its end (an edit may add the field there). */
static bool options_field(const char *l, size_t n, size_t *ret_start, size_t *ret_end) {
        size_t i = 0;

        for (unsigned field = 0; field < 4; field++) {
                size_t s, sep = i;

                while (i < n && (l[i] == ' ' || l[i] == '\t'))
                        i++;
                if (i == n || (field == 3 && l[i] == '\r')) {
                        if (field != 3)
                                return false;
                        *ret_start = *ret_end = sep;
                        return true;
                }
                s = i;
                while (i < n && l[i] != ' ' && l[i] != '\t' && l[i] != '\r')
                        i++;
                if (field == 3) {
                        (void) s;
                        *ret_start = sep;
                        *ret_end = i;
                        return true;
                }
        }
        return false;
}

/* The promise that matters most: same lines, and in a changed line only the bytes of the options field
 * differ. Returns the number of changed lines, or -1 when the promise is broken. */
static int check_only_options_changed(const char *a, size_t alen, const char *b, size_t blen) {
        size_t i = 0, j = 0;
        int changed = 0;

        while (i < alen || j < blen) {
                const char *ae = memchr(a + i, '\n', alen - i), *be = memchr(b + j, '\n', blen - j);
                size_t an = ae ? (size_t) (ae - a) - i : alen - i, bn = be ? (size_t) (be - b) - j : blen - j;
                size_t as, aend, bs, bend;

                if (i >= alen || j >= blen || !!ae != !!be)
                        return -1;
                if (an != bn || memcmp(a + i, b + j, an) != 0) {
                        if (!options_field(a + i, an, &as, &aend) || !options_field(b + j, bn, &bs, &bend))
                                return -1;
                        if (as != bs || memcmp(a + i, b + j, as) != 0)
                                return -1;
                        if (an - aend != bn - bend || memcmp(a + i + aend, b + j + bend, an - aend) != 0)
                                return -1;
                        changed++;
                }
                i += an + 1;
                j += bn + 1;
        }
        return changed;
}

static int ignore_parse_error(struct libmnt_table *tb, const char *filename, int line) {
        return 1;
}

/* libmount reads the same entries (source, target, type) from the input and the result. */
static bool libmount_agrees(const char *a, size_t alen, const char *b, size_t blen) {
        struct libmnt_table *ta = mnt_new_table(), *tb = mnt_new_table();
        _cleanup_free_ char *ca = memdup_str(a, alen), *cb = memdup_str(b, blen);
        FILE *fa = ca ? fmemopen(ca, alen ?: 1, "r") : NULL, *fb = cb ? fmemopen(cb, blen ?: 1, "r") : NULL;
        struct libmnt_iter *ia = mnt_new_iter(MNT_ITER_FORWARD), *ib = mnt_new_iter(MNT_ITER_FORWARD);
        struct libmnt_fs *xa, *xb;
        bool same = false;

        if (!ta || !tb || !fa || !fb || !ia || !ib)
                goto finish;
        mnt_table_set_parser_errcb(ta, ignore_parse_error);
        mnt_table_set_parser_errcb(tb, ignore_parse_error);
        if (alen > 0)
                (void) mnt_table_parse_stream(ta, fa, "a");
        if (blen > 0)
                (void) mnt_table_parse_stream(tb, fb, "b");
        if (mnt_table_get_nents(ta) != mnt_table_get_nents(tb))
                goto finish;
        same = true;
        while (mnt_table_next_fs(ta, ia, &xa) == 0 && mnt_table_next_fs(tb, ib, &xb) == 0)
                if (!streq_ptr(mnt_fs_get_source(xa), mnt_fs_get_source(xb)) ||
                    !streq_ptr(mnt_fs_get_target(xa), mnt_fs_get_target(xb)) ||
                    !streq_ptr(mnt_fs_get_fstype(xa), mnt_fs_get_fstype(xb)))
                        same = false;
finish:
        if (fa)
                fclose(fa);
        if (fb)
                fclose(fb);
        mnt_free_iter(ia);
        mnt_free_iter(ib);
        mnt_unref_table(ta);
        mnt_unref_table(tb);
        return same;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void test_fixture(const char *dir, const char *name) {
        _cleanup_free_ char *p_fstab = NULL, *p_args = NULL, *p_diff = NULL, *input = NULL, *args_text = NULL,
                            *expected = NULL, *diff = NULL, *diff2 = NULL, *la = NULL, *lb = NULL;
        struct fstab_result res = {}, again = {};
        struct args args = {};
        size_t ilen, alen, elen;
        int r;

        if (asprintf(&p_fstab, "%s/%s.fstab", dir, name) < 0 || asprintf(&p_args, "%s/%s.args", dir, name) < 0 ||
            asprintf(&p_diff, "%s/%s.diff", dir, name) < 0 || asprintf(&la, "a/%s.fstab", name) < 0 ||
            asprintf(&lb, "b/%s.fstab", name) < 0)
                abort();

        ok(read_file(p_fstab, &input, &ilen) == 0 && read_file(p_args, &args_text, &alen) == 0 &&
                   read_file(p_diff, &expected, &elen) == 0,
           "%s: fixture files are readable", name);
        if (!input || !args_text || !expected)
                return;
        r = parse_args(args_text, &args);
        ok(r == 0 && args.n > 0, "%s: %zu request(s) parse", name, args.n);
        if (r < 0)
                return;

        r = fstab_edit(input, ilen, args.reqs, args.n, &res);
        is_int(r, 0, "%s: fstab_edit succeeds", name);
        if (r < 0)
                goto finish;

        r = fstab_diff(input, ilen, res.text, res.len, la, lb, &diff);
        is_int(r, 0, "%s: fstab_diff succeeds", name);
        if (r < 0)
                goto finish;
        ok(strlen(diff) == elen && memcmp(diff, expected, elen) == 0, "%s: diff matches %s.diff", name, name);
        if (strlen(diff) != elen || memcmp(diff, expected, elen) != 0)
                printf("# got:\n%s# expected:\n%s", diff, expected);

        is_int(check_only_options_changed(input, ilen, res.text, res.len), (long long) res.n_changes,
               "%s: only options fields changed, one per reported change", name);
        ok(res.text[res.len] == 0 && strlen(res.text) == res.len, "%s: result is NUL-terminated", name);
        ok(libmount_agrees(input, ilen, res.text, res.len), "%s: libmount sees the same entries", name);

        r = fstab_edit(res.text, res.len, args.reqs, args.n, &again);
        ok(r == 0 && again.n_changes == 0 && again.len == res.len && memcmp(again.text, res.text, res.len) == 0,
           "%s: a second run changes nothing", name);
        r = fstab_diff(res.text, res.len, again.text ?: "", again.len, la, lb, &diff2);
        ok(r == 0 && streq(diff2, ""), "%s: second diff is empty", name);

finish:
        fstab_result_done(&res);
        fstab_result_done(&again);
        args_done(&args);
}

static void test_fixtures(void) {
        const char *top = getenv("top_srcdir");
        _cleanup_free_ char *dir = NULL;
        _cleanup_strv_free_ char **names = NULL;
        struct dirent *de;
        DIR *d;

        if (top) {
                if (asprintf(&dir, "%s/tests/fixtures/fstab", top) < 0)
                        abort();
        } else if (!(dir = strdup(".")))
                abort();

        d = opendir(dir);
        ok(d, "fixture directory %s opens", dir);
        if (!d)
                return;
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);

                if (l > 6 && streq(de->d_name + l - 6, ".fstab")) {
                        _cleanup_free_ char *n = strndup(de->d_name, l - 6);

                        if (!n || strv_extend(&names, n) < 0)
                                abort();
                }
        }
        closedir(d);
        ok(strv_length(names) >= 10, "at least 10 fixtures (%zu)", strv_length(names));
        if (names)
                qsort(names, strv_length(names), sizeof(char *), compare_names);
        STRV_FOREACH(n, names)
                test_fixture(dir, *n);
}

/* One entry with the given options field, one request on it: the new field, or NULL when unchanged. */
static char *edit_one(const char *opts, const char *atime, int lazytime) {
        _cleanup_free_ char *text = NULL;
        struct fstab_request req = { .target = "/data", .atime = atime, .lazytime = lazytime };
        struct fstab_result res = {};
        char *r = NULL;

        if (asprintf(&text, "UUID=1234\t/data\text4\t%s\t0 2\n", opts) < 0)
                abort();
        if (fstab_edit(text, strlen(text), &req, 1, &res) < 0)
                return strdup("(error)");
        if (res.n_changes == 1)
                r = strdup(res.changes[0].new_options);
        else if (res.n_changes != 0)
                r = strdup("(several changes)");
        fstab_result_done(&res);
        return r;
}

static void test_options(void) {
        static const struct {
                const char *opts, *atime;
                int lazy;
                const char *expected;
        } cases[] = {
                { "defaults", "noatime", -1, "defaults,noatime" },
                { "defaults,noatime", "noatime", -1, NULL },
                { "rw,relatime,errors=remount-ro", "noatime", -1, "rw,noatime,errors=remount-ro" },
                { "strictatime,rw,atime", "relatime", -1, "relatime,rw" },
                { "norelatime,nostrictatime", "noatime", -1, "noatime" },
                { "noatime", "relatime", -1, "relatime" },
                { "rw,nodiratime,relatime", "noatime", -1, "rw,noatime" },
                { "rw,nodiratime,relatime", "strictatime", -1, "rw,nodiratime,strictatime" },
                { "nodiratime", "relatime", -1, "nodiratime,relatime" },
                { "nodiratime,noatime", "noatime", -1, "noatime" },
                { "noatime,diratime", "noatime", -1, NULL },
                { "defaults", NULL, 1, "defaults,lazytime" },
                { "defaults,nolazytime", NULL, 1, "defaults,lazytime" },
                { "lazytime,noatime,lazytime", NULL, 1, "lazytime,noatime" },
                { "lazytime,noatime", NULL, 1, NULL },
                { "lazytime", NULL, 0, "defaults" },
                { "noatime,lazytime,nolazytime", NULL, 0, "noatime" },
                { "noatime", NULL, 0, NULL },
                { "defaults", "relatime", 1, "defaults,relatime,lazytime" },
                { "defaults", NULL, -1, NULL },
                { "context=\"system_u:object_r:httpd_sys_content_t:s0,c1\",ro", "noatime", -1,
                  "context=\"system_u:object_r:httpd_sys_content_t:s0,c1\",ro,noatime" },
                { "ro,context=\"a,relatime\",relatime", "noatime", -1, "ro,context=\"a,relatime\",noatime" },
                { "rw,,noatime", "noatime", -1, NULL },
                { "rw,,relatime,", "noatime", -1, "rw,noatime" },
                { "ro,context=\"a,b", "noatime", -1, NULL },
                { "x-systemd.automount,noatime=1", "noatime", -1, "x-systemd.automount,noatime=1,noatime" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = edit_one(cases[i].opts, cases[i].atime, cases[i].lazy);

                is_str(got, cases[i].expected, "'%s' + %s, lazytime %d", cases[i].opts, strna(cases[i].atime),
                       cases[i].lazy);
        }
}

/* nodiratime advised (btrfs, where directories are what atime
 * un-shares from snapshots): added once, after the policy; never with
 * noatime, which implies it. */
static void test_nodiratime(void) {
        static const struct {
                const char *opts, *atime;
                int lazy;
                const char *expected;
        } cases[] = {
                { "defaults", NULL, -1, "defaults,nodiratime" },
                { "rw,relatime,subvol=/vol", NULL, -1, "rw,relatime,subvol=/vol,nodiratime" },
                { "relatime,nodiratime", NULL, -1, NULL },
                { "nodiratime,relatime,nodiratime", NULL, -1, "nodiratime,relatime" },
                { "defaults", "relatime", 1, "defaults,relatime,nodiratime,lazytime" },
                { "defaults", "noatime", -1, "defaults,noatime" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL;
                struct fstab_request req = { .target = "/data", .atime = cases[i].atime, .lazytime = cases[i].lazy,
                                             .nodiratime = true };
                struct fstab_result res = {};

                if (asprintf(&text, "UUID=1234\t/data\tbtrfs\t%s\t0 0\n", cases[i].opts) < 0)
                        abort();
                ok(fstab_edit(text, strlen(text), &req, 1, &res) == 0, "'%s' + nodiratime: edited", cases[i].opts);
                is_str(res.n_changes == 1 ? res.changes[0].new_options : NULL, cases[i].expected, "'%s' + %s%snodiratime",
                       cases[i].opts, cases[i].atime ? cases[i].atime : "", cases[i].atime ? "," : "");
                fstab_result_done(&res);
        }
}

static void test_requests(void) {
        static const char text[] = "/dev/sda1 / ext4 defaults 0 1\n";
        struct fstab_result res = {};
        const struct {
                struct fstab_request req;
                const char *what;
        } bad[] = {
                { { .target = "/", .atime = "atime", .lazytime = -1 }, "atime value 'atime'" },
                { { .target = "/", .atime = "", .lazytime = -1 }, "empty atime value" },
                { { .target = "/", .atime = "NOATIME", .lazytime = -1 }, "atime value in capitals" },
                { { .target = "", .atime = "noatime", .lazytime = -1 }, "empty target" },
                { { .target = NULL, .atime = "noatime", .lazytime = -1 }, "missing target" },
                { { .target = "srv", .atime = "noatime", .lazytime = -1 }, "relative target" },
                { { .target = "./srv", .atime = "noatime", .lazytime = -1 }, "dot-relative target" },
                { { .target = "/", .atime = "noatime", .lazytime = 2 }, "lazytime 2" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct fstab_request reqs[2] = { { .target = "/", .atime = "noatime", .lazytime = -1 }, bad[i].req };

                is_int(fstab_edit(text, strlen(text), reqs, 2, &res), -EINVAL, "%s is -EINVAL", bad[i].what);
                ok(!res.text && !res.changes, "nothing returned for %s", bad[i].what);
        }

        {
                struct fstab_request req = { .target = "/", .atime = "noatime", .lazytime = -1 };

                is_int(fstab_edit(NULL, 0, &req, 1, &res), 0, "an empty fstab is fine");
                ok(res.len == 0 && res.text && streq(res.text, "") && res.n_changes == 0 &&
                           strv_length(res.not_found) == 1 && !res.skipped,
                   "an empty fstab: nothing changed, target not found");
                fstab_result_done(&res);
                is_int(fstab_edit(text, strlen(text), NULL, 0, &res), 0, "no requests is fine");
                ok(res.len == strlen(text) && !res.not_found && !res.skipped && res.n_changes == 0,
                   "no requests: nothing changed");
                fstab_result_done(&res);
                fstab_result_done(&res);
                fstab_result_done(NULL);
        }
}

static bool strv_has_substr(char **l, const char *s) {
        STRV_FOREACH(i, l)
                if (strstr(*i, s))
                        return true;
        return false;
}

static void test_results(void) {
        static const char text[] =
                "# /etc/fstab\n"                                              /* 1 */
                "UUID=aa / ext4 errors=remount-ro 0 1\n"                      /* 2 */
                "UUID=bb none swap sw 0 0\n"                                  /* 3 */
                "server:/export /home nfs4 rw,relatime 0 0\n"                 /* 4 */
                "/dev/sdb1 /srv\n"                                            /* 5: malformed */
                "/dev/sdc1 /srv/ xfs relatime 0 2\n"                          /* 6 */
                "/dev/sdd1 /srv xfs defaults 0 2\n"                           /* 7 */
                "/dev/sde1 /srv xfs noatime 0 2\n"                            /* 8 */
                "sshfs#me@host:/ /mnt/remote fuse defaults 0 0\n"             /* 9 */
                "/dev/sdf1 /mnt/a ext4 defaults 0 2 extra\n"                  /* 10: malformed */
                "/dev/sdg1 /mnt/b ext4 defaults zero 2\n"                     /* 11: malformed */
                "/dev/sdh1 /mnt/c ext4 \"ro,context=x\n"                      /* 12: unbalanced quote */
                "/dev/sdi1 /mnt/d\\040e ext4 defaults\n";                     /* 13 */
        struct fstab_request reqs[] = {
                { .target = "/", .atime = "noatime", .lazytime = -1 },
                { .target = "/", .atime = "noatime", .lazytime = 1 },
                { .target = "none", .atime = "noatime", .lazytime = -1 },
                { .target = "/home", .atime = "noatime", .lazytime = -1 },
                { .target = "/srv", .atime = "noatime", .lazytime = -1 },
                { .target = "/mnt/remote", .atime = "noatime", .lazytime = -1 },
                { .target = "/nowhere", .atime = "noatime", .lazytime = -1 },
                { .target = "/nowhere/", .atime = "noatime", .lazytime = -1 },
                { .target = "/nowhere", .atime = "relatime", .lazytime = -1 },
                { .target = "/mnt/c", .atime = "noatime", .lazytime = -1 },
                { .target = "/mnt/d e/", .atime = "relatime", .lazytime = -1 },
        };
        struct fstab_result res = {};

        is_int(fstab_edit(text, strlen(text), reqs, ELEMENTSOF(reqs), &res), 0, "mixed fstab edits");
        is_int(res.n_changes, 4, "four lines changed");
        if (res.n_changes == 4) {
                is_int(res.changes[0].line, 2, "first change on line 2");
                is_str(res.changes[0].target, "/", "first change target");
                is_str(res.changes[0].old_options, "errors=remount-ro", "old options");
                is_str(res.changes[0].new_options, "errors=remount-ro,noatime,lazytime",
                       "two requests on one target both apply");
                is_int(res.changes[1].line, 6, "trailing slash in the file matches");
                is_str(res.changes[1].target, "/srv", "target is normalised");
                is_str(res.changes[1].new_options, "noatime", "relatime replaced");
                is_int(res.changes[2].line, 7, "second /srv line changed too");
                is_str(res.changes[2].new_options, "defaults,noatime", "defaults kept");
                is_int(res.changes[3].line, 13, "escaped mount point matches");
                is_str(res.changes[3].target, "/mnt/d e", "escaped target is reported unescaped");
                is_str(res.changes[3].new_options, "defaults,relatime", "line without freq/passno edited");
        }
        is_int(strv_length(res.not_found), 1, "one target not found, reported once");
        is_str(res.not_found ? res.not_found[0] : NULL, "/nowhere", "not found target as requested");
        ok(strv_contains(res.skipped, "line 3: UUID=bb is swap space: left alone"), "swap noted");
        ok(strv_contains(res.skipped, "line 4: /home is a network filesystem (nfs4): left alone"), "nfs noted");
        ok(strv_contains(res.skipped, "line 5: malformed entry: left alone"), "2-field line noted");
        ok(strv_contains(res.skipped, "line 7: /srv is listed more than once; changed every line"),
           "duplicate noted on the second line");
        ok(!strv_has_substr(res.skipped, "line 8: /srv is listed"), "duplicate noted only once");
        ok(strv_contains(res.skipped, "line 9: /mnt/remote is a network filesystem (sshfs): left alone"),
           "old-style fuse sshfs noted");
        ok(strv_contains(res.skipped, "line 10: malformed entry: left alone"), "7-field line noted");
        ok(strv_contains(res.skipped, "line 11: malformed entry: left alone"), "non-numeric freq noted");
        ok(strv_contains(res.skipped, "line 12: unbalanced quote in the options: left alone"),
           "unbalanced quote noted");
        is_int(strv_length(res.skipped), 8, "nothing else noted");
        fstab_result_done(&res);
        ok(!res.text && !res.skipped && !res.not_found && !res.changes, "fstab_result_done clears");

        /* Named requests reach what automatic ones leave alone. */
        for (size_t i = 0; i < ELEMENTSOF(reqs); i++)
                reqs[i].named = true;
        is_int(fstab_edit(text, strlen(text), reqs, ELEMENTSOF(reqs), &res), 0, "named edits");
        is_int(res.n_changes, 7, "swap, nfs and sshfs lines changed when named");
        ok(!strv_has_substr(res.skipped, "swap space") && !strv_has_substr(res.skipped, "network"),
           "no swap or network notes when named");
        fstab_result_done(&res);

        {
                static const char nul[] = "/dev/a /x ext4 defaults 0 0\n/dev/b /y ext4 def\0aults 0 0\n";
                struct fstab_request q[] = {
                        { .target = "/x", .atime = "noatime", .lazytime = -1 },
                        { .target = "/y", .atime = "noatime", .lazytime = -1 },
                };

                is_int(fstab_edit(nul, sizeof nul - 1, q, 2, &res), 0, "a NUL byte in the text is not fatal");
                ok(res.n_changes == 1 && res.len == sizeof nul - 1 + strlen(",noatime") &&
                           memcmp(res.text + 36, nul + 28, sizeof nul - 1 - 28) == 0 &&
                           strv_contains(res.skipped, "line 2: malformed entry: left alone"),
                   "the line with a NUL byte is left alone, the text around it is kept");
                fstab_result_done(&res);
        }
}

/* "spec file type" is an entry (findmnt --verify takes it): options default. */
static void test_three_fields(void) {
        static const char text[] = "/dev/sdb1\t/srv\text4\n/dev/sdc1 /var xfs\r\n";
        struct fstab_request reqs[] = {
                { .target = "/srv", .atime = "noatime", .lazytime = -1 },
                { .target = "/var", .atime = "relatime", .lazytime = 1 },
        };
        struct fstab_result res = {};

        is_int(fstab_edit(text, strlen(text), reqs, 2, &res), 0, "three-field lines edit");
        is_int(res.n_changes, 2, "both three-field lines changed");
        is_str(res.text, "/dev/sdb1\t/srv\text4\tnoatime\n/dev/sdc1 /var xfs relatime,lazytime\r\n",
               "the options field is added, separated as the type is; the CRLF kept");
        is_int(strv_length(res.skipped), 0, "and not called malformed");
        fstab_result_done(&res);
}

static void test_diff(void) {
        static const char ten[] = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        static const char ten2[] = "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n";
        char *d = NULL;

        is_int(fstab_diff(ten, strlen(ten), ten, strlen(ten), "a", "b", &d), 0, "diff of equal texts");
        is_str(d, "", "equal texts give an empty string");
        free(d);
        is_int(fstab_diff("", 0, "", 0, "a", "b", &d), 0, "diff of empty texts");
        is_str(d, "", "empty texts give an empty string");
        free(d);

        is_int(fstab_diff(ten, strlen(ten), ten2, strlen(ten2), "a/f", "b/f", &d), 0, "first and last lines");
        is_str(d,
               "--- a/f\n+++ b/f\n"
               "@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n"
               "@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n",
               "first and last line give two hunks");
        free(d);

        is_int(fstab_diff("1\n2\n3\n4\n5\n6\n7\n8\n", 16, "x\n2\n3\n4\n5\n6\n7\ny\n", 16, "a", "b", &d), 0,
               "changes 6 lines apart");
        is_str(d, "--- a\n+++ b\n@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n",
               "changes 6 unchanged lines apart share a hunk");
        free(d);

        is_int(fstab_diff("a\nb", 3, "a\nc", 3, "a", "b", &d), 0, "no final newline");
        is_str(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
               "no final newline is marked on both sides");
        free(d);

        is_int(fstab_diff("a\nb\nc\nd\ne", 9, "A\nb\nc\nd\ne", 9, "a", "b", &d), 0, "no final newline, in context");
        is_str(d, "--- a\n+++ b\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n", "unchanged last line outside the hunk");
        free(d);

        is_int(fstab_diff("a\nb\nc", 5, "A\nb\nc", 5, "a", "b", &d), 0, "no final newline, context line");
        is_str(d, "--- a\n+++ b\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n",
               "a context last line without newline is marked");
        free(d);

        is_int(fstab_diff("x", 1, "x\n", 2, "a", "b", &d), 0, "only the final newline differs");
        is_str(d, "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n", "one-line ranges drop ',1'");
        free(d);

        is_int(fstab_diff("", 0, "x\n", 2, "a", "b", &d), 0, "from an empty text");
        is_str(d, "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n", "empty range as diff prints it");
        free(d);

        is_int(fstab_diff("a\r\nb\r\n", 6, "a\r\nc\r\n", 6, "a", "b", &d), 0, "CRLF lines");
        is_str(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n", "CR kept in diff lines");
        free(d);
}

/* Compares fstab_diff with diff(1) on texts where positional and LCS diffs must agree. */
static void test_diff_against_diff(void) {
        static const struct {
                unsigned lines;
                const char *change; /* per line: '.' same, 'x' changed */
                bool final_newline;
        } cases[] = {
                { 20, "x.......x.........x.", true },
                { 20, "x.......x.........x.", false },
                { 20, "x......x............", true },
                { 20, "..................xx", false },
                { 20, "...x..x..x..x.......", true },
                { 5, "..x..", true },
                { 2, ".x", false },
                { 1, "x", false },
                { 12, "............", false },
        };
        char dir[] = "/tmp/test-fstab-diff-XXXXXX";

        if (access("/usr/bin/diff", X_OK) < 0) {
                printf("# skipping comparison with diff(1): not installed\n");
                return;
        }
        if (!mkdtemp(dir)) {
                ok(0, "mkdtemp for diff comparison");
                return;
        }
        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                _cleanup_free_ char *a = NULL, *b = NULL, *pa = NULL, *pb = NULL, *cmd = NULL, *want = NULL,
                                    *got = NULL, *out = NULL;
                size_t alen = 0, blen = 0, wlen;
                FILE *fa, *fb;

                fa = open_memstream(&a, &alen);
                fb = open_memstream(&b, &blen);
                for (unsigned i = 0; i < cases[c].lines; i++) {
                        bool last = i + 1 == cases[c].lines;

                        fprintf(fa, "UUID=%u\t/m%u ext4 defaults 0 2%s", i, i,
                                last && !cases[c].final_newline ? "" : "\n");
                        fprintf(fb, "UUID=%u\t/m%u ext4 %s 0 2%s", i, i,
                                cases[c].change[i] == 'x' ? "defaults,noatime" : "defaults",
                                last && !cases[c].final_newline ? "" : "\n");
                }
                fclose(fa);
                fclose(fb);
                if (asprintf(&pa, "%s/a", dir) < 0 || asprintf(&pb, "%s/b", dir) < 0 ||
                    asprintf(&out, "%s/out", dir) < 0 ||
                    asprintf(&cmd, "/usr/bin/diff -u --label a/x --label b/x %s %s > %s", pa, pb, out) < 0)
                        abort();
                if (write_file(pa, a, 0644) < 0 || write_file(pb, b, 0644) < 0 || system(cmd) < 0 ||
                    read_file(out, &want, &wlen) < 0) {
                        ok(0, "diff(1) case %zu runs", c);
                        continue;
                }
                ok(fstab_diff(a, alen, b, blen, "a/x", "b/x", &got) == 0 && strlen(got) == wlen &&
                           memcmp(got, want, wlen) == 0,
                   "same output as diff -u: %u lines, changes %s, %s final newline", cases[c].lines, cases[c].change,
                   cases[c].final_newline ? "with" : "without");
                (void) unlink(pa);
                (void) unlink(pb);
                (void) unlink(out);
        }
        (void) rmdir(dir);
}

/* Names in the directory other than the ones given. */
static size_t count_other_files(const char *dir, const char *a, const char *b) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        if (!d)
                return (size_t) -1;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && !streq_ptr(de->d_name, a) &&
                    !streq_ptr(de->d_name, b)) {
                        printf("#   extra file: %s\n", de->d_name);
                        n++;
                }
        closedir(d);
        return n;
}

/* To edit the file exactly between fstab_write's fsync of the temp file and its last comparison, the test
 * provides fsync() itself: the linker resolves fstab.c's call to it, and it forwards to the system call. */
static const char *race_path, *race_text;

int fsync(int fd) {
        if (race_path) {
                char proc[64], name[PATH_MAX];
                ssize_t n;

                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                n = readlink(proc, name, sizeof name - 1);
                if (n > 0) {
                        name[n] = 0;
                        if (strstr(name, "/.fstab.atimectl-")) {
                                (void) write_file(race_path, race_text, 0644);
                                race_path = NULL;
                        }
                }
        }
        return (int) syscall(SYS_fsync, fd);
}

static void test_write(void) {
        static const char old_text[] = "UUID=aa / ext4 defaults 0 1\n";
        static const char new_text[] = "UUID=aa / ext4 defaults,noatime 0 1\n";
        static const char edited[] = "UUID=aa / ext4 defaults 0 1\n# edited meanwhile\n";
        char dir[] = "/tmp/test-fstab-XXXXXX";
        _cleanup_free_ char *path = NULL, *backup = NULL, *backup2 = NULL, *explicit = NULL, *link = NULL;
        bool root = geteuid() == 0;
        uid_t uid = root ? 1234 : geteuid();
        gid_t gid = root ? 1234 : getegid();
        struct stat st;
        int r;

        if (!mkdtemp(dir)) {
                ok(0, "mkdtemp");
                return;
        }
        if (asprintf(&path, "%s/fstab", dir) < 0 || asprintf(&explicit, "%s/fstab.saved", dir) < 0 ||
            asprintf(&link, "%s/link", dir) < 0)
                abort();

        ok(write_file(path, old_text, 0600) == 0 && chmod(path, 0640) == 0 && (!root || chown(path, uid, gid) == 0),
           "test fstab written, mode 0640, owner %u:%u", (unsigned) uid, (unsigned) gid);

        r = fstab_write(path, old_text, strlen(old_text), new_text, strlen(new_text), NULL, &backup);
        is_int(r, 0, "fstab_write succeeds");
        ok(file_is(path, new_text), "the file holds the new text");
        r = stat(path, &st);
        ok(r == 0 && (st.st_mode & 07777) == 0640 && st.st_uid == uid && st.st_gid == gid,
           "mode 0640 and owner kept (got %o %u:%u)", r == 0 ? (unsigned) (st.st_mode & 07777) : 0,
           r == 0 ? (unsigned) st.st_uid : 0, r == 0 ? (unsigned) st.st_gid : 0);
        ok(backup && startswith(backup, path) && startswith(backup + strlen(path), ".atimectl-"),
           "default backup name '%s'", strna(backup));
        ok(backup && file_is(backup, old_text), "backup holds the old text");
        ok(backup && stat(backup, &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_uid == uid && st.st_gid == gid,
           "backup has the original's mode and owner");
        is_int(count_other_files(dir, "fstab", backup ? strrchr(backup, '/') + 1 : NULL), 0,
               "no temp file left behind");

        /* Same second, default name: the first backup must survive. */
        r = fstab_write(path, new_text, strlen(new_text), old_text, strlen(old_text), NULL, &backup2);
        is_int(r, 0, "second write with a default backup name");
        ok(backup2 && !streq(backup2, backup) && file_is(backup2, new_text) && file_is(backup, old_text),
           "second backup does not overwrite the first ('%s')", strna(backup2));
        ok(file_is(path, old_text), "the file holds the text of the second write");
        if (backup2)
                (void) unlink(backup2);
        if (backup)
                (void) unlink(backup);
        free(backup);
        backup = NULL;

        /* Changed between read and write: nothing may be written. */
        ok(write_file(path, edited, 0640) == 0, "file edited by someone else");
        r = fstab_write(path, old_text, strlen(old_text), new_text, strlen(new_text), NULL, &backup);
        is_int(r, -ESTALE, "a file changed since it was read is -ESTALE");
        ok(!backup, "no backup path returned");
        ok(file_is(path, edited), "the file is untouched");
        is_int(count_other_files(dir, "fstab", NULL), 0, "no temp file or backup left behind");

        /* Changed while the new copy was being written: the last check must catch it. */
        race_path = path;
        race_text = old_text;
        r = fstab_write(path, edited, strlen(edited), new_text, strlen(new_text), NULL, &backup);
        is_int(r, -ESTALE, "a file changed during the write is -ESTALE");
        ok(!race_path, "the file was really changed while the temp file was written");
        race_path = NULL;
        ok(!backup && file_is(path, old_text), "the concurrent edit is kept");
        free(backup);
        backup = NULL;
        is_int(count_other_files(dir, "fstab", NULL), 0, "temp file and backup removed after the late -ESTALE");
        ok(write_file(path, edited, 0640) == 0, "file put back");

        r = fstab_write(path, edited, strlen(edited), new_text, strlen(new_text), explicit, &backup);
        is_int(r, 0, "write with an explicit backup path");
        is_str(backup, explicit, "explicit backup path returned");
        ok(file_is(explicit, edited) && file_is(path, new_text), "explicit backup and new text");
        free(backup);
        backup = NULL;

        r = fstab_write(path, new_text, strlen(new_text), old_text, strlen(old_text), explicit, &backup);
        is_int(r, -EEXIST, "an existing explicit backup is not overwritten");
        ok(file_is(explicit, edited) && file_is(path, new_text), "neither file touched");
        is_int(count_other_files(dir, "fstab", "fstab.saved"), 0, "no temp file left behind after -EEXIST");

        ok(symlink("fstab", link) == 0, "symlink created");
        r = fstab_write(link, new_text, strlen(new_text), old_text, strlen(old_text), NULL, &backup);
        is_int(r, -ELOOP, "a symlink is refused");
        ok(file_is(path, new_text), "the symlink's target is untouched");
        is_int(count_other_files(dir, "fstab", "fstab.saved"), 1, "nothing but the link added");
        (void) unlink(link);

        r = fstab_write("/nonexistent-dir/fstab", old_text, strlen(old_text), new_text, strlen(new_text), NULL,
                        &backup);
        is_int(r, -ENOENT, "a missing file is -ENOENT");

        (void) unlink(explicit);
        (void) unlink(path);
        ok(rmdir(dir) == 0, "test directory empty at the end");
}

int main(void) {
        test_fixtures();
        test_options();
        test_nodiratime();
        test_requests();
        test_results();
        test_three_fields();
        test_diff();
        test_diff_against_diff();
        test_write();
        return tap_done();
}
