/* readload: a read workload with a known rate. Reads (open, read 1 KiB,
 * close) the files listed on stdin, in order and wrapping around, at RATE
 * files per second for SECONDS, paced against the clock so the count per
 * second is exact. Prints the start and end as Unix times with fractions:
 *
 *   readload RATE SECONDS [TIMES] < list
 *   start 1795993481.512
 *   end 1795993491.513 reads 4000
 *
 * With TIMES, the time of every read goes there, one per line: under load
 * the pace slips, and a test then counts what really happened in a window. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_real(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char *argv[]) {
        char **files = NULL, line[4096], buf[1024];
        size_t n = 0, alloc = 0, reads = 0;
        double rate, seconds, start;
        FILE *times = NULL;

        if ((argc != 3 && argc != 4) || (rate = atof(argv[1])) <= 0 || (seconds = atof(argv[2])) <= 0) {
                fprintf(stderr, "usage: readload RATE SECONDS [TIMES] < list\n");
                return 2;
        }
        if (argc == 4 && !(times = fopen(argv[3], "w"))) {
                perror(argv[3]);
                return 1;
        }
        while (fgets(line, sizeof line, stdin)) {
                line[strcspn(line, "\n")] = 0;
                if (!*line)
                        continue;
                if (n == alloc && !(files = realloc(files, (alloc = alloc ? 2 * alloc : 1024) * sizeof *files)))
                        return 1;
                if (!(files[n++] = strdup(line)))
                        return 1;
        }
        if (n == 0)
                return 2;
        start = now_real();
        printf("start %.3f\n", start);
        fflush(stdout);
        for (;;) {
                double due = start + (double) reads / rate, now = now_real();
                int fd;

                if (due >= start + seconds)
                        break;
                if (due > now) {
                        struct timespec ts = { (time_t) (due - now), (long) (((due - now) - (time_t) (due - now)) * 1e9) };
                        nanosleep(&ts, NULL);
                }
                fd = open(files[reads % n], O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        if (read(fd, buf, sizeof buf) < 0)
                                perror("read");
                        close(fd);
                }
                if (times)
                        fprintf(times, "%.4f\n", now_real());
                reads++;
        }
        printf("end %.3f reads %zu\n", now_real(), reads);
        if (times)
                fclose(times);
        for (size_t i = 0; i < n; i++)
                free(files[i]);
        free(files);
        return 0;
}
