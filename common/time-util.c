/* time-util.c: reading the clocks (see time-util.h). */
#include "time-util.h"

#include <assert.h>
#include <sys/random.h>

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

uint64_t jittered(uint64_t mean) {
        uint64_t r;

        if (mean == 0)
                return 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
                r = now_usec(CLOCK_MONOTONIC) * 0x9e3779b97f4a7c15ULL;
        return mean / 2 + r % mean;
}
