/* cli.c: atimectl's shared helpers (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chart.h"
#include "escape.h"
#include "metrics.h"
#include "path-util.h"
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
        _cleanup_(report_freep) Report *e = error_params(params);

        if (streq_ptr(error, ERROR_NO_SUCH_MOUNT) && e && e->error.target)
                return fail("no tracked mount at %s.", escape_tmp(e->error.target));
        if (streq_ptr(error, ERROR_PERMISSION_DENIED))
                return fail("permission denied: this needs root.");
        if (streq_ptr(error, ERROR_REPLY_BUDGET_EXCEEDED) && e && e->error.reason)
                return fail("atimed refused: %s (other programs of this user have not read their replies; "
                            "see user_reply_memory in atimed.conf(5)).",
                            escape_tmp(e->error.reason));

        /* Any other error: its parameters as they came, whatever they are
         * (json-c's foreach dereferences what is no object: as JSON text). */
        fprintf(stderr, "atimectl: %s", error ? escape_tmp(error) : "error");
        if (json_object_is_type(params, json_type_object)) {
                json_object_object_foreach(params, key, val)
                        fprintf(stderr, " %s=%s", escape_tmp(key), escape_tmp(json_object_get_string(val)));
        } else if (params)
                fprintf(stderr, " %s", escape_tmp(json_object_get_string(params)));
        fputc('\n', stderr);
        return EXIT_FAIL;
}

/* "/srv//www/" -> "/srv/www", without touching the filesystem: a stat()
 * on a hung NFS or stopped FUSE mount would hang atimectl itself. */
void normalize_path(const char *in, char *out, size_t len) {
        snprintf(out, len, "%s", in);
        path_simplify(out);
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

static bool root_server_required = false;

void require_root_server(void) {
        root_server_required = true;
}

/* Who serves the socket at path, connected on fd: SO_PEERCRED gives the
 * credentials of the process that listened on it (PID 1, root, under
 * socket activation; atimed itself runs as root). A change to the system
 * rests on a server run by root alone: another user's (a socket named by
 * ATIMED_SOCKET or --socket in an environment root inherited) could advise
 * anything and list no reader of atime. A command that changes nothing
 * may ask any server, and says whose it is. */
static int check_server(int fd, const char *path) {
        static bool said = false;
        struct ucred uc = {};
        socklen_t l = sizeof uc;
        const struct passwd *pw;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) < 0) {
                if (!root_server_required)
                        return EXIT_OK;
                return fail("cannot tell who serves %s (%s); atimectl changes nothing on the word of an unknown "
                            "server.", escape_name_tmp(path), strerror(errno));
        }
        if (uc.uid == 0)
                return EXIT_OK;
        pw = getpwuid(uc.uid);
        if (root_server_required)
                return fail("%s is served by uid %u (%s), not by root: atimectl changes nothing on its word.",
                            escape_name_tmp(path), (unsigned) uc.uid, pw ? escape_tmp(pw->pw_name) : "no such user");
        if (!said)
                fprintf(stderr, "atimectl: %s is served by uid %u (%s), not by root.\n", escape_name_tmp(path),
                        (unsigned) uc.uid, pw ? escape_tmp(pw->pw_name) : "no such user");
        said = true;
        return EXIT_OK;
}

/* Calls 'method'; on failure prints one line and returns EXIT_FAIL. */
static int call_full(const char *method, json_object *params, json_object **ret, char **ret_error) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *error = NULL;
        _cleanup_json_ json_object *reply = NULL;
        const char *path = socket_path();
        int r;

        r = varlink_connect(path, &fd);
        if (r == -ENOENT || r == -ECONNREFUSED) {
                json_object_put(params);
                return fail("atimed is not running (nothing listens on %s).", escape_name_tmp(path));
        }
        if (r == -EACCES) {
                json_object_put(params);
                return fail("permission denied connecting to %s.", escape_name_tmp(path));
        }
        if (r < 0) {
                json_object_put(params);
                return fail("cannot connect to %s: %s", escape_name_tmp(path), strerror(-r));
        }
        r = check_server(fd, path);
        if (r != EXIT_OK) {
                json_object_put(params);
                return r;
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
        if (r == -EMSGSIZE || r == -E2BIG)
                return fail("the reply to %s is too large (over %u MiB, or %u values), not read.", method,
                            MAX_REPLY >> 20, MAX_REPLY / VARLINK_REPLY_BYTES_PER_VALUE);
        if (r == -EBADMSG || r == -ENOTUNIQ || r == -EILSEQ)
                /* Not JSON, too deep, a key twice, a NUL in a string. */
                return fail_parse(method, -EBADMSG);
        if (r < 0)
                return fail("%s failed: %s", method, strerror(-r));
        *ret = TAKE_PTR(reply);
        return EXIT_OK;
}

int call_error(const char *method, json_object *params, json_object **ret, char **ret_error) {
        return call_full(method, params, ret, ret_error);
}


int print_json(json_object *o) {
        /* C1 and bidi controls as \uHHHH: the same JSON, harmless on a terminal. */
        _cleanup_free_ char *safe =
                escape_json_text(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));

        if (!safe)
                return fail("out of memory");
        puts(safe);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}

void print_text(FILE *f, const char *s) {
        if (!*s)
                fputc('\n', f); /* an empty text: one empty line, as before */
        while (*s) {
                size_t len = strcspn(s, "\n");
                _cleanup_free_ char *line = strndup(s, len);

                fprintf(f, "%s\n", line ? escape_tmp(line) : "?");
                s += len + (s[len] == '\n');
        }
}

int print_metrics(FILE *f, const Report *r, bool terminal) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *m;
        int q;

        if (!terminal)
                return metrics_write(f, r);
        m = open_memstream(&buf, &len);
        if (!m)
                return -ENOMEM;
        q = metrics_write(m, r);
        if (fclose(m) != 0 && q >= 0)
                q = -ENOMEM;
        if (q >= 0)
                print_text(f, buf);
        return q;
}

Report *error_params(json_object *params) {
        Report *r = NULL;

        return report_from_error(params, &r) < 0 ? NULL : r;
}


int fail_parse(const char *method, int r) {
        if (r == -ENOMEM)
                return fail("out of memory");
        return fail("malformed reply from atimed to %s.", method);
}

int show_reply(int r, json_object *reply, const char *method, int (*parse)(json_object *reply, Report **ret),
               int (*render)(const RenderContext *c, const Report *r), const RenderContext *c) {
        _cleanup_(report_freep) Report *rep = NULL;

        if (r != EXIT_OK)
                return r;
        if (arg_json)
                return print_json(reply);
        r = parse(reply, &rep);
        if (r < 0)
                return fail_parse(method, r);
        if (render(c, rep) < 0)
                return fail("out of memory");
        return fflush(c->out) == 0 ? EXIT_OK : EXIT_FAIL;
}

/* The terminal's width: $COLUMNS, else the tty's, else 80. */
static size_t terminal_width(void) {
        struct winsize ws;
        const char *c = getenv("COLUMNS");

        if (c && atoi(c) > 0)
                return (size_t) atoi(c);
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
                return ws.ws_col;
        return 80;
}

RenderContext cli_render_context(void) {
        return (RenderContext) { .out = stdout, .err = stderr, .unicode = chart_unicode(), .legend = arg_legend,
                                 .full = arg_full, .width = terminal_width(), .fstab = FSTAB_DEFAULT };
}


#define RESOLVE_TIMEOUT_MSEC 3000

pid_t fork_with_pipe(int *ret_fd) {
        int pipefd[2];
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                safe_close(pipefd[0]);
                safe_close(pipefd[1]);
                return -errno;
        }
        if (pid == 0) {
                safe_close(pipefd[0]);
                *ret_fd = pipefd[1];
                return 0;
        }
        safe_close(pipefd[1]);
        *ret_fd = pipefd[0];
        return pid;
}

/* The child of realpath_deadline(): the answer on fd, "P<path>" or "E<errno>". */
_noreturn_ static void realpath_child(const char *path, int fd) {
        char r[PATH_MAX];
        int e = realpath(path, r) ? 0 : errno;

        if (e)
                dprintf(fd, "E%d", e);
        else
                dprintf(fd, "P%s", r);
        _exit(0);
}

/* What the child writes to fd until it closes it, NUL-terminated in buf; -ETIMEDOUT (the child killed) if
 * nothing comes for RESOLVE_TIMEOUT_MSEC. */
static int read_child_answer(int fd, pid_t pid, char *buf, size_t size) {
        size_t got = 0;
        int status;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, RESOLVE_TIMEOUT_MSEC) <= 0) {
                        kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -ETIMEDOUT;
                }
                n = read(fd, buf + got, size - 1 - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                got += (size_t) n;
        }
        buf[got] = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return 0;
}

/* realpath() in a child with a deadline: a path through a filesystem that
 * does not answer must not hang atimectl. */
static int realpath_deadline(const char *path, char *ret, size_t len) {
        _cleanup_close_ int rfd = -1;
        char buf[PATH_MAX + 16];
        pid_t pid;
        int r;

        pid = fork_with_pipe(&rfd);
        if (pid < 0)
                return pid;
        if (pid == 0)
                realpath_child(path, rfd);
        r = read_child_answer(rfd, pid, buf, sizeof buf);
        if (r < 0)
                return r;
        if (buf[0] == 'E')
                return -atoi(buf + 1);
        if (buf[0] != 'P' || strlen(buf + 1) >= len)
                return -EIO;
        strcpy(ret, buf + 1);
        return 0;
}

int mount_table_live(struct libmnt_table **ret) {
        struct libmnt_table *tb = mnt_new_table();
        int r;

        if (!tb)
                return -ENOMEM;
        r = mnt_table_parse_file(tb, "/proc/self/mountinfo");
        if (r < 0) {
                mnt_unref_table(tb);
                return r;
        }
        *ret = tb;
        return 0;
}

int resolve_mount(const char *path, char *ret, size_t len) {
        struct libmnt_table *tb;
        char real[PATH_MAX];
        int r;

        r = realpath_deadline(path, real, sizeof real);
        if (r < 0)
                return r;
        r = mount_table_live(&tb);
        if (r < 0)
                return r;
        /* Up from the path to the nearest mount point; the top mount there. */
        for (char *slash; r == 0;) {
                struct libmnt_fs *fs = mnt_table_find_target(tb, real, MNT_ITER_BACKWARD);

                if (fs) {
                        r = strlen(real) < len ? 0 : -ENAMETOOLONG;
                        if (r == 0)
                                strcpy(ret, real);
                        break;
                }
                if (streq(real, "/")) {
                        r = -ENOENT;
                        break;
                }
                slash = strrchr(real, '/');
                if (slash == real)
                        slash[1] = 0;
                else
                        *slash = 0;
        }
        mnt_unref_table(tb);
        return r < 0 ? r : 0;
}

int call_target(const char *method, const char *path, json_object *extra, json_object **ret, char *target,
                size_t len, char **ret_error) {
        char asked[PATH_MAX];
        const char *reason;
        int r;

        normalize_path(path, asked, sizeof asked);
        snprintf(target, len, "%s", asked);
        for (unsigned attempt = 0;; attempt++) {
                _cleanup_json_ json_object *reply = NULL;
                _cleanup_(report_freep) Report *e = NULL;
                _cleanup_free_ char *error = NULL;
                json_object *params = NULL;
                char resolved[PATH_MAX];

                if (extra ? json_object_deep_copy(extra, &params, NULL) < 0 : !(params = json_object_new_object()))
                        return fail("out of memory");
                json_object_object_add(params, F_TARGET, varlink_name_new(target));
                r = call_error(method, params, &reply, &error);
                if (r == EXIT_OK) {
                        *ret = TAKE_PTR(reply);
                        return EXIT_OK;
                }
                if (!error)
                        return r;
                if (!streq(error, ERROR_NO_SUCH_MOUNT) && ret_error) {
                        *ret_error = TAKE_PTR(error);
                        *ret = TAKE_PTR(reply);
                        return EXIT_FAIL;
                }
                if (!streq(error, ERROR_NO_SUCH_MOUNT))
                        return fail_remote(error, reply);
                /* Not a tracked mount point: the mount that holds the path,
                 * as findmnt -T finds it. */
                if (attempt == 0 && resolve_mount(asked, resolved, sizeof resolved) == 0 && !streq(resolved, target)) {
                        snprintf(target, len, "%s", resolved);
                        continue;
                }
                e = error_params(reply);
                reason = e ? e->error.reason : NULL;
                if (streq(asked, target))
                        return reason ? fail("atimed does not track the mount at %s: %s.", escape_name_tmp(target),
                                             escape_tmp(reason))
                                      : fail("no tracked mount at %s.", escape_name_tmp(target));
                return reason ? fail("%s is on the mount at %s, which atimed does not track: %s.", escape_name_tmp(asked),
                                     escape_name_tmp(target), escape_tmp(reason))
                              : fail("%s is on the mount at %s, which atimed does not track.", escape_name_tmp(asked),
                                     escape_name_tmp(target));
        }
}

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
