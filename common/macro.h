/* macro.h: the small set of macros every atimed source file leans on:
 * scope-bound cleanup, ownership transfer, string comparison. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _warn_unused_ __attribute__((warn_unused_result))
#define _pure_ __attribute__((pure))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(x, lo, hi) MIN(MAX(x, lo), hi)

/* Hand ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _p_ = (p); (p) = NULL; _p_; })
#define TAKE_FD(fd) ({ int _fd_ = (fd); (fd) = -1; _fd_; })

#define PID_FMT "%d"

#define USEC_PER_SEC  ((uint64_t) 1000000ULL)
#define USEC_PER_MSEC ((uint64_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)
#define USEC_INFINITY ((uint64_t) -1)

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* n bytes of p as a string: like strndup(), but p need not hold a NUL at
 * all, and exactly n bytes are read (a NUL among them ends the string). */
static inline char *memdup_str(const void *p, size_t n) {
        char *s = malloc(n + 1);

        if (s) {
                memcpy(s, p, n);
                s[n] = 0;
        }
        return s;
}

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -1;
}
static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* For a type with a NULL-safe xxx_free(), define xxx_freep() for _cleanup_. */
#define DEFINE_FREE_FUNC(type, func)                    \
        static inline void func##p(type **p) {          \
                if (*p)                                 \
                        func(*p);                       \
        }                                               \
        struct __useless_struct_to_allow_trailing_semicolon__

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}
static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}
static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}
static inline const char *strna(const char *s) {
        return s ? s : "n/a";
}
static inline const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

/* Room for one more element in a growing array (*p, *allocated of them,
 * n in use), doubling from 'first': 0, or -ENOMEM (the array as it was). */
static inline int array_grow(void **p, size_t *allocated, size_t n, size_t first, size_t size) {
        size_t m;
        void *q;

        if (n < *allocated)
                return 0;
        m = *allocated ? 2 * *allocated : first;
        q = reallocarray(*p, m, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *allocated = m;
        return 0;
}

/* Return -errno, never 0, for a failed libc call whose errno might be unset. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
