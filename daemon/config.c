/* config.c: the ini file into struct config. Keys are described once, in
 * config_items[]: one row a key, with its section, its type, the field of
 * struct config its typed value goes to, its default and its bounds. A type
 * (struct config_type) is a parser, a printer and a destructor; parsing,
 * defaults, printing and freeing all walk the table, so adding a key is one
 * row. Values are parsed once, here: the rest of atimed reads durations in
 * usec, the cost table and the rings as structs, and never the text.
 *
 * inih splits lines; our reader in front of it counts lines and rejects what
 * inih would silently get wrong (overlong lines it would truncate, '#' it
 * would keep inside a value). Every error names file:line and the key. */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "protocol.h"
#include "strv.h"

#define CONFIG_FILE_MAX (1024 * 1024)

struct config_item;

/* A kind of value: how it is parsed, printed and freed. */
struct config_type {
        /* Parses 'value' into 'dest', the item's field, replacing what was
         * there. A bad value: -EINVAL, *ret_why says what was expected; a
         * number outside it->min..it->max: -ERANGE. Else 0 or -ENOMEM. */
        int (*parse)(const struct config_item *it, const char *value, void *dest, const char **ret_why);
        /* The value at 'src' in the file's syntax, accepted back by parse. */
        void (*format)(const void *src, char *buf, size_t len);
        /* For numbers: a bound in the file's syntax, for the message of a
         * value out of range. NULL for the rest. */
        void (*format_bound)(uint64_t v, char *buf, size_t len);
        /* Frees what parse allocated in 'dest'; NULL: nothing to free. */
        void (*done)(void *dest);
};

struct config_item {
        const char *section;
        const char *key;
        const struct config_type *type;
        size_t offset;     /* of the field in struct config (struct mount_config for mount_items[]) */
        const char *def;   /* the default, in the file's syntax */
        uint64_t min, max; /* for numbers: the allowed range, max > 0 */
};

/* The C type of each config_type's field: a row whose field has another type
 * does not compile. */
#define CTYPE_path char *
#define CTYPE_path_opt char *
#define CTYPE_relpath char *
#define CTYPE_group char *
#define CTYPE_words char **
#define CTYPE_paths char **
#define CTYPE_duration uint64_t
#define CTYPE_size uint64_t
#define CTYPE_uint unsigned
#define CTYPE_mode mode_t
#define CTYPE_log_level int
#define CTYPE_boolean bool
#define CTYPE_need AtimeNeed
#define CTYPE_costs struct config_costs
#define CTYPE_rings struct config_rings

#define FIELD_OFFSET(st, f, t) \
        (offsetof(st, f) + 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((st *) 0)->f), CTYPE_##t) ? 1 : -1]))
#define ITEM(s, k, t, f, d, lo, hi) { s, k, &config_type_##t, FIELD_OFFSET(struct config, f, t), d, lo, hi }
#define MITEM(k, t, f) { "mount:", k, &config_type_##t, FIELD_OFFSET(struct mount_config, f, t), "", 0, 0 }
#define SEC (1000000ULL)

/* ---------------------------------------------------------------- the types */

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

static void format_string(const void *src, char *buf, size_t len) {
        const char *s = *(char *const *) src;

        snprintf(buf, len, "%s", s ? s : "");
}

static void done_string(void *dest) {
        free(*(char **) dest);
}

static bool valid_word(const char *s) {
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

static void format_strv(const void *src, char *buf, size_t len) {
        _cleanup_free_ char *j = strv_join(*(char **const *) src, " ");

        snprintf(buf, len, "%s", j ? j : "");
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

static void format_duration_value(const void *src, char *buf, size_t len) {
        format_duration(buf, len, *(const uint64_t *) src);
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

static void format_size_value(const void *src, char *buf, size_t len) {
        format_size(buf, len, *(const uint64_t *) src);
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

static void format_uint(const void *src, char *buf, size_t len) {
        snprintf(buf, len, "%u", *(const unsigned *) src);
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

static void format_mode(const void *src, char *buf, size_t len) {
        snprintf(buf, len, "%04o", (unsigned) *(const mode_t *) src);
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

static void format_log_level(const void *src, char *buf, size_t len) {
        snprintf(buf, len, "%s", log_level_to_string(*(const int *) src));
}

static int parse_bool(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        int r = parse_boolean(value);

        if (r < 0)
                return bad(ret_why, "expected yes or no");
        *(bool *) dest = r;
        return 0;
}

static void format_bool(const void *src, char *buf, size_t len) {
        snprintf(buf, len, "%s", *(const bool *) src ? "yes" : "no");
}

static int parse_need(_unused_ const struct config_item *it, const char *value, void *dest, const char **ret_why) {
        int r = atime_need_from_string(value);

        if (r < 0)
                return bad(ret_why, "expected none, relatime or strict");
        *(AtimeNeed *) dest = (AtimeNeed) r;
        return 0;
}

static void format_need(const void *src, char *buf, size_t len) {
        snprintf(buf, len, "%s", atime_need_to_string(*(const AtimeNeed *) src));
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

                if (atime_cost_parse(l[costs.n], c, buf, sizeof buf) < 0) {
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

static void format_costs(const void *src, char *buf, size_t len) {
        const struct config_costs *c = src;
        size_t used = 0;

        buf[0] = 0;
        for (size_t i = 0; i < c->n && used < len; i++) {
                char e[256];

                used += (size_t) snprintf(buf + used, len - used, "%s%s", i ? " " : "",
                                          atime_cost_format(&c->v[i], e, sizeof e));
        }
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

static void format_rings(const void *src, char *buf, size_t len) {
        const struct config_rings *g = src;
        size_t used = 0;

        buf[0] = 0;
        for (unsigned i = 0; i < g->n && used < len; i++) {
                char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
                uint64_t res = (uint64_t) g->spec[i].resolution * USEC_PER_SEC;

                used += (size_t) snprintf(buf + used, len - used, "%s%s:%s", i ? ", " : "",
                                          format_duration(a, sizeof a, res),
                                          format_duration(b, sizeof b, res * g->spec[i].capacity));
        }
}

#define TYPE(name, ...) static const struct config_type config_type_##name = { __VA_ARGS__ }
TYPE(path, .parse = parse_path, .format = format_string, .done = done_string);
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

/* ---------------------------------------------------------------- the keys */

static const struct config_item config_items[] = {
        ITEM("daemon", "log_level", log_level, log_level, "info", 0, 0),
        ITEM("daemon", "state_dir", path, state_dir, ATIMED_STATE_DIR_DEFAULT, 0, 0),
        ITEM("daemon", "worker_threads", uint, worker_threads, "2", 1, 64),
        ITEM("daemon", "helper_socket", path, helper_socket, ATIMED_HELPER_SOCKET_DEFAULT, 0, 0),

        ITEM("control", "socket", path, socket_path, ATIMED_SOCKET_DEFAULT, 0, 0),
        ITEM("control", "socket_mode", mode, socket_mode, "0666", 0, 0777),
        ITEM("control", "socket_group", group, socket_group, "", 0, 0),
        ITEM("control", "max_clients", uint, max_clients, "64", 1, 4096),
        ITEM("control", "max_clients_per_user", uint, max_clients_per_user, "8", 1, 4096),
        ITEM("control", "reserved_clients", uint, reserved_clients, "8", 0, 4096),
        ITEM("control", "max_message_size", size, max_message_size, "64K", 1024, 16 * 1024 * 1024),
        ITEM("control", "idle_timeout", duration, idle_timeout_usec, "1min", 1 * SEC, 86400 * SEC),
        ITEM("control", "user_loop_time", duration, user_loop_usec, "100ms", 0, 1 * SEC),
        ITEM("control", "user_reply_memory", size, user_reply_memory, "4M", 0, 1024 * 1024 * 1024),
        ITEM("control", "reply_memory", size, reply_memory, "16M", 0, 1024 * 1024 * 1024),
        ITEM("control", "privileged_group", group, privileged_group, "", 0, 0),

        ITEM("mounts", "mountinfo", path, mountinfo_path, "/proc/self/mountinfo", 0, 0),
        ITEM("mounts", "include_fstypes", words, include_fstypes, "", 0, 0),
        ITEM("mounts", "exclude_fstypes", words, exclude_fstypes, "", 0, 0),
        ITEM("mounts", "exclude_paths", paths, exclude_paths, "", 0, 0),
        ITEM("mounts", "rescan_delay", duration, rescan_delay_usec, "200ms", 0, 10 * SEC),

        ITEM("probe", "interval", duration, probe_interval_usec, "10min", 1 * SEC, 7 * 86400 * SEC),
        ITEM("probe", "timeout", duration, probe_timeout_usec, "10s", 100000, 600 * SEC),
        ITEM("probe", "dir", relpath, probe_dir, "", 0, 0),

        ITEM("sampler", "interval", duration, sampler_interval_usec, "1min", 1 * SEC, 3600 * SEC),
        ITEM("sampler", "sample_size", uint, sample_size, "1000", 10, 1000000),
        ITEM("sampler", "walk_rate", uint, walk_rate, "1000", 10, 10000000),
        ITEM("sampler", "idle_walk_rate", uint, idle_walk_rate, "20000", 10, 10000000),
        ITEM("sampler", "stat", path, stat_path, "/proc/stat", 0, 0),
        ITEM("sampler", "refresh", duration, walk_refresh_usec, "6h", 10 * SEC, 30 * 86400 * SEC),
        ITEM("sampler", "timeout", duration, sampler_timeout_usec, "30s", 1 * SEC, 3600 * SEC),

        ITEM("device", "diskstats", path, diskstats_path, "/proc/diskstats", 0, 0),
        ITEM("device", "sysfs", path, sysfs_path, "/sys", 0, 0),
        ITEM("device", "jbd2", path, jbd2_path, "/proc/fs/jbd2", 0, 0),

        ITEM("btrfs", "snapshot_search", boolean, btrfs_snapshot_search, "yes", 0, 0),

        ITEM("consumers", "tmpfiles_dirs", paths, tmpfiles_dirs, "/etc/tmpfiles.d /run/tmpfiles.d /usr/lib/tmpfiles.d", 0, 0),
        ITEM("consumers", "mail_spools", paths, mail_spools, "/var/mail /var/spool/mail", 0, 0),
        ITEM("consumers", "tmpreaper_conf", path, tmpreaper_conf, "/etc/tmpreaper.conf", 0, 0),
        ITEM("consumers", "tmpwatch_cron", path, tmpwatch_cron, "/etc/cron.daily/tmpwatch", 0, 0),
        ITEM("consumers", "popcon_conf", path, popcon_conf, "/etc/popularity-contest.conf", 0, 0),
        ITEM("consumers", "interval", duration, consumers_interval_usec, "10min", 10 * SEC, 7 * 86400 * SEC),

        ITEM("advisor", "noatime_threshold", uint, noatime_threshold, "60", 1, 100000000),
        ITEM("advisor", "min_saving", uint, min_saving, "1", 0, 100000000),
        ITEM("advisor", "window", duration, advice_window_usec, "1d", 60 * SEC, 90 * 86400 * SEC),
        ITEM("advisor", "costs", costs, costs, "", 0, 0),

        ITEM("export", "textfile", path_opt, textfile, "", 0, 0),
        ITEM("export", "textfile_mode", mode, textfile_mode, "0644", 0, 0777),

        ITEM("store", "flush_interval", duration, flush_interval_usec, "5min", 1 * SEC, 86400 * SEC),
        ITEM("store", "rings", rings, rings, "1min:6h, 10min:7d, 1h:90d", 0, 0),
        ITEM("store", "max_mounts", uint, max_histories, "10000", 1, 1000000),
};

/* Keys of a [mount:PATH] section, as offsets into struct mount_config; not
 * set, they are zero: no path, none, no. */
static const struct config_item mount_items[] = {
        MITEM("probe_dir", path, probe_dir),
        MITEM("needs_atime", need, needs_atime),
        MITEM("ignore", boolean, ignore),
};

#define MOUNT_SECTION_PREFIX "mount:"
#define MAX_MOUNT_SECTIONS 4096

static const char *const config_sections[] = { "daemon",    "control", "mounts", "probe", "sampler",
                                               "consumers", "advisor", "device", "btrfs", "export", "store" };

static bool section_known(const char *name) {
        const char *path = startswith(name, MOUNT_SECTION_PREFIX);

        if (path)
                return path[0] == '/';
        for (size_t i = 0; i < ELEMENTSOF(config_sections); i++)
                if (streq(config_sections[i], name))
                        return true;
        return false;
}

/* The row for section/key (any [mount:PATH] section the same), or NULL. */
static const struct config_item *item_find(const char *section, const char *key) {
        if (startswith(section, MOUNT_SECTION_PREFIX)) {
                for (size_t i = 0; i < ELEMENTSOF(mount_items); i++)
                        if (streq(mount_items[i].key, key))
                                return &mount_items[i];
                return NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(config_items); i++)
                if (streq(config_items[i].section, section) && streq(config_items[i].key, key))
                        return &config_items[i];
        return NULL;
}

static void *field(void *base, const struct config_item *it) {
        return (char *) base + it->offset;
}

static const void *cfield(const void *base, const struct config_item *it) {
        return (const char *) base + it->offset;
}

/* Parses 'value' for 'it' into base (a struct config, or a struct
 * mount_config for mount_items[]); see struct config_type's parse. */
static int item_parse(void *base, const struct config_item *it, const char *value, const char **ret_why) {
        assert(base && it && value && ret_why);
        return it->type->parse(it, value, field(base, it), ret_why);
}

static void item_format(const void *base, const struct config_item *it, char *buf, size_t len) {
        assert(len > 0);
        it->type->format(cfield(base, it), buf, len);
}

/* " (allowed: 1 to 4096)", for a number out of range. */
static void item_describe_range(const struct config_item *it, char *buf, size_t len) {
        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];

        assert(it->type->format_bound); /* only numbers return -ERANGE */
        it->type->format_bound(it->min, a, sizeof a);
        it->type->format_bound(it->max, b, sizeof b);
        snprintf(buf, len, " (allowed: %s to %s)", a, b);
}

static void items_free(void *base, const struct config_item *items, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (items[i].type->done)
                        items[i].type->done(field(base, &items[i]));
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
        consumers_free(c->declared);
        free(c);
        return NULL;
}

const struct mount_config *config_find_mount(const struct config *c, const char *target) {
        assert(c && target);
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

        assert(ret);
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

/* A "[section]" line: records the section, and whether its keys are read. */
static void lex_section(struct parse_ctx *p, const char *s, size_t l) {
        const char *close = memchr(s, ']', l);
        size_t nlen;
        char b[64];

        if (!close) {
                add_error(p, "section header without closing ']'");
                p->skip_section = true;
                return;
        }
        for (const char *t = close + 1; t < s + l; t++)
                if (!strchr(" \t", *t)) {
                        add_error(p, "unexpected text after section header");
                        break;
                }
        nlen = MIN((size_t) (close - s - 1), sizeof p->section - 1);
        memcpy(p->section, s + 1, nlen);
        p->section[nlen] = 0;
        p->skip_section = !section_known(p->section);
        if (!p->skip_section)
                return;
        if (startswith(p->section, MOUNT_SECTION_PREFIX))
                add_error(p, "[%s]: a mount section needs an absolute path, as in [mount:/srv]",
                          shorten(p->section, b, sizeof b));
        else
                add_error(p, "unknown section [%s]", shorten(p->section, b, sizeof b));
}

/* A "key = value" line: false if it is not one, or has a '#' inih would keep. */
static bool lex_key(struct parse_ctx *p, const char *s, size_t l) {
        const char *sep = memchr(s, '=', l), *v;

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

/* Checks one line (leading blanks already removed, no newline) before inih
 * sees it. Returns false if inih must not see it. */
static bool lex_line(struct parse_ctx *p, const char *s, size_t l) {
        if (l == 0 || s[0] == ';' || s[0] == '#')
                return true;
        if (s[0] == '[') {
                lex_section(p, s, l);
                return !p->skip_section;
        }
        return lex_key(p, s, l);
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
        const struct config_item *it;
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
        it = item_find(section, name);
        if (!it) {
                add_error(p, "[%s] %s: unknown key", section, name);
                return 1;
        }
        prev = seen_before(p, section, name);
        if (prev > 0) {
                add_error(p, "[%s] %s: already set on line %u", section, name, prev);
                return 1;
        }
        mount_target = startswith(section, MOUNT_SECTION_PREFIX);
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
        else if (r == 0 && mount_target && streq(name, "needs_atime"))
                /* Where the operator said it, for whoever is refused by it. */
                ((struct mount_config *) base)->needs_atime_line = p->line;
        else if (r < 0) {
                char range[2 * FORMAT_DURATION_MAX + 32] = "";

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

        assert(c->sampler_interval_usec > 0); /* its range starts at 1s */
        for (unsigned i = 0; i < c->rings.n; i++)
                if (((uint64_t) c->rings.spec[i].resolution * USEC_PER_SEC) % c->sampler_interval_usec != 0) {
                        char a[FORMAT_DURATION_MAX], b[FORMAT_DURATION_MAX];
                        unsigned rl = line_of(p, "store", "rings");

                        p->line = rl ? rl : line_of(p, "sampler", "interval");
                        add_error(p, "[store] rings: resolution %s is not a multiple of [sampler] interval %s",
                                  format_duration(a, sizeof a, (uint64_t) c->rings.spec[i].resolution * USEC_PER_SEC),
                                  format_duration(b, sizeof b, c->sampler_interval_usec));
                        return;
                }
}

/* Each [mount:PATH] needs_atime as a consumer of its own, named by the
 * file and line that declare it: the daemon lists it with the consumers the
 * scan finds, so that a client's guard refuses what the declaration rules
 * out as it does what they do. */
static int declare_consumers(struct config *c) {
        _cleanup_(consumers_freep) Consumers *d = NULL;
        int r;

        for (size_t i = 0; i < c->n_mounts; i++) {
                const struct mount_config *mc = &c->mounts[i];
                _cleanup_free_ char *why = NULL, *source = NULL;

                if (mc->needs_atime == NEED_NONE)
                        continue;
                if (!d && consumers_new(&d) < 0)
                        return -ENOMEM;
                if (asprintf(&why, "the configuration says software here reads atime ([mount:%s] needs_atime = %s)",
                             mc->target, atime_need_to_string(mc->needs_atime)) < 0 ||
                    asprintf(&source, "%s:%u", c->path ? c->path : "atimed.conf", mc->needs_atime_line) < 0)
                        return -ENOMEM;
                r = consumers_add(d, CONSUMER_CONFIG, mc->needs_atime, mc->target, why, source);
                if (r < 0)
                        return r;
        }
        /* Pointers only now: consumers_add() moves the array as it grows. */
        for (size_t i = 0, k = 0; d && i < c->n_mounts; i++)
                if (c->mounts[i].needs_atime != NEED_NONE)
                        c->mounts[i].declared = &d->v[k++];
        c->declared = TAKE_PTR(d);
        return 0;
}

int config_load_string(const char *name, const char *text, size_t len, struct config **ret, char ***ret_errors) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_free_ struct parse_ctx *p = NULL;
        int r;

        assert(name && text && ret && ret_errors);
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
        r = declare_consumers(c);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

int config_load(const char *path, struct config **ret, char ***ret_errors) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        assert(path && ret && ret_errors);
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

        assert(c && f);
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
