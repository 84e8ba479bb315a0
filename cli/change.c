/* change.c: atimectl's commands that advise and make the advice last:
 * recommend (what atimed advises, with the evidence) and fstab (the change
 * to /etc/fstab that applies it, as a diff, written safely on request).
 * remount, which applies it to the live mount now, is remount.c's.
 * Changing things is atimectl's job, run by root: the daemon itself never
 * gets the privilege to remount. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "escape.h"
#include "fileio.h"
#include "fstab.h"
#include "policy.h"
#include "protocol.h"
#include "report.h"
#include "strv.h"
#include "varlink.h"

#define FSTAB_MAX (16U * 1024 * 1024)

/* ---------------------------------------------------------------- recommend */

int cmd_recommend(int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        RenderContext c = cli_render_context();
        char target[PATH_MAX];
        int r;

        r = policy_advice_reply(argc > 1 ? argv[1] : NULL, &reply, target, sizeof target);
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
        return options_have(vfs, "noatime")    ? "noatime"
               : options_have(vfs, "relatime") ? "relatime"
                                               : "strictatime";
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
        if (fstab_drift(path, t, live_atime(vfs), options_have(sb, "lazytime"), note, sizeof note) > 0 &&
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
        if (policy_parse(eq + 1, &p) < 0) {
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

        r = policy_advice(NULL, &rep, NULL, 0);
        if (r != EXIT_OK)
                return r;
        job->advised = true;
        for (size_t i = 0; i < rep->n_mounts; i++) {
                struct policy_spec p;
                char *raw = NULL;
                char s[64];

                if (!policy_of_advice(&rep->mounts[i].advice, &p))
                        continue;
                policy_format(&p, s, sizeof s);
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
        policy_format_remount(&set->policy, opts, sizeof opts);
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
