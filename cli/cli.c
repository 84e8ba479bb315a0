/* cli.c: atimectl's shared helpers (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "varlink.h"

#define CALL_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define MAX_REPLY (256U * 1024 * 1024)

const char *arg_socket = NULL;
bool arg_json = false;
bool arg_legend = true;
bool arg_full = false;
bool arg_force = false;
bool arg_write = false;
bool arg_check = false;
const char *arg_output = NULL;
const char *arg_file = NULL;
char **arg_set = NULL;
uint64_t arg_since_usec = 6 * 3600 * USEC_PER_SEC;
uint64_t arg_resolution_usec = 0;

int fail(const char *fmt, ...) {
        va_list ap;

        fputs("atimectl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return EXIT_FAIL;
}

/* One line for an error reply: its name, then its parameters. */
int fail_remote(const char *error, json_object *params) {
        json_object *v;

        if (streq_ptr(error, ERROR_NO_SUCH_MOUNT) && json_object_object_get_ex(params, F_TARGET, &v))
                return fail("no tracked mount at %s.", json_object_get_string(v));
        if (streq_ptr(error, ERROR_PERMISSION_DENIED))
                return fail("permission denied: this needs root.");

        fprintf(stderr, "atimectl: %s", error ? error : "error");
        json_object_object_foreach(params, key, val)
                fprintf(stderr, " %s=%s", key, json_object_get_string(val));
        fputc('\n', stderr);
        return EXIT_FAIL;
}

/* "/srv//www/" -> "/srv/www", without touching the filesystem: a stat()
 * on a hung NFS or stopped FUSE mount would hang atimectl itself. */
void normalize_path(const char *in, char *out, size_t len) {
        size_t o = 0;

        for (const char *p = in; *p && o + 1 < len; p++) {
                if (*p == '/' && o > 0 && out[o - 1] == '/')
                        continue;
                out[o++] = *p;
        }
        while (o > 1 && out[o - 1] == '/')
                o--;
        out[o] = 0;
}

static const char *socket_path(void) {
        const char *e;

        if (arg_socket)
                return arg_socket;
        e = getenv(ATIMED_SOCKET_ENV);
        return e && *e ? e : ATIMED_SOCKET_DEFAULT;
}

int call(const char *method, json_object *params, json_object **ret) {
        return call_error(method, params, ret, NULL);
}

/* Calls 'method'; on failure prints one line and returns EXIT_FAIL. */
int call_error(const char *method, json_object *params, json_object **ret, char **ret_error) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *error = NULL;
        _cleanup_json_ json_object *reply = NULL;
        const char *path = socket_path();
        int r;

        r = varlink_connect(path, &fd);
        if (r == -ENOENT || r == -ECONNREFUSED) {
                json_object_put(params);
                return fail("atimed is not running (nothing listens on %s).", path);
        }
        if (r == -EACCES) {
                json_object_put(params);
                return fail("permission denied connecting to %s.", path);
        }
        if (r < 0) {
                json_object_put(params);
                return fail("cannot connect to %s: %s", path, strerror(-r));
        }

        r = varlink_call(fd, method, params, CALL_TIMEOUT_USEC, MAX_REPLY, &reply, &error);
        if (r == -EBADR && ret_error) {
                *ret_error = TAKE_PTR(error);
                *ret = TAKE_PTR(reply);
                return EXIT_FAIL;
        }
        if (r == -EBADR)
                return fail_remote(error, reply);
        if (r == -ETIMEDOUT)
                return fail("atimed did not answer within %llus.", (unsigned long long) (CALL_TIMEOUT_USEC / USEC_PER_SEC));
        if (r == -ECONNRESET)
                return fail("atimed closed the connection without answering.");
        if (r < 0)
                return fail("%s failed: %s", method, strerror(-r));
        *ret = TAKE_PTR(reply);
        return EXIT_OK;
}

int print_json(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

const char *get_str(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

bool get_bool(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

bool get_double(json_object *o, const char *key, double *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return false;
        *ret = json_object_get_double(v);
        return true;
}

