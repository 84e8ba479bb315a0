/* control.h: the control socket. Owns the listening socket and every client
 * connection: framing, limits, peer credentials, non-blocking I/O. What a
 * request means is the dispatcher's business (methods.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "macro.h"

#define CONTROL_PEER_GROUPS_MAX 64

typedef struct ControlPeer {
        pid_t pid;
        uid_t uid;
        /* Whom the per-user limits count it against: uid, or for a peer in
         * a user namespace, the uid that owns the outermost one below
         * ours (so the uids of /etc/subuid count as their owner's). */
        uid_t user;
        gid_t gid;
        gid_t groups[CONTROL_PEER_GROUPS_MAX]; /* supplementary groups (SO_PEERGROUPS) */
        unsigned n_groups;
} ControlPeer;

/* Whether the peer is root or in group 'gid' (primary or supplementary). */
bool control_peer_in_group(const ControlPeer *p, gid_t gid);

struct control_limits {
        unsigned max_clients;
        /* Connections one unprivileged uid may hold at once. */
        unsigned max_clients_per_user;
        /* Of max_clients, this many are for root and privileged_gid only:
         * no number of unprivileged peers can lock them out. */
        unsigned reserved_clients;
        gid_t privileged_gid; /* (gid_t) -1: root only */
        size_t max_message_size;
        /* Closes a connection that completes no request (and takes no
         * reply whole) for this long: trickled bytes do not count. */
        uint64_t idle_timeout_usec;
        /* The event loop's time each user but root and privileged_gid may
         * take in requests, per second (a second's worth at once at most);
         * a user past it waits, unread, until the time is theirs again. 0:
         * no limit. */
        uint64_t user_usec_per_s;
        /* The bytes of replies the connections of one user (other than
         * root and privileged_group) may hold unsent at once, and those of
         * all such users together. A reply that would take its user, or
         * them all, past the budget is replaced by ReplyBudgetExceeded,
         * and a request that finds the budget spent (or, on a connection
         * whose last reply was refused, lacking room for that reply) is
         * not handled; a user (or all of them) holding none is always
         * sent one reply, however large. Error replies are counted, never
         * refused. 0: no limit. */
        size_t user_reply_bytes;
        size_t reply_bytes;
};

/* One request being answered. The dispatcher either answers at once or
 * keeps a reference and answers later with control_call_reply(); the client
 * sends nothing else meanwhile. A call whose client went away swallows its
 * reply. */
typedef struct ControlCall ControlCall;

ControlCall *control_call_ref(ControlCall *c);
ControlCall *control_call_unref(ControlCall *c);
DEFINE_FREE_FUNC(ControlCall, control_call_unref);
const ControlPeer *control_call_peer(const ControlCall *c);
/* Whether no one will read the call's answer: its client went away (a
 * detached call's answer is always kept). */
bool control_call_gone(const ControlCall *c);
/* Sends 'reply' (a whole Varlink message; consumed) to the caller. */
void control_call_reply(ControlCall *c, json_object *reply);

/* A call outside any connection (tests, fuzzers): its answer, given now or
 * later, is kept for control_call_steal_reply(). */
int control_call_new_detached(const ControlPeer *peer, ControlCall **ret);
json_object *control_call_steal_reply(ControlCall *c);

/* Handles one request: returns 0 with the whole reply (a Varlink reply or
 * error) in *ret_reply, 1 if it will answer later through 'call', or -ENOMEM. */
typedef int (*control_dispatch_t)(void *userdata, ControlCall *call, const char *method, json_object *params,
                                  json_object **ret_reply);

/* The socket passed by systemd, if any: 1 and *ret_fd; 0 if none; -errno if
 * what was passed is not one listening Unix stream socket. */
int control_socket_from_activation(int *ret_fd);
/* Binds 'path' (creating its directory, replacing a stale socket, refusing
 * to take over one that answers) with 'mode' and, unless (gid_t) -1, 'gid'. */
int control_socket_bind(const char *path, mode_t mode, gid_t gid, int *ret_fd);

typedef struct ControlServer ControlServer;

/* Takes listen_fd on success only. */
int control_server_new(sd_event *e, int listen_fd, const struct control_limits *limits, control_dispatch_t dispatch,
                       void *userdata, ControlServer **ret);
void control_server_set_limits(ControlServer *s, const struct control_limits *limits);
unsigned control_server_n_clients(const ControlServer *s);
/* The bytes of replies held unsent for 'user' (other than root and
 * privileged_group), or for all such users if 'user' is (uid_t) -1. */
size_t control_server_reply_bytes(const ControlServer *s, uid_t user);
/* Charges 'usec' of the loop's time, spent for 'peer' outside its request
 * (a reply built later, in slices), to its user's share (user_usec_per_s):
 * their next requests wait as their own would. Root and privileged_group
 * are never charged. */
void control_server_charge(ControlServer *s, const ControlPeer *peer, uint64_t usec);
/* A user's share of the loop, 'usec' (negative: a debt), after 'elapsed'
 * microseconds of refill at 'rate' a second, full at 'rate' (at most a
 * second a second): the refill saturates for any gap, months included. */
int64_t control_budget_refill(int64_t usec, uint64_t elapsed, uint64_t rate);
/* Closes every client and the listening socket. */
ControlServer *control_server_free(ControlServer *s);
DEFINE_FREE_FUNC(ControlServer, control_server_free);
