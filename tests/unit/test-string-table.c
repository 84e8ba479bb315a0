/* test-string-table: an enum's names both ways, through the macro and
 * through the tables that use it. */
#include <errno.h>
#include <syslog.h>

#include "log.h"
#include "macro.h"
#include "string-table.h"
#include "../tap.h"

typedef enum Colour {
        COLOUR_RED,
        COLOUR_GREEN,
        COLOUR_UNNAMED,
        COLOUR_BLUE,
        _COLOUR_MAX,
        _COLOUR_INVALID = -EINVAL,
} Colour;

static const char *const colour_table[_COLOUR_MAX] = {
        [COLOUR_RED] = "red",
        [COLOUR_GREEN] = "green",
        [COLOUR_BLUE] = "blue",
};

static const char *colour_to_string(Colour c);
static int colour_from_string(const char *s);
static DEFINE_STRING_TABLE_LOOKUP(colour, Colour);

/* The same names, and two more for blue. */
static const char *const hue_table[_COLOUR_MAX] = {
        [COLOUR_RED] = "red",
        [COLOUR_GREEN] = "green",
        [COLOUR_BLUE] = "blue",
};
static const StringAlias hue_aliases[] = {
        { "azure", COLOUR_BLUE },
        { "navy", COLOUR_BLUE },
};
static int hue_from_string(const char *s);
static DEFINE_STRING_TABLE_LOOKUP_FROM_STRING_WITH_ALIASES(hue, Colour);

int main(void) {
        is_str(colour_to_string(COLOUR_RED), "red", "the first value");
        is_str(colour_to_string(COLOUR_BLUE), "blue", "the last value");
        ok(!colour_to_string(COLOUR_UNNAMED), "a value the table leaves unnamed: NULL");
        ok(!colour_to_string(_COLOUR_MAX), "one past the end: NULL");
        ok(!colour_to_string(_COLOUR_INVALID), "a negative value: NULL");
        is_int(colour_from_string("green"), COLOUR_GREEN, "a name to its value");
        is_int(colour_from_string("blue"), COLOUR_BLUE, "past a hole in the table");
        is_int(colour_from_string("Blue"), -EINVAL, "case matters");
        is_int(colour_from_string(""), -EINVAL, "the empty name: EINVAL");
        is_int(string_table_lookup(colour_table, ELEMENTSOF(colour_table), "red"), COLOUR_RED,
               "string_table_lookup() itself");

        is_int(hue_from_string("green"), COLOUR_GREEN, "with aliases: a name in the table");
        is_int(hue_from_string("navy"), COLOUR_BLUE, "an alias");
        is_int(hue_from_string("teal"), -EINVAL, "neither: EINVAL");

        /* The tables that take aliases. */
        is_int(log_level_from_string("debug"), LOG_DEBUG, "log level by its name");
        is_int(log_level_from_string("warn"), LOG_WARNING, "and by an alias");
        is_int(log_level_from_string("loud"), -EINVAL, "an unknown one: EINVAL");
        is_str(log_level_to_string(LOG_ERR), "err", "LOG_ERR's name");
        ok(!log_level_to_string(8) && !log_level_to_string(-1), "outside the levels: NULL");
        return tap_done();
}
