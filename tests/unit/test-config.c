/* test-config: the config module against good and broken files. Every
 * error must name file:line and the key. Every key of the table has a good
 * value (parsed, then printed back) and a bad or out-of-range one (refused
 * with file:line, key and reason); a key without a case fails the test. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "strv.h"
#include "../tap.h"

static int load(const char *text, struct config **ret, char ***errors) {
        return config_load_string("test.conf", text, strlen(text), ret, errors);
}

/* Expects exactly one error, containing each of the given fragments. */
static void expect_error(const char *what, const char *text, const char *frag1, const char *frag2) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        int r = load(text, &c, &errors);

        ok(r == -EINVAL && strv_length(errors) == 1 && strstr(errors[0], frag1) && (!frag2 || strstr(errors[0], frag2)),
           "%s is reported as '%s'", what, errors && errors[0] ? errors[0] : "(nothing)");
}

/* One row of the key table: a good value and how it prints back, and a bad
 * or out-of-range value with a fragment of its message. */
struct key_case {
        const char *section, *key;
        const char *good, *printed;
        const char *bad, *why;
};

#define OUT_OF_RANGE(a, b) "out of range (allowed: " a " to " b ")"
static const struct key_case key_cases[] = {
        { "daemon", "log_level", "debug", "debug", "loud", "expected one of err" },
        { "daemon", "state_dir", "/srv/st", "/srv/st", "srv/st", "expected an absolute path" },
        { "daemon", "worker_threads", "4", "4", "65", OUT_OF_RANGE("1", "64") },
        { "daemon", "helper_socket", "/run/h", "/run/h", "run/h", "expected an absolute path" },
        { "control", "socket", "/run/x/io.atimed", "/run/x/io.atimed", "io.atimed", "expected an absolute path" },
        { "control", "socket_mode", "600", "0600", "01000", OUT_OF_RANGE("0000", "0777") },
        { "control", "socket_group", "root", "root", "no-such-group-xyz", "no such group" },
        { "control", "max_clients", "16", "16", "4097", OUT_OF_RANGE("1", "4096") },
        { "control", "max_clients_per_user", "2", "2", "0", OUT_OF_RANGE("1", "4096") },
        { "control", "reserved_clients", "0", "0", "4097", OUT_OF_RANGE("0", "4096") },
        { "control", "max_message_size", "1048576", "1M", "1000", OUT_OF_RANGE("1K", "16M") },
        { "control", "idle_timeout", "120min", "2h", "500ms", OUT_OF_RANGE("1s", "1d") },
        { "control", "user_loop_time", "250ms", "250ms", "2s", OUT_OF_RANGE("0", "1s") },
        { "control", "user_reply_memory", "8388608", "8M", "2G", OUT_OF_RANGE("0", "1G") },
        { "control", "reply_memory", "0", "0", "1025M", OUT_OF_RANGE("0", "1G") },
        { "control", "privileged_group", "root", "root", "no-such-group-xyz", "no such group" },
        { "mounts", "mountinfo", "/proc/1/mountinfo", "/proc/1/mountinfo", "mountinfo", "expected an absolute path" },
        { "mounts", "include_fstypes", "ext4,xfs", "ext4 xfs", "ext4,\001", "expected printable words" },
        { "mounts", "exclude_fstypes", "fuse.*  nfs", "fuse.* nfs", "\002", "expected printable words" },
        { "mounts", "exclude_paths", "/a, /b/*", "/a /b/*", "/a, b", "expected absolute paths or globs" },
        { "mounts", "rescan_delay", "0", "0", "11s", OUT_OF_RANGE("0", "10s") },
        { "mounts", "events", "no", "no", "maybe", "expected yes or no" },
        { "probe", "interval", "1h", "1h", "8d", OUT_OF_RANGE("1s", "7d") },
        { "probe", "timeout", "60s", "1min", "50ms", OUT_OF_RANGE("100ms", "10min") },
        { "probe", "dir", ".atimed/p", ".atimed/p", "a/../b", "without .." },
        { "sampler", "interval", "30s", "30s", "2h", OUT_OF_RANGE("1s", "1h") },
        { "sampler", "sample_size", "100", "100", "9", OUT_OF_RANGE("10", "1000000") },
        { "sampler", "walk_rate", "50", "50", "10000001", OUT_OF_RANGE("10", "10000000") },
        { "sampler", "idle_walk_rate", "5000", "5000", "9", OUT_OF_RANGE("10", "10000000") },
        { "sampler", "stat", "/proc/stat", "/proc/stat", "proc/stat", "expected an absolute path" },
        { "sampler", "refresh", "1d", "1d", "5s", OUT_OF_RANGE("10s", "30d") },
        { "sampler", "timeout", "1min", "1min", "0", OUT_OF_RANGE("1s", "1h") },
        { "sampler", "timeout", "1min", "1min", "soon", "expected a duration" },
        { "device", "diskstats", "/tmp/ds", "/tmp/ds", "ds", "expected an absolute path" },
        { "device", "sysfs", "/sys2", "/sys2", "/sys 2", "expected an absolute path" },
        { "device", "jbd2", "/proc/fs/jbd2", "/proc/fs/jbd2", "proc/fs/jbd2", "expected an absolute path" },
        { "btrfs", "snapshot_search", "no", "no", "maybe", "expected yes or no" },
        { "consumers", "tmpfiles_dirs", "/etc/tmpfiles.d", "/etc/tmpfiles.d", "tmpfiles.d", "expected absolute paths" },
        { "consumers", "mail_spools", "/var/mail,/srv/mail", "/var/mail /srv/mail", "mail", "expected absolute paths" },
        { "consumers", "tmpreaper_conf", "/etc/t.conf", "/etc/t.conf", "t.conf", "expected an absolute path" },
        { "consumers", "tmpwatch_cron", "/etc/tw", "/etc/tw", "tw", "expected an absolute path" },
        { "consumers", "popcon_conf", "/etc/p.conf", "/etc/p.conf", "p.conf", "expected an absolute path" },
        { "consumers", "interval", "1h", "1h", "1s", OUT_OF_RANGE("10s", "7d") },
        { "advisor", "noatime_threshold", "500", "500", "0", OUT_OF_RANGE("1", "100000000") },
        { "advisor", "min_saving", "0", "0", "100000001", OUT_OF_RANGE("0", "100000000") },
        { "advisor", "window", "7d", "7d", "30s", OUT_OF_RANGE("1min", "90d") },
        { "advisor", "costs", "ext4:1.2:0.5, xfs:2:0.5:0.2", "ext4:1.2:0.5 xfs:2:0.5:0.2", "ext4:x:1",
          "expected fstype:usec:KiB" },
        { "export", "textfile", "/tmp/a.prom", "/tmp/a.prom", "a.prom", "expected an absolute path, or nothing" },
        { "export", "textfile_mode", "0640", "0640", "01644", OUT_OF_RANGE("0000", "0777") },
        { "store", "flush_interval", "10min", "10min", "2d", OUT_OF_RANGE("1s", "1d") },
        { "store", "rings", "1min:1d,1h:30d", "1min:1d, 1h:30d", "1h:90d, 1min:6h", "finest first" },
        { "store", "max_mounts", "5", "5", "0", OUT_OF_RANGE("1", "1000000") },
        { "mount:/srv", "probe_dir", "/srv/p", "/srv/p", "p", "expected an absolute path" },
        { "mount:/srv", "needs_atime", "strict", "strict", "always", "expected none, relatime or strict" },
        { "mount:/srv", "ignore", "yes", "yes", "maybe", "expected yes or no" },
};

static const struct key_case *find_case(const char *section, const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(key_cases); i++)
                if (streq(key_cases[i].section, section) && streq(key_cases[i].key, key))
                        return &key_cases[i];
        return NULL;
}

/* The good value parses, and prints back under its own section. */
static void check_good(const struct key_case *k) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *text = NULL, *out = NULL, *header = NULL, *line = NULL;
        const char *sec;

        if (asprintf(&text, "[%s]\n%s = %s\n", k->section, k->key, k->good) < 0 ||
            asprintf(&header, "\n[%s]\n", k->section) < 0 || asprintf(&line, "\n%s = %s\n", k->key, k->printed) < 0) {
                ok(false, "out of memory");
                return;
        }
        ok(load(text, &c, &errors) == 0, "[%s] %s = %s is good", k->section, k->key, k->good);
        if (!c)
                return;
        out = config_print_string(c);
        sec = out ? strstr(out, header) : NULL;
        ok(sec && strstr(sec, line) && (!strstr(sec + 1, "\n[") || strstr(sec, line) < strstr(sec + 1, "\n[")),
           "and prints back as %s = %s", k->key, k->printed);
}

/* The bad value is refused on its own line, with the key and the reason. */
static void check_bad(const struct key_case *k) {
        _cleanup_free_ char *text = NULL, *frag = NULL;

        if (asprintf(&text, "[%s]\n; a comment\n\n%s = %s\n", k->section, k->key, k->bad) < 0 ||
            asprintf(&frag, "test.conf:4: [%s] %s: invalid value '", k->section, k->key) < 0) {
                ok(false, "out of memory");
                return;
        }
        expect_error(k->key, text, frag, k->why);
}

/* Every key the table has (as printed, with a [mount:PATH] section that
 * sets each of its keys) has a case. */
static void test_every_key_has_a_case(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *out = NULL;
        char section[64] = "", *save = NULL;
        unsigned keys = 0, missing = 0;

        if (load("[mount:/srv]\nprobe_dir = /srv/p\nneeds_atime = strict\nignore = yes\n", &c, &errors) < 0 ||
            !(out = config_print_string(c))) {
                ok(false, "configuration to list the keys from");
                return;
        }
        for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char key[64];

                if (sscanf(l, "[%63[^]]]", section) == 1 || l[0] == '#' || sscanf(l, "%63s =", key) != 1)
                        continue;
                keys++;
                if (startswith(section, "mount:"))
                        strcpy(section, "mount:/srv");
                if (!find_case(section, key)) {
                        printf("# no case for [%s] %s\n", section, key);
                        missing++;
                }
        }
        ok(keys >= 45 && missing == 0, "all %u keys have a case (%u missing)", keys, missing);
}

static void test_every_key(void) {
        for (size_t i = 0; i < ELEMENTSOF(key_cases); i++) {
                check_good(&key_cases[i]);
                check_bad(&key_cases[i]);
        }
        test_every_key_has_a_case();
}

/* The typed values the rest of atimed reads: no text left to parse. */
static void test_typed(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        const struct mount_config *mc;

        ok(load("[advisor]\ncosts = nfs*:8:2, xfs:2:0.5:0.2:1.5\n[store]\nrings = 1min:1d, 1h:30d\n"
                "[mount:/srv]\nneeds_atime = relatime\nignore = yes\n",
                &c, &errors) == 0,
           "costs, rings and a mount section parse");
        if (!c)
                return;
        ok(c->costs.n == 2 && streq(c->costs.v[0].fstype, "nfs*") && c->costs.v[0].usec == 8 && c->costs.v[0].kib == 2 &&
                   fabs(c->costs.v[0].lazy_usec - 8 * 0.73 / 3.0) < 1e-9,
           "costs held as the advisor's structs, lazy usec derived");
        ok(c->costs.v[1].lazy_usec == 0.2 && c->costs.v[1].again_usec == 1.5, "and given where given");
        ok(atime_cost_for("nfs4", c->costs.v, c->costs.n) == &c->costs.v[0], "the advisor matches the config's globs");
        ok(c->rings.n == 2 && c->rings.spec[0].resolution == 60 && c->rings.spec[0].capacity == 1440 &&
                   c->rings.spec[1].resolution == 3600 && c->rings.spec[1].capacity == 720,
           "rings held as specs");
        mc = config_find_mount(c, "/srv");
        ok(mc && mc->needs_atime == NEED_RELATIME && mc->ignore && !mc->probe_dir, "a mount section, typed");
        ok(!config_find_mount(c, "/srv/x"), "and only for its own path");
        {
                _cleanup_(config_freep) struct config *d = NULL;

                ok(config_new(&d) == 0 && d->costs.n == 0 && d->rings.n == 3 && d->rings.spec[2].resolution == 3600,
                   "defaults: no cost overrides, three rings");
        }
}

/* Each [mount:PATH] needs_atime becomes a consumer of kind config, named
 * by the file and line that declare it (what atimectl's guard shows when it
 * refuses); 'none', or a section without the key, declares nothing. */
static void test_declared(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        const struct mount_config *a, *b, *n, *i;

        ok(load("# readers of atime the scan cannot see\n"
                "[mount:/srv]\n"
                "ignore = no\n"
                "\n"
                "  needs_atime = relatime\n"
                "[mount:/none]\nneeds_atime = none\n"
                "[mount:/ign]\nignore = yes\n"
                "[mount:/var/mail]\n; strict for the mail reader\nneeds_atime = strict\n",
                &c, &errors) == 0,
           "mount sections with needs_atime parse");
        if (!c)
                return;
        a = config_find_mount(c, "/srv");
        b = config_find_mount(c, "/var/mail");
        n = config_find_mount(c, "/none");
        i = config_find_mount(c, "/ign");
        ok(a && a->needs_atime_line == 5 && b && b->needs_atime_line == 12, "the line of each declaration, indented or not");
        ok(n && n->needs_atime_line == 7 && !n->declared, "needs_atime = none: its line, but no consumer");
        ok(i && i->needs_atime_line == 0 && !i->declared, "a section without the key: neither");
        ok(c->declared && c->declared->n == 2, "one consumer per declaration");
        ok(a && a->declared && a->declared->kind == CONSUMER_CONFIG && a->declared->need == NEED_RELATIME &&
                   streq(a->declared->path, "/srv") && streq(a->declared->source, "test.conf:5"),
           "the first: kind config, its need, its mount, source '%s'", a && a->declared ? a->declared->source : "");
        ok(b && b->declared && b->declared->need == NEED_STRICT && streq(b->declared->source, "test.conf:12") &&
                   strstr(b->declared->why, "[mount:/var/mail] needs_atime = strict"),
           "the second, its why naming the section and key: '%s'", b && b->declared ? b->declared->why : "");
        {
                _cleanup_(config_freep) struct config *d = NULL;

                ok(load("[daemon]\nlog_level = info\n", &d, &errors) == 0 && !d->declared,
                   "no declarations: no consumers");
        }
}

/* Printed costs read back as the same numbers. */
static void test_costs_round_trip(void) {
        static const char *const v[] = { "ext4:1.46:0.5", "z:1e-3:0.10:0.3", "q:0.1:0:0.2:0.3", "btrfs:4.9:4.8:4.9:4.9",
                                         "r:3:0.5:0.73", "btrfs:4.9:4.8:4.9:4.9:2048", "b*:4:4:4:2:600",
                                         "b*:4:4:4:2:600:1500" };

        for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                struct atime_cost a, b;
                char buf1[256], buf2[256], out[256];

                ok(atime_cost_parse(v[i], &a, buf1, sizeof buf1) == 0 &&
                           atime_cost_parse(atime_cost_format(&a, out, sizeof out), &b, buf2, sizeof buf2) == 0 &&
                           streq(a.fstype, b.fstype) && a.usec == b.usec && a.kib == b.kib &&
                           a.lazy_usec == b.lazy_usec && a.again_usec == b.again_usec &&
                           a.unshare_bytes == b.unshare_bytes && a.unshare_dir_bytes == b.unshare_dir_bytes,
                   "%s prints as %s, the same cost", v[i], out);
        }
}

static void test_defaults(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        ok(config_new(&c) == 0, "defaults build");
        is_int(c->max_clients, 64, "max_clients default");
        is_int(c->max_message_size, 65536, "max_message_size default");
        is_int(c->socket_mode, 0666, "socket_mode default");
        is_int(c->textfile_mode, 0644, "textfile_mode default: readable by node_exporter's user");
        ok(c->socket_group == NULL, "no socket group by default");
        is_str(c->mountinfo_path, "/proc/self/mountinfo", "mountinfo default");

        f = open_memstream(&buf, &len);
        config_print(c, f);
        fclose(f);
        ok(strstr(buf, "[control]\n") && strstr(buf, "idle_timeout = 1min\n") && strstr(buf, "rescan_delay = 200ms\n"),
           "printed defaults use the file's syntax");
        {
                _cleanup_(config_freep) struct config *c2 = NULL;
                _cleanup_strv_free_ char **errors = NULL;

                ok(load(buf, &c2, &errors) == 0, "printed configuration parses back");
        }
        free(buf);
}

static void test_good(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        const char *text = "\xEF\xBB\xBF# comment\r\n"
                           "; another\n"
                           "[control]\n"
                           "  max_clients = 8   ; inline comment\n"
                           "idle_timeout = 1h 30min\n"
                           "max_message_size=128K\n"
                           "\n"
                           "[mounts]\n"
                           "include_fstypes = ext4, xfs fuse.*\n"
                           "exclude_paths = /var/lib/docker /snap/*\n"
                           "[daemon]\n"
                           "log_level = debug\n";

        ok(load(text, &c, &errors) == 0, "a good file parses");
        if (!c)
                return;
        is_int(c->max_clients, 8, "indented key with ; comment");
        is_int(c->idle_timeout_usec, 5400ULL * 1000000, "compound duration");
        is_int(c->max_message_size, 131072, "size without spaces around '='");
        is_int(strv_length(c->include_fstypes), 3, "list with commas and spaces");
        is_str(c->exclude_paths[1], "/snap/*", "glob kept");
        is_int(c->log_level, 7, "log level");
}

static void test_errors(void) {
        char longline[512];

        expect_error("unknown section", "[daemon]\nlog_level=info\n[bogus]\nx = 1\n", "test.conf:3:", "[bogus]");
        expect_error("unknown key", "[control]\nmax_clientz = 3\n", "test.conf:2:", "max_clientz");
        expect_error("bad duration", "[control]\n\nidle_timeout = 10x\n", "test.conf:3:", "idle_timeout");
        expect_error("bad size", "[control]\nmax_message_size = lots\n", "test.conf:2:", "max_message_size");
        expect_error("out of range", "[control]\nmax_clients = 0\n", "test.conf:2:", "allowed: 1 to 4096");
        expect_error("'#' after a value", "[control]\nmax_clients = 8 # eight\n", "test.conf:2:", "max_clients");
        expect_error("'#' as the value", "[mounts]\nexclude_paths =# none\n", "test.conf:2:", "exclude_paths");
        expect_error("duplicate key", "[control]\nmax_clients = 8\nmax_clients = 9\n", "test.conf:3:", "line 2");
        expect_error("key outside a section", "max_clients = 8\n", "test.conf:1:", "max_clients");
        expect_error("line without '='", "[control]\nmax_clients\n", "test.conf:2:", "key = value");
        expect_error("unterminated section", "[control\n", "test.conf:1:", "']'");
        expect_error("relative path", "[daemon]\nstate_dir = var/lib\n", "test.conf:2:", "state_dir");
        expect_error("relative exclude path", "[mounts]\nexclude_paths = /ok, rel\n", "test.conf:2:", "exclude_paths");
        expect_error("bad log level", "[daemon]\nlog_level = loud\n", "test.conf:2:", "log_level");
        expect_error("unknown group", "[control]\nsocket_group = no-such-group-xyz\n", "test.conf:2:", "no such group");
        expect_error("bad mode", "[control]\nsocket_mode = rw\n", "test.conf:2:", "socket_mode");
        expect_error("textfile mode out of range", "[export]\ntextfile_mode = 01644\n", "test.conf:2:", "textfile_mode");
        expect_error("rings out of order", "[store]\nrings = 1h:90d, 1min:6h\n", "test.conf:2:", "finest first");
        expect_error("rings that do not nest with the sampler interval",
                     "[sampler]\ninterval = 45s\n[store]\nrings = 1min:6h, 10min:7d\n", "test.conf:4:",
                     "not a multiple of [sampler] interval 45s");
        expect_error("a sampler interval the default rings do not nest with", "[sampler]\ninterval = 7s\n",
                     "test.conf:2:", "resolution 1min is not a multiple");

        memset(longline, 'x', sizeof longline);
        memcpy(longline, "[mounts]\nexclude_paths = /", 26);
        strcpy(longline + 300, " #\n");
        expect_error("a '#' at the end of a long line", longline, "test.conf:2:", "'#' after a value");

        {
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_strv_free_ char **errors = NULL;
                static const char nul[] = "[control]\nmax_clients = 8\0\n";

                ok(config_load_string("test.conf", nul, sizeof nul - 1, &c, &errors) == -EINVAL && errors &&
                           strstr(errors[0], "test.conf:2:") && strstr(errors[0], "NUL"),
                   "a NUL byte is reported with its line");
        }
        {
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_strv_free_ char **errors = NULL;

                ok(load("[control]\nmax_clients = x\n[mounts]\nrescan_delay = y\n", &c, &errors) == -EINVAL &&
                           strv_length(errors) == 2 && strstr(errors[0], ":2:") && strstr(errors[1], ":4:"),
                   "every error is reported, not just the first");
        }
        {
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_strv_free_ char **errors = NULL;

                ok(config_load("/nonexistent/atimed.conf", &c, &errors) == -ENOENT && !errors,
                   "a missing file is -ENOENT");
        }
}

/* A path's bytes, and the text --check-config prints, read back the same. */
static void check_reads_back(const struct config *c, const char *what) {
        _cleanup_(config_freep) struct config *c2 = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *out = config_print_string(c), *out2 = NULL;
        bool same = out && load(out, &c2, &errors) == 0 && c2->n_mounts == c->n_mounts;

        for (size_t i = 0; same && i < c->n_mounts; i++)
                same = streq(c->mounts[i].target, c2->mounts[i].target) &&
                       streq_ptr(c->mounts[i].probe_dir, c2->mounts[i].probe_dir) &&
                       c->mounts[i].needs_atime == c2->mounts[i].needs_atime && c->mounts[i].ignore == c2->mounts[i].ignore;
        out2 = c2 ? config_print_string(c2) : NULL;
        ok(same && streq_ptr(out, out2), "%s: --check-config's text reads back to the same paths and prints the same", what);
}

/* "/" and then components of 199 bytes (a directory name may have 255), to
 * 'len' bytes. */
static char *long_path(size_t len) {
        char *p = malloc(len + 1);

        for (size_t i = 0; p && i < len; i++)
                p[i] = i % 200 == 0 ? '/' : 'a' + (char) (i / 200 % 26);
        if (p)
                p[len] = 0;
        return p;
}

/* Issue 43: a section name past 50 bytes was cut by inih without a word,
 * and what it declared then guarded another path, or none. Every path is
 * kept whole, one of 4,000 bytes on one line too. */
static void test_long_paths(void) {
        static const char issue[] = "/srv/www/a-rather-long-directory-name-for-width/served-static-content";
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *lp = long_path(4000), *text = NULL, *out = NULL, *want = NULL;
        const struct mount_config *a, *b;

        if (!lp || asprintf(&text, "[mount:%s]\nneeds_atime = relatime\n\n[mount:%s]\nneeds_atime = strict\nignore = yes\n",
                            issue, lp) < 0 || asprintf(&want, "\n[mount:%s]\nneeds_atime = strict\nignore = yes\n", lp) < 0)
                abort();
        ok(load(text, &c, &errors) == 0, "a 69-byte and a 4,000-byte [mount:PATH] parse");
        if (!c)
                return;
        a = config_find_mount(c, issue);
        b = config_find_mount(c, lp);
        ok(a && a->needs_atime == NEED_RELATIME && a->declared && streq(a->declared->path, issue) &&
                   streq(a->declared->source, "test.conf:2"),
           "the issue's path: needs_atime declared for it whole, at test.conf:2");
        ok(!config_find_mount(c, "/srv/www/a-rather-long-directory-name-for-w"), "and not for its first 50 bytes");
        ok(b && b->needs_atime == NEED_STRICT && b->ignore && b->needs_atime_line == 5 && strlen(b->target) == 4000,
           "the 4,000-byte path: all of it, with its keys");
        out = config_print_string(c);
        ok(out && strstr(out, want), "printed whole");
        check_reads_back(c, "long paths");
        {
                _cleanup_(config_freep) struct config *d = NULL;
                _cleanup_free_ char *max = long_path(PATH_MAX - 1), *t = NULL, *esc = NULL;

                /* PATH_MAX - 1 bytes, each written as \xHH: a line of 16 K. */
                esc = malloc(4 * (PATH_MAX - 1) + 1);
                if (!max || !esc)
                        abort();
                for (size_t i = 0; i < PATH_MAX - 1; i++)
                        sprintf(esc + 4 * i, "\\x%02x", (unsigned char) max[i]);
                if (asprintf(&t, "[mount:%s]\nignore = yes\n", esc) < 0)
                        abort();
                ok(load(t, &d, &errors) == 0 && config_find_mount(d, max), "PATH_MAX - 1 bytes, all escaped: the same path");
        }
        free(lp);
        lp = long_path(PATH_MAX);
        free(text);
        if (!lp || asprintf(&text, "[daemon]\n[mount:%s]\nignore = yes\n", lp) < 0)
                abort();
        expect_error("a path of PATH_MAX bytes", text, "test.conf:2: [mount:/aaaa", "longer than a path can be");
}

/* Any bytes a mount point can hold, in the escaped form; printed in it. */
static void test_odd_paths(void) {
        static const char raw[] = "/srv/a b\\c]#;=\n\t\xff end\xe2\x80\xae ";
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *out = NULL;
        const struct mount_config *m, *p;

        ok(load("[mount:/srv/a b\\\\c\\x5d\\x23\\x3b=\\x0a\\x09\\xff\\040end\\xE2\\x80\\xae\\x20]\n"
                "needs_atime = relatime\n"
                "[mount:/p]\n"
                "probe_dir = /p/x\\x20\\x3b ; a comment after a blank\n",
                &c, &errors) == 0,
           "backslash, ']', '#', ';', '=', newline, tab, invalid UTF-8, bidi and blanks, escaped");
        if (!c)
                return;
        m = config_find_mount(c, raw);
        p = config_find_mount(c, "/p");
        ok(m && m->declared && streq(m->declared->path, raw), "the mount point's bytes, and needs_atime for them");
        ok(p && streq_ptr(p->probe_dir, "/p/x ;"), "probe_dir in the same form");
        out = config_print_string(c);
        ok(out && strstr(out, "\n[mount:/srv/a b\\\\c\\x5d\\x23\\x3b=\\x0a\\x09\\xff end\\xe2\\x80\\xae\\x20]\n"
                              "needs_atime = relatime\n") &&
                   strstr(out, "\n[mount:/p]\nprobe_dir = /p/x \\x3b\n"),
           "printed escaped, one form for each byte");
        ok(m && m->declared && strstr(m->declared->why, "[mount:/srv/a b\\\\c\\x5d"), "its why names the section as written");
        check_reads_back(c, "odd paths");

        expect_error("one mount written two ways: one section",
                     "[mount:/a b]\nneeds_atime = relatime\n[mount:/a\\040b]\nignore = yes\n[mount:/a\\x20b]\n"
                     "needs_atime = strict\n",
                     "test.conf:6: [mount:/a\\x20b] needs_atime: already set on line 2", NULL);
}

static void test_path_errors(void) {
        static const struct {
                const char *section, *why;
        } bad[] = {
                { "[mount:/srv/a\\qb]", "a backslash starts \\\\, \\xHH or \\OOO" },
                { "[mount:/srv/a\\x4]", "a backslash starts" },
                { "[mount:/srv/a\\]", "a backslash starts" },
                { "[mount:/srv/a\\400]", "a backslash starts" },
                { "[mount:/srv/a\\x00b]", "a path cannot hold a NUL byte" },
                { "[mount:/srv/a\\000]", "a path cannot hold a NUL byte" },
                { "[mount:/srv//a]", "as the kernel names it" },
                { "[mount:/srv/./a]", "as the kernel names it" },
                { "[mount:/srv/../a]", "as the kernel names it" },
                { "[mount:/srv/a/]", "no '/' at the end" },
                { "[mount:/srv/a\tb]", "a control character in a path is written as \\xHH" },
                { "[mount:/srv/a ]", "a blank that ends a path is written as \\x20" },
                { "[mount:/srv/a]b]", "unexpected text after section header" },
                { "[mount:srv]", "expected an absolute path, as in [mount:/srv]" },
                { "[mount:]", "expected an absolute path" },
                { "[mount:\\x2fsrv]", NULL }, /* an escaped '/' is a '/' */
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *text = NULL;

                if (asprintf(&text, "[daemon]\n%s\nneeds_atime = relatime\n", bad[i].section) < 0)
                        abort();
                if (bad[i].why)
                        expect_error(bad[i].section, text, "test.conf:2:", bad[i].why);
                else {
                        _cleanup_(config_freep) struct config *c = NULL;
                        _cleanup_strv_free_ char **errors = NULL;

                        ok(load(text, &c, &errors) == 0 && config_find_mount(c, "/srv"), "%s is /srv", bad[i].section);
                }
        }
        expect_error("a bad escape in probe_dir", "[mount:/p]\nprobe_dir = /p/\\z\n", "test.conf:2: [mount:/p] probe_dir:",
                     "a backslash starts");
        expect_error("a NUL byte in a path", "[mount:/p]\nprobe_dir = /p/\\000\n", "test.conf:2:", "NUL");
}

/* Whatever the length of a line, a name or a value, it is read whole or
 * refused with its line, and a message stays short. */
static void test_long_lines(void) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *v = long_path(20000), *text = NULL;

        if (!v || asprintf(&text, "[mounts]\nexclude_paths = %s /b\n", v) < 0)
                abort();
        ok(load(text, &c, &errors) == 0 && c && strv_length(c->exclude_paths) == 2 && streq(c->exclude_paths[0], v),
           "a 20,000-byte value is read whole");
        if (c)
                check_reads_back(c, "a long value");
        free(text);
        if (asprintf(&text, "[%s]\nx = 1\n", v) < 0)
                abort();
        strv_free(errors);
        errors = NULL;
        ok(load(text, &c, &errors) == -EINVAL && strv_length(errors) == 1 && strstr(errors[0], "test.conf:1: unknown section [/aaa") &&
                   strlen(errors[0]) < 160,
           "a 20,000-byte section name: refused, in a short message");
        strv_free(errors);
        errors = NULL;
        free(text);
        if (asprintf(&text, "[daemon]\n%s = 1\n", v) < 0)
                abort();
        ok(load(text, &c, &errors) == -EINVAL && strv_length(errors) == 1 && strstr(errors[0], "test.conf:2: [daemon] /aaa") &&
                   strstr(errors[0], "unknown key") && strlen(errors[0]) < 160,
           "a 20,000-byte key: refused, in a short message");
        {
                _cleanup_(config_freep) struct config *d = NULL;
                _cleanup_strv_free_ char **e = NULL;
                static const char nul[] = "[daemon]\n[mount:/a\0b]\nignore = yes\n[mount:/c]\nignore = x\0\n";

                ok(config_load_string("test.conf", nul, sizeof nul - 1, &d, &e) == -EINVAL && strv_length(e) == 2 &&
                           strstr(e[0], "test.conf:2:") && strstr(e[0], "NUL") && strstr(e[1], "test.conf:5:"),
                   "a NUL byte in a section name or a value: refused, with its line, each");
        }
        expect_error("a word that would start a comment once printed", "[mounts]\nexclude_fstypes = ext4,;xfs\n",
                     "test.conf:2:", "printable words");
        expect_error("a cost likewise", "[advisor]\ncosts = ext4:1:1,#x:1:1\n", "test.conf:2:", "fstype:usec:KiB");
}

/* inih reads the file behind a reader that hands it, by reference, what
 * it would cut or misread: section names past its 49 bytes, lines past its
 * buffer, a ';' after a blank in a section name. Each side of each limit
 * reads the same; inih's own rules (continued lines, comments) are not
 * the file's. */
static void test_inih_limits(void) {
        _cleanup_strv_free_ char **errors = NULL;

        /* Sections of 47 to 52 bytes ("mount:" and a path), values on
         * lines of 194 to 199 characters: inih holds 49 and 197. */
        for (size_t n = 47; n <= 52; n++) {
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_strv_free_ char **e = NULL;
                _cleanup_free_ char *path = long_path(n - 6), *text = NULL, *v = long_path(n + 131);
                size_t line = strlen("exclude_paths = ") + n + 131;

                if (!path || !v || asprintf(&text, "[mount:%s]\nignore = yes\n[mounts]\nexclude_paths = %s\n", path, v) < 0)
                        abort();
                ok(load(text, &c, &e) == 0 && c->n_mounts == 1 && streq(c->mounts[0].target, path) &&
                           c->mounts[0].ignore && strv_length(c->exclude_paths) == 1 && streq(c->exclude_paths[0], v),
                   "a section name of %zu bytes and a line of %zu characters: whole", n, line);
        }
        {
                _cleanup_(config_freep) struct config *c = NULL;
                _cleanup_free_ char *v = long_path(300), *text = NULL;

                if (!v || asprintf(&text, "[mount:/srv/a ;b]\nneeds_atime = relatime\n"
                                          "[control]\nmax_clients: 9\n  idle_timeout = 90s\n"
                                          "[export]\ntextfile =; a comment\n"
                                          "[probe]\ndir = \001""0\n"
                                          "[mounts]\nexclude_paths = %s ; a comment\n", v) < 0)
                        abort();
                ok(load(text, &c, &errors) == 0, "the file's own rules, where inih has others, parse");
                ok(c && config_find_mount(c, "/srv/a ;b"), "a ';' after a blank in a section name is part of it");
                ok(c && c->max_clients == 9 && c->idle_timeout_usec == 90 * USEC_PER_SEC,
                   "'key: value', and an indented line is a key, not the value before it continued");
                ok(c && !c->textfile, "a ';' at the start of a value starts a comment");
                ok(c && streq_ptr(c->probe_dir, "\001""0"), "a value starting with a control character is itself");
                ok(c && strv_length(c->exclude_paths) == 1 && streq(c->exclude_paths[0], v),
                   "a comment after a long value is no part of it");
        }
        expect_error("a section named with a control character", "[\001""0]\nx = 1\n", "test.conf:1:", "unknown section [?0]");
        expect_error("a key of 300 bytes, with a value", "[daemon]\nlog_level_and_then_some_more_words_for_width_"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa = info\n",
                     "test.conf:2: [daemon] log_level_and_then", "unknown key");
}

int main(void) {
        test_defaults();
        test_good();
        test_errors();
        test_every_key();
        test_typed();
        test_declared();
        test_costs_round_trip();
        test_long_paths();
        test_odd_paths();
        test_path_errors();
        test_long_lines();
        test_inih_limits();
        return tap_done();
}
