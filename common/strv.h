/* strv.h: NULL-terminated string arrays (config lists, option sets). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

char **strv_free(char **l);
DEFINE_FREE_FUNC(char *, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char *const *l);
bool strv_contains(char *const *l, const char *s);
/* Appends a copy of s; 0 or -ENOMEM. */
int strv_extend(char ***l, const char *s);
int strv_copy(char *const *l, char ***ret);
/* Splits on any of 'separators', dropping empty fields; 0 or -ENOMEM. */
int strv_split(const char *s, const char *separators, char ***ret);
/* Joins with 'sep'; NULL on allocation failure. */
char *strv_join(char *const *l, const char *sep);
bool strv_equal(char *const *a, char *const *b);

#define STRV_FOREACH(s, l) for (char *const *s = (l); s && *s; s++)
