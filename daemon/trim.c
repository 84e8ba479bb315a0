/* trim.c: the heap given back to the system (see trim.h). */
#include "trim.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include "log.h"

struct Trimmer {
        sd_event *event;
        sd_event_source *timer; /* armed while a trim is due */
        size_t n_all;           /* mounts in the table in force */
        size_t peak;            /* most mounts in the table since memory was last trimmed */
};

int trimmer_new(sd_event *e, Trimmer **ret) {
        Trimmer *x = calloc(1, sizeof *x);

        if (!x)
                return -ENOMEM;
        x->event = sd_event_ref(e);
        *ret = x;
        return 0;
}

Trimmer *trimmer_free(Trimmer *x) {
        if (!x)
                return NULL;
        sd_event_source_disable_unref(x->timer);
        sd_event_unref(x->event);
        free(x);
        return NULL;
}

/* Many mounts gone (containers stopped, churn), however many rescans it
 * took: give the memory their parsing and tracking held back to the system,
 * not to the allocator's free lists. Not at once: what the tracker, the
 * workers and the status cache still hold of them goes over the next
 * moments, and free() only returns the top of the heap by itself, so the
 * trim waits until things settle. */
#define TRIM_DELAY_USEC (2 * USEC_PER_SEC)
#define TRIM_MOUNTS 64

static void trim(Trimmer *x) {
        (void) malloc_trim(0);
        x->peak = x->n_all;
}

static int on_trim_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Trimmer *x = userdata;
        size_t peak = x->peak;

        (void) s;
        (void) usec;
        trim(x);
        log_debug("Memory given back after the mount table shrank from %zu to %zu mounts", peak, x->peak);
        return 0;
}

/* Once a cycle: a full status of many mounts, a re-read table or a flush
 * builds and drops megabytes at a time, and what a longer-lived block
 * allocated since sits on top of stays resident though free. Given back
 * when that much lies free; the pages a cycle needs again fault back in. */
#define TRIM_FREE_BYTES ((size_t) 1 << 20)

void trimmer_if_worth_it(Trimmer *x) {
        struct mallinfo2 mi = mallinfo2();

        if (mi.fordblks >= TRIM_FREE_BYTES)
                trim(x);
}

void trimmer_table(Trimmer *x, size_t n_all) {
        int r;

        x->n_all = n_all;
        x->peak = MAX(x->peak, n_all);
        if (x->peak < n_all + TRIM_MOUNTS)
                return;
        if (!x->timer) {
                r = sd_event_add_time_relative(x->event, &x->timer, CLOCK_MONOTONIC, TRIM_DELAY_USEC, USEC_PER_SEC / 10,
                                               on_trim_timer, x);
                if (r < 0) {
                        /* Not worth failing over: trim now instead. */
                        trim(x);
                        return;
                }
        } else {
                /* Still shrinking: wait for the churn to end. */
                (void) sd_event_source_set_time_relative(x->timer, TRIM_DELAY_USEC);
        }
        (void) sd_event_source_set_enabled(x->timer, SD_EVENT_ONESHOT);
}
