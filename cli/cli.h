/* cli.h: what atimectl's commands share: the connection to atimed, failure
 * messages with the documented exit statuses, and reading replies. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "render.h"
#include "report.h"

/* Exit statuses, documented in atimectl(8). */
enum {
        EXIT_OK = 0,
        EXIT_FAIL = 1,  /* daemon unreachable, error reply, I/O error, refused change */
        EXIT_USAGE = 2, /* bad command line */
        EXIT_CHANGE = 3, /* fstab --check: the file would change */
};

/* The command line, parsed once for every command (options may come
 * anywhere on the line, as with systemctl). */
extern const char *arg_socket;
extern bool arg_json;
extern bool arg_legend;
extern bool arg_full;
extern bool arg_force;
extern bool arg_write;
extern bool arg_check;
extern const char *arg_output;
extern const char *arg_file;
extern char **arg_set;            /* "MOUNT=POLICY", strv */
extern uint64_t arg_since_usec;
extern uint64_t arg_resolution_usec; /* 0: the daemon's choice */

/* Prints "atimectl: ..." on stderr; returns EXIT_FAIL. */
int fail(const char *fmt, ...) _printf_(1, 2);
/* Calls 'method' (consuming params); on failure prints one line and returns
 * EXIT_FAIL, else EXIT_OK with the reply's parameters in *ret. */
int call(const char *method, json_object *params, json_object **ret);
/* The same, but an error reply is not printed: its name in *ret_error, its
 * parameters in *ret, and EXIT_FAIL. */
int call_error(const char *method, json_object *params, json_object **ret, char **ret_error);
/* From now on, every call is answered only by a server run by root:
 * before a command changes the system on what atimed says (remount,
 * fstab --set or --write, reload), it calls this, and a call to a socket
 * that another user serves (SO_PEERCRED) fails, naming the socket and its
 * owner. Without it, a call to such a server goes ahead, and says once on
 * stderr whose server it is. */
void require_root_server(void);
/* Prints an error reply as call() does; returns EXIT_FAIL. */
int fail_remote(const char *error, json_object *params);
int print_json(json_object *o);
/* Text from atimed (an interface description) to f, line by line, each
 * line's controls escaped (escape.h) so it cannot drive the terminal; a
 * final newline added where it has none. */
void print_text(FILE *f, const char *s);
/* The Prometheus text of r to f; for a terminal ('terminal'), through
 * print_text(), as ls(1) shows names: a label holds any name a user chose
 * (a FUSE mount at "/tmp/\e]0;..."), and the format lets controls through. */
int print_metrics(FILE *f, const Report *r, bool terminal);

/* A reply that report_from_*() could not read (-EBADMSG, -ENOMEM): says
 * so, naming the method; EXIT_FAIL. */
int fail_parse(const char *method, int r);
/* A reply a command shows, once called (r: the call's exit status, printed
 * already if not EXIT_OK, which it returns): with --json as it came, else
 * read by parse and written by render in c. EXIT_OK, or EXIT_FAIL said why. */
int show_reply(int r, json_object *reply, const char *method, int (*parse)(json_object *reply, Report **ret),
               int (*render)(const RenderContext *c, const Report *r), const RenderContext *c);
/* What a command renders in (render.h): stdout and stderr, the terminal's
 * width ($COLUMNS, else the tty's, else 80) and charset, the options. */
RenderContext cli_render_context(void);
/* The parameters of an error reply, parsed (report_from_error()); NULL
 * if memory ran out. The caller frees it. */
Report *error_params(json_object *params);

/* The kernel's mount table (/proc/self/mountinfo), parsed by libmount; the
 * caller unrefs it. -ENOMEM, or libmount's error. */
struct libmnt_table;
int mount_table_live(struct libmnt_table **ret);

/* The mount point of the mount that holds path (symlinks resolved, the top
 * mount where several are stacked), as findmnt -T finds it. -errno. */
int resolve_mount(const char *path, char *ret, size_t len);
/* Calls a method about one mount: the one at path, else the one that
 * holds it. 'extra' (kept) holds the other parameters; the target used in
 * 'target'. Failures printed, with why a mount is not tracked; with
 * ret_error, other error replies are returned as call_error() does. */
int call_target(const char *method, const char *path, json_object *extra, json_object **ret, char *target,
                size_t len, char **ret_error);

#define FSTAB_DEFAULT "/etc/fstab"
/* Drift: 1 and a sentence in buf when the live atime policy of the mount
 * at target differs from its fstab entry (either way), 0 when it does not
 * or fstab has no entry for it, -ENOMEM. */
int fstab_drift(const char *fstab, const char *target, const char *live_atime, bool live_lazytime, char *buf,
                size_t len);

/* fork() with a pipe from the child to the parent: in the parent the child's
 * pid and the read end in *ret_fd, in the child 0 and the write end. Both
 * ends are O_CLOEXEC. -errno. */
pid_t fork_with_pipe(int *ret_fd);

/* "/srv//www/" -> "/srv/www" without touching the filesystem. */
void normalize_path(const char *in, char *out, size_t len);

/* The guard of a change of the atime policy of the mount at target (raw
 * bytes) to 'atime' (NULL: the atime policy stays, nothing to check):
 * EXIT_OK to go ahead; EXIT_FAIL, said why, when a reader of atime there
 * needs more, or when who reads atime there cannot be asked of atimed or
 * its answer cannot be read. --force goes ahead in both cases, saying what
 * it overrides or did not check (guard.c). */
int guard_atime_readers(const char *target, const char *atime);

/* The commands that advise and change (change.c). */
int cmd_recommend(int argc, char **argv);
int cmd_fstab(int argc, char **argv);
int cmd_remount(int argc, char **argv);
