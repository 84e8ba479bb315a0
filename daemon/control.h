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

typedef struct ControlPeer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
} ControlPeer;

struct control_limits {
        unsigned max_clients;
        size_t max_message_size;
        uint64_t idle_timeout_usec;
};

/* Handles one request. Returns the whole reply message (a Varlink reply or
 * error); NULL only on OOM. */
typedef json_object *(*control_dispatch_t)(void *userdata, const ControlPeer *peer, const char *method,
                                           json_object *params);

/* The socket passed by systemd, if any: 1 and *ret_fd; 0 if none; -errno if
 * what was passed is not one listening Unix stream socket. */
int control_socket_from_activation(int *ret_fd);
/* Binds 'path' (creating its directory, replacing a stale socket, refusing
 * to take over one that answers) with 'mode' and, unless (gid_t) -1, 'gid'. */
int control_socket_bind(const char *path, mode_t mode, gid_t gid, int *ret_fd);

typedef struct ControlServer ControlServer;

int control_server_new(sd_event *e, int listen_fd, const struct control_limits *limits, control_dispatch_t dispatch,
                       void *userdata, ControlServer **ret);
void control_server_set_limits(ControlServer *s, const struct control_limits *limits);
unsigned control_server_n_clients(const ControlServer *s);
/* Closes every client and the listening socket. */
ControlServer *control_server_free(ControlServer *s);
DEFINE_FREE_FUNC(ControlServer, control_server_free);
