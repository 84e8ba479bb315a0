/* test-parse-util: value parsers and formatters, including their
 * round trip (the config printer relies on it). */
#include <errno.h>

#include "macro.h"
#include "parse-util.h"
#include "../tap.h"

static void test_duration(void) {
        static const struct {
                const char *in;
                int r;
                uint64_t usec;
        } cases[] = {
                { "10s", 0, 10 * USEC_PER_SEC },
                { "5min", 0, 300 * USEC_PER_SEC },
                { "1h", 0, 3600 * USEC_PER_SEC },
                { "1h 30min", 0, 5400 * USEC_PER_SEC },
                { "1h30min", 0, 5400 * USEC_PER_SEC },
                { "250ms", 0, 250 * USEC_PER_MSEC },
                { "2d", 0, 2 * 86400 * USEC_PER_SEC },
                { "90", 0, 90 * USEC_PER_SEC },
                { "0", 0, 0 },
                { "", -EINVAL, 0 },
                { "   ", -EINVAL, 0 },
                { "10x", -EINVAL, 0 },
                { "-5s", -EINVAL, 0 },
                { "5 s", -EINVAL, 0 },
                { "10s 5", -EINVAL, 0 },
                { "1.5h", -EINVAL, 0 },
                { "99999999999999999999s", -ERANGE, 0 },
                { "300000000d", -ERANGE, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t u = 12345;
                int r = parse_duration(cases[i].in, &u);

                is_int(r, cases[i].r, "parse_duration('%s') returns %d", cases[i].in, cases[i].r);
                if (cases[i].r == 0)
                        is_int(u, cases[i].usec, "parse_duration('%s') = %" PRIu64, cases[i].in, cases[i].usec);
        }
}

static void test_size(void) {
        uint64_t u;

        ok(parse_size("64K", &u) == 0 && u == 65536, "64K");
        ok(parse_size("64KiB", &u) == 0 && u == 65536, "64KiB");
        ok(parse_size("1M", &u) == 0 && u == 1048576, "1M");
        ok(parse_size("4096", &u) == 0 && u == 4096, "bare bytes");
        ok(parse_size("1k", &u) == -EINVAL, "lowercase k is not a unit");
        ok(parse_size("K", &u) == -EINVAL, "unit without number");
        ok(parse_size("20000000T", &u) == -ERANGE, "overflow");
}

static void test_roundtrip(void) {
        static const uint64_t durations[] = { 0, 1, 999, USEC_PER_SEC, 90 * USEC_PER_SEC, 3600 * USEC_PER_SEC + 1,
                                              86400 * USEC_PER_SEC * 400, UINT64_MAX };
        static const uint64_t sizes[] = { 0, 1, 1023, 1024, 65536, 65537, 1ULL << 40, UINT64_MAX };

        for (size_t i = 0; i < ELEMENTSOF(durations); i++) {
                char buf[FORMAT_DURATION_MAX];
                uint64_t back = 0;

                format_duration(buf, sizeof buf, durations[i]);
                ok(parse_duration(buf, &back) == 0 && back == durations[i], "duration %" PRIu64 " -> '%s' -> back",
                   durations[i], buf);
        }
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                char buf[FORMAT_SIZE_MAX];
                uint64_t back = 0;

                format_size(buf, sizeof buf, sizes[i]);
                ok(parse_size(buf, &back) == 0 && back == sizes[i], "size %" PRIu64 " -> '%s' -> back", sizes[i], buf);
        }
}

static void test_bytes(void) {
        char buf[32];

        is_str(format_bytes(buf, sizeof buf, 812), "812 B", "bytes under a KiB");
        is_str(format_bytes(buf, sizeof buf, 535 * 1024.0), "535 KiB", "KiB");
        is_str(format_bytes(buf, sizeof buf, 1.2 * 1073741824.0), "1.2 GiB", "1.2 GiB, as advice says it");
        is_str(format_bytes(buf, sizeof buf, 1023.9 * 1048576.0), "1.0 GiB", "rounding up crosses the unit");
        is_str(format_bytes(buf, sizeof buf, -2048), "-2.0 KiB", "a shrinkage");
        is_str(format_bytes(buf, sizeof buf, 0), "0 B", "nothing");
}

static void test_misc(void) {
        unsigned u;
        mode_t m;

        is_int(parse_boolean("yes"), 1, "yes");
        is_int(parse_boolean("Off"), 0, "Off");
        is_int(parse_boolean("maybe"), -EINVAL, "maybe");
        ok(parse_unsigned("4294967295", &u) == 0 && u == 4294967295U, "UINT32_MAX");
        is_int(parse_unsigned("4294967296", &u), -ERANGE, "UINT32_MAX + 1");
        is_int(parse_unsigned("+1", &u), -EINVAL, "sign");
        ok(parse_mode("0660", &m) == 0 && m == 0660, "mode 0660");
        is_int(parse_mode("0999", &m), -EINVAL, "mode with 9");
        is_int(parse_mode("17777", &m), -ERANGE, "mode too big");
}

int main(void) {
        test_duration();
        test_size();
        test_roundtrip();
        test_misc();
        test_bytes();
        return tap_done();
}
