/* group.c: a group's gid by its name (see group.h). */
#include "group.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>

#include "macro.h"

/* A group with many members needs more room than a line of /etc/group:
 * the buffer grows on ERANGE, to this much at most. */
#define GROUP_BUFFER_MAX (1024 * 1024)

int group_lookup(const char *name, gid_t *ret) {
        for (size_t size = 16384; size <= GROUP_BUFFER_MAX; size *= 2) {
                _cleanup_free_ char *buf = malloc(size);
                struct group gr, *found = NULL;
                int r;

                if (!buf)
                        return -ENOMEM;
                r = getgrnam_r(name, &gr, buf, size, &found);
                if (r == ERANGE)
                        continue;
                if (r != 0)
                        return -r;
                if (!found)
                        return -ENOENT;
                *ret = found->gr_gid;
                return 0;
        }
        return -ERANGE;
}
