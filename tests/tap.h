/* tap.h: a minimal TAP producer for atimed's C unit tests. Each check is
 * one TAP line; the plan is printed at the end. */
#pragma once

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned tap_n, tap_failed;

static inline void tap_ok(int cond, const char *expr, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static inline void tap_ok(int cond, const char *expr, const char *file, int line, const char *fmt, ...) {
        va_list ap;

        tap_n++;
        printf("%s %u - ", cond ? "ok" : "not ok", tap_n);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        if (!cond) {
                tap_failed++;
                printf("#   failed: %s (%s:%d)\n", expr, file, line);
        }
        fflush(stdout);
}

#define ok(cond, ...) tap_ok(!!(cond), #cond, __FILE__, __LINE__, __VA_ARGS__)
#define is_int(a, b, ...)                                                                                    \
        do {                                                                                                 \
                long long _a = (long long) (a), _b = (long long) (b);                                        \
                tap_ok(_a == _b, #a " == " #b, __FILE__, __LINE__, __VA_ARGS__);                             \
                if (_a != _b)                                                                                \
                        printf("#   got %lld, expected %lld\n", _a, _b);                                     \
        } while (0)
#define is_str(a, b, ...)                                                                                    \
        do {                                                                                                 \
                const char *_a = (a), *_b = (b);                                                             \
                int _eq = (_a && _b) ? strcmp(_a, _b) == 0 : _a == _b;                                       \
                tap_ok(_eq, #a " == " #b, __FILE__, __LINE__, __VA_ARGS__);                                  \
                if (!_eq)                                                                                    \
                        printf("#   got '%s', expected '%s'\n", _a ? _a : "(null)", _b ? _b : "(null)");     \
        } while (0)

static inline int tap_done(void) {
        printf("1..%u\n", tap_n);
        return tap_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
