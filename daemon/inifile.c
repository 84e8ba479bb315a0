/* inifile.c: ini text into sections and keys, line by line (see inifile.h).
 * Written for atimed rather than taken from a library: inih, used before,
 * cuts section names at 50 bytes and lines at 200 without a word, and a
 * mount point may be 4095 bytes long. Here a line is read whole, however
 * long, from the text in memory. */
#include "inifile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

void inifile_init(IniReader *r, const char *text, size_t len) {
        *r = (IniReader) { .text = text, .len = len };
}

void inifile_done(IniReader *r) {
        free(r->buf);
        r->buf = NULL;
        r->size = 0;
}

static bool blank(char c) {
        return c == ' ' || c == '\t';
}

/* The end of s with the blanks before it removed. */
static char *rstrip(char *s, char *end) {
        while (end > s && blank(end[-1]))
                end--;
        *end = 0;
        return s;
}

static char *lstrip(char *s) {
        while (blank(*s))
                s++;
        return s;
}

static int error(IniLine *ret, IniKind kind, const char *name, const char *why) {
        ret->kind = kind;
        ret->name = name;
        ret->error = why;
        return 1;
}

/* "[name]", nothing but blanks after it. */
static int section(char *s, IniLine *ret) {
        char *close = strchr(s, ']');

        if (!close)
                return error(ret, INI_SECTION, NULL, "section header without closing ']'");
        if (close[1] != 0) /* the line's trailing blanks are gone already */
                return error(ret, INI_SECTION, NULL, "unexpected text after section header");
        *close = 0;
        ret->kind = INI_SECTION;
        ret->name = s + 1;
        return 1;
}

/* "key = value" or "key: value", whichever separator comes first. */
static int key(char *s, IniLine *ret) {
        char *sep = strpbrk(s, "=:"), *v;

        if (!sep || sep == s)
                return error(ret, INI_ERROR, NULL, "expected 'key = value', a [section] or a comment");
        v = lstrip(sep + 1);
        rstrip(s, sep);
        for (char *c = v; *c; c++) {
                if (c != v && !blank(c[-1]))
                        continue;
                if (*c == '#')
                        return error(ret, INI_ERROR, s,
                                     "'#' after a value is not a comment; put comments on a line of their own");
                if (*c == ';') {
                        rstrip(v, c);
                        break;
                }
        }
        ret->kind = INI_KEY;
        ret->name = s;
        ret->value = v;
        return 1;
}

/* The next line of the text, without its newline: its start, its length. */
static const char *next_line(IniReader *r, size_t *ret_len) {
        const char *s = r->text + r->pos, *nl = memchr(s, '\n', r->len - r->pos);
        size_t l = nl ? (size_t) (nl - s) : r->len - r->pos;

        r->pos += l + (nl ? 1 : 0);
        r->line++;
        if (r->line == 1 && l >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
                s += 3, l -= 3;
        if (l > 0 && s[l - 1] == '\r')
                l--;
        *ret_len = l;
        return s;
}

int inifile_next(IniReader *r, IniLine *ret) {
        while (r->pos < r->len) {
                size_t l;
                const char *s = next_line(r, &l);
                char *b;

                *ret = (IniLine) { .line = r->line };
                if (l + 1 > r->size) {
                        char *n = realloc(r->buf, l + 1);

                        if (!n)
                                return -ENOMEM;
                        r->buf = n;
                        r->size = l + 1;
                }
                memcpy(r->buf, s, l);
                b = lstrip(rstrip(r->buf, r->buf + l));
                if (memchr(s, 0, l))
                        return error(ret, b[0] == '[' ? INI_SECTION : INI_ERROR, NULL, "line contains a NUL byte");
                if (b[0] == 0 || b[0] == '#' || b[0] == ';')
                        continue;
                return b[0] == '[' ? section(b, ret) : key(b, ret);
        }
        return 0;
}
