/* export.h: the Prometheus textfile for node_exporter's textfile collector.
 * The text is written from a Report snapshot in a worker thread (never on
 * the event loop), through an unpredictable temporary name in the target's
 * directory, and renamed over the target: node_exporter never reads half a
 * file, and nothing planted at a name we would use is followed or
 * overwritten. One export at a time: while one is out (or stuck on a hung
 * filesystem) later ones are skipped, so threads never pile up. */
#pragma once

#include <stdio.h>
#include <sys/types.h>

#include "report.h"
#include "worker.h"

typedef struct Exporter Exporter;

/* 'pool' must outlive the exporter's jobs: free the pool first. */
int exporter_new(WorkerPool *pool, Exporter **ret);
Exporter *exporter_free(Exporter *x);
/* An export is out (after the pool is freed: stuck on a filesystem that
 * does not answer, so the file is better left alone). */
bool exporter_busy(const Exporter *x);
DEFINE_FREE_FUNC(Exporter, exporter_free);

/* Wall and CPU time of a step (CPU: the calling thread's). */
typedef struct ExportTiming {
        uint64_t wall_usec, cpu_usec;
} ExportTiming;
void export_timing_start(ExportTiming *t);
void export_timing_stop(ExportTiming *t);

/* Takes 'report' (freed in any case), which took 'snapshot' to make
 * (logged at debug level with the worker's times). Returns -EBUSY if an
 * export is still out, 0 if one was submitted. */
int exporter_submit(Exporter *x, Report *report, const ExportTiming *snapshot, const char *path, mode_t mode,
                    uint64_t timeout_usec);

/* What write_fn writes to f becomes 'path', with 'mode', atomically: a new
 * file under a random name in the same directory (O_CREAT|O_EXCL|
 * O_NOFOLLOW), renamed over 'path'. -EPERM if the directory may be written
 * by anyone without the sticky bit (anyone could then swap what
 * node_exporter reads). */
typedef int (*export_write_fn)(FILE *f, void *userdata);
int export_write_file(const char *path, mode_t mode, export_write_fn write_fn, void *userdata);
