/* config-types.h: the kinds of value atimed.conf holds (config.c's table
 * names one for each key): how each is parsed from the file's text, printed
 * back in it, and freed. Private to config.c and config-types.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "advisor.h"
#include "config.h"

struct config_item;

/* A kind of value: how it is parsed, printed and freed. */
struct config_type {
        /* Parses 'value' into 'dest', the item's field, replacing what was
         * there. A bad value: -EINVAL, *ret_why says what was expected; a
         * number outside it->min..it->max: -ERANGE. Else 0 or -ENOMEM. */
        int (*parse)(const struct config_item *it, const char *value, void *dest, const char **ret_why);
        /* Writes the value at 'src' in the file's syntax, accepted back by
         * parse: whole, however long. 0 or -ENOMEM. */
        int (*format)(const void *src, FILE *f);
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
#define CTYPE_epath char *
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

extern const struct config_type config_type_path;
extern const struct config_type config_type_epath;
extern const struct config_type config_type_path_opt;
extern const struct config_type config_type_relpath;
extern const struct config_type config_type_group;
extern const struct config_type config_type_words;
extern const struct config_type config_type_paths;
extern const struct config_type config_type_duration;
extern const struct config_type config_type_size;
extern const struct config_type config_type_uint;
extern const struct config_type config_type_mode;
extern const struct config_type config_type_log_level;
extern const struct config_type config_type_boolean;
extern const struct config_type config_type_need;
extern const struct config_type config_type_costs;
extern const struct config_type config_type_rings;

/* Every byte a path may hold, in a form that reads back to it on a line of
 * the file (name_escape_text()'s 'extra'): ']' would close a section, '#'
 * and ';' start comments. */
#define CONFIG_PATH_ESCAPED "]#;"

/* A path in the escaped form (atimed.conf(5), "Paths of mounts") into its
 * bytes: absolute, under PATH_MAX. A control character or a blank ending
 * it must be written escaped, so that what is printed shows every byte.
 * With 'mount_point', it must also be written as the kernel names mount
 * points: else no mount could ever match it, and what it declares would
 * guard nothing. */
int config_path_unescape(const char *value, bool mount_point, char **ret, const char **ret_why);
