/* loop-wait.h: the unit tests' one way to wait for what an event loop does:
 * run it until the condition holds. The bound is only there to end a test
 * that would otherwise hang; a check never depends on how fast the
 * machine is, so it is far beyond what any host, however loaded, takes. */
#pragma once

#include <systemd/sd-event.h>

#include "time-util.h"

#define LOOP_WAIT_USEC (60 * USEC_PER_SEC)

#define RUN_LOOP_UNTIL(e, cond)                                                                      \
        for (uint64_t _loop_end = now_usec(CLOCK_MONOTONIC) + LOOP_WAIT_USEC;                        \
             !(cond) && now_usec(CLOCK_MONOTONIC) < _loop_end;)                                      \
                (void) sd_event_run((e), 10 * USEC_PER_MSEC)
