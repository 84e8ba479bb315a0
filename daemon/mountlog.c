/* mountlog.c: what changed in the mount table, said (see mountlog.h). */
#include "mountlog.h"

#include <stdbool.h>

#include "log.h"

static void log_mount_change(const MountEntry *old, const MountEntry *new, void *userdata) {
        bool initial = *(bool *) userdata;
        int level = initial ? LOG_DEBUG : LOG_INFO;
        char a[64], b[64];

        if (!old)
                log_mount_full(level, 0, new->target, "Tracking %s (%s on %s): %s", new->target, new->fstype, new->source,
                               mount_policy_format(&new->policy, a, sizeof a));
        else if (!new)
                log_mount_full(level, 0, old->target, "No longer tracking %s (%s on %s)", old->target, old->fstype, old->source);
        else if (!mount_policy_equal(&old->policy, &new->policy))
                log_mount_full(level, 0, new->target, "%s: atime policy changed from %s to %s", new->target,
                               mount_policy_format(&old->policy, a, sizeof a),
                               mount_policy_format(&new->policy, b, sizeof b));
        else
                log_mount_debug(new->target, "%s: mount options changed to %s", new->target, new->vfs_options);
}

void mountlog_changes(const MountTable *old, const MountTable *new) {
        bool initial = !old;

        mount_table_diff(old, new, log_mount_change, &initial);
        if (initial)
                log_info("Tracking %zu mounts", new->n);
}
