/* mounts.c: libmount's view of the mount table, reduced to what atimed
 * tracks, and the effective atime policy of each mount. */
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libmount/libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "mount-util.h"
#include "string-table.h"
#include "strv.h"

static const char *const atime_mode_table[_ATIME_MAX] = {
        [ATIME_STRICT] = "strictatime",
        [ATIME_RELATIME] = "relatime",
        [ATIME_NOATIME] = "noatime",
};

DEFINE_STRING_TABLE_LOOKUP(atime_mode, AtimeMode);

static bool has_option(const char *optstr, const char *name) {
        return optstr && mnt_optstr_get_option(optstr, name, NULL, NULL) == 0;
}

void mount_policy_from_options(const char *vfs, const char *super, struct mount_policy *ret) {
        struct mount_policy p = {};

        if (has_option(vfs, "noatime"))
                p.atime = ATIME_NOATIME;
        else if (has_option(vfs, "relatime"))
                p.atime = ATIME_RELATIME;
        else
                p.atime = ATIME_STRICT;
        p.nodiratime = p.atime == ATIME_NOATIME || has_option(vfs, "nodiratime");
        p.lazytime = has_option(super, "lazytime");
        p.read_only = has_option(vfs, "ro") || has_option(super, "ro");
        *ret = p;
}

double mount_commit_seconds(const char *fstype, const char *super_options) {
        char *value = NULL;
        size_t len = 0;
        double dflt = streq(fstype, "btrfs") || streq(fstype, "xfs") ? 30 : 5;

        if (super_options && mnt_optstr_get_option(super_options, "commit", &value, &len) == 0 && value && len > 0 &&
            len < 12) {
                char buf[12], *end;
                unsigned long v;

                memcpy(buf, value, len);
                buf[len] = 0;
                v = strtoul(buf, &end, 10);
                if (*end == 0 && v > 0 && v <= 86400)
                        return (double) v;
        }
        return dflt;
}

bool mount_policy_equal(const struct mount_policy *a, const struct mount_policy *b) {
        return a->atime == b->atime && a->nodiratime == b->nodiratime && a->lazytime == b->lazytime &&
               a->read_only == b->read_only;
}

char *mount_policy_format(const struct mount_policy *p, char *buf, size_t len) {
        /* nodiratime is implied by noatime: only say it where it adds something. */
        snprintf(buf, len, "%s%s%s%s", atime_mode_to_string(p->atime),
                 p->nodiratime && p->atime != ATIME_NOATIME ? ",nodiratime" : "", p->lazytime ? ",lazytime" : "",
                 p->read_only ? ",ro" : "");
        return buf;
}

/* Filesystems without storage of their own or whose atimes mean nothing:
 * kernel interfaces and FUSE views of them. tmpfs is not here: its atimes are
 * real and read by tmp cleaners. */
static const char *const pseudo_fstypes[] = {
        "autofs",    "binder",     "binfmt_misc", "bpf",          "cgroup",     "cgroup2",
        "configfs",  "debugfs",    "devpts",      "devtmpfs",     "efivarfs",   "fuse.gvfsd-fuse",
        "fuse.lxcfs", "fuse.portal", "fusectl",   "hugetlbfs",    "mqueue",     "nsfs",
        "nfsd",      "proc",       "pstore",      "ramfs",        "resctrl",    "rootfs",
        "rpc_pipefs", "securityfs", "selinuxfs",  "smackfs",      "sysfs",      "tracefs",
};

bool fstype_is_pseudo(const char *fstype) {
        for (size_t i = 0; i < ELEMENTSOF(pseudo_fstypes); i++)
                if (streq(fstype, pseudo_fstypes[i]))
                        return true;
        return false;
}

static bool match_any(char *const *patterns, const char *s) {
        STRV_FOREACH(p, patterns)
                if (fnmatch(*p, s, 0) == 0)
                        return true;
        return false;
}

static bool path_excluded(char *const *paths, const char *target) {
        STRV_FOREACH(p, paths) {
                const char *rest;

                if (strpbrk(*p, "*?[")) {
                        if (fnmatch(*p, target, 0) == 0)
                                return true;
                        continue;
                }
                rest = startswith(target, *p);
                /* "/srv" covers "/srv" and "/srv/x", not "/srvdata". */
                if (rest && (*rest == 0 || *rest == '/' || streq(*p, "/")))
                        return true;
        }
        return false;
}

/* Whatever is mounted under /proc and /sys (the tmpfs that holds cgroup v1
 * hierarchies, say) belongs to the kernel's interfaces, not to storage. */
static bool under_kernel_interface(const char *target) {
        static const char *const dirs[] = { "/proc", "/sys" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                const char *rest = startswith(target, dirs[i]);

                if (rest && (*rest == 0 || *rest == '/'))
                        return true;
        }
        return false;
}

bool mount_filter_match(const struct mount_filter *f, const char *fstype, const char *target) {
        if (under_kernel_interface(target) || path_excluded(f->exclude_paths, target))
                return false;
        if (match_any(f->exclude_fstypes, fstype))
                return false;
        if (f->include_fstypes && f->include_fstypes[0])
                return match_any(f->include_fstypes, fstype);
        return !fstype_is_pseudo(fstype);
}

/* Why mount_filter_match() says no, in words; NULL when it says yes. */
const char *mount_filter_explain(const struct mount_filter *f, const char *fstype, const char *target, char *buf,
                                 size_t len) {
        if (!(f->include_fstypes && f->include_fstypes[0]) && fstype_is_pseudo(fstype))
                snprintf(buf, len, "its type (%s) is a pseudo filesystem, whose atimes mean nothing", fstype);
        else if (under_kernel_interface(target))
                snprintf(buf, len, "it is under /proc or /sys, the kernel's interfaces");
        else if (path_excluded(f->exclude_paths, target))
                snprintf(buf, len, "its path is excluded by exclude_paths in atimed.conf");
        else if (match_any(f->exclude_fstypes, fstype))
                snprintf(buf, len, "its type (%s) is excluded by exclude_fstypes in atimed.conf", fstype);
        else if (f->include_fstypes && f->include_fstypes[0] && !match_any(f->include_fstypes, fstype))
                snprintf(buf, len, "its type (%s) is not in include_fstypes in atimed.conf", fstype);
        else
                return NULL;
        return buf;
}

static void mount_entry_done(MountEntry *e) {
        free(e->target);
        free(e->source);
        free(e->fstype);
        free(e->root);
        free(e->vfs_options);
        free(e->super_options);
}

MountTable *mount_table_free(MountTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n; i++)
                mount_entry_done(&t->entries[i]);
        free(t->entries);
        for (size_t i = 0; i < t->n_types; i++) {
                free(t->types[i].target);
                free(t->types[i].fstype);
        }
        free(t->types);
        free(t->text);
        free(t);
        return NULL;
}

static int dup_or_empty(const char *s, char **ret) {
        *ret = strdup(s ? s : "");
        return *ret ? 0 : -ENOMEM;
}

/* An entry from one mount, said by a parse of the text or by the kernel. */
static int entry_fill(MountEntry *e, const MountSeed *s) {
        *e = (MountEntry) {
                .id = s->id,
                .parent_id = s->parent_id,
                .devno = s->devno,
        };
        if (dup_or_empty(s->target, &e->target) < 0 || dup_or_empty(s->source, &e->source) < 0 ||
            dup_or_empty(s->fstype, &e->fstype) < 0 || dup_or_empty(s->root, &e->root) < 0 ||
            dup_or_empty(s->vfs_options, &e->vfs_options) < 0 ||
            dup_or_empty(s->super_options, &e->super_options) < 0)
                return -ENOMEM;
        mount_policy_from_options(e->vfs_options, e->super_options, &e->policy);
        return 0;
}


static int parser_errcb(struct libmnt_table *tb, const char *filename, int line) {
        unsigned *bad = mnt_table_get_userdata(tb);

        (*bad)++;
        return 1; /* skip the line, keep parsing */
}

struct raw {
        struct libmnt_fs *fs;       /* from a parse of the text; or */
        const MountSeed *seed;      /* from the kernel's word on one mount */
        const char *target;
        const char *fstype;         /* NULL: none said */
        int id, parent_id;
        bool hidden;
};

static int entry_fill_raw(MountEntry *e, const struct raw *raw) {
        struct libmnt_fs *fs = raw->fs;

        if (raw->seed)
                return entry_fill(e, raw->seed);
        return entry_fill(e, &(const MountSeed) {
                                     .id = mnt_fs_get_id(fs),
                                     .parent_id = mnt_fs_get_parent_id(fs),
                                     .devno = mnt_fs_get_devno(fs),
                                     .target = mnt_fs_get_target(fs),
                                     .source = mnt_fs_get_source(fs),
                                     .fstype = mnt_fs_get_fstype(fs),
                                     .root = mnt_fs_get_root(fs),
                                     .vfs_options = mnt_fs_get_vfs_options(fs),
                                     .super_options = mnt_fs_get_fs_options(fs),
                             });
}

static int cmp_raw_target(const void *a, const void *b) {
        const struct raw *x = a, *y = b;
        int c = strcmp(x->target, y->target);

        return c ? c : (x->id > y->id) - (x->id < y->id);
}

static int cmp_entry_id(const void *a, const void *b) {
        const MountEntry *x = a, *y = b;

        return (x->id > y->id) - (x->id < y->id);
}

/* A mount whose target carries another mount stacked directly on it cannot
 * be reached by path: atime through it is not what users see. */
static void mark_hidden(struct raw *raw, size_t n) {
        if (n == 0)
                return; /* qsort(NULL, 0) is undefined */
        qsort(raw, n, sizeof *raw, cmp_raw_target);
        for (size_t i = 0; i < n;) {
                size_t j = i;

                while (j < n && streq(raw[j].target, raw[i].target))
                        j++;
                for (size_t a = i; a < j; a++)
                        for (size_t b = i; b < j; b++)
                                if (a != b && raw[b].parent_id == raw[a].id)
                                        raw[a].hidden = true;
                i = j;
        }
}

/* The first of the mounts at target in raw (sorted by target), or n. */
static size_t group_first(const struct raw *raw, size_t n, const char *target) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(raw[mid].target, target) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < n && streq(raw[lo].target, target) ? lo : n;
}

/* The mount on 'target' whose parent is 'parent_id', or n. */
static size_t child_at(const struct raw *raw, size_t n, int parent_id, const char *target) {
        for (size_t i = group_first(raw, n, target); i < n && streq(raw[i].target, target); i++)
                if (raw[i].parent_id == parent_id && raw[i].id != parent_id)
                        return i;
        return n;
}

/* The top of the stack of mounts on raw[i]'s target: what a lookup enters. */
static size_t stack_top(const struct raw *raw, size_t n, size_t i) {
        for (size_t k = 0, c; k < n && (c = child_at(raw, n, raw[i].id, raw[i].target)) < n; k++)
                i = c;
        return i;
}

struct id_index {
        int id;
        size_t i;
};

static int cmp_id_index(const void *a, const void *b) {
        const struct id_index *x = a, *y = b;

        return (x->id > y->id) - (x->id < y->id);
}

/* The mount of that id in raw, or n. */
static size_t by_id(const struct id_index *ids, size_t n, int id) {
        const struct id_index key = { .id = id }, *f = bsearch(&key, ids, n, sizeof *ids, cmp_id_index);

        return f ? f->i : n;
}

/* Whether raw[i] is raw[m] or one of raw[m]'s parents. */
static bool is_above(const struct raw *raw, const struct id_index *ids, size_t n, size_t i, size_t m) {
        for (size_t k = 0; m < n && k < n; k++) {
                size_t p;

                if (m == i)
                        return true;
                p = by_id(ids, n, raw[m].parent_id);
                if (p == m)
                        break;
                m = p;
        }
        return false;
}

/* Whether a lookup of raw[m]'s target ends on raw[m], walking from the root
 * mount as the kernel does: at each directory on the way into the mount on
 * it, the top of its stack. The walk leaves raw[m]'s chain of parents when
 * something is mounted over its target or over a directory above it (a
 * mount on /a hides one at /a/b made before it): its path leads elsewhere.
 * A mount is taken as reachable when that cannot be told: the table has no
 * root, or its chain of parents does not reach it (a fixture of a few
 * lines), or there is no memory for the walk. */
static bool raw_reachable(const struct raw *raw, const struct id_index *ids, size_t n, size_t m, size_t root) {
        _cleanup_free_ char *path = NULL;
        size_t cur;

        if (root >= n || raw[m].target[0] != '/' || !is_above(raw, ids, n, root, m) || !(path = strdup(raw[m].target)))
                return true;
        cur = stack_top(raw, n, root);
        if (!is_above(raw, ids, n, cur, m))
                return false;
        for (char *end = path + 1;; end++) {
                char saved = *end;
                size_t c;

                if (saved != '/' && saved != '\0')
                        continue;
                *end = '\0';
                c = child_at(raw, n, raw[cur].id, path);
                *end = saved;
                if (c < n) {
                        cur = stack_top(raw, n, c);
                        if (!is_above(raw, ids, n, cur, m))
                                return false;
                }
                if (saved == '\0')
                        break;
        }
        return true;
}

/* The mount at "/" that the others at "/" are stacked on, or n. */
static size_t raw_root(const struct raw *raw, size_t n) {
        for (size_t i = group_first(raw, n, "/"); i < n && streq(raw[i].target, "/"); i++) {
                size_t j = group_first(raw, n, "/");

                while (j < n && streq(raw[j].target, "/") && raw[j].id != raw[i].parent_id)
                        j++;
                if (j == n || !streq(raw[j].target, "/") || raw[i].parent_id == raw[i].id)
                        return i;
        }
        return n;
}

/* Far beyond any real table (100,000 mounts take about 20 MiB). */
#define MOUNT_TABLE_TEXT_MAX ((size_t) 256 << 20)

/* libmount's parse of a mount table's text ('len' bytes and a NUL); lines
 * it cannot parse are skipped and counted in *bad. The one parser of the
 * mount table in the daemon. */
static int table_from_text(char *text, size_t len, const char *path, unsigned *bad, struct libmnt_table **ret) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = mnt_new_table();
        _cleanup_(fclosep) FILE *f = NULL;
        int r;

        /* fmemopen() of a zero-length buffer fails: an empty file is an
         * empty string with its NUL. Opened for reading only. */
        f = fmemopen(text, len + 1, "r");
        if (!tb || !f)
                return -ENOMEM;
        mnt_table_set_userdata(tb, bad);
        mnt_table_set_parser_errcb(tb, parser_errcb);
        r = mnt_table_parse_stream(tb, f, path);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(tb);
        return 0;
}

struct line_at {
        const char *target;
        size_t line;
};

/* By target, and of one target the latest line first. */
static int cmp_line_at(const void *a, const void *b) {
        const struct line_at *x = a, *y = b;
        int c = strcmp(x->target, y->target);

        return c ? c : x->line < y->line ? 1 : x->line > y->line ? -1 : 0;
}

/* t->types from the file's mounts in file order: of several mounts on one
 * target, the last (mounted over the others) stands. */
static int index_types(MountTable *t, const struct raw *raw, size_t n) {
        _cleanup_free_ struct line_at *lines = calloc(n ? n : 1, sizeof *lines);
        size_t k = 0;

        t->types = calloc(n ? n : 1, sizeof *t->types);
        if (!lines || !t->types)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (raw[i].fstype)
                        lines[k++] = (struct line_at) { raw[i].target, i };
        if (k > 1)
                qsort(lines, k, sizeof *lines, cmp_line_at);
        for (size_t i = 0; i < k; i++) {
                struct mount_type_at *ty;

                if (i > 0 && streq(lines[i - 1].target, lines[i].target))
                        continue;
                ty = &t->types[t->n_types++]; /* counted even when half-filled, so it is freed */
                ty->target = strdup(lines[i].target);
                ty->fstype = strdup(raw[lines[i].line].fstype);
                if (!ty->target || !ty->fstype)
                        return -ENOMEM;
        }
        return 0;
}

static int cmp_target_type_at(const void *target, const void *elem) {
        return strcmp(target, ((const struct mount_type_at *) elem)->target);
}

/* raw_collect: every entry of the parsed table, in its order, with the
 * fields the visibility pass needs; the entries borrow from tb. */
static int raw_collect(struct libmnt_table *tb, struct raw **ret, size_t *ret_n) {
        _cleanup_(mnt_free_iterp) struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
        _cleanup_free_ struct raw *raw = NULL;
        struct libmnt_fs *fs;
        size_t n = 0, alloc = 0;

        if (!itr)
                return -ENOMEM;
        while (mnt_table_next_fs(tb, itr, &fs) == 0) {
                if (n == alloc) {
                        size_t na = alloc ? alloc * 2 : 64;
                        struct raw *nr = realloc(raw, na * sizeof *raw);
                        if (!nr)
                                return -ENOMEM;
                        raw = nr;
                        alloc = na;
                }
                raw[n++] = (struct raw) {
                        .fs = fs,
                        .target = mnt_fs_get_target(fs) ?: "",
                        .fstype = mnt_fs_get_fstype(fs),
                        .id = mnt_fs_get_id(fs),
                        .parent_id = mnt_fs_get_parent_id(fs),
                };
        }
        *ret = TAKE_PTR(raw);
        *ret_n = n;
        return 0;
}

/* t's entries and type index from every mount in raw (n of them, sorted
 * here): the tracked ones not stacked under another, with whether a lookup
 * of their target reaches them. */
static int table_from_raw(MountTable *t, struct raw *raw, size_t n, const struct mount_filter *filter,
                          bool index) {
        _cleanup_free_ struct id_index *ids = NULL;
        size_t root;
        int r;

        mark_hidden(raw, n);
        r = index ? index_types(t, raw, n) : 0;
        if (r < 0)
                return r;
        t->entries = calloc(n ? n : 1, sizeof *t->entries);
        ids = calloc(n ? n : 1, sizeof *ids);
        if (!t->entries || !ids)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                ids[i] = (struct id_index) { .id = raw[i].id, .i = i };
        if (n > 0)
                qsort(ids, n, sizeof *ids, cmp_id_index);
        root = raw_root(raw, n);
        for (size_t i = 0; i < n; i++) {
                if (raw[i].hidden || !raw[i].fstype || !mount_filter_match(filter, raw[i].fstype, raw[i].target))
                        continue;
                r = entry_fill_raw(&t->entries[t->n], &raw[i]);
                t->n++; /* counted even when half-filled, so it is freed */
                if (r < 0)
                        return r;
                t->entries[t->n - 1].reachable = raw_reachable(raw, ids, n, i, root);
        }
        if (t->n > 0)
                qsort(t->entries, t->n, sizeof *t->entries, cmp_entry_id);
        /* One entry per id. mountinfo read while mounts move can show a
         * mount twice (the kernel's list walked in pieces as it changes):
         * the copy kept is one of them, and the next read puts it right. */
        if (t->n > 1) {
                size_t w = 1;

                for (size_t i = 1; i < t->n; i++)
                        if (t->entries[i].id == t->entries[w - 1].id) {
                                mount_entry_done(&t->entries[w - 1]);
                                t->entries[w - 1] = t->entries[i];
                        } else
                                t->entries[w++] = t->entries[i];
                t->n = w;
        }
        return 0;
}

static int parse_text(char *text, size_t len, const char *path, const struct mount_filter *filter, MountTable **ret) {
        _cleanup_(mount_table_freep) MountTable *t = calloc(1, sizeof *t);
        _cleanup_free_ struct raw *raw = NULL;
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        size_t n = 0;
        int r;

        if (!t)
                return -ENOMEM;
        r = table_from_text(text, len, path, &t->n_bad_lines, &tb);
        if (r < 0)
                return r;
        r = raw_collect(tb, &raw, &n);
        if (r < 0)
                return r;
        t->n_all = n;
        r = table_from_raw(t, raw, n, filter, true);
        if (r < 0)
                return r;
        t->text = text;
        t->text_len = len;
        *ret = TAKE_PTR(t);
        return 0;
}

int mount_table_from_seeds(const MountSeed *seeds, size_t n, const struct mount_filter *filter, MountTable **ret) {
        _cleanup_(mount_table_freep) MountTable *t = calloc(1, sizeof *t);
        _cleanup_free_ struct raw *raw = calloc(n ? n : 1, sizeof *raw);
        int r;

        if (!t || !raw)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                raw[i] = (struct raw) {
                        .seed = &seeds[i],
                        .target = seeds[i].target ?: "",
                        .fstype = seeds[i].fstype,
                        .id = seeds[i].id,
                        .parent_id = seeds[i].parent_id,
                };
        t->n_all = n;
        r = table_from_raw(t, raw, n, filter, false);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int mount_table_read(const char *path, char **ret_text, size_t *ret_len) {
        return read_full_file(path, MOUNT_TABLE_TEXT_MAX, ret_text, ret_len);
}

bool mount_table_text_equal(const MountTable *t, const char *text, size_t len) {
        return t && t->text && t->text_len == len && memcmp(t->text, text, len) == 0;
}

int mount_table_parse(char *text, size_t len, const char *path, const struct mount_filter *filter, MountTable **ret) {
        int r = parse_text(text, len, path, filter, ret);

        if (r < 0)
                free(text);
        return r; /* else the table's now */
}

int mount_table_load_changed(const char *path, const struct mount_filter *filter, const MountTable *old,
                             MountTable **ret) {
        char *text = NULL;
        size_t len = 0;
        int r;

        r = mount_table_read(path, &text, &len);
        if (r < 0)
                return r;
        if (mount_table_text_equal(old, text, len)) {
                free(text);
                *ret = NULL;
                return 0;
        }
        return mount_table_parse(text, len, path, filter, ret);
}

int mount_table_load(const char *path, const struct mount_filter *filter, MountTable **ret) {
        return mount_table_load_changed(path, filter, NULL, ret);
}

const char *mount_table_fstype_at(const MountTable *t, const char *target) {
        const struct mount_type_at *found;

        if (t && t->fstype_at)
                return target ? t->fstype_at(t->fstype_at_userdata, target) : NULL;
        if (!t || t->n_types == 0 || !target)
                return NULL;
        found = bsearch(target, t->types, t->n_types, sizeof *t->types, cmp_target_type_at);
        return found ? found->fstype : NULL;
}

const MountEntry *mount_table_find_target(const MountTable *t, const char *target) {
        const MountEntry *found = NULL;

        /* Over-mounted targets: the mount that the path leads to. */
        for (size_t i = 0; t && i < t->n; i++)
                if (streq(t->entries[i].target, target) && (!found || !found->reachable))
                        found = &t->entries[i];
        return found;
}

static bool entry_changed(const MountEntry *a, const MountEntry *b) {
        return !mount_policy_equal(&a->policy, &b->policy) || !streq(a->vfs_options, b->vfs_options) ||
               !streq(a->super_options, b->super_options) || !streq(a->target, b->target) ||
               !streq(a->source, b->source);
}

bool mount_table_equal(const MountTable *a, const MountTable *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++) {
                const MountEntry *x = &a->entries[i], *y = &b->entries[i];

                if (x->id != y->id || x->parent_id != y->parent_id || x->devno != y->devno ||
                    x->reachable != y->reachable || entry_changed(x, y) || !streq(x->fstype, y->fstype) ||
                    !streq(x->root, y->root))
                        return false;
        }
        return true;
}

void mount_table_diff(const MountTable *old, const MountTable *new, mount_diff_cb cb, void *userdata) {
        size_t i = 0, j = 0, no = old ? old->n : 0, nn = new ? new->n : 0;

        /* Both tables are sorted by id: one merge pass. */
        while (i < no || j < nn) {
                if (i < no && (j >= nn || old->entries[i].id < new->entries[j].id))
                        cb(&old->entries[i++], NULL, userdata);
                else if (j < nn && (i >= no || new->entries[j].id < old->entries[i].id))
                        cb(NULL, &new->entries[j++], userdata);
                else {
                        if (entry_changed(&old->entries[i], &new->entries[j]))
                                cb(&old->entries[i], &new->entries[j], userdata);
                        i++;
                        j++;
                }
        }
}

struct MountMonitor {
        struct libmnt_monitor *mn;
        sd_event_source *io;
        sd_event_source *timer;
        uint64_t delay;
        bool leading;       /* cb at once when none came within the delay */
        uint64_t last_call; /* CLOCK_MONOTONIC of the last cb */
        mount_monitor_cb cb;
        void *userdata;
};

MountMonitor *mount_monitor_free(MountMonitor *m) {
        if (!m)
                return NULL;
        sd_event_source_disable_unref(m->io);
        sd_event_source_disable_unref(m->timer);
        mnt_unref_monitor(m->mn);
        free(m);
        return NULL;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        MountMonitor *m = userdata;

        m->last_call = usec;
        m->cb(m->userdata);
        return 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        MountMonitor *m = userdata;
        int enabled = SD_EVENT_OFF;
        uint64_t now;

        /* Drain every pending change: one re-parse covers them all. */
        (void) mnt_monitor_event_cleanup(m->mn);

        (void) sd_event_source_get_enabled(m->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return 0; /* a re-parse is already due */
        (void) sd_event_now(sd_event_source_get_event(s), CLOCK_MONOTONIC, &now);
        if (m->leading && (m->last_call == 0 || now >= m->last_call + m->delay)) {
                /* A change alone is answered now, one wakeup less; those
                 * that follow it within the delay, once at its end. */
                m->last_call = now;
                m->cb(m->userdata);
                return 0;
        }
        (void) sd_event_source_set_time(m->timer, m->leading ? m->last_call + m->delay : now + m->delay);
        (void) sd_event_source_set_enabled(m->timer, SD_EVENT_ONESHOT);
        return 0;
}

int mount_monitor_new(sd_event *e, uint64_t delay_usec, mount_monitor_cb cb, void *userdata, MountMonitor **ret) {
        _cleanup_(mount_monitor_freep) MountMonitor *m = calloc(1, sizeof *m);
        int fd, r;

        if (!m)
                return -ENOMEM;
        m->delay = delay_usec;
        m->cb = cb;
        m->userdata = userdata;
        m->mn = mnt_new_monitor();
        if (!m->mn)
                return -ENOMEM;
        r = mnt_monitor_enable_kernel(m->mn, 1);
        if (r < 0)
                return r;
        fd = mnt_monitor_get_fd(m->mn);
        if (fd < 0)
                return fd;
        r = sd_event_add_io(e, &m->io, fd, EPOLLIN, on_io, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(m->io, "mount-monitor");
        /* The debounce is the delay; an accuracy of 0 would be sd-event's
         * default of 250 ms more on top of it. */
        r = sd_event_add_time(e, &m->timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC, on_timer, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(m->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(m->timer, "mount-rescan");
        *ret = TAKE_PTR(m);
        return 0;
}

void mount_monitor_set_delay(MountMonitor *m, uint64_t delay_usec) {
        m->delay = delay_usec;
}

void mount_monitor_set_leading(MountMonitor *m, bool leading) {
        m->leading = leading;
}

/* ---------------------------------------------------------------- the reader */

struct MountReader {
        WorkerSlot *slot;
        MountTable *const *current;
        mount_reader_apply_fn apply;
        void *userdata;
        char *path;
        struct mount_filter filter;
        uint64_t timeout_usec;
};

typedef struct TableRead {
        char *path;
        char *text;
        size_t len;
        int r;
} TableRead;

static int reader_failed(const MountReader *r, int error) {
        return log_error_errno(error, "Failed to read mount table %s, keeping the previous one: %m", r->path);
}

static void table_read_free(void *job) {
        TableRead *j = job;

        free(j->path);
        free(j->text);
        free(j);
}

static int table_read_make(void *userdata, void **ret) {
        MountReader *r = userdata;
        TableRead *j = calloc(1, sizeof *j);

        if (!j || !(j->path = strdup(r->path))) {
                free(j);
                return -ENOMEM;
        }
        *ret = j;
        return 0;
}

static void table_read_work(void *arg, const atomic_bool *cancel) {
        TableRead *j = arg;

        j->r = mount_table_read(j->path, &j->text, &j->len);
}

static void table_read_done(void *userdata, void *job, WorkerStatus status) {
        MountReader *r = userdata;
        TableRead *j = job;
        MountTable *t = NULL;
        int e;

        if (status == WORKER_TIMED_OUT) {
                log_warning("Reading %s did not return in time; the mount table stays as it was until it does.",
                            r->path);
                return;
        }
        if (status == WORKER_CANCELLED)
                return; /* the pool is going away */
        if (status == WORKER_EXPIRED)
                e = -ETIME;
        else if (j->r < 0)
                e = j->r;
        else if (mount_table_text_equal(*r->current, j->text, j->len))
                e = 0; /* as it was: nothing to parse */
        else
                e = mount_table_parse(TAKE_PTR(j->text), j->len, r->path, &r->filter, &t);
        if (e < 0)
                (void) reader_failed(r, e);
        else if (t)
                (void) r->apply(t, r->userdata);
}

static void on_table_read_again(void *userdata) {
        mount_reader_request(userdata);
}

static const WorkerSlotOps table_read_ops = {
        .make = table_read_make,
        .run = table_read_work,
        .done = table_read_done,
        .free = table_read_free,
        .again = on_table_read_again, /* one more read for the requests meanwhile */
        .run_here = true,             /* refused by the pool: read here, as at start */
};

int mount_reader_new(WorkerPool *pool, MountTable *const *current, mount_reader_apply_fn apply, void *userdata,
                     MountReader **ret) {
        _cleanup_(mount_reader_freep) MountReader *r = calloc(1, sizeof *r);
        int e;

        if (!r)
                return -ENOMEM;
        r->current = current;
        r->apply = apply;
        r->userdata = userdata;
        e = worker_slot_new(pool, &table_read_ops, r, &r->slot);
        if (e < 0)
                return e;
        *ret = TAKE_PTR(r);
        return 0;
}

int mount_reader_configure(MountReader *r, const char *path, const struct mount_filter *filter, uint64_t timeout_usec) {
        char *p;

        /* The old filter's lists may be gone already: never kept past this. */
        r->filter = *filter;
        r->timeout_usec = timeout_usec;
        p = strdup(path);
        if (!p)
                return -ENOMEM; /* the old path, the reader's own copy, stays */
        free(r->path);
        r->path = p;
        return 0;
}

void mount_reader_request(MountReader *r) {
        int e = worker_slot_start(r->slot, r->timeout_usec);

        if (e == -ENOMEM)
                (void) mount_reader_read_now(r, false); /* no memory for the job: here, then */
        else if (e < 0)
                (void) reader_failed(r, e);
}

bool mount_reader_busy(const MountReader *r) {
        return worker_slot_busy(r->slot);
}

int mount_reader_read_now(MountReader *r, bool force) {
        MountTable *t = NULL;
        int e;

        e = mount_table_load_changed(r->path, &r->filter, force ? NULL : *r->current, &t);
        if (e < 0)
                return reader_failed(r, e);
        return t ? r->apply(t, r->userdata) : 0; /* NULL: unchanged */
}

MountReader *mount_reader_free(MountReader *r) {
        if (!r)
                return NULL;
        worker_slot_free(r->slot);
        free(r->path);
        free(r);
        return NULL;
}
