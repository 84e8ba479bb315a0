/* helper-server.h: atimed's privileged helper, the side that holds
 * CAP_SYS_ADMIN and nothing else (helper-proto.h says what it answers).
 *
 * Run two ways. Under systemd, atimed-helper.service (its own unit, its
 * own sandbox, a dynamic user holding only CAP_SYS_ADMIN) gets the
 * listening socket of atimed-helper.socket, and atimed.service never
 * holds the capability. Started as root without a service manager (make
 * install, the tests), the daemon forks it before it drops its
 * capabilities (helper_spawn()), and passes it each connection.
 *
 * Either way every connection is served by a process of its own, so that
 * an ioctl that never returns (a hung filesystem) holds one connection
 * and never the next look; at most HELPER_CONNECTIONS_MAX are served at
 * once, more are closed at once (the daemon sees the helper busy and
 * says so). It serves only root (SO_PEERCRED). */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#define HELPER_CONNECTIONS_MAX 16

typedef enum HelperListen {
        HELPER_LISTEN_ACCEPT, /* a listening socket: accept() */
        HELPER_LISTEN_PASSED, /* the daemon's end of a socketpair: each message passes one connection */
} HelperListen;

/* Serves connections on 'fd' until it fails or (PASSED) its other end
 * closes: 0, or -errno. Logs what it refuses. */
int helper_server_run(int fd, HelperListen kind);

/* One connection's requests, answered in turn until it is closed or
 * stays idle for a minute: 0, or -errno where a reply could not be sent. */
int helper_serve_connection(int conn);

/* Called as root with CAP_SYS_ADMIN, single-threaded, before the
 * capabilities are dropped: forks the helper, the caller's child (its pid
 * in *ret_pid, for the caller to reap), with CAP_SYS_ADMIN alone and
 * no_new_privs, serving what the caller passes over *ret_control. It
 * exits when that is closed, and is killed if the caller dies. */
int helper_spawn(int *ret_control, pid_t *ret_pid);
