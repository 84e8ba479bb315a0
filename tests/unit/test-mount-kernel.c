/* test-mount-kernel: statmount records and fanotify mount events read with
 * every length checked (hostile and truncated records), and the kernel's
 * word on every mount of this namespace told exactly as mountinfo tells
 * it: the table built from statmount equals the one parsed from
 * /proc/self/mountinfo. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "mount-kernel.h"
#include "mounts.h"
#include "../tap.h"

/* A statmount record: the fixed part as the uapi lays it out (offsets
 * written by hand, so that a wrong struct in mount-kernel.c shows), the
 * strings after it. */
struct record {
        uint8_t b[4096];
        size_t str_len;
};

static void put32(struct record *r, size_t off, uint32_t v) {
        memcpy(r->b + off, &v, sizeof v);
}

static void put64(struct record *r, size_t off, uint64_t v) {
        memcpy(r->b + off, &v, sizeof v);
}

static uint32_t add_str(struct record *r, const char *s) {
        uint32_t off = (uint32_t) r->str_len;

        memcpy(r->b + 512 + off, s, strlen(s) + 1);
        r->str_len += strlen(s) + 1;
        return off;
}

static void record_init(struct record *r) {
        memset(r, 0, sizeof *r);
        put64(r, 8, 0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x80 | 0x100 | 0x200); /* mask */
        put32(r, 16, 7);                                                /* sb_dev_major */
        put32(r, 20, 3);
        put32(r, 32, 0x1 | (1U << 25));  /* SB_RDONLY | SB_LAZYTIME */
        put64(r, 40, 0x100000001234ULL); /* mnt_id */
        put64(r, 48, 0x100000000001ULL); /* mnt_parent_id */
        put32(r, 56, 42);                /* mnt_id_old */
        put32(r, 60, 1);
        put64(r, 64, 0x2 | 0x10 | 0x80); /* NOSUID, NOATIME, NODIRATIME */
        put32(r, 36, add_str(r, "fuse"));
        put32(r, 120, add_str(r, "sshfs"));
        put32(r, 104, add_str(r, "/sub"));
        put32(r, 108, add_str(r, "/mnt/with space/\xff\xfe"));
        put32(r, 124, add_str(r, "user@host:/x"));
        put32(r, 4, add_str(r, "user_id=0,group_id=0"));
        put32(r, 0, (uint32_t) (512 + r->str_len)); /* size */
}

static void test_parse(void) {
        struct record r;
        KMount k = {};

        record_init(&r);
        is_int(kmount_parse(r.b, 512 + r.str_len, &k), 0, "a record parses");
        ok(k.id == 0x100000001234ULL && k.parent == 0x100000000001ULL, "its unique ids");
        is_int(k.seed.id, 42, "mountinfo's id");
        is_int(k.seed.parent_id, 1, "and its parent's");
        is_str(k.seed.target, "/mnt/with space/\xff\xfe", "a mount point of any bytes, unescaped");
        is_str(k.seed.fstype, "fuse.sshfs", "type.subtype, as mountinfo says it");
        is_str(k.seed.root, "/sub", "root");
        is_str(k.seed.source, "user@host:/x", "source");
        is_str(k.seed.vfs_options, "rw,nosuid,noatime,nodiratime", "per-mount options in mountinfo's words and order");
        is_str(k.seed.super_options, "ro,lazytime,user_id=0,group_id=0", "super options: flags, then the fs's own");
        kmount_done(&k);

        /* Hostile and short records: refused, never read past. */
        is_int(kmount_parse(r.b, 100, &k), -EBADMSG, "shorter than the fixed part");
        is_int(kmount_parse(r.b, 512 + r.str_len - 1, &k), -EBADMSG, "size beyond the bytes given");
        record_init(&r);
        put32(&r, 108, 4000);
        is_int(kmount_parse(r.b, sizeof r.b, &k), -EBADMSG, "a string offset past the end");
        record_init(&r);
        put32(&r, 0, (uint32_t) (512 + r.str_len - 3)); /* cuts the last string's NUL off */
        is_int(kmount_parse(r.b, sizeof r.b, &k), -EBADMSG, "a string without its NUL inside the record");
        record_init(&r);
        put64(&r, 8, 0x1 | 0x2 | 0x10);
        is_int(kmount_parse(r.b, sizeof r.b, &k), -ENODATA, "no type said");
        record_init(&r);
        put32(&r, 56, 0x80000000U);
        is_int(kmount_parse(r.b, sizeof r.b, &k), -EBADMSG, "an old id past INT_MAX");
        record_init(&r);
        put64(&r, 8, 0x1 | 0x2 | 0x10 | 0x20); /* a 6.8 kernel: no root, source, options, subtype */
        is_int(kmount_parse(r.b, sizeof r.b, &k), 0, "a record with the basics only");
        is_str(k.seed.fstype, "fuse", "the type alone");
        is_str(k.seed.super_options, "ro,lazytime", "flags alone");
        kmount_done(&k);
}

struct seen {
        uint64_t ids[8];
        size_t n;
};

static void each(uint64_t id, void *userdata) {
        struct seen *s = userdata;

        if (s->n < 8)
                s->ids[s->n++] = id;
}

/* An event: metadata, then a mount info record. */
static size_t put_event(uint8_t *p, uint64_t mask, uint64_t id, uint16_t info_len) {
        struct fanotify_event_metadata md = {
                .event_len = (uint32_t) (sizeof md + 16),
                .vers = FANOTIFY_METADATA_VERSION,
                .metadata_len = sizeof md,
                .mask = mask,
                .fd = FAN_NOFD,
        };
        struct fanotify_event_info_header h = { .info_type = 7, .len = info_len };

        memcpy(p, &md, sizeof md);
        memcpy(p + sizeof md, &h, sizeof h);
        memset(p + sizeof md + sizeof h, 0, 4);
        memcpy(p + sizeof md + 8, &id, sizeof id);
        return md.event_len;
}

static void test_events(void) {
        uint8_t buf[256];
        struct seen s = {};
        bool overflow;
        size_t n = 0;

        n += put_event(buf + n, 0x01000000, 11, 16);
        n += put_event(buf + n, 0x02000000, 12, 16);
        is_int(kmount_events_parse(buf, n, each, &s, &overflow), 0, "two events parse");
        ok(s.n == 2 && s.ids[0] == 11 && s.ids[1] == 12 && !overflow, "their ids, in order, no overflow");

        s.n = 0;
        {
                struct fanotify_event_metadata md = {
                        .event_len = sizeof md, .vers = FANOTIFY_METADATA_VERSION, .metadata_len = sizeof md,
                        .mask = FAN_Q_OVERFLOW, .fd = FAN_NOFD,
                };
                memcpy(buf, &md, sizeof md);
                is_int(kmount_events_parse(buf, sizeof md, each, &s, &overflow), 0, "an overflow parses");
                ok(overflow && s.n == 0, "and says so");
        }

        s.n = 0;
        n = put_event(buf, 0x01000000, 13, 0);
        is_int(kmount_events_parse(buf, n, each, &s, &overflow), -EBADMSG, "an info record of length 0 (no endless loop)");
        n = put_event(buf, 0x01000000, 13, 40);
        is_int(kmount_events_parse(buf, n, each, &s, &overflow), -EBADMSG, "an info record longer than its event");
        n = put_event(buf, 0x01000000, 13, 16);
        is_int(kmount_events_parse(buf, n - 1, each, &s, &overflow), -EBADMSG, "an event cut short");
        buf[4] = FANOTIFY_METADATA_VERSION + 1;
        is_int(kmount_events_parse(buf, n, each, &s, &overflow), -EBADMSG, "another metadata version");
        is_int((int) s.n, 0, "nothing reported from the bad ones");
}

/* The kernel's word on every mount here, made into a table, against the
 * table parsed from mountinfo: the same, field for field. */
static void test_against_mountinfo(void) {
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ KMount *ks = NULL;
        _cleanup_free_ MountSeed *seeds = NULL;
        _cleanup_(mount_table_freep) MountTable *a = NULL, *b = NULL;
        char star[] = "*", *everything[] = { star, NULL };
        struct mount_filter f = { .include_fstypes = everything };
        void *buf = NULL;
        size_t n = 0, bs = 0, got = 0;
        int r;

        r = kmount_list(&ids, &n);
        if (r == -ENOSYS || r == -EPERM) {
                ok(true, "# SKIP listmount refused here");
                return;
        }
        is_int(r, 0, "listmount lists this namespace's mounts");
        ks = calloc(n ? n : 1, sizeof *ks);
        seeds = calloc(n ? n : 1, sizeof *seeds);
        if (!ks || !seeds)
                abort();
        for (size_t i = 0; i < n; i++)
                if (kmount_stat(ids[i], &buf, &bs, &ks[got]) == 0) {
                        seeds[got] = ks[got].seed;
                        got++;
                }
        free(buf);
        is_int(mount_table_from_seeds(seeds, got, &f, &a), 0, "a table from statmount");
        is_int(mount_table_load("/proc/self/mountinfo", &f, &b), 0, "one from mountinfo");
        ok(a && b && a->n == b->n && mount_table_equal(a, b),
           "the same mounts, alike in every field (%zu and %zu)", a ? a->n : 0, b ? b->n : 0);
        for (size_t i = 0; a && b && i < a->n && i < b->n; i++)
                if (!streq(a->entries[i].super_options, b->entries[i].super_options) ||
                    !streq(a->entries[i].vfs_options, b->entries[i].vfs_options) ||
                    !streq(a->entries[i].source, b->entries[i].source))
                        printf("# %s: [%s|%s|%s] against [%s|%s|%s]\n", a->entries[i].target, a->entries[i].vfs_options,
                             a->entries[i].super_options, a->entries[i].source, b->entries[i].vfs_options,
                             b->entries[i].super_options, b->entries[i].source);
        for (size_t i = 0; i < got; i++)
                kmount_done(&ks[i]);
}

int main(void) {
        test_parse();
        test_events();
        test_against_mountinfo();
        return tap_done();
}
