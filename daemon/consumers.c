/* consumers.c: atime consumers from tmpfiles.d, mail spools, tmpreaper,
 * tmpwatch and popularity-contest (see consumers.h). */
#include "consumers.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "path-util.h"
#include "string-table.h"
#include "strv.h"

#define CONFIG_FILE_MAX (1024 * 1024)
#define DAY_USEC (86400ULL * USEC_PER_SEC)

static const char *const consumer_kind_table[_CONSUMER_KIND_MAX] = {
        [CONSUMER_MAIL] = "mail",         [CONSUMER_TMPFILES] = "tmpfiles", [CONSUMER_TMPREAPER] = "tmpreaper",
        [CONSUMER_TMPWATCH] = "tmpwatch", [CONSUMER_POPCON] = "popcon",     [CONSUMER_CONFIG] = "config",
};
static const char *const atime_need_table[_NEED_MAX] = {
        [NEED_NONE] = "none", [NEED_RELATIME] = "relatime", [NEED_STRICT] = "strict",
};
static const StringAlias atime_need_aliases[] = {
        { "strictatime", NEED_STRICT },
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(consumer_kind, ConsumerKind);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(atime_need, AtimeNeed);

DEFINE_STRING_TABLE_LOOKUP_FROM_STRING_WITH_ALIASES(atime_need, AtimeNeed);

int consumers_new(Consumers **ret) {
        *ret = calloc(1, sizeof **ret);
        return *ret ? 0 : -ENOMEM;
}

Consumers *consumers_free(Consumers *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n; i++) {
                free(c->v[i].path);
                free(c->v[i].why);
                free(c->v[i].source);
                free(c->v[i].resolved);
        }
        free(c->v);
        strv_free(c->notes);
        free(c);
        return NULL;
}

int consumers_add(Consumers *c, ConsumerKind kind, AtimeNeed need, const char *path, const char *why,
                  const char *source) {
        struct consumer *nv = realloc(c->v, (c->n + 1) * sizeof *nv), *e;

        if (!nv)
                return -ENOMEM;
        c->v = nv;
        e = &c->v[c->n];
        *e = (struct consumer) { .kind = kind, .need = need, .path = strdup(path), .why = strdup(why),
                                 .source = strdup(source) };
        if (!e->path || !e->why || !e->source) {
                free(e->path);
                free(e->why);
                free(e->source);
                return -ENOMEM;
        }
        c->n++;
        return 0;
}

static void note(Consumers *c, const char *fmt, ...) _printf_(2, 3);
static void note(Consumers *c, const char *fmt, ...) {
        _cleanup_free_ char *m = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&m, fmt, ap) >= 0 && strv_length(c->notes) < 1000)
                (void) strv_extend(&c->notes, m);
        va_end(ap);
}

/* Cleaning by age: under relatime a read moves atime at most once a day, so
 * an age of a day or more is served by relatime; a shorter one needs every
 * read recorded. */
static AtimeNeed need_for_age(uint64_t age_usec) {
        return age_usec < DAY_USEC ? NEED_STRICT : NEED_RELATIME;
}

/* Ages as tmp cleaners write them; a unit we do not know (months, years)
 * is surely more than a day. Returns 0, or -EINVAL for nonsense. */
static int parse_age(const char *s, uint64_t *ret) {
        size_t l = strlen(s);

        if (parse_duration(s, ret) >= 0)
                return 0;
        if (l > 1 && isdigit((unsigned char) s[0]) &&
            (strchr("yM", s[l - 1]) || (l > 5 && streq(s + l - 5, "month")) || (l > 6 && streq(s + l - 6, "months")))) {
                *ret = 30 * DAY_USEC;
                return 0;
        }
        return -EINVAL;
}

/* Splits a line into whitespace-separated fields; "..." quotes a field
 * (with \\ escapes), as systemd-tmpfiles reads them. At most 'max' fields. */
static size_t split_fields(const char *line, char fields[][512], size_t max) {
        size_t n = 0;
        const char *p = line;

        while (n < max) {
                size_t o = 0;

                p += strspn(p, " \t");
                if (!*p)
                        break;
                if (*p == '"') {
                        for (p++; *p && *p != '"'; p++) {
                                if (*p == '\\' && p[1])
                                        p++;
                                if (o < 511)
                                        fields[n][o++] = *p;
                        }
                        if (*p == '"')
                                p++;
                } else
                        for (; *p && !strchr(" \t", *p); p++)
                                if (o < 511)
                                        fields[n][o++] = *p;
                fields[n][o] = 0;
                n++;
        }
        return n;
}

/* %-specifiers systemd-tmpfiles resolves for the system instance; a path
 * with any other (a user's home, say) is not ours to judge. */
static int resolve_specifiers(const char *in, char *out, size_t len) {
        size_t o = 0;

        for (const char *p = in; *p; p++) {
                const char *rep = NULL;
                char lit[2] = { *p, 0 };

                if (*p == '%') {
                        switch (*++p) {
                        case '%': rep = "%"; break;
                        case 't': rep = "/run"; break;
                        case 'T': rep = "/tmp"; break;
                        case 'V': rep = "/var/tmp"; break;
                        case 'S': rep = "/var/lib"; break;
                        case 'C': rep = "/var/cache"; break;
                        case 'L': rep = "/var/log"; break;
                        default: return -EINVAL;
                        }
                } else
                        rep = lit;
                if (o + strlen(rep) >= len)
                        return -ENAMETOOLONG;
                o += (size_t) snprintf(out + o, len - o, "%s", rep);
        }
        return 0;
}

/* The directory part before any glob character: "/var/tmp/foo-*" is about
 * /var/tmp. */
static void strip_glob(char *path) {
        char *g = strpbrk(path, "*?[");
        char *slash;

        if (!g)
                return;
        *g = 0;
        slash = strrchr(path, '/');
        if (slash && slash != path)
                *slash = 0;
        else if (slash)
                slash[1] = 0;
}

/* next_line: copies the line of text at *pos into line (cut to size - 1
 * bytes, no newline) and moves *pos past it; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, char *line, size_t size) {
        const char *nl;
        size_t l;

        if (*pos >= len)
                return false;
        nl = memchr(text + *pos, '\n', len - *pos);
        l = nl ? (size_t) (nl - text - *pos) : len - *pos;
        memcpy(line, text + *pos, MIN(l, size - 1));
        line[MIN(l, size - 1)] = 0;
        *pos += l + 1;
        return true;
}

/* tmpfiles_line: one line of a tmpfiles.d file, named src ("file:line"). */
static int tmpfiles_line(Consumers *c, const char *src, char *line) {
        char f[6][512], path[1024], why[2200], *age;
        const char *spec = NULL;
        bool uses_atime = true;
        uint64_t age_usec;
        size_t nf;
        char type = 0;

        line[strcspn(line, "\r")] = 0;
        if (!line[strspn(line, " \t")] || line[strspn(line, " \t")] == '#')
                return 0;
        nf = split_fields(line, f, 6);
        if (nf < 6 || streq(f[5], "-"))
                return 0; /* no age: never cleaned by age */
        for (const char *t = f[0]; *t && !type; t++)
                if (isalpha((unsigned char) *t))
                        type = *t;
        if (!type || !strchr("dDevqQC", type))
                return 0;

        age = f[5];
        if (*age == '~')
                age++;
        if (strchr(age, ':')) {
                /* "am:10d": which timestamps count. */
                spec = age;
                age = strchr(age, ':');
                *age++ = 0;
                uses_atime = strpbrk(spec, "aA") != NULL;
        }
        if (!uses_atime) {
                note(c, "%s: age counts only '%s', not atime", src, spec);
                return 0;
        }
        if (parse_age(age, &age_usec) < 0) {
                note(c, "%s: age '%s' not understood", src, age);
                return 0;
        }
        if (age_usec == 0)
                return 0; /* cleaned whatever the times */
        if (resolve_specifiers(f[1], path, sizeof path) < 0 || path[0] != '/') {
                note(c, "%s: path '%s' is not a system path", src, f[1]);
                return 0;
        }
        strip_glob(path);
        snprintf(why, sizeof why, "systemd-tmpfiles removes what in %s was not used (atime) for %s", path, age);
        return consumers_add(c, CONSUMER_TMPFILES, need_for_age(age_usec), path, why, src) < 0 ? -ENOMEM : 0;
}

/* Each line of text to fn, named "name:line". */
static int parse_lines(Consumers *c, const char *name, const char *text, size_t len,
                       int (*fn)(Consumers *c, const char *src, char *line)) {
        char line[4096], src[1200];
        unsigned lineno = 0;

        for (size_t pos = 0; next_line(text, len, &pos, line, sizeof line);) {
                snprintf(src, sizeof src, "%s:%u", name, ++lineno);
                if (fn(c, src, line) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int consumers_parse_tmpfiles(Consumers *c, const char *name, const char *text, size_t len) {
        return parse_lines(c, name, text, len, tmpfiles_line);
}

/* VAR=value or VAR='value' or VAR="value" in a shell-style file. */
static bool shell_var(const char *text, size_t len, const char *var, char *out, size_t outlen) {
        bool found = false;

        char line[2048];

        for (size_t pos = 0; next_line(text, len, &pos, line, sizeof line);) {
                const char *v = line + strspn(line, " \t");

                if (!(v = startswith(v, var)) || *v != '=')
                        continue;
                v++;
                if (*v == '\'' || *v == '"') {
                        char q = *v++;
                        const char *end = strchr(v, q);
                        size_t n = end ? (size_t) (end - v) : strlen(v);

                        snprintf(out, outlen, "%.*s", (int) MIN(n, outlen - 1), v);
                } else
                        snprintf(out, outlen, "%.*s", (int) strcspn(v, " \t#"), v);
                found = true; /* the last assignment wins, as in the shell */
        }
        return found;
}

int consumers_parse_tmpreaper(Consumers *c, const char *name, const char *text, size_t len) {
        _cleanup_strv_free_ char **dirs = NULL;
        char v[1024], age[64] = "7d", why[1400];
        uint64_t age_usec;

        /* Debian ships it disabled until the admin has read the warning. */
        if (shell_var(text, len, "SHOWWARNING", v, sizeof v) && streq(v, "true")) {
                note(c, "%s: SHOWWARNING=true: tmpreaper does not run", name);
                return 0;
        }
        if (shell_var(text, len, "TMPREAPER_ADDITIONALOPTIONS", v, sizeof v) && strstr(v, "--mtime")) {
                note(c, "%s: tmpreaper uses --mtime, not atime", name);
                return 0;
        }
        (void) shell_var(text, len, "TMPREAPER_TIME", age, sizeof age);
        if (parse_age(age, &age_usec) < 0)
                age_usec = 7 * DAY_USEC;
        if (!shell_var(text, len, "TMPREAPER_DIRS", v, sizeof v))
                snprintf(v, sizeof v, "/tmp/.");
        if (strv_split(v, " \t", &dirs) < 0)
                return -ENOMEM;
        STRV_FOREACH(d, dirs) {
                char path[1024];
                size_t l;

                snprintf(path, sizeof path, "%s", *d);
                strip_glob(path);
                l = strlen(path);
                if (l > 2 && streq(path + l - 2, "/."))
                        path[l - 2] = 0;
                if (path[0] != '/')
                        continue;
                snprintf(why, sizeof why, "tmpreaper removes what in %s was not accessed (atime) for %s", path, age);
                if (consumers_add(c, CONSUMER_TMPREAPER, need_for_age(age_usec), path, why, name) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* tmpwatch_line: one line of a cron file, named src ("file:line"):
 * tmpwatch [-umcaMfqx...] AGE DIR...: -u atime (the default), -m mtime, -c
 * ctime; with several, all must be old. */
static int tmpwatch_line(Consumers *c, const char *src, char *line) {
        _cleanup_strv_free_ char **w = NULL;
        const char *age = NULL;
        bool atime = true, explicit = false;
        uint64_t age_usec = 0;
        char why[1400], path[1024];

        if (line[strspn(line, " \t")] == '#' || !strstr(line, "tmpwatch"))
                return 0;
        if (strv_split(line, " \t", &w) < 0)
                return -ENOMEM;
        STRV_FOREACH(t, w) {
                if (!age && (*t)[0] == '-' && (*t)[1] != '-' && (*t)[1]) {
                        if (strpbrk(*t + 1, "umc"))
                                explicit = true;
                        if (strchr(*t + 1, 'u'))
                                atime = true;
                        else if (explicit && !strchr(*t + 1, 'u'))
                                atime = false;
                } else if (!age && strstr(*t, "tmpwatch"))
                        continue;
                else if (!age && isdigit((unsigned char) (*t)[0])) {
                        age = *t;
                        /* A bare number is hours. */
                        if (strspn(age, "0123456789") == strlen(age))
                                age_usec = strtoull(age, NULL, 10) * 3600 * USEC_PER_SEC;
                        else if (parse_age(age, &age_usec) < 0)
                                age_usec = 10 * DAY_USEC;
                } else if (age && (*t)[0] == '/') {
                        if (!atime) {
                                note(c, "%s: tmpwatch without -u: atime does not count", src);
                                return 0;
                        }
                        snprintf(path, sizeof path, "%s", *t);
                        strip_glob(path);
                        snprintf(why, sizeof why, "tmpwatch removes what in %s was not accessed (atime) for %s", path, age);
                        if (consumers_add(c, CONSUMER_TMPWATCH, need_for_age(age_usec), path, why, src) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

int consumers_parse_tmpwatch(Consumers *c, const char *name, const char *text, size_t len) {
        return parse_lines(c, name, text, len, tmpwatch_line);
}

int consumers_parse_popcon(Consumers *c, const char *name, const char *text, size_t len) {
        char v[64];

        if (!shell_var(text, len, "PARTICIPATE", v, sizeof v) || !streq(v, "yes")) {
                note(c, "%s: PARTICIPATE is not \"yes\"", name);
                return 0;
        }
        return consumers_add(c, CONSUMER_POPCON, NEED_RELATIME, "/usr",
                             "popularity-contest tells used packages from unused ones by the atime of their files",
                             name);
}

/* ---------------------------------------------------------------- the scan */

static int open_noatime(int dfd, const char *path, int flags) {
        /* Reading what we judge must not change it; config files of root's
         * are root's, so O_NOATIME works, and where it does not a plain open
         * changes only a config file's atime. */
        int fd = openat(dfd, path, flags | O_NOATIME | O_CLOEXEC | O_NOCTTY);

        if (fd < 0 && errno == EPERM)
                fd = openat(dfd, path, flags | O_CLOEXEC | O_NOCTTY);
        return fd;
}

/* *ret_private: the file is not readable by others. */
static int read_text(int dfd, const char *path, char **ret, size_t *ret_len, bool *ret_private) {
        /* Not opened if it is not a regular file: a FIFO a user left in a
         * scanned directory must not hang the scan. */
        _cleanup_close_ int fd = open_regular_at(dfd, path, O_NOATIME);
        struct stat st;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret_private = !(st.st_mode & S_IROTH);
        return read_full_fd(fd, CONFIG_FILE_MAX, ret, ret_len);
}

/* What atimed read in a file only root may read is not told to anyone who
 * asks: the consumers found there from index 'from' on keep their path (to
 * find the mount they concern) but say only where they come from. */
static int make_private(Consumers *c, size_t from) {
        for (size_t i = from; i < c->n; i++) {
                char *why = strdup("software configured in a file only root can read needs atime here");

                if (!why)
                        return -ENOMEM;
                free(c->v[i].why);
                c->v[i].why = why;
                c->v[i].private = true;
        }
        return 0;
}

static int cmp_basename(const void *a, const void *b) {
        return strcmp(strrchr(*(char *const *) a, '/'), strrchr(*(char *const *) b, '/'));
}

/* The *.conf files of dirs, in the order they are read: by name, whichever
 * directory; a name in a directory of higher precedence masks the same
 * name below it (a symlink to /dev/null masks it for good). */
static int tmpfiles_list(char *const *dirs, char ***ret) {
        _cleanup_strv_free_ char **names = NULL, **paths = NULL;
        size_t n;

        STRV_FOREACH(d, dirs) {
                _cleanup_close_ int fd = open_noatime(AT_FDCWD, *d, O_RDONLY | O_DIRECTORY);
                DIR *dir;
                struct dirent *de;

                if (fd < 0 || !(dir = fdopendir(fd)))
                        continue;
                TAKE_FD(fd);
                while ((de = readdir(dir))) {
                        size_t l = strlen(de->d_name);
                        char full[4096];

                        if (l < 6 || !streq(de->d_name + l - 5, ".conf") || strv_contains(names, de->d_name))
                                continue;
                        snprintf(full, sizeof full, "%s/%s", *d, de->d_name);
                        if (strv_extend(&names, de->d_name) < 0 || strv_extend(&paths, full) < 0) {
                                closedir(dir);
                                return -ENOMEM;
                        }
                }
                closedir(dir);
        }
        n = strv_length(paths);
        if (n > 0)
                qsort(paths, n, sizeof *paths, cmp_basename);
        *ret = TAKE_PTR(paths);
        return 0;
}

static int scan_tmpfiles(Consumers *c, char *const *dirs) {
        _cleanup_strv_free_ char **paths = NULL;
        size_t n;

        if (tmpfiles_list(dirs, &paths) < 0)
                return -ENOMEM;
        n = strv_length(paths);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = NULL;
                char link[64];
                ssize_t ll = readlink(paths[i], link, sizeof link - 1);
                size_t len;
                int r;

                if (ll > 0) {
                        link[ll] = 0;
                        if (streq(link, "/dev/null"))
                                continue; /* masked */
                }
                size_t before = c->n;
                bool private = false;

                r = read_text(AT_FDCWD, paths[i], &text, &len, &private);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        note(c, "%s: %s", paths[i], fileio_strerror(r));
                        continue;
                }
                r = consumers_parse_tmpfiles(c, paths[i], text, len);
                if (r >= 0 && private)
                        r = make_private(c, before);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A spool holding regular files holds mbox files (Maildir spools hold only
 * directories). */
static int scan_mail(Consumers *c, const char *spool) {
        _cleanup_close_ int fd = -1;
        DIR *dir;
        struct dirent *de;
        bool mbox = false;
        char why[1100];

        fd = openat(AT_FDCWD, spool, O_RDONLY | O_DIRECTORY | O_NOATIME | O_CLOEXEC);
        if (fd < 0) {
                if (errno == EPERM)
                        note(c, "%s: cannot list it without changing its atime", spool);
                return 0;
        }
        dir = fdopendir(TAKE_FD(fd));
        if (!dir)
                return 0;
        while (!mbox && (de = readdir(dir))) {
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                if (de->d_type == DT_REG)
                        mbox = true;
                else if (de->d_type == DT_UNKNOWN && fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        mbox = S_ISREG(st.st_mode);
        }
        closedir(dir);
        if (!mbox)
                return 0;
        snprintf(why, sizeof why, "mbox files in %s: mail readers tell new mail by atime older than mtime", spool);
        return consumers_add(c, CONSUMER_MAIL, NEED_RELATIME, spool, why, spool);
}

/* The next step of a lookup in dfd, nothing followed. A mount point there
 * is entered only if 'cross' (dfd is root's alone, so root mounted it);
 * else -EXDEV, before anything of the mounted filesystem is asked. */
static int open_step(int dfd, const char *name, bool cross) {
        struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS };
        int fd = (int) syscall(SYS_openat2, dfd, name, &how, sizeof how);

        if (fd < 0 && ((errno == EXDEV && cross) || errno == ENOSYS))
                fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* resolve_existing's walk: what is resolved so far and what is left. */
typedef struct Resolve {
        char real[PATH_MAX];    /* resolved so far; "" for / */
        char buf[PATH_MAX * 2]; /* holds what is left, from rest */
        char *rest;
        int dfd; /* real, opened O_PATH */
        unsigned hops;
} Resolve;

enum { RESOLVE_ON, RESOLVE_STOP, RESOLVE_FAIL };

static int resolve_reopen(Resolve *w) {
        safe_close(w->dfd);
        w->dfd = open(w->real[0] ? w->real : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        return w->dfd < 0 ? RESOLVE_FAIL : RESOLVE_ON;
}

/* The symlink fd met at the name of length len: its text takes the
 * name's place in what is left. */
static int resolve_splice(Resolve *w, int fd, size_t len) {
        char link[PATH_MAX];
        ssize_t n = readlinkat(fd, "", link, sizeof link - 1);
        size_t ll, after;

        if (n < 0 || ++w->hops > 40)
                return RESOLVE_FAIL;
        link[n] = 0;
        ll = strlen(link);
        after = strlen(w->rest + len);
        if (ll + after + 2 > sizeof w->buf)
                return RESOLVE_FAIL;
        memmove(w->buf + ll + 1, w->rest + len, after + 1);
        memcpy(w->buf, link, ll);
        w->buf[ll] = '/';
        w->rest = w->buf;
        if (link[0] != '/')
                return RESOLVE_ON;
        w->real[0] = 0;
        return resolve_reopen(w);
}

/* One name of the path (len bytes at rest): ".", "..", or a step down
 * where root's rules allow it. */
static int resolve_step(Resolve *w, const char *name, size_t len) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        bool sticky;

        if (streq(name, ".")) {
                w->rest += len;
                return RESOLVE_ON;
        }
        if (streq(name, "..")) {
                char *slash = strrchr(w->real, '/');

                if (slash)
                        *slash = 0;
                w->rest += len;
                return resolve_reopen(w);
        }
        if (fstat(w->dfd, &st) < 0)
                return RESOLVE_FAIL;
        if (st.st_uid != 0 || ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)))
                return RESOLVE_STOP; /* a user's to arrange: the rest as written */
        sticky = st.st_mode & S_IWOTH;
        fd = open_step(w->dfd, name, !sticky);
        if (fd == -ENOENT || fd == -ENOTDIR || fd == -EACCES || fd == -EXDEV)
                return RESOLVE_STOP; /* not there (yet), or a mount that may be a user's */
        if (fd < 0 || fstat(fd, &st) < 0)
                return RESOLVE_FAIL;
        if (sticky && st.st_uid != 0)
                return RESOLVE_STOP; /* a user's entry in /tmp */
        if (S_ISLNK(st.st_mode))
                return resolve_splice(w, fd, len);
        if (strlen(w->real) + len + 2 > sizeof w->real)
                return RESOLVE_FAIL;
        strcat(w->real, "/");
        strcat(w->real, name);
        w->rest += len;
        safe_close(w->dfd);
        w->dfd = TAKE_FD(fd);
        return S_ISDIR(st.st_mode) ? RESOLVE_ON : RESOLVE_STOP; /* a file: nothing after it is there */
}

/* What the walk resolved, then what is left as written, one '/' between
 * names: a link's text ending in slashes ("../missing//") must not leave
 * "missing////e", which no mount point is a prefix of. */
static char *resolve_result(const Resolve *w) {
        size_t n = strlen(w->real);
        char *r = malloc(n + strlen(w->rest) + 2), *o;

        if (!r)
                return NULL;
        o = mempcpy(r, w->real, n);
        for (const char *p = w->rest + strspn(w->rest, "/"); *p; p += strspn(p, "/")) {
                size_t len = strcspn(p, "/");

                *o++ = '/';
                o = mempcpy(o, p, len);
                p += len;
        }
        if (o == r)
                *o++ = '/';
        *o = 0;
        return r;
}

static char *resolve_walk(Resolve *w) {

        for (int s = RESOLVE_ON; s == RESOLVE_ON;) {
                char name[NAME_MAX + 1];
                size_t len;

                w->rest += strspn(w->rest, "/");
                len = strcspn(w->rest, "/");
                if (len == 0)
                        break; /* all of it resolved */
                if (len > NAME_MAX)
                        return NULL;
                memcpy(name, w->rest, len);
                name[len] = 0;
                s = resolve_step(w, name, len);
                if (s == RESOLVE_FAIL)
                        return NULL;
        }
        return resolve_result(w);
}

/* path with the symlinks root made resolved, as far as it exists (a
 * tmpfiles.d path or a glob need not): a /var/spool/mail that points into
 * a /var/mail mount lies on that mount, not on the one holding the link.
 * The lookup goes on only through what root made and no user can replace:
 * entries of a directory that root owns and no one else may write, and
 * root's own entries of a sticky one (/tmp: a user cannot rename them),
 * though no mount point there (a user may mount on a directory of theirs
 * in /tmp). From anywhere else (a user's directory or entry, a directory
 * anybody may write without the sticky bit) the rest is taken as written:
 * a symlink a user planted for a tmpfiles.d path (/tmp/x -> /home) moves
 * nothing, and a user's FUSE mount, stopped, is never entered. As the
 * kernel: '..' above / stays at /, a link's text starts again at / when
 * absolute, 40 links at most. The result has one '/' between names. NULL on
 * an error, more than 40 links (a loop), a name past NAME_MAX or a path
 * past PATH_MAX. */
static char *resolve_existing(const char *path) {
        _cleanup_free_ Resolve *w = NULL;
        char *r;

        if (strlen(path) >= PATH_MAX || !(w = calloc(1, sizeof *w)))
                return NULL;
        w->dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (w->dfd < 0)
                return NULL;
        snprintf(w->buf, sizeof w->buf, "%s", path);
        w->rest = w->buf;
        r = resolve_walk(w);
        safe_close(w->dfd);
        return r;
}

int consumers_scan(const struct consumers_paths *p, Consumers **ret) {
        _cleanup_(consumers_freep) Consumers *c = NULL;
        struct {
                const char *path;
                int (*parse)(Consumers *, const char *, const char *, size_t);
        } files[] = {
                { p->tmpreaper_conf, consumers_parse_tmpreaper },
                { p->tmpwatch_cron, consumers_parse_tmpwatch },
                { p->popcon_conf, consumers_parse_popcon },
        };
        int r;

        r = consumers_new(&c);
        if (r < 0)
                return r;
        r = scan_tmpfiles(c, p->tmpfiles_dirs);
        if (r < 0)
                return r;
        STRV_FOREACH(s, p->mail_spools) {
                r = scan_mail(c, *s);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *text = NULL;
                size_t len, before = c->n;
                bool private = false;

                if (!files[i].path)
                        continue;
                r = read_text(AT_FDCWD, files[i].path, &text, &len, &private);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue; /* not installed */
                r = files[i].parse(c, files[i].path, text, len);
                if (r >= 0 && private)
                        r = make_private(c, before);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < c->n; i++)
                c->v[i].resolved = resolve_existing(c->v[i].path);
        *ret = TAKE_PTR(c);
        return 0;
}

/* Whether 'path' lies at or under mount point 'target'. */
AtimeNeed consumers_need_for_mount(const Consumers *c, const char *target, char *const *others,
                                   const struct consumer **ret_strongest) {
        AtimeNeed best = NEED_NONE;

        if (ret_strongest)
                *ret_strongest = NULL;
        for (size_t i = 0; c && i < c->n; i++) {
                const char *owner = NULL;

                /* The mount a path is on: the deepest mount point above it. */
                STRV_FOREACH(o, others)
                        if (path_under(c->v[i].resolved ?: c->v[i].path, *o) && (!owner || strlen(*o) > strlen(owner)))
                                owner = *o;
                if (!owner || !streq(owner, target) || c->v[i].need <= best)
                        continue;
                best = c->v[i].need;
                if (ret_strongest)
                        *ret_strongest = &c->v[i];
        }
        return best;
}

ssize_t consumers_owner(const Consumers *c, size_t i, char *const *targets, size_t n_targets) {
        ssize_t owner = -1;

        for (size_t k = 0; k < n_targets; k++)
                if (path_under(c->v[i].resolved ?: c->v[i].path, targets[k]) &&
                    (owner < 0 || strlen(targets[k]) > strlen(targets[owner])))
                        owner = (ssize_t) k;
        return owner;
}

/* ---------------------------------------------------------------- the scanner */

struct ConsumerScanner {
        WorkerSlot *slot;
        consumer_scanner_found_fn found;
        void *userdata;
        struct consumers_paths paths; /* borrowed */
        uint64_t timeout_usec;
        size_t last_n; /* consumers the last scan found; SIZE_MAX before the first */
};

/* A scan's own copy of the paths. */
struct scan_job {
        char **tmpfiles_dirs, **mail_spools;
        char *tmpreaper_conf, *tmpwatch_cron, *popcon_conf;
        Consumers *result;
        int r;
};

static void scan_job_free(void *job) {
        struct scan_job *j = job;

        strv_free(j->tmpfiles_dirs);
        strv_free(j->mail_spools);
        free(j->tmpreaper_conf);
        free(j->tmpwatch_cron);
        free(j->popcon_conf);
        consumers_free(j->result);
        free(j);
}

static int scan_make(void *userdata, void **ret) {
        ConsumerScanner *s = userdata;
        const struct consumers_paths *p = &s->paths;
        struct scan_job *j = calloc(1, sizeof *j);

        if (!j)
                return -ENOMEM;
        if (strv_copy(p->tmpfiles_dirs, &j->tmpfiles_dirs) < 0 || strv_copy(p->mail_spools, &j->mail_spools) < 0 ||
            !(j->tmpreaper_conf = strdup(p->tmpreaper_conf)) || !(j->tmpwatch_cron = strdup(p->tmpwatch_cron)) ||
            !(j->popcon_conf = strdup(p->popcon_conf))) {
                scan_job_free(j);
                return -ENOMEM;
        }
        *ret = j;
        return 0;
}

static void scan_work(void *arg, const atomic_bool *cancel) {
        struct scan_job *j = arg;
        struct consumers_paths p = {
                .tmpfiles_dirs = j->tmpfiles_dirs,
                .mail_spools = j->mail_spools,
                .tmpreaper_conf = j->tmpreaper_conf,
                .tmpwatch_cron = j->tmpwatch_cron,
                .popcon_conf = j->popcon_conf,
        };

        j->r = consumers_scan(&p, &j->result);
}

static void scan_done(void *userdata, void *job, WorkerStatus status) {
        ConsumerScanner *s = userdata;
        struct scan_job *j = job;

        if (status == WORKER_TIMED_OUT) {
                log_warning("Looking for atime consumers timed out (a mail spool on a filesystem that does not answer?)");
                return;
        }
        if (status != WORKER_DONE)
                return;
        if (j->r < 0) {
                log_warning_errno(j->r, "Failed to look for atime consumers: %m");
                return;
        }
        STRV_FOREACH(n, j->result->notes)
                log_debug("atime consumers: %s", *n);
        if (s->last_n != j->result->n)
                log_info("%zu atime consumer%s found (tmp cleaners, mail spools, popularity-contest)", j->result->n,
                         j->result->n == 1 ? "" : "s");
        s->last_n = j->result->n;
        s->found(TAKE_PTR(j->result), s->userdata);
}

static void on_scan_again(void *userdata) {
        consumer_scanner_request(userdata);
}

static const WorkerSlotOps scan_ops = {
        .make = scan_make,
        .run = scan_work,
        .done = scan_done,
        .free = scan_job_free,
        .again = on_scan_again, /* a reload's scan follows the one out */
        /* Never on the loop: a mail spool may be on a filesystem that hangs. */
};

int consumer_scanner_new(WorkerPool *pool, consumer_scanner_found_fn found, void *userdata, ConsumerScanner **ret) {
        _cleanup_(consumer_scanner_freep) ConsumerScanner *s = calloc(1, sizeof *s);
        int r;

        if (!s)
                return -ENOMEM;
        s->found = found;
        s->userdata = userdata;
        s->last_n = SIZE_MAX;
        r = worker_slot_new(pool, &scan_ops, s, &s->slot);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

void consumer_scanner_configure(ConsumerScanner *s, const struct consumers_paths *paths, uint64_t timeout_usec) {
        s->paths = *paths;
        s->timeout_usec = timeout_usec;
}

void consumer_scanner_request(ConsumerScanner *s) {
        int r = worker_slot_start(s->slot, s->timeout_usec);

        if (r == -ENOMEM)
                log_oom();
        else if (r < 0)
                log_warning_errno(r, "Cannot look for atime consumers: %m");
}

bool consumer_scanner_busy(const ConsumerScanner *s) {
        return worker_slot_busy(s->slot);
}

ConsumerScanner *consumer_scanner_free(ConsumerScanner *s) {
        if (!s)
                return NULL;
        worker_slot_free(s->slot);
        free(s);
        return NULL;
}
