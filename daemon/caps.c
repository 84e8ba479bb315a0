/* caps.c: capability dropping (see caps.h), with the raw system calls:
 * three capabilities do not justify a library. */
#include "caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"

static const int keep[] = { CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_DAC_OVERRIDE };

static bool kept(int cap) {
        for (size_t i = 0; i < ELEMENTSOF(keep); i++)
                if (keep[i] == cap)
                        return true;
        return false;
}

int caps_drop_to_minimum(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        uint64_t mask = 0;

        if (geteuid() != 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(keep); i++)
                mask |= UINT64_C(1) << keep[i];

        /* The bounding set first: it needs CAP_SETPCAP, still ours. */
        for (int cap = 0; cap <= 63; cap++) {
                if (kept(cap))
                        continue;
                if (prctl(PR_CAPBSET_DROP, (unsigned long) cap, 0, 0, 0) < 0 && errno != EINVAL)
                        return -errno; /* EINVAL: the kernel does not know that many */
        }
        d[0].effective = d[0].permitted = (uint32_t) mask;
        d[1].effective = d[1].permitted = (uint32_t) (mask >> 32);
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        return 0;
}
