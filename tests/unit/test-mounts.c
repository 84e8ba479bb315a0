/* test-mounts: effective policy from mount options, the default filter,
 * and a mountinfo fixture through libmount. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Fixtures below are built from string literals the code never writes to. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wincompatible-pointer-types-discards-qualifiers"
#else
#pragma GCC diagnostic ignored "-Wdiscarded-qualifiers"
#endif

#include "loop-wait.h"
#include "mounts.h"
#include "strv.h"
#include "time-util.h"
#include "../tap.h"

static void test_policy(void) {
        static const struct {
                const char *vfs, *super;
                AtimeMode atime;
                bool nodiratime, lazytime, ro;
        } cases[] = {
                { "rw", "rw", ATIME_STRICT, false, false, false },
                { "rw,relatime", "rw", ATIME_RELATIME, false, false, false },
                { "rw,noatime", "rw", ATIME_NOATIME, true, false, false },
                { "rw,nodiratime", "rw", ATIME_STRICT, true, false, false },
                { "rw,nodiratime,relatime", "rw", ATIME_RELATIME, true, false, false },
                { "rw,relatime", "rw,lazytime", ATIME_RELATIME, false, true, false },
                { "ro,relatime", "ro", ATIME_RELATIME, false, false, true },
                { "rw,relatime", "ro,lazytime", ATIME_RELATIME, false, true, true },
                { "rw,nosuid,nodev,noexec", "rw,size=10k,mode=755", ATIME_STRICT, false, false, false },
                /* Option names are matched whole, never as substrings. */
                { "rw,x-noatime", "rw,nolazytime", ATIME_STRICT, false, false, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct mount_policy p;

                mount_policy_from_options(cases[i].vfs, cases[i].super, &p);
                ok(p.atime == cases[i].atime && p.nodiratime == cases[i].nodiratime &&
                           p.lazytime == cases[i].lazytime && p.read_only == cases[i].ro,
                   "'%s' / '%s' -> %s%s%s%s", cases[i].vfs, cases[i].super, atime_mode_to_string(cases[i].atime),
                   cases[i].nodiratime ? " nodiratime" : "", cases[i].lazytime ? " lazytime" : "",
                   cases[i].ro ? " ro" : "");
        }
}

static void test_filter(void) {
        char *inc[] = { "ext4", "fuse.*", NULL }, *exc[] = { "xfs", NULL }, *paths[] = { "/srv", "/snap/*", NULL };
        struct mount_filter def = {}, f = { .exclude_fstypes = exc, .exclude_paths = paths },
                            only = { .include_fstypes = inc };

        ok(mount_filter_match(&def, "ext4", "/"), "ext4 tracked by default");
        ok(mount_filter_match(&def, "tmpfs", "/tmp"), "tmpfs tracked by default");
        ok(mount_filter_match(&def, "nfs4", "/home"), "nfs tracked by default");
        ok(!mount_filter_match(&def, "proc", "/proc"), "proc left out");
        ok(!mount_filter_match(&def, "cgroup2", "/sys/fs/cgroup"), "cgroup2 left out");
        ok(!mount_filter_match(&def, "tracefs", "/sys/kernel/tracing"), "tracefs left out");
        ok(!mount_filter_match(&def, "tmpfs", "/sys/fs/cgroup"), "a tmpfs under /sys left out");
        ok(mount_filter_match(&def, "tmpfs", "/system"), "but not one at a path that only starts with /sys");
        ok(!mount_filter_match(&f, "xfs", "/data"), "excluded fstype");
        ok(!mount_filter_match(&f, "ext4", "/srv"), "excluded path itself");
        ok(!mount_filter_match(&f, "ext4", "/srv/a/b"), "below an excluded path");
        ok(mount_filter_match(&f, "ext4", "/srvdata"), "a sibling sharing the prefix is kept");
        ok(!mount_filter_match(&f, "squashfs", "/snap/core/1"), "excluded glob");
        ok(mount_filter_match(&only, "fuse.sshfs", "/mnt"), "include glob");
        ok(!mount_filter_match(&only, "tmpfs", "/tmp"), "include list restricts");
        {
                char *incp[] = { "proc", "tmpfs", NULL };
                struct mount_filter withproc = { .include_fstypes = incp };
                ok(mount_filter_match(&withproc, "proc", "/srv/proc"), "a pseudo type can be included by name");
                ok(!mount_filter_match(&withproc, "tmpfs", "/sys/fs/cgroup"),
                   "but nothing under /proc or /sys, whatever the type");
        }
}

static const MountEntry *find(const MountTable *t, const char *target) {
        return mount_table_find_target(t, target);
}

static void test_fixture(void) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        struct mount_filter def = {};
        const MountEntry *e;
        char path[4096];
        int r;

        snprintf(path, sizeof path, "%s/tests/fixtures/mountinfo-basic", getenv("top_srcdir") ?: ".");
        r = mount_table_load(path, &def, &t);
        is_int(r, 0, "fixture loads");
        if (r < 0)
                return;
        is_int(t->n_bad_lines, 1, "one malformed line counted");
        ok(!find(t, "/proc") && !find(t, "/sys") && !find(t, "/sys/fs/cgroup"), "pseudo filesystems left out");
        ok((e = find(t, "/")) && streq(e->fstype, "ext4") && e->policy.atime == ATIME_RELATIME &&
                   major(e->devno) == 254,
           "root: ext4 relatime 254:0");
        ok((e = find(t, "/srv/strict")) && e->policy.atime == ATIME_STRICT && !e->policy.nodiratime,
           "no atime option means strictatime");
        ok((e = find(t, "/srv/noatime")) && e->policy.atime == ATIME_NOATIME && e->policy.nodiratime,
           "bind mount with noatime, nodiratime implied");
        ok((e = find(t, "/srv/lazy")) && e->policy.lazytime && streq(e->fstype, "xfs"), "lazytime from super options");
        ok((e = find(t, "/srv/ndir")) && e->policy.atime == ATIME_STRICT && e->policy.nodiratime, "nodiratime alone");
        ok((e = find(t, "/srv/ro")) && e->policy.read_only, "read-only mount");
        ok((e = find(t, "/srv/sbro")) && e->policy.read_only, "read-only superblock");
        ok((e = find(t, "/srv/under")) && e->id == 71 && e->policy.atime == ATIME_NOATIME,
           "of two stacked mounts, the top one is kept");
        ok((e = find(t, "/srv/with space")) && streq(e->root, "/sub"), "\\040 unescaped, root kept");
        ok((e = find(t, "/srv/fuse")) && streq(e->source, "/src"), "FUSE tracked");
        ok(find(t, "/var/lib/docker/overlay2/abc/merged") != NULL, "overlay tracked");
        is_int(t->n, 11, "eleven mounts tracked");
        for (size_t i = 1; i < t->n; i++)
                if (t->entries[i - 1].id >= t->entries[i].id) {
                        ok(0, "sorted by id");
                        return;
                }
        ok(1, "sorted by id");
}

struct diff_count {
        unsigned added, removed, changed;
};

static void count(const MountEntry *a, const MountEntry *b, void *userdata) {
        struct diff_count *c = userdata;

        if (!a)
                c->added++;
        else if (!b)
                c->removed++;
        else
                c->changed++;
}

static void test_diff(void) {
        MountEntry e1[] = {
                { .id = 1, .target = "/a", .source = "s", .vfs_options = "rw", .super_options = "rw" },
                { .id = 2, .target = "/b", .source = "s", .vfs_options = "rw", .super_options = "rw" },
                { .id = 3, .target = "/c", .source = "s", .vfs_options = "rw", .super_options = "rw" },
        };
        MountEntry e2[] = {
                { .id = 2, .target = "/b", .source = "s", .vfs_options = "rw,noatime", .super_options = "rw",
                  .policy = { .atime = ATIME_NOATIME, .nodiratime = true } },
                { .id = 3, .target = "/c", .source = "s", .vfs_options = "rw", .super_options = "rw" },
                { .id = 4, .target = "/d", .source = "s", .vfs_options = "rw", .super_options = "rw" },
        };
        MountTable a = { .entries = e1, .n = 3 }, b = { .entries = e2, .n = 3 };
        struct diff_count c = {};

        mount_table_diff(&a, &b, count, &c);
        ok(c.added == 1 && c.removed == 1 && c.changed == 1, "diff: one added, one removed, one changed");
        c = (struct diff_count) {};
        mount_table_diff(NULL, &b, count, &c);
        ok(c.added == 3 && c.removed == 0, "diff from nothing: all added");
}

/* The per-cycle re-read parses only a table that reads differently. */
static void test_changed(void) {
        _cleanup_(mount_table_freep) MountTable *a = NULL, *b = NULL, *c = NULL;
        struct mount_filter def = {};
        char path[] = "/tmp/test-mounts.XXXXXX";
        const char *one = "20 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n";
        const char *two = "20 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
                          "21 20 254:1 / /srv rw,noatime shared:2 - xfs /dev/vdb rw,lazytime\n";
        int fd = mkstemp(path);

        ok(fd >= 0 && write(fd, one, strlen(one)) == (ssize_t) strlen(one), "table written");
        ok(mount_table_load_changed(path, &def, NULL, &a) == 0 && a && a->n == 1, "first read parses");
        ok(mount_table_load_changed(path, &def, a, &b) == 0 && !b, "the same text again: not parsed");
        ok(lseek(fd, 0, SEEK_SET) == 0 && write(fd, two, strlen(two)) == (ssize_t) strlen(two), "a mount added");
        ok(mount_table_load_changed(path, &def, a, &c) == 0 && c && c->n == 2 && find(c, "/srv") &&
                   find(c, "/srv")->policy.lazytime,
           "a changed text is parsed");
        ok(ftruncate(fd, 0) == 0, "emptied");
        mount_table_free(b);
        ok(mount_table_load_changed(path, &def, c, &b) == 0 && b && b->n == 0 && b->n_all == 0,
           "an empty table parses to no mounts");
        ok(mount_table_load_changed("/nonexistent/mountinfo", &def, c, &a) == -ENOENT, "a missing file is an error");
        if (fd >= 0)
                close(fd);
        unlink(path);
}

/* mountinfo read while a mount moves can list it twice (the kernel walks
 * its list in pieces): one entry per id, never two (tick_set_table()
 * asserts it, and a storm of moves crashed atimed on it). */
static void test_torn_read(void) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        struct mount_filter def = {};
        char *text = strdup("20 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
                            "30 20 0:40 / /a rw,relatime - tmpfs tmpfs rw\n"
                            "31 20 0:41 / /b rw - tmpfs tmpfs rw\n"
                            "30 20 0:40 / /c rw,relatime - tmpfs tmpfs rw\n");

        ok(text && mount_table_parse(text, strlen(text), "torn", &def, &t) == 0 && t, "a torn read parses");
        ok(t && t->n == 3 && t->entries[0].id == 20 && t->entries[1].id == 30 && t->entries[2].id == 31,
           "each id once, in order (%zu entries)", t ? t->n : 0);
}

/* Over-mounted: a mount hidden under one on a directory above it, or on a
 * parent that was itself mounted over, is listed but not reachable; two
 * mounts then share a target and a lookup by it finds the reachable one. */
static void test_reachable(void) {
        _cleanup_(mount_table_freep) MountTable *t = NULL, *u = NULL;
        struct mount_filter def = {};
        char path[] = "/tmp/test-mounts.XXXXXX";
        /* 30 on /t; 31 at /t/a/b, then 32 over /t/a hides it, and 33 at
         * /t/a/b on 32 is the one reached. 40 at /t/x, 41 at /t/x/y on it,
         * then 42 stacked on 40 at /t/x: 40 is left out, 41 is hidden. */
        const char *text = "20 1 254:0 / / rw,relatime - ext4 /dev/vda1 rw\n"
                           "30 20 0:30 / /t rw - tmpfs tmpfs rw\n"
                           "31 30 0:31 / /t/a/b rw - tmpfs tmpfs rw\n"
                           "32 30 0:32 / /t/a rw - tmpfs tmpfs rw\n"
                           "33 32 0:33 / /t/a/b rw,noatime - tmpfs tmpfs rw\n"
                           "40 30 0:40 / /t/x rw - tmpfs tmpfs rw\n"
                           "41 40 0:41 / /t/x/y rw - tmpfs tmpfs rw\n"
                           "42 40 0:42 / /t/x rw - tmpfs tmpfs rw\n"
                           "50 30 0:50 / /t/a-sibling rw - tmpfs tmpfs rw\n";
        /* No root in the table (a fixture of a few lines): all reachable. */
        const char *rootless = "31 30 0:31 / /t/a/b rw - tmpfs tmpfs rw\n"
                               "32 30 0:32 / /t/a rw - tmpfs tmpfs rw\n";
        int fd = mkstemp(path);
        const MountEntry *e;
        bool want[100] = { [20] = true, [30] = true, [32] = true, [33] = true, [42] = true, [50] = true }, all = true;

        ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t) strlen(text), "over-mounted table written");
        ok(mount_table_load(path, &def, &t) == 0 && t->n == 8, "every mount but the one stacked on is listed");
        for (size_t i = 0; t && i < t->n; i++)
                if (t->entries[i].reachable != want[t->entries[i].id]) {
                        all = false;
                        printf("# mount %d: reachable %d\n", t->entries[i].id, t->entries[i].reachable);
                }
        ok(all, "reachable: /, /t, /t/a, the /t/a/b on it, the top of /t/x, a sibling of /t/a; not the rest");
        ok((e = find(t, "/t/a/b")) && e->id == 33, "a lookup of a shared target finds the reachable mount");
        /* The type on top at a target, from what the parse kept. */
        t->entries[0].fstype[0] = 'X'; /* not read from the entries: those are the filter's */
        ok(streq_ptr(mount_table_fstype_at(t, "/"), "ext4") && streq_ptr(mount_table_fstype_at(t, "/t/a-sibling"), "tmpfs"),
           "the type at a target");
        ok(t->n_types == 7, "one type for each of the 7 targets (%zu)", t->n_types);
        ok(!mount_table_fstype_at(t, "/t/a/") && !mount_table_fstype_at(t, "/nope") && !mount_table_fstype_at(t, ""),
           "nothing at a target with nothing mounted");
        ok(fd >= 0 && ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0 &&
                   write(fd, rootless, strlen(rootless)) == (ssize_t) strlen(rootless),
           "a table without a root written");
        ok(mount_table_load(path, &def, &u) == 0 && u->n == 2 && u->entries[0].reachable && u->entries[1].reachable,
           "without a root: nothing is called unreachable");
        {
                /* Stacked on one target: the last line's type stands, tracked or not. */
                _cleanup_(mount_table_freep) MountTable *st = NULL;
                const char *stacked = "30 20 0:30 / /m rw - tmpfs tmpfs rw\n"
                                      "31 20 0:31 / /m rw - proc proc rw\n"
                                      "32 20 0:32 / /n rw - proc proc rw\n"
                                      "33 20 0:33 / /n rw - tmpfs tmpfs rw\n";

                ok(fd >= 0 && ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0 &&
                           write(fd, stacked, strlen(stacked)) == (ssize_t) strlen(stacked) &&
                           mount_table_load(path, &def, &st) == 0,
                   "a table of mounts stacked on one target");
                ok(st && streq_ptr(mount_table_fstype_at(st, "/m"), "proc") && streq_ptr(mount_table_fstype_at(st, "/n"), "tmpfs"),
                   "the type at a target is the last mounted there's");
        }
        if (fd >= 0)
                close(fd);
        unlink(path);
}

/* The reader: the table in force is the test's (borrowed), and a table
 * that reads differently comes to 'apply', in the background or here. */
struct applied {
        MountTable *table; /* the one in force */
        unsigned calls;
};

static int apply(MountTable *t, void *userdata) {
        struct applied *a = userdata;

        mount_table_free(a->table);
        a->table = t;
        a->calls++;
        return 0;
}

static void test_reader(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(worker_pool_freep) WorkerPool *pool = NULL;
        _cleanup_(mount_reader_freep) MountReader *r = NULL;
        struct applied a = {};
        struct mount_filter def = {};
        char path[] = "/tmp/test-mounts.XXXXXX";
        const char *one = "20 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n";
        const char *two = "20 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
                          "21 20 254:1 / /srv rw,noatime shared:2 - xfs /dev/vdb rw\n";
        int fd = mkstemp(path);

        ok(fd >= 0 && write(fd, one, strlen(one)) == (ssize_t) strlen(one), "reader: a table written");
        ok(sd_event_new(&e) >= 0 && worker_pool_new(e, 2, &pool) == 0, "reader: a loop and a pool");
        ok(mount_reader_new(pool, &a.table, apply, &a, &r) == 0 && mount_reader_configure(r, path, &def, 5 * USEC_PER_SEC) == 0,
           "reader: made and configured");
        ok(mount_reader_read_now(r, true) == 0 && a.calls == 1 && a.table && a.table->n == 1, "read here: applied");
        mount_reader_request(r);
        RUN_LOOP_UNTIL(e, !mount_reader_busy(r));
        ok(a.calls == 1, "read in the background, the same text: nothing applied");
        ok(lseek(fd, 0, SEEK_SET) == 0 && write(fd, two, strlen(two)) == (ssize_t) strlen(two), "reader: a mount added");
        mount_reader_request(r);
        mount_reader_request(r); /* while one is out: served by one more read */
        RUN_LOOP_UNTIL(e, a.calls == 2);
        ok(a.calls == 2 && a.table->n == 2, "read in the background: the new table applied once");
        ok(mount_reader_configure(r, "/nonexistent/mountinfo", &def, 5 * USEC_PER_SEC) == 0 &&
                   mount_reader_read_now(r, true) == -ENOENT && a.table->n == 2,
           "a missing file: the error, and the table in force stays");
        if (fd >= 0)
                close(fd);
        unlink(path);
        r = mount_reader_free(r);
        pool = worker_pool_free(pool);
        mount_table_free(a.table);
}

int main(void) {
        test_policy();
        test_filter();
        test_fixture();
        test_diff();
        test_changed();
        test_torn_read();
        test_reachable();
        test_reader();
        return tap_done();
}
