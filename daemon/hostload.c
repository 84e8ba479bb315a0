/* hostload.c: whether the host's CPUs are idle but for atimed (see
 * hostload.h). */
#include "hostload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "time-util.h"

int hostload_parse(const char *text, uint64_t *ret_busy, uint64_t *ret_total) {
        uint64_t v[8], busy = 0, total = 0;
        const char *l = text;

        /* The aggregate line is the first, but a line of its own wherever
         * it is. */
        while (l && strncmp(l, "cpu ", 4) != 0) {
                l = strchr(l, '\n');
                l = l ? l + 1 : NULL;
        }
        if (!l || sscanf(l, "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                            " %" SCNu64,
                         &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
                return -EBADMSG;
        for (size_t i = 0; i < 8; i++) {
                if (total + v[i] < total)
                        return -EBADMSG;
                total += v[i];
                busy += i == 3 || i == 4 ? 0 : v[i]; /* idle, iowait */
        }
        *ret_busy = busy;
        *ret_total = total;
        return 0;
}

bool hostload_step(HostLoad *h, uint64_t busy, uint64_t total, uint64_t self_usec, uint64_t hz) {
        bool idle = h->have && total > h->total && busy >= h->busy && self_usec >= h->self_usec;

        if (idle) {
                double others = (double) (busy - h->busy) - (double) (self_usec - h->self_usec) * (double) hz / 1e6;

                idle = others < HOSTLOAD_IDLE_SHARE * (double) (total - h->total);
        }
        *h = (HostLoad) { .have = true, .busy = busy, .total = total, .self_usec = self_usec };
        return idle;
}

bool hostload_look(HostLoad *h, const char *stat_path) {
        /* The aggregate line comes first: one read of a page has it, where
         * the whole file (a line per CPU, per interrupt) may be large. */
        char buf[4096];
        _cleanup_close_ int fd = open_regular_at(AT_FDCWD, stat_path, 0);
        uint64_t busy, total, self;
        struct rusage ru;
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);

        if (n > 0)
                buf[n] = '\0';
        if (n <= 0 || hostload_parse(buf, &busy, &total) < 0 || getrusage(RUSAGE_SELF, &ru) < 0) {
                hostload_forget(h);
                return false;
        }
        self = (uint64_t) ru.ru_utime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_utime.tv_usec +
               (uint64_t) ru.ru_stime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_stime.tv_usec;
        return hostload_step(h, busy, total, self, (uint64_t) MAX(sysconf(_SC_CLK_TCK), 1L));
}

void hostload_forget(HostLoad *h) {
        h->have = false;
}
