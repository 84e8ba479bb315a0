/* mountlog.h: what changed in the mount table, said in the log: each
 * mount tracked or no longer, each change of its atime policy (at info;
 * at debug for the first table, which says how many it tracks instead),
 * each other change of its options (at debug). Every line names its mount
 * (log_mount_full(): the journal's ATIMED_MOUNT field). */
#pragma once

#include "mounts.h"

/* From 'old' (NULL: none yet, the daemon starting) to 'new'. */
void mountlog_changes(const MountTable *old, const MountTable *new);
