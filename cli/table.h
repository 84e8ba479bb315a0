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
void table_print(const Table *t, FILE *f, bool header);
