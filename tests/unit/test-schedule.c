/* test-schedule: the rules of the tracker's schedule on plain numbers, no
 * event loop (schedule.h): the back-off doubling to its cap; a timer's
 * time on the system's clock and on a caller's; the timed sweeps in the
 * middle of their wall-clock buckets, and the first that measures an
 * interval; the journals' edges read before a sweep; when a walk is due,
 * refreshed, brought forward; when a first figure is due; when a first
 * walk will be done. */
#include <stdio.h>

#include "../tap.h"
#include "schedule.h"

#define S USEC_PER_SEC

static void test_backoff(void) {
        is_int(schedule_backoff(1), 10 * S, "back-off: 10 s after the first failure");
        is_int(schedule_backoff(2), 20 * S, "back-off: doubled after the second");
        is_int(schedule_backoff(5), 160 * S, "back-off: 160 s after the fifth");
        is_int(schedule_backoff(10), 3600 * S, "back-off: an hour at most (the tenth would be 5120 s)");
        is_int(schedule_backoff(1000), 3600 * S, "back-off: an hour after a thousand, no overflow");
        is_int(schedule_backoff(0), 10 * S, "back-off: 10 s with no failure counted yet");
}

static void test_timer_time(void) {
        is_int(schedule_timer_time(false, 0, 5 * S), 5 * S, "timer: on the system's clock, the time itself");
        is_int(schedule_timer_time(false, 0, 0), 1, "timer: never 0 (sd-event's off)");
        is_int(schedule_timer_time(true, 100 * S, 100 * S), 1, "timer: on a caller's clock, what is due fires at once");
        ok(schedule_timer_time(true, 100 * S, 100 * S + 1) == USEC_INFINITY,
           "timer: on a caller's clock, what is not due waits for the caller's next move");
}

static void test_sweeps(void) {
        uint64_t iv = 60 * S, mono = 1000 * S;

        /* Wall clock at :10 of a minute: the middle of this bucket (:30)
         * is 20 s away. */
        is_int(schedule_next_sweep(600 * S + 10 * S, mono, iv), mono + 20 * S,
               "timed sweep: in the first half of a bucket, at its middle");
        /* At :40: the middle of the next bucket, 50 s away. */
        is_int(schedule_next_sweep(600 * S + 40 * S, mono, iv), mono + 50 * S,
               "timed sweep: past the middle, the middle of the next bucket");
        is_int(schedule_next_sweep(600 * S + 30 * S, mono, iv), mono + 60 * S,
               "timed sweep: at the middle itself, the next bucket's");
        is_int(schedule_first_sweep_after(mono, iv, mono + 90 * S), mono + 120 * S,
               "the first timed sweep at a time or after, on their grid");
        is_int(schedule_first_sweep_after(mono, iv, mono - 5 * S), mono, "the next one, where it is after already");
        /* A baseline at mono + 1: the sweep at mono + 60 is 59 s after,
         * more than 9/10 of a minute: it measures. */
        is_int(schedule_first_measuring_sweep(mono, iv, mono + 1 * S), mono + 60 * S,
               "the first measuring sweep: 59 s after a baseline measures a minute's interval");
        /* A baseline at mono + 10: 50 s is too short, the one after. */
        is_int(schedule_first_measuring_sweep(mono, iv, mono + 10 * S), mono + 120 * S,
               "the first measuring sweep: 50 s is too short, the one after it");
        is_int(schedule_edges_from(mono, iv), mono - 7 * S, "journals' edges: read from 7 s before a sweep");
        is_int(schedule_edges_from(mono, 10 * S), mono - 5 * S, "journals' edges: half an interval at most");
        is_int(schedule_edges_from(3 * S, iv), 1, "journals' edges: never at 0 (sd-event's off)");
}

static void test_walks(void) {
        SamplerView never = {}, walking = { .walking = true, .current = true }, waiting = { .current = true, .next = true },
                    sampled = { .current = true };
        uint64_t now = 500 * S, iv = 60 * S;

        ok(schedule_walk_due(&never, 0, now), "walk due: never walked");
        ok(schedule_walk_due(&walking, now + 100 * S, now), "walk due: one under way goes on");
        ok(!schedule_walk_due(&waiting, now - 1, now), "walk due: not while a finished walk waits for its sweep");
        ok(!schedule_walk_due(&sampled, 0, now), "walk due: no refresh planned, none");
        ok(!schedule_walk_due(&sampled, now + 1, now), "walk due: a refresh not yet");
        ok(schedule_walk_due(&sampled, now, now), "walk due: a refresh at its time");

        is_int(schedule_walk_refresh(false, 1 * S, iv, 6 * 3600 * S, now), now + 60 * S,
               "refresh: a short walk waits a minute, the shortest between two walks");
        is_int(schedule_walk_refresh(false, 600 * S, iv, 6 * 3600 * S, now), now + 6000 * S,
               "refresh: a long one, ten times its length");
        is_int(schedule_walk_refresh(false, 7200 * S, iv, 6 * 3600 * S, now), now + 6 * 3600 * S,
               "refresh: never later than [sampler] refresh");
        is_int(schedule_walk_refresh(false, 1 * S, iv, 10 * S, now), now + 60 * S,
               "refresh: a refresh shorter than a minute is a minute");
        is_int(schedule_walk_refresh(true, 1 * S, iv, 6 * 3600 * S, now), now + 30 * S,
               "refresh: a short first walk again half an interval on, with the first figure");
        is_int(schedule_walk_refresh(true, 1 * S, 3600 * S, 6 * 3600 * S, now), now + 60 * S,
               "refresh: a minute at most after a first walk");

        is_int(schedule_rewalk(now + 3600 * S, false, false, false, now - 100 * S, 1 * S, iv, now), now + 3600 * S,
               "re-walk: nothing found, the refresh stands");
        is_int(schedule_rewalk(now + 3600 * S, true, false, false, now - 100 * S, 1 * S, iv, now), now,
               "re-walk: files turned hot, at once");
        is_int(schedule_rewalk(now + 3600 * S, true, false, false, now - 100 * S, 50 * S, iv, now), now + 50 * S,
               "re-walk: but not before three times the last walk's length since it began");
        is_int(schedule_rewalk(now + 3600 * S, false, true, false, now - 100 * S, 1 * S, iv, now), now + 20 * S,
               "re-walk: a count unexplained, two intervals after the walk began");
        is_int(schedule_rewalk(now + 3600 * S, false, true, true, now - 10 * S, 1 * S, iv, now), now + 10 * S,
               "re-walk: a count that jumped, at once but never before 20 s");
        is_int(schedule_rewalk(now + 5 * S, false, true, false, now - 100 * S, 1 * S, iv, now), now + 5 * S,
               "re-walk: never later than planned already");
}

static void test_first_figure(void) {
        uint64_t iv = 60 * S;

        is_int(schedule_first_due(0, 0, iv), 0, "first figure: none without a baseline");
        is_int(schedule_first_due(100 * S, 0, iv), 130 * S, "first figure: half an interval after the baseline");
        is_int(schedule_first_due(100 * S, 100 * S, iv), 0, "first figure: asked for once per baseline");
        is_int(schedule_first_due(200 * S, 100 * S, iv), 230 * S, "first figure: a new baseline, asked again");

        is_int(schedule_walk_end(500, 2000, 10 * S, 1000, 100 * S), 130 * S,
               "walk end: the inodes left at the pace kept so far");
        is_int(schedule_walk_end(0, 2000, 0, 1000, 100 * S), 102 * S, "walk end: at walk_rate before its first step");
        is_int(schedule_walk_end(3000, 2000, 10 * S, 1000, 100 * S), 100 * S, "walk end: now, past what statfs said");
        is_int(schedule_walk_end(0, 2000, 0, 0, 100 * S), 2100 * S, "walk end: a walk_rate of 0 read as 1");
}

int main(void) {
        test_backoff();
        test_timer_time();
        test_sweeps();
        test_walks();
        test_first_figure();
        return tap_done();
}
