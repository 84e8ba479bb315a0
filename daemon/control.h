/* control.h: the control socket. Owns the listening socket and every client
 * connection: framing, limits, peer credentials, non-blocking I/O. What a
 * request means is the dispatcher's business (methods.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "control-socket.h" /* the listening socket the server is given */
#include "macro.h"
#include "peer.h"

#define CONTROL_PEER_GROUPS_MAX 64

typedef struct ControlPeer {
        pid_t pid;
        uid_t uid;
        /* Whom the per-user limits count it against (peer.h): uid, the
         * owner of its subordinate range, or its namespace's block of
         * uids; set for unprivileged peers. */
        uid_t user;
        PeerUserFrom user_from;
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
        /* Who owns which subordinate uids (peer.h); NULL: /etc/subuid.
         * Copied. */
        const char *subuid_path;
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
/* Closes every client and the listening socket, saying first how much of
 * the loop's time the requests took: root's and the privileged group's,
 * and each of the users' that took most. */
ControlServer *control_server_free(ControlServer *s);
DEFINE_FREE_FUNC(ControlServer, control_server_free);
