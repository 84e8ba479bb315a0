/* store.h: every mount's history, kept across restarts in the state dir.
 *
 * Two files. "history" is a snapshot of everything: versioned, checksummed,
 * written atomically (temp file, fsync, rename, fsync of the directory).
 * "history.journal" holds the samples added since, appended every flush in
 * checksummed blocks; replaying it over the snapshot gives the exact state.
 * A flush so costs kilobytes, not the whole history; the snapshot is
 * rewritten on shutdown, daily, when the journal grows large, and after any
 * failed write. A file that is corrupt, truncated or empty is moved aside
 * (history.corrupt-TIME) and never trusted; what could be read before the
 * damage in a journal is kept. A file of a newer format (after a
 * downgrade) is refused: left as it is, never overwritten; the store then
 * keeps history in memory only and writes nothing.
 *
 * Formats: version 1 (atimed before 0.1.0) held atime-written inodes per
 * minute, version 2 (0.1.0 on) atime updates per minute, in the same
 * layout; both are read. tests/fixtures/store/ keeps files of each. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "stats.h"
#include "worker.h"

#define STORE_FILE "history"
/* The files give a key 16 bits of length. */
#define STORE_KEY_MAX 65535u
#define STORE_JOURNAL "history.journal"
/* Each history's promise and last change of policy (stats.h), and the
 * btrfs model learned through its mount, as JSON. */
#define STORE_CHANGES "history.changes"

typedef struct Store Store;

struct store_load_report {
        size_t mounts;         /* histories loaded */
        size_t replayed;       /* journal samples replayed */
        char **problems;       /* one line per file moved aside or ring dropped */
        bool refused;          /* a file of a newer format: nothing loaded, nothing will be written */
};

int store_new(const char *dir, const struct stats_ring_spec *specs, unsigned n_specs, size_t max_mounts,
              Store **ret);
Store *store_free(Store *s);
DEFINE_FREE_FUNC(Store, store_free);

/* Reads the snapshot and the journal; never fails for bad files (they are
 * moved aside and reported), only for lack of memory. */
int store_load(Store *s, int64_t now, struct store_load_report *ret);
void store_load_report_done(struct store_load_report *r);

/* A history key names the filesystem and where it is mounted:
 * "uuid=U [root=R] target=T" or "source=S fstype=F [root=R] target=T".
 * Each value is escaped (space, backslash, control bytes as \xHH), so the
 * fields read back unambiguously whatever the names hold; ordinary names
 * are unchanged. 'uuid' NULL: source and fstype; 'root' NULL or "/": none.
 * store_key_has_target() compares the target field exactly. */
int store_key_format(const char *uuid, const char *source, const char *fstype, const char *root, const char *target,
                     char **ret);
bool store_key_has_target(const char *key, const char *target);

/* Adds a sample to the history of 'key' (created on first use); a key
 * longer than STORE_KEY_MAX or empty: -ENAMETOOLONG. */
int store_add(Store *s, const char *key, const struct stats_sample *sample);
const MountHistory *store_find(const Store *s, const char *key);

/* The advice in force for the history of 'key' (p->t 0: the advice is to
 * keep), given for the policy p->for_atime, p->for_flags: what a change of
 * policy is measured against. A sample added with another policy than the
 * history last recorded (store_add(), and the journal's replay) records
 * the change (MountHistory.change) with the promise then in force; both
 * are kept in STORE_CHANGES, written with the next flush. Advice given for
 * another policy than the history's last (the table changed and its first
 * samples are not recorded yet: a restart, a mount settling) is not taken:
 * the promise that stands is the one made for the policy being left.
 * Nothing for a key without history. */
void store_set_promise(Store *s, const char *key, const struct stats_promise *p);

/* The btrfs model learned through the mount of 'key' (stats.h), kept in
 * STORE_CHANGES: written again when it has learned from another interval
 * and its bytes a file moved by more than 1%, or at its first 16
 * intervals. Nothing for a key without history. */
void store_set_unshare_model(Store *s, const char *key, const struct stats_unshare_model *m);

/* Writes what changed: a journal block, or a snapshot when one is due (or
 * 'snapshot' asks for it). Returns 0 or -errno; on failure nothing is lost
 * from memory and the next flush writes a full snapshot. */
int store_flush(Store *s, int64_t now, bool snapshot);

/* The same in three steps, so that the writing (and its fsync()s) can run
 * in a worker while the event loop goes on: begin encodes what is to be
 * written (*ret NULL: nothing to write); run writes it, touching nothing
 * of the Store; end, on the loop again, takes the result in, frees the
 * write and returns its 0 or -errno. Samples added between begin and end
 * are kept for the next flush. One write at a time. */
typedef struct StoreWrite StoreWrite;
int store_flush_begin(Store *s, int64_t now, bool snapshot, StoreWrite **ret);
void store_write_run(StoreWrite *w);
int store_flush_end(Store *s, StoreWrite *w);
StoreWrite *store_write_free(StoreWrite *w);

/* The flushes, kept off the event loop (store-flush.c): appending and
 * fsync()ing, or writing a snapshot and renaming it, may take long on a
 * slow or hung /var, and the socket and the watchdog must not wait for
 * it. One write at a time (a WorkerSlot): a flush asked for while one is
 * out is skipped (the samples stay pending). A write has no deadline (what
 * it holds is lost if it is given up on, and a second writer must not race
 * it): it ends when the kernel returns. The pool refusing it, it is
 * written on the loop. A failure is logged once until it changes, and the
 * next flush tries again. 'dir' names the state directory in log lines. */
typedef struct StoreFlusher StoreFlusher;
int store_flusher_new(Store *s, WorkerPool *pool, const char *dir, StoreFlusher **ret);
void store_flusher_request(StoreFlusher *f, bool snapshot);
bool store_flusher_busy(const StoreFlusher *f);
/* A write here and now, on the loop: at exit only. */
void store_flusher_now(StoreFlusher *f, bool snapshot);
/* cb once no write is out: at once, or when the one out returns (not if
 * the pool cancels it). */
void store_flusher_when_idle(StoreFlusher *f, void (*cb)(void *userdata), void *userdata);
StoreFlusher *store_flusher_free(StoreFlusher *f);
DEFINE_FREE_FUNC(StoreFlusher, store_flusher_free);

/* The history of 'key' is a user's mount (tracker_mount_is_users()): when
 * histories must be dropped, it goes first. Kept in memory only: after a
 * restart such a history is told apart by its short life alone. */
void store_mark_users(Store *s, const char *key);

/* Drops histories not seen for longer than the longest ring reaches, and
 * beyond max_mounts, the system's last: users' mounts first, then those
 * that lived under an hour, each the least recently seen first. Returns
 * how many. */
size_t store_prune(Store *s, int64_t now);

size_t store_n_mounts(const Store *s);
size_t store_memory(const Store *s);
/* For iteration: histories in key order. */
const MountHistory *store_get(const Store *s, size_t i);

/* Parsing alone, for tests and fuzzers: loads 'snapshot' and 'journal' (either
 * may be NULL) as if read from the files. */
/* The policy changes file's text (STORE_CHANGES, JSON) into the histories
 * loaded: 0, or -EBADMSG with *ret_why saying what is wrong (nothing is
 * taken then). store_load() reads the file; this is for the fuzzer. */
int store_parse_changes(Store *s, const char *text, size_t len, const char **ret_why);
int store_load_buffers(Store *s, const void *snapshot, size_t snapshot_len, const void *journal, size_t journal_len,
                       struct store_load_report *ret);
