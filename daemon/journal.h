/* journal.h: structured log entries, where the journal takes them.
 *
 * Under systemd, stderr is a stream to journald (JOURNAL_STREAM names it)
 * and every line becomes an entry with only a MESSAGE. Messages about a
 * mount then also go to journald's native socket with the mount as a
 * field of its own (ATIMED_MOUNT=), unaltered: the MESSAGE shows a name
 * with control characters escaped, the field keeps every byte, so that
 * `journalctl ATIMED_MOUNT=/srv/x` finds them. Elsewhere (a terminal, a
 * file, no journald) nothing changes: one escaped text line. */
#pragma once

#include <stdbool.h>

/* Whether stderr is the journal's stream (JOURNAL_STREAM is its
 * device:inode) and the native socket takes entries. */
bool journal_available(void);
/* Whether journald's native socket takes entries (stderr anywhere). */
bool journal_socket_available(void);
/* Sends messages about objects to the journal from now on, if it is
 * available; returns whether it is. */
bool journal_log_setup(void);
