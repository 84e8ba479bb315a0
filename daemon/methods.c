/* methods.c: the control protocol's methods (see protocol.h for names and
 * the interface descriptions below for their shapes). */
#include "methods.h"

#include <assert.h>
#include <errno.h>
#include <json-c/printbuf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "log.h"
#include "path-util.h"
#include "protocol.h"
#include "readers.h"
#include "recommend.h"
#include "report.h"
#include "status.h"
#include "strv.h"
#include "time-util.h"
#include "varlink.h"

/* The Varlink interface descriptions (docs/io.atimed.varlink and
 * docs/org.varlink.service.varlink, compiled in by make): served by
 * GetInterfaceDescription so that generic Varlink tools can introspect
 * atimed, and the reference of every reply's fields. */
extern const char interface_io_atimed[];
extern const char interface_org_varlink_service[];

/* A method answers at once (returns the whole reply; NULL only on OOM) or,
 * for work done elsewhere, later: call_later returns 1 and answers through
 * the call, or 0 with the reply in *ret. */
typedef json_object *(*method_fn)(Methods *m, const ControlPeer *peer, json_object *params);
typedef int (*method_later_fn)(Methods *m, ControlCall *call, json_object *params, json_object **ret);

struct method {
        const char *name;
        method_fn call;
        method_later_fn call_later;
        const char *const *params; /* accepted parameter names, NULL-terminated */
        bool privileged;           /* changes something: root or privileged_group only */
};

static json_object *invalid_parameter(const char *name) {
        return varlink_error_new_str(ERROR_INVALID_PARAMETER, P_PARAMETER, name);
}

/* NULL if every parameter is one the method accepts; else the error reply. */
static json_object *check_param_names(const struct method *me, json_object *params) {
        if (!params)
                return NULL;
        json_object_object_foreach(params, key, val) {
                bool known = false;

                (void) val;
                for (const char *const *p = me->params; p && *p && !known; p++)
                        known = streq(*p, key);
                if (!known)
                        return invalid_parameter(key);
        }
        return NULL;
}

/* An optional string parameter: 0 if absent (*ret NULL), 1 if present,
 * -EINVAL if of another type. */
static int param_string(json_object *params, const char *name, const char **ret) {
        json_object *v;

        *ret = NULL;
        if (!params || !json_object_object_get_ex(params, name, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        *ret = json_object_get_string(v);
        return 1;
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

/* NoSuchMount; with a reason when a mount is there that atimed leaves out
 * on purpose, so that a client can say why. Answered from the mount table
 * the daemon holds: a failing request reads no file. */
static json_object *no_such_mount(const View *v, const char *target) {
        json_object *params = json_object_new_object();
        const char *type = mount_table_fstype_at(v->mounts, target), *reason = NULL;
        char why[256];

        if (v->config && type) {
                struct mount_filter f;

                config_mount_filter(v->config, &f);
                reason = mount_filter_explain(&f, type, target, why, sizeof why);
        }
        /* Names (targets, sources, paths: any bytes) go out in their
         * protocol form (escape.h): every reply stays valid UTF-8. */
        if (params && (add(params, F_TARGET, varlink_name_new(target)) < 0 ||
                       (reason && add(params, P_REASON, varlink_name_new(reason)) < 0))) {
                json_object_put(params);
                return NULL;
        }
        return params ? varlink_error_new(ERROR_NO_SUCH_MOUNT, params) : NULL;
}

static json_object *string_or_null(const char *s) {
        return s ? varlink_name_new(s) : NULL;
}


/* json-c's NULL is JSON null: add() must not take it for OOM there. */
static int add_nullable(json_object *o, const char *key, json_object *v) {
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

/* A number printed with at most 'decimals' digits after the point (json-c
 * would print every binary digit of 3000.08). */
static json_object *rounded(double v, int decimals) {
        return report_json_rounded(v, decimals);
}

static json_object *method_get_info(Methods *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *ifs = json_object_new_array();

        if (!p || !ifs)
                return NULL;
        if (json_object_array_add(ifs, json_object_new_string(VARLINK_SERVICE_INTERFACE)) < 0 ||
            json_object_array_add(ifs, json_object_new_string(ATIMED_INTERFACE)) < 0)
                return NULL;
        if (add(p, F_VENDOR, json_object_new_string(PACKAGE_NAME)) < 0 ||
            add(p, F_PRODUCT, json_object_new_string(PACKAGE_NAME)) < 0 ||
            add(p, F_VERSION, json_object_new_string(PACKAGE_VERSION)) < 0 ||
            add(p, F_URL, json_object_new_string(PACKAGE_URL)) < 0 || add(p, F_INTERFACES, TAKE_PTR(ifs)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

const char *methods_interface_description(const char *interface) {
        if (streq(interface, VARLINK_SERVICE_INTERFACE))
                return interface_org_varlink_service;
        if (streq(interface, ATIMED_INTERFACE))
                return interface_io_atimed;
        return NULL;
}

static json_object *method_get_interface_description(Methods *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = NULL;
        const char *iface, *desc;

        if (param_string(params, P_INTERFACE, &iface) <= 0)
                return invalid_parameter(P_INTERFACE);
        desc = methods_interface_description(iface);
        if (!desc)
                return varlink_error_new_str(ERROR_INTERFACE_NOT_FOUND, P_INTERFACE, iface);
        p = json_object_new_object();
        if (!p || add(p, F_DESCRIPTION, json_object_new_string(desc)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

/* An optional integer parameter: 0 if absent, 1 if present, -EINVAL if of
 * another type or outside [lo, hi]. */
static int param_int(json_object *params, const char *name, int64_t lo, int64_t hi, int64_t *ret) {
        json_object *v;

        if (!params || !json_object_object_get_ex(params, name, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        errno = 0;
        *ret = json_object_get_int64(v);
        if (errno == ERANGE || *ret < lo || *ret > hi)
                return -EINVAL;
        return 1;
}

/* The history of the tracked mount with id 'mount_id' (> 0; an
 * over-mounted one shares its target with another), else of the mount at
 * target. */
static const MountHistory *history_of_mount(const View *v, int mount_id, const char *target) {
        const TrackedMount *tm = mount_id > 0 ? tracker_find(v->tracker, mount_id) : NULL;
        const MountEntry *e = tm ? NULL : mount_table_find_target(v->mounts, target);
        const MountHistory *best = NULL;

        if (e)
                tm = tracker_find(v->tracker, e->id);
        if (tm) {
                const char *key = tracker_mount_key(tm);

                if (key)
                        return store_find(v->store, key);
                if (mount_id > 0)
                        return NULL; /* not identified yet: no other mount's */
        }
        /* Not mounted now: the last mount that was there, its target
         * compared whole (a mount at ".../x target=/victim" is not at
         * "/victim"). */
        for (size_t i = 0; i < store_n_mounts(v->store); i++) {
                const MountHistory *h = store_get(v->store, i);

                if (store_key_has_target(h->key, target) && (!best || h->last_seen > best->last_seen))
                        best = h;
        }
        return best;
}

static const MountHistory *history_of(const View *v, const char *target) {
        return history_of_mount(v, 0, target);
}

/* What GetStatus's history_s 'seconds' (1 to 86400; 0: none) is served
 * as: 60 points of the finest ring that reaches so far (its resolution
 * times 60, 86400 at most), or past every ring's 60 points (rings of
 * atimed.conf finer than the default), the last ring's 60. So any
 * history_s is one of a few (3600, 36000 and 86400 with the default
 * rings), each a reply kept: a flood of history_s, each different, is
 * served from them, not built afresh for each; and a mount's history in
 * the reply is 60 values at most. */
static int64_t history_span(const View *v, int64_t seconds) {
        const struct config_rings *g = v->config ? &v->config->rings : NULL;
        unsigned r = 0;

        if (seconds <= 0 || !g || g->n == 0)
                return seconds;
        while (r + 1 < g->n && (int64_t) g->spec[r].resolution * 60 < seconds)
                r++;
        return MIN((int64_t) g->spec[r].resolution * 60, 86400);
}

/* About 60 values over the last 'seconds', from the finest ring whose
 * points are at least seconds/60 long: enough for a sparkline, small enough
 * for thousands of mounts. */
static json_object *recent_history(const MountHistory *h, int64_t seconds) {
        _cleanup_json_ json_object *a = json_object_new_array();
        unsigned r = 0;
        uint32_t res;
        int64_t newest, from;

        if (!a)
                return NULL;
        if (!h)
                return TAKE_PTR(a);
        while (r + 1 < h->n_rings && (int64_t) h->rings[r].spec.resolution * 60 < seconds)
                r++;
        if (h->rings[r].count == 0)
                return TAKE_PTR(a);
        res = h->rings[r].spec.resolution;
        newest = h->rings[r].head_t;
        from = newest - (MAX(seconds / res, 1) - 1) * (int64_t) res;
        for (int64_t t = from; t <= newest; t += res) {
                const struct stats_point *p = history_point(h, r, t);

                if (json_object_array_add(a, p && p->n_act ? rounded(p->per_min, 2) : NULL) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

/* A JSON value held as its text, serialized as is. */
static int emit_text(json_object *o, struct printbuf *pb, int level, int flags) {
        struct printbuf *text = json_object_get_userdata(o);

        return printbuf_memappend(pb, text->buf, text->bpos) < 0 ? -1 : 0;
}

static void text_delete(json_object *o, void *userdata) {
        printbuf_free(userdata);
}

static json_object *json_text_new(struct printbuf *text) {
        json_object *o = json_object_new_object();

        if (!o) {
                printbuf_free(text);
                return NULL;
        }
        json_object_set_serializer(o, emit_text, text, text_delete);
        return o;
}

static void printbuf_freep(struct printbuf **pb) {
        if (*pb)
                printbuf_free(*pb);
}

/* Appends j to the array text in pb as JSON, and frees it: a status of
 * thousands of mounts never holds thousands of json-c trees at once
 * (megabytes that would stay in the heap after it). */
static int append_serialized(struct printbuf *pb, json_object *j) {
        const char *s;
        size_t len;
        int r = -ENOMEM;

        if (!j)
                return -ENOMEM;
        s = json_object_to_json_string_length(j, VARLINK_JSON_FLAGS, &len);
        if (s && len <= INT_MAX && (pb->bpos <= 1 || printbuf_memappend(pb, ",", 1) >= 0) &&
            printbuf_memappend(pb, s, (int) len) >= 0)
                r = 0;
        json_object_put(j);
        return r;
}

/* One mount of the report in GetStatus's form, with its recent history if
 * asked for. */
static json_object *status_mount_to_json(const View *v, const ReportMount *rm, int64_t history_s) {
        json_object *j = report_mount_to_json(rm);

        if (j && history_s > 0 && v->store && add(j, F_HISTORY, recent_history(history_of_mount(v, rm->id, rm->target), history_s)) < 0) {
                json_object_put(j);
                return NULL;
        }
        return j;
}

/* The reply of a status whose mounts are the JSON text 'mounts' ("[" and
 * its elements; consumed), the daemon's figures from 'rep'. */
static json_object *status_reply(const Report *rep, struct printbuf *mounts) {
        _cleanup_json_ json_object *p = json_object_new_object();
        _cleanup_(printbuf_freep) struct printbuf *list = mounts;

        if (!p || printbuf_memappend(list, "]", 1) < 0)
                return NULL;
        if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            add(p, F_VERSION, json_object_new_string(rep->version)) < 0 ||
            add(p, F_HOSTNAME, varlink_name_new(rep->hostname)) < 0 ||
            add(p, F_STARTED_AT, json_object_new_int64(rep->started_at)) < 0 ||
            add(p, F_UPTIME_S, json_object_new_int64(rep->uptime_s)) < 0 ||
            add(p, F_STUCK_THREADS, json_object_new_int64(rep->stuck_threads)) < 0 ||
            add(p, F_ADVICE_CHANGES, json_object_new_int64(rep->advice_changes)) < 0 ||
            add(p, F_MOUNTS, json_text_new(TAKE_PTR(list))) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

/* The status of the mount at target (NULL: of every mount), with
 * history_s of history (0: none), its mounts as JSON text for the wire,
 * written from the same Report as the metrics. */
static json_object *build_status_of(const View *v, const char *target, int64_t history_s) {
        _cleanup_(printbuf_freep) struct printbuf *mounts = printbuf_new();
        _cleanup_(report_freep) Report *rep = NULL;
        int r;

        if (!mounts || printbuf_memappend(mounts, "[", 1) < 0)
                return NULL;
        r = status_report(v, target, false, &rep);
        if (r == -ENOENT)
                return no_such_mount(v, target);
        if (r < 0)
                return NULL;

        for (size_t i = 0; i < rep->n_mounts; i++)
                if (append_serialized(mounts, status_mount_to_json(v, &rep->mounts[i], history_s)) < 0)
                        return NULL;
        return status_reply(rep, TAKE_PTR(mounts));
}

/* GetStatus and GetRecommendations of everything are what monitoring
 * polls, maybe many times a second from several scrapers, and what any
 * user may ask for in a loop: their parameters are serialized once and
 * served as text until methods_changed() says something they show
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
 * (history_span()), one per ring with the default rings, each kept. */
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
        bool changed;        /* methods_changed() came while it ran: its text is born stale */
        int64_t key;
        uint64_t generation; /* the view's when it began: another one starts it over */
        uint64_t started, second, cost_usec;
        size_t next;         /* the next entry of the table */
        struct printbuf *list;
        Report *report;      /* a status's: the daemon's figures and each mount's */
        Recommender *rec;    /* advice's */
        bool has_payer;
        ControlPeer payer;   /* whose call began it: charged its time (methods_set_charge) */
} SliceBuild;

/* A call answered once the build of its slot with 'key' is done. */
typedef struct Waiter {
        ControlCall *call;
        int64_t key;
} Waiter;

struct Methods {
        const View *view;
        struct ReplyText *cache[_CACHE_MAX]; /* NULL: to be built at the next call */
        bool stale[_CACHE_MAX];              /* methods_changed() since it was built */
        SliceBuild build[_CACHE_MAX];
        Waiter *waiters[_CACHE_MAX];
        size_t n_waiters[_CACHE_MAX];
        sd_event_source *defer; /* NULL: every build at once (no loop: tests) */
        unsigned turn;          /* the slot whose build the next slice goes on with */
        methods_charge_t charge;
        void *charge_userdata;
};

static void reply_text_unref(struct ReplyText *c) {
        if (c && --c->refs == 0)
                free(c);
}

int methods_new(const View *view, Methods **ret) {
        Methods *m = calloc(1, sizeof *m);

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

Methods *methods_free(Methods *m) {
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

void methods_changed(Methods *m) {
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
static json_object *keep_reply(Methods *m, unsigned slot, json_object *reply, int64_t key, uint64_t built_at,
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

static uint64_t uptime_second(const Methods *m, uint64_t now) {
        return (now - m->view->started_monotonic) / USEC_PER_SEC;
}

static json_object *build_status_of(const View *v, const char *target, int64_t history_s);
static json_object *build_recommendations(Methods *m, const char *target, bool privileged);
static json_object *recommendation_to_json(const struct recommendation *r, bool privileged);
static json_object *advice_reply(struct printbuf *list);

static bool slot_is_status(unsigned slot) {
        return slot <= CACHE_STATUS_HISTORY_LAST;
}

/* Slot's reply built now, at once, and kept. */
static json_object *build_now(Methods *m, unsigned slot, int64_t key) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        json_object *reply;

        if (slot_is_status(slot))
                reply = build_status_of(m->view, NULL, key);
        else
                reply = build_recommendations(m, NULL, slot == CACHE_ADVICE_PRIVILEGED);
        return keep_reply(m, slot, reply, key, start, uptime_second(m, start), now_usec(CLOCK_MONOTONIC) - start, false);
}

/* Begins slot's build for 'key', its time charged to 'payer' (NULL: no one). */
static int slice_begin(Methods *m, unsigned slot, int64_t key, const ControlPeer *payer) {
        SliceBuild *b = &m->build[slot];
        const View *v = m->view;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        slice_reset(b);
        *b = (SliceBuild) {
                .active = true, .key = key, .generation = v->generation, .started = now, .second = uptime_second(m, now),
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
static int slice_step(Methods *m, unsigned slot, SliceBuild *b, size_t i) {
        const View *v = m->view;
        struct recommendation rec;

        if (slot_is_status(slot)) {
                const MountEntry *e = &v->mounts->entries[i];
                int r = status_report_add(v, b->report, e, tracker_find(v->tracker, e->id), NULL);

                if (r < 0)
                        return r;
                return append_serialized(b->list, status_mount_to_json(v, &b->report->mounts[b->report->n_mounts - 1], b->key));
        }
        if (!recommender_advise(b->rec, i, &rec))
                return 0;
        return append_serialized(b->list, recommendation_to_json(&rec, slot == CACHE_ADVICE_PRIVILEGED));
}

/* Answers the calls waiting for slot's build with 'key': the reply
 * 'reply' (consumed), or if NULL, an internal error. */
static void answer_waiters(Methods *m, unsigned slot, int64_t key, json_object *reply) {
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
static void slice_next(Methods *m, unsigned slot) {
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

static void slice_finish(Methods *m, unsigned slot, SliceBuild *b) {
        json_object *reply = slot_is_status(slot) ? status_reply(b->report, TAKE_PTR(b->list)) : advice_reply(TAKE_PTR(b->list));
        int64_t key = b->key;

        reply = keep_reply(m, slot, reply, key, b->started, b->second, b->cost_usec, b->changed);
        slice_reset(b);
        answer_waiters(m, slot, key, reply);
        slice_next(m, slot);
}

/* Goes on with slot's build for at most REPLY_SLICE_USEC. */
static void slice_run(Methods *m, unsigned slot) {
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
        Methods *m = userdata;

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

void methods_set_charge(Methods *m, methods_charge_t charge, void *userdata) {
        m->charge = charge;
        m->charge_userdata = userdata;
}

int methods_set_event(Methods *m, sd_event *e) {
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

/* Slot's reply for 'key': its text while that is current; else built at
 * once if that is cheap; else built in slices, the text meanwhile served
 * while recent, or the call answered when the build is done (1). */
/* What slot's last build took the loop; for a status slot not built yet,
 * what the dearest other status slot's did (a new history_s costs what
 * the others do); 0 if none was built. */
static uint64_t slot_cost(const Methods *m, unsigned slot) {
        uint64_t cost = 0;

        if (m->cache[slot] || !slot_is_status(slot))
                return m->cache[slot] ? m->cache[slot]->cost_usec : 0;
        for (unsigned i = CACHE_STATUS; i <= CACHE_STATUS_HISTORY_LAST; i++)
                if (m->cache[i])
                        cost = MAX(cost, m->cache[i]->cost_usec);
        return cost;
}

static int serve_slot(Methods *m, ControlCall *call, unsigned slot, int64_t key, json_object **ret) {
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
static unsigned history_slot(const Methods *m, int64_t key) {
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

static int method_get_status(Methods *m, ControlCall *call, json_object *params, json_object **ret) {
        const char *target;
        int64_t history_s = 0;

        if (param_string(params, F_TARGET, &target) < 0)
                *ret = invalid_parameter(F_TARGET);
        else if (param_int(params, P_HISTORY_S, 1, 86400, &history_s) < 0)
                *ret = invalid_parameter(P_HISTORY_S);
        else if (target)
                /* One mount: cheap by construction. */
                *ret = build_status_of(m->view, target, history_span(m->view, history_s));
        else if (history_s > 0) {
                history_s = history_span(m->view, history_s);
                return serve_slot(m, call, history_slot(m, history_s), history_s, ret);
        } else
                return serve_slot(m, call, CACHE_STATUS, 0, ret);
        return *ret ? 0 : -ENOMEM;
}

#define HISTORY_MAX_POINTS 10000

static json_object *point_to_json(int64_t t, const struct stats_point *p) {
        _cleanup_json_ json_object *o = json_object_new_object();
        bool up = p && p->n > 0, act = p && p->n_act > 0, dev = p && p->n_dev > 0, un = p && p->n_unshared > 0;
        json_object *ci = NULL;

        if (!o)
                return NULL;
        if (act) {
                ci = json_object_new_array();
                if (!ci || json_object_array_add(ci, rounded(p->lo, 2)) < 0 || json_object_array_add(ci, rounded(p->hi, 2)) < 0) {
                        json_object_put(ci);
                        return NULL;
                }
        }
        if (add(o, F_T, json_object_new_int64(t)) < 0 ||
            add(o, F_SAMPLES, json_object_new_int(p ? MAX(p->n, MAX(p->n_act, p->n_dev)) : 0)) < 0 ||
            add_nullable(o, F_ATIME_UPDATES_PER_MIN, act ? rounded(p->per_min, 2) : NULL) < 0 ||
            add_nullable(o, F_CI95, ci) < 0 ||
            add_nullable(o, F_WRITE_IOPS, dev ? rounded(p->write_iops, 2) : NULL) < 0 ||
            add_nullable(o, F_WRITE_KIB_PER_S, dev ? rounded(p->write_kib, 2) : NULL) < 0 ||
            add_nullable(o, F_ATIME, up ? string_or_null(atime_mode_to_string(p->atime)) : NULL) < 0 ||
            add_nullable(o, F_NODIRATIME, up ? json_object_new_boolean(p->flags & STATS_NODIRATIME) : NULL) < 0 ||
            add_nullable(o, F_LAZYTIME, up ? json_object_new_boolean(p->flags & STATS_LAZYTIME) : NULL) < 0 ||
            add_nullable(o, F_READ_ONLY, up ? json_object_new_boolean(p->flags & STATS_READ_ONLY) : NULL) < 0 ||
            add_nullable(o, F_PROBE,
                         up && (p->flags & STATS_PROBE_VERIFIED) ? string_or_null(atime_mode_to_string(p->probe)) : NULL) < 0 ||
            add_nullable(o, F_STALLED, up ? json_object_new_boolean(p->flags & STATS_STALLED) : NULL) < 0 ||
            add_nullable(o, F_POLICY_CHANGED, up ? json_object_new_boolean(p->flags & STATS_POLICY_CHANGED) : NULL) < 0 ||
            add_nullable(o, F_UNSHARED_BYTES_PER_DAY, un ? rounded(p->unshared_per_day, 0) : NULL) < 0 ||
            add_nullable(o, F_UNSHARED_LO, un ? rounded(p->unshared_lo, 0) : NULL) < 0 ||
            add_nullable(o, F_UNSHARED_HI, un ? rounded(p->unshared_hi, 0) : NULL) < 0 ||
            add_nullable(o, F_UNSHARED_SOURCE,
                         un ? json_object_new_string(btrfs_figure_source_to_string(
                                      p->unshared_modelled ? BTRFS_FIGURE_MODELLED : BTRFS_FIGURE_MEASURED))
                            : NULL) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* A tracked mount with no history yet (just mounted, or the daemon just
 * started and the mount's first samples are still settling): an empty
 * history, saying why, rather than "no such mount". */
static json_object *no_history_yet(const View *v, const char *target) {
        _cleanup_json_ json_object *p = json_object_new_object();
        const MountEntry *e = mount_table_find_target(v->mounts, target);
        const TrackedMount *tm = e ? tracker_find(v->tracker, e->id) : NULL;
        const char *key = tm ? tracker_mount_key(tm) : NULL;
        int64_t now = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC);
        const char *why;

        if (!tm)
                return no_such_mount(v, target);
        if (!p)
                return NULL;
        if (!v->store)
                why = "no history is kept";
        else if (!key)
                why = "its filesystem is still being identified; history starts once it is";
        else if (view_history_refused(v, tm->id))
                why = "its history cannot be stored (see the log)";
        else
                why = "a mount's first points are recorded once it has been seen for two sampler intervals";
        if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            add(p, F_TARGET, varlink_name_new(target)) < 0 || add(p, F_KEY, varlink_name_new(key ? key : "")) < 0 ||
            add(p, F_RESOLUTION_S, json_object_new_int64(v->config->rings.spec[0].resolution)) < 0 ||
            add(p, F_SINCE, json_object_new_int64(now)) < 0 || add(p, F_UNTIL, json_object_new_int64(now)) < 0 ||
            add(p, F_TRUNCATED, json_object_new_boolean(false)) < 0 || add(p, F_POINTS, json_object_new_array()) < 0 ||
            add(p, F_REASON, json_object_new_string(why)) < 0 || add_nullable(p, F_POLICY_CHANGE, NULL) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

/* The points of ring 'ring' from the bucket holding 'since' (or the oldest
 * held) to the newest, HISTORY_MAX_POINTS at most (*ret_truncated: the
 * oldest left out), into 'points'; the first and last bucket's times. */
static int history_points(const MountHistory *h, unsigned ring, int64_t since, json_object *points, int64_t *ret_from,
                          int64_t *ret_to, bool *ret_truncated) {
        int64_t res = h->rings[ring].spec.resolution, from, to;

        assert(ring < h->n_rings);
        assert(res > 0);
        to = h->rings[ring].count ? h->rings[ring].head_t : since - since % res;
        from = MAX(since - (since % res + res) % res, history_oldest(h, ring) == INT64_MAX ? to : history_oldest(h, ring));
        *ret_truncated = (to - from) / res + 1 > HISTORY_MAX_POINTS;
        if (*ret_truncated)
                from = to - (HISTORY_MAX_POINTS - 1) * res;
        for (int64_t t = from; h->rings[ring].count && t <= to; t += res) {
                json_object *pt = point_to_json(t, history_point(h, ring, t));

                if (!pt || json_object_array_add(points, pt) < 0) {
                        json_object_put(pt);
                        return -ENOMEM;
                }
        }
        *ret_from = from;
        *ret_to = to;
        return 0;
}

/* The history's last change of policy and what it saved; JSON null if
 * none is recorded. */
static json_object *history_verdict(const View *v, const MountHistory *h, int64_t now) {
        struct verdict vd;

        if (h->change.t == 0 ||
            verdict_judge(h, &h->change, now, VERDICT_SETTLE_INTERVALS * (int64_t) (v->config->sampler_interval_usec / USEC_PER_SEC), &vd) < 0)
                return NULL;
        return verdict_to_json(&h->change, &vd);
}

/* On a btrfs mount whose subvolume snapshots share, or whose reads reach
 * snapshotted subvolumes the sample does not cover: the bytes atime
 * un-shared, as a mean over every interval with a figure since atimed
 * started (the points carry each bucket's); NULL elsewhere. */
static json_object *history_btrfs(const View *v, const char *target) {
        const MountEntry *e = mount_table_find_target(v->mounts, target);
        const TrackedMount *tm = e ? tracker_find(v->tracker, e->id) : NULL;
        _cleanup_json_ json_object *o = NULL;
        struct btrfs_status b;

        if (!tm || !tracker_mount_btrfs(tm, &b) || !btrfs_status_shows_bytes(&b) || !(b.mean_seconds > 0))
                return NULL;
        o = json_object_new_object();
        if (!o || add(o, F_UNSHARED_BYTES_PER_DAY, rounded(b.mean_per_day, 0)) < 0 ||
            add(o, F_UNSHARED_LO, rounded(b.mean_lo, 0)) < 0 || add(o, F_UNSHARED_HI, rounded(b.mean_hi, 0)) < 0 ||
            add(o, F_RATE_SOURCE, json_object_new_string(btrfs_figure_source_to_string(b.mean_source))) < 0 ||
            add(o, F_OBSERVED_S, rounded(b.mean_seconds, 3)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *method_get_history(Methods *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *points = json_object_new_array();
        const MountHistory *h;
        const char *target;
        int64_t now = (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC), since = now - 6 * 3600, res = 0, from, to;
        unsigned ring = 0;
        bool truncated = false;

        if (!p || !points)
                return NULL;
        if (param_string(params, F_TARGET, &target) <= 0)
                return invalid_parameter(F_TARGET);
        if (param_int(params, P_SINCE, INT32_MIN, INT64_MAX / 2, &since) < 0)
                return invalid_parameter(P_SINCE);
        if (param_int(params, P_RESOLUTION, 1, UINT32_MAX, &res) < 0)
                return invalid_parameter(P_RESOLUTION);
        h = m->view->store ? history_of(m->view, target) : NULL;
        if (!h)
                return no_history_yet(m->view, target);
        if (res > 0) {
                for (ring = 0; ring < h->n_rings && h->rings[ring].spec.resolution != res; ring++)
                        ;
                if (ring == h->n_rings)
                        return invalid_parameter(P_RESOLUTION); /* not a resolution kept */
        } else
                ring = history_pick_ring(h, since);
        res = h->rings[ring].spec.resolution;

        if (history_points(h, ring, since, points, &from, &to, &truncated) < 0)
                return NULL;
        if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            add(p, F_TARGET, varlink_name_new(target)) < 0 || add(p, F_KEY, varlink_name_new(h->key)) < 0 ||
            add(p, F_RESOLUTION_S, json_object_new_int64(res)) < 0 || add(p, F_SINCE, json_object_new_int64(from)) < 0 ||
            add(p, F_UNTIL, json_object_new_int64(to + res)) < 0 ||
            add(p, F_TRUNCATED, json_object_new_boolean(truncated)) < 0 || add(p, F_POINTS, TAKE_PTR(points)) < 0 ||
            add_nullable(p, F_POLICY_CHANGE, history_verdict(m->view, h, now)) < 0 ||
            add_nullable(p, F_BTRFS, history_btrfs(m->view, target)) < 0)
                return NULL;
        {
                /* The resolutions kept, for a client to name the valid ones. */
                json_object *rs = json_object_new_array();

                if (add(p, F_RESOLUTIONS_S, rs) < 0)
                        return NULL;
                for (unsigned i = 0; i < h->n_rings; i++)
                        if (json_object_array_add(rs, json_object_new_int64(h->rings[i].spec.resolution)) < 0)
                                return NULL;
        }
        return varlink_reply_new(TAKE_PTR(p));
}

/* nodiratime only where it says something: noatime implies it. */
static json_object *policy_to_json(AtimeMode atime, bool lazytime, bool nodiratime) {
        _cleanup_json_ json_object *o = json_object_new_object();
        char opts[64];

        nodiratime = nodiratime && atime != ATIME_NOATIME;
        snprintf(opts, sizeof opts, "%s%s%s", atime_mode_to_string(atime), nodiratime ? ",nodiratime" : "",
                 lazytime ? ",lazytime" : "");
        if (!o || add(o, F_ATIME, json_object_new_string(atime_mode_to_string(atime))) < 0 ||
            add(o, F_LAZYTIME, json_object_new_boolean(lazytime)) < 0 ||
            add(o, F_NODIRATIME, json_object_new_boolean(nodiratime)) < 0 || add(o, F_OPTIONS, json_object_new_string(opts)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static bool peer_privileged(const View *v, const ControlPeer *peer);

/* A Consumer; one found in a file only root can read shows its path to
 * privileged callers only ('privileged'). */
static json_object *consumer_to_json(const struct consumer *c, bool privileged) {
        _cleanup_json_ json_object *x = json_object_new_object();

        if (!x || add(x, F_KIND, json_object_new_string(consumer_kind_to_string(c->kind))) < 0 ||
            add(x, F_NEED, json_object_new_string(atime_need_to_string(c->need))) < 0 ||
            add(x, F_PATH, c->private && !privileged ? json_object_new_string("") : varlink_name_new(c->path)) < 0 ||
            add(x, F_WHY, varlink_name_new(c->why)) < 0 || add(x, F_SOURCE, varlink_name_new(c->source)) < 0)
                return NULL;
        return TAKE_PTR(x);
}

/* An array of the consumers in l; NULL on OOM. */
static json_object *consumers_to_json(const struct consumer *const *l, size_t n, bool privileged) {
        _cleanup_json_ json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                json_object *x = consumer_to_json(l[i], privileged);

                if (!x || json_object_array_add(a, x) < 0) {
                        json_object_put(x);
                        return NULL;
                }
        }
        return TAKE_PTR(a);
}

static json_object *recommendation_to_json(const struct recommendation *r, bool privileged) {
        _cleanup_json_ json_object *o = json_object_new_object(), *reasons = json_object_new_array(),
                                   *consumers = consumers_to_json(r->consumers, r->n_consumers, privileged),
                                   *saving = json_object_new_object(), *ev = json_object_new_object();
        const struct advice *a = &r->advice;

        if (!o || !reasons || !consumers || !saving || !ev)
                return NULL;
        for (unsigned i = 0; i < a->n_reasons; i++)
                if (json_object_array_add(reasons, varlink_name_new(a->reasons[i])) < 0)
                        return NULL;
        if (add(saving, F_ATIME_UPDATES_PER_MIN, rounded(a->saving_updates_per_min, 1)) < 0 ||
            add(saving, F_ATIME_WRITES_PER_MIN, rounded(a->saving_updates_per_min, 1)) < 0 ||
            add(saving, F_CPU_US_PER_S, rounded(a->saving_cpu_us_per_s, 2)) < 0 ||
            add(saving, F_WRITE_KIB_PER_S, rounded(a->saving_kib_per_s, 2)) < 0 ||
            add(saving, F_METADATA_BYTES_PER_DAY, rounded(a->saving_bytes_per_day, 0)) < 0)
                return NULL;
        if (add_nullable(ev, F_ATIME_UPDATES_PER_MIN, r->in.have_activity ? rounded(r->in.per_min, 2) : NULL) < 0 ||
            add_nullable(ev, F_LO_PER_MIN, r->in.have_activity ? rounded(r->in.lo_per_min, 2) : NULL) < 0 ||
            add_nullable(ev, F_HI_PER_MIN, r->in.have_activity ? rounded(r->in.hi_per_min, 2) : NULL) < 0 ||
            add_nullable(ev, F_PEAK_PER_MIN, r->in.have_activity ? rounded(r->in.peak_per_min, 2) : NULL) < 0 ||
            add(ev, F_WINDOW_S, rounded(r->window_s, 0)) < 0 || add(ev, F_OBSERVED_S, rounded(r->in.observed_s, 0)) < 0 ||
            add(ev, F_POPULATION, json_object_new_int64((int64_t) r->in.population)) < 0)
                return NULL;
        if (add(o, F_TARGET, varlink_name_new(r->in.target)) < 0 ||
            add(o, F_FSTYPE, varlink_name_new(r->in.fstype)) < 0 ||
            add(o, F_CURRENT, policy_to_json(r->in.policy.atime, r->in.policy.lazytime, r->in.policy.nodiratime)) < 0 ||
            add(o, F_RECOMMENDED, policy_to_json(a->atime, a->lazytime, a->nodiratime)) < 0 ||
            add(o, F_ACTION, json_object_new_string(a->action)) < 0 || add(o, F_CHANGE, json_object_new_boolean(a->change)) < 0 ||
            add(o, F_REASONS, TAKE_PTR(reasons)) < 0 || add(o, F_CONSUMERS, TAKE_PTR(consumers)) < 0 ||
            add(o, F_SAVING, TAKE_PTR(saving)) < 0 ||
            add(o, F_CONFIDENCE, json_object_new_string(advice_confidence_to_string(a->confidence))) < 0 ||
            add(o, F_BASIS, json_object_new_string(advice_basis_to_string(a->basis))) < 0 ||
            add(o, F_EVIDENCE, TAKE_PTR(ev)) < 0 ||
            (r->change.t > 0 ? add(o, F_POLICY_CHANGE, verdict_to_json(&r->change, &r->verdict))
                             : add_nullable(o, F_POLICY_CHANGE, NULL)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* The reply of a list of recommendations, the JSON text 'list' ("[" and
 * its elements; consumed). */
static json_object *advice_reply(struct printbuf *list) {
        _cleanup_json_ json_object *p = json_object_new_object();
        _cleanup_(printbuf_freep) struct printbuf *l = list;

        if (!p || printbuf_memappend(l, "]", 1) < 0)
                return NULL;
        if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            add(p, F_RECOMMENDATIONS, json_text_new(TAKE_PTR(l))) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

/* The list as JSON text, one recommendation serialized at a time (as the
 * status's mounts are). The advice for the mount at target, or for all
 * (NULL). */
static json_object *build_recommendations(Methods *m, const char *target, bool privileged) {
        _cleanup_(printbuf_freep) struct printbuf *list = printbuf_new();
        _cleanup_free_ struct recommendation *v = NULL;
        size_t n = 0;
        int r;

        if (!list || printbuf_memappend(list, "[", 1) < 0)
                return NULL;
        r = recommend(m->view, target, &v, &n);
        if (r == -ENOENT)
                return no_such_mount(m->view, target);
        if (r < 0)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (append_serialized(list, recommendation_to_json(&v[i], privileged)) < 0)
                        return NULL;
        return advice_reply(TAKE_PTR(list));
}

static int method_get_recommendations(Methods *m, ControlCall *call, json_object *params, json_object **ret) {
        const ControlPeer *peer = control_call_peer(call);
        bool privileged = peer_privileged(m->view, peer);
        const char *target;

        if (param_string(params, F_TARGET, &target) < 0)
                *ret = invalid_parameter(F_TARGET);
        else if (target)
                *ret = build_recommendations(m, target, privileged);
        else
                return serve_slot(m, call, privileged ? CACHE_ADVICE_PRIVILEGED : CACHE_ADVICE, 0, ret);
        return *ret ? 0 : -ENOMEM;
}

/* Who reads atime at target, whatever atimed makes of the mount there
 * (readers.h): what the guards of atimectl remount and fstab --set check a
 * policy against. */
static json_object *method_get_consumers(Methods *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *list = NULL;
        _cleanup_free_ const struct consumer **l = NULL;
        _cleanup_free_ char *target = NULL;
        const char *t;
        size_t n = 0;

        if (param_string(params, F_TARGET, &t) <= 0 || t[0] != '/')
                return invalid_parameter(F_TARGET);
        target = strdup(t);
        if (!p || !target)
                return NULL;
        path_simplify(target);
        if (readers_at(m->view, target, &l, &n) < 0 ||
            !(list = consumers_to_json(l, n, peer_privileged(m->view, peer))))
                return NULL;
        if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            add(p, F_TARGET, varlink_name_new(target)) < 0 || add(p, F_CONSUMERS, TAKE_PTR(list)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

static json_object *probe_to_json(const struct probe_result *r, const MountEntry *e) {
        json_object *j, *reason;
        ReportProbe p;

        status_probe(r, e, &p);
        j = report_probe_to_json(&p);
        /* The reason may quote the mount's path (any bytes): in its
         * protocol form, as GetStatus gives it, so the reply stays valid
         * UTF-8. */
        if (j && p.reason) {
                reason = varlink_name_new(p.reason);
                if (!reason || json_object_object_add(j, F_REASON, reason) < 0) {
                        json_object_put(reason);
                        json_object_put(j);
                        return NULL;
                }
        }
        return j;
}

struct probe_request {
        const View *view; /* the manager's: it outlives the tracker's answers */
        ControlCall *call;
        char *target;
};

static void probe_answered(const TrackedMount *tm, const struct probe_result *r, void *userdata) {
        struct probe_request *req = userdata;
        _cleanup_json_ json_object *p = json_object_new_object();
        json_object *reply = NULL;

        if (!tm)
                reply = no_such_mount(req->view, req->target);
        else if (p && add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) >= 0 &&
                 add(p, F_TARGET, varlink_name_new(req->target)) >= 0 &&
                 add(p, F_PROBE, probe_to_json(r, tm->entry)) >= 0)
                reply = varlink_reply_new(TAKE_PTR(p));
        if (!reply)
                reply = varlink_error_new_str(ERROR_INTERNAL, P_REASON, "out of memory");
        control_call_reply(req->call, reply);
        control_call_unref(req->call);
        free(req->target);
        free(req);
}

static int method_probe(Methods *m, ControlCall *call, json_object *params, json_object **ret) {
        const MountEntry *e;
        struct probe_request *req;
        const char *target;
        int r;

        if (param_string(params, F_TARGET, &target) <= 0) {
                *ret = invalid_parameter(F_TARGET);
                return 0;
        }
        e = mount_table_find_target(m->view->mounts, target);
        if (!e) {
                *ret = no_such_mount(m->view, target);
                return 0;
        }
        req = calloc(1, sizeof *req);
        if (!req || !(req->target = strdup(target))) {
                free(req);
                return -ENOMEM;
        }
        req->view = m->view;
        req->call = control_call_ref(call);
        r = view_probe(m->view, e->id, probe_answered, req);
        if (r < 0) {
                control_call_unref(req->call);
                free(req->target);
                free(req);
                *ret = varlink_error_new_str(ERROR_INTERNAL, P_REASON, strerror(-r));
                return 0;
        }
        return 1;
}

/* The configuration read again (off the loop) and put in force before the
 * reply, or the errors that kept the running one. */
struct reload_request {
        const View *view;
        ControlCall *call;
};

static json_object *reload_reply(const View *v, int r, char *const *errors) {
        _cleanup_json_ json_object *p = json_object_new_object(), *list = NULL;

        if (!p)
                return NULL;
        if (r >= 0) {
                if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
                    (v->config->path ? add(p, F_CONFIG, varlink_name_new(v->config->path)) : add_nullable(p, F_CONFIG, NULL)) <
                            0)
                        return NULL;
                return varlink_reply_new(TAKE_PTR(p));
        }
        list = json_object_new_array();
        if (!list)
                return NULL;
        STRV_FOREACH(e, errors)
                if (json_object_array_add(list, varlink_name_new(*e)) < 0)
                        return NULL;
        if (add(p, P_ERRORS, TAKE_PTR(list)) < 0)
                return NULL;
        return varlink_error_new(ERROR_INVALID_CONFIGURATION, TAKE_PTR(p));
}

static void reload_answered(int r, char **errors, void *userdata) {
        struct reload_request *req = userdata;
        json_object *reply = r == -ECANCELED ? varlink_error_new_str(ERROR_INTERNAL, P_REASON, "atimed is stopping")
                                             : reload_reply(req->view, r, errors);

        strv_free(errors);
        if (!reply)
                reply = varlink_error_new_str(ERROR_INTERNAL, P_REASON, "out of memory");
        control_call_reply(req->call, reply);
        control_call_unref(req->call);
        free(req);
}

static int method_reload(Methods *m, ControlCall *call, json_object *params, json_object **ret) {
        struct reload_request *req = calloc(1, sizeof *req);
        int r;

        if (!req)
                return -ENOMEM;
        req->view = m->view;
        req->call = control_call_ref(call);
        r = view_reload(m->view, reload_answered, req);
        if (r < 0) {
                control_call_unref(req->call);
                free(req);
                *ret = varlink_error_new_str(ERROR_INTERNAL, P_REASON, strerror(-r));
                return 0;
        }
        return 1;
}

static const char *const no_params[] = { NULL };
static const char *const interface_params[] = { P_INTERFACE, NULL };
static const char *const status_params[] = { F_TARGET, P_HISTORY_S, NULL };
static const char *const history_params[] = { F_TARGET, P_SINCE, P_RESOLUTION, NULL };
static const char *const recommendations_params[] = { F_TARGET, NULL };
static const char *const probe_params[] = { F_TARGET, NULL };
static const char *const consumers_params[] = { F_TARGET, NULL };

static const struct method methods[] = {
        { METHOD_GET_INFO, method_get_info, NULL, no_params, false },
        { METHOD_GET_INTERFACE_DESCRIPTION, method_get_interface_description, NULL, interface_params, false },
        { METHOD_GET_STATUS, NULL, method_get_status, status_params, false },
        { METHOD_GET_HISTORY, method_get_history, NULL, history_params, false },
        { METHOD_GET_RECOMMENDATIONS, NULL, method_get_recommendations, recommendations_params, false },
        { METHOD_GET_CONSUMERS, method_get_consumers, NULL, consumers_params, false },
        { METHOD_PROBE, NULL, method_probe, probe_params, true },
        { METHOD_RELOAD, NULL, method_reload, no_params, true },
};

const char *const *methods_list(void) {
        static const char *names[ELEMENTSOF(methods) + 1];

        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                names[i] = methods[i].name;
        return names;
}

static bool peer_privileged(const View *v, const ControlPeer *peer) {
        return peer->uid == 0 || (v->privileged_gid != (gid_t) -1 && control_peer_in_group(peer, v->privileged_gid));
}

/* A target comes in its protocol form (escape.h); the methods compare
 * it with the names as the kernel gives them. */
static int decode_target(json_object *params) {
        _cleanup_free_ char *raw = NULL;
        json_object *v;

        if (!params || !json_object_object_get_ex(params, F_TARGET, &v) || !json_object_is_type(v, json_type_string))
                return 0;
        if (name_unescape(json_object_get_string(v), &raw) < 0)
                return -ENOMEM;
        return json_object_set_string(v, raw) ? 0 : -ENOMEM;
}

int methods_dispatch(void *userdata, ControlCall *call, const char *method, json_object *params, json_object **ret) {
        Methods *m = userdata;
        const ControlPeer *peer = control_call_peer(call);
        const char *dot;
        json_object *bad;
        bool iface_known = false;

        *ret = NULL;
        for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
                if (!streq(methods[i].name, method))
                        continue;
                bad = check_param_names(&methods[i], params);
                if (bad) {
                        *ret = bad;
                        return 0;
                }
                if (decode_target(params) < 0)
                        return -ENOMEM;
                if (methods[i].privileged && !peer_privileged(m->view, peer)) {
                        /* Any user can ask as fast as it likes. */
                        static LogRatelimit refused = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);

                        log_ratelimit_full(&refused, LOG_INFO, "Refused %s to uid %u (pid " PID_FMT "): not privileged",
                                           method, (unsigned) peer->uid, peer->pid);
                        *ret = varlink_error_new(ERROR_PERMISSION_DENIED, NULL);
                        return *ret ? 0 : -ENOMEM;
                }
                if (methods[i].call_later)
                        return methods[i].call_later(m, call, params, ret);
                *ret = methods[i].call(m, peer, params);
                return *ret ? 0 : -ENOMEM;
        }

        /* Varlink tells an unknown interface from an unknown method. */
        dot = strrchr(method, '.');
        if (dot) {
                size_t l = (size_t) (dot - method);

                iface_known = (l == strlen(ATIMED_INTERFACE) && strncmp(method, ATIMED_INTERFACE, l) == 0) ||
                              (l == strlen(VARLINK_SERVICE_INTERFACE) &&
                               strncmp(method, VARLINK_SERVICE_INTERFACE, l) == 0);
        }
        if (!iface_known && dot) {
                _cleanup_free_ char *iface = strndup(method, (size_t) (dot - method));
                *ret = iface ? varlink_error_new_str(ERROR_INTERFACE_NOT_FOUND, P_INTERFACE, iface) : NULL;
        } else
                *ret = varlink_error_new_str(ERROR_METHOD_NOT_FOUND, P_METHOD, method);
        return *ret ? 0 : -ENOMEM;
}
