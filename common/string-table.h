/* string-table.h: an enum's names, looked up both ways by one macro.
 *
 * Given a table 'NAME_table' of strings indexed by the enum's values,
 *
 *   DEFINE_STRING_TABLE_LOOKUP_TO_STRING(NAME, TYPE)
 *     const char *NAME_to_string(TYPE v): the name, NULL for a value
 *     outside the table (negative too) or one the table leaves unnamed;
 *   DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(NAME, TYPE)
 *     int NAME_from_string(const char *s): the value, -EINVAL for a name
 *     not in the table (s must not be NULL);
 *   DEFINE_STRING_TABLE_LOOKUP(NAME, TYPE): both.
 *
 *   DEFINE_STRING_TABLE_LOOKUP_FROM_STRING_WITH_ALIASES(NAME, TYPE)
 *     the same, trying also the StringAlias array 'NAME_aliases': other
 *     names accepted for a value (never given back by NAME_to_string()). */
#pragma once

#include <assert.h>
#include <errno.h>
#include <stddef.h>

#include "macro.h"

typedef struct StringAlias {
        const char *name;
        int value;
} StringAlias;

static inline int string_table_lookup(const char *const *table, size_t n, const char *s) {
        assert(table);
        assert(s);

        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int) i;
        return -EINVAL;
}

/* (size_t) v: a negative value is out of range as well. */
#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                                \
        const char *name##_to_string(type v) {                                                          \
                return (size_t) v < ELEMENTSOF(name##_table) ? name##_table[(size_t) v] : NULL;         \
        }

#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type)                                              \
        int name##_from_string(const char *s) {                                                         \
                return string_table_lookup(name##_table, ELEMENTSOF(name##_table), s);                  \
        }

static inline int string_alias_lookup(const StringAlias *aliases, size_t n, const char *s) {
        assert(aliases);
        assert(s);

        for (size_t i = 0; i < n; i++)
                if (streq(aliases[i].name, s))
                        return aliases[i].value;
        return -EINVAL;
}

#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING_WITH_ALIASES(name, type)                                 \
        int name##_from_string(const char *s) {                                                         \
                int v = string_table_lookup(name##_table, ELEMENTSOF(name##_table), s);                 \
                                                                                                        \
                return v >= 0 ? v : string_alias_lookup(name##_aliases, ELEMENTSOF(name##_aliases), s); \
        }

#define DEFINE_STRING_TABLE_LOOKUP(name, type)                                                          \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                                \
        DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type)
