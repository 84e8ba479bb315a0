/* config.c: the ini file into struct config. Keys are described once, in
 * config_items[]: one row a key, with its section, its type, the field of
 * struct config its typed value goes to, its default and its bounds. A type
 * (struct config_type, config-types.c) is a parser, a printer and a
 * destructor; parsing, defaults, printing and freeing all walk the table,
 * so adding a key is one row. Values are parsed once, here: the rest of
 * atimed reads durations in usec, the cost table and the rings as structs,
 * and never the text.
 *
 * inih parses the file, behind a reader of ours that checks each line
 * first and hands inih what it would cut by reference ("reading the file"
 * below): lines, section names and values of any length are read whole;
 * what the file says is taken exactly or refused, never cut or guessed.
 * Paths of [mount:PATH] sections are written in an escaped form
 * (atimed.conf(5), "Paths of mounts") that holds any bytes a mount point
 * can; --check-config prints them in it, so that its output reads back to
 * the same configuration.
 * Every error names file:line and the key. */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-types.h"
#include "escape.h"
#include "fileio.h"
#include "parse-util.h"
#include "protocol.h"
#include "strv.h"

#define CONFIG_FILE_MAX (1024 * 1024)

#define FIELD_OFFSET(st, f, t) \
        (offsetof(st, f) + 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((st *) 0)->f), CTYPE_##t) ? 1 : -1]))
#define ITEM(s, k, t, f, d, lo, hi) { s, k, &config_type_##t, FIELD_OFFSET(struct config, f, t), d, lo, hi }
#define MITEM(k, t, f) { "mount:", k, &config_type_##t, FIELD_OFFSET(struct mount_config, f, t), "", 0, 0 }
#define SEC (1000000ULL)

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
        ITEM("mounts", "events", boolean, mount_events, "no", 0, 0),

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
        MITEM("probe_dir", epath, probe_dir),
        MITEM("needs_atime", need, needs_atime),
        MITEM("ignore", boolean, ignore),
};

#define MOUNT_SECTION_PREFIX "mount:"
#define MAX_MOUNT_SECTIONS 4096

static const char *const config_sections[] = { "daemon",    "control", "mounts", "probe", "sampler",
                                               "consumers", "advisor", "device", "btrfs", "export", "store" };

static bool section_known(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(config_sections); i++)
                if (streq(config_sections[i], name))
                        return true;
        return false;
}

/* The row for section/key (any [mount:PATH] section the same), or NULL. */
static const struct config_item *item_find(bool mount, const char *section, const char *key) {
        if (mount) {
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

/* What print() writes of 'what', as a string; NULL if out of memory. */
static char *print_string(int (*print)(const void *what, const void *how, FILE *f), const void *what,
                          const void *how) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r;

        if (!f)
                return NULL;
        r = print(what, how, f);
        if (fclose(f) != 0 || r < 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static int print_item(const void *base, const void *it, FILE *f) {
        return ((const struct config_item *) it)->type->format(cfield(base, it), f);
}

/* The value of 'it' in the file's syntax, whole; NULL if out of memory. */
static char *item_format(const void *base, const struct config_item *it) {
        return print_string(print_item, base, it);
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

/* The index of the [mount:PATH] entry for 'target' (taken), created on
 * first use: sections for one mount, however written, are one entry.
 * -E2BIG past MAX_MOUNT_SECTIONS. */
static int mount_section(struct config *c, char *target, size_t *ret) {
        _cleanup_free_ char *t = target;
        struct mount_config *n;

        for (size_t i = 0; i < c->n_mounts; i++)
                if (streq(c->mounts[i].target, t)) {
                        *ret = i;
                        return 0;
                }
        if (c->n_mounts >= MAX_MOUNT_SECTIONS)
                return -E2BIG;
        n = realloc(c->mounts, (c->n_mounts + 1) * sizeof *n);
        if (!n)
                return -ENOMEM;
        c->mounts = n;
        c->mounts[c->n_mounts] = (struct mount_config) { .target = TAKE_PTR(t) };
        *ret = c->n_mounts++;
        return 0;
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

/* ------------------------------------------------------- reading the file
 *
 * inih (ini_parse_stream()) parses the file, through reader(), which sees
 * each line first. reader() is the one lexer of atimed.conf(5): it counts
 * lines, drops a byte order mark and a carriage return, refuses NUL bytes,
 * lines that are none of the forms and a '#' that looks like a comment,
 * starts each section (its errors at its line, keys or none), and hands
 * inih the line in a form inih reads as the manual says: no leading blanks
 * (inih would take the line for the continuation of the value before it),
 * no comment after a value (for inih a ';' right after the '=' is part of
 * the value). inih splits the key from the value, keeps track of the
 * section and calls handler() for each key.
 *
 * inih cuts without a word: a section name at 49 bytes (INIH_SECTION_MAX)
 * and a line at its buffer's size ('num', 200 bytes in Debian's build; the
 * reader hands it at most num - 3 characters and the newline). A section
 * name or a value that inih would not read back whole and the same (too
 * long, a ';' after a space, a space at either end) is kept in p->refs,
 * and inih is handed a reference in its place: REF_MARK and the index. A
 * real name or value that starts with REF_MARK goes by reference too, so
 * that every one that does is a reference. handler() resolves them before
 * anything else sees the text, and checks that the section inih names is
 * the one the reader started: a cut is an error, whatever inih's build. A
 * key inih would not hold is an unknown key: no key is that long. */
#define INIH_SECTION_MAX 49 /* inih's MAX_SECTION, 50, less the NUL */
#define INIH_LINE_MIN 64    /* a smaller buffer than any build of inih has */
#define REF_MARK '\x01'
#define REF_MAX 24          /* REF_MARK, an index, the NUL */
#define BOM "\xEF\xBB\xBF"

struct parse_ctx {
        const char *name;
        const char *text;    /* the file, and the reader's place in it */
        size_t len, pos;
        unsigned line;
        char *section;       /* as written; NULL before the first */
        char shown[100];     /* the same, shortened, for messages */
        char *section_id;    /* what a key set twice is told by: the section, "mount:#N" for the Nth mount */
        size_t mount;        /* in a [mount:PATH] section: its entry; else SIZE_MAX */
        bool skip_section;   /* its keys are not read (an error said why) */
        char **refs;         /* section names and values inih is handed by reference */
        size_t n_refs, size_refs;
        char **seen_keys;    /* "section_id\nkey" of every key set so far */
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

/* Shows a name or value in an error message without flooding or mangling
 * the log: the file:line says where the whole of it is. */
static const char *shorten(const char *s, char *buf, size_t len) {
        size_t i;

        for (i = 0; s[i] && i + 4 < len; i++)
                buf[i] = isprint((unsigned char) s[i]) ? s[i] : '?';
        buf[i] = 0;
        if (s[i])
                strcpy(buf + (i > 3 ? i - 3 : 0), "...");
        return buf;
}

/* The same for key[0..kl), a key on the line being read. */
static const char *shorten_key(const char *key, size_t kl, char kb[static 64]) {
        char k[65];
        size_t n = MIN(kl, sizeof k - 1);

        memcpy(k, key, n);
        k[n] = 0;
        return shorten(k, kb, 64);
}

/* The start of a [mount:PATH] section: its entry, created or found. */
static void mount_section_start(struct parse_ctx *p, const char *written) {
        char *target = NULL, id[32];
        const char *why = NULL;
        int r;

        r = config_path_unescape(written, true, &target, &why);
        if (r == -ENOMEM) {
                p->oom = true;
                return;
        }
        if (r < 0) {
                add_error(p, "[%s]: %s%s", p->shown, why, written[0] == '/' ? "" : ", as in [mount:/srv]");
                return;
        }
        r = mount_section(p->config, target, &p->mount);
        if (r == -E2BIG)
                add_error(p, "[%s]: more than %d [mount:...] sections", p->shown, MAX_MOUNT_SECTIONS);
        else if (r < 0)
                p->oom = true;
        if (r < 0)
                return;
        snprintf(id, sizeof id, "%s#%zu", MOUNT_SECTION_PREFIX, p->mount);
        if (config_set_string(&p->section_id, id) < 0)
                p->oom = true;
        p->skip_section = false;
}

static void on_section(struct parse_ctx *p, const char *name) {
        const char *path = startswith(name, MOUNT_SECTION_PREFIX);

        p->skip_section = true;
        p->mount = SIZE_MAX;
        shorten(name, p->shown, sizeof p->shown);
        if (config_set_string(&p->section, name) < 0) {
                p->oom = true;
                return;
        }
        if (path)
                mount_section_start(p, path);
        else if (!section_known(name))
                add_error(p, "unknown section [%s]", p->shown);
        else if (config_set_string(&p->section_id, name) < 0)
                p->oom = true;
        else
                p->skip_section = false;
}

/* A section header that cannot be read: its keys belong to no section
 * anyone could name, and are not read. */
static void section_unreadable(struct parse_ctx *p) {
        p->skip_section = true;
        p->mount = SIZE_MAX;
        p->shown[0] = 0;
}

/* Records that the current section's key was set on this line; returns
 * the line it was set on before, or 0. */
static unsigned seen_before(struct parse_ctx *p, const char *name) {
        _cleanup_free_ char *k = NULL;
        size_t n = strv_length(p->seen_keys);
        unsigned *nl;

        if (asprintf(&k, "%s\n%s", p->section_id, name) < 0) {
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

/* A key that no row of the current section has. */
static void unknown_key(struct parse_ctx *p, const char *kb) {
        if (!p->section)
                add_error(p, "%s: key outside of any [section]", kb);
        else
                add_error(p, "[%s] %s: unknown key", p->shown, kb);
}

static void on_key(struct parse_ctx *p, const char *name, const char *value) {
        bool mount = p->mount != SIZE_MAX;
        void *base = mount ? (void *) &p->config->mounts[p->mount] : (void *) p->config;
        const struct config_item *it;
        const char *why = NULL;
        char kb[64], vb[64];
        unsigned prev;
        int r;

        shorten(name, kb, sizeof kb);
        it = p->section ? item_find(mount, p->section, name) : NULL;
        if (!it) {
                unknown_key(p, kb);
                return;
        }
        prev = seen_before(p, name);
        if (prev > 0) {
                add_error(p, "[%s] %s: already set on line %u", p->shown, kb, prev);
                return;
        }
        r = item_parse(base, it, value, &why);
        if (r == -ENOMEM)
                p->oom = true;
        else if (r == 0 && mount && streq(name, "needs_atime"))
                /* Where the operator said it, for whoever is refused by it. */
                ((struct mount_config *) base)->needs_atime_line = p->line;
        else if (r < 0) {
                char range[2 * FORMAT_DURATION_MAX + 32] = "";

                if (r == -ERANGE)
                        item_describe_range(it, range, sizeof range);
                add_error(p, "[%s] %s: invalid value '%s': %s%s", p->shown, kb, shorten(value, vb, sizeof vb), why,
                          range);
        }
}

static bool blank(char c) {
        return c == ' ' || c == '\t';
}

/* Whether inih reads s[0..l) back whole and the same as a section name, a
 * key or a value: at most 'max' bytes; no space at either end, which inih
 * strips (its isspace() is wider than the manual's blanks); no ';' after
 * a space, where inih sees a comment; no REF_MARK first. */
static bool inih_holds(const char *s, size_t l, size_t max) {
        if (l > max)
                return false;
        if (l > 0 && (isspace((unsigned char) s[0]) || isspace((unsigned char) s[l - 1]) || s[0] == REF_MARK))
                return false;
        for (size_t i = 1; i < l; i++)
                if (s[i] == ';' && isspace((unsigned char) s[i - 1]))
                        return false;
        return true;
}

/* s[0..l) as inih is to be handed it: itself (*ret points into s) where
 * inih holds it in 'max' bytes, else a reference to a copy kept in
 * p->refs, written into 'ref'. 0 or -ENOMEM. */
static int part_or_ref(struct parse_ctx *p, const char *s, size_t l, size_t max, char ref[static REF_MAX],
                       const char **ret, size_t *ret_len) {
        if (inih_holds(s, l, max)) {
                *ret = s;
                *ret_len = l;
                return 0;
        }
        if (p->n_refs == p->size_refs) {
                size_t n = p->size_refs ? 2 * p->size_refs : 16;
                char **v = reallocarray(p->refs, n, sizeof *v);

                if (!v)
                        return -ENOMEM;
                p->refs = v;
                p->size_refs = n;
        }
        p->refs[p->n_refs] = memdup_str(s, l);
        if (!p->refs[p->n_refs])
                return -ENOMEM;
        *ret_len = (size_t) snprintf(ref, REF_MAX, "%c%zu", REF_MARK, p->n_refs++);
        *ret = ref;
        return 0;
}

/* The text a reference that handler() is given stands for; any other text
 * as it is. NULL for a reference the reader did not make. */
static const char *resolve(const struct parse_ctx *p, const char *s) {
        unsigned long long i;
        char *end;

        if (s[0] != REF_MARK)
                return s;
        if (!isdigit((unsigned char) s[1]))
                return NULL;
        errno = 0;
        i = strtoull(s + 1, &end, 10);
        return errno == 0 && *end == 0 && i < p->n_refs ? p->refs[i] : NULL;
}

/* What inih is handed of a line, in 'out': at most 'room' characters
 * (the caller has made sure), and the newline inih expects. */
static void hand(struct parse_ctx *p, char *out, size_t room, const char *fmt, ...) _printf_(4, 5);
static void hand(struct parse_ctx *p, char *out, size_t room, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(out, room + 1, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n > room) { /* never so; but never a line cut in silence */
                add_error(p, "line does not fit the ini parser's buffer");
                n = 0;
        }
        strcpy(out + n, "\n");
}

/* A "[name]" line, blanks around it gone: starts the section, and hands
 * inih its name or a reference to it. */
static void lex_section(struct parse_ctx *p, const char *s, size_t l, char *out, size_t room) {
        const char *close = memchr(s, ']', l), *part;
        char ref[REF_MAX];
        size_t pl;

        if (!close || close != s + l - 1) {
                add_error(p, close ? "unexpected text after section header" : "section header without closing ']'");
                section_unreadable(p);
                return;
        }
        {
                _cleanup_free_ char *name = memdup_str(s + 1, l - 2);

                if (!name) {
                        p->oom = true;
                        return;
                }
                on_section(p, name);
        }
        if (part_or_ref(p, s + 1, l - 2, INIH_SECTION_MAX, ref, &part, &pl) < 0)
                p->oom = true;
        else /* at most 1 + INIH_SECTION_MAX + 1 < INIH_LINE_MIN - 3 characters */
                hand(p, out, room, "[%.*s]", (int) pl, part);
}

/* A value, from just after its '=' or ':' to the end of the line: blanks
 * around it and a comment after it gone. A '#' at its start or after a
 * blank is an error: a comment must have a line of its own. */
static bool lex_value(struct parse_ctx *p, const char *key, size_t kl, const char **v, size_t *vl) {
        const char *s = *v, *end = *v + *vl;
        char kb[64];

        while (s < end && blank(*s))
                s++;
        for (const char *c = s; c < end; c++) {
                if (c != s && !blank(c[-1]))
                        continue;
                if (*c == '#') {
                        add_error(p, "[%s] %s: '#' after a value is not a comment; put comments on a line of their own",
                                  p->shown, shorten_key(key, kl, kb));
                        return false;
                }
                if (*c == ';') {
                        end = c;
                        break;
                }
        }
        while (end > s && blank(end[-1]))
                end--;
        *v = s;
        *vl = (size_t) (end - s);
        return true;
}

/* A "key = value" (or "key: value") line, blanks around it gone: hands
 * inih the key and the value (or a reference to it) without a comment. */
static void lex_key(struct parse_ctx *p, const char *s, size_t l, char *out, size_t room) {
        size_t kl = 0, vl, pl;
        const char *v, *part;
        char ref[REF_MAX], kb[64];

        while (kl < l && s[kl] != '=' && s[kl] != ':')
                kl++;
        if (kl == 0 || kl == l) {
                add_error(p, "expected 'key = value', a [section] or a comment");
                return;
        }
        v = s + kl + 1;
        vl = l - kl - 1;
        while (kl > 0 && blank(s[kl - 1]))
                kl--;
        if (!lex_value(p, s, kl, &v, &vl))
                return;
        if (part_or_ref(p, v, vl, room > kl + 1 ? room - kl - 1 : 0, ref, &part, &pl) < 0) {
                p->oom = true;
                return;
        }
        /* inih drops a byte order mark at the start of its first line. */
        if (inih_holds(s, kl, room) && kl + 1 + pl <= room && !(p->line == 1 && kl >= 3 && memcmp(s, BOM, 3) == 0))
                hand(p, out, room, "%.*s=%.*s", (int) kl, s, (int) pl, part);
        else if (!p->skip_section)
                unknown_key(p, shorten_key(s, kl, kb));
}

/* The next line of the text, without its newline, a byte order mark
 * before the first or a carriage return ending it. */
static const char *next_line(struct parse_ctx *p, size_t *ret_len) {
        const char *s = p->text + p->pos, *nl = memchr(s, '\n', p->len - p->pos);
        size_t l = nl ? (size_t) (nl - s) : p->len - p->pos;

        p->pos += l + (nl ? 1 : 0);
        p->line++;
        if (p->line == 1 && l >= 3 && memcmp(s, BOM, 3) == 0)
                s += 3, l -= 3;
        if (l > 0 && s[l - 1] == '\r')
                l--;
        *ret_len = l;
        return s;
}

/* inih's reader: the next line, checked, as inih is to read it (see the
 * comment above). Blank lines, comments and lines in error reach inih
 * empty. */
static char *reader(char *str, int num, void *stream) {
        struct parse_ctx *p = stream;
        const char *s;
        size_t l;

        if (p->pos >= p->len || p->oom)
                return NULL;
        if (num < INIH_LINE_MIN) {
                add_error(p, "the ini parser's line buffer of %d bytes is too small", num);
                return NULL;
        }
        s = next_line(p, &l);
        strcpy(str, "\n");
        while (l > 0 && blank(*s))
                s++, l--;
        while (l > 0 && blank(s[l - 1]))
                l--;
        if (memchr(s, 0, l)) {
                add_error(p, "line contains a NUL byte");
                if (s[0] == '[')
                        section_unreadable(p);
        } else if (l == 0 || s[0] == '#' || s[0] == ';')
                ; /* a comment */
        else if (s[0] == '[')
                lex_section(p, s, l, str, (size_t) num - 3);
        else
                lex_key(p, s, l, str, (size_t) num - 3);
        return str;
}

/* inih's call for each key: references resolved, and the section inih
 * names checked against the one the reader started. */
static int handler(void *user, const char *section, const char *name, const char *value) {
        struct parse_ctx *p = user;
        const char *s, *v;

        /* name NULL: a build of inih that announces sections, which the
         * reader has started already. */
        if (!name || !value || p->skip_section || p->oom)
                return 1;
        s = resolve(p, section);
        v = resolve(p, value);
        if (!s || !v || !streq(s, p->section ? p->section : "")) {
                char kb[64];

                add_error(p, "[%s] %s: the ini parser read this line as something else; nothing is taken from it",
                          p->shown, shorten(name, kb, sizeof kb));
                return 1;
        }
        on_key(p, name, v);
        return 1;
}

/* Every line of the text, to the sections and keys it sets. */
static void parse_text(struct parse_ctx *p) {
        int r = ini_parse_stream(reader, p, handler, p);

        if (r == -2)
                p->oom = true;
        else if (r != 0 && !p->errors) {
                /* Never so with the lines the reader hands over. */
                if (r > 0)
                        p->line = (unsigned) r;
                add_error(p, "syntax error");
        }
        for (size_t i = 0; i < p->n_refs; i++)
                free(p->refs[i]);
        free(p->refs);
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
                _cleanup_free_ char *why = NULL, *source = NULL, *path = NULL;

                if (mc->needs_atime == NEED_NONE)
                        continue;
                if (!d && consumers_new(&d) < 0)
                        return -ENOMEM;
                /* The section as the file has it (in its escaped form). */
                if (name_escape_text(mc->target, CONFIG_PATH_ESCAPED, &path) < 0 ||
                    asprintf(&why, "the configuration says software here reads atime ([mount:%s] needs_atime = %s)",
                             path, atime_need_to_string(mc->needs_atime)) < 0 ||
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
        struct parse_ctx p;
        int r;

        assert(name && text && ret && ret_errors);
        *ret_errors = NULL;
        r = config_new(&c);
        if (r < 0)
                return r;
        r = config_set_string(&c->path, name);
        if (r < 0)
                return r;

        p = (struct parse_ctx) { .name = name, .text = text, .len = len, .mount = SIZE_MAX, .config = c };
        parse_text(&p);
        if (!p.errors && !p.oom)
                check_consistency(&p);
        free(p.section);
        free(p.section_id);
        strv_free(p.seen_keys);
        free(p.seen_lines);
        if (p.oom) {
                strv_free(p.errors);
                return -ENOMEM;
        }
        if (p.errors) {
                *ret_errors = p.errors;
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

/* A [mount:PATH] section: its path in the escaped form, and what it sets. */
static int print_mount(const struct mount_config *mc, FILE *f) {
        _cleanup_free_ char *path = NULL;

        if (name_escape_text(mc->target, CONFIG_PATH_ESCAPED, &path) < 0)
                return -ENOMEM;
        fprintf(f, "\n[%s%s]\n", MOUNT_SECTION_PREFIX, path);
        for (size_t i = 0; i < ELEMENTSOF(mount_items); i++) {
                _cleanup_free_ char *v = item_format(mc, &mount_items[i]);

                if (!v)
                        return -ENOMEM;
                /* Only what the section sets: its defaults are "no". */
                if (v[0] && !streq(v, "no") && !streq(v, "none"))
                        fprintf(f, "%s = %s\n", mount_items[i].key, v);
        }
        return 0;
}

int config_print(const struct config *c, FILE *f) {
        const char *section = NULL;

        assert(c && f);
        fprintf(f, "# atimed effective configuration, from %s\n", c->path ? c->path : "built-in defaults");
        for (size_t i = 0; i < ELEMENTSOF(config_items); i++) {
                const struct config_item *it = &config_items[i];

                if (!section || !streq(section, it->section)) {
                        fprintf(f, "%s[%s]\n", section ? "\n" : "", it->section);
                        section = it->section;
                }
                fprintf(f, "%s = ", it->key);
                if (it->type->format(cfield(c, it), f) < 0)
                        return -ENOMEM;
                fputc('\n', f);
        }
        for (size_t m = 0; m < c->n_mounts; m++)
                if (print_mount(&c->mounts[m], f) < 0)
                        return -ENOMEM;
        return 0;
}

static int print_config(const void *c, _unused_ const void *how, FILE *f) {
        return config_print(c, f);
}

char *config_print_string(const struct config *c) {
        assert(c);
        return print_string(print_config, c, NULL);
}
