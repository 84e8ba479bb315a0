/* time-util.c: reading the clocks (see time-util.h). */
#include "time-util.h"

#include <assert.h>

#include "macro.h"

uint64_t timespec_to_usec(const struct timespec *ts) {
        assert(ts);
        assert(ts->tv_sec >= 0 && ts->tv_nsec >= 0);

        return (uint64_t) ts->tv_sec * USEC_PER_SEC + (uint64_t) ts->tv_nsec / NSEC_PER_USEC;
}

uint64_t now_usec(clockid_t clock) {
        struct timespec ts = {};
        _unused_ int r;

        /* Fails only for a clock id that does not exist: a caller's bug. */
        r = clock_gettime(clock, &ts);
        assert(r == 0);
        return timespec_to_usec(&ts);
}
