/* parse-util.c: value parsers shared by config and command line. Strict:
 * trailing garbage, signs, empty strings and overflow are all errors. */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"

int parse_uint64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!s || !isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_unsigned(const char *s, unsigned *ret) {
        uint64_t v;
        int r = parse_uint64(s, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

int parse_mode(const char *s, mode_t *ret) {
        unsigned long v;
        char *end;

        if (!s || !isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 8);
        if (errno || *end)
                return -EINVAL;
        if (v > 07777)
                return -ERANGE;
        *ret = (mode_t) v;
        return 0;
}

int parse_boolean(const char *s) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

struct unit {
        const char *suffix;
        uint64_t factor;
};

/* Sum of <number><unit> terms separated by optional spaces. */
static int parse_with_units(const char *s, const struct unit *units, size_t n_units,
                            uint64_t bare_factor, uint64_t *ret) {
        uint64_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;
        while (*s) {
                uint64_t v, factor = 0;
                char *end;
                size_t ulen;

                s += strspn(s, " \t");
                if (!*s)
                        break;
                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                errno = 0;
                v = strtoull(s, &end, 10);
                if (errno == ERANGE)
                        return -ERANGE;
                s = end;
                ulen = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
                if (ulen == 0) {
                        if (any || s[strspn(s, " \t")] != '\0')
                                return -EINVAL; /* a bare number only stands alone */
                        factor = bare_factor;
                } else {
                        for (size_t i = 0; i < n_units; i++)
                                if (strlen(units[i].suffix) == ulen && strncmp(s, units[i].suffix, ulen) == 0) {
                                        factor = units[i].factor;
                                        break;
                                }
                        if (factor == 0)
                                return -EINVAL;
                        s += ulen;
                }
                if (v > UINT64_MAX / factor || total > UINT64_MAX - v * factor)
                        return -ERANGE;
                total += v * factor;
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}

static const struct unit duration_units[] = {
        { "us", 1 },
        { "usec", 1 },
        { "ms", USEC_PER_MSEC },
        { "msec", USEC_PER_MSEC },
        { "s", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "m", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },
        { "hr", 3600 * USEC_PER_SEC },
        { "d", 86400 * USEC_PER_SEC },
        { "day", 86400 * USEC_PER_SEC },
        { "days", 86400 * USEC_PER_SEC },
        { "w", 7 * 86400 * USEC_PER_SEC },
};

int parse_duration(const char *s, uint64_t *ret_usec) {
        return parse_with_units(s, duration_units, ELEMENTSOF(duration_units), USEC_PER_SEC, ret_usec);
}

static const struct unit size_units[] = {
        { "B", 1 },
        { "K", 1ULL << 10 },
        { "KiB", 1ULL << 10 },
        { "M", 1ULL << 20 },
        { "MiB", 1ULL << 20 },
        { "G", 1ULL << 30 },
        { "GiB", 1ULL << 30 },
        { "T", 1ULL << 40 },
        { "TiB", 1ULL << 40 },
};

int parse_size(const char *s, uint64_t *ret_bytes) {
        return parse_with_units(s, size_units, ELEMENTSOF(size_units), 1, ret_bytes);
}

char *format_duration(char *buf, size_t len, uint64_t usec) {
        static const struct unit out[] = {
                { "d", 86400 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC }, { "min", 60 * USEC_PER_SEC },
                { "s", USEC_PER_SEC },         { "ms", USEC_PER_MSEC },      { "us", 1 },
        };
        size_t used = 0;

        if (usec == 0) {
                snprintf(buf, len, "0");
                return buf;
        }
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(out) && usec > 0; i++) {
                uint64_t n = usec / out[i].factor;
                if (n == 0)
                        continue;
                usec -= n * out[i].factor;
                used += snprintf(buf + used, used < len ? len - used : 0, "%s%" PRIu64 "%s",
                                 used ? " " : "", n, out[i].suffix);
        }
        return buf;
}

char *format_bytes(char *buf, size_t len, double bytes) {
        static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = fabs(bytes);
        size_t u = 0;

        if (!isfinite(bytes)) {
                snprintf(buf, len, "?");
                return buf;
        }
        while (v >= 1023.5 && u + 1 < ELEMENTSOF(unit)) {
                v /= 1024;
                u++;
        }
        snprintf(buf, len, "%s%.*f %s", bytes < 0 ? "-" : "", u > 0 && v < 9.95 ? 1 : 0, v, unit[u]);
        return buf;
}

char *format_size(char *buf, size_t len, uint64_t bytes) {
        static const struct unit out[] = {
                { "T", 1ULL << 40 }, { "G", 1ULL << 30 }, { "M", 1ULL << 20 }, { "K", 1ULL << 10 },
        };

        for (size_t i = 0; i < ELEMENTSOF(out); i++)
                if (bytes >= out[i].factor && bytes % out[i].factor == 0) {
                        snprintf(buf, len, "%" PRIu64 "%s", bytes / out[i].factor, out[i].suffix);
                        return buf;
                }
        snprintf(buf, len, "%" PRIu64, bytes);
        return buf;
}
