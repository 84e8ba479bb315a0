/* caps.c: capability dropping (see caps.h), with the raw system calls:
 * three capabilities do not justify a library. */
#include "caps.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

static const int keep[] = { CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_DAC_OVERRIDE };

/* Removes from the bounding set what is in it and not in 'mask'. Dropping
 * needs CAP_SETPCAP, which a service manager's CapabilityBoundingSet= has
 * already taken away: there, nothing is left to drop, and nothing is
 * tried. Where something is left and CAP_SETPCAP is not ours (a container
 * started us without it), 1: the bounding set stays as it is. */
static int drop_bounding_set(uint64_t mask, bool have_setpcap) {
        for (int cap = 0; cap <= 63; cap++) {
                int r;

                if (mask & (UINT64_C(1) << cap))
                        continue;
                r = prctl(PR_CAPBSET_READ, (unsigned long) cap, 0, 0, 0);
                if (r < 0) {
                        if (errno == EINVAL)
                                break; /* past the last capability the kernel knows */
                        return -errno;
                }
                if (r == 0)
                        continue;
                if (!have_setpcap)
                        return 1;
                if (prctl(PR_CAPBSET_DROP, (unsigned long) cap, 0, 0, 0) < 0)
                        return errno == EPERM ? 1 : -errno; /* a seccomp filter, say */
        }
        return 0;
}

/* Every set down to 'mask' (what of it is held), and no_new_privs. */
static int keep_only(uint64_t mask) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        uint64_t effective;
        int r;

        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        effective = (uint64_t) d[0].effective | (uint64_t) d[1].effective << 32;
        /* The bounding set first, while CAP_SETPCAP may still be ours. */
        r = drop_bounding_set(mask, effective & (UINT64_C(1) << CAP_SETPCAP));
        if (r < 0)
                return r;
        /* Keep only what is kept and held: capset() refuses to add to the
         * permitted set, so a kept capability the process lacks (outside
         * the bounding set it was started with) is not asked for. */
        mask &= (uint64_t) d[0].permitted | (uint64_t) d[1].permitted << 32;
        d[0].effective = d[0].permitted = (uint32_t) mask;
        d[1].effective = d[1].permitted = (uint32_t) (mask >> 32);
        d[0].inheritable = d[1].inheritable = 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        return r;
}

int caps_drop_to_minimum(void) {
        uint64_t mask = 0;

        if (geteuid() != 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(keep); i++)
                mask |= UINT64_C(1) << keep[i];
        return keep_only(mask);
}

bool caps_have(int cap) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};

        if (cap < 0 || cap > 63 || syscall(SYS_capget, &h, d) < 0)
                return false;
        return (((uint64_t) d[0].effective | (uint64_t) d[1].effective << 32) >> cap) & 1;
}

int caps_keep_only_sys_admin(void) {
        int r = keep_only(UINT64_C(1) << CAP_SYS_ADMIN);

        if (r < 0)
                return r;
        return caps_have(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

int caps_user_namespace(uint32_t *ret_outside_uid) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/uid_map", "re");
        uint32_t inside, outside, count;

        if (!f)
                return -errno;
        /* The initial namespace maps all of 0..2^32-2 onto itself. */
        if (fscanf(f, "%" SCNu32 " %" SCNu32 " %" SCNu32, &inside, &outside, &count) != 3)
                return -EBADMSG;
        if (inside == 0 && outside == 0 && count == UINT32_MAX)
                return 0;
        *ret_outside_uid = inside == 0 ? outside : UINT32_MAX;
        return 1;
}
