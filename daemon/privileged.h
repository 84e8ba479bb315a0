/* privileged.h: what atimed does while it still holds the privileges it
 * was started with, in this order, and then the drop. The control socket
 * (bound with its mode and group, or taken from the service manager, and
 * said so where the configuration's socket settings do not apply); the
 * state directory (made, checked to be atimed's alone, locked, so that a
 * second daemon pointed at it exits before it reads or writes anything
 * there); atimed's privileged helper for btrfs (helper-client.h), forked
 * while CAP_SYS_ADMIN is still held or reached at the service manager's
 * socket; then the capabilities dropped to the three kept (caps.h), never
 * CAP_SYS_ADMIN, said at the level of what it means (a container, a user
 * namespace). The
 * drop must come before any worker thread exists: capabilities are per
 * thread, and the threads inherit what the main thread has left.
 *
 * Owns nothing past the call: the socket's descriptor, the path it bound
 * (to remove at exit) and the state dir's lock are the caller's. Failure
 * is logged here, once, with what to do about it, and returned (-errno):
 * the daemon exits. A state dir that cannot be made or opened is only
 * said: the daemon measures all the same, its history in memory. */
#pragma once

#include "config.h"

/* *ret_fd: the socket to serve. *ret_bound_socket: the path bound (NULL
 * under socket activation), set as soon as it is, failure or not.
 * *ret_state_lock: the lock's descriptor (left as it is without one). */
int privileged_start(const struct config *c, int *ret_fd, char **ret_bound_socket, int *ret_state_lock);
