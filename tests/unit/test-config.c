/* test-config: the config module against good and broken files. Every
 * error must name file:line and the key. */
#include <errno.h>
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
        strcpy(longline + 300, "\n");
        expect_error("an overlong line inih would truncate", longline, "test.conf:2:", "limit");

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

int main(void) {
        test_defaults();
        test_good();
        test_errors();
        return tap_done();
}
