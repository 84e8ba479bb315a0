/* path-util.h: paths as strings (mount points, the paths of readers of
 * atime), compared and tidied without touching the filesystem: a stat() of
 * a path on a hung NFS or stopped FUSE mount would hang the caller. */
#pragma once

#include <stdbool.h>

/* "/srv//www/" -> "/srv/www", in place: repeated slashes become one and
 * trailing ones go ("/" stays "/"). Nothing else: no "." or "..", no
 * symlinks. */
void path_simplify(char *p);

/* Whether 'path' is 'dir' or lies below it, component by component
 * ("/var/mailbox" is not below "/var/mail"); both simplified. */
bool path_under(const char *path, const char *dir);
