/* schedule.c: the rules of the tracker's schedule, pure (see schedule.h). */
#include "schedule.h"

#include "macro.h"

uint64_t schedule_backoff(unsigned failures) {
        uint64_t b = SCHEDULE_BACKOFF_MIN_USEC;

        for (unsigned i = 1; i < failures && b < SCHEDULE_BACKOFF_MAX_USEC; i++)
                b *= 2;
        return MIN(b, SCHEDULE_BACKOFF_MAX_USEC);
}

uint64_t schedule_timer_time(bool own_clock, uint64_t now, uint64_t when) {
        if (!own_clock)
                return MAX(when, (uint64_t) 1);
        return when <= now ? 1 : USEC_INFINITY;
}

uint64_t schedule_next_sweep(uint64_t real, uint64_t mono, uint64_t interval) {
        uint64_t target = (real / interval + 1) * interval + interval / 2;

        if (target - real > interval)
                target -= interval; /* still in the first half of this bucket */
        return mono + (target - real);
}

uint64_t schedule_first_sweep_after(uint64_t next, uint64_t interval, uint64_t when) {
        while (next < when)
                next += interval;
        return next;
}

uint64_t schedule_first_measuring_sweep(uint64_t next, uint64_t interval, uint64_t since) {
        return schedule_first_sweep_after(next, interval, since + interval / 10 * 9);
}

uint64_t schedule_edges_from(uint64_t sweep, uint64_t interval) {
        uint64_t w = MIN(SCHEDULE_EDGE_WINDOW_USEC, interval / 2);

        return sweep > w ? sweep - w : 1;
}

bool schedule_walk_due(const SamplerView *v, uint64_t next_walk, uint64_t now) {
        if (v->walking)
                return true; /* resume */
        if (!v->current && !v->next)
                return true; /* never walked */
        return !v->next && next_walk > 0 && next_walk <= now;
}

uint64_t schedule_walk_refresh(bool first, uint64_t took, uint64_t interval, uint64_t refresh, uint64_t now) {
        uint64_t soonest = first ? MIN(interval / 2, SCHEDULE_WALK_REFRESH_MIN_USEC) : SCHEDULE_WALK_REFRESH_MIN_USEC;

        return now + CLAMP(10 * took, soonest, MAX(refresh, SCHEDULE_WALK_REFRESH_MIN_USEC));
}

uint64_t schedule_rewalk(uint64_t next_walk, bool woke_hot, bool unexplained, bool jumped, uint64_t walk_started,
                         uint64_t walk_took, uint64_t interval, uint64_t now) {
        uint64_t wait = woke_hot ? 0 : MAX(jumped ? 0 : 2 * interval, 20 * USEC_PER_SEC);
        uint64_t soonest = MAX(walk_started + MAX(wait, 3 * walk_took), now);

        if (!woke_hot && !unexplained && !jumped)
                return next_walk;
        return MIN(soonest, next_walk);
}

uint64_t schedule_first_due(uint64_t baseline_at, uint64_t asked, uint64_t interval) {
        if (baseline_at == 0 || asked == baseline_at)
                return 0;
        return baseline_at + interval / 2;
}

uint64_t schedule_walk_end(uint64_t walked, uint64_t used, uint64_t took, unsigned walk_rate, uint64_t now) {
        if (used <= walked)
                return now;
        if (walked > 0 && took > 0)
                return now + (uint64_t) ((double) (used - walked) * (double) took / (double) walked);
        return now + (used - walked) * USEC_PER_SEC / MAX(walk_rate, 1u);
}
