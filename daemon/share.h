/* share.h: each user's share of the event loop's time, as the control
 * socket hands it out (control.h, limits.user_usec_per_s): refilled at a
 * rate up to a second's worth, spent by the time the user's requests and
 * the replies built for them take. A user past it waits. Kept for the
 * users that spent some lately, with what each took since start. Pure: the
 * caller gives the clock. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

typedef struct UserShare {
        uid_t user;
        int64_t usec; /* what is left; negative: a debt */
        uint64_t at;  /* CLOCK_MONOTONIC of the last refill */
        /* What the user took since start (forgotten with the share): the
         * loop's time, requests, and how often their requests were held. */
        uint64_t spent_usec, requests, held;
} UserShare;

/* The shares kept: one per user that spent some lately (a full one is the
 * same as none, and is forgotten first). */
#define USER_SHARES_MAX 1024

typedef struct UserShares {
        UserShare *v;
        size_t n;
} UserShares;

/* A share 'usec' (negative: a debt), after 'elapsed' microseconds of
 * refill at 'rate' a second, full at 'rate' (at most a second a second):
 * the refill saturates for any gap, months included. */
int64_t user_share_refill(int64_t usec, uint64_t elapsed, uint64_t rate);

/* The share of 'user', refilled to 'now' at 'rate' (not 0); NULL if
 * USER_SHARES_MAX users hold one that is not full, or out of memory: then
 * the user is not limited rather than refused. */
UserShare *user_shares_get(UserShares *s, uid_t user, uint64_t now, uint64_t rate);
void user_shares_done(UserShares *s);

/* The users that took most of the loop's time, at most 'max' of them, as
 * "user U: S s, requests N, held H" joined by "; ", into buf. */
void user_shares_summary(UserShares *s, size_t max, char *buf, size_t size);
