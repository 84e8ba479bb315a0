/* time-util.h: reading the clocks.
 *
 * On the event loop, sd_event_now() gives the loop's cached time and is
 * what handlers should use; now_usec() is for the rest: workers, startup,
 * code shared with the client. */
#pragma once

#include <stdint.h>
#include <time.h>

/* The clock's current time in microseconds. The clock must be one the
 * kernel knows (CLOCK_MONOTONIC, CLOCK_REALTIME, ...): asserted. */
uint64_t now_usec(clockid_t clock);

/* A timespec in microseconds, rounded down. */
uint64_t timespec_to_usec(const struct timespec *ts);

/* 'mean' on average, drawn afresh from half to one and a half of it (any
 * unit): for looks at times unrelated to any reader's. */
uint64_t jittered(uint64_t mean);
