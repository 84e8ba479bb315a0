/* test-device: /proc/diskstats parsing (kernels print 11, 15 or 17 counters;
 * odd lines are counted, not fatal) and rates between two readings. */
#include <string.h>
#include <sys/sysmacros.h>

#include "../tap.h"
#include "device.h"

int main(void) {
        _cleanup_(diskstats_freep) DiskStats *s = NULL;
        char path[4096];
        const DiskStat *d;
        struct device_rate rate;

        snprintf(path, sizeof path, "%s/tests/fixtures/diskstats/basic", getenv("top_srcdir") ?: ".");
        ok(diskstats_read(path, &s) == 0, "fixture parses");
        if (!s)
                return tap_done();
        is_int(s->n, 6, "six devices: 11, 15 and 17 counter formats");
        is_int(s->n_bad_lines, 3, "garbage, a short line and an overlong name are counted as bad");
        ok((d = diskstats_find(s, 8, 0)) && d->writes == 2000 && d->write_sectors == 160000 && streq(d->name, "sda"),
           "sda: writes completed and sectors written");
        ok((d = diskstats_find(s, 8, 1)) && d->writes == 1900 && d->write_sectors == 150000, "sda1 (11 counters)");
        ok((d = diskstats_find(s, 9, 0)) && d->writes == 5 && d->write_sectors == 7, "md0 (7 counters minimum)");
        ok(!diskstats_find(s, 8, 16), "the overlong line is not half-parsed");

        {
                DiskStat a = { .writes = 100, .write_sectors = 2048 }, b = { .writes = 160, .write_sectors = 4096 };

                device_rate(&a, &b, 2.0, &rate);
                ok(rate.valid && rate.write_iops == 30.0 && rate.write_kib_per_s == 512.0, "rate: 30 IO/s, 512 KiB/s");
                device_rate(&b, &a, 2.0, &rate);
                ok(!rate.valid, "a counter going backwards (device re-created) gives no rate");
                device_rate(&a, &b, 0, &rate);
                ok(!rate.valid, "no time elapsed gives no rate");
        }
        {
                _cleanup_(diskstats_freep) DiskStats *e = NULL;

                ok(diskstats_parse("", 0, &e) == 0 && e->n == 0, "empty input");
        }
        {
                DeviceInfo info;

                ok(device_resolve("/nonexistent-sysfs", "/dev", makedev(8, 0), "/dev/sda", &info) == 0 &&
                           info.kind == DEVICE_NONE,
                   "a device sysfs does not know is 'none', not an error");
                device_info_done(&info);
                ok(device_resolve("/sys", "/dev", makedev(0, 40), "tmpfs", &info) == 0 && info.kind == DEVICE_NONE,
                   "an anonymous device without a /dev source is 'none'");
                device_info_done(&info);
        }
        return tap_done();
}
