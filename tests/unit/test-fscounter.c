/* test-fscounter: the kernel's transaction counters, parsed from the text
 * the kernel prints (xfs stats, jbd2 info), their bounds, the deltas
 * between readings, and where each is found. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "fscounter.h"

#define JBD2(n, h)                                                                                            \
        n " transactions (" n " requested), each up to 1365 blocks\n"                                         \
          "average: \n  0ms waiting for transaction\n  0ms request delay\n  4ms running transaction\n"        \
          "  0ms transaction was being locked\n  0ms flushing data (in ordered mode)\n"                       \
          "  0ms logging transaction\n  1123us average transaction commit time\n  " h                         \
          " handles per transaction\n  7 blocks per transaction\n  9 logged blocks per transaction\n"

static const char xfs_stats[] = "extent_alloc 0 0 0 0\nabt 0 0 0 0\nblk_map 0 0 0 0 0 0 0\n"
                                "xstrat 0 0\ntrans 12 25020 3\nig 0 0 0 0 0 0 0\n";

static void test_parse(void) {
        struct fs_count c;

        is_int(fscounter_parse_xfs(xfs_stats, &c), 0, "xfs stats parse");
        ok(c.valid && c.lo == 25032 && c.hi == 25032, "xfs: sync + async, exact (%llu)", (unsigned long long) c.lo);
        is_int(fscounter_parse_xfs("xstrat 0 0\ntransx 1 2 3\n", &c), -EBADMSG, "xfs: 'transx' is not 'trans'");
        ok(!c.valid, "and the reading is invalid");
        is_int(fscounter_parse_xfs("trans 1 2\n", &c), -EBADMSG, "xfs: two fields are not three");
        is_int(fscounter_parse_xfs("trans 18446744073709551615 1 0\n", &c), -EBADMSG, "xfs: an overflowing sum");

        is_int(fscounter_parse_jbd2(JBD2("1", "5"), &c), 0, "jbd2 info parses");
        ok(c.valid && c.lo == 5 && c.hi == 5 && c.commits == 1, "one transaction: its handles exactly");
        is_int(fscounter_parse_jbd2(JBD2("10", "4958"), &c), 0, "jbd2: ten transactions");
        ok(c.lo == 49580 && c.hi == 49589, "the whole-number average leaves up to n - 1 unknown (%llu-%llu)",
           (unsigned long long) c.lo, (unsigned long long) c.hi);
        is_int(fscounter_parse_jbd2(JBD2("0", "0"), &c), 0, "jbd2: no transaction yet");
        ok(c.valid && c.lo == 0 && c.hi == 0, "zero");
        is_int(fscounter_parse_jbd2("5 transactions (5 requested)\naverage:\n", &c), -EBADMSG, "jbd2: no handles line");
        is_int(fscounter_parse_jbd2("garbage", &c), -EBADMSG, "jbd2: not the file");
        is_int(fscounter_parse_jbd2(" handles per transaction\n", &c), -EBADMSG, "jbd2: a handles line without a number");
        is_int(fscounter_parse_jbd2(JBD2("18446744073709551615", "7"), &c), -EBADMSG, "jbd2: an overflowing product");
}

static void test_delta(void) {
        struct fs_count a = { true, 100, 100, 0 }, b = { true, 400, 400, 0 }, bad = {};
        struct fs_count j1 = { true, 49580, 49589, 10 }, j2 = { true, 99160, 99179, 20 };
        double lo, hi;

        ok(fscounter_delta(&a, &b, &lo, &hi) && lo == 300 && hi == 300, "exact counts: an exact delta");
        ok(!fscounter_delta(&bad, &b, &lo, &hi), "no delta from an invalid reading");
        ok(!fscounter_delta(&b, &a, &lo, &hi), "a counter that went back (mounted again): no delta");
        ok(fscounter_delta(&j1, &j2, &lo, &hi) && lo == 99160 - 49589 && hi == 99179 - 49580,
           "jbd2: the delta's bounds from both readings' (%g-%g)", lo, hi);
        ok(fscounter_delta(&j1, &j1, &lo, &hi) && lo == 0 && hi == 0, "no commit in between: exactly none");
}

static void test_find(void) {
        char dir[] = "/tmp/atimed-fscounter.XXXXXX", p[256];
        char *path = NULL;

        if (!mkdtemp(dir)) {
                ok(0, "mkdtemp");
                return;
        }
        snprintf(p, sizeof p, "%s/loop1-8", dir);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/loop10-8", dir);
        mkdir(p, 0755);
        is_int(fscounter_find("/sys", dir, "ext4", "loop1", &path), FS_COUNTER_JBD2, "ext4: its journal's entry");
        ok(path && strstr(path, "/loop1-8/info"), "loop1-8, not loop10-8 (%s)", path ? path : "(null)");
        free(path);
        is_int(fscounter_find("/sys", dir, "ext4", "loop2", &path), FS_COUNTER_NONE, "ext4 without a journal: none");
        ok(!path, "and no path");
        is_int(fscounter_find("/sys", dir, "xfs", "sda1", &path), FS_COUNTER_XFS, "xfs: under sysfs");
        is_str(path, "/sys/fs/xfs/sda1/stats/stats", "xfs's stats file");
        free(path);
        is_int(fscounter_find("/sys", dir, "btrfs", "sda1", &path), FS_COUNTER_NONE, "btrfs: none");
        is_int(fscounter_find("/sys", dir, "tmpfs", "", &path), FS_COUNTER_NONE, "no device: none");
        is_int(fscounter_find("/sys", dir, "xfs", "../../etc", &path), FS_COUNTER_NONE, "a name with a slash: none");
        is_int(fscounter_find("/sys", "/nonexistent-jbd2", "ext4", "loop1", &path), FS_COUNTER_NONE,
               "no jbd2 directory: none");
        snprintf(p, sizeof p, "%s/loop1-8", dir);
        rmdir(p);
        snprintf(p, sizeof p, "%s/loop10-8", dir);
        rmdir(p);
        rmdir(dir);
}

int main(void) {
        test_parse();
        test_delta();
        test_find();
        return tap_done();
}
