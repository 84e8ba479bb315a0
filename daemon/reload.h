/* reload.h: the configuration read, at start and at each reload (SIGHUP,
 * the Reload method). A reload reads in a worker what may block: the
 * file (on a filesystem that may hang), the privileged group (NSS: LDAP,
 * say, through group.h) and the mount table parsed with the new filter;
 * the loop then puts the result in force (ReloadOps.apply) and answers.
 * One read at a time: the callers who asked before it started are
 * answered by it, those who ask while it is out by one more read once it
 * is back, so each answer reflects the file as it was after they asked.
 *
 * Owns the read's job (its own copies of the paths) and the waiters.
 * Borrows the paths the caller read the configuration from, and the pool.
 * Failure: a file that cannot be read or parsed, or a read past its
 * deadline, leaves the running configuration in force; the reasons are
 * logged once and handed to each waiter. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "macro.h"
#include "mounts.h"
#include "worker.h"

/* Reads the configuration the way every reload does: config_path, else
 * the default file if there is one, else the built-in defaults; with the
 * command line's socket and state dir over the file's. Its errors are
 * logged and, if ret_errors is not NULL, handed back ("file:line: ...",
 * or the one reason the file could not be read). */
int reload_read_config(const char *config_path, const char *override_socket, const char *override_state_dir,
                       struct config **ret, char ***ret_errors);
/* What only a restart changes (the socket, the state dir, the worker
 * threads, the rings, the btrfs helper) is kept from the running
 * configuration in c, and each change said. */
void reload_keep_running(struct config *c, const struct config *running);
/* The privileged group named is not there: said, in the same words at
 * start and at a reload. */
void reload_say_group_missing(const char *name);

/* A reload's outcome: 0, or -errno with the running configuration kept
 * and 'errors' (taken). */
typedef void (*reload_cb)(int r, char **errors, void *userdata);

typedef struct ReloadOps {
        /* A configuration read whole, to put in force: c (taken), the
         * privileged group's gid ((gid_t) -1: root only), and the mount
         * table parsed with its filter (taken; NULL with table_r < 0 where
         * it could not be read). */
        void (*apply)(void *userdata, struct config *c, gid_t gid, MountTable *table, int table_r);
        /* The read is over, its outcome in force or not: for READY=1 and
         * the status line. */
        void (*settled)(void *userdata);
        void *userdata;
} ReloadOps;

typedef struct Reloader Reloader;

/* The paths (each may be NULL) must outlive the reloader. */
int reloader_new(WorkerPool *pool, const char *config_path, const char *override_socket,
                 const char *override_state_dir, const ReloadOps *ops, Reloader **ret);
/* A read out is detached; its waiters and those waiting for the next hear
 * -ECANCELED. */
Reloader *reloader_free(Reloader *rl);
DEFINE_FREE_FUNC(Reloader, reloader_free);

/* Reads the configuration again and puts it in force; cb (may be NULL)
 * then has the outcome. Returns 0, or -errno with cb never called.
 * 'timeout': the read's deadline. */
int reloader_start(Reloader *rl, reload_cb cb, void *userdata, uint64_t timeout);
