/* reply-cache.c: the replies of every mount, kept and built in slices
 * (see reply-cache.h). */
#include "reply-cache.h"

#include <errno.h>
#include <json-c/printbuf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "advice-reply.h"
#include "log.h"
#include "protocol.h"
#include "recommend.h"
#include "reply.h"
#include "status-reply.h"
#include "status.h"
#include "time-util.h"
#include "varlink.h"

/* GetStatus and GetRecommendations of everything are what monitoring
 * polls, maybe many times a second from several scrapers, and what any
 * user may ask for in a loop: their parameters are serialized once and
 * served as text until reply_cache_changed() says something they show
 * changed, or the second of uptime_s (and of the evidence's ages) turns.
 * So a flood of them costs the daemon one reply a second, however many
 * come. Replies in flight keep the text they were given.
 *
 * At thousands of mounts one such build takes the loop tens of
 * milliseconds (70 ms at 2,000 mounts under AddressSanitizer), and every
 * request behind it, root's included, waits as long (issue 36). So a slot
 * whose last build took the loop more than REPLY_SYNC_MAX_USEC is built
 * again in slices of REPLY_SLICE_USEC from a defer source of idle
 * priority, as the tick pass is: requests, timers and completions come
 * first between slices. Meanwhile the slot's last text is served while it
 * is at most REPLY_STALE_USEC old; a call that finds none that recent (or
 * none with its history_s) is answered when the build is done. */
#define REPLY_SYNC_MAX_USEC (10 * USEC_PER_MSEC)
#define REPLY_SLICE_USEC (2 * USEC_PER_MSEC)
#define REPLY_STALE_USEC USEC_PER_SEC

/* Slots for GetStatus with history: history_s is rounded to a few values
 * (status_reply_span()), one per ring with the default rings, each kept. */
#define STATUS_HISTORY_SLOTS 4

struct ReplyText {
        unsigned refs;
        uint64_t built_at;  /* CLOCK_MONOTONIC when its figures were read */
        uint64_t second;    /* of uptime, then */
        uint64_t cost_usec; /* the loop's time its build took */
        int64_t key;        /* history_s, of a CACHE_STATUS_HISTORY slot; else 0 */
        size_t len;
        char text[];
};

enum {
        CACHE_STATUS,
        CACHE_STATUS_HISTORY,    /* every mount with history_s of history: one history_s a slot */
        CACHE_STATUS_HISTORY_LAST = CACHE_STATUS_HISTORY + STATUS_HISTORY_SLOTS - 1,
        CACHE_ADVICE,            /* as told to anyone: private paths withheld */
        CACHE_ADVICE_PRIVILEGED, /* as told to root and the privileged group */
        _CACHE_MAX,
};

/* A build in slices: a mount of the view's table at a time, into 'list'. */
typedef struct SliceBuild {
        bool active;
        bool changed;        /* reply_cache_changed() came while it ran: its text is born stale */
        int64_t key;
        uint64_t generation; /* the view's when it began: another one starts it over */
        uint64_t started, second, cost_usec;
        size_t next;         /* the next entry of the table */
        struct printbuf *list;
        Report *report;      /* a status's: the daemon's figures and each mount's */
        Recommender *rec;    /* advice's */
        bool has_payer;
        ControlPeer payer;   /* whose call began it: charged its time (reply_cache_set_charge) */
} SliceBuild;

/* A call answered once the build of its slot with 'key' is done. */
typedef struct Waiter {
        ControlCall *call;
        int64_t key;
} Waiter;

struct ReplyCache {
        const View *view;
        struct ReplyText *cache[_CACHE_MAX]; /* NULL: to be built at the next call */
        bool stale[_CACHE_MAX];              /* reply_cache_changed() since it was built */
        SliceBuild build[_CACHE_MAX];
        Waiter *waiters[_CACHE_MAX];
        size_t n_waiters[_CACHE_MAX];
        sd_event_source *defer; /* NULL: every build at once (no loop: tests) */
        unsigned turn;          /* the slot whose build the next slice goes on with */
        reply_cache_charge_t charge;
        void *charge_userdata;
};

static void reply_text_unref(struct ReplyText *c) {
        if (c && --c->refs == 0)
                free(c);
}

int reply_cache_new(const View *view, ReplyCache **ret) {
        ReplyCache *m = calloc(1, sizeof *m);

        if (m) {
                m->view = view;
                *ret = m;
        }
        return m ? 0 : -ENOMEM;
}

static void slice_reset(SliceBuild *b) {
        if (b->list)
                printbuf_free(b->list);
        report_free(b->report);
        recommender_free(b->rec);
        *b = (SliceBuild) {};
}

ReplyCache *reply_cache_free(ReplyCache *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < _CACHE_MAX; i++) {
                reply_text_unref(m->cache[i]);
                slice_reset(&m->build[i]);
                for (size_t k = 0; k < m->n_waiters[i]; k++)
                        control_call_unref(m->waiters[i][k].call);
                free(m->waiters[i]);
        }
        sd_event_source_disable_unref(m->defer);
        free(m);
        return NULL;
}

void reply_cache_changed(ReplyCache *m) {
        for (size_t i = 0; m && i < _CACHE_MAX; i++) {
                m->stale[i] = true;
                if (m->build[i].active)
                        m->build[i].changed = true;
        }
}

static int emit_cached(json_object *o, struct printbuf *pb, int level, int flags) {
        const struct ReplyText *c = json_object_get_userdata(o);

        return printbuf_memappend(pb, c->text, (int) c->len) < 0 ? -1 : 0;
}

static void cached_delete(json_object *o, void *userdata) {
        reply_text_unref(userdata);
}

/* The reply that serves text 'c'; NULL on OOM. */
static json_object *reply_of(struct ReplyText *c) {
        json_object *cached = json_object_new_object();

        if (!cached)
                return NULL;
        c->refs++;
        json_object_set_serializer(cached, emit_cached, c, cached_delete);
        return varlink_reply_new(cached);
}

/* Keeps 'reply' (a whole reply, its parameters serialized here) as slot's
 * text. Returns the reply to send: the cached one, or 'reply' itself when
 * it is an error (not kept) or could not be kept. */
static json_object *keep_reply(ReplyCache *m, unsigned slot, json_object *reply, int64_t key, uint64_t built_at,
                               uint64_t second, uint64_t cost_usec, bool stale) {
        _cleanup_json_ json_object *r = reply;
        struct ReplyText *c;
        json_object *p, *cached;
        const char *text;
        size_t len;

        if (!r || !json_object_object_get_ex(r, VL_PARAMETERS, &p))
                return TAKE_PTR(r); /* an error is not kept */
        text = json_object_to_json_string_length(p, VARLINK_JSON_FLAGS, &len);
        if (!text || len > INT_MAX)
                return TAKE_PTR(r);
        c = malloc(sizeof *c + len + 1);
        if (!c)
                return TAKE_PTR(r);
        *c = (struct ReplyText) {
                .refs = 1, .built_at = built_at, .second = second, .cost_usec = cost_usec, .key = key, .len = len,
        };
        memcpy(c->text, text, len + 1);
        reply_text_unref(m->cache[slot]);
        m->cache[slot] = c;
        m->stale[slot] = stale;
        cached = reply_of(c);
        return cached ? cached : TAKE_PTR(r);
}

static uint64_t uptime_second(const ReplyCache *m, uint64_t now) {
        return (now - m->view->started_monotonic) / USEC_PER_SEC;
}


static bool slot_is_status(unsigned slot) {
        return slot <= CACHE_STATUS_HISTORY_LAST;
}

/* Slot's reply built now, at once, and kept. */
static json_object *build_now(ReplyCache *m, unsigned slot, int64_t key) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        json_object *reply;

        if (slot_is_status(slot))
                reply = status_reply_build(m->view, NULL, key);
        else
                reply = advice_reply_build(m->view, NULL, slot == CACHE_ADVICE_PRIVILEGED);
        return keep_reply(m, slot, reply, key, start, uptime_second(m, start), now_usec(CLOCK_MONOTONIC) - start,
                          false);
}

/* Begins slot's build for 'key', its time charged to 'payer' (NULL: no one). */
static int slice_begin(ReplyCache *m, unsigned slot, int64_t key, const ControlPeer *payer) {
        SliceBuild *b = &m->build[slot];
        const View *v = m->view;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        slice_reset(b);
        *b = (SliceBuild) {
                .active = true, .key = key, .generation = v->generation, .started = now,
                .second = uptime_second(m, now),
        };
        if (payer) {
                b->has_payer = true;
                b->payer = *payer;
        }
        b->list = printbuf_new();
        if (!b->list || printbuf_memappend(b->list, "[", 1) < 0)
                return -ENOMEM;
        r = slot_is_status(slot) ? status_report_begin(v, false, v->mounts ? v->mounts->n : 0, &b->report)
                                 : recommender_new(v, &b->rec);
        (void) sd_event_source_set_enabled(m->defer, SD_EVENT_ON);
        return r;
}

/* Entry i of the table into the build. */
static int slice_step(ReplyCache *m, unsigned slot, SliceBuild *b, size_t i) {
        const View *v = m->view;
        struct recommendation rec;

        if (slot_is_status(slot)) {
                const MountEntry *e = &v->mounts->entries[i];
                int r = status_report_add(v, b->report, e, tracker_find(v->tracker, e->id), NULL);

                if (r < 0)
                        return r;
                return reply_list_append(b->list,
                                         status_reply_mount(v, &b->report->mounts[b->report->n_mounts - 1], b->key));
        }
        if (!recommender_advise(b->rec, i, &rec))
                return 0;
        return reply_list_append(b->list, advice_reply_one(&rec, slot == CACHE_ADVICE_PRIVILEGED));
}

/* Answers the calls waiting for slot's build with 'key': the reply
 * 'reply' (consumed), or if NULL, an internal error. */
static void answer_waiters(ReplyCache *m, unsigned slot, int64_t key, json_object *reply) {
        size_t k = 0;

        for (size_t i = 0; i < m->n_waiters[slot]; i++) {
                Waiter *w = &m->waiters[slot][i];

                if (w->key != key) {
                        m->waiters[slot][k++] = *w;
                        continue;
                }
                control_call_reply(w->call, reply ? json_object_get(reply)
                                                   : varlink_error_new_str(ERROR_INTERNAL, P_REASON, "out of memory"));
                control_call_unref(w->call);
        }
        m->n_waiters[slot] = k;
        json_object_put(reply);
}

/* The next build of slot, for the first call still waiting (one whose
 * client went away needs none). */
static void slice_next(ReplyCache *m, unsigned slot) {
        size_t k = 0;

        for (size_t i = 0; i < m->n_waiters[slot]; i++) {
                Waiter *w = &m->waiters[slot][i];

                if (control_call_gone(w->call))
                        control_call_unref(w->call);
                else
                        m->waiters[slot][k++] = *w;
        }
        m->n_waiters[slot] = k;
        if (k > 0 && slice_begin(m, slot, m->waiters[slot][0].key, control_call_peer(m->waiters[slot][0].call)) < 0) {
                log_oom();
                slice_reset(&m->build[slot]);
                answer_waiters(m, slot, m->waiters[slot][0].key, NULL);
        }
}

static void slice_finish(ReplyCache *m, unsigned slot, SliceBuild *b) {
        json_object *reply = slot_is_status(slot) ? status_reply_finish(b->report, TAKE_PTR(b->list))
                                                  : advice_reply_finish(TAKE_PTR(b->list));
        int64_t key = b->key;

        reply = keep_reply(m, slot, reply, key, b->started, b->second, b->cost_usec, b->changed);
        slice_reset(b);
        answer_waiters(m, slot, key, reply);
        slice_next(m, slot);
}

/* Goes on with slot's build for at most REPLY_SLICE_USEC. */
static void slice_run(ReplyCache *m, unsigned slot) {
        SliceBuild *b = &m->build[slot];
        const View *v = m->view;
        uint64_t start = now_usec(CLOCK_MONOTONIC), now = start;
        int r = 0;

        if (b->generation != v->generation) {
                /* A new table (or consumers, or configuration): from its
                 * first mount. */
                bool changed = b->changed;
                SliceBuild was = *b;

                r = slice_begin(m, slot, b->key, was.has_payer ? &was.payer : NULL);
                b->changed = changed;
        }
        while (r >= 0 && v->mounts && b->next < v->mounts->n && now - start < REPLY_SLICE_USEC) {
                r = slice_step(m, slot, b, b->next++);
                now = now_usec(CLOCK_MONOTONIC);
        }
        b->cost_usec += now - start;
        /* The loop's time the build took, on the share of whoever asked
         * for it (a request with parameters of its own must not cost the
         * daemon more than its sender may spend). */
        if (b->has_payer && m->charge)
                m->charge(m->charge_userdata, &b->payer, now - start);
        if (r < 0) {
                log_oom();
                answer_waiters(m, slot, b->key, NULL);
                slice_reset(b);
                slice_next(m, slot);
        } else if (!v->mounts || b->next >= v->mounts->n)
                slice_finish(m, slot, b);
}

static int on_slice(sd_event_source *s, void *userdata) {
        ReplyCache *m = userdata;

        for (unsigned i = 0; i < _CACHE_MAX; i++) {
                unsigned slot = (m->turn + i) % _CACHE_MAX;

                if (m->build[slot].active) {
                        m->turn = slot + 1;
                        slice_run(m, slot);
                        return 0;
                }
        }
        return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

void reply_cache_set_charge(ReplyCache *m, reply_cache_charge_t charge, void *userdata) {
        m->charge = charge;
        m->charge_userdata = userdata;
}

int reply_cache_set_event(ReplyCache *m, sd_event *e) {
        int r = sd_event_add_defer(e, &m->defer, on_slice, m);

        if (r >= 0)
                r = sd_event_source_set_priority(m->defer, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                m->defer = sd_event_source_disable_unref(m->defer);
                return r;
        }
        (void) sd_event_source_set_enabled(m->defer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(m->defer, "reply-build");
        return 0;
}

/* What slot's last build took the loop; for a status slot not built yet,
 * what the dearest other status slot's did (a new history_s costs what
 * the others do); 0 if none was built. */
static uint64_t slot_cost(const ReplyCache *m, unsigned slot) {
        uint64_t cost = 0;

        if (m->cache[slot] || !slot_is_status(slot))
                return m->cache[slot] ? m->cache[slot]->cost_usec : 0;
        for (unsigned i = CACHE_STATUS; i <= CACHE_STATUS_HISTORY_LAST; i++)
                if (m->cache[i])
                        cost = MAX(cost, m->cache[i]->cost_usec);
        return cost;
}

/* Slot's reply for 'key': its text while that is current; else built at
 * once if that is cheap; else built in slices, the text meanwhile served
 * while recent, or the call answered when the build is done (1). */
static int serve_slot(ReplyCache *m, ControlCall *call, unsigned slot, int64_t key, json_object **ret) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct ReplyText *c = m->cache[slot];
        bool same = c && c->key == key;
        Waiter *w;

        if (same && !m->stale[slot] && c->second == uptime_second(m, now))
                *ret = reply_of(c);
        else if (!m->defer || !call || slot_cost(m, slot) <= REPLY_SYNC_MAX_USEC)
                *ret = build_now(m, slot, key);
        else {
                if (!m->build[slot].active && slice_begin(m, slot, key, control_call_peer(call)) < 0) {
                        slice_reset(&m->build[slot]);
                        return -ENOMEM;
                }
                if (same && now - c->built_at <= REPLY_STALE_USEC)
                        *ret = reply_of(c);
                else {
                        w = reallocarray(m->waiters[slot], m->n_waiters[slot] + 1, sizeof *w);
                        if (!w)
                                return -ENOMEM;
                        m->waiters[slot] = w;
                        w[m->n_waiters[slot]++] = (Waiter) { .call = control_call_ref(call), .key = key };
                        return 1;
                }
        }
        return *ret ? 0 : -ENOMEM;
}

/* The history slot for 'key': the one holding it or building it, else an
 * empty one, else the least recently built that is not building. */
static unsigned history_slot(const ReplyCache *m, int64_t key) {
        unsigned best = CACHE_STATUS_HISTORY + (unsigned) (key % STATUS_HISTORY_SLOTS);
        uint64_t oldest = UINT64_MAX;

        for (unsigned i = CACHE_STATUS_HISTORY; i <= CACHE_STATUS_HISTORY_LAST; i++)
                if ((m->cache[i] && m->cache[i]->key == key) || (m->build[i].active && m->build[i].key == key))
                        return i;
        for (unsigned i = CACHE_STATUS_HISTORY; i <= CACHE_STATUS_HISTORY_LAST; i++) {
                if (m->build[i].active)
                        continue;
                if (!m->cache[i])
                        return i;
                if (m->cache[i]->built_at < oldest) {
                        oldest = m->cache[i]->built_at;
                        best = i;
                }
        }
        return best;
}

int reply_cache_status(ReplyCache *m, ControlCall *call, int64_t history_s, json_object **ret) {
        if (history_s > 0)
                return serve_slot(m, call, history_slot(m, history_s), history_s, ret);
        return serve_slot(m, call, CACHE_STATUS, 0, ret);
}

int reply_cache_advice(ReplyCache *m, ControlCall *call, bool privileged, json_object **ret) {
        return serve_slot(m, call, privileged ? CACHE_ADVICE_PRIVILEGED : CACHE_ADVICE, 0, ret);
}
