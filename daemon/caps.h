/* caps.h: dropping what atimed does not need once it has started. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Keeps CAP_DAC_READ_SEARCH (walk any directory), CAP_FOWNER (O_NOATIME on
 * directories root does not own) and CAP_DAC_OVERRIDE (the probe's inode
 * in a mount point root may not write to by permission), and nothing else,
 * in every set and the bounding set; sets no_new_privs. Under a service
 * manager's bounding set of those three (no CAP_SETPCAP) it only clears
 * what it still holds. A daemon not started as root has nothing to drop:
 * 0. Returns 0; 1 when the bounding set holds more and cannot be reduced
 * (no CAP_SETPCAP: a container's manager took it), while the rest is done:
 * the process holds the three alone and no_new_privs keeps anything it
 * runs from gaining more, so the bounding set no longer matters; or
 * -errno. CAP_SYS_ADMIN, which a btrfs filesystem's tree of subvolumes
 * needs to be read, is never kept: atimed's helper holds it instead
 * (helper-server.h). */
int caps_drop_to_minimum(void);
/* The same for atimed's helper: CAP_SYS_ADMIN alone; -EPERM where it is
 * not held. */
int caps_keep_only_sys_admin(void);
/* Whether 'cap' is in this thread's effective set. */
bool caps_have(int cap);
/* Whether this process runs in a user namespace other than the host's
 * (unshare -U, a rootless container): 1, with the uid outside that root
 * maps to (UINT32_MAX: root is not mapped); 0: the host's; or -errno.
 * There root's capabilities reach only files of uids mapped inside. */
int caps_user_namespace(uint32_t *ret_outside_uid);
