/* recommend.h: the advice for every tracked mount, assembled from what the
 * daemon knows: the mount table and probe (tracker), the measured history
 * (store), who reads atime (consumers) and what the configuration says. The
 * rules themselves are advisor.c's. */
#pragma once

#include "advisor.h"
#include "manager.h"

struct recommendation {
        const TrackedMount *tm;
        struct advisor_input in;
        struct advice advice;
        const struct consumer *consumers[8]; /* those on this mount, strongest first */
        size_t n_consumers;
        double window_s;                      /* the period the figures cover */
};

/* One per tracked mount (only 'target' if not NULL); *ret is freed by the
 * caller. Returns -ENOENT if target is not tracked. */
int recommend(const Manager *m, const char *target, struct recommendation **ret, size_t *ret_n);
