/* control-socket.h: the control socket's listening end: the one systemd
 * passes, or one bound here. What is served on it is control.h's. */
#pragma once

#include <sys/types.h>

/* The socket passed by systemd, if any: 1 and *ret_fd; 0 if none; -errno if
 * what was passed is not one listening Unix stream socket. */
int control_socket_from_activation(int *ret_fd);
/* Binds 'path' (creating its directory, replacing a stale socket, refusing
 * to take over one that answers) with 'mode' and, unless (gid_t) -1, 'gid'. */
int control_socket_bind(const char *path, mode_t mode, gid_t gid, int *ret_fd);
