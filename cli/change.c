/* change.c: atimectl's commands that advise and change: recommend (what
 * atimed advises, with the evidence), fstab (the change to /etc/fstab that
 * applies it, as a diff, written safely on request) and remount (apply it to
 * the live mount now). Changing things is atimectl's job, run by root: the
 * daemon itself never gets the privilege to remount. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "escape.h"
#include "fileio.h"
#include "fstab.h"
#include "protocol.h"
#include "report.h"
#include "strv.h"
#include "varlink.h"

#define FSTAB_MAX (16U * 1024 * 1024)

/* An atime policy as a user writes it: "noatime", "relatime,lazytime",
 * "nolazytime". */
struct policy_spec {
        const char *atime; /* "noatime", "relatime", "strictatime", or NULL: leave alone */
        int lazytime;      /* 1, 0, or -1: leave alone */
        int nodiratime;    /* 1: add nodiratime, or -1: leave alone */
};

#define POLICY_HELP                                                                                  \
        "A POLICY is noatime, relatime or strictatime, optionally with nodiratime, lazytime or nolazytime " \
        "(such as relatime,lazytime or relatime,nodiratime), or those alone."

static int parse_policy(const char *s, struct policy_spec *ret) {
        _cleanup_strv_free_ char **l = NULL;
        struct policy_spec p = { .lazytime = -1, .nodiratime = -1 };

        if (strv_split(s, ",", &l) < 0)
                return -ENOMEM;
        if (strv_length(l) == 0)
                return -EINVAL;
        STRV_FOREACH(o, l) {
                if (streq(*o, "noatime") || streq(*o, "relatime") || streq(*o, "strictatime")) {
                        if (p.atime)
                                return -EINVAL;
                        p.atime = streq(*o, "noatime") ? "noatime" : streq(*o, "relatime") ? "relatime" : "strictatime";
                } else if (streq(*o, "nodiratime"))
                        p.nodiratime = 1;
                else if (streq(*o, "lazytime"))
                        p.lazytime = 1;
                else if (streq(*o, "nolazytime"))
                        p.lazytime = 0;
                else
                        return -EINVAL;
        }
        *ret = p;
        return 0;
}

static void format_spec(const struct policy_spec *p, char *buf, size_t len) {
        const char *lazy = p->lazytime == 1 ? "lazytime" : p->lazytime == 0 ? "nolazytime" : NULL;
        const char *dir = p->nodiratime == 1 ? "nodiratime" : NULL;

        snprintf(buf, len, "%s%s%s%s%s", p->atime ? p->atime : "", p->atime && dir ? "," : "", dir ? dir : "",
                 (p->atime || dir) && lazy ? "," : "", lazy ? lazy : "");
}

/* The options that take mount(8) to the policy from whatever the mount has
 * now: it adds them to the mount's own, and relatime clears no noatime
 * there (the kernel keeps noatime where both are asked), so "atime" comes
 * first. strictatime clears noatime itself. */
static void format_remount_options(const struct policy_spec *p, char *buf, size_t len) {
        char spec[64];

        format_spec(p, spec, sizeof spec);
        snprintf(buf, len, "%s%s", p->atime && streq(p->atime, "relatime") ? "atime," : "", spec);
}

/* The advice for the mount holding path (its mount point in 'target'), or
 * for all (path NULL), as atimed gives it. */
static int get_recommendations(const char *path, json_object **ret, char *target, size_t len) {
        if (path)
                return call_target(METHOD_GET_RECOMMENDATIONS, path, NULL, ret, target, len, NULL);
        return call(METHOD_GET_RECOMMENDATIONS, NULL, ret);
}

/* The change a recommendation stands for; false if it advises keeping. */
static bool spec_of(const ReportAdvice *a, struct policy_spec *ret) {
        const char *ca = a->current_atime, *wa = a->recommended_atime;

        if (!a->change || !wa)
                return false;
        *ret = (struct policy_spec) {
                .atime = ca && streq(ca, wa) ? NULL
                         : streq(wa, "noatime") ? "noatime"
                         : streq(wa, "relatime") ? "relatime"
                                                 : "strictatime",
                .lazytime = a->current_lazytime == a->recommended_lazytime ? -1 : a->recommended_lazytime,
                .nodiratime = a->recommended_nodiratime && !a->current_nodiratime ? 1 : -1,
        };
        return ret->atime || ret->lazytime >= 0 || ret->nodiratime == 1;
}

/* The advice for the mount holding path (its mount point in 'target'), or
 * for all (path NULL), parsed: one mount each. */
static int get_advice(const char *path, Report **ret, char *target, size_t len) {
        _cleanup_json_ json_object *reply = NULL;
        int r;

        r = get_recommendations(path, &reply, target, len);
        if (r != EXIT_OK)
                return r;
        r = report_from_recommendations(reply, ret);
        return r < 0 ? fail_parse(METHOD_GET_RECOMMENDATIONS, r) : EXIT_OK;
}

static bool has_opt(const char *optstr, const char *name);

/* ---------------------------------------------------------------- recommend */

int cmd_recommend(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        RenderContext c = cli_render_context();
        char target[PATH_MAX];
        int r;

        r = get_recommendations(argc > 1 ? argv[1] : NULL, &reply, target, sizeof target);
        return show_reply(r, reply, METHOD_GET_RECOMMENDATIONS, report_from_recommendations, render_recommendations, &c);
}

/* ---------------------------------------------------------------- fstab */


/* systemd's unit name for a mount point (systemd-escape --path). */
static void mount_unit_name(const char *target, char *buf, size_t len) {
        size_t o = 0;
        const char *p = target;

        while (*p == '/')
                p++;
        if (!*p) {
                snprintf(buf, len, "-.mount");
                return;
        }
        for (; *p && o + 5 < len; p++) {
                unsigned char c = (unsigned char) *p;

                if (c == '/') {
                        if (p[1] && p[1] != '/')
                                buf[o++] = '-';
                } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
                           c == '_' || (c == '.' && o > 0))
                        buf[o++] = (char) c;
                else
                        o += (size_t) snprintf(buf + o, len - o, "\\x%02x", c);
        }
        snprintf(buf + o, len - o, ".mount");
}

/* Everything readable on fd until end of file, as a string (empty if memory runs out). */
static char *read_all(int fd) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        if (f) {
                char buf[4096];
                ssize_t n;

                while ((n = read(fd, buf, sizeof buf)) > 0)
                        fwrite(buf, 1, (size_t) n, f);
                fclose(f);
        }
        return out ? out : strdup("");
}

/* Runs argv in the C locale (what it prints is read by a program, not by
 * the operator: no translation, the summary in its one form); its stdout
 * and stderr in *ret. Returns its exit status, or -errno. */
static int run_capture(char *const *argv, char **ret) {
        _cleanup_close_ int fd = -1;
        int status;
        pid_t pid;

        pid = fork_with_pipe(&fd);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                dup2(fd, STDOUT_FILENO);
                dup2(fd, STDERR_FILENO);
                (void) setenv("LC_ALL", "C", 1);
                execvp(argv[0], argv);
                _exit(127);
        }
        *ret = read_all(fd);
        fd = safe_close(fd);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int write_temp(const char *text, size_t len, char *path_template) {
        _cleanup_close_ int fd = mkstemp(path_template);

        if (fd < 0)
                return -errno;
        if (write(fd, text, len) != (ssize_t) len)
                return -EIO;
        return 0;
}

/* Problems findmnt --verify finds in the new file that it does not find in
 * the old: the lines of its report on the new that the report on the old
 * lacks, and, where it exits with an error on the new file only (its exit
 * status counts errors, not warnings), that, whatever it printed. */
static int verify_with_findmnt(const char *old, size_t old_len, const char *new, size_t new_len, char **ret_new_issues) {
        char a[] = "/tmp/atimectl-fstab-old.XXXXXX", b[] = "/tmp/atimectl-fstab-new.XXXXXX";
        char findmnt[] = "findmnt", verify[] = "--verify", tab_file[] = "--tab-file";
        _cleanup_free_ char *out_a = NULL, *out_b = NULL;
        _cleanup_strv_free_ char **la = NULL, **lb = NULL, **added = NULL;
        int status_a, status_b = -1;

        *ret_new_issues = NULL;
        if (write_temp(old, old_len, a) < 0 || write_temp(new, new_len, b) < 0) {
                unlink(a);
                return -EIO;
        }
        status_a = run_capture((char *[]) { findmnt, verify, tab_file, a, NULL }, &out_a);
        if (status_a >= 0 && status_a != 127)
                status_b = run_capture((char *[]) { findmnt, verify, tab_file, b, NULL }, &out_b);
        unlink(a);
        unlink(b);
        if (status_a == 127 || status_b == 127)
                return -ENOENT; /* no findmnt */
        if (status_a < 0)
                return status_a;
        if (status_b < 0)
                return status_b;
        if (strv_split(out_a, "\n", &la) < 0 || strv_split(out_b, "\n", &lb) < 0)
                return -ENOMEM;
        STRV_FOREACH(l, lb) {
                /* The summary line counts, and the file names differ. */
                if (strstr(*l, "parse error") == NULL && (startswith(*l, "Success") || strstr(*l, " errors, ") ||
                                                          strstr(*l, "0 parse errors")))
                        continue;
                if (!strv_contains(la, *l) && strv_extend(&added, *l) < 0)
                        return -ENOMEM;
        }
        if (!added && status_b != 0 && status_a == 0) {
                char line[128];

                snprintf(line, sizeof line, "findmnt --verify fails on the new file (exit status %d), not on the old one",
                         status_b);
                if (strv_extend(&added, line) < 0)
                        return -ENOMEM;
        }
        *ret_new_issues = added ? strv_join(added, "\n") : NULL;
        return 0;
}

/* The new text must parse with libmount into as many entries as the old. */
static int verify_with_libmount(const char *old, size_t old_len, const char *new, size_t new_len) {
        int counts[2] = { -1, -1 };
        const char *texts[2] = { old, new };
        size_t lens[2] = { old_len, new_len };

        for (int i = 0; i < 2; i++) {
                struct libmnt_table *tb = mnt_new_table();
                struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
                struct libmnt_fs *fs;
                _cleanup_free_ char *copy = lens[i] ? memdup_str(texts[i], lens[i]) : NULL;
                FILE *f = copy ? fmemopen(copy, lens[i], "r") : NULL;
                int n = 0;

                if (tb && it && (f || lens[i] == 0) && (!f || mnt_table_parse_stream(tb, f, "fstab") == 0)) {
                        while (mnt_table_next_fs(tb, it, &fs) == 0)
                                n++;
                        counts[i] = n;
                }
                if (f)
                        fclose(f);
                mnt_free_iter(it);
                mnt_unref_table(tb);
        }
        if (counts[1] < 0)
                return -EBADMSG;
        return counts[0] == counts[1] ? 0 : -EBADMSG;
}

/* Whether something is mounted on target (the mount table, not stat():
 * a hung mount must not hang atimectl). */
static bool is_mounted(const char *target) {
        struct libmnt_table *tb;
        bool found;

        if (mount_table_live(&tb) < 0)
                return false;
        found = mnt_table_find_target(tb, target, MNT_ITER_BACKWARD) != NULL;
        mnt_unref_table(tb);
        return found;
}

/* The atime policy in force on a live mount, from its per-mount options. */
static const char *live_atime(const char *vfs) {
        return has_opt(vfs, "noatime") ? "noatime" : has_opt(vfs, "relatime") ? "relatime" : "strictatime";
}

/* Adds to *l, once, the drift of fstab entry fs from its live mount in
 * 'live', if it has one and they differ. */
static int add_drift(const char *path, struct libmnt_fs *fs, struct libmnt_table *live, char ***l) {
        const char *t = mnt_fs_get_target(fs), *vfs, *sb;
        struct libmnt_fs *m = t && *t == '/' ? mnt_table_find_target(live, t, MNT_ITER_BACKWARD) : NULL;
        char note[PATH_MAX * 4];

        if (!m)
                return 0;
        vfs = mnt_fs_get_vfs_options(m) ?: "";
        sb = mnt_fs_get_fs_options(m) ?: "";
        if (fstab_drift(path, t, live_atime(vfs), has_opt(sb, "lazytime"), note, sizeof note) > 0 &&
            !strv_contains(*l, note))
                return strv_extend(l, note);
        return 0;
}

/* The entries of the fstab at path whose mount's live atime policy differs
 * from what the entry says, as sentences (strv, NULL if none). A file or a
 * mount table that does not parse has none. */
static int fstab_drifts(const char *path, char ***ret) {
        struct libmnt_table *tab = mnt_new_table(), *live = NULL;
        struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
        struct libmnt_fs *fs;
        char **l = NULL;
        int r = 0;

        *ret = NULL;
        if (!tab || !it)
                r = -ENOMEM;
        else if (mnt_table_parse_fstab(tab, path) < 0)
                r = 0;
        else if ((r = mount_table_live(&live)) < 0)
                r = r == -ENOMEM ? r : 0;
        else
                while (r == 0 && mnt_table_next_fs(tab, it, &fs) == 0)
                        r = add_drift(path, fs, live, &l);
        mnt_free_iter(it);
        mnt_unref_table(tab);
        mnt_unref_table(live);
        if (r < 0) {
                strv_free(l);
                return r;
        }
        *ret = l;
        return 0;
}

static int print_fstab_json(const char *path, const struct fstab_result *res, const char *diff, bool written,
                            const char *backup, char **drifts) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *changes = json_object_new_array(), *nf = json_object_new_array(), *notes = json_object_new_array();
        json_object *dr = json_object_new_array();

        if (!o || !changes || !nf || !notes || !dr) {
                json_object_put(changes);
                json_object_put(nf);
                json_object_put(notes);
                json_object_put(dr);
                return fail("out of memory");
        }
        /* Names (mount points, options, notes that quote them) in the
         * protocol's form, as atimed's replies have them (escape.h). */
        STRV_FOREACH(d, drifts)
                json_object_array_add(dr, varlink_name_new(*d));
        json_object_object_add(o, "drift", dr);
        json_object_object_add(o, "file", varlink_name_new(path));
        json_object_object_add(o, "changed", json_object_new_boolean(res->n_changes > 0));
        json_object_object_add(o, "written", json_object_new_boolean(written));
        json_object_object_add(o, "backup", backup ? varlink_name_new(backup) : NULL);
        for (size_t i = 0; i < res->n_changes; i++) {
                json_object *c = json_object_new_object();

                json_object_object_add(c, F_TARGET, varlink_name_new(res->changes[i].target));
                json_object_object_add(c, "line", json_object_new_int((int) res->changes[i].line));
                json_object_object_add(c, "old_options", varlink_name_new(res->changes[i].old_options));
                json_object_object_add(c, "new_options", varlink_name_new(res->changes[i].new_options));
                json_object_array_add(changes, c);
        }
        json_object_object_add(o, "changes", changes);
        STRV_FOREACH(t, res->not_found)
                json_object_array_add(nf, varlink_name_new(*t));
        json_object_object_add(o, "not_found", nf);
        STRV_FOREACH(t, res->skipped)
                json_object_array_add(notes, varlink_name_new(*t));
        json_object_object_add(o, "notes", notes);
        json_object_object_add(o, "diff", json_object_new_string(diff));
        return print_json(o);
}

/* One change asked of fstab: a mount point and its policy, parsed once; the
 * policy's words as the user wrote them (or as the advice reads) are kept
 * only to be shown in messages. */
struct fstab_set {
        char *target; /* the raw mount point, normalised */
        struct policy_spec policy;
        char *words;
};

/* What `atimectl fstab` works on, from the command line to the write. */
struct fstab_job {
        const char *path; /* the file worked on: --file, or the file it links to */
        char real[PATH_MAX];
        struct fstab_set *sets;
        size_t n_sets;
        bool advised;     /* the sets are atimed's advice, not --set choices */
        char *text;       /* the file as read */
        size_t len;
        struct fstab_result res;
        char *diff;
        char **drifts;
        size_t missing;   /* sets that cannot be done, which stop a write */
};

static void fstab_job_done(struct fstab_job *job) {
        for (size_t i = 0; i < job->n_sets; i++) {
                free(job->sets[i].target);
                free(job->sets[i].words);
        }
        free(job->sets);
        free(job->text);
        fstab_result_done(&job->res);
        free(job->diff);
        strv_free(job->drifts);
}

/* Appends a set; takes target (NULL: out of memory already). -ENOMEM. */
static int job_add_set(struct fstab_job *job, char *target, const struct policy_spec *policy, const char *words) {
        struct fstab_set *n = realloc(job->sets, (job->n_sets + 1) * sizeof *n);
        char *w = strdup(words);

        if (!n || !w || !target) {
                free(target);
                free(w);
                if (n)
                        job->sets = n;
                return -ENOMEM;
        }
        job->sets = n;
        job->sets[job->n_sets++] = (struct fstab_set) { .target = target, .policy = *policy, .words = w };
        return 0;
}

/* One --set MOUNT=POLICY into the job. EXIT_USAGE, said why, for a malformed one. */
static int job_add_set_option(struct fstab_job *job, const char *set) {
        const char *eq = strchr(set, '=');
        _cleanup_free_ char *mount = NULL;
        struct policy_spec p;
        char t[PATH_MAX];

        if (!eq || set[0] != '/') {
                fprintf(stderr, "atimectl: --set %s: expected MOUNT=POLICY with an absolute MOUNT, such as "
                                "/srv=noatime or /var=relatime,lazytime.\n", set);
                return EXIT_USAGE;
        }
        if (parse_policy(eq + 1, &p) < 0) {
                fprintf(stderr, "atimectl: --set %s: '%s' is not a policy. %s\n", set, eq + 1, POLICY_HELP);
                return EXIT_USAGE;
        }
        mount = strndup(set, (size_t) (eq - set));
        if (!mount)
                return fail("out of memory");
        normalize_path(mount, t, sizeof t);
        if (job_add_set(job, strdup(t), &p, eq + 1) < 0)
                return fail("out of memory");
        return EXIT_OK;
}

/* The advised changes into the job; fstab holds the raw bytes, so each
 * target goes back from the protocol form. */
static int job_add_advice(struct fstab_job *job) {
        _cleanup_(report_freep) Report *rep = NULL;
        int r;

        r = get_advice(NULL, &rep, NULL, 0);
        if (r != EXIT_OK)
                return r;
        job->advised = true;
        for (size_t i = 0; i < rep->n_mounts; i++) {
                struct policy_spec p;
                char *raw = NULL;
                char s[64];

                if (!spec_of(&rep->mounts[i].advice, &p))
                        continue;
                format_spec(&p, s, sizeof s);
                if (name_unescape(rep->mounts[i].target, &raw) < 0 || job_add_set(job, raw, &p, s) < 0)
                        return fail("out of memory");
        }
        return EXIT_OK;
}

/* What to change: the --set choices, or else atimed's advice. */
static int job_plan(struct fstab_job *job) {
        int r;

        STRV_FOREACH(set, arg_set) {
                r = job_add_set_option(job, *set);
                if (r != EXIT_OK)
                        return r;
        }
        if (arg_write && geteuid() != 0)
                return fail("writing %s needs root.", job->path);
        if (job->n_sets > 0)
                return EXIT_OK;
        return job_add_advice(job);
}

/* Reads the file (a symlink's target, said so) and applies the sets to it.
 * --set choices are named: they reach swap and network lines too. */
static int job_edit(struct fstab_job *job) {
        _cleanup_free_ struct fstab_request *reqs = calloc(job->n_sets ? job->n_sets : 1, sizeof *reqs);
        int r;

        if (!reqs)
                return fail("out of memory");
        for (size_t i = 0; i < job->n_sets; i++)
                reqs[i] = (struct fstab_request) { .target = job->sets[i].target,
                                                   .atime = job->sets[i].policy.atime,
                                                   .lazytime = job->sets[i].policy.lazytime,
                                                   .nodiratime = job->sets[i].policy.nodiratime == 1,
                                                   .named = !job->advised };
        if (realpath(job->path, job->real) && !streq(job->real, job->path)) {
                if (!arg_json)
                        printf("%s is a symbolic link to %s; working on that.\n", job->path, job->real);
                job->path = job->real;
        }
        r = read_full_file(job->path, FSTAB_MAX, &job->text, &job->len);
        if (r < 0)
                return fail("cannot read %s: %s", job->path, strerror(-r));
        r = fstab_edit(job->text, job->len, reqs, job->n_sets, &job->res);
        if (r < 0)
                return fail("cannot edit %s: %s", job->path, strerror(-r));
        return EXIT_OK;
}

/* The lines left alone and why, and the drifts (only as text) on stderr. */
static int job_report_notes(struct fstab_job *job) {
        STRV_FOREACH(s, job->res.skipped)
                fprintf(stderr, "%s: %s\n", escape_name_tmp(job->path), escape_tmp(*s));
        if (fstab_drifts(job->path, &job->drifts) < 0)
                return fail("out of memory");
        if (!arg_json)
                STRV_FOREACH(d, job->drifts)
                        fprintf(stderr, "Drift: %s.\n", escape_tmp(*d));
        return EXIT_OK;
}

/* A set whose mount point has no line in the file: how to apply it anyway.
 * A --set choice for what is not even mounted is missing. */
static int job_report_not_found(struct fstab_job *job, const struct fstab_set *set) {
        _cleanup_free_ char *qt = NULL, *qu = NULL;
        char unit[PATH_MAX * 4], opts[72];

        if (!job->advised && !is_mounted(set->target)) {
                fprintf(stderr, "atimectl: %s is neither in %s nor mounted: nothing to change there.\n",
                        escape_name_tmp(set->target), escape_name_tmp(job->path));
                job->missing++;
                return EXIT_OK;
        }
        mount_unit_name(set->target, unit, sizeof unit);
        format_remount_options(&set->policy, opts, sizeof opts);
        /* Command lines to be copied: each name one quoted word. */
        qt = shell_quote(set->target);
        qu = shell_quote(unit);
        if (!qt || !qu)
                return fail("out of memory");
        fprintf(stderr,
                "%s is not in %s. Now: atimectl remount %s %s (or mount -o remount,%s %s). To make it last: "
                "add %s to Options= of its mount unit (systemctl edit %s), or give it a line in %s.\n",
                escape_name_tmp(set->target), escape_name_tmp(job->path), qt, set->words, opts, qt, set->words,
                qu, escape_name_tmp(job->path));
        job->missing += !job->advised;
        return EXIT_OK;
}

/* Without --write, with --check, with nothing to change or with a --set
 * that cannot be done: the diff (or JSON) and how to write it. Exit status:
 * EXIT_CHANGE for --check with changes, EXIT_FAIL for a missing set. */
static int job_show(struct fstab_job *job) {
        bool changes = job->res.n_changes > 0, named_default = streq(job->path, FSTAB_DEFAULT);
        int r = EXIT_OK;

        if (arg_json)
                r = print_fstab_json(job->path, &job->res, job->diff, false, NULL, job->drifts);
        else if (!changes)
                printf("Nothing to change in %s.\n", job->path);
        else {
                fputs(job->diff, stdout);
                if (!arg_check && !job->missing)
                        printf("\nTo write this: atimectl fstab%s%s --write%s\n", named_default ? "" : " --file ",
                               named_default ? "" : job->path, job->advised ? "" : " (with the same --set options)");
        }
        if (job->missing && arg_write && changes)
                fprintf(stderr, "atimectl: not every --set could be done; nothing written.\n");
        if (fflush(stdout) != 0)
                r = EXIT_FAIL;
        if (r == EXIT_OK && job->missing)
                r = EXIT_FAIL;
        if (r == EXIT_OK && arg_check && changes)
                r = EXIT_CHANGE;
        return r;
}

/* Checks before anything is written: the new text parses as the old one
 * does, and findmnt --verify finds no problem the old one did not have. */
static int job_verify(struct fstab_job *job) {
        _cleanup_free_ char *new_issues = NULL;
        int r;

        if (verify_with_libmount(job->text, job->len, job->res.text, job->res.len) < 0)
                return fail("the new %s does not parse as the old one does; nothing written.", job->path);
        r = verify_with_findmnt(job->text, job->len, job->res.text, job->res.len, &new_issues);
        if (r == -ENOENT)
                fprintf(stderr, "atimectl: findmnt not found; skipping findmnt --verify.\n");
        else if (r < 0)
                return fail("cannot run findmnt --verify: %s; nothing written.", strerror(-r));
        else if (new_issues) {
                fprintf(stderr, "%s\n", new_issues);
                return fail("findmnt --verify finds problems in the new %s that the old one does not have; nothing "
                            "written.", job->path);
        }
        return EXIT_OK;
}

/* Replaces the file (backup, atomic rename) and says where the old one is. */
static int job_write(struct fstab_job *job) {
        _cleanup_free_ char *backup = NULL;
        int r;

        r = fstab_write(job->path, job->text, job->len, job->res.text, job->res.len, NULL, &backup);
        if (r == -ESTALE)
                return fail("%s changed while atimectl was working on it; nothing written. Run it again.", job->path);
        if (r < 0)
                return fail("cannot write %s: %s", job->path, strerror(-r));
        if (arg_json)
                return print_fstab_json(job->path, &job->res, job->diff, true, backup, job->drifts);
        printf("\nWrote %s; the old one is %s. It applies at the next mount; to apply it now: atimectl "
               "remount MOUNT.\n",
               job->path, backup);
        /* systemd makes mount units of fstab at boot and on daemon-reload. */
        if (access("/run/systemd/system", F_OK) == 0)
                printf("systemd reads fstab into mount units: run systemctl daemon-reload.\n");
        return EXIT_OK;
}

/* Advice about to be written: each set that changes the file passes the
 * guard too. The advice weighs the readers of the mounts atimed tracks;
 * the guard's list (GetConsumers) holds every declaration wherever it
 * lies, and the advice may come from a server that answers both. */
static int job_guard_advice(struct fstab_job *job) {
        for (size_t i = 0; i < job->n_sets; i++) {
                bool changes = false;
                int r;

                for (size_t k = 0; k < job->res.n_changes; k++)
                        changes = changes || streq(job->res.changes[k].target, job->sets[i].target);
                if (changes && (r = guard_atime_readers(job->sets[i].target, job->sets[i].policy.atime)) != EXIT_OK)
                        return r;
        }
        return EXIT_OK;
}

int cmd_fstab(int argc, char **argv) {
        _cleanup_(fstab_job_done) struct fstab_job job = { .path = arg_file ? arg_file : FSTAB_DEFAULT };
        int r;

        if (arg_check && arg_write) {
                fprintf(stderr, "atimectl: fstab: --check and --write exclude each other.\n");
                return EXIT_USAGE;
        }
        /* --write acts on the advice, --set on the list of readers. */
        if (arg_write || arg_set)
                require_root_server();
        r = job_plan(&job);
        for (size_t i = 0; r == EXIT_OK && !job.advised && i < job.n_sets; i++)
                r = guard_atime_readers(job.sets[i].target, job.sets[i].policy.atime);
        if (r == EXIT_OK)
                r = job_edit(&job);
        if (r == EXIT_OK && job.advised && arg_write)
                r = job_guard_advice(&job);
        if (r == EXIT_OK)
                r = job_report_notes(&job);
        for (size_t i = 0; r == EXIT_OK && i < job.n_sets; i++)
                if (strv_contains(job.res.not_found, job.sets[i].target))
                        r = job_report_not_found(&job, &job.sets[i]);
        if (r != EXIT_OK)
                return r;
        if (fstab_diff(job.text, job.len, job.res.text, job.res.len, job.path,
                       arg_write ? job.path : "(with atimectl's changes)", &job.diff) < 0)
                return fail("out of memory");
        if (job.res.n_changes == 0 || arg_check || !arg_write || job.missing)
                return job_show(&job);
        if (!arg_json)
                fputs(job.diff, stdout);
        r = job_verify(&job);
        return r == EXIT_OK ? job_write(&job) : r;
}

/* ---------------------------------------------------------------- remount */

/* The options of a mount, from the kernel: the one with id 'id', or with
 * 'id' 0, the top one at target, its id in *id. */
static int current_options(const char *target, int *id, char **ret_vfs, char **ret_fs) {
        struct libmnt_table *tb = NULL;
        struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
        struct libmnt_fs *fs, *found = NULL;
        int r;

        r = it ? mount_table_live(&tb) : -ENOMEM;
        if (r < 0) {
                mnt_free_iter(it);
                return r == -ENOMEM ? r : -EIO;
        }
        while (mnt_table_next_fs(tb, it, &fs) == 0)
                if (*id > 0 ? mnt_fs_get_id(fs) == *id : streq_ptr(mnt_fs_get_target(fs), target))
                        found = fs; /* the last one on that target is on top */
        r = -ENOENT;
        if (found) {
                *id = mnt_fs_get_id(found);
                *ret_vfs = strdup(mnt_fs_get_vfs_options(found) ?: "");
                *ret_fs = strdup(mnt_fs_get_fs_options(found) ?: "");
                r = *ret_vfs && *ret_fs ? 0 : -ENOMEM;
        }
        mnt_free_iter(it);
        mnt_unref_table(tb);
        return r;
}

/* The mount id of an open file, from /proc/self/fdinfo (any kernel since
 * 3.15; statx()'s STATX_MNT_ID came in 5.8). */
static int fd_mount_id(int fd) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        const char *m;
        size_t len;
        int r;

        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
        r = read_full_file(path, 4096, &text, &len);
        if (r < 0)
                return r;
        m = strstr(text, "\nmnt_id:");
        return m ? atoi(m + 8) : -ENODATA;
}

/* The mount at target, opened once: every step of the change acts through
 * this descriptor, not the path, so a symlink swapped in under a directory
 * a user controls between the check and the change cannot redirect it.
 * target was resolved with its symlinks (resolve_mount()): any found on
 * the way now is such a swap, refused. It must be the mount 'id' whose
 * options were read; -ESTALE if it is not. */
static int open_mount(const char *target, int id) {
        struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, AT_FDCWD, target, &how, sizeof how);
        int r;

        if (fd < 0)
                return -errno;
        r = fd_mount_id(fd);
        if (r < 0)
                return r;
        if (r != id)
                return -ESTALE;
        return TAKE_FD(fd);
}

/* The object 'path' leads to as root typed it, reached without following
 * any symlink: -ELOOP if the path passes through one. The mount that
 * remount finds from the path (through realpath() and the mount table)
 * must hold this object, or a symlink swapped in between them redirected
 * it. */
static int open_typed(const char *path) {
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);

        return fd < 0 ? -errno : fd;
}

/* Whether fds a and b lie on the same mount (a path inside a mount names
 * the mount that holds it). */
static bool same_mount(int a, int b) {
        int ma = fd_mount_id(a);

        return ma >= 0 && ma == fd_mount_id(b);
}

static bool has_opt(const char *optstr, const char *name) {
        return mnt_optstr_get_option(optstr, name, NULL, NULL) == 0;
}

/* The atime bits of this mount alone (mount_setattr(), Linux 5.12). On an
 * older kernel it refuses rather than remount by path: mount(2) acts on a
 * path, which a user may redirect. */
static int set_atime(int fd, const char *atime) {
        struct mount_attr attr = {
                .attr_clr = MOUNT_ATTR__ATIME,
                .attr_set = streq(atime, "noatime")    ? MOUNT_ATTR_NOATIME
                            : streq(atime, "relatime") ? MOUNT_ATTR_RELATIME
                                                       : MOUNT_ATTR_STRICTATIME,
        };

        return mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ? -errno : 0;
}

/* nodiratime, a flag of the mount beside its atime policy. */
static int set_nodiratime(int fd) {
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_NODIRATIME };

        return mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ? -errno : 0;
}

/* lazytime belongs to the superblock: reconfigure just that flag. */
static int set_lazytime(int mfd, bool on) {
        _cleanup_close_ int fd = fspick(mfd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fsconfig(fd, FSCONFIG_SET_FLAG, on ? "lazytime" : "nolazytime", NULL, 0) < 0 ||
            fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
                return -errno;
        return 0;
}

static json_object *options_json(const char *vfs, const char *fs) {
        json_object *o = json_object_new_object();

        if (o) {
                json_object_object_add(o, "vfs_options", varlink_name_new(vfs));
                json_object_object_add(o, "fs_options", varlink_name_new(fs));
        }
        return o;
}

/* {"target", "changed", "before", "after"} or {"target", "changed": false, "reason"}. */
static int print_remount_json(const char *target, bool changed, const char *vfs, const char *fs, const char *vfs_after,
                              const char *fs_after, const char *reason) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return fail("out of memory");
        json_object_object_add(o, F_TARGET, varlink_name_new(target));
        json_object_object_add(o, "changed", json_object_new_boolean(changed));
        if (vfs)
                json_object_object_add(o, "before", options_json(vfs, fs));
        if (vfs_after)
                json_object_object_add(o, "after", options_json(vfs_after, fs_after));
        if (reason)
                json_object_object_add(o, F_REASON, json_object_new_string(reason));
        return print_json(o);
}

/* The POLICY given on the command line, for the mount that holds path (as
 * findmnt -T finds it), once the atime readers there agree. */
static int remount_policy_given(const char *path, const char *words, struct policy_spec *p, char *target,
                                size_t len) {
        int r;

        if (parse_policy(words, p) < 0) {
                fprintf(stderr, "atimectl: remount: '%s' is not a policy. %s\n", words, POLICY_HELP);
                return EXIT_USAGE;
        }
        r = resolve_mount(path, target, len);
        if (r < 0)
                return fail("cannot find the mount that holds %s: %s", path, strerror(-r));
        return guard_atime_readers(target, p->atime);
}

/* atimed's advice for the mount that holds path. When it advises keeping,
 * says so (text or JSON) and sets *ret_done. */
static int remount_policy_advised(const char *path, struct policy_spec *p, char *target, size_t len, bool *ret_done) {
        _cleanup_(report_freep) Report *rep = NULL;
        const ReportAdvice *a;
        const char *why;
        int r;

        *ret_done = false;
        r = get_advice(path, &rep, target, len);
        if (r != EXIT_OK)
                return r;
        a = rep->n_mounts > 0 ? &rep->mounts[0].advice : NULL;
        if (a && spec_of(a, p))
                return guard_atime_readers(target, p->atime); /* as for a POLICY given */
        *ret_done = true;
        why = a && a->n_reasons > 0 ? a->reasons[0] : NULL;
        if (arg_json)
                return print_remount_json(target, false, NULL, NULL, NULL, NULL, why);
        printf("Nothing to change on %s: %s\n", escape_name_tmp(target), escape_tmp(why));
        return EXIT_OK;
}

/* Sets the policy on the live mount, through its descriptor: the atime
 * flag of the mount, lazytime of the superblock when it differs from
 * fsopts. */
static int remount_apply(int fd, const char *target, const struct policy_spec *p, const char *fsopts) {
        int r;

        if (p->atime && (r = set_atime(fd, p->atime)) < 0)
                return fail("cannot set %s on %s: %s", p->atime, escape_name_tmp(target),
                            r == -ENOSYS ? "this kernel has no mount_setattr() (Linux 5.12), and atimectl does not "
                                           "remount by path; nothing changed"
                                         : strerror(-r));
        if (p->nodiratime == 1 && (r = set_nodiratime(fd)) < 0)
                return fail("cannot set nodiratime on %s: %s", escape_name_tmp(target), strerror(-r));
        if (p->lazytime >= 0 && has_opt(fsopts, "lazytime") != (p->lazytime == 1) &&
            (r = set_lazytime(fd, p->lazytime == 1)) < 0)
                return fail("cannot set %s on %s: %s", p->lazytime ? "lazytime" : "nolazytime", escape_name_tmp(target),
                            strerror(-r));
        return EXIT_OK;
}

/* The options after the change and, when they changed, how to keep them. */
static int remount_report(const char *target, const char *spec, bool changed, const char *vfs_after,
                          const char *fs_after) {
        _cleanup_free_ char *set = NULL, *q = NULL;

        printf("%s after:  %s (superblock: %s)\n", escape_name_tmp(target), escape_tmp(vfs_after), escape_tmp(fs_after));
        if (!changed) {
                printf("%s already had %s: nothing changed.\n", escape_name_tmp(target), spec);
                return EXIT_OK;
        }
        if (asprintf(&set, "%s=%s", target, spec) < 0 || !(q = shell_quote(set)))
                return fail("out of memory");
        printf("This lasts until %s is mounted again. To keep it: atimectl fstab --set %s --write\n",
               escape_name_tmp(target), q);
        return EXIT_OK;
}

int cmd_remount(int argc, char **argv) {
        _cleanup_free_ char *vfs = NULL, *fsopts = NULL, *vfs_after = NULL, *fs_after = NULL;
        _cleanup_close_ int fd = -EBADF, typed = -EBADF;
        struct policy_spec p;
        char target[PATH_MAX], spec[64];
        bool changed, done = false;
        int r, id = 0;

        require_root_server();
        if (argc > 2)
                r = remount_policy_given(argv[1], argv[2], &p, target, sizeof target);
        else
                r = remount_policy_advised(argv[1], &p, target, sizeof target, &done);
        if (r != EXIT_OK || done)
                return r;
        if (geteuid() != 0)
                return fail("remounting needs root.");
        typed = open_typed(argv[1]);
        if (typed == -ELOOP)
                return fail("%s passes through a symlink, which anyone who may write its directory could swap; "
                            "name the mount by its own path (%s). Nothing changed.", escape_name_tmp(argv[1]),
                            escape_name_tmp(target));
        if (typed < 0)
                return fail("cannot open %s: %s", escape_name_tmp(argv[1]), strerror(-typed));
        r = current_options(target, &id, &vfs, &fsopts);
        if (r == -ENOENT)
                return fail("nothing is mounted on %s.", escape_name_tmp(target));
        if (r < 0)
                return fail("cannot read the mount table: %s", strerror(-r));
        fd = open_mount(target, id);
        if (fd == -ELOOP || fd == -ESTALE)
                return fail("%s is no longer the mount that was checked (a symlink or a mount changed on the way); "
                            "nothing changed.", escape_name_tmp(target));
        if (fd < 0)
                return fail("cannot open %s: %s", escape_name_tmp(target), strerror(-fd));
        if (!same_mount(typed, fd))
                return fail("%s is no longer the mount that was checked (a symlink or a mount changed on the way); "
                            "nothing changed.", escape_name_tmp(target));
        format_spec(&p, spec, sizeof spec);
        if (!arg_json)
                printf("%s before: %s (superblock: %s)\n", escape_name_tmp(target), escape_tmp(vfs), escape_tmp(fsopts));
        r = remount_apply(fd, target, &p, fsopts);
        if (r != EXIT_OK)
                return r;
        r = current_options(target, &id, &vfs_after, &fs_after);
        if (r < 0)
                return fail("cannot read the mount table: %s", strerror(-r));
        changed = !streq(vfs, vfs_after) || !streq(fsopts, fs_after);
        if (arg_json)
                return print_remount_json(target, changed, vfs, fsopts, vfs_after, fs_after, NULL);
        return remount_report(target, spec, changed, vfs_after, fs_after);
}
