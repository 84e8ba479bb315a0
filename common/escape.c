/* escape.c: names of any bytes through JSON, terminals, logs and shells
 * (see escape.h). */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "macro.h"

size_t utf8_char(const char *s, uint32_t *ret_cp) {
        const unsigned char *p = (const unsigned char *) s;
        uint32_t cp, min;
        size_t n;

        if (p[0] < 0x80) {
                *ret_cp = p[0];
                return 1;
        }
        if ((p[0] & 0xe0) == 0xc0)
                n = 2, cp = p[0] & 0x1f, min = 0x80;
        else if ((p[0] & 0xf0) == 0xe0)
                n = 3, cp = p[0] & 0x0f, min = 0x800;
        else if ((p[0] & 0xf8) == 0xf0)
                n = 4, cp = p[0] & 0x07, min = 0x10000;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return n;
}

bool utf8_is_valid(const char *s) {
        uint32_t cp;

        for (size_t n; *s; s += n)
                if ((n = utf8_char(s, &cp)) == 0)
                        return false;
        return true;
}

static const char hex[] = "0123456789abcdef";

/* "\xHH" for the byte b at o; returns the end. */
static char *put_hex(char *o, char b) {
        unsigned char u = (unsigned char) b;

        *o++ = '\\', *o++ = 'x', *o++ = hex[u >> 4], *o++ = hex[u & 15];
        return o;
}

int name_escape(const char *raw, char **ret) {
        char *out = malloc(strlen(raw) * 4 + 1), *o = out;
        uint32_t cp;

        if (!out)
                return -ENOMEM;
        for (const char *s = raw; *s;) {
                size_t n = utf8_char(s, &cp);

                if (n == 0)
                        o = put_hex(o, *s++);
                else if (*s == '\\') {
                        *o++ = '\\', *o++ = '\\';
                        s++;
                } else {
                        memcpy(o, s, n);
                        o += n, s += n;
                }
        }
        *o = 0;
        *ret = out;
        return 0;
}

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int name_unescape(const char *s, char **ret) {
        char *out = malloc(strlen(s) + 1), *o = out;

        if (!out)
                return -ENOMEM;
        while (*s) {
                if (s[0] == '\\' && s[1] == '\\') {
                        *o++ = '\\';
                        s += 2;
                } else if (s[0] == '\\' && s[1] == 'x' && unhex(s[2]) >= 0 && unhex(s[3]) >= 0 &&
                           (unhex(s[2]) | unhex(s[3])) != 0) {
                        *o++ = (char) (unhex(s[2]) << 4 | unhex(s[3]));
                        s += 4;
                } else
                        *o++ = *s++;
        }
        *o = 0;
        *ret = out;
        return 0;
}

static bool unsafe_code_point(uint32_t cp) {
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069);
}

int name_escape_text(const char *raw, const char *extra, char **ret) {
        char *out = malloc(strlen(raw) * 4 + 1), *o = out;

        if (!out)
                return -ENOMEM;
        for (const char *s = raw; *s;) {
                uint32_t cp;
                size_t n = utf8_char(s, &cp);

                /* A blank at the end would be taken for layout and dropped. */
                if (n > 0 && !unsafe_code_point(cp) && !strchr(extra, *s) && !(*s == ' ' && !s[1])) {
                        if (*s == '\\')
                                *o++ = '\\';
                        memcpy(o, s, n);
                        o += n, s += n;
                        continue;
                }
                /* Every byte of it, so that a bidi control or a C1 control
                 * is kept as the bytes it was. */
                for (size_t i = 0; i < (n ? n : 1); i++)
                        o = put_hex(o, *s++);
        }
        *o = 0;
        *ret = out;
        return 0;
}

static bool is_octal(char c) {
        return c >= '0' && c <= '7';
}

/* The byte the escape at s (a backslash) stands for, its length in *ret_n;
 * -1 if it is none. */
static int escape_byte(const char *s, size_t *ret_n) {
        *ret_n = 4;
        if (s[1] == '\\') {
                *ret_n = 2;
                return '\\';
        }
        if (s[1] == 'x' && unhex(s[2]) >= 0 && unhex(s[3]) >= 0)
                return unhex(s[2]) << 4 | unhex(s[3]);
        if (s[1] >= '0' && s[1] <= '3' && is_octal(s[2]) && is_octal(s[3]))
                return (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
        return -1;
}

int name_unescape_strict(const char *s, char **ret, size_t *ret_offset) {
        _cleanup_free_ char *out = malloc(strlen(s) + 1);
        char *o = out;

        if (!out)
                return -ENOMEM;
        for (const char *p = s; *p;) {
                size_t n;
                int b;

                if (*p != '\\') {
                        *o++ = *p++;
                        continue;
                }
                b = escape_byte(p, &n);
                if (b <= 0) {
                        *ret_offset = (size_t) (p - s);
                        return -EINVAL;
                }
                *o++ = (char) b;
                p += n;
        }
        *o = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

size_t escape_controls_buf(const char *s, char *out, size_t size) {
        size_t len = 0;
        uint32_t cp;

        while (*s) {
                size_t n = utf8_char(s, &cp);
                char e[7];
                const char *piece = s;
                size_t plen = n;

                if (n == 0) {
                        put_hex(e, *s);
                        piece = e, plen = 4, n = 1;
                } else if (unsafe_code_point(cp) && cp < 0x80) {
                        put_hex(e, (char) cp);
                        piece = e, plen = 4;
                } else if (unsafe_code_point(cp)) {
                        e[0] = '\\', e[1] = 'u';
                        for (int i = 0; i < 4; i++)
                                e[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
                        piece = e, plen = 6;
                }
                if (len + plen >= size)
                        break;
                memcpy(out + len, piece, plen);
                len += plen;
                s += n;
        }
        out[len] = 0;
        return len;
}

char *escape_controls(const char *s) {
        size_t size = strlen(s) * 6 + 1;
        char *out = malloc(size);

        if (out)
                escape_controls_buf(s, out, size);
        return out;
}

const char *escape_tmp(const char *s) {
        static char *slots[16];
        static unsigned next;
        char **slot = &slots[next++ % ELEMENTSOF(slots)];

        if (!s)
                return "-";
        free(*slot);
        *slot = escape_controls(s);
        return *slot ? *slot : "?";
}

const char *escape_name_tmp(const char *raw) {
        _cleanup_free_ char *e = NULL;

        if (!raw)
                return "-";
        if (name_escape(raw, &e) < 0)
                return "?";
        return escape_tmp(e);
}

char *escape_json_text(const char *s) {
        char *out = malloc(strlen(s) * 6 + 1), *o = out;
        uint32_t cp;

        if (!out)
                return NULL;
        while (*s) {
                size_t n = utf8_char(s, &cp);

                /* C0 is the layout's whitespace; json-c escapes it in strings. */
                if (n > 0 && cp >= 0x20 && unsafe_code_point(cp)) {
                        *o++ = '\\', *o++ = 'u';
                        for (int i = 0; i < 4; i++)
                                *o++ = hex[(cp >> (12 - 4 * i)) & 15];
                } else {
                        n = n ? n : 1;
                        memcpy(o, s, n);
                        o += n;
                }
                s += n;
        }
        *o = 0;
        return out;
}

bool text_is_printable(const char *s) {
        uint32_t cp;

        for (size_t n; *s; s += n)
                if ((n = utf8_char(s, &cp)) == 0 || unsafe_code_point(cp))
                        return false;
        return true;
}

char *shell_quote(const char *s) {
        bool plain = text_is_printable(s);
        char *out = malloc(strlen(s) * 4 + 4), *o = out;

        if (!out)
                return NULL;
        if (plain) {
                *o++ = '\'';
                for (; *s; s++)
                        if (*s == '\'')
                                o = stpcpy(o, "'\\''");
                        else
                                *o++ = *s;
                *o++ = '\'';
        } else {
                *o++ = '$', *o++ = '\'';
                while (*s) {
                        uint32_t cp;
                        size_t n = utf8_char(s, &cp);

                        if (n > 0 && !unsafe_code_point(cp)) {
                                if (*s == '\\' || *s == '\'')
                                        *o++ = '\\';
                                memcpy(o, s, n);
                                o += n, s += n;
                                continue;
                        }
                        /* Every byte of what is unsafe, so that a bidi
                         * control stays what it was once decoded. */
                        for (size_t i = 0; i < (n ? n : 1); i++)
                                o = put_hex(o, *s++);
                }
                *o++ = '\'';
        }
        *o = 0;
        return out;
}
