/* group.h: a group's gid by its name, the one way atimed looks one up:
 * the privileged group at start and at each reload, the socket's group
 * at start. A lookup may block (NSS: LDAP, say): it is made at start,
 * before the loop runs, or in a worker, never on the running loop. */
#pragma once

#include <sys/types.h>

/* 0 and *ret; -ENOENT where there is no such group; -errno where the
 * lookup failed. */
int group_lookup(const char *name, gid_t *ret);
