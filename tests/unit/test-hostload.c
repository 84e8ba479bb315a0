/* test-hostload: whether the host was idle but for atimed, from plain
 * counters (/proc/stat's text, ticks, microseconds), and from a stat file
 * at a path of the test's own: the first look says no, a look whose
 * counters went back says no, others' use past a tenth says no, atimed's
 * own use is not counted against the host, and an unreadable or malformed
 * file says no. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "hostload.h"

static void test_parse(void) {
        uint64_t busy = 0, total = 0;

        is_int(hostload_parse("cpu  100 5 50 800 20 3 2 1 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n", &busy, &total), 0,
               "the aggregate line parses");
        ok(busy == 161 && total == 981, "busy is all but idle and iowait (%llu of %llu)", (unsigned long long) busy,
           (unsigned long long) total);
        is_int(hostload_parse("intr 1 2 3\ncpu  1 2 3 4 5 6 7 8\n", &busy, &total), 0, "found where it stands");
        ok(busy == 27 && total == 36, "and read (%llu of %llu)", (unsigned long long) busy, (unsigned long long) total);
        is_int(hostload_parse("cpu0 1 2 3 4 5 6 7 8\n", &busy, &total), -EBADMSG, "a CPU's line is not the aggregate");
        is_int(hostload_parse("cpu  1 2 3 4 5 6 7\n", &busy, &total), -EBADMSG, "seven fields are too few");
        is_int(hostload_parse("", &busy, &total), -EBADMSG, "empty");
        is_int(hostload_parse("cpu  18446744073709551615 1 0 0 0 0 0 0\n", &busy, &total), -EBADMSG,
               "an overflowing sum");
}

static void test_step(void) {
        HostLoad h = {};
        const uint64_t hz = 100;

        ok(!hostload_step(&h, 1000, 10000, 0, hz), "the first look says no");
        /* 2 CPUs for 1 s: 200 ticks; 10 busy: 5%. */
        ok(hostload_step(&h, 1010, 10200, 0, hz), "5%% busy: idle");
        ok(!hostload_step(&h, 1040, 10400, 0, hz), "15%% busy: not idle");
        /* 60 ticks busy, 50 of them atimed's own (0.5 s): the others' 10 are 5%. */
        ok(hostload_step(&h, 1100, 10600, 500000, hz), "atimed's own time is not the host's");
        ok(!hostload_step(&h, 1160, 10800, 600000, hz), "the rest of 60 ticks, 50 past atimed's 10: not idle");
        ok(!hostload_step(&h, 100, 200, 600000, hz), "counters that went back (a new boot's file): not idle");
        ok(hostload_step(&h, 100, 400, 600000, hz), "and the look after compares with that one");
        hostload_forget(&h);
        ok(!hostload_step(&h, 100, 600, 600000, hz), "forgotten: the next look begins a window");
        ok(!hostload_step(&h, 100, 600, 600000, hz), "no tick passed: no window to judge");
}

static void test_look(void) {
        char dir[] = "/tmp/test-hostload.XXXXXX", path[128];
        HostLoad h = {};
        FILE *f;

        if (!mkdtemp(dir)) {
                ok(0, "mkdtemp");
                return;
        }
        snprintf(path, sizeof path, "%s/stat", dir);
        ok(!hostload_look(&h, path), "a file that is not there: no");
        ok(!h.have, "and no look to compare with");
        f = fopen(path, "we");
        fputs("cpu  10 0 0 1000 0 0 0 0\n", f);
        fclose(f);
        ok(!hostload_look(&h, path), "the first look at a file says no");
        ok(h.have && h.busy == 10 && h.total == 1010, "and keeps its counters");
        f = fopen(path, "we");
        fputs("cpu  11 0 0 2000 0 0 0 0\n", f);
        fclose(f);
        ok(hostload_look(&h, path), "a thousand idle ticks later: idle (atimed's own use is its rusage)");
        f = fopen(path, "we");
        fputs("cpu  3011 0 0 2000 0 0 0 0\n", f);
        fclose(f);
        ok(!hostload_look(&h, path), "three thousand busy ticks later: not idle");
        f = fopen(path, "we");
        fputs("garbage\n", f);
        fclose(f);
        ok(!hostload_look(&h, path) && !h.have, "a file that is not /proc/stat: no, and forgotten");
        unlink(path);
        ok(mkfifo(path, 0600) == 0, "a FIFO where the file was");
        ok(!hostload_look(&h, path), "is not read (nor waited on)");
        unlink(path);
        rmdir(dir);
}

int main(void) {
        test_parse();
        test_step();
        test_look();
        return tap_done();
}
