/* escape.h: names made of any bytes (mount points, sources, paths: the
 * kernel and any user decide them) carried safely through JSON, terminals,
 * logs and shell command lines.
 *
 * In the protocol a name is a JSON string that is always valid UTF-8: a
 * backslash in the name is written as two ("\\" in the decoded string,
 * "\\\\" in the JSON text) and each byte that is not part of valid UTF-8 as
 * "\xHH" (a backslash, 'x', two lower-case hex digits). Everything else is
 * the name itself (varlink_name_new() builds such a string). The mapping is
 * one to one: name_unescape() undoes name_escape() exactly. The one
 * definition is the text of docs/io.atimed.varlink ("Names are bytes"),
 * which the Ansible module (contrib/ansible, atimed_apply.py) follows too:
 * a change here is a change there. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length of the valid UTF-8 character at s (1 to 4), its code point in
 * *ret_cp; 0 if s does not start one (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). s is NUL-terminated. */
size_t utf8_char(const char *s, uint32_t *ret_cp);
/* Whether s is valid UTF-8 throughout. */
bool utf8_is_valid(const char *s);

/* A name's protocol form (valid UTF-8) in *ret. 0 or -ENOMEM. */
int name_escape(const char *raw, char **ret);
/* The name a protocol string stands for. A backslash that starts neither
 * "\\" nor "\xHH" is taken as itself, so that a client unaware of the scheme
 * still finds names without backslashes. 0 or -ENOMEM. */
int name_unescape(const char *s, char **ret);

/* A name as text a person reads and types back (a path in atimed.conf): the
 * protocol form, and besides every byte of a character escape_controls()
 * would touch, of a character in 'extra' (ASCII) and of a blank ending the
 * name, as "\xHH". name_unescape_strict() reads it back to the same bytes.
 * 0 or -ENOMEM. */
int name_escape_text(const char *raw, const char *extra, char **ret);
/* A name written by a person, read strictly: "\\" is a backslash, "\xHH"
 * (two hex digits) and "\OOO" (three octal digits, as fstab and
 * /proc/self/mountinfo write them) a byte; any other backslash, and an
 * escape of the NUL byte, is -EINVAL with *ret_offset at that backslash,
 * so that nothing is ever taken for what it was not meant to be. The
 * decoding of name_escape_text()'s form and of the protocol's (but for its
 * leniency). 0, -EINVAL or -ENOMEM. */
int name_unescape_strict(const char *s, char **ret, size_t *ret_offset);

/* For a terminal or a log line: every C0 control, DEL, C1 control
 * (U+0080-U+009F), bidi control (U+202A-U+202E, U+2066-U+2069) and byte
 * that is not valid UTF-8 is written as "\xHH" (a byte) or "\uHHHH" (a
 * code point), so no text can move the cursor, change a title, start a
 * line or reverse what follows. Writes at most size - 1 bytes and a NUL
 * (size > 0), cutting only between whole characters; returns the length. */
size_t escape_controls_buf(const char *s, char *out, size_t size);
/* The same, allocated; NULL on OOM. */
char *escape_controls(const char *s);
/* escape_controls() for printf arguments: the result stays valid until 16
 * further calls (so a dozen in one printf are fine); "-" for NULL, "?" when
 * out of memory. Not thread-safe: for the client's output. */
const char *escape_tmp(const char *s);
/* The same for a name of raw bytes (a path the user typed): its protocol
 * form, escaped for the terminal, so it shows as atimed's replies do. */
const char *escape_name_tmp(const char *raw);
/* JSON text with every character escape_controls() would touch (but C0,
 * which JSON escapes in strings itself) written as a JSON \uHHHH escape instead: the same document, safe on a terminal.
 * Such characters occur only inside strings, where the escape means the
 * same. 's' must be valid UTF-8 (json-c's output of valid strings). NULL on
 * OOM. */
char *escape_json_text(const char *s);
/* Whether s has nothing escape_controls() would change. */
bool text_is_printable(const char *s);

/* One shell word that stands for the raw bytes 's', for a command line
 * shown to be copied: 'like this' (a ' inside as '\'') when every character
 * is printable, else $'like\x1bthis' with every other byte as \xHH (bash,
 * zsh, ksh). NULL on OOM. */
char *shell_quote(const char *s);
