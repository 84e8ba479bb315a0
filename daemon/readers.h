/* readers.h: who reads atime at a path, whatever atimed makes of the mount
 * there: tracked, left out by exclude_paths or exclude_fstypes, ignored in
 * atimed.conf, or not mounted at all (a line of fstab). The guards of
 * atimectl remount and fstab --set rest on this answer (GetConsumers), so
 * it holds every declaration of the operator's and every reader the scan
 * found there, not only those of the mounts the advice covers. */
#pragma once

#include <stddef.h>

#include "view.h"

/* The readers of atime at 'target' (an absolute path, simplified): each
 * [mount:PATH] needs_atime of the configuration, then each reader of the
 * last scan, whose path (symlinks resolved, where the scan resolved them)
 * is target or lies below it with no mount point of the table in between
 * (a reader below a deeper mount point is that mount's, whether atimed
 * tracks it or not). In *ret, pointers into the view's lists; the caller
 * frees the array. -ENOMEM. */
int readers_at(const View *v, const char *target, const struct consumer ***ret, size_t *ret_n);
