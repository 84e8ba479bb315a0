/* export.h: the Prometheus textfile for node_exporter's textfile collector.
 * The text is written from a Report snapshot in a worker thread (never on
 * the event loop), through an unpredictable temporary name in the target's
 * directory, and renamed over the target: node_exporter never reads half a
 * file, and nothing planted at a name we would use is followed or
 * overwritten. One export at a time: while one is out (or stuck on a hung
 * filesystem) later ones are skipped, so threads never pile up. */
#pragma once

#include <sys/types.h>

#include "report.h"
#include "worker.h"

typedef struct Exporter Exporter;

/* 'pool' must outlive the exporter's jobs: free the pool first. */
int exporter_new(WorkerPool *pool, Exporter **ret);
Exporter *exporter_free(Exporter *x);
DEFINE_FREE_FUNC(Exporter, exporter_free);

/* Takes 'report' (freed in any case), which took 'snapshot_usec' to make
 * (logged at debug level with the worker's times). Returns -EBUSY if an
 * export is still out, 0 if one was submitted. */
int exporter_submit(Exporter *x, Report *report, uint64_t snapshot_usec, const char *path, mode_t mode,
                    uint64_t timeout_usec);

/* The text into 'path' with 'mode', atomically: a new file under a random
 * name in the same directory (O_CREAT|O_EXCL|O_NOFOLLOW), renamed over
 * 'path'. -EPERM if the directory may be written by anyone without the
 * sticky bit (anyone could then swap what node_exporter reads). */
int export_write_file(const char *path, mode_t mode, const char *text, size_t len);
