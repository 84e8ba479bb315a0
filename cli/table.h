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
/* A shorter form of the last added row's cell in column, for
 * TABLE_FIT_SHORT (NULL: none, the cell stays as it is). 0, -EINVAL or
 * -ENOMEM. */
int table_set_short(Table *t, size_t column, const char *s);

/* How a column gives way when the table is wider than its width. */
typedef enum TableFit {
        TABLE_FIT_SHORT, /* its cells in their short forms */
        TABLE_FIT_DROP,  /* left out */
        /* Its cells shortened, never below its header or 10 cells, with
         * the ellipsis: a path keeps its last component whole (or the end
         * of it when that does not fit either) and its start takes the
         * rest; text without '/' is cut in the middle. Two cells that read
         * differently still print differently: more of their ends is
         * shown, and the column is widened if it must. */
        TABLE_FIT_ELIDE,
} TableFit;
/* A step of fitting the table to its width; table_print() takes them in
 * the order added, until the table fits. 0, -EINVAL or -ENOMEM. */
int table_add_fit(Table *t, size_t column, TableFit how);
/* The width to fit in (0: unlimited) and the ellipsis of TABLE_FIT_ELIDE. */
void table_set_width(Table *t, size_t width, const char *ellipsis);
void table_print(const Table *t, FILE *f, bool header);
/* Whether the last table_print() printed column (not dropped to fit). */
bool table_column_printed(const Table *t, size_t column);
/* The display width of a string: UTF-8 code points. */
size_t table_text_width(const char *s);
