/* hostload.h: whether the host's CPUs were idle, but for atimed's own use
 * of them, between one look and the next: the first walk goes faster only
 * then ([sampler] idle_walk_rate). The CPU times come from the kernel's
 * /proc/stat (its path configurable: [sampler] stat), atimed's own from
 * getrusage(). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Idle: everything but atimed used under this share of all CPUs' time. */
#define HOSTLOAD_IDLE_SHARE 0.1

typedef struct HostLoad {
        bool have;            /* a look to compare with */
        uint64_t busy, total; /* clock ticks of all CPUs at the last look: not idle nor waiting for I/O, all */
        uint64_t self_usec;   /* atimed's own CPU time then, every thread */
} HostLoad;

/* Parses the aggregate "cpu" line of /proc/stat's text: the ticks spent
 * busy (all but idle and iowait) and in all. -EBADMSG where it is not
 * there or has fewer than the eight fields of kernels since 2.6.11. */
int hostload_parse(const char *text, uint64_t *ret_busy, uint64_t *ret_total);

/* One look: the host's ticks and atimed's own microseconds now, 'hz'
 * ticks a second. Whether the host was idle since the last look; the
 * first look, and one whose counters went back, says no. */
bool hostload_step(HostLoad *h, uint64_t busy, uint64_t total, uint64_t self_usec, uint64_t hz);

/* hostload_step() with the counters read now from 'stat_path' and
 * getrusage(); false (and no look to compare with) where they cannot be
 * read. */
bool hostload_look(HostLoad *h, const char *stat_path);

/* Forgets the last look: the next one begins a window. */
void hostload_forget(HostLoad *h);
