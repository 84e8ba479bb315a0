/* caps.h: dropping what atimed does not need once it has started. */
#pragma once

/* Keeps CAP_DAC_READ_SEARCH (walk any directory), CAP_FOWNER (O_NOATIME on
 * directories root does not own) and CAP_DAC_OVERRIDE (the probe's inode
 * in a mount point root may not write to by permission), and nothing else,
 * in every set and the bounding set; sets no_new_privs. Under a service
 * manager's bounding set of those three (no CAP_SETPCAP) it only clears
 * what it still holds. A daemon not started as root has nothing to drop:
 * 0. Returns 0 or -errno. */
int caps_drop_to_minimum(void);
