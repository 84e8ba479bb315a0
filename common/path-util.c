/* path-util.c: paths as strings (see path-util.h). */
#include "path-util.h"

#include <string.h>

#include "macro.h"

void path_simplify(char *p) {
        size_t o = 0;

        for (size_t i = 0; p[i]; i++) {
                if (p[i] == '/' && o > 0 && p[o - 1] == '/')
                        continue;
                p[o++] = p[i];
        }
        while (o > 1 && p[o - 1] == '/')
                o--;
        p[o] = 0;
}

bool path_under(const char *path, const char *dir) {
        const char *rest = startswith(path, dir);

        return rest && (*rest == 0 || *rest == '/' || streq(dir, "/"));
}
