/* readblock: the workload of the classic noatime benchmark (open, read
 * 1 KiB, close) over the files listed on stdin, PASSES times; prints the
 * wall time per file in nanoseconds of each pass, one line per pass. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

int main(int argc, char *argv[]) {
        char **files = NULL, line[4096], buf[1024];
        size_t n = 0, alloc = 0;
        int passes = argc > 1 ? atoi(argv[1]) : 1;

        while (fgets(line, sizeof line, stdin)) {
                line[strcspn(line, "\n")] = 0;
                if (!*line)
                        continue;
                if (n == alloc && !(files = realloc(files, (alloc = alloc ? 2 * alloc : 4096) * sizeof *files)))
                        return 1;
                if (!(files[n++] = strdup(line)))
                        return 1;
        }
        if (n == 0 || passes < 1) {
                fprintf(stderr, "usage: readblock [PASSES] < list\n");
                return 2;
        }
        for (int p = 0; p < passes; p++) {
                double start = now_ns();

                for (size_t i = 0; i < n; i++) {
                        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
                        if (fd >= 0) {
                                if (read(fd, buf, sizeof buf) < 0)
                                        perror("read");
                                close(fd);
                        }
                }
                printf("%.1f\n", (now_ns() - start) / (double) n);
        }
        for (size_t i = 0; i < n; i++)
                free(files[i]);
        free(files);
        return 0;
}
