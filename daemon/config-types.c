/* config-types.c: the kinds of value atimed.conf holds, each a parser, a
 * printer and a destructor (see config-types.h). A value is parsed into the
 * type its users need, once; printed, it parses back to the same. */
#include "config-types.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "escape.h"
#include "log.h"
#include "parse-util.h"
#include "strv.h"

/* Refuses a value, saying what a good one looks like. */
static int bad(const char **ret_why, const char *why) {
        *ret_why = why;
        return -EINVAL;
}

static int check_range(const struct config_item *it, uint64_t u, const char **ret_why) {
        assert(it->max > 0); /* every number has its bounds in the table */
        if (u < it->min || u > it->max) {
                *ret_why = "out of range";
                return -ERANGE;
        }
        return 0;
}

int config_set_string(char **f, const char *value) {
        char *s = NULL;

        assert(f);
        if (value && !(s = strdup(value)))
                return -ENOMEM;
        free(*f);
        *f = s;
        return 0;
}

static bool is_absolute_path(const char *s) {
        return s[0] == '/' && !strpbrk(s, " \t");
}

static int parse_path(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        if (!is_absolute_path(value))
                return bad(ret_why, "expected an absolute path");
        return config_set_string(dest, value);
}

/* Whether a path is written as the kernel names a mount point: no empty,
 * "." or ".." component, no '/' at the end but for "/" itself. */
static bool path_is_normal(const char *p) {
        if (streq(p, "/"))
                return true;
        while (*p == '/') {
                size_t n = strcspn(p + 1, "/");

                if (n == 0 || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
                        return false;
                p += n + 1;
        }
        return true;
}

int config_path_unescape(const char *value, bool mount_point, char **ret, const char **ret_why) {
        _cleanup_free_ char *p = NULL;
        size_t off, l = strlen(value);
        int r;

        for (const char *c = value; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return bad(ret_why, "a control character in a path is written as \\xHH");
        if (l > 0 && value[l - 1] == ' ')
                return bad(ret_why, "a blank that ends a path is written as \\x20");
        r = name_unescape_strict(value, &p, &off);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && (startswith(value + off, "\\x00") || startswith(value + off, "\\000")))
                return bad(ret_why, "a path cannot hold a NUL byte");
        if (r < 0)
                return bad(ret_why, "a backslash starts \\\\, \\xHH or \\OOO; write a backslash as \\\\");
        if (p[0] != '/')
                return bad(ret_why, "expected an absolute path");
        if (strlen(p) >= PATH_MAX)
                return bad(ret_why, "longer than a path can be (4095 bytes)");
        if (mount_point && !path_is_normal(p))
                return bad(ret_why, "a mount point is written as the kernel names it: no '//', '/./' or '/../', "
                                    "no '/' at the end");
        *ret = TAKE_PTR(p);
        return 0;
}

static int parse_epath(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        char *p = NULL;
        int r = config_path_unescape(value, false, &p, ret_why);

        if (r < 0)
                return r;
        free(*(char **) dest);
        *(char **) dest = p;
        return 0;
}

static int format_epath(const void *src, FILE *f) {
        const char *s = *(char *const *) src;
        _cleanup_free_ char *e = NULL;

        if (!s)
                return 0;
        if (name_escape_text(s, CONFIG_PATH_ESCAPED, &e) < 0)
                return -ENOMEM;
        fputs(e, f);
        return 0;
}

static int parse_path_opt(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        if (value[0] != 0 && !is_absolute_path(value))
                return bad(ret_why, "expected an absolute path, or nothing");
        return config_set_string(dest, value[0] ? value : NULL);
}

static bool has_dotdot(const char *s) {
        size_t l = strlen(s);

        return streq(s, "..") || startswith(s, "../") || strstr(s, "/../") || (l >= 3 && streq(s + l - 3, "/.."));
}

static int parse_relpath(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        if (value[0] == '/' || strpbrk(value, " \t") || has_dotdot(value))
                return bad(ret_why, "expected a path relative to the mount point, without ..");
        return config_set_string(dest, value[0] ? value : NULL);
}

static int parse_group(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        struct group grbuf, *gr = NULL;
        char buf[4096];

        if (value[0] != 0 && (getgrnam_r(value, &grbuf, buf, sizeof buf, &gr) != 0 || !gr))
                return bad(ret_why, "no such group");
        return config_set_string(dest, value[0] ? value : NULL);
}

static int format_string(const void *src, FILE *f) {
        const char *s = *(char *const *) src;

        fputs(s ? s : "", f);
        return 0;
}

static void done_string(void *dest) {
        free(*(char **) dest);
}

/* Printable, and not what would start a comment once printed after a
 * blank. */
static bool valid_word(const char *s) {
        if (s[0] == '#' || s[0] == ';')
                return false;
        for (; *s; s++)
                if (!isgraph((unsigned char) *s))
                        return false;
        return true;
}

/* Words separated by spaces or commas; with 'paths', each an absolute path or
 * a glob over whole paths ("[/]" is / alone). */
static int parse_list(const char *value, bool paths, char ***dest, const char **ret_why) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = strv_split(value, " \t,", &l);
        if (r < 0)
                return r;
        STRV_FOREACH(s, l) {
                if (paths && (*s)[0] != '/' && !strchr("[*?", (*s)[0]))
                        return bad(ret_why, "expected absolute paths or globs, separated by spaces or commas");
                if (!valid_word(*s))
                        return bad(ret_why, "expected printable words, separated by spaces or commas");
        }
        strv_free(*dest);
        *dest = TAKE_PTR(l);
        return 0;
}

static int parse_words(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        return parse_list(value, false, dest, ret_why);
}

static int parse_paths(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        return parse_list(value, true, dest, ret_why);
}

static int format_strv(const void *src, FILE *f) {
        char *const *l = *(char **const *) src;

        STRV_FOREACH(s, l)
                fprintf(f, "%s%s", s == l ? "" : " ", *s);
        return 0;
}

static void done_strv(void *dest) {
        strv_free(*(char ***) dest);
}

static int parse_duration_item(const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        uint64_t u;
        int r;

        if (parse_duration(value, &u) < 0)
                return bad(ret_why, "expected a duration such as 10s, 5min or 1h");
        r = check_range(it, u, ret_why);
        if (r < 0)
                return r;
        *(uint64_t *) dest = u;
        return 0;
}

static int format_duration_value(const void *src, FILE *f) {
        char buf[FORMAT_DURATION_MAX];

        fputs(format_duration(buf, sizeof buf, *(const uint64_t *) src), f);
        return 0;
}

static void format_duration_bound(uint64_t v, char *buf, size_t len) {
        format_duration(buf, len, v);
}

static int parse_size_item(const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        uint64_t u;
        int r;

        if (parse_size(value, &u) < 0)
                return bad(ret_why, "expected a size such as 65536, 64K or 1M");
        r = check_range(it, u, ret_why);
        if (r < 0)
                return r;
        *(uint64_t *) dest = u;
        return 0;
}

static int format_size_value(const void *src, FILE *f) {
        char buf[FORMAT_SIZE_MAX];

        fputs(format_size(buf, sizeof buf, *(const uint64_t *) src), f);
        return 0;
}

static void format_size_bound(uint64_t v, char *buf, size_t len) {
        format_size(buf, len, v);
}

static int parse_uint(const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        uint64_t u;
        int r;

        assert(it->max <= UINT_MAX);
        if (parse_uint64(value, &u) < 0)
                return bad(ret_why, "expected a non-negative integer");
        r = check_range(it, u, ret_why);
        if (r < 0)
                return r;
        *(unsigned *) dest = (unsigned) u;
        return 0;
}

static int format_uint(const void *src, FILE *f) {
        fprintf(f, "%u", *(const unsigned *) src);
        return 0;
}

static void format_uint_bound(uint64_t v, char *buf, size_t len) {
        snprintf(buf, len, "%llu", (unsigned long long) v);
}

static int parse_mode_item(const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        mode_t m;
        int r;

        if (parse_mode(value, &m) < 0)
                return bad(ret_why, "expected an octal file mode such as 0660");
        r = check_range(it, m, ret_why);
        if (r < 0)
                return r;
        *(mode_t *) dest = m;
        return 0;
}

static int format_mode(const void *src, FILE *f) {
        fprintf(f, "%04o", (unsigned) *(const mode_t *) src);
        return 0;
}

static void format_mode_bound(uint64_t v, char *buf, size_t len) {
        snprintf(buf, len, "%04llo", (unsigned long long) v);
}

static int parse_log_level(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        int r = log_level_from_string(value);

        if (r < 0)
                return bad(ret_why, "expected one of err, warning, notice, info, debug");
        *(int *) dest = r;
        return 0;
}

static int format_log_level(const void *src, FILE *f) {
        fputs(log_level_to_string(*(const int *) src), f);
        return 0;
}

static int parse_bool(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        int r = parse_boolean(value);

        if (r < 0)
                return bad(ret_why, "expected yes or no");
        *(bool *) dest = r;
        return 0;
}

static int format_bool(const void *src, FILE *f) {
        fputs(*(const bool *) src ? "yes" : "no", f);
        return 0;
}

static int parse_need(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        int r = atime_need_from_string(value);

        if (r < 0)
                return bad(ret_why, "expected none, relatime or strict");
        *(AtimeNeed *) dest = (AtimeNeed) r;
        return 0;
}

static int format_need(const void *src, FILE *f) {
        fputs(atime_need_to_string(*(const AtimeNeed *) src), f);
        return 0;
}

static void done_costs(void *dest) {
        struct config_costs *c = dest;

        free(c->v);
        strv_free(c->names);
        *c = (struct config_costs) {};
}

/* fstype:usec:KiB[:lazy usec[:again usec]], space or comma separated, into
 * the advisor's own struct, each fstype a string of its own. */
static int parse_costs(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        _cleanup_strv_free_ char **l = NULL;
        struct config_costs costs = {};
        size_t n;
        int r;

        r = strv_split(value, " \t,", &l);
        if (r < 0)
                return r;
        n = strv_length(l);
        costs.v = calloc(n ? n : 1, sizeof *costs.v);
        costs.names = calloc(n + 1, sizeof *costs.names);
        if (!costs.v || !costs.names) {
                done_costs(&costs);
                return -ENOMEM;
        }
        for (; costs.n < n; costs.n++) {
                struct atime_cost *c = &costs.v[costs.n];
                char buf[256];

                if (!valid_word(l[costs.n]) || atime_cost_parse(l[costs.n], c, buf, sizeof buf) < 0) {
                        done_costs(&costs);
                        return bad(ret_why, "expected fstype:usec:KiB[:lazytime usec[:again usec[:unshare bytes[:unshare dir bytes]]]] per filesystem type, such as "
                                            "ext4:1.46:0.5");
                }
                costs.names[costs.n] = strdup(c->fstype);
                if (!costs.names[costs.n]) {
                        done_costs(&costs);
                        return -ENOMEM;
                }
                c->fstype = costs.names[costs.n];
        }
        done_costs(dest);
        *(struct config_costs *) dest = costs;
        return 0;
}

static int format_costs(const void *src, FILE *f) {
        const struct config_costs *c = src;

        for (size_t i = 0; i < c->n; i++) {
                /* An entry is under 256 characters (parse_costs), its
                 * numbers printed at most 32 each: it fits. */
                char e[256 + 7 * 32];

                fprintf(f, "%s%s", i ? " " : "", atime_cost_format(&c->v[i], e, sizeof e));
        }
        return 0;
}

static int parse_rings(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        struct config_rings rings = {};
        int r;

        r = stats_parse_rings(value, rings.spec, &rings.n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bad(ret_why, "expected up to 4 resolution:retention pairs, finest first, each resolution a "
                                    "multiple of the one before, such as \"1min:6h, 10min:7d, 1h:90d\"");
        *(struct config_rings *) dest = rings;
        return 0;
}

static int format_rings(const void *src, FILE *f) {
        const struct config_rings *g = src;

        for (unsigned i = 0; i < g->n; i++) {
                char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
                uint64_t res = (uint64_t) g->spec[i].resolution * USEC_PER_SEC;

                fprintf(f, "%s%s:%s", i ? ", " : "", format_duration(a, sizeof a, res),
                        format_duration(b, sizeof b, res * g->spec[i].capacity));
        }
        return 0;
}

#define TYPE(name, ...) const struct config_type config_type_##name = { __VA_ARGS__ }
TYPE(path, .parse = parse_path, .format = format_string, .done = done_string);
TYPE(epath, .parse = parse_epath, .format = format_epath, .done = done_string);
TYPE(path_opt, .parse = parse_path_opt, .format = format_string, .done = done_string);
TYPE(relpath, .parse = parse_relpath, .format = format_string, .done = done_string);
TYPE(group, .parse = parse_group, .format = format_string, .done = done_string);
TYPE(words, .parse = parse_words, .format = format_strv, .done = done_strv);
TYPE(paths, .parse = parse_paths, .format = format_strv, .done = done_strv);
TYPE(duration, .parse = parse_duration_item, .format = format_duration_value, .format_bound = format_duration_bound);
TYPE(size, .parse = parse_size_item, .format = format_size_value, .format_bound = format_size_bound);
TYPE(uint, .parse = parse_uint, .format = format_uint, .format_bound = format_uint_bound);
TYPE(mode, .parse = parse_mode_item, .format = format_mode, .format_bound = format_mode_bound);
TYPE(log_level, .parse = parse_log_level, .format = format_log_level);
TYPE(boolean, .parse = parse_bool, .format = format_bool);
TYPE(need, .parse = parse_need, .format = format_need);
TYPE(costs, .parse = parse_costs, .format = format_costs, .done = done_costs);
TYPE(rings, .parse = parse_rings, .format = format_rings);

