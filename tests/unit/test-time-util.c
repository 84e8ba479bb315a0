/* test-time-util: the clocks in microseconds. */
#include <time.h>

#include "macro.h"
#include "time-util.h"
#include "../tap.h"

int main(void) {
        struct timespec ts = { .tv_sec = 3, .tv_nsec = 999999999 }, real;
        uint64_t a, b;

        is_int(timespec_to_usec(&ts), 3999999, "nanoseconds are rounded down to whole microseconds");
        ts = (struct timespec) {};
        is_int(timespec_to_usec(&ts), 0, "zero is zero");

        a = now_usec(CLOCK_MONOTONIC);
        b = now_usec(CLOCK_MONOTONIC);
        ok(a > 0 && b >= a, "CLOCK_MONOTONIC does not go back (%llu, %llu)", (unsigned long long) a,
           (unsigned long long) b);

        clock_gettime(CLOCK_REALTIME, &real);
        a = now_usec(CLOCK_REALTIME);
        ok(a / USEC_PER_SEC >= (uint64_t) real.tv_sec && a / USEC_PER_SEC <= (uint64_t) real.tv_sec + 5,
           "CLOCK_REALTIME in microseconds agrees with clock_gettime()");
        return tap_done();
}
