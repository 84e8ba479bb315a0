/* recommend.h: the advice for every tracked mount, assembled from what the
 * daemon knows: the mount table and probe (tracker), the measured history
 * (store), who reads atime (consumers) and what the configuration says. The
 * rules themselves are advisor.c's. */
#pragma once

#include "advisor.h"
#include "verdict.h"
#include "view.h"

struct recommendation {
        const TrackedMount *tm;
        struct advisor_input in;
        struct advice advice;
        const struct consumer *consumers[8]; /* those on this mount, strongest first */
        size_t n_consumers;
        double window_s;                      /* the period the figures cover */
        /* The mount's history's last change of policy, and what it saved
         * (verdict.h); change.t 0: none recorded. */
        struct stats_change change;
        struct verdict verdict;
};

/* One per tracked mount (only 'target' if not NULL); *ret is freed by the
 * caller. Returns -ENOENT if target is not tracked. */
int recommend(const View *v, const char *target, struct recommendation **ret, size_t *ret_n);

/* The btrfs metadata atime un-shared over the window, from the history's
 * points under in->policy.atime: its mean per day and 95% interval into
 * 'in', and what the bytes came from (btrfs_bytes_label(): "modelled" only
 * where a modelled interval gave the mean bytes). Nothing where no point
 * has them. */
void recommend_summarise_unshared(const MountHistory *h, int64_t now, int64_t window, double interval_s,
                                  struct advisor_input *in);

/* The same a mount at a time, for a caller that spreads the work over
 * several turns of the event loop: what is shared by all mounts (which
 * consumer is on which mount, the time, the advisor's parameters) is
 * worked out once by recommender_new(), for the view's table as it is
 * then; recommender_advise() gives the advice for entry i of that table
 * (false: the tracker does not track it). A new table, consumer scan or
 * configuration needs a new Recommender. */
typedef struct Recommender Recommender;
int recommender_new(const View *v, Recommender **ret);
Recommender *recommender_free(Recommender *r);
DEFINE_FREE_FUNC(Recommender, recommender_free);
bool recommender_advise(Recommender *r, size_t i, struct recommendation *ret);
