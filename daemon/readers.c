/* readers.c: who reads atime at a path (see readers.h). */
#include "readers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "path-util.h"

/* Whether a reader at 'path' is at 'target': path is target or below it,
 * and no mount point lies between them. 1, 0, or -ENOMEM. Each ancestor is
 * a lookup in the table's sorted targets, so a request costs the depth of
 * a path, not the number of mounts. */
static int reader_at(const MountTable *t, const char *target, const char *path) {
        _cleanup_free_ char *p = NULL;
        size_t tl = strlen(target);

        p = strdup(path);
        if (!p)
                return -ENOMEM;
        path_simplify(p);
        if (!path_under(p, target))
                return 0;
        while (strlen(p) > tl) {
                char *slash = strrchr(p, '/');

                if (mount_table_fstype_at(t, p))
                        return 0;
                if (!slash || slash == p)
                        break; /* target is "/" */
                *slash = 0;
        }
        return 1;
}

int readers_at(const View *v, const char *target, const struct consumer ***ret, size_t *ret_n) {
        const Consumers *lists[] = { v->config ? v->config->declared : NULL, v->consumers };
        size_t cap = 1, n = 0;
        _cleanup_free_ const struct consumer **l = NULL;

        for (size_t k = 0; k < ELEMENTSOF(lists); k++)
                cap += lists[k] ? lists[k]->n : 0;
        l = calloc(cap, sizeof *l);
        if (!l)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(lists); k++)
                for (size_t i = 0; lists[k] && i < lists[k]->n; i++) {
                        const struct consumer *c = &lists[k]->v[i];
                        int r = reader_at(v->mounts, target, c->resolved ?: c->path);

                        if (r < 0)
                                return r;
                        if (r > 0)
                                l[n++] = c;
                }
        *ret = TAKE_PTR(l);
        *ret_n = n;
        return 0;
}
