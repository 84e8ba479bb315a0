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

struct Exporter {
        WorkerPool *pool;
        bool busy;     /* a job is out, maybe stuck past its deadline */
        int last_error; /* logged once until it changes */
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

int exporter_new(WorkerPool *pool, Exporter **ret) {
        Exporter *x = calloc(1, sizeof *x);

        if (!x)
                return -ENOMEM;
        x->pool = pool;
        *ret = x;
        return 0;
}

bool exporter_busy(const Exporter *x) {
        return x && x->busy;
}

Exporter *exporter_free(Exporter *x) {
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

static void export_job_free(struct export_job *j) {
        report_free(j->report);
        free(j->path);
        free(j);
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

static void export_done(void *arg, WorkerStatus status) {
        struct export_job *j = arg;
        Exporter *x = j->exporter;
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
        x->busy = false;
        export_job_free(j);
}

int exporter_submit(Exporter *x, Report *report, const ExportTiming *snapshot, const char *path, mode_t mode,
                    uint64_t timeout_usec) {
        struct export_job *j;
        int r;

        if (x->busy) {
                report_free(report);
                return -EBUSY;
        }
        j = calloc(1, sizeof *j);
        if (!j || !(j->path = strdup(path))) {
                free(j);
                report_free(report);
                return -ENOMEM;
        }
        *j = (struct export_job) { .exporter = x, .report = report, .path = j->path, .mode = mode,
                                   .n_mounts = report->n_mounts, .snapshot = *snapshot };
        r = worker_submit(x->pool, export_work, export_done, j, timeout_usec);
        if (r < 0) {
                export_job_free(j);
                return r;
        }
        x->busy = true;
        return 0;
}
