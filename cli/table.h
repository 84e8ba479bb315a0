/* table.h: aligned terminal tables for atimectl. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "macro.h"

typedef struct Table Table;

Table *table_new(size_t n_columns, const char *const *headers);
Table *table_free(Table *t);
DEFINE_FREE_FUNC(Table, table_free);
/* Copies the cells; control characters are escaped so that names from the
 * mount table cannot drive the terminal. 0 or -ENOMEM. */
int table_add_row(Table *t, const char *const *cells);
size_t table_rows(const Table *t);
/* Which columns to print, in which order (default: all, as added). */
int table_set_display(Table *t, const size_t *columns, size_t n);
/* A column that may be shortened, in the middle with 'ellipsis', when the
 * table is wider than 'width' (0: never shorten). */
void table_set_shrinkable(Table *t, size_t column);
void table_set_width(Table *t, size_t width, const char *ellipsis);
void table_print(const Table *t, FILE *f, bool header);
/* The display width of a string: UTF-8 code points. */
size_t table_text_width(const char *s);
