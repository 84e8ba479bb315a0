/* inifile.h: ini text read line by line, as atimed.conf(5) defines it:
 * "[section]", "key = value" (or "key: value"), comments and blank lines.
 * No line, section name, key or value has a limit but the text's own
 * length: nothing is ever cut, and a line that is none of these is
 * reported with its number, never skipped in silence. What the names and
 * values mean is the caller's (config.c); this only splits.
 *
 * Blanks (spaces and tabs) around a line, a key and a value are layout.
 * A line starting with '#' or ';' is a comment; in a value, ';' after a
 * blank starts a comment, and '#' at its start or after a blank is an
 * error (it looks like a comment and is not one). A UTF-8 byte order mark
 * at the start of the text and a carriage return ending a line are
 * dropped. */
#pragma once

#include <stddef.h>

typedef enum IniKind {
        INI_SECTION, /* name: what is between the brackets, as written; or
                      * error: why the header cannot be read (the keys that
                      * follow belong to no section) */
        INI_KEY,     /* name: the key; value: the value */
        INI_ERROR,   /* error: what is wrong; name: the key, if the line has one */
} IniKind;

typedef struct IniLine {
        unsigned line; /* from 1 */
        IniKind kind;
        const char *name;
        const char *value;
        const char *error;
} IniLine;

typedef struct IniReader {
        const char *text;
        size_t len, pos;
        unsigned line;
        char *buf; /* the current line's copy, which name and value point into */
        size_t size;
} IniReader;

void inifile_init(IniReader *r, const char *text, size_t len);
void inifile_done(IniReader *r);
/* The next line that is neither blank nor a comment, in *ret (its strings
 * valid until the next call): 1; 0 at the end of the text; -ENOMEM. */
int inifile_next(IniReader *r, IniLine *ret);
