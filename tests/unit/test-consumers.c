/* test-consumers: tmpfiles.d rules (age specifiers, types, specifiers,
 * globs), tmpreaper, tmpwatch and popularity-contest files, the scan with
 * its override order on a fixture tree, and mapping paths to mounts. */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "consumers.h"
#include "loop-wait.h"
#include "strv.h"
#include "time-util.h"

/* Mount lists are built from literals the code never writes to. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wincompatible-pointer-types-discards-qualifiers"
#else
#pragma GCC diagnostic ignored "-Wdiscarded-qualifiers"
#endif

static Consumers *parse(int (*fn)(Consumers *, const char *, const char *, size_t), const char *text) {
        Consumers *c = NULL;

        consumers_new(&c);
        fn(c, "t.conf", text, strlen(text));
        return c;
}

static const struct consumer *find(const Consumers *c, const char *path) {
        for (size_t i = 0; c && i < c->n; i++)
                if (streq(c->v[i].path, path))
                        return &c->v[i];
        return NULL;
}

/* The resolved form of one tmpfiles.d path under base (which only root
 * writes), scanned alone; NULL where it resolves to nothing. */
static char *resolve_one(const char *base, const char *path) {
        char dir[512], file[1024], *dirs[] = { dir, NULL }, *none[] = { NULL }, *r = NULL;
        struct consumers_paths paths = { .tmpfiles_dirs = dirs, .mail_spools = none, .tmpreaper_conf = "/nonexistent",
                                         .tmpwatch_cron = "/nonexistent", .popcon_conf = "/nonexistent" };
        const struct consumer *x;
        Consumers *c = NULL;
        FILE *f;

        snprintf(dir, sizeof dir, "%s/one.d", base);
        (void) mkdir(dir, 0755);
        snprintf(file, sizeof file, "%s/t.conf", dir);
        f = fopen(file, "we");
        if (!f || fprintf(f, "d %s 0755 root root 1d\n", path) < 0 || fclose(f) != 0 || consumers_scan(&paths, &c) < 0)
                abort();
        x = find(c, path);
        if (x && x->resolved)
                r = strdup(x->resolved);
        consumers_free(c);
        return r;
}

/* The edges of the walk: '..' past /, links to /, the kernel's 40 links,
 * names of NAME_MAX, a link whose text ends in slashes. */
static void test_resolve_edges(void) {
        char base[] = "/run/test-consumers-XXXXXX", p[4096], q[4200], name[NAME_MAX + 2], *r;

        if (geteuid() != 0 || !mkdtemp(base) || chmod(base, 0755) < 0) {
                printf("ok - # SKIP planted links need root\n");
                return;
        }
#define AT(rel) (snprintf(q, sizeof q, "%s/%s", base, rel), q)
        (void) mkdir(AT("real"), 0755);
        (void) mkdir(AT("t"), 0755);
        snprintf(p, sizeof p, "/../../..%s/real/a", base);
        r = resolve_one(base, p);
        ok(streq_ptr(r, AT("real/a")), "'..' past / stays at / (%s)", r ?: "-");
        free(r);
        (void) symlink("/", AT("t/root"));
        snprintf(p, sizeof p, "%s/t/root%s/real/b", base, base);
        r = resolve_one(base, p);
        ok(streq_ptr(r, AT("real/b")), "a link to / starts again at / (%s)", r ?: "-");
        free(r);
        (void) symlink("/", AT("t/rootonly"));
        snprintf(p, sizeof p, "%s/t/rootonly", base);
        r = resolve_one(base, p);
        ok(streq_ptr(r, "/"), "and alone is / (%s)", r ?: "-");
        free(r);
        /* l1 -> l2 -> ... -> l40 -> ../real: 40 links, as the kernel
         * follows; l0 in front of them is one too many. */
        for (int i = 0; i <= 40; i++) {
                char target[32], at[32];

                snprintf(at, sizeof at, "t/l%d", i);
                snprintf(target, sizeof target, i == 40 ? "../real" : "l%d", i + 1);
                (void) symlink(target, AT(at));
        }
        snprintf(p, sizeof p, "%s/t/l1/c", base);
        r = resolve_one(base, p);
        ok(streq_ptr(r, AT("real/c")), "40 links are followed (%s)", r ?: "-");
        free(r);
        snprintf(p, sizeof p, "%s/t/l0/c", base);
        r = resolve_one(base, p);
        ok(!r, "41 are a loop (%s)", r ?: "-");
        free(r);
        memset(name, 'n', NAME_MAX);
        name[NAME_MAX] = 0;
        snprintf(p, sizeof p, "real/%s", name);
        (void) mkdir(AT(p), 0755);
        snprintf(p, sizeof p, "%s/t/l1/%s/d", base, name);
        r = resolve_one(base, p);
        snprintf(p, sizeof p, "real/%s/d", name);
        ok(streq_ptr(r, AT(p)), "a name of NAME_MAX bytes is walked");
        free(r);
        /* A link's text with trailing slashes, to a directory not made
         * yet: the rest as written, one slash between names. */
        (void) symlink("../missing//", AT("t/slashes"));
        snprintf(p, sizeof p, "%s/t/slashes/e", base);
        r = resolve_one(base, p);
        ok(streq_ptr(r, AT("missing/e")), "a link ending in slashes, to nothing yet (%s)", r ?: "-");
        free(r);
        (void) symlink("../real//", AT("t/slashes2"));
        snprintf(p, sizeof p, "%s/t/slashes2", base);
        r = resolve_one(base, p);
        ok(streq_ptr(r, AT("real")), "to a directory, at the end of the path (%s)", r ?: "-");
        free(r);
#undef AT
        snprintf(p, sizeof p, "rm -rf '%s'", base);
        if (system(p) != 0)
                printf("# could not remove %s\n", base);
}

/* What a tmpfiles.d path lies on: the symlinks root made are followed; from
 * a directory anybody (or a user) may write, the rest is taken as written,
 * so a link planted there moves nothing. Needs root (chown). */
static void test_resolve(void) {
        /* In /run, which only root writes: /tmp itself is anybody's. */
        char base[] = "/run/test-consumers-XXXXXX", conf[8192], p[512], q[512];
        char *dirs[] = { p, NULL }, *none[] = { NULL };
        struct consumers_paths paths = { .tmpfiles_dirs = dirs, .mail_spools = none, .tmpreaper_conf = "/nonexistent",
                                         .tmpwatch_cron = "/nonexistent", .popcon_conf = "/nonexistent" };
        const struct consumer *x;
        Consumers *c = NULL;
        FILE *f;

        if (geteuid() != 0 || !mkdtemp(base) || chmod(base, 0755) < 0) {
                printf("ok - # SKIP planted links need root\n");
                return;
        }
#define AT(rel) (snprintf(q, sizeof q, "%s/%s", base, rel), q)
        (void) mkdir(AT("real"), 0755);
        (void) mkdir(AT("trusted"), 0755);
        (void) symlink("../real", AT("trusted/link"));
        (void) symlink("loop", AT("trusted/loop"));
        (void) mkdir(AT("pub"), 0777);
        (void) chmod(AT("pub"), 0777);
        (void) symlink("/etc", AT("pub/planted"));
        (void) mkdir(AT("sticky"), 01777);
        (void) chmod(AT("sticky"), 01777);
        (void) symlink("../real", AT("sticky/roots"));
        (void) symlink("/etc", AT("sticky/users"));
        (void) lchown(AT("sticky/users"), 65534, 65534);
        (void) mkdir(AT("sticky/mnt"), 0755);
        (void) mkdir(AT("home"), 0755);
        (void) chown(AT("home"), 65534, 65534);
        (void) symlink("/etc", AT("home/planted"));
        (void) mkdir(AT("tmpfiles.d"), 0755);
        snprintf(p, sizeof p, "%s/tmpfiles.d", base);
        snprintf(conf, sizeof conf,
                 "d %s/trusted/link/x 0755 root root 1d\n"
                 "d %s/pub/planted/x 0755 root root 1d\n"
                 "d %s/home/planted/x 0755 root root 1d\n"
                 "d %s/trusted/loop/x 0755 root root 1d\n"
                 "d %s/trusted/../real/y 0755 root root 1d\n"
                 "d %s/sticky/roots/z 0755 root root 1d\n"
                 "d %s/sticky/users/z 0755 root root 1d\n"
                 "d %s/sticky/mnt/z 0755 root root 1d\n",
                 base, base, base, base, base, base, base, base);
        f = fopen(AT("tmpfiles.d/t.conf"), "we");
        ok(f && fputs(conf, f) >= 0 && fclose(f) == 0, "a tmpfiles.d of paths with links on the way");
        ok(consumers_scan(&paths, &c) == 0, "scanned");
        snprintf(p, sizeof p, "%s/trusted/link/x", base);
        x = find(c, p);
        ok(x && streq_ptr(x->resolved, AT("real/x")), "a link root made is followed (%s)", x ? x->resolved : "-");
        snprintf(p, sizeof p, "%s/pub/planted/x", base);
        x = find(c, p);
        ok(x && streq_ptr(x->resolved, p), "a link in a directory anybody may write is not (%s)",
           x ? x->resolved : "-");
        snprintf(p, sizeof p, "%s/home/planted/x", base);
        x = find(c, p);
        ok(x && streq_ptr(x->resolved, p), "nor one in a user's directory (%s)", x ? x->resolved : "-");
        snprintf(p, sizeof p, "%s/trusted/loop/x", base);
        x = find(c, p);
        ok(x && !x->resolved, "a loop of links resolves to nothing");
        snprintf(p, sizeof p, "%s/trusted/../real/y", base);
        x = find(c, p);
        ok(x && streq_ptr(x->resolved, AT("real/y")), "'..' goes up (%s)", x ? x->resolved : "-");
        snprintf(p, sizeof p, "%s/sticky/roots/z", base);
        x = find(c, p);
        ok(x && streq_ptr(x->resolved, AT("real/z")), "a link root made in a sticky directory is followed (%s)",
           x ? x->resolved : "-");
        snprintf(p, sizeof p, "%s/sticky/users/z", base);
        x = find(c, p);
        ok(x && streq_ptr(x->resolved, p), "a user's link there is not (%s)", x ? x->resolved : "-");
        consumers_free(c);
        c = NULL;
        /* A mount on a directory in a sticky one may be a user's: never
         * entered (a stopped FUSE mount would hang the scan). */
        snprintf(p, sizeof p, "%s/sticky/mnt", base);
        if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
            mount("tmpfs", p, "tmpfs", 0, "mode=0755") == 0) {
                snprintf(p, sizeof p, "%s/tmpfiles.d", base);
                (void) symlink("/etc", AT("sticky/mnt/z"));
                ok(consumers_scan(&paths, &c) == 0, "scanned with a mount in the sticky directory");
                snprintf(p, sizeof p, "%s/sticky/mnt/z", base);
                x = find(c, p);
                ok(x && streq_ptr(x->resolved, p), "a mount there is not entered (%s)", x ? x->resolved : "-");
                consumers_free(c);
                snprintf(p, sizeof p, "%s/sticky/mnt", base);
                (void) umount2(p, MNT_DETACH);
        } else
                printf("ok - # SKIP no mount namespace\n");
#undef AT
        snprintf(conf, sizeof conf, "rm -rf '%s'", base);
        if (system(conf) != 0)
                printf("# could not remove %s\n", base);
}

/* The scanner: in a worker, one at a time, each scan's list to 'found';
 * its job keeps its own copy of the paths, so the caller's may go as soon
 * as a scan has started. */
struct found {
        Consumers *last;
        unsigned calls;
};

static void on_found(Consumers *c, void *userdata) {
        struct found *f = userdata;

        consumers_free(f->last);
        f->last = c;
        f->calls++;
}

static void test_scanner(const char *fx) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(worker_pool_freep) WorkerPool *pool = NULL;
        _cleanup_(consumer_scanner_freep) ConsumerScanner *s = NULL;
        struct found f = {};
        char *d1 = NULL, *none = NULL;

        ok(asprintf(&d1, "%s/etc/tmpfiles.d", fx) > 0 && (none = strdup("/nonexistent")), "scanner: paths");
        {
                char *dirs[] = { d1, NULL }, *spools[] = { NULL };
                struct consumers_paths p = { .tmpfiles_dirs = dirs, .mail_spools = spools, .tmpreaper_conf = none,
                                             .tmpwatch_cron = none, .popcon_conf = none };

                ok(sd_event_new(&e) >= 0 && worker_pool_new(e, 2, &pool) == 0, "scanner: a loop and a pool");
                ok(consumer_scanner_new(pool, on_found, &f, &s) == 0, "scanner: made");
                consumer_scanner_configure(s, &p, 5 * USEC_PER_SEC);
                consumer_scanner_request(s);
                consumer_scanner_request(s); /* while one is out: one more after it */
        }
        /* The paths the scans were configured with are gone (a reload's
         * old configuration): the one out has its copy; the one after it
         * is made from the new paths, configured before the loop runs. */
        free(d1);
        d1 = NULL;
        {
                char *dirs[] = { NULL }, *spools[] = { NULL };
                struct consumers_paths q = { .tmpfiles_dirs = dirs, .mail_spools = spools, .tmpreaper_conf = none,
                                             .tmpwatch_cron = none, .popcon_conf = none };

                consumer_scanner_configure(s, &q, 5 * USEC_PER_SEC);
                RUN_LOOP_UNTIL(e, f.calls == 2 && !consumer_scanner_busy(s));
        }
        ok(f.calls == 2, "two requests while none was out: two scans, one after the other (%u)", f.calls);
        ok(f.last && f.last->n == 0, "the second from the new paths: nothing found");
        s = consumer_scanner_free(s);
        pool = worker_pool_free(pool);
        consumers_free(f.last);
        free(none);
}

int main(void) {
        const struct consumer *x;
        Consumers *c;
        char fx[4096];

        c = parse(consumers_parse_tmpfiles,
                  "# comment\n"
                  "D /tmp 1777 root root 10d\n"
                  "d /var/tmp 1777 root root 30d\n"
                  "q /var/cache/x 0755 - - 2h\n"
                  "d /run/lock 0755 root root -\n"
                  "d /srv/mc 0755 root root cm:5d\n"
                  "e /srv/am 0755 root root ~aM:1w\n"
                  "x /tmp/keep-*\n"
                  "d %T/sub 0755 root root 1d\n"
                  "d %h/.cache 0700 - - 1d\n"
                  "d \"/srv/with space\" 0755 root root 3d\n"
                  "d /var/log/glob-*.d 0755 root root 4d\n"
                  "d /zero 0755 root root 0\n"
                  "L /link - - - 9d /target\n"
                  "d /odd 0755 root root 3fortnights\n");
        ok((x = find(c, "/tmp")) && x->need == NEED_RELATIME && streq(x->source, "t.conf:2"), "D /tmp 10d: relatime");
        ok((x = find(c, "/var/tmp")) && x->need == NEED_RELATIME, "d /var/tmp 30d");
        ok((x = find(c, "/var/cache/x")) && x->need == NEED_STRICT, "an age under a day needs strictatime");
        ok(!find(c, "/run/lock"), "no age: no consumer");
        ok(!find(c, "/srv/mc"), "cm: ages by ctime and mtime only");
        ok((x = find(c, "/srv/am")) && x->need == NEED_RELATIME, "~aM: atime counts");
        ok((x = find(c, "/tmp/sub")) != NULL, "%%T resolved to /tmp");
        ok(!find(c, "/.cache") && strv_length(c->notes) >= 1, "%%h is not a system path: noted, skipped");
        ok(find(c, "/srv/with space") != NULL, "a quoted path");
        ok(find(c, "/var/log") != NULL, "a glob: the directory before it");
        ok(!find(c, "/zero"), "age 0: removed whatever the times");
        ok(!find(c, "/link"), "L lines do not age");
        ok(!find(c, "/odd"), "an age not understood is skipped");
        consumers_free(c);

        c = parse(consumers_parse_tmpreaper, "SHOWWARNING=true\nTMPREAPER_TIME=7d\n");
        is_int(c->n, 0, "tmpreaper as Debian ships it (SHOWWARNING=true) does not run");
        consumers_free(c);
        c = parse(consumers_parse_tmpreaper,
                  "SHOWWARNING=false\nTMPREAPER_TIME=12h\nTMPREAPER_DIRS='/tmp/. /var/spool/junk/.'\n");
        ok(c->n == 2 && (x = find(c, "/tmp")) && x->need == NEED_STRICT && find(c, "/var/spool/junk"),
           "tmpreaper: its dirs, and 12h needs strictatime");
        consumers_free(c);
        c = parse(consumers_parse_tmpreaper, "SHOWWARNING=false\nTMPREAPER_ADDITIONALOPTIONS='--mtime'\n");
        is_int(c->n, 0, "tmpreaper --mtime does not read atime");
        consumers_free(c);

        c = parse(consumers_parse_tmpwatch, "#!/bin/sh\n/usr/sbin/tmpwatch -umc 10d /tmp\n/usr/sbin/tmpwatch 720 /var/tmp\n"
                                            "/usr/sbin/tmpwatch -m 30d /srv/old\n");
        ok((x = find(c, "/tmp")) && x->need == NEED_RELATIME, "tmpwatch -umc 10d /tmp");
        ok(find(c, "/var/tmp") != NULL, "tmpwatch 720 (hours)");
        ok(!find(c, "/srv/old"), "tmpwatch -m: mtime only");
        consumers_free(c);

        c = parse(consumers_parse_popcon, "PARTICIPATE=\"yes\"\n");
        ok((x = find(c, "/usr")) && x->need == NEED_RELATIME, "popularity-contest participating: /usr");
        consumers_free(c);
        c = parse(consumers_parse_popcon, "PARTICIPATE=\"no\"\n");
        is_int(c->n, 0, "not participating");
        consumers_free(c);

        /* The scan, on a fixture tree. */
        snprintf(fx, sizeof fx, "%s/tests/fixtures/consumers", getenv("top_srcdir") ?: ".");
        {
                char d1[4200], d2[4200], d3[4200], mail[4200], mail2[4200], reaper[4200], popcon[4200];
                char *dirs[] = { d1, d2, d3, NULL }, *spools[] = { mail, mail2, NULL };
                struct consumers_paths p = { .tmpfiles_dirs = dirs, .mail_spools = spools, .tmpreaper_conf = reaper,
                                             .tmpwatch_cron = "/nonexistent", .popcon_conf = popcon };
                char *mounts[] = { "/", "/tmp", "/var", "/var/mail", "/usr", NULL };
                const struct consumer *why;

                snprintf(d1, sizeof d1, "%s/etc/tmpfiles.d", fx);
                snprintf(d2, sizeof d2, "%s/run/tmpfiles.d", fx);
                snprintf(d3, sizeof d3, "%s/usr/lib/tmpfiles.d", fx);
                snprintf(mail, sizeof mail, "%s/var/mail", fx);
                snprintf(mail2, sizeof mail2, "%s/var/spool/maildir", fx);
                snprintf(reaper, sizeof reaper, "%s/etc/tmpreaper.conf", fx);
                snprintf(popcon, sizeof popcon, "%s/etc/popularity-contest.conf", fx);
                c = NULL;
                ok(consumers_scan(&p, &c) == 0, "the fixture tree scans");
                ok(find(c, "/tmp") && find(c, "/tmp")->need == NEED_RELATIME && strstr(find(c, "/tmp")->source, "etc/tmpfiles.d/tmp.conf"),
                   "/etc/tmpfiles.d/tmp.conf overrides the /usr/lib one of the same name");
                ok(!find(c, "/usr-lib-only-in-overridden-file"), "the overridden file is not read");
                ok(find(c, "/var/tmp") != NULL, "a file only in /usr/lib is read");
                ok(!find(c, "/masked"), "a file masked by a /dev/null symlink is not read");
                ok(find(c, mail) && find(c, mail)->kind == CONSUMER_MAIL, "a spool with mbox files");
                ok(!find(c, mail2), "a spool of Maildir directories only is not one");
                ok(find(c, "/srv/reap") != NULL, "tmpreaper.conf read");
                ok(find(c, "/usr") != NULL, "popularity-contest read");

                is_int(consumers_need_for_mount(c, "/tmp", mounts, &why), NEED_RELATIME, "/tmp needs relatime");
                ok(why && why->kind == CONSUMER_TMPFILES, "because of tmpfiles");
                is_int(consumers_need_for_mount(c, "/", mounts, NULL), NEED_RELATIME,
                       "/ needs relatime (/srv/reap and the fixture spool are on it)");
                is_int(consumers_need_for_mount(c, "/usr", mounts, NULL), NEED_RELATIME, "/usr: popcon");
                is_int(consumers_need_for_mount(c, "/var/mail", mounts, NULL), NEED_NONE,
                       "/var/mail of the host is not the fixture's");
                consumers_free(c);
        }
        test_resolve();
        test_resolve_edges();
        test_scanner(fx);
        return tap_done();
}
