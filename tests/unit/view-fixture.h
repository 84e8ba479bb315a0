/* view-fixture.h: the daemon's state as the request side and the tick pass
 * see it (view.h), built for unit tests from the mountinfo fixture: a
 * default configuration, the fixture's table, a real tracker of it, a real
 * store in a new temporary directory, the counters. No Manager. */
#pragma once

#include <stdbool.h>

#include "status.h"
#include "view.h"
#include "worker.h"

typedef struct ViewFixture {
        View view;
        struct config *config;
        MountTable *mounts;
        sd_event *event;
        WorkerPool *pool; /* NULL: the tracker is shut down, nothing is measured */
        Tracker *tracker;
        Store *store;
        StatusCounters *counters;
        char dir[64];
} ViewFixture;

/* tests/fixtures/mountinfo-basic; with a pool of one thread for the
 * tracker's jobs if 'with_pool'. The view's ops probe through the tracker
 * and refuse no history. */
int view_fixture_setup(ViewFixture *f, bool with_pool);
void view_fixture_done(ViewFixture *f);
/* Samples of 'per_min' atime updates a minute, one per finest bucket over
 * the last hour, in the history of the mount at 'target'. */
bool view_fixture_add_history(ViewFixture *f, const char *target, float per_min);
/* Samples of btrfs metadata un-shared, 'per_day' (95% interval: up to
 * 'hi'), measured or modelled, one per finest bucket over [from, to)
 * seconds ago, in the history of the mount at 'target'. */
bool view_fixture_add_unshared(ViewFixture *f, const char *target, int64_t from, int64_t to, float per_day, float hi,
                               bool modelled);
