/* strv.c: NULL-terminated string arrays. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

char **strv_free(char **l) {
        STRV_FOREACH(s, l)
                free(*s);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l) {
        size_t n = 0;
        STRV_FOREACH(s, l)
                n++;
        return n;
}

bool strv_contains(char *const *l, const char *s) {
        STRV_FOREACH(i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

int strv_extend(char ***l, const char *s) {
        size_t n = strv_length(*l);
        _cleanup_free_ char *c = strdup(s);
        char **nl;

        if (!c)
                return -ENOMEM;
        nl = realloc(*l, sizeof(char *) * (n + 2));
        if (!nl)
                return -ENOMEM;
        nl[n] = TAKE_PTR(c);
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

int strv_copy(char *const *l, char ***ret) {
        _cleanup_strv_free_ char **c = calloc(1, sizeof(char *));

        if (!c)
                return -ENOMEM;
        STRV_FOREACH(s, l)
                if (strv_extend(&c, *s) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

int strv_split(const char *s, const char *separators, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));

        if (!l)
                return -ENOMEM;
        while (*s) {
                size_t skip = strspn(s, separators), len;

                s += skip;
                len = strcspn(s, separators);
                if (len == 0)
                        break;
                _cleanup_free_ char *w = strndup(s, len);
                if (!w || strv_extend(&l, w) < 0)
                        return -ENOMEM;
                s += len;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

char *strv_join(char *const *l, const char *sep) {
        size_t n = 1, seplen = strlen(sep);
        char *r, *p;

        STRV_FOREACH(s, l)
                n += strlen(*s) + seplen;
        r = p = malloc(n);
        if (!r)
                return NULL;
        *p = 0;
        STRV_FOREACH(s, l) {
                if (s != l)
                        p = stpcpy(p, sep);
                p = stpcpy(p, *s);
        }
        return r;
}

bool strv_equal(char *const *a, char *const *b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return true;
}
