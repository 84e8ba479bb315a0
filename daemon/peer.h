/* peer.h: whom a control connection counts against. The socket's limits
 * (connections, the loop's time, reply bytes) are per user, and a user
 * may hold many uids: the subordinate uids /etc/subuid gives it, which it
 * can enter through a user namespace of its own (newuidmap maps nothing
 * else), and a container's range of uids, which its root hands out to
 * namespaces nested in it. Each counts as one user here, without ptrace
 * rights (the daemon keeps none: the owner of another process's user
 * namespace, /proc/PID/ns/user or PIDFD_GET_USER_NAMESPACE, is out of its
 * reach). See docs/architecture.md, section 8, and atimed(8), CONTROL
 * SOCKET.
 *
 * A connection from uid U counts against:
 * - the owner of U's range in /etc/subuid, where U lies in one that is
 *   not root's;
 * - else, for U of PEER_RANGE or more, where the peer is in a user
 *   namespace other than the daemon's (its /proc/PID/uid_map, which any
 *   process may read, differs from the daemon's), or where that cannot be
 *   told (the peer gone before it was looked at, its pid reused meanwhile,
 *   /proc hiding it): the block of PEER_RANGE uids U lies in, keyed by
 *   its first uid. systemd-nspawn, LXC and podman give each container
 *   such an aligned block, and a namespace nested in a container maps
 *   uids of the container's block alone, so no nesting splits it;
 * - else U itself.
 * A uid of the daemon's own namespace, not subordinate, is a user of its
 * own; so is one below PEER_RANGE in any namespace (the host's own users,
 * which only root can map into a namespace other than as itself). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

/* A container's block of uids, as systemd-nspawn and LXC allocate them. */
#define PEER_RANGE UINT32_C(65536)

/* Subordinate uids of one user: /etc/subuid's "owner:start:count". */
struct subuid_range {
        uid_t start;
        uint32_t count;
        uid_t owner;
        uint64_t reach; /* peer_subuid_parse()'s: where this or an earlier range ends, at most */
};

/* Turns a user name into its uid: 0 or -errno (-ENOENT: no such user). */
typedef int (*peer_resolve_t)(const char *name, uid_t *ret);

/* Parses /etc/subuid's text into ranges sorted by start: an owner given
 * by name is resolved with 'resolve', one given as a number is taken as a
 * uid. Comments (#), blank lines, lines that do not parse, an unknown
 * owner and empty ranges are skipped (counted in *ret_skipped). 0 or
 * -ENOMEM. Pure but for 'resolve'. */
int peer_subuid_parse(const char *text, size_t len, peer_resolve_t resolve, struct subuid_range **ret, size_t *ret_n,
                      unsigned *ret_skipped);
/* The owner of the range 'uid' lies in: true and *ret_owner, or false.
 * Overlapping ranges: the one that begins last before uid. */
bool peer_subuid_owner(const struct subuid_range *r, size_t n, uid_t uid, uid_t *ret_owner);

/* A uid_map's text (/proc/PID/uid_map read by the daemon: outer uids in
 * the daemon's namespace) against the daemon's own: whether the two
 * namespaces are the same one (the same map: a namespace of root's that
 * maps the whole range onto itself is the daemon's, as far as uids go). */
bool peer_uid_map_same(const char *map, size_t len, const char *self, size_t self_len);

typedef enum PeerUserFrom {
        PEER_USER_UID,    /* its own uid */
        PEER_USER_SUBUID, /* the owner of its subordinate range */
        PEER_USER_RANGE,  /* its block of PEER_RANGE uids */
} PeerUserFrom;

/* The rules above, as a pure function: 'in_ours' 1 if the peer is in the
 * daemon's namespace, 0 if not, negative if that could not be told (asked
 * for only where it matters: NULL *in_ours is computed by 'ask'). */
uid_t peer_user_of(uid_t uid, const struct subuid_range *r, size_t n, int (*ask)(void *userdata), void *userdata,
                   PeerUserFrom *ret_from);

/* The daemon's view: /etc/subuid (read again when it changes, looked at
 * once a second at most) and its own uid_map. */
typedef struct PeerUsers PeerUsers;

/* 'subuid_path' NULL: /etc/subuid. Reads nothing yet. */
int peer_users_new(const char *subuid_path, PeerUsers **ret);
PeerUsers *peer_users_free(PeerUsers *u);
DEFINE_FREE_FUNC(PeerUsers, peer_users_free);
const char *peer_users_subuid_path(const PeerUsers *u);

/* Reads the subordinate uids again if the file changed (looked at once a
 * second at most: 'now', CLOCK_MONOTONIC). 1 if read anew, with what it
 * skipped in *ret_skipped; 0 if unchanged or not looked at; -errno if it
 * could not be read (then none are known: an absent file is no error but
 * an empty list), with a word in *ret_why. A file not owned by root, or
 * writable by others than root, is not believed (-EPERM): it would let
 * them give their uids to someone else. */
int peer_users_refresh(PeerUsers *u, uint64_t now, unsigned *ret_skipped, const char **ret_why);

/* Whom a connection on 'fd' from (pid, uid), SO_PEERCRED's, counts
 * against. The peer's namespace is read from /proc/PID/uid_map, and the
 * pid checked against the socket's SO_PEERPIDFD (Linux 6.5): a peer that
 * exited (its pid free for another) cannot be told. Bounded: a stat of
 * the subordinate uids' file at most once a second, and for a uid of
 * PEER_RANGE or more outside it, one read of a file the kernel writes. */
uid_t peer_users_key(PeerUsers *u, int fd, pid_t pid, uid_t uid, PeerUserFrom *ret_from);
