/* consumers.h: who reads atime, and where. A mount with an atime consumer
 * must never get noatime: mbox new-mail checks, tmp cleaners whose age rules
 * include atime (systemd-tmpfiles, tmpreaper, tmpwatch), popularity-contest.
 * Parsers are pure (text in, consumers out) for tests and fuzzers; the scan
 * reads files and lists directories and so runs in a worker. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "worker.h"

typedef enum ConsumerKind {
        CONSUMER_MAIL,
        CONSUMER_TMPFILES,
        CONSUMER_TMPREAPER,
        CONSUMER_TMPWATCH,
        CONSUMER_POPCON,
        CONSUMER_CONFIG, /* [mount:PATH] needs_atime */
        _CONSUMER_KIND_MAX,
} ConsumerKind;

/* What a consumer needs, weakest first. */
typedef enum AtimeNeed {
        NEED_NONE,
        NEED_RELATIME, /* atime to within a day, and after every change: relatime does it */
        NEED_STRICT,   /* every read: only strictatime does it */
        _NEED_MAX,
} AtimeNeed;

const char *consumer_kind_to_string(ConsumerKind k);
const char *atime_need_to_string(AtimeNeed n);
int atime_need_from_string(const char *s);

struct consumer {
        ConsumerKind kind;
        AtimeNeed need;
        char *path;   /* the directory whose atimes matter */
        char *why;    /* for people: what reads atime there */
        char *source; /* where it was found: "/etc/tmpfiles.d/tmp.conf:3" */
        bool private; /* found in a file others cannot read: 'why' says no more
                       * than that, and 'path' is for privileged callers only */
        char *resolved; /* path with symlinks resolved (by consumers_scan()), or NULL: what lies on a mount */
};

typedef struct Consumers {
        struct consumer *v;
        size_t n;
        char **notes; /* lines skipped and why, for debugging */
} Consumers;

struct consumers_paths {
        char *const *tmpfiles_dirs; /* highest precedence first */
        char *const *mail_spools;
        const char *tmpreaper_conf;
        const char *tmpwatch_cron;
        const char *popcon_conf;
};

int consumers_new(Consumers **ret);
Consumers *consumers_free(Consumers *c);
DEFINE_FREE_FUNC(Consumers, consumers_free);
int consumers_add(Consumers *c, ConsumerKind kind, AtimeNeed need, const char *path, const char *why, const char *source);

/* One tmpfiles.d file, tmpreaper.conf, a tmpwatch cron script, and
 * popularity-contest.conf; 'name' is used in sources and notes. */
int consumers_parse_tmpfiles(Consumers *c, const char *name, const char *text, size_t len);
int consumers_parse_tmpreaper(Consumers *c, const char *name, const char *text, size_t len);
int consumers_parse_tmpwatch(Consumers *c, const char *name, const char *text, size_t len);
int consumers_parse_popcon(Consumers *c, const char *name, const char *text, size_t len);

/* Reads everything. Blocking: for a worker. Missing files are fine. */
int consumers_scan(const struct consumers_paths *p, Consumers **ret);

/* The scan kept current: it reads files anywhere (mail spools on NFS,
 * say), so it runs in a worker, never on the loop, one at a time (a
 * WorkerSlot); a request meanwhile (a reload) is served by one more scan
 * when it is back. One that times out is logged and its result, if it ever
 * comes, dropped. Each scan's job holds its own copy of the paths (taken on
 * the loop as it starts); the scanner borrows 'paths' itself until the next
 * consumer_scanner_configure(). A completed scan's list goes to 'found',
 * which takes it. */
typedef struct ConsumerScanner ConsumerScanner;
typedef void (*consumer_scanner_found_fn)(Consumers *c, void *userdata);
int consumer_scanner_new(WorkerPool *pool, consumer_scanner_found_fn found, void *userdata, ConsumerScanner **ret);
void consumer_scanner_configure(ConsumerScanner *s, const struct consumers_paths *paths, uint64_t timeout_usec);
/* A scan in the background. */
void consumer_scanner_request(ConsumerScanner *s);
bool consumer_scanner_busy(const ConsumerScanner *s);
ConsumerScanner *consumer_scanner_free(ConsumerScanner *s);
DEFINE_FREE_FUNC(ConsumerScanner, consumer_scanner_free);

/* The strongest need among consumers whose path lies on the mount at
 * 'target' (and no more specific tracked mount: 'others' lists every tracked
 * mount point), and the consumer that sets it; NEED_NONE and NULL if none. */
AtimeNeed consumers_need_for_mount(const Consumers *c, const char *target, char *const *others,
                                   const struct consumer **ret_strongest);

/* The index in 'targets' of the mount consumer i's path lies on (the
 * deepest mount point above it), or -1. */
ssize_t consumers_owner(const Consumers *c, size_t i, char *const *targets, size_t n_targets);
