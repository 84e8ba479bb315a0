/* share.c: each user's share of the event loop's time (see share.h). */
#include "share.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int64_t user_share_refill(int64_t usec, uint64_t elapsed, uint64_t rate) {
        /* An hour's refill covers any debt (a charge leaves ten seconds'
         * at most); past 2^64 / rate (213 days at a 1 s share) elapsed *
         * rate wraps, and a gap just past a multiple of it refilled
         * nothing. */
        if (elapsed >= 3600 * USEC_PER_SEC || rate > USEC_PER_SEC)
                return (int64_t) MIN(rate, (uint64_t) INT64_MAX);
        return MIN((int64_t) rate, usec + (int64_t) (elapsed * rate / USEC_PER_SEC));
}

/* Room for one more share: those that have refilled hold nothing. */
static int make_room(UserShares *s, uint64_t now, uint64_t rate) {
        size_t k = 0;

        if (!s->v) {
                s->v = calloc(USER_SHARES_MAX, sizeof *s->v);
                return s->v ? 0 : -ENOMEM;
        }
        if (s->n < USER_SHARES_MAX)
                return 0;
        for (size_t i = 0; i < s->n; i++) {
                UserShare *x = &s->v[i];

                if (user_share_refill(x->usec, now - x->at, rate) < (int64_t) rate)
                        s->v[k++] = *x;
        }
        s->n = k;
        return k < USER_SHARES_MAX ? 0 : -ENOSPC;
}

UserShare *user_shares_get(UserShares *s, uid_t user, uint64_t now, uint64_t rate) {
        UserShare *b = NULL;

        for (size_t i = 0; i < s->n && !b; i++)
                if (s->v[i].user == user)
                        b = &s->v[i];
        if (!b) {
                if (make_room(s, now, rate) < 0)
                        return NULL;
                b = &s->v[s->n++];
                *b = (UserShare) { .user = user, .usec = (int64_t) rate, .at = now };
        }
        b->usec = user_share_refill(b->usec, now - b->at, rate);
        b->at = now;
        return b;
}

void user_shares_done(UserShares *s) {
        free(s->v);
        *s = (UserShares) {};
}

static int cmp_spent(const void *a, const void *b) {
        const UserShare *x = a, *y = b;

        return x->spent_usec < y->spent_usec ? 1 : x->spent_usec > y->spent_usec ? -1 : 0;
}

void user_shares_summary(UserShares *s, size_t max, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = 0;
        if (s->n > 0)
                qsort(s->v, s->n, sizeof *s->v, cmp_spent);
        for (size_t i = 0; i < MIN(s->n, max) && n < size; i++) {
                const UserShare *b = &s->v[i];
                int k = snprintf(buf + n, size - n, "%suser %u: %.3f s, requests %" PRIu64 ", held %" PRIu64,
                                 i ? "; " : "", (unsigned) b->user, (double) b->spent_usec / USEC_PER_SEC, b->requests,
                                 b->held);

                if (k < 0)
                        break;
                n += (size_t) k;
        }
}
