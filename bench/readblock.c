/* readblock: the workload of the classic noatime benchmark (open, read
 * 1 KiB, close) over the files listed on stdin.
 *
 *   readblock [-b BYTES] [PASSES]   PASSES passes (default 1); prints the
 *                                   wall time per file in nanoseconds of
 *                                   each pass, one line per pass
 *   readblock [-b BYTES] [-i USEC] -t SECONDS
 *                                   passes until SECONDS have gone by, with
 *                                   a pause of USEC between passes;
 *                                   prints "files cpu_ns wall_ns": the
 *                                   files read, the process's own CPU time
 *                                   (user + system) and the wall time
 *
 * -b 0 opens and closes without reading (the open/close loop of the
 * directory-depth experiment; no atime is written then). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static double cpu_ns(void) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return ((double) ru.ru_utime.tv_sec + (double) ru.ru_stime.tv_sec) * 1e9 +
               ((double) ru.ru_utime.tv_usec + (double) ru.ru_stime.tv_usec) * 1e3;
}

static void one_pass(char **files, size_t n, size_t bytes) {
        char buf[65536];

        for (size_t i = 0; i < n; i++) {
                int fd = open(files[i], O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        if (bytes > 0 && read(fd, buf, bytes) < 0)
                                perror("read");
                        close(fd);
                }
        }
}

int main(int argc, char *argv[]) {
        char **files = NULL, line[4096];
        size_t n = 0, alloc = 0, bytes = 1024;
        double seconds = 0;
        long pause_us = 0;
        int passes = 1, opt;

        while ((opt = getopt(argc, argv, "b:i:t:")) != -1)
                switch (opt) {
                case 'b':
                        bytes = strtoul(optarg, NULL, 10);
                        break;
                case 'i':
                        pause_us = atol(optarg);
                        break;
                case 't':
                        seconds = atof(optarg);
                        break;
                default:
                        goto usage;
                }
        if (optind < argc)
                passes = atoi(argv[optind]);
        if (bytes > 65536)
                bytes = 65536;
        while (fgets(line, sizeof line, stdin)) {
                line[strcspn(line, "\n")] = 0;
                if (!*line)
                        continue;
                if (n == alloc && !(files = realloc(files, (alloc = alloc ? 2 * alloc : 4096) * sizeof *files)))
                        return 1;
                if (!(files[n++] = strdup(line)))
                        return 1;
        }
        if (n == 0 || passes < 1 || seconds < 0)
                goto usage;
        if (seconds > 0) {
                double start = now_ns(), cpu0 = cpu_ns(), end = start + seconds * 1e9, t;
                unsigned long long done = 0;

                do {
                        one_pass(files, n, bytes);
                        done += n;
                        if (pause_us > 0)
                                nanosleep(&(struct timespec){ pause_us / 1000000, pause_us % 1000000 * 1000 }, NULL);
                } while ((t = now_ns()) < end);
                printf("%llu %.0f %.0f\n", done, cpu_ns() - cpu0, t - start);
        } else
                for (int p = 0; p < passes; p++) {
                        double start = now_ns();

                        one_pass(files, n, bytes);
                        printf("%.1f\n", (now_ns() - start) / (double) n);
                }
        for (size_t i = 0; i < n; i++)
                free(files[i]);
        free(files);
        return 0;
usage:
        fprintf(stderr, "usage: readblock [-b BYTES] [-i USEC] [-t SECONDS | PASSES] < list\n");
        return 2;
}
