/* test-escape: names of any bytes through the protocol form, terminals,
 * logs and shell words. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../tap.h"
#include "escape.h"
#include "macro.h"

static void roundtrip(const char *raw, const char *want, const char *what) {
        _cleanup_free_ char *e = NULL, *back = NULL;

        if (name_escape(raw, &e) < 0 || name_unescape(e, &back) < 0)
                abort();
        is_str(e, want, "protocol form of %s", what);
        ok(utf8_is_valid(e), "%s: the protocol form is valid UTF-8", what);
        is_str(back, raw, "%s: back to the same bytes", what);
}

static void controls(const char *s, const char *want, const char *what) {
        _cleanup_free_ char *e = escape_controls(s);

        is_str(e, want, "escaped for a terminal: %s", what);
}

static void quoted(const char *s, const char *want, const char *what) {
        _cleanup_free_ char *q = shell_quote(s);

        is_str(q, want, "shell word: %s", what);
}

/* The text form (atimed.conf's paths) reads back to every byte. */
static void text_roundtrip(const char *raw, const char *want, const char *what) {
        _cleanup_free_ char *e = NULL, *back = NULL;
        size_t off = 0;

        if (name_escape_text(raw, "]#;", &e) < 0)
                abort();
        is_str(e, want, "text form of %s", what);
        ok(e && text_is_printable(e), "%s: the text form is printable", what);
        ok(name_unescape_strict(e, &back, &off) == 0 && streq(back, raw), "%s: read strictly, the same bytes", what);
}

/* Read strictly: what is not an escape is refused, at its offset. */
static void strict(const char *s, const char *want, size_t want_off, const char *what) {
        _cleanup_free_ char *n = NULL;
        size_t off = SIZE_MAX;
        int r = name_unescape_strict(s, &n, &off);

        if (want)
                ok(r == 0 && streq(n, want), "strictly: %s", what);
        else
                ok(r == -EINVAL && off == want_off, "strictly refused: %s (at %zu)", what, off);
}

static void test_text_form(void) {
        text_roundtrip("/srv/plain dir", "/srv/plain dir", "a plain name with a blank inside");
        text_roundtrip("/a\\b]c#d;e=f", "/a\\\\b\\x5dc\\x23d\\x3be=f",
                       "a backslash, and what ends a section or starts a comment");
        text_roundtrip("/a\nb\tc\r", "/a\\x0ab\\x09c\\x0d", "newline, tab, carriage return");
        text_roundtrip("/a \xff\xc3", "/a \\xff\\xc3", "invalid UTF-8");
        text_roundtrip("/x\xe2\x80\xae\xc2\x85\x7f", "/x\\xe2\\x80\\xae\\xc2\\x85\\x7f", "bidi, C1 and DEL, byte by byte");
        text_roundtrip("/m\xc3\xa9 ", "/m\xc3\xa9\\x20", "a blank at the end; valid UTF-8 as it is");
        strict("/a\\040b\\x20c\\x2Fd\\\\", "/a b c/d\\", 0, "octal as fstab writes it, hex of either case, a backslash");
        strict("/a\\qb", NULL, 2, "an unknown escape");
        strict("/a\\x4", NULL, 2, "\\x with one digit");
        strict("/a\\", NULL, 2, "a backslash at the end");
        strict("/a\\x00", NULL, 2, "\\x00");
        strict("/a\\000", NULL, 2, "\\000");
        strict("/a\\400", NULL, 2, "octal above 0377");
        strict("/a\\12", NULL, 2, "two octal digits");
}

int main(void) {
        char buf[16];
        uint32_t cp;

        roundtrip("/mnt/plain", "/mnt/plain", "a plain name");
        roundtrip("/mnt/bad\xff", "/mnt/bad\\xff", "an invalid byte");
        roundtrip("/mnt/a\\xff", "/mnt/a\\\\xff", "a name that looks like an escape");
        roundtrip("/mnt/\xe2\x80\xae" "evil\n\x1b", "/mnt/\xe2\x80\xae" "evil\n\x1b",
                  "controls (valid UTF-8, left to JSON)");
        roundtrip("/m\xc3\xa9\xc3", "/m\xc3\xa9\\xc3", "a truncated sequence");
        roundtrip("\xed\xa0\x80", "\\xed\\xa0\\x80", "a surrogate");
        roundtrip("\xc0\xaf", "\\xc0\\xaf", "an overlong '/'");
        {
                _cleanup_free_ char *n = NULL;

                name_unescape("C:\\dir\\x\\x00\\xZZ", &n);
                is_str(n, "C:\\dir\\x\\x00\\xZZ", "a lone backslash, \\x00 and bad hex are taken as they are");
        }
        is_int(utf8_char("\xf4\x90\x80\x80", &cp), 0, "above U+10FFFF is not UTF-8");
        is_int(utf8_char("\xf0\x9f\x98\x80", &cp), 4, "an emoji is");

        controls("ok \xc3\xa9", "ok \xc3\xa9", "printable text as is");
        controls("a\nb\x1b]0;t\x07", "a\\x0ab\\x1b]0;t\\x07", "newline, ESC, BEL");
        controls("\x7f\xc2\x9b" "2J", "\\x7f\\u009b2J", "DEL and C1 CSI");
        controls("x\xe2\x80\xaey\xe2\x81\xa6z", "x\\u202ey\\u2066z", "bidi controls");
        controls("\xff", "\\xff", "an invalid byte");
        is_int(escape_controls_buf("abc\n", buf, 6), 3, "a short buffer cuts before an escape");
        is_str(buf, "abc", "and holds what fits");

        {
                _cleanup_free_ char *j = escape_json_text("{\n\"a\":\"x\xe2\x80\xaey\xc2\x9b\x7f\\n\xc3\xa9\"}");

                is_str(j, "{\n\"a\":\"x\\u202ey\\u009b\\u007f\\n\xc3\xa9\"}", "JSON text: C1, bidi and DEL as \\uHHHH");
        }
        quoted("/mnt/x y", "'/mnt/x y'", "a space");
        quoted("/mnt/it's", "'/mnt/it'\\''s'", "a quote");
        quoted("/mnt/a\nb", "$'/mnt/a\\x0ab'", "a newline");
        quoted("/mnt/'\\\xff", "$'/mnt/\\'\\\\\\xff'", "a quote, a backslash and an invalid byte");
        quoted("/mnt/\xe2\x80\xae", "$'/mnt/\\xe2\\x80\\xae'", "a bidi control");
        test_text_form();
        return tap_done();
}
