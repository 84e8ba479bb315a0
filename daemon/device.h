/* device.h: the block device behind a mount, and its write I/O from
 * /proc/diskstats. Paths come from config so tests can use fixtures. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

typedef struct DiskStat {
        unsigned major, minor;
        char name[32];
        uint64_t writes;        /* writes completed */
        uint64_t write_sectors; /* 512-byte sectors written */
} DiskStat;

typedef struct DiskStats {
        DiskStat *v;
        size_t n;
        unsigned n_bad_lines;
} DiskStats;

/* Parses diskstats text (pure; odd lines are counted, not fatal). */
int diskstats_parse(const char *text, size_t len, DiskStats **ret);
int diskstats_read(const char *path, DiskStats **ret);
DiskStats *diskstats_free(DiskStats *s);
DEFINE_FREE_FUNC(DiskStats, diskstats_free);
const DiskStat *diskstats_find(const DiskStats *s, unsigned major, unsigned minor);

struct device_rate {
        bool valid;
        double write_iops;
        double write_kib_per_s;
};
/* Rates between two readings 'seconds' apart; invalid if a counter went
 * backwards (the device was re-created). */
void device_rate(const DiskStat *prev, const DiskStat *cur, double seconds, struct device_rate *ret);

/* A device's write rate kept from its readings: the rate between the last
 * two, and the last (its counters since boot). */
typedef struct DeviceMeter {
        struct device_rate rate;
        DiskStat last;
        uint64_t last_at; /* CLOCK_MONOTONIC usec of the last reading; 0: none */
} DeviceMeter;
/* A reading taken at 'now_usec'; cur NULL: the device is not in the kernel's
 * table (any more): no rate, no reading. */
void device_meter_update(DeviceMeter *m, const DiskStat *cur, uint64_t now_usec);

typedef enum DeviceKind {
        DEVICE_NONE,      /* no block device: tmpfs, NFS, FUSE... */
        DEVICE_DISK,
        DEVICE_PARTITION,
        DEVICE_LOOP,
        DEVICE_DM,
        DEVICE_MD,
        _DEVICE_KIND_MAX,
} DeviceKind;

const char *device_kind_to_string(DeviceKind k);

typedef struct DeviceInfo {
        DeviceKind kind;
        unsigned major, minor;
        char name[64];     /* kernel name: sda1, loop0, dm-0, md0 */
        char *label;       /* dm name (vg-root) or loop backing file; NULL if none */
        char *parents;     /* what it sits on: "vda" for vda1, slaves of dm/md; NULL if none */
        int rotational;    /* 1, 0, or -1 if unknown */
} DeviceInfo;

/* Resolves the block device of a mount from sysfs. 'source' (the mount's
 * source) is used when devno is anonymous (major 0, e.g. btrfs): a /dev path
 * there names the device. A mount without one gets DEVICE_NONE. */
int device_resolve(const char *sysfs, const char *devfs, dev_t devno, const char *source, DeviceInfo *ret);
void device_info_done(DeviceInfo *d);

/* The filesystem UUID on /dev/NAME, read from its superblock with libblkid.
 * Blocking (it reads the device): for a worker thread. */
int device_read_uuid(const char *devfs, const char *name, char **ret);
