/* test-escape: names of any bytes through the protocol form, terminals,
 * logs and shell words. */
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
        return tap_done();
}
