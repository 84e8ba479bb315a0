/* mount-util.h: libmount's objects under _cleanup_.
 *
 *   _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = mnt_new_table();
 *
 * frees the table whichever way the scope is left; NULL is fine. */
#pragma once

#include <libmount/libmount.h>

#include "macro.h"

DEFINE_FREE_FUNC(struct libmnt_table, mnt_unref_table);
DEFINE_FREE_FUNC(struct libmnt_iter, mnt_free_iter);
