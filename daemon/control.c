/* control.c: control socket server (see control.h).
 *
 * Each client is served one request at a time: while a reply is unsent we
 * stop reading from that client, so a client that never reads holds at most
 * one reply and one request of memory, and never delays anyone else. The
 * replies a user's clients hold unsent together are bounded by a budget
 * (limits.user_reply_bytes, and reply_bytes for all users but the
 * privileged): past it a request gets ReplyBudgetExceeded instead. */
#include "control.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "peer.h"
#include "protocol.h"
#include "share.h"
#include "time-util.h"
#include "varlink.h"

#define ACCEPT_RETRY_USEC (250 * USEC_PER_MSEC)
#define READ_CHUNK 65536
/* Refused connections logged: at most this many lines per interval. */
#define REFUSED_LOG_INTERVAL (10 * USEC_PER_SEC)
#define REFUSED_LOG_BURST 5

typedef struct Client Client;

/* The least a request costs, however quick: a flood of trivial ones still
 * spends the budget. */
#define REQUEST_MIN_USEC 50

/* A message serialized, shared by the connections it goes to: a reply
 * that answers many calls at once (a build in slices that several were
 * waiting for) is serialized once, not once per caller. */
typedef struct Text {
        unsigned refs;
        size_t len;
        char data[];
} Text;

struct ControlServer {
        sd_event *event;
        int listen_fd;
        sd_event_source *listen_source;
        sd_event_source *accept_retry;
        struct control_limits limits;
        control_dispatch_t dispatch;
        void *userdata;
        Client *clients;
        unsigned n_clients;
        unsigned n_unprivileged;
        LogRatelimit refused_log;
        UserShares shares;
        LogRatelimit throttled_log;
        LogRatelimit budget_log;
        PeerUsers *peers;
        /* The last message serialized and its text, kept until the turn
         * of the loop is over ('text_drop'). */
        json_object *text_msg;
        Text *text;
        sd_event_source *text_drop;
        /* Root's and the privileged group's requests, since start. */
        uint64_t privileged_usec, privileged_requests;
};

struct ControlCall {
        unsigned n_ref;
        Client *client; /* NULL once the client is gone */
        ControlPeer peer;
        bool oneway;
        bool dispatching;       /* inside the dispatcher */
        bool detached;          /* no connection: keep the answer */
        json_object *early;     /* a deferred answer given before the dispatcher returned */
};

struct Client {
        ControlServer *server;
        Client *prev, *next;
        int fd;
        ControlPeer peer;
        bool privileged;   /* counts against the reserve, not the user limit */
        sd_event_source *io;
        sd_event_source *idle;
        sd_event_source *throttle; /* its user's budget spent: resumes then */
        char *in;
        size_t in_len, in_cap;
        Text *out;
        size_t out_off;
        size_t refused_len; /* the last reply refused for the reply budget, until one is sent */
        bool eof;          /* the peer will send nothing more */
        bool close_after;  /* close once the output is flushed */
        ControlCall *pending; /* a request answered later */
};

ControlCall *control_call_ref(ControlCall *c) {
        if (c)
                c->n_ref++;
        return c;
}

ControlCall *control_call_unref(ControlCall *c) {
        if (c && --c->n_ref == 0) {
                json_object_put(c->early);
                free(c);
        }
        return NULL;
}

const ControlPeer *control_call_peer(const ControlCall *c) {
        return &c->peer;
}

bool control_call_gone(const ControlCall *c) {
        return !c->client && !c->detached;
}

int control_call_new_detached(const ControlPeer *peer, ControlCall **ret) {
        ControlCall *c = calloc(1, sizeof *c);

        if (!c)
                return -ENOMEM;
        *c = (ControlCall) { .n_ref = 1, .peer = *peer, .detached = true };
        *ret = c;
        return 0;
}

json_object *control_call_steal_reply(ControlCall *c) {
        return TAKE_PTR(c->early);
}

bool control_peer_in_group(const ControlPeer *p, gid_t gid) {
        if (p->gid == gid)
                return true;
        for (unsigned i = 0; i < p->n_groups; i++)
                if (p->groups[i] == gid)
                        return true;
        return false;
}

static Text *text_unref(Text *t) {
        if (t && --t->refs == 0)
                free(t);
        return NULL;
}

static void client_free(Client *c) {
        ControlServer *s;

        if (!c)
                return;
        s = c->server;
        if (c->prev)
                c->prev->next = c->next;
        else
                s->clients = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_clients--;
        if (!c->privileged)
                s->n_unprivileged--;
        if (c->pending) {
                c->pending->client = NULL;
                control_call_unref(c->pending);
        }
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->idle);
        sd_event_source_disable_unref(c->throttle);
        safe_close(c->fd);
        free(c->in);
        text_unref(c->out);
        free(c);
}

static void client_touch(Client *c) {
        uint64_t now;

        (void) sd_event_now(c->server->event, CLOCK_MONOTONIC, &now);
        (void) sd_event_source_set_time(c->idle, now + c->server->limits.idle_timeout_usec);
}

/* Bytes of replies held unsent by the connections of 'user' (of every
 * user if (uid_t) -1) but root's and the privileged group's, 'except'
 * left out. */
static size_t reply_bytes_held(const ControlServer *srv, uid_t user, const Client *except) {
        size_t n = 0;

        for (const Client *c = srv->clients; c; c = c->next)
                if (c != except && !c->privileged && c->out && (user == (uid_t) -1 || c->peer.user == user))
                        n += c->out->len;
        return n;
}

/* Why 'len' more bytes of reply for 'c' would pass its user's budget or
 * all users' (that budget in *ret_limit); NULL if they fit. Whoever holds
 * nothing is let through: one reply always fits. */
static const char *reply_budget_refusal(const Client *c, size_t len, size_t *ret_limit) {
        const struct control_limits *l = &c->server->limits;
        size_t held;

        if (c->privileged)
                return NULL;
        held = l->user_reply_bytes ? reply_bytes_held(c->server, c->peer.user, c) : 0;
        if (held > 0 && held + len > l->user_reply_bytes) {
                *ret_limit = l->user_reply_bytes;
                return "this user's connections hold unread replies up to user_reply_memory: read them first";
        }
        held = l->reply_bytes ? reply_bytes_held(c->server, (uid_t) -1, c) : 0;
        if (held > 0 && held + len > l->reply_bytes) {
                *ret_limit = l->reply_bytes;
                return "unprivileged connections hold unread replies up to reply_memory: try again later";
        }
        return NULL;
}

static int client_queue(Client *c, json_object *msg);

static int client_queue_budget_error(Client *c, size_t limit, const char *why) {
        _cleanup_json_ json_object *p = json_object_new_object(), *m = NULL;

        if (!p || json_object_object_add(p, P_LIMIT, json_object_new_int64((int64_t) MIN(limit, (size_t) INT64_MAX))) < 0 ||
            json_object_object_add(p, P_REASON, json_object_new_string(why)) < 0)
                return -ENOMEM;
        m = varlink_error_new(ERROR_REPLY_BUDGET_EXCEEDED, TAKE_PTR(p));
        return m ? client_queue(c, m) : -ENOMEM;
}

/* Who 'p' is, for a log line: "uid U (pid P)", and whom it counts
 * against if another. */
static const char *peer_name(const ControlPeer *p, char buf[static 128]) {
        if (p->user_from == PEER_USER_SUBUID)
                snprintf(buf, 128, "uid %u (pid " PID_FMT ", a subordinate uid of uid %u)", (unsigned) p->uid, p->pid,
                         (unsigned) p->user);
        else if (p->user_from == PEER_USER_RANGE)
                snprintf(buf, 128, "uid %u (pid " PID_FMT ", of the namespace's block of uids %u-%u)", (unsigned) p->uid,
                         p->pid, (unsigned) p->user, (unsigned) (p->user + PEER_RANGE - 1));
        else
                snprintf(buf, 128, "uid %u (pid " PID_FMT ")", (unsigned) p->uid, p->pid);
        return buf;
}

static int on_text_drop(sd_event_source *s, void *userdata) {
        ControlServer *srv = userdata;

        srv->text = text_unref(srv->text);
        json_object_put(TAKE_PTR(srv->text_msg));
        return 0;
}

/* 'msg' serialized, shared with whoever was sent the same message in this
 * turn of the loop. */
static int server_text(ControlServer *srv, json_object *msg, Text **ret) {
        const char *s;
        size_t len;
        Text *t;

        if (srv->text && srv->text_msg == msg) {
                srv->text->refs++;
                *ret = srv->text;
                return 0;
        }
        s = json_object_to_json_string_length(msg, VARLINK_JSON_FLAGS, &len);
        if (!s || !(t = malloc(sizeof *t + len + 1)))
                return -ENOMEM;
        *t = (Text) { .refs = 2, .len = len + 1 };
        memcpy(t->data, s, len + 1); /* with its NUL, Varlink's end of message */
        on_text_drop(NULL, srv);
        srv->text = t;
        srv->text_msg = json_object_get(msg);
        (void) sd_event_source_set_enabled(srv->text_drop, SD_EVENT_ONESHOT);
        *ret = t;
        return 0;
}

/* Whether the peer has closed its end: no one would read a reply. */
static bool client_hung_up(const Client *c) {
        struct pollfd p = { .fd = c->fd, .events = POLLIN };

        return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* Queues a reply; the client owns at most one at a time. A reply past
 * the reply budget (reply_budget_refusal) is replaced by an error; one to
 * a peer that hung up is not made (the connection closes). */
static int client_queue(Client *c, json_object *msg) {
        bool error = json_object_object_get_ex(msg, VL_ERROR, NULL);
        const char *why;
        size_t limit;
        char who[128];
        Text *t;
        int r;

        if (client_hung_up(c)) {
                c->close_after = true;
                return 0;
        }
        r = server_text(c->server, msg, &t);
        if (r < 0)
                return r;
        if (!error && (why = reply_budget_refusal(c, t->len, &limit))) {
                c->refused_len = t->len;
                log_ratelimit_full(&c->server->budget_log, LOG_INFO,
                                   "Refusing a reply of %zu bytes to %s: %s (%zu bytes)", t->len,
                                   peer_name(&c->peer, who), why, limit);
                text_unref(t);
                return client_queue_budget_error(c, limit, why);
        }
        if (!error)
                c->refused_len = 0;
        text_unref(c->out);
        c->out = t;
        c->out_off = 0;
        return 0;
}

static int client_queue_error(Client *c, const char *error, const char *key, const char *value) {
        _cleanup_json_ json_object *m = varlink_error_new_str(error, key, value);

        return m ? client_queue(c, m) : -ENOMEM;
}

/* Whether the request 'req' has Varlink's form and asks what we serve:
 * 1 with its method and parameters (NULL if none), else its error reply
 * queued (0) or -ENOMEM. */
static int client_check_request(Client *c, json_object *req, const char **ret_method, json_object **ret_params) {
        json_object *method, *params, *v;

        if (!json_object_object_get_ex(req, VL_METHOD, &method) || !json_object_is_type(method, json_type_string))
                return client_queue_error(c, ERROR_INVALID_REQUEST, P_REASON, "request has no \"method\" string");

        params = json_object_object_get(req, VL_PARAMETERS);
        if (json_object_object_get_ex(req, VL_PARAMETERS, NULL) && !json_object_is_type(params, json_type_object))
                return client_queue_error(c, ERROR_INVALID_PARAMETER, P_PARAMETER, VL_PARAMETERS);

        json_object_object_foreach(req, key, val) {
                (void) val;
                if (!streq(key, VL_METHOD) && !streq(key, VL_PARAMETERS) && !streq(key, VL_ONEWAY) &&
                    !streq(key, VL_MORE) && !streq(key, VL_UPGRADE))
                        return client_queue_error(c, ERROR_INVALID_REQUEST, P_REASON, "unknown key in request");
        }
        for (const char *const *flag = (const char *const[]) { VL_ONEWAY, VL_MORE, VL_UPGRADE, NULL }; *flag; flag++)
                if (json_object_object_get_ex(req, *flag, &v) && !json_object_is_type(v, json_type_boolean))
                        return client_queue_error(c, ERROR_INVALID_PARAMETER, P_PARAMETER, *flag);
        if (json_object_object_get_ex(req, VL_UPGRADE, &v) && json_object_get_boolean(v))
                return client_queue_error(c, ERROR_INVALID_REQUEST, P_REASON, "connection upgrades are not supported");
        /* No method streams replies: a caller waiting for more must not be
         * left thinking the single reply it gets is the first of many. */
        if (json_object_object_get_ex(req, VL_MORE, &v) && json_object_get_boolean(v))
                return client_queue_error(c, ERROR_INVALID_PARAMETER, P_PARAMETER, VL_MORE);
        *ret_method = json_object_get_string(method);
        *ret_params = params;
        return 1;
}

/* Takes one complete message (NUL already stripped) and queues its reply. */
static int client_handle(Client *c, const char *buf, size_t len) {
        _cleanup_json_ json_object *req = NULL, *reply = NULL;
        _cleanup_(control_call_unrefp) ControlCall *call = NULL;
        json_object *params = NULL, *oneway;
        const char *m = NULL, *why;
        size_t limit;
        int r;

        r = varlink_parse(buf, len, &req);
        if (r == -ENOTUNIQ)
                return client_queue_error(c, ERROR_INVALID_REQUEST, P_REASON, "an object in the message repeats a key");
        if (r == -EILSEQ)
                return client_queue_error(c, ERROR_INVALID_REQUEST, P_REASON, "a string in the message holds a NUL");
        if (r < 0)
                return client_queue_error(c, ERROR_INVALID_REQUEST, P_REASON, "message is not a well-formed JSON object");
        r = client_check_request(c, req, &m, &params);
        if (r <= 0)
                return r;

        call = calloc(1, sizeof *call);
        if (!call)
                return -ENOMEM;
        *call = (ControlCall) { .n_ref = 1, .client = c, .peer = c->peer };
        call->oneway = json_object_object_get_ex(req, VL_ONEWAY, &oneway) && json_object_get_boolean(oneway);
        /* The budget spent already, or not enough left for the reply this
         * connection was last refused (asked again, most likely): not
         * even built. */
        if (!call->oneway && (why = reply_budget_refusal(c, MAX(c->refused_len, (size_t) 1), &limit)))
                return client_queue_budget_error(c, limit, why);
        call->dispatching = true;
        r = c->server->dispatch(c->server->userdata, call, m, params, &reply);
        call->dispatching = false;
        if (r < 0)
                return r;
        if (r > 0 && call->early)
                reply = TAKE_PTR(call->early); /* "later" came at once */
        else if (r > 0) {
                /* Answered later: hold further requests until then. */
                c->pending = TAKE_PTR(call);
                return 0;
        }
        if (call->oneway)
                return 0;
        return client_queue(c, reply);
}

static int client_queue_too_large(Client *c) {
        _cleanup_json_ json_object *p = json_object_new_object(), *m = NULL;

        if (!p || json_object_object_add(p, P_LIMIT, json_object_new_int64((int64_t) (c->in_cap - 1))) < 0)
                return -ENOMEM;
        m = varlink_error_new(ERROR_REQUEST_TOO_LARGE, TAKE_PTR(p));
        return m ? client_queue(c, m) : -ENOMEM;
}

/* Handles the next complete message buffered, if the client may be
 * answered now ('handle'; else only notices a message too large, or a
 * partial one at EOF). One at a time: a oneway call queues no reply, so a
 * loop that went on while no reply was queued would handle a whole buffer
 * of them in one wakeup; each call here, oneway or not, counts against the
 * wakeup's REQUESTS_PER_WAKEUP. Returns 1 if a message was handled. */
static int client_process(Client *c, bool handle) {
        char *nul;
        size_t mlen;
        int r;

        if (c->out || c->close_after || c->pending)
                return 0;
        nul = c->in_len ? memchr(c->in, 0, c->in_len) : NULL;
        if (!nul) {
                if (c->in_cap > 0 && c->in_len >= c->in_cap) {
                        r = client_queue_too_large(c);
                        c->close_after = true;
                        return r;
                }
                if (c->eof)
                        c->close_after = true; /* a partial message at EOF is dropped */
                return 0;
        }
        if (!handle)
                return 0;
        mlen = (size_t) (nul - c->in);
        client_touch(c);
        r = client_handle(c, c->in, mlen);
        memmove(c->in, nul + 1, c->in_len - mlen - 1);
        c->in_len -= mlen + 1;
        return r < 0 ? r : 1;
}

static int client_flush(Client *c) {
        while (c->out) {
                ssize_t n = send(c->fd, c->out->data + c->out_off, c->out->len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n < 0)
                        return -errno;
                c->out_off += (size_t) n;
                if (c->out_off == c->out->len) {
                        c->out = text_unref(c->out);
                        c->out_off = 0;
                        client_touch(c); /* a whole reply taken */
                }
        }
        return 0;
}

static int client_read(Client *c) {
        ssize_t n;

        /* One request at most, plus its NUL; allocated on first use so idle
         * clients cost little. The cap is fixed per client: a reload that
         * changes the limit applies to new connections. */
        if (!c->in) {
                c->in_cap = c->server->limits.max_message_size + 1;
                c->in = malloc(c->in_cap);
                if (!c->in)
                        return -ENOMEM;
        }
        if (c->in_len >= c->in_cap)
                return 0;
        n = recv(c->fd, c->in + c->in_len, MIN(c->in_cap - c->in_len, (size_t) READ_CHUNK), MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (n < 0)
                return -errno;
        if (n == 0) {
                c->eof = true;
                return 0;
        }
        c->in_len += (size_t) n; /* not activity until a request is whole */
        return 0;
}

static bool client_has_request(const Client *c) {
        return !c->pending && c->in_len > 0 && memchr(c->in, 0, c->in_len);
}

/* The share of 'user', refilled to 'now'; NULL without a limit (or
 * memory: then the user is not limited rather than refused). */
static UserShare *user_share(ControlServer *srv, uid_t user, uint64_t now) {
        uint64_t rate = srv->limits.user_usec_per_s;

        return rate ? user_shares_get(&srv->shares, user, now, rate) : NULL;
}

static void client_update_events(Client *c);

static int on_client_throttle(sd_event_source *s, uint64_t usec, void *userdata) {
        Client *c = userdata;

        client_touch(c); /* waiting for us, not idle */
        client_update_events(c);
        return 0;
}

/* Whether the client's user has spent their share of the loop: then it is
 * read no further until the share is theirs again. Root and the privileged
 * group are never held. */
static bool client_throttled(Client *c) {
        ControlServer *srv = c->server;
        uint64_t now = now_usec(CLOCK_MONOTONIC), wait;
        UserShare *b;
        char who[128];

        if (c->privileged || !(b = user_share(srv, c->peer.user, now)) || b->usec >= 0)
                return false;
        wait = (uint64_t) -b->usec * USEC_PER_SEC / srv->limits.user_usec_per_s + 1;
        if (!c->throttle) {
                if (sd_event_add_time(srv->event, &c->throttle, CLOCK_MONOTONIC, now + wait, 0, on_client_throttle, c) < 0)
                        return false;
        } else {
                (void) sd_event_source_set_time(c->throttle, now + wait);
                (void) sd_event_source_set_enabled(c->throttle, SD_EVENT_ONESHOT);
        }
        b->held++;
        log_ratelimit_full(&srv->throttled_log, LOG_INFO,
                           "Holding requests of %s for %" PRIu64 " ms: its user's share of the loop's time is spent",
                           peer_name(&c->peer, who), wait / USEC_PER_MSEC);
        return true;
}

/* Charges a request's time to its user. */
static void client_spend(Client *c, uint64_t usec) {
        UserShare *b;

        if (c->privileged) {
                c->server->privileged_usec += usec;
                c->server->privileged_requests++;
        } else if ((b = user_share(c->server, c->peer.user, now_usec(CLOCK_MONOTONIC)))) {
                b->usec -= (int64_t) MAX(usec, (uint64_t) REQUEST_MIN_USEC);
                b->spent_usec += usec;
                b->requests++;
        }
}

static bool client_throttle_pending(const Client *c) {
        int enabled = SD_EVENT_OFF;

        return c->throttle && sd_event_source_get_enabled(c->throttle, &enabled) >= 0 && enabled != SD_EVENT_OFF;
}

static void client_update_events(Client *c) {
        uint32_t ev = 0;

        /* A reply to send, or a buffered request still to handle: wait until
         * writable (at once, if the peer reads), so every client gets a turn. */
        if (c->out)
                ev |= EPOLLOUT;
        else if (client_throttle_pending(c))
                ev = 0; /* its user's share is spent: neither read nor handled */
        else if (client_has_request(c))
                ev |= EPOLLOUT;
        else if (!c->eof && !c->close_after && !c->pending)
                ev |= EPOLLIN;
        (void) sd_event_source_set_io_events(c->io, ev);
        (void) sd_event_source_set_enabled(c->io, ev ? SD_EVENT_ON : SD_EVENT_OFF);
}

#define REQUESTS_PER_WAKEUP 16

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Client *c = userdata;
        int r = 0;

        if (revents & EPOLLOUT)
                r = client_flush(c);
        if (r >= 0 && (revents & EPOLLIN) && !c->out)
                r = client_read(c);
        if (r >= 0 && (revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLIN))
                c->eof = true;

        /* Pipelined requests, oneway ones too: a bounded number now, the
         * rest on a later turn of the loop, after every other client's; none
         * once the user's share of the loop is spent. */
        for (unsigned i = 0; r >= 0 && i < REQUESTS_PER_WAKEUP && !client_throttled(c); i++) {
                uint64_t start = now_usec(CLOCK_MONOTONIC);

                r = client_process(c, true);
                if (r > 0)
                        client_spend(c, now_usec(CLOCK_MONOTONIC) - start);
                if (r >= 0)
                        r = client_flush(c);
                if (c->out || c->close_after || !client_has_request(c))
                        break;
        }
        if (r >= 0)
                r = client_process(c, false); /* notices a partial message at EOF */

        if (r < 0) {
                if (r != -EPIPE && r != -ECONNRESET)
                        log_debug_errno(r, "Dropping client (pid " PID_FMT "): %m", c->peer.pid);
                client_free(c);
                return 0;
        }
        if (!c->out && !c->pending && (c->close_after || (c->eof && c->in_len == 0))) {
                client_free(c);
                return 0;
        }
        client_update_events(c);
        return 0;
}

void control_call_reply(ControlCall *call, json_object *reply) {
        Client *c = call->client;

        if (call->dispatching || call->detached) {
                json_object_put(call->early);
                call->early = reply;
                return;
        }
        if (!c || c->pending != call) {
                json_object_put(reply);
                return;
        }
        c->pending = NULL;
        call->client = NULL;
        if (!call->oneway && client_queue(c, reply) < 0)
                c->close_after = true;
        json_object_put(reply);
        control_call_unref(call);
        client_touch(c);
        /* Resume: flush the reply and handle what was waiting behind it. */
        client_update_events(c);
        if (!c->out && (c->close_after || (c->eof && c->in_len == 0)))
                client_free(c);
}

static int on_client_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Client *c = userdata;

        if (c->pending || client_throttle_pending(c)) {
                /* Waiting for us (a probe, its user's share): not the
                 * client's idleness. */
                client_touch(c);
                (void) sd_event_source_set_enabled(c->idle, SD_EVENT_ONESHOT);
                return 0;
        }
        log_debug("Closing idle client (pid " PID_FMT ")", c->peer.pid);
        client_free(c);
        return 0;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        ControlServer *srv = userdata;

        (void) sd_event_source_set_enabled(srv->listen_source, SD_EVENT_ON);
        return 0;
}

/* Tells a client over the limit why, without blocking and without state. */
static void reject_client(int fd, const char *error, const char *reason) {
        _cleanup_json_ json_object *m = varlink_error_new_str(error, P_REASON, reason);
        _cleanup_free_ char *buf = NULL;
        size_t len;

        if (m && varlink_serialize(m, &buf, &len) >= 0)
                (void) send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        safe_close(fd);
}

/* Why a new connection from 'peer' must be refused, or NULL. Root and the
 * privileged group may use every slot; others share what the reserve
 * leaves, each uid a bounded part of it. */
static const char *admission_refusal(const ControlServer *srv, const ControlPeer *peer, bool privileged) {
        const struct control_limits *l = &srv->limits;
        unsigned n = 0;

        if (srv->n_clients >= l->max_clients)
                return "too many clients connected; try again later";
        if (privileged)
                return NULL;
        if (l->reserved_clients >= l->max_clients || srv->n_unprivileged >= l->max_clients - l->reserved_clients)
                return "the connections left are reserved for privileged clients; try again later";
        for (const Client *c = srv->clients; c; c = c->next)
                if (!c->privileged && c->peer.user == peer->user && ++n >= l->max_clients_per_user)
                        return "too many connections from this user; close some first";
        return NULL;
}

/* What to do when accept4() failed: 1 to try again, 0 to stop for this
 * wakeup. Out of descriptors or memory, the socket stays readable: pause
 * instead of spinning. */
static int accept_failed(ControlServer *srv, int error) {
        uint64_t now;

        if (error == EINTR || error == ECONNABORTED)
                return 1;
        if (error == EAGAIN)
                return 0;
        if (error != EMFILE && error != ENFILE && error != ENOBUFS && error != ENOMEM)
                return log_error_errno(error, "Failed to accept control connection: %m"), 0;
        log_warning_errno(error, "Cannot accept control connection, pausing: %m");
        (void) sd_event_source_set_enabled(srv->listen_source, SD_EVENT_OFF);
        (void) sd_event_now(srv->event, CLOCK_MONOTONIC, &now);
        (void) sd_event_source_set_time(srv->accept_retry, now + ACCEPT_RETRY_USEC);
        (void) sd_event_source_set_enabled(srv->accept_retry, SD_EVENT_ONESHOT);
        return 0;
}

/* Root, or a member of the privileged group: never limited. */
static bool peer_privileged(const ControlServer *srv, const ControlPeer *peer) {
        return peer->uid == 0 ||
               (srv->limits.privileged_gid != (gid_t) -1 && control_peer_in_group(peer, srv->limits.privileged_gid));
}

/* The subordinate uids read again if their file changed; what went wrong
 * said once for each change of the file. */
static void peers_refresh(ControlServer *srv) {
        const char *why = NULL;
        unsigned skipped = 0;
        int r = peer_users_refresh(srv->peers, now_usec(CLOCK_MONOTONIC), &skipped, &why);

        if (r < 0)
                log_warning_errno(r, "%s: %s; subordinate uids count as users of their own namespace's uids",
                                  peer_users_subuid_path(srv->peers), why);
        else if (r > 0 && skipped > 0)
                log_warning("%s: %u line(s) skipped (not owner:start:count, or an unknown owner)",
                            peer_users_subuid_path(srv->peers), skipped);
}

/* Who is on the other end of 'fd', from the kernel (SO_PEERCRED,
 * SO_PEERGROUPS), and whether that peer is privileged. */
static int identify_peer(ControlServer *srv, int fd, ControlPeer *ret, bool *ret_privileged) {
        struct ucred cred;
        socklen_t clen = sizeof cred, glen;
        ControlPeer peer;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
                return -errno;
        peer = (ControlPeer) { .pid = cred.pid, .uid = cred.uid, .user = cred.uid, .gid = cred.gid };
        glen = sizeof peer.groups;
        /* A peer in more than CONTROL_PEER_GROUPS_MAX groups is judged by
         * its primary one. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, peer.groups, &glen) >= 0)
                peer.n_groups = glen / sizeof(gid_t);
        *ret_privileged = peer_privileged(srv, &peer);
        if (!*ret_privileged) {
                /* Whom its limits count against (peer.h): never root's
                 * reserve, which goes by the peer's own uid. */
                peers_refresh(srv);
                peer.user = peer_users_key(srv->peers, fd, cred.pid, cred.uid, &peer.user_from);
        }
        *ret = peer;
        return 0;
}

/* A client for an admitted connection, linked into the server and watched
 * for input and idleness. Takes 'fd' whatever happens. */
static int client_add(ControlServer *srv, int fd, const ControlPeer *peer, bool privileged) {
        Client *c = calloc(1, sizeof *c);
        int r;

        if (!c) {
                safe_close(fd);
                return -ENOMEM;
        }
        *c = (Client) {
                .server = srv,
                .fd = fd,
                .peer = *peer,
                .privileged = privileged,
                .next = srv->clients,
        };
        if (srv->clients)
                srv->clients->prev = c;
        srv->clients = c;
        srv->n_clients++;
        if (!privileged)
                srv->n_unprivileged++;

        r = sd_event_add_io(srv->event, &c->io, fd, EPOLLIN, on_client_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(srv->event, &c->idle, CLOCK_MONOTONIC, srv->limits.idle_timeout_usec, 0,
                                               on_client_idle, c);
        if (r < 0) {
                client_free(c);
                return r;
        }
        (void) sd_event_source_set_description(c->io, "control-client");
        return 0;
}

/* Accepts one connection: 1 if there may be more waiting, 0 if not (or the
 * socket is paused). */
static int accept_one(ControlServer *srv, int lfd) {
        ControlPeer peer = {};
        const char *refusal;
        bool privileged = false;
        char who[128];
        int fd, r;

        fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
                return accept_failed(srv, errno);
        r = identify_peer(srv, fd, &peer, &privileged);
        if (r < 0) {
                log_warning_errno(r, "Failed to get peer credentials: %m");
                safe_close(fd);
                return 1;
        }
        refusal = admission_refusal(srv, &peer, privileged);
        if (refusal) {
                log_ratelimit_full(&srv->refused_log, LOG_WARNING,
                                   "Refusing control connection from %s: %s; %u clients already connected",
                                   peer_name(&peer, who), refusal, srv->n_clients);
                reject_client(fd, ERROR_TOO_MANY_CLIENTS, refusal);
                return 1;
        }
        r = client_add(srv, fd, &peer, privileged);
        if (r == -ENOMEM)
                return log_oom(), 0;
        if (r < 0)
                return log_error_errno(r, "Failed to watch control connection: %m"), 0;
        return 1;
}

/* Drains a burst of connections per wakeup: under a flood the queue ahead
 * of a legitimate client empties in a few turns of the loop, not one
 * connection per turn. */
#define ACCEPTS_PER_WAKEUP 64

static int on_accept(sd_event_source *s, int lfd, uint32_t revents, void *userdata) {
        for (unsigned i = 0; i < ACCEPTS_PER_WAKEUP && accept_one(userdata, lfd) > 0; i++)
                ;
        return 0;
}

/* Descriptors for every client allowed and what the daemon needs besides
 * (state files, mount table, workers' files): the usual soft limit of 1024
 * would refuse clients well below max_clients = 4096 (EMFILE). Raised up to
 * the hard limit, never lowered; epoll has no FD_SETSIZE. */
#define NOFILE_MARGIN 256

static void raise_nofile(unsigned max_clients) {
        struct rlimit rl;
        rlim_t want = (rlim_t) max_clients + NOFILE_MARGIN;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
                return;
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

int control_server_new(sd_event *e, int listen_fd, const struct control_limits *limits, control_dispatch_t dispatch,
                       void *userdata, ControlServer **ret) {
        _cleanup_(control_server_freep) ControlServer *s = calloc(1, sizeof *s);
        int r;

        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->listen_fd = -1; /* the caller's until we succeed */
        s->limits = *limits;
        raise_nofile(limits->max_clients);
        s->refused_log = (LogRatelimit) LOG_RATELIMIT_INIT(REFUSED_LOG_INTERVAL, REFUSED_LOG_BURST);
        s->throttled_log = (LogRatelimit) LOG_RATELIMIT_INIT(REFUSED_LOG_INTERVAL, REFUSED_LOG_BURST);
        s->budget_log = (LogRatelimit) LOG_RATELIMIT_INIT(REFUSED_LOG_INTERVAL, REFUSED_LOG_BURST);
        s->dispatch = dispatch;
        s->userdata = userdata;

        r = sd_event_add_io(e, &s->listen_source, listen_fd, EPOLLIN, on_accept, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(s->listen_source, "control-listen");
        r = sd_event_add_time(e, &s->accept_retry, CLOCK_MONOTONIC, 0, 0, on_accept_retry, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->accept_retry, SD_EVENT_OFF);
        r = sd_event_add_post(e, &s->text_drop, on_text_drop, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->text_drop, SD_EVENT_OFF);
        r = peer_users_new(limits->subuid_path, &s->peers);
        if (r < 0)
                return r;
        s->limits.subuid_path = NULL; /* the copy is the peers' */
        s->listen_fd = listen_fd;
        *ret = TAKE_PTR(s);
        return 0;
}

void control_server_set_limits(ControlServer *s, const struct control_limits *limits) {
        PeerUsers *u;

        if (!streq(peer_users_subuid_path(s->peers), limits->subuid_path ? limits->subuid_path : "/etc/subuid") &&
            peer_users_new(limits->subuid_path, &u) >= 0) {
                peer_users_free(s->peers);
                s->peers = u;
        }
        s->limits = *limits;
        s->limits.subuid_path = NULL;
        raise_nofile(limits->max_clients);
}

unsigned control_server_n_clients(const ControlServer *s) {
        return s ? s->n_clients : 0;
}

size_t control_server_reply_bytes(const ControlServer *s, uid_t user) {
        return s ? reply_bytes_held(s, user, NULL) : 0;
}

void control_server_charge(ControlServer *s, const ControlPeer *peer, uint64_t usec) {
        UserShare *b;

        /* A debt of ten seconds' share at most: one long build does not
         * lock its user out for good. */
        if (s && !peer_privileged(s, peer) && (b = user_share(s, peer->user, now_usec(CLOCK_MONOTONIC)))) {
                b->usec = MAX(b->usec - (int64_t) MIN(usec, (uint64_t) INT32_MAX),
                              -10 * (int64_t) s->limits.user_usec_per_s);
                b->spent_usec += usec;
        }
}

/* The loop's time the requests took, said at exit: root's and the
 * privileged group's, and the users' that took most (of those still
 * counted: a user who spent nothing for a while is forgotten). */
static void log_usage(ControlServer *s) {
        char users[1024];

        if (s->privileged_requests == 0 && s->shares.n == 0)
                return;
        user_shares_summary(&s->shares, 8, users, sizeof users);
        log_info("The loop's time spent on requests since start: privileged: %.3f s, requests %" PRIu64 "%s%s",
                 (double) s->privileged_usec / USEC_PER_SEC, s->privileged_requests, users[0] ? "; " : "", users);
}

ControlServer *control_server_free(ControlServer *s) {
        if (!s)
                return NULL;
        log_usage(s);
        while (s->clients)
                client_free(s->clients);
        on_text_drop(NULL, s);
        sd_event_source_disable_unref(s->text_drop);
        peer_users_free(s->peers);
        sd_event_source_disable_unref(s->listen_source);
        sd_event_source_disable_unref(s->accept_retry);
        safe_close(s->listen_fd);
        sd_event_unref(s->event);
        user_shares_done(&s->shares);
        free(s);
        return NULL;
}
