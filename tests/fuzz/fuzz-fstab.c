/* fuzz-fstab: the fstab editor and its diff. The first line of the input is
 * a request, "TARGET POLICY [named]" (POLICY: noatime, relatime, strictatime
 * or "-", optionally followed by ",lazytime" or ",nolazytime"; TARGET may
 * use fstab's \ooo escapes); the rest is the fstab text. The edit also asks
 * for noatime on "/".
 *
 * Checked, as fstab.h promises: the output has as many lines as the input;
 * lines not reported as changed are byte for byte the same; no change means
 * an empty diff; applying the same requests again changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fstab.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* \ooo to the byte, in place, as fstab does. */
static void unescape(char *s) {
        char *w = s;

        for (char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        char c = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));

                        if (c == 0) /* not representable in a C string: keep the escape */
                                *w++ = *r++;
                        else {
                                *w++ = c;
                                r += 4;
                        }
                } else
                        *w++ = *r++;
        }
        *w = 0;
}

static size_t count_lines(const char *t, size_t len) {
        size_t n = 0;

        for (size_t i = 0; i < len; i++)
                if (t[i] == '\n')
                        n++;
        return n + (len > 0 && t[len - 1] != '\n');
}

/* The line at *pos of t, without its newline; moves *pos past it. */
static const char *next_line(const char *t, size_t len, size_t *pos, size_t *ret_len) {
        const char *start = t + *pos, *nl = memchr(start, '\n', len - *pos);

        *ret_len = nl ? (size_t) (nl - start) : len - *pos;
        *pos += *ret_len + (nl ? 1 : 0);
        return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
        const char *nl = memchr(text, '\n', size);
        size_t spec_len = nl ? (size_t) (nl - text) : size;
        const char *fstab = nl ? nl + 1 : text + size;
        size_t fstab_len = size - (size_t) (fstab - text);
        _cleanup_free_ char *spec = NULL, *diff = NULL;
        struct fstab_result res = {}, again = {};
        struct fstab_request reqs[2] = {
                { .target = NULL, .atime = NULL, .lazytime = -1, .named = false },
                { .target = "/", .atime = "noatime", .lazytime = -1, .named = false },
        };
        char *target, *policy, *flag, *comma;
        size_t n_lines;
        int r;

        if (spec_len > 4096 || memchr(text, 0, spec_len))
                return 0;
        spec = memdup_str(text, spec_len);
        if (!spec)
                return 0;
        target = strtok(spec, " \t");
        policy = strtok(NULL, " \t");
        flag = strtok(NULL, " \t");
        if (!target || !policy)
                return 0;
        unescape(target);
        comma = strchr(policy, ',');
        if (comma) {
                *comma++ = 0;
                reqs[0].lazytime = streq(comma, "lazytime") ? 1 : streq(comma, "nolazytime") ? 0 : -1;
        }
        reqs[0].target = target;
        reqs[0].atime = streq(policy, "-") ? NULL : policy;
        reqs[0].named = flag && streq(flag, "named");

        r = fstab_edit(fstab, fstab_len, reqs, 2, &res);
        if (r < 0)
                return 0;

        n_lines = count_lines(fstab, fstab_len);
        if (!res.text || count_lines(res.text, res.len) != n_lines)
                abort();
        for (size_t i = 0, pa = 0, pb = 0; i < n_lines; i++) {
                size_t la, lb;
                const char *a = next_line(fstab, fstab_len, &pa, &la), *b = next_line(res.text, res.len, &pb, &lb);
                bool changed = false;

                for (size_t c = 0; c < res.n_changes; c++)
                        changed = changed || res.changes[c].line == i + 1;
                if (!changed && (la != lb || memcmp(a, b, la) != 0))
                        abort();
        }

        r = fstab_diff(fstab, fstab_len, res.text, res.len, "a/fstab", "b/fstab", &diff);
        if (r == 0 && !diff)
                abort();
        if (r == 0 && res.n_changes == 0 && diff[0] != 0)
                abort();

        if (fstab_edit(res.text, res.len, reqs, 2, &again) == 0 &&
            (again.n_changes != 0 || again.len != res.len || memcmp(again.text, res.text, res.len) != 0))
                abort();

        fstab_result_done(&again);
        fstab_result_done(&res);
        return 0;
}
