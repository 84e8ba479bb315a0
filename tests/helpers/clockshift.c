/* clockshift: an LD_PRELOAD shim that moves the wall clock of one process.
 * CLOCK_REALTIME (clock_gettime, gettimeofday, time) is offset by the
 * number of seconds in the file named by $CLOCKSHIFT_FILE, re-read every
 * 100 ms; CLOCK_MONOTONIC is left alone. A test jumps the daemon's clock
 * back or forth by writing that file, without touching the machine's. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static long offset;
static struct timespec last_read;

static void refresh(void) {
        const char *path = getenv("CLOCKSHIFT_FILE");
        struct timespec now;
        FILE *f;

        if (!real_clock_gettime)
                real_clock_gettime = (int (*)(clockid_t, struct timespec *)) dlsym(RTLD_NEXT, "clock_gettime");
        if (!path || real_clock_gettime(CLOCK_MONOTONIC, &now) < 0)
                return;
        if ((now.tv_sec - last_read.tv_sec) * 1000000000L + (now.tv_nsec - last_read.tv_nsec) < 100000000L &&
            last_read.tv_sec != 0)
                return;
        last_read = now;
        f = fopen(path, "re");
        if (f) {
                long v;
                if (fscanf(f, "%ld", &v) == 1)
                        offset = v;
                fclose(f);
        }
}

int clock_gettime(clockid_t id, struct timespec *ts) {
        int r;

        refresh();
        r = real_clock_gettime(id, ts);
        if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
                ts->tv_sec += offset;
        return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
        struct timespec ts;
        int r = clock_gettime(CLOCK_REALTIME, &ts);

        if (r == 0) {
                tv->tv_sec = ts.tv_sec;
                tv->tv_usec = ts.tv_nsec / 1000;
        }
        return r;
}

time_t time(time_t *t) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        if (t)
                *t = ts.tv_sec;
        return ts.tv_sec;
}
