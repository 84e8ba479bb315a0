/* config.c: the ini file into struct config. Keys are described once, in
 * config_items[]: type, default and bounds, used for parsing, defaults and
 * printing alike. inih splits lines; our reader in front of it counts lines
 * and rejects what inih would silently get wrong (overlong lines it would
 * truncate, '#' it would keep inside a value). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <ini.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "advisor.h"
#include "consumers.h"
#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "protocol.h"
#include "strv.h"

#define CONFIG_FILE_MAX (1024 * 1024)

typedef enum ConfigType {
        CT_PATH,      /* absolute path */
        CT_RELPATH,   /* relative path without "..", or empty */
        CT_PATH_LIST, /* absolute paths or globs, space or comma separated */
        CT_LIST,      /* words, space or comma separated */
        CT_DURATION,
        CT_SIZE,
        CT_UNSIGNED,
        CT_MODE,
        CT_GROUP,     /* a group name that exists, or empty */
        CT_LOG_LEVEL,
        CT_RINGS,     /* "1min:6h, 10min:7d": the rings of history */
        CT_BOOL,      /* stored as int */
        CT_NEED,      /* none, relatime, strict: an AtimeNeed stored as int */
        CT_COSTS,     /* fstype:usec:KiB[:lazy usec[:again usec]], space or comma separated */
        CT_PATH_OPT,  /* an absolute path, or empty for none */
} ConfigType;

struct config_item {
        const char *section;
        const char *key;
        ConfigType type;
        size_t offset;
        const char *def;
        uint64_t min, max; /* for numbers, durations and sizes */
};

#define ITEM(s, k, t, f, d, lo, hi) { s, k, t, offsetof(struct config, f), d, lo, hi }
#define SEC (1000000ULL)

static const struct config_item config_items[] = {
        ITEM("daemon", "log_level", CT_LOG_LEVEL, log_level, "info", 0, 0),
        ITEM("daemon", "state_dir", CT_PATH, state_dir, ATIMED_STATE_DIR_DEFAULT, 0, 0),
        ITEM("daemon", "worker_threads", CT_UNSIGNED, worker_threads, "2", 1, 64),

        ITEM("control", "socket", CT_PATH, socket_path, ATIMED_SOCKET_DEFAULT, 0, 0),
        ITEM("control", "socket_mode", CT_MODE, socket_mode, "0666", 0, 0777),
        ITEM("control", "socket_group", CT_GROUP, socket_group, "", 0, 0),
        ITEM("control", "max_clients", CT_UNSIGNED, max_clients, "64", 1, 4096),
        ITEM("control", "max_clients_per_user", CT_UNSIGNED, max_clients_per_user, "8", 1, 4096),
        ITEM("control", "reserved_clients", CT_UNSIGNED, reserved_clients, "8", 0, 4096),
        ITEM("control", "max_message_size", CT_SIZE, max_message_size, "64K", 1024, 16 * 1024 * 1024),
        ITEM("control", "idle_timeout", CT_DURATION, idle_timeout_usec, "1min", 1 * SEC, 86400 * SEC),
        ITEM("control", "privileged_group", CT_GROUP, privileged_group, "", 0, 0),

        ITEM("mounts", "mountinfo", CT_PATH, mountinfo_path, "/proc/self/mountinfo", 0, 0),
        ITEM("mounts", "include_fstypes", CT_LIST, include_fstypes, "", 0, 0),
        ITEM("mounts", "exclude_fstypes", CT_LIST, exclude_fstypes, "", 0, 0),
        ITEM("mounts", "exclude_paths", CT_PATH_LIST, exclude_paths, "", 0, 0),
        ITEM("mounts", "rescan_delay", CT_DURATION, rescan_delay_usec, "200ms", 0, 10 * SEC),

        ITEM("probe", "interval", CT_DURATION, probe_interval_usec, "10min", 1 * SEC, 7 * 86400 * SEC),
        ITEM("probe", "timeout", CT_DURATION, probe_timeout_usec, "10s", 100000, 600 * SEC),
        ITEM("probe", "dir", CT_RELPATH, probe_dir, "", 0, 0),

        ITEM("sampler", "interval", CT_DURATION, sampler_interval_usec, "1min", 1 * SEC, 3600 * SEC),
        ITEM("sampler", "sample_size", CT_UNSIGNED, sample_size, "1000", 10, 1000000),
        ITEM("sampler", "walk_rate", CT_UNSIGNED, walk_rate, "1000", 10, 10000000),
        ITEM("sampler", "refresh", CT_DURATION, walk_refresh_usec, "6h", 10 * SEC, 30 * 86400 * SEC),
        ITEM("sampler", "timeout", CT_DURATION, sampler_timeout_usec, "30s", 1 * SEC, 3600 * SEC),

        ITEM("device", "diskstats", CT_PATH, diskstats_path, "/proc/diskstats", 0, 0),
        ITEM("device", "sysfs", CT_PATH, sysfs_path, "/sys", 0, 0),

        ITEM("consumers", "tmpfiles_dirs", CT_PATH_LIST, tmpfiles_dirs, "/etc/tmpfiles.d /run/tmpfiles.d /usr/lib/tmpfiles.d", 0, 0),
        ITEM("consumers", "mail_spools", CT_PATH_LIST, mail_spools, "/var/mail /var/spool/mail", 0, 0),
        ITEM("consumers", "tmpreaper_conf", CT_PATH, tmpreaper_conf, "/etc/tmpreaper.conf", 0, 0),
        ITEM("consumers", "tmpwatch_cron", CT_PATH, tmpwatch_cron, "/etc/cron.daily/tmpwatch", 0, 0),
        ITEM("consumers", "popcon_conf", CT_PATH, popcon_conf, "/etc/popularity-contest.conf", 0, 0),
        ITEM("consumers", "interval", CT_DURATION, consumers_interval_usec, "10min", 10 * SEC, 7 * 86400 * SEC),

        ITEM("advisor", "noatime_threshold", CT_UNSIGNED, noatime_threshold, "60", 1, 100000000),
        ITEM("advisor", "min_saving", CT_UNSIGNED, min_saving, "1", 0, 100000000),
        ITEM("advisor", "window", CT_DURATION, advice_window_usec, "1d", 60 * SEC, 90 * 86400 * SEC),
        ITEM("advisor", "costs", CT_COSTS, costs, "", 0, 0),

        ITEM("export", "textfile", CT_PATH_OPT, textfile, "", 0, 0),
        ITEM("export", "textfile_mode", CT_MODE, textfile_mode, "0644", 0, 0777),

        ITEM("store", "flush_interval", CT_DURATION, flush_interval_usec, "5min", 1 * SEC, 86400 * SEC),
        ITEM("store", "rings", CT_RINGS, rings, "1min:6h, 10min:7d, 1h:90d", 0, 0),
        ITEM("store", "max_mounts", CT_UNSIGNED, max_histories, "10000", 1, 1000000),
};

/* Keys of a [mount:PATH] section, as offsets into struct mount_config. */
#define MITEM(k, t, f) { "mount:", k, t, offsetof(struct mount_config, f), "", 0, 0 }
static const struct config_item mount_items[] = {
        MITEM("probe_dir", CT_PATH, probe_dir),
        MITEM("needs_atime", CT_NEED, needs_atime),
        MITEM("ignore", CT_BOOL, ignore),
};

#define MOUNT_SECTION_PREFIX "mount:"
#define MAX_MOUNT_SECTIONS 4096

static const char *const config_sections[] = { "daemon",    "control", "mounts", "probe", "sampler",
                                               "consumers", "advisor", "device", "export", "store" };

static bool section_known(const char *name) {
        const char *path = startswith(name, MOUNT_SECTION_PREFIX);

        if (path)
                return path[0] == '/';
        for (size_t i = 0; i < ELEMENTSOF(config_sections); i++)
                if (streq(config_sections[i], name))
                        return true;
        return false;
}

static void *field(void *base, const struct config_item *it) {
        return (char *) base + it->offset;
}

static const void *cfield(const void *base, const struct config_item *it) {
        return (const char *) base + it->offset;
}

int config_set_string(char **f, const char *value) {
        char *s = NULL;

        if (value && !(s = strdup(value)))
                return -ENOMEM;
        free(*f);
        *f = s;
        return 0;
}

static bool valid_word(const char *s) {
        for (; *s; s++)
                if (!isgraph((unsigned char) *s))
                        return false;
        return true;
}

/* Parses 'value' for 'it' into c. On a bad value returns -EINVAL and sets
 * *ret_why to what was expected. */
static int item_parse(void *base, const struct config_item *it, const char *value, const char **ret_why) {
        void *f = field(base, it);
        uint64_t u;
        int r;

        switch (it->type) {
        case CT_PATH:
                if (value[0] != '/' || strpbrk(value, " \t")) {
                        *ret_why = "expected an absolute path";
                        return -EINVAL;
                }
                return config_set_string(f, value);

        case CT_PATH_OPT:
                if (value[0] == 0)
                        return config_set_string(f, NULL);
                if (value[0] != '/' || strpbrk(value, " \t")) {
                        *ret_why = "expected an absolute path, or nothing";
                        return -EINVAL;
                }
                return config_set_string(f, value);

        case CT_RELPATH:
                if (value[0] == 0)
                        return config_set_string(f, NULL);
                if (value[0] == '/' || strpbrk(value, " \t") || streq(value, "..") || startswith(value, "../") ||
                    strstr(value, "/../") || (strlen(value) >= 3 && streq(value + strlen(value) - 3, "/.."))) {
                        *ret_why = "expected a path relative to the mount point, without ..";
                        return -EINVAL;
                }
                return config_set_string(f, value);

        case CT_LIST:
        case CT_PATH_LIST: {
                _cleanup_strv_free_ char **l = NULL;

                r = strv_split(value, " \t,", &l);
                if (r < 0)
                        return r;
                STRV_FOREACH(s, l) {
                        /* A path, or a glob over whole paths ("[/]" is / alone). */
                        if (it->type == CT_PATH_LIST && (*s)[0] != '/' && !strchr("[*?", (*s)[0])) {
                                *ret_why = "expected absolute paths or globs, separated by spaces or commas";
                                return -EINVAL;
                        }
                        if (!valid_word(*s)) {
                                *ret_why = "expected printable words, separated by spaces or commas";
                                return -EINVAL;
                        }
                }
                strv_free(*(char ***) f);
                *(char ***) f = TAKE_PTR(l);
                return 0;
        }

        case CT_DURATION:
                r = parse_duration(value, &u);
                if (r < 0) {
                        *ret_why = "expected a duration such as 10s, 5min or 1h";
                        return -EINVAL;
                }
                break;

        case CT_SIZE:
                r = parse_size(value, &u);
                if (r < 0) {
                        *ret_why = "expected a size such as 65536, 64K or 1M";
                        return -EINVAL;
                }
                break;

        case CT_UNSIGNED:
                r = parse_uint64(value, &u);
                if (r < 0) {
                        *ret_why = "expected a non-negative integer";
                        return -EINVAL;
                }
                break;

        case CT_MODE: {
                mode_t m;

                r = parse_mode(value, &m);
                if (r < 0) {
                        *ret_why = "expected an octal file mode such as 0660";
                        return -EINVAL;
                }
                u = m;
                break;
        }

        case CT_GROUP: {
                struct group grbuf, *gr = NULL;
                char buf[4096];

                if (value[0] == 0)
                        return config_set_string(f, NULL);
                if (getgrnam_r(value, &grbuf, buf, sizeof buf, &gr) != 0 || !gr) {
                        *ret_why = "no such group";
                        return -EINVAL;
                }
                return config_set_string(f, value);
        }

        case CT_LOG_LEVEL:
                r = log_level_from_string(value);
                if (r < 0) {
                        *ret_why = "expected one of err, warning, notice, info, debug";
                        return -EINVAL;
                }
                *(int *) f = r;
                return 0;

        case CT_BOOL:
                r = parse_boolean(value);
                if (r < 0) {
                        *ret_why = "expected yes or no";
                        return -EINVAL;
                }
                *(int *) f = r;
                return 0;

        case CT_NEED:
                r = atime_need_from_string(value);
                if (r < 0) {
                        *ret_why = "expected none, relatime or strict";
                        return -EINVAL;
                }
                *(int *) f = r;
                return 0;

        case CT_COSTS: {
                _cleanup_strv_free_ char **l = NULL;

                r = strv_split(value, " \t,", &l);
                if (r < 0)
                        return r;
                STRV_FOREACH(x, l) {
                        struct atime_cost cost;
                        char buf[256];

                        if (atime_cost_parse(*x, &cost, buf, sizeof buf) < 0) {
                                *ret_why = "expected fstype:usec:KiB[:lazytime usec] per filesystem type, such as "
                                           "ext4:1.46:0.5";
                                return -EINVAL;
                        }
                }
                strv_free(*(char ***) f);
                *(char ***) f = TAKE_PTR(l);
                return 0;
        }

        case CT_RINGS: {
                struct config *c = base;
                struct stats_ring_spec specs[STATS_MAX_RINGS];
                unsigned n;

                r = stats_parse_rings(value, specs, &n);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        *ret_why = "expected up to 4 resolution:retention pairs, finest first, each resolution a "
                                   "multiple of the one before, such as \"1min:6h, 10min:7d, 1h:90d\"";
                        return -EINVAL;
                }
                memcpy(c->rings, specs, sizeof specs);
                c->n_rings = n;
                return 0;
        }
        }

        if (it->max > 0 && (u < it->min || u > it->max)) {
                *ret_why = "out of range";
                return -ERANGE;
        }
        switch (it->type) {
        case CT_DURATION:
        case CT_SIZE:
                *(uint64_t *) f = u;
                break;
        case CT_UNSIGNED:
                *(unsigned *) f = (unsigned) u;
                break;
        case CT_MODE:
                *(mode_t *) f = (mode_t) u;
                break;
        default:
                break;
        }
        return 0;
}

static void item_format(const void *base, const struct config_item *it, char *buf, size_t len) {
        const void *f = cfield(base, it);

        switch (it->type) {
        case CT_PATH:
        case CT_PATH_OPT:
        case CT_RELPATH:
        case CT_GROUP:
                snprintf(buf, len, "%s", *(char *const *) f ? *(char *const *) f : "");
                break;
        case CT_LIST:
        case CT_PATH_LIST: {
                _cleanup_free_ char *j = strv_join(*(char **const *) f, " ");
                snprintf(buf, len, "%s", j ? j : "");
                break;
        }
        case CT_DURATION:
                format_duration(buf, len, *(const uint64_t *) f);
                break;
        case CT_SIZE:
                format_size(buf, len, *(const uint64_t *) f);
                break;
        case CT_UNSIGNED:
                snprintf(buf, len, "%u", *(const unsigned *) f);
                break;
        case CT_MODE:
                snprintf(buf, len, "%04o", (unsigned) *(const mode_t *) f);
                break;
        case CT_LOG_LEVEL:
                snprintf(buf, len, "%s", log_level_to_string(*(const int *) f));
                break;
        case CT_BOOL:
                snprintf(buf, len, "%s", *(const int *) f ? "yes" : "no");
                break;
        case CT_NEED:
                snprintf(buf, len, "%s", atime_need_to_string(*(const int *) f));
                break;
        case CT_COSTS: {
                _cleanup_free_ char *j = strv_join(*(char **const *) f, " ");
                snprintf(buf, len, "%s", j ? j : "");
                break;
        }
        case CT_RINGS: {
                const struct config *c = base;
                size_t used = 0;

                buf[0] = 0;
                for (unsigned i = 0; i < c->n_rings && used < len; i++) {
                        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];

                        used += (size_t) snprintf(buf + used, len - used, "%s%s:%s", i ? ", " : "",
                                                  format_duration(a, sizeof a, c->rings[i].resolution * USEC_PER_SEC),
                                                  format_duration(b, sizeof b,
                                                                  (uint64_t) c->rings[i].resolution * c->rings[i].capacity *
                                                                          USEC_PER_SEC));
                }
                break;
        }
        }
}

static void item_describe_range(const struct config_item *it, char *buf, size_t len) {
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];

        switch (it->type) {
        case CT_DURATION:
                snprintf(buf, len, " (allowed: %s to %s)", format_duration(a, sizeof a, it->min),
                         format_duration(b, sizeof b, it->max));
                break;
        case CT_SIZE:
                snprintf(buf, len, " (allowed: %s to %s)", format_size(a, sizeof a, it->min),
                         format_size(b, sizeof b, it->max));
                break;
        case CT_UNSIGNED:
                snprintf(buf, len, " (allowed: %llu to %llu)", (unsigned long long) it->min,
                         (unsigned long long) it->max);
                break;
        case CT_MODE:
                snprintf(buf, len, " (allowed: 0000 to %04llo)", (unsigned long long) it->max);
                break;
        default:
                buf[0] = 0;
        }
}

static void items_free(void *base, const struct config_item *items, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const struct config_item *it = &items[i];

                if (it->type == CT_PATH || it->type == CT_PATH_OPT || it->type == CT_RELPATH || it->type == CT_GROUP)
                        free(*(char **) field(base, it));
                else if (it->type == CT_LIST || it->type == CT_PATH_LIST || it->type == CT_COSTS)
                        strv_free(*(char ***) field(base, it));
        }
}

struct config *config_free(struct config *c) {
        if (!c)
                return NULL;
        free(c->path);
        items_free(c, config_items, ELEMENTSOF(config_items));
        for (size_t i = 0; i < c->n_mounts; i++) {
                items_free(&c->mounts[i], mount_items, ELEMENTSOF(mount_items));
                free(c->mounts[i].target);
        }
        free(c->mounts);
        free(c);
        return NULL;
}

const struct mount_config *config_find_mount(const struct config *c, const char *target) {
        for (size_t i = 0; i < c->n_mounts; i++)
                if (streq(c->mounts[i].target, target))
                        return &c->mounts[i];
        return NULL;
}

/* The [mount:PATH] entry for a section, created on first use. */
static struct mount_config *mount_section(struct config *c, const char *target) {
        struct mount_config *n;

        for (size_t i = 0; i < c->n_mounts; i++)
                if (streq(c->mounts[i].target, target))
                        return &c->mounts[i];
        if (c->n_mounts >= MAX_MOUNT_SECTIONS)
                return NULL;
        n = realloc(c->mounts, (c->n_mounts + 1) * sizeof *n);
        if (!n)
                return NULL;
        c->mounts = n;
        n = &c->mounts[c->n_mounts];
        *n = (struct mount_config) { .target = strdup(target) };
        if (!n->target)
                return NULL;
        c->n_mounts++;
        return n;
}

int config_new(struct config **ret) {
        _cleanup_(config_freep) struct config *c = calloc(1, sizeof *c);

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(config_items); i++) {
                const char *why = NULL;
                int r = item_parse(c, &config_items[i], config_items[i].def, &why);

                /* Defaults are ours: a bad one is a bug, caught by the unit tests. */
                if (r < 0)
                        return r == -ENOMEM ? r : -EINVAL;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

struct parse_ctx {
        const char *name;
        const char *text;
        size_t len, pos;
        unsigned line;
        char section[256];
        bool skip_section;
        char **seen_keys; /* "section\nkey" of every key set so far */
        unsigned *seen_lines;
        struct config *config;
        char **errors;
        bool oom;
};

static void add_error(struct parse_ctx *p, const char *fmt, ...) _printf_(2, 3);
static void add_error(struct parse_ctx *p, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL, *full = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0 || asprintf(&full, "%s:%u: %s", p->name, p->line, msg) < 0 || strv_extend(&p->errors, full) < 0)
                p->oom = true;
}

/* Shows a value in an error message without flooding or mangling the log. */
static const char *shorten(const char *s, char *buf, size_t len) {
        size_t i;

        for (i = 0; s[i] && i + 4 < len; i++)
                buf[i] = isprint((unsigned char) s[i]) ? s[i] : '?';
        buf[i] = 0;
        if (s[i])
                strcpy(buf + (i > 3 ? i - 3 : 0), "...");
        return buf;
}

/* Checks one line (leading blanks already removed, no newline) before inih
 * sees it. Returns false if inih must not see it. */
static bool lex_line(struct parse_ctx *p, const char *s, size_t l) {
        const char *sep, *v;

        if (l == 0 || s[0] == ';' || s[0] == '#')
                return true;

        if (s[0] == '[') {
                const char *close = memchr(s, ']', l);
                size_t nlen;

                if (!close) {
                        add_error(p, "section header without closing ']'");
                        p->skip_section = true;
                        return false;
                }
                for (const char *t = close + 1; t < s + l; t++)
                        if (!strchr(" \t", *t)) {
                                add_error(p, "unexpected text after section header");
                                break;
                        }
                nlen = (size_t) (close - s - 1);
                if (nlen >= sizeof p->section)
                        nlen = sizeof p->section - 1;
                memcpy(p->section, s + 1, nlen);
                p->section[nlen] = 0;
                p->skip_section = !section_known(p->section);
                if (p->skip_section) {
                        char b[64];

                        if (startswith(p->section, MOUNT_SECTION_PREFIX))
                                add_error(p, "[%s]: a mount section needs an absolute path, as in [mount:/srv]",
                                          shorten(p->section, b, sizeof b));
                        else
                                add_error(p, "unknown section [%s]", shorten(p->section, b, sizeof b));
                        return false;
                }
                return true;
        }

        sep = memchr(s, '=', l);
        v = memchr(s, ':', sep ? (size_t) (sep - s) : l);
        if (v)
                sep = v;
        if (!sep) {
                add_error(p, "expected 'key = value', a [section] or a comment");
                return false;
        }
        /* inih keeps '#' in values; reject what looks like a trailing comment. */
        for (v = sep + 1; v < s + l; v++)
                if (*v == '#' && (v == sep + 1 || strchr(" \t", v[-1]))) {
                        char key[64];
                        size_t kl = (size_t) (sep - s);

                        while (kl > 0 && strchr(" \t", s[kl - 1]))
                                kl--;
                        kl = MIN(kl, sizeof key - 1);
                        memcpy(key, s, kl);
                        key[kl] = 0;
                        add_error(p, "[%s] %s: '#' after a value is not a comment; put comments on a line of their own",
                                  p->section, key);
                        return false;
                }
        return true;
}

static char *reader(char *str, int num, void *stream) {
        struct parse_ctx *p = stream;
        const char *s, *nl;
        size_t raw, l;

        if (p->pos >= p->len)
                return NULL;
        s = p->text + p->pos;
        nl = memchr(s, '\n', p->len - p->pos);
        raw = nl ? (size_t) (nl - s) : p->len - p->pos;
        p->pos += raw + (nl ? 1 : 0);
        p->line++;

        l = raw;
        if (p->line == 1 && l >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
                s += 3, l -= 3;
        if (l > 0 && s[l - 1] == '\r')
                l--;
        /* Leading blanks would make inih read the line as a continuation of
         * the previous value; an indented key is just a key. */
        while (l > 0 && strchr(" \t", *s))
                s++, l--;

        /* inih's buffer holds num - 3 characters of text (see ini.h). */
        if (num < 4 || raw > (size_t) num - 3) {
                add_error(p, "line is %zu characters long; the limit is %d", raw, num - 3);
                l = 0;
        } else if (!lex_line(p, s, l))
                l = 0;

        memcpy(str, s, l);
        str[l] = '\n';
        str[l + 1] = 0;
        return str;
}

/* Records that section/key was set on this line; returns the line it was
 * set on before, or 0. */
static unsigned seen_before(struct parse_ctx *p, const char *section, const char *name) {
        _cleanup_free_ char *k = NULL;
        size_t n = strv_length(p->seen_keys);
        unsigned *nl;

        if (asprintf(&k, "%s\n%s", section, name) < 0) {
                p->oom = true;
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                if (streq(p->seen_keys[i], k))
                        return p->seen_lines[i];
        nl = realloc(p->seen_lines, (n + 1) * sizeof *nl);
        if (!nl || strv_extend(&p->seen_keys, k) < 0) {
                if (nl)
                        p->seen_lines = nl;
                p->oom = true;
                return 0;
        }
        p->seen_lines = nl;
        nl[n] = p->line;
        return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
        struct parse_ctx *p = user;
        const struct config_item *it = NULL;
        const char *why = NULL, *mount_target;
        void *base = p->config;
        char vb[64];
        unsigned prev;
        int r;

        if (p->skip_section)
                return 1;
        if (section[0] == 0) {
                add_error(p, "%s: key outside of any [section]", name);
                return 1;
        }
        mount_target = startswith(section, MOUNT_SECTION_PREFIX);
        if (mount_target) {
                for (size_t i = 0; i < ELEMENTSOF(mount_items); i++)
                        if (streq(mount_items[i].key, name))
                                it = &mount_items[i];
        } else
                for (size_t i = 0; i < ELEMENTSOF(config_items); i++)
                        if (streq(config_items[i].section, section) && streq(config_items[i].key, name))
                                it = &config_items[i];
        if (!it) {
                add_error(p, "[%s] %s: unknown key", section, name);
                return 1;
        }
        prev = seen_before(p, section, name);
        if (prev > 0) {
                add_error(p, "[%s] %s: already set on line %u", section, name, prev);
                return 1;
        }
        if (mount_target) {
                base = mount_section(p->config, mount_target);
                if (!base) {
                        add_error(p, "[%s]: too many [mount:...] sections", section);
                        return 1;
                }
        }

        r = item_parse(base, it, value, &why);
        if (r == -ENOMEM)
                p->oom = true;
        else if (r < 0) {
                char range[96] = "";

                if (r == -ERANGE)
                        item_describe_range(it, range, sizeof range);
                add_error(p, "[%s] %s: invalid value '%s': %s%s", section, name, shorten(value, vb, sizeof vb), why,
                          range);
        }
        return 1;
}

/* The line a key was set on, or 0. */
static unsigned line_of(const struct parse_ctx *p, const char *section, const char *key) {
        size_t n = strv_length(p->seen_keys), sl = strlen(section);

        for (size_t i = 0; i < n; i++)
                if (strncmp(p->seen_keys[i], section, sl) == 0 && p->seen_keys[i][sl] == '\n' &&
                    streq(p->seen_keys[i] + sl + 1, key))
                        return p->seen_lines[i];
        return 0;
}

/* Rules between keys, checked once every key is read. */
static void check_consistency(struct parse_ctx *p) {
        const struct config *c = p->config;

        for (unsigned i = 0; i < c->n_rings; i++)
                if (((uint64_t) c->rings[i].resolution * USEC_PER_SEC) % c->sampler_interval_usec != 0) {
                        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
                        unsigned rl = line_of(p, "store", "rings");

                        p->line = rl ? rl : line_of(p, "sampler", "interval");
                        add_error(p, "[store] rings: resolution %s is not a multiple of [sampler] interval %s",
                                  format_duration(a, sizeof a, c->rings[i].resolution * USEC_PER_SEC),
                                  format_duration(b, sizeof b, c->sampler_interval_usec));
                        return;
                }
}

int config_load_string(const char *name, const char *text, size_t len, struct config **ret, char ***ret_errors) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_free_ struct parse_ctx *p = NULL;
        int r;

        *ret_errors = NULL;
        r = config_new(&c);
        if (r < 0)
                return r;
        r = config_set_string(&c->path, name);
        if (r < 0)
                return r;

        p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        *p = (struct parse_ctx) { .name = name, .text = text, .len = len, .config = c };

        if (memchr(text, 0, len)) {
                p->line = 1;
                for (const char *t = text; *t; t++)
                        if (*t == '\n')
                                p->line++;
                add_error(p, "file contains a NUL byte");
        } else {
                r = ini_parse_stream(reader, p, handler, p);
                if (r == -2)
                        p->oom = true;
                else if (r > 0 && !p->errors) {
                        p->line = (unsigned) r;
                        add_error(p, "syntax error");
                }
        }
        if (!p->errors && !p->oom)
                check_consistency(p);
        strv_free(p->seen_keys);
        free(p->seen_lines);
        if (p->oom) {
                strv_free(p->errors);
                return -ENOMEM;
        }
        if (p->errors) {
                *ret_errors = p->errors;
                return -EINVAL;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int config_load(const char *path, struct config **ret, char ***ret_errors) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        *ret_errors = NULL;
        /* /dev/null (an empty configuration) is fine; a FIFO is refused,
         * not waited on (a reload on SIGHUP runs on the event loop). */
        fd = open_regular_at(AT_FDCWD, path, 0);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISREG(st.st_mode) && st.st_size > CONFIG_FILE_MAX)
                return -EFBIG;
        r = read_full_fd(fd, CONFIG_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        return config_load_string(path, buf, len, ret, ret_errors);
}

void config_print(const struct config *c, FILE *f) {
        const char *section = NULL;

        fprintf(f, "# atimed effective configuration, from %s\n", c->path ? c->path : "built-in defaults");
        for (size_t i = 0; i < ELEMENTSOF(config_items); i++) {
                const struct config_item *it = &config_items[i];
                char v[4096];

                if (!section || !streq(section, it->section)) {
                        fprintf(f, "%s[%s]\n", section ? "\n" : "", it->section);
                        section = it->section;
                }
                item_format(c, it, v, sizeof v);
                fprintf(f, "%s = %s\n", it->key, v);
        }
        for (size_t m = 0; m < c->n_mounts; m++) {
                fprintf(f, "\n[%s%s]\n", MOUNT_SECTION_PREFIX, c->mounts[m].target);
                for (size_t i = 0; i < ELEMENTSOF(mount_items); i++) {
                        char v[4096];

                        item_format(&c->mounts[m], &mount_items[i], v, sizeof v);
                        /* Only what the section sets: its defaults are "no". */
                        if (v[0] && !streq(v, "no") && !streq(v, "none"))
                                fprintf(f, "%s = %s\n", mount_items[i].key, v);
                }
        }
}
