/* tracecount: the running count of a tracefs instance's events, every
 * PERIOD_MS, as "UNIX-TIME COUNT" lines, until killed or SECONDS pass:
 *
 *   tracecount INSTANCE-DIR PERIOD_MS SECONDS
 *
 * The count is the sum over CPUs of per_cpu/cpuN/stats "entries" (in the
 * buffer) and "overrun" (written and overwritten): every event recorded,
 * however small the buffer, with nobody reading the events. A test uses it
 * as the kernel's count of atime updates: the instance's filter picks the
 * device (and leaves out inodes that are not read). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long cpu_count(const char *dir, const char *cpu) {
        char path[4096], line[256];
        long long entries = -1, overrun = -1, v;
        FILE *f;

        snprintf(path, sizeof path, "%s/per_cpu/%s/stats", dir, cpu);
        if (!(f = fopen(path, "re")))
                return 0;
        while (fgets(line, sizeof line, f)) {
                if (sscanf(line, "entries: %lld", &v) == 1)
                        entries = v;
                else if (sscanf(line, "overrun: %lld", &v) == 1)
                        overrun = v;
        }
        fclose(f);
        return (entries < 0 ? 0 : entries) + (overrun < 0 ? 0 : overrun);
}

static long long count(const char *dir) {
        char path[4096];
        long long sum = 0;
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof path, "%s/per_cpu", dir);
        if (!(d = opendir(path)))
                return -1;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "cpu", 3) == 0)
                        sum += cpu_count(dir, de->d_name);
        closedir(d);
        return sum;
}

int main(int argc, char *argv[]) {
        struct timespec start, now, ts;
        double period, seconds;

        if (argc != 4 || (period = atof(argv[2])) <= 0 || (seconds = atof(argv[3])) <= 0) {
                fprintf(stderr, "usage: tracecount INSTANCE-DIR PERIOD_MS SECONDS\n");
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &start);
        ts = (struct timespec) { (time_t) (period / 1000), (long) ((period - (time_t) (period / 1000) * 1000) * 1e6) };
        for (;;) {
                struct timespec real;
                long long c;

                clock_gettime(CLOCK_REALTIME, &real);
                c = count(argv[1]);
                if (c < 0) {
                        perror(argv[1]);
                        return 1;
                }
                printf("%lld.%06ld %lld\n", (long long) real.tv_sec, real.tv_nsec / 1000, c);
                fflush(stdout);
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((double) (now.tv_sec - start.tv_sec) + (double) (now.tv_nsec - start.tv_nsec) / 1e9 >= seconds)
                        return 0;
                nanosleep(&ts, NULL);
        }
}
