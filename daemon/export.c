/* export.c: the textfile export (see export.h). */
#include "export.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "metrics.h"
#include "time-util.h"

/* The next export, handed over by exporter_submit() and made into a job
 * by the slot at once. */
struct export_next {
        Report *report;
        const char *path; /* the caller's, until the job copies it */
        mode_t mode;
        ExportTiming snapshot;
};

struct Exporter {
        WorkerSlot *slot;    /* one export out at a time, maybe stuck past its deadline */
        struct export_next next;
        int last_error;      /* logged once until it changes */
};

struct export_job {
        Exporter *exporter;
        Report *report;
        char *path;
        mode_t mode;
        int r;
        /* For the benchmark (bench/scale-export.sh), at debug level. */
        size_t n_mounts;
        ExportTiming snapshot, write;
};

void export_timing_start(ExportTiming *t) {
        t->wall_usec = now_usec(CLOCK_MONOTONIC);
        t->cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID);
}

void export_timing_stop(ExportTiming *t) {
        t->wall_usec = now_usec(CLOCK_MONOTONIC) - t->wall_usec;
        t->cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - t->cpu_usec;
}

static const WorkerSlotOps export_ops;

int exporter_new(WorkerPool *pool, Exporter **ret) {
        Exporter *x = calloc(1, sizeof *x);
        int r;

        if (!x)
                return -ENOMEM;
        r = worker_slot_new(pool, &export_ops, x, &x->slot);
        if (r < 0) {
                free(x);
                return r;
        }
        *ret = x;
        return 0;
}

bool exporter_busy(const Exporter *x) {
        return x && worker_slot_busy(x->slot);
}

Exporter *exporter_free(Exporter *x) {
        if (!x)
                return NULL;
        worker_slot_free(x->slot);
        free(x);
        return NULL;
}

/* The export may go to a directory others can write to (node_exporter's
 * textfile directory): one where anybody could rename or remove our files
 * (world-writable without the sticky bit) is refused. */
static int check_directory(int dfd) {
        struct stat st;

        if (fstat(dfd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
                return -EPERM;
        return 0;
}

int export_write_file(const char *path, mode_t mode, export_write_fn write_fn, void *userdata) {
        _cleanup_free_ char *d = strdup(path), *b = strdup(path);
        _cleanup_close_ int dfd = -1;
        const char *base;
        int r;

        assert(path && write_fn);
        if (!d || !b)
                return -ENOMEM;
        base = basename(b);
        dfd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        r = check_directory(dfd);
        if (r < 0)
                return r;
        /* Whatever the umask: node_exporter runs as another user. */
        return write_file_atomic_at(dfd, base, mode, 0, write_fn, userdata);
}

static void export_job_free(void *job) {
        struct export_job *j = job;

        report_free(j->report);
        free(j->path);
        free(j);
}

static int export_make(void *userdata, void **ret) {
        Exporter *x = userdata;
        struct export_job *j = calloc(1, sizeof *j);

        if (!j || !(j->path = strdup(x->next.path))) {
                free(j);
                return -ENOMEM;
        }
        j->exporter = x;
        j->report = TAKE_PTR(x->next.report);
        j->mode = x->next.mode;
        j->n_mounts = j->report->n_mounts;
        j->snapshot = x->next.snapshot;
        *ret = j;
        return 0;
}

static int write_metrics(FILE *f, void *userdata) {
        return metrics_write(f, userdata);
}

/* In the worker: the text from the snapshot, straight into the file. */
static void export_work(void *arg, const atomic_bool *cancel) {
        struct export_job *j = arg;

        if (atomic_load(cancel))
                return;
        export_timing_start(&j->write);
        j->r = export_write_file(j->path, j->mode, write_metrics, j->report);
        export_timing_stop(&j->write);
}

static void export_done(void *userdata, void *job, WorkerStatus status) {
        Exporter *x = userdata;
        struct export_job *j = job;
        int r = status == WORKER_DONE ? j->r : 0;

        if (status == WORKER_TIMED_OUT) {
                /* The thread still holds j; the next export waits for it. */
                log_warning("Writing %s timed out; no more exports until it returns.", j->path);
                return;
        }
        if (r < 0 && r != x->last_error)
                log_warning_errno(r, "Cannot write %s: %m", j->path);
        else if (r >= 0 && x->last_error < 0 && status == WORKER_DONE)
                log_info("Writing %s again.", j->path);
        if (status == WORKER_DONE) {
                x->last_error = r;
                log_debug("Exported %zu mounts to %s: snapshot %.3f ms (CPU %.3f) on the loop; "
                          "text written %.3f ms (CPU %.3f) in a worker",
                          j->n_mounts, j->path, j->snapshot.wall_usec / 1e3, j->snapshot.cpu_usec / 1e3,
                          j->write.wall_usec / 1e3, j->write.cpu_usec / 1e3);
        }
}

static const WorkerSlotOps export_ops = {
        .make = export_make,
        .run = export_work,
        .done = export_done,
        .free = export_job_free,
        /* No 'again': an export asked for while one is out is skipped.
         * Never on the loop: the target may be on a filesystem that hangs. */
};

int exporter_submit(Exporter *x, Report *report, const ExportTiming *snapshot, const char *path, mode_t mode,
                    uint64_t timeout_usec) {
        int r;

        if (worker_slot_busy(x->slot)) {
                report_free(report);
                return -EBUSY;
        }
        x->next = (struct export_next) { .report = report, .path = path, .mode = mode, .snapshot = *snapshot };
        r = worker_slot_start(x->slot, timeout_usec);
        /* Made into a job or not, the report is no longer the caller's. */
        x->next.report = report_free(x->next.report);
        x->next.path = NULL;
        return r < 0 ? r : 0;
}
