/* test-device: /proc/diskstats parsing (kernels print 11, 15 or 17 counters;
 * odd lines are counted, not fatal) and rates between two readings. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../tap.h"
#include "device.h"

/* A small sysfs: a disk with a partition, a dm device on a loop device, an
 * md array, the way the kernel lays them out. */
static char sysfs[128];

static void put(const char *rel, const char *content) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", sysfs, rel);
        for (char *s = strchr(p + strlen(sysfs) + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = 0;
                mkdir(p, 0755);
                *s = '/';
        }
        if (content && (f = fopen(p, "w"))) {
                fputs(content, f);
                fclose(f);
        } else if (!content)
                mkdir(p, 0755);
}

static void link_dev(const char *majmin, const char *target) {
        char p[512];

        snprintf(p, sizeof p, "%s/dev/block/%s", sysfs, majmin);
        symlink(target, p);
}

static void make_sysfs(void) {
        strcpy(sysfs, "/tmp/atimed-sysfs.XXXXXX");
        if (!mkdtemp(sysfs))
                exit(1);
        put("dev/block", NULL);
        put("devices/pci0/block/sda/queue/rotational", "1\n");
        put("devices/pci0/block/sda/sda1/partition", "1\n");
        put("devices/virtual/block/dm-0/dm/name", "vg-root\n");
        put("devices/virtual/block/dm-0/slaves/loop3", NULL);
        put("devices/virtual/block/dm-0/queue/rotational", "0\n");
        put("devices/virtual/block/md0/slaves/sdb", NULL);
        put("devices/virtual/block/md0/slaves/sdc", NULL);
        put("devices/virtual/block/md0/queue/rotational", "1\n");
        put("devices/virtual/block/loop3/loop/backing_file", "/var/lib/images/x.img\n");
        put("devices/virtual/block/loop3/queue/rotational", "1\n");
        link_dev("8:0", "../../devices/pci0/block/sda");
        link_dev("8:1", "../../devices/pci0/block/sda/sda1");
        link_dev("253:0", "../../devices/virtual/block/dm-0");
        link_dev("9:0", "../../devices/virtual/block/md0");
        link_dev("7:3", "../../devices/virtual/block/loop3");
}

/* A mount with an anonymous device names its block device by its source,
 * which whoever mounted it chose: looked up in devfs only, never through
 * "..", an absolute symlink or another mount (a stopped FUSE mount there
 * would hang the event loop). Needs root (mknod, a mount namespace). */
static void test_source_lookup(void) {
        char devfs[] = "/tmp/test-device-dev.XXXXXX", p[256], src[512];
        DeviceInfo d;

        if (geteuid() != 0 || !mkdtemp(devfs)) {
                printf("ok - # SKIP the lookup of a source needs root\n");
                return;
        }
        snprintf(p, sizeof p, "%s/sda1", devfs);
        ok(mknod(p, S_IFBLK | 0600, makedev(8, 1)) == 0, "a block device node in a devfs of the test's");
        ok(device_resolve(sysfs, devfs, makedev(0, 50), "/dev/sda1", &d) == 0 && d.kind == DEVICE_PARTITION &&
                   streq(d.name, "sda1"),
           "an anonymous device: its /dev source names the real one");
        device_info_done(&d);
        snprintf(p, sizeof p, "%s/mapper", devfs);
        (void) mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/mapper/vg", devfs);
        ok(symlink("../sda1", p) == 0 && device_resolve(sysfs, devfs, makedev(0, 50), "/dev/mapper/vg", &d) == 0 &&
                   d.kind == DEVICE_PARTITION,
           "through a symlink within devfs, as /dev/mapper's");
        device_info_done(&d);
        snprintf(src, sizeof src, "/dev/../%s/sda1", strrchr(devfs, '/') + 1); /* devfs itself, reached from above */
        ok(device_resolve(sysfs, devfs, makedev(0, 50), src, &d) == 0 && d.kind == DEVICE_NONE,
           "not through '..' (%s)", src);
        device_info_done(&d);
        snprintf(p, sizeof p, "%s/esc", devfs);
        snprintf(src, sizeof src, "%s/sda1", devfs);
        ok(symlink(src, p) == 0 && device_resolve(sysfs, devfs, makedev(0, 50), "/dev/esc", &d) == 0 &&
                   d.kind == DEVICE_NONE,
           "nor through an absolute symlink");
        device_info_done(&d);
        snprintf(p, sizeof p, "%s/shm", devfs);
        if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 && mkdir(p, 0755) == 0 &&
            mount("tmpfs", p, "tmpfs", 0, NULL) == 0) {
                snprintf(p, sizeof p, "%s/shm/sda1", devfs);
                ok(mknod(p, S_IFBLK | 0600, makedev(8, 1)) == 0 &&
                           device_resolve(sysfs, devfs, makedev(0, 50), "/dev/shm/sda1", &d) == 0 && d.kind == DEVICE_NONE,
                   "nor into another mount below devfs (a user's FUSE mount in /dev/shm would hang the lookup)");
                device_info_done(&d);
                snprintf(p, sizeof p, "%s/shm", devfs);
                (void) umount2(p, MNT_DETACH);
        } else
                printf("ok - # SKIP no mount namespace\n");
        snprintf(src, sizeof src, "rm -rf '%s'", devfs);
        if (system(src) != 0)
                printf("# could not remove %s\n", devfs);
}

static void test_resolve(void) {
        DeviceInfo d;
        char cmd[256];

        make_sysfs();
        ok(device_resolve(sysfs, "/dev", makedev(8, 1), "/dev/sda1", &d) == 0 && d.kind == DEVICE_PARTITION &&
                   streq(d.name, "sda1") && streq_ptr(d.parents, "sda") && d.rotational == 1,
           "a partition: its disk, and the disk's rotational flag");
        device_info_done(&d);
        ok(device_resolve(sysfs, "/dev", makedev(8, 0), "/dev/sda", &d) == 0 && d.kind == DEVICE_DISK && !d.parents,
           "a whole disk");
        device_info_done(&d);
        ok(device_resolve(sysfs, "/dev", makedev(253, 0), "/dev/mapper/vg-root", &d) == 0 && d.kind == DEVICE_DM &&
                   streq(d.name, "dm-0") && streq_ptr(d.label, "vg-root") && streq_ptr(d.parents, "loop3") &&
                   d.rotational == 0,
           "a dm device: its name and what it sits on");
        device_info_done(&d);
        ok(device_resolve(sysfs, "/dev", makedev(9, 0), "/dev/md0", &d) == 0 && d.kind == DEVICE_MD &&
                   d.parents && strstr(d.parents, "sdb") && strstr(d.parents, "sdc"),
           "an md array: its members");
        device_info_done(&d);
        ok(device_resolve(sysfs, "/dev", makedev(7, 3), "/dev/loop3", &d) == 0 && d.kind == DEVICE_LOOP &&
                   streq_ptr(d.label, "/var/lib/images/x.img"),
           "a loop device: its backing file");
        device_info_done(&d);
        test_source_lookup();
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", sysfs);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", sysfs);
}

int main(void) {
        test_resolve();
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
                DiskStat a = { .writes = 100, .write_sectors = 2048 }, b = { .writes = 160, .write_sectors = 4096 };
                DeviceMeter m = {};

                device_meter_update(&m, &a, 1000000);
                ok(!m.rate.valid && m.last_at == 1000000 && m.last.writes == 100, "meter: a first reading, no rate yet");
                device_meter_update(&m, &b, 3000000);
                ok(m.rate.valid && m.rate.write_iops == 30.0 && m.last.writes == 160, "meter: the rate over the 2 s since");
                device_meter_update(&m, &b, 3000000);
                ok(!m.rate.valid, "meter: no time gone by, no rate");
                device_meter_update(&m, NULL, 4000000);
                ok(!m.rate.valid && m.last_at == 0, "meter: the device gone, nothing kept");
                device_meter_update(&m, &a, 5000000);
                ok(!m.rate.valid && m.last_at == 5000000, "meter: back, a first reading again");
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
