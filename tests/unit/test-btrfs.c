/* test-btrfs: the pure part of the btrfs module on plain inputs: which
 * subvolumes are snapshots of a mount's, sysfs counters and mount options
 * read, and what an interval's metadata growth is taken for (atime's
 * cost only where the interval was pure, the data still and the
 * snapshots the same). The look itself is judged on a real btrfs by
 * tests/integration/btrfs.sh against btrfs-progs. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "btrfs.h"
#include "btrfs-meter.h"
#include "log.h"

static struct btrfs_subvol sub(uint64_t id, uint8_t tag, uint8_t parent_tag, bool ro, int64_t otime) {
        struct btrfs_subvol s = { .id = id, .read_only = ro, .otime = otime };

        memset(s.uuid, tag, 16);
        if (parent_tag)
                memset(s.parent_uuid, parent_tag, 16);
        return s;
}

static void test_snapshots(void) {
        struct btrfs_subvol self = sub(256, 0xa1, 0, false, 1000);
        struct btrfs_subvol subs[] = {
                self,
                sub(257, 0xb1, 0xa1, true, 2000),  /* a read-only snapshot of self */
                sub(258, 0xb2, 0xa1, false, 3000), /* a writable one, newer */
                sub(259, 0xb3, 0xb1, true, 4000),  /* a snapshot of a snapshot: not self's */
                sub(260, 0xb4, 0, false, 5000),    /* another subvolume */
        };
        struct btrfs_snapshots s;

        subs[1].exclusive = 100;
        subs[2].exclusive = 200;
        subs[3].exclusive = 400;
        btrfs_snapshots_of(&self, subs, 5, &s);
        is_int(s.count, 2, "two subvolumes have self's uuid as parent_uuid");
        is_int(s.exclusive, 300, "their qgroups' exclusive bytes together");
        is_int(s.read_only, 1, "one of them read-only");
        is_int(s.newest_otime, 3000, "the newest made at 3000");
        is_int(s.ids_sum, 257 + 258, "their ids, to tell one deleted and one made from none");
        is_int(s.period_s, 1000, "made 1000 s apart: the rhythm");
        int64_t since = 0;

        ok(btrfs_shares(&self, &s, &since) && since == 3000, "snapshotted: shares since its newest snapshot");
        struct btrfs_snapshots none = {};

        ok(btrfs_shares(&subs[2], &none, &since) && since == 3000,
           "a writable snapshot shares with its origin, since its own making");
        ok(!btrfs_shares(&subs[4], &none, &since) && since == 0, "a lone subvolume shares nothing");
        /* Another mount's subvolume, found among those a look listed. */
        struct btrfs_facts f = { .have_info = true, .self = sub(5, 0, 0, false, 0), .sight = BTRFS_SIGHT_ALL,
                                 .subs = subs, .n_subs = 5 };
        struct btrfs_subvol found;

        ok(btrfs_facts_of(&f, 256, &found, &s) && found.id == 256 && s.count == 2 && s.read_only == 1,
           "a subvolume listed by a look through another: its snapshots");
        ok(btrfs_facts_of(&f, 257, &found, &s) && s.count == 1 && found.read_only,
           "a snapshot's own snapshot counted for it");
        ok(!btrfs_facts_of(&f, 999, &found, &s), "a subvolume not listed: not seen");
        f.sight = BTRFS_SIGHT_NONE;
        f.n_subs = 0;
        ok(!btrfs_facts_of(&f, 5, &found, &s), "the one looked through, without sight: not seen");
        btrfs_snapshots_of(&self, subs, 1, &s);
        ok(s.count == 0 && s.newest_otime == 0, "no other subvolume: no snapshot");
        self = sub(5, 0, 0, false, 0);
        btrfs_snapshots_of(&self, subs, 5, &s);
        is_int(s.count, 0, "a subvolume without uuid (an old top level) has no snapshot counted");
}

static void test_parse(void) {
        uint64_t v = 1;
        uint64_t id;
        char *path;
        char u[BTRFS_UUID_STRING_MAX];
        uint8_t raw[16];

        ok(btrfs_parse_bytes("12304384\n", &v) == 0 && v == 12304384, "a counter with its newline");
        ok(btrfs_parse_bytes("0", &v) == 0 && v == 0, "zero");
        is_int(btrfs_parse_bytes("", &v), -EBADMSG, "empty is no counter");
        is_int(btrfs_parse_bytes("-1\n", &v), -EBADMSG, "a sign is no counter");
        is_int(btrfs_parse_bytes("12 34\n", &v), -EBADMSG, "two numbers are no counter");
        is_int(btrfs_parse_bytes("99999999999999999999999\n", &v), -EBADMSG, "past 64 bits is no counter");

        ok(btrfs_subvol_from_options("rw,relatime,space_cache=v2,subvolid=256,subvol=/vol", &id, &path) == 0 &&
                   id == 256 && path && strcmp(path, "/vol") == 0,
           "subvolid= and subvol= from the super options");
        free(path);
        ok(btrfs_subvol_from_options("rw,subvol=/a,b", &id, &path) == 0 && id == 0 && path && strcmp(path, "/a") == 0,
           "without subvolid=: 0, the path up to the next comma");
        free(path);
        ok(btrfs_subvol_from_options("rw,subvolid=x2", &id, &path) == 0 && id == 0 && !path,
           "a subvolid= that is no number: 0");
        ok(btrfs_subvol_from_options(NULL, &id, &path) == 0 && id == 0 && !path, "no options at all");

        for (int i = 0; i < 16; i++)
                raw[i] = (uint8_t) (i * 17);
        btrfs_uuid_format(raw, u);
        is_str(u, "00112233-4455-6677-8899-aabbccddeeff", "a uuid in its usual form");
}

static struct btrfs_facts facts(uint64_t meta, uint64_t data, unsigned snaps, uint64_t ids) {
        return (struct btrfs_facts) {
                .have_subvol = true, .have_info = true, .sight = BTRFS_SIGHT_ALL,
                .snapshots = { .count = snaps, .ids_sum = ids },
                .have_space = true, .metadata_bytes_used = meta, .data_bytes_used = data,
        };
}

static void test_interval(void) {
        struct btrfs_facts a = facts(12300000, 500000, 1, 257), b = facts(23000000, 500000, 1, 257);
        BtrfsIntervalInput in = { .prev = &a, .cur = &b, .seconds = 60, .pure = true };
        BtrfsIntervalVerdict v = btrfs_interval(&in);

        is_int(v.source, BTRFS_BYTES_MEASURED, "a pure interval: the growth is measured");
        ok(fabs(v.bytes - 10700000) < 1e-6, "10.7 MB un-shared");
        ok(fabs(v.per_day - 10700000.0 * 1440) < 1e-3, "per day: 1440 minutes of it");

        in.pure = false;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_IMPURE, "something else changed: not taken");
        in.pure = true;
        b.data_bytes_used += 4096;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_IMPURE, "data written: not taken");
        b = facts(12000000, 500000, 1, 257);
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_IMPURE, "metadata shrank (a delete): not taken");
        b = facts(23000000, 500000, 2, 257 + 261);
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_SNAPSHOT_CHANGED, "a snapshot made mid-interval: said");
        b = facts(23000000, 500000, 1, 262);
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_SNAPSHOT_CHANGED, "one deleted and one made: said too");
        b = facts(23000000, 500000, 1, 257);
        b.n_subs = 1;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_SNAPSHOT_CHANGED,
               "a subvolume made elsewhere on the filesystem: said too");
        b = facts(12300000, 500000, 1, 257);
        v = btrfs_interval(&in);
        ok(v.source == BTRFS_BYTES_MEASURED && v.bytes == 0, "nothing un-shared: a measured zero");
        b.have_space = false;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_UNREADABLE, "sysfs unreadable at one end: said");
        in.prev = NULL;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_WAITING, "one look: waiting for the interval");
        in.prev = &a;
        in.seconds = 0;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_WAITING, "an interval of no length measures nothing");

        in = (BtrfsIntervalInput) { .prev = NULL, .cur = &a, .seconds = 60, .pure = true };
        ok(btrfs_interval(&in).writes, "a first look: what came before it is unknown, and taints");

        is_str(btrfs_bytes_source_to_string(BTRFS_BYTES_SNAPSHOT_CHANGED), "snapshot_changed", "source names");
        is_str(btrfs_sight_to_string(BTRFS_SIGHT_BENEATH), "beneath", "sight names");
}

/* Writes of an impure interval are counted when their transaction
 * commits: the intervals after it are tainted until two commits ended. */
static void test_taint(void) {
        struct btrfs_facts a = facts(1000, 0, 1, 257), b = facts(2000, 0, 1, 257);
        BtrfsIntervalInput in = { .prev = &a, .cur = &b, .seconds = 5, .pure = false };
        BtrfsIntervalVerdict v;
        BtrfsTaint t = {};
        uint64_t c;

        ok(btrfs_parse_commits("commits 42\ncur_commit_ms 0\nlast_commit_ms 3\n", &c) == 0 && c == 42,
           "commit_stats: the commits");
        is_int(btrfs_parse_commits("last_commit_ms 3\n", &c), -EBADMSG, "without a commits line: none");
        is_int(btrfs_parse_commits("commits x\n", &c), -EBADMSG, "a commits line without a number: none");

        a.have_commits = b.have_commits = true;
        a.commits = b.commits = 10;
        ok(!btrfs_taint_check(&t, &b, 0), "no taint to begin with");
        v = btrfs_interval(&in);
        ok(v.source == BTRFS_BYTES_IMPURE && v.writes, "an impure interval writes");
        btrfs_taint_note(&t, &v, &b, 0, 5);
        in.pure = true;
        b.commits = 11;
        in.tainted = btrfs_taint_check(&t, &b, 1);
        ok(in.tainted && t.on, "one commit later: still tainted (it may have begun before the writes)");
        v = btrfs_interval(&in);
        ok(v.source == BTRFS_BYTES_IMPURE && !v.writes, "a tainted interval is not measured, and writes nothing itself");
        btrfs_taint_note(&t, &v, &b, 1, 5);
        b.commits = 12;
        in.tainted = btrfs_taint_check(&t, &b, 2);
        ok(in.tainted && !t.on, "two commits later: this interval holds them; the taint lifts after it");
        in.tainted = btrfs_taint_check(&t, &b, 3);
        ok(!in.tainted, "and the next interval is clean");
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_MEASURED, "and measured");

        /* An idle filesystem commits nothing: a period without a commit
         * says nothing was left to. */
        in.pure = false;
        v = btrfs_interval(&in);
        btrfs_taint_note(&t, &v, &b, 0, 5);
        ok(btrfs_taint_check(&t, &b, 10 * 1000000ULL - 1) && t.on, "idle: tainted within a period and the slack");
        ok(btrfs_taint_check(&t, &b, 10 * 1000000ULL) && !t.on, "then lifted: nothing was dirty");
        btrfs_taint_note(&t, &v, &b, 0, 5);
        b.commits = 13;
        ok(btrfs_taint_check(&t, &b, 10 * 1000000ULL) && t.on, "one commit in the period: one more period");
        ok(btrfs_taint_check(&t, &b, 20 * 1000000ULL) && !t.on, "without another: lifted");

        a.have_commits = b.have_commits = false;
        v = btrfs_interval(&in);
        btrfs_taint_note(&t, &v, &b, 0, 5);
        ok(btrfs_taint_check(&t, &b, 20 * 1000000ULL - 1) && t.on, "no commit count: tainted two periods");
        ok(btrfs_taint_check(&t, &b, 20 * 1000000ULL) && !t.on, "then lifted");
}

static void test_find_fsid(void) {
        char dir[] = "/tmp/test-btrfs.XXXXXX", p[256];
        char *fsid = NULL;
        const char *id = "533822af-50f8-4d2a-929d-38a9f6ef14bc";

        ok(mkdtemp(dir) != NULL, "a scratch sysfs");
        snprintf(p, sizeof p, "mkdir -p %s/fs/btrfs/%s/devices %s/fs/btrfs/features && touch %s/fs/btrfs/%s/devices/loop3",
                 dir, id, dir, dir, id);
        ok(system(p) == 0, "with one filesystem on loop3");
        ok(btrfs_find_fsid(dir, "loop3", &fsid) == 0 && fsid && strcmp(fsid, id) == 0, "loop3's fsid found");
        free(fsid);
        is_int(btrfs_find_fsid(dir, "loop4", &fsid), -ENOENT, "another device: none");
        is_int(btrfs_find_fsid(dir, "../x", &fsid), -ENOENT, "a name that is no kernel name: none");
        snprintf(p, sizeof p, "rm -rf %s", dir);
        ok(system(p) == 0, "cleaned up");
        ok(btrfs_find_fsid(dir, "loop3", &fsid) < 0 && !fsid, "sysfs missing: an error, no fsid");
}

static void test_model(void) {
        BtrfsModel m = {};
        double b, lo, hi;

        ok(!btrfs_model_ready(&m), "a model that learned nothing is not ready");
        btrfs_model_price(&m, 1000, 10, &b, &lo, &hi);
        ok(b == 0 && lo == 0 && hi == 0, "and prices nothing");
        btrfs_model_learn(&m, 5000, 0, 0);
        btrfs_model_learn(&m, NAN, 100, 10);
        btrfs_model_learn(&m, -1, 100, 10);
        ok(!btrfs_model_ready(&m), "an interval with no sampled inode written, or a bad figure, teaches nothing");
        btrfs_model_learn(&m, 10700000, 20000, 200);
        ok(btrfs_model_ready(&m) && m.intervals == 1, "a measured interval with inodes written teaches");
        btrfs_model_price(&m, 1000, 10, &b, &lo, &hi);
        ok(fabs(b - 535000) < 1e-6, "535 bytes an inode, as the issue's grep measured: 1000 inodes 535 kB");
        ok(lo < b && b < hi && lo > 0, "inside its 95%% interval (%.0f-%.0f)", lo, hi);
        btrfs_model_price(&m, 1000, 1000, &b, &lo, &hi);
        double narrow = hi - lo;
        btrfs_model_price(&m, 1000, 10, &b, &lo, &hi);
        ok(narrow < hi - lo, "more sampled inodes: a narrower interval");
}

/* A look as a sweep's job brings it back: the filesystem's bytes, one
 * snapshot made at 1000, and the sample's inodes written since it. */
static BtrfsLook look(uint64_t meta, uint64_t data, unsigned snaps, double inodes, double hits, uint64_t at_s) {
        BtrfsLook l = { .on = true, .facts = facts(meta, data, snaps, snaps ? 257 : 0), .at = at_s * 1000000 };

        l.facts.snapshots.newest_otime = snaps ? 1000 : 0;
        /* Commits between looks: an impure interval taints only itself. */
        l.facts.have_commits = true;
        l.facts.commits = at_s;
        if (snaps)
                l.since = (struct btrfs_since) { .have = true, .since = 1000,
                                                 .count = { .inodes = inodes, .hits = hits, .sample = 1000 } };
        return l;
}

static void apply(BtrfsMeter *m, BtrfsLook l, bool pure) {
        BtrfsSweep s = { .target = "/mnt/test", .pure = pure, .commit_s = 30, .now = 2000 };

        btrfs_meter_apply(m, &l, &s);
        btrfs_look_done(&l);
}

/* The last message logged, as the text line shows it. */
static char said[1024];
static bool keep_said(int level, const char *message, const char *field, const char *value) {
        (void) level, (void) field, (void) value;
        snprintf(said, sizeof said, "%s", message);
        return true;
}

/* A FIFO (or device) where sysfs has a counter: the log says what is
 * there, not "File descriptor in bad state". */
static void test_meter_fifo(void) {
        BtrfsMeter m = {};
        BtrfsLook l = look(0, 0, 1, 0, 0, 40);

        log_set_sink(keep_said);
        l.facts.have_space = false;
        l.facts.space_error = -EBADFD;
        apply(&m, l, true);
        ok(m.space_said && strstr(said, "not a regular file (a FIFO"), "a FIFO as bytes_used: said so (%s)", said);
        log_set_sink(NULL);
        btrfs_facts_done(&m.status.facts);
}

static void test_meter(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status;

        apply(&m, look(12300000, 500000, 1, 0, 0, 40), true);
        ok(st->have && st->source == BTRFS_BYTES_WAITING && !st->have_rate, "a first look: waiting");
        /* What was written before the first look may be committed after. */
        apply(&m, look(12300000, 500000, 1, 0, 0, 100), true);
        ok(st->source == BTRFS_BYTES_IMPURE && !st->have_rate, "the interval after it: tainted");
        ok(st->since_source == BTRFS_FIGURE_MEASURED && st->since == 0,
           "no sampled inode written since the snapshot: 0 bytes since it, measured");
        apply(&m, look(23000000, 500000, 1, 20000, 200, 160), true);
        ok(st->source == BTRFS_BYTES_MEASURED && st->rate_source == BTRFS_FIGURE_MEASURED, "a pure interval: measured");
        ok(fabs(st->per_day - 10700000.0 * 1440) < 1e-3 && st->per_day_lo == st->per_day, "10.7 MB a minute");
        ok(fabs(st->bytes_per_inode - 535) < 1e-9 && st->model_intervals == 1, "the model learned 535 bytes an inode");
        ok(st->since_source == BTRFS_FIGURE_MEASURED && fabs(st->since - 10700000) < 1e-6,
           "since the snapshot: the measured 10.7 MB");

        /* The filesystem wrote data too: the bytes are the model's. */
        apply(&m, look(30000000, 900000, 1, 21000, 210, 220), false);
        ok(st->source == BTRFS_BYTES_IMPURE && st->rate_source == BTRFS_FIGURE_MODELLED, "an impure interval: modelled");
        ok(fabs(st->per_day - 535000.0 * 1440) < 1e-3, "1000 more inodes, 535 kB a minute");
        ok(st->per_day_lo < st->per_day && st->per_day < st->per_day_hi, "inside its interval");
        ok(fabs(st->total - 10700000) < 1e-6, "the measured total keeps only what was measured");
        ok(st->since_source == BTRFS_FIGURE_MODELLED && fabs(st->since - 21000.0 * 535) < 1e-3,
           "since the snapshot: 21000 inodes at 535 bytes, modelled");

        /* sysfs gone: said, nothing lost. */
        apply(&m, look(0, 0, 1, 21000, 210, 280), true);
        m.status.facts.have_space = false;
        BtrfsLook l = look(0, 0, 1, 21500, 215, 340);
        l.facts.have_space = false;
        l.facts.space_error = -ENOENT;
        apply(&m, l, true);
        ok(st->source == BTRFS_BYTES_UNREADABLE && fabs(st->total - 10700000) < 1e-6 && st->model_intervals == 1,
           "sysfs unreadable: the interval is unreadable, the total and the model stay");
        ok(m.space_said, "and it was said");

        /* The subvolume deleted under atimed: the look fails, the figures stay. */
        l = look(0, 0, 1, 0, 0, 400);
        l.r = -ENOENT;
        apply(&m, l, true);
        ok(!st->have && st->error == -ENOENT && fabs(st->total - 10700000) < 1e-6 && fabs(st->bytes_per_inode - 535) < 1e-9,
           "a failed look: no facts, the total stays");
        ok(m.model.intervals == 1 && m.error_said, "the model stays, and the failure was said");
        apply(&m, look(31000000, 900000, 1, 21500, 215, 430), true);
        apply(&m, look(31000000, 900000, 1, 21500, 215, 460), true);
        apply(&m, look(31500000, 900000, 1, 22500, 225, 520), true);
        ok(st->source == BTRFS_BYTES_MEASURED && m.model.intervals == 2 && !m.error_said,
           "looks again: measured, and learns again");

        /* A snapshot made mid-interval. */
        BtrfsLook c = look(32000000, 900000, 2, 0, 0, 580);
        c.facts.snapshots.ids_sum = 257 + 261;
        c.facts.snapshots.newest_otime = c.since.since = 1500;
        apply(&m, c, true);
        ok(st->source == BTRFS_BYTES_SNAPSHOT_CHANGED && m.change_said, "a snapshot made: not atime's, said");
        ok(st->since_source == BTRFS_FIGURE_MEASURED && st->since == 0, "the total since the new one begins at 0");
        ok(m.model.intervals == 2 && fabs(st->total - 11200000) < 1e-6, "nothing lost");

        /* Quotas the operator turned on, inconsistent, then unreadable. */
        BtrfsLook q = look(32000000, 900000, 2, 0, 0, 640);
        q.facts.snapshots.ids_sum = 257 + 261;
        q.facts.snapshots.newest_otime = q.since.since = 1500;
        q.facts.quotas = q.facts.have_qgroups = q.facts.qgroups_inconsistent = true;
        q.facts.self.exclusive = 16384;
        apply(&m, q, true);
        ok(m.inconsistent_said && st->facts.have_qgroups && st->facts.self.exclusive == 16384 && st->have,
           "inconsistent quotas: said, their bytes shown as they are");
        q = look(32000000, 900000, 2, 0, 0, 700);
        q.facts.snapshots.ids_sum = 257 + 261;
        q.facts.snapshots.newest_otime = q.since.since = 1500;
        q.facts.quotas = true;
        q.facts.qgroup_error = -EACCES;
        apply(&m, q, true);
        ok(m.qgroup_said && !st->facts.have_qgroups && st->source == BTRFS_BYTES_MEASURED &&
                   fabs(st->total - 11200000) < 1e-6,
           "unreadable qgroups: said, nothing else changes");
        btrfs_meter_done(&m);

        /* No snapshot: nothing shared, nothing un-shared, even impure. */
        BtrfsMeter n = {};

        apply(&n, look(1000, 10, 0, 0, 0, 40), true);
        apply(&n, look(1000, 10, 0, 0, 0, 100), true);
        apply(&n, look(5000, 20, 0, 0, 0, 160), false);
        ok(n.status.have_rate && n.status.per_day == 0 && n.status.rate_source == BTRFS_FIGURE_MODELLED,
           "no snapshot: 0 bytes, however impure the interval");
        ok(n.status.since_source == BTRFS_FIGURE_NONE, "and no total since a snapshot");
        btrfs_meter_done(&n);
}

/* A busy host, never a pure interval: the cost table's starting value
 * prices the inodes, modelled, with a wide interval, until a measured
 * interval teaches the filesystem's own; a model kept from before a
 * restart seeds a meter that has learned nothing. */
static void test_prior(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status;
        BtrfsSweep s = { .target = "/mnt/busy", .pure = false, .commit_s = 30, .now = 2000, .prior = { 537, 1300 } };
        double b, lo, hi;

        btrfs_model_price_prior(&s.prior, 1000, 0, 100, &b, &lo, &hi);
        ok(b == 537000 && lo < b / BTRFS_PRIOR_SPREAD && hi > b * BTRFS_PRIOR_SPREAD,
           "the table's 537 bytes: 1000 inodes 537 kB, its interval %.0f-%.0f (4x either way and more)", lo, hi);
        btrfs_model_price_prior(&(struct btrfs_prior) { 0, 1300 }, 1000, 0, 100, &b, &lo, &hi);
        ok(b == 0 && hi == 0, "no starting value: no price");
        btrfs_model_price_prior(&s.prior, 1000, 600, 100, &b, &lo, &hi);
        ok(b == 400 * 537 + 600 * 1300, "600 directories of 1000 inodes: at the table's 1300 bytes a directory (%.0f)", b);
        btrfs_model_price_prior(&(struct btrfs_prior) { 537, 0 }, 1000, 600, 100, &b, &lo, &hi);
        ok(b == 537000, "no directory's value: a file's");

        for (uint64_t t = 40, k = 0; t <= 220; t += 60, k++) {
                BtrfsLook l = look(12300000 + k * 1000000, 500000 + k * 1000, 1, 1000.0 * (double) k, 10.0 * (double) k, t);

                btrfs_meter_apply(&m, &l, &s);
                btrfs_look_done(&l);
        }
        ok(st->have_rate && st->rate_fresh && st->rate_source == BTRFS_FIGURE_MODELLED && !btrfs_model_ready(&m.model),
           "impure intervals only: modelled all the same, the model unlearned");
        ok(fabs(st->per_day - 1000.0 * 537 * 1440) < 1e-3, "1000 inodes a minute at the table's 537 bytes");
        ok(st->per_day_lo < st->per_day / 4 && st->per_day_hi > st->per_day * 4, "with the table's wide interval");
        ok(st->table_bytes_per_inode == 537 && st->bytes_per_inode == 0, "the status says the table's value is in use");
        ok(st->table_bytes_per_dir == 1300, "and its value for a directory");
        ok(st->since_source == BTRFS_FIGURE_MODELLED && fabs(st->since - 3000.0 * 537) < 1e-3,
           "the total since the snapshot too");

        /* A look that brings no figure: the last one is not this interval's. */
        BtrfsLook w = look(12300000, 500000, 1, 3000, 30, 300);
        w.facts.snapshots.ids_sum += 4; /* a snapshot made meanwhile */
        btrfs_meter_apply(&m, &w, &s);
        btrfs_look_done(&w);
        ok(st->have_rate && !st->rate_fresh, "an interval with no figure: the rate shown is an earlier one's");

        /* A model kept from before a restart: the seed. */
        BtrfsMeter r = {};
        BtrfsModel saved = { .bytes = 2048000, .inodes = 4000, .hits = 400, .intervals = 3 };

        btrfs_meter_seed(&r, &saved);
        ok(r.model.intervals == 3 && r.status.bytes_per_inode == 512 && r.status.model_intervals == 3,
           "a kept model seeds a meter that learned nothing (512 bytes an inode, 3 intervals)");
        saved.bytes = 1;
        btrfs_meter_seed(&r, &saved);
        ok(r.model.bytes == 2048000, "but not one that has a model");
        BtrfsMeter z = {};
        BtrfsModel bad = { .bytes = NAN, .inodes = 4000, .hits = 400, .intervals = 3 };
        btrfs_meter_seed(&z, &bad);
        ok(z.model.intervals == 0, "a kept model that is not one seeds nothing");
        btrfs_meter_done(&m);
        btrfs_meter_done(&r);
}

/* Directories read (find, ls -R): before anything is measured they are
 * priced at the table's bytes a directory, not a file's (btrfs.sh's
 * directory case read 0.41 of the kernel's growth at a file's); once a
 * measured interval has taught the model, its bytes an inode. */
static void test_prior_dirs(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status;
        BtrfsSweep s = { .target = "/mnt/dirs", .pure = false, .commit_s = 30, .now = 2000, .prior = { 537, 1300 } };

        for (uint64_t t = 40, k = 0; t <= 100; t += 60, k++) {
                BtrfsLook l = look(12300000 + k * 2000000, 500000, 1, 1500.0 * (double) k, 150.0 * (double) k, t);

                l.since.count.dirs = 1500.0 * (double) k; /* every inode written a directory */
                btrfs_meter_apply(&m, &l, &s);
                btrfs_look_done(&l);
        }
        ok(st->rate_source == BTRFS_FIGURE_MODELLED && fabs(st->per_day - 1500.0 * 1300 * 1440) < 1e-3,
           "1500 directories a minute, modelled at the table's 1300 bytes each (%.0f/day)", st->per_day);
        ok(st->since_source == BTRFS_FIGURE_MODELLED && fabs(st->since - 1500.0 * 1300) < 1e-3,
           "the total since the snapshot: 1500 directories at 1300 bytes (%.0f)", st->since);
        ok(st->table_bytes_per_inode == 537, "the status's table value is still a file's");

        /* A measured interval teaches the model: its value from then on
         * (the first pure one after impure ones is tainted: a quiet one). */
        s.pure = true;
        for (uint64_t t = 160, k = 0; t <= 220; t += 60, k++) {
                BtrfsLook p = look(12300000 + 2000000 + k * 1000000, 500000, 1, 1500.0 + 1000.0 * (double) k,
                                   150.0 + 100.0 * (double) k, t);

                p.since.count.dirs = 1500;
                btrfs_meter_apply(&m, &p, &s);
                btrfs_look_done(&p);
        }
        ok(btrfs_model_ready(&m.model) && st->bytes_per_inode == 1000,
           "a measured interval: 1 MB over 1000 files, 1000 bytes an inode learnt (%.1f)", st->bytes_per_inode);
        ok(st->since_source == BTRFS_FIGURE_MODELLED && fabs(st->since - 2500.0 * 1000) < 1e-3,
           "the total since the snapshot at the learnt value (%.0f)", st->since);
        btrfs_meter_done(&m);
}

/* What the bytes of a mean came from: modelled only where a modelled
 * interval gave them bytes; and the meter's mean says what it gave. */
static void test_bytes_label(void) {
        BtrfsMeter m = {};
        BtrfsSweep s = { .target = "/mnt/label", .pure = true, .commit_s = 30, .now = 2000 };

        ok(streq(btrfs_bytes_label(0, 1e6), "measured") && streq(btrfs_bytes_label(0, 0), "measured"),
           "no modelled byte: measured");
        ok(streq(btrfs_bytes_label(1e6, 1e6), "modelled") && streq(btrfs_bytes_label(1e6 * (1 + 1e-9), 1e6), "modelled"),
           "every byte modelled: modelled");
        ok(streq(btrfs_bytes_label(4e5, 1e6), "partly modelled"), "some: partly modelled");

        /* Measured growth, then an impure interval with no inode written
         * since the snapshot: a modelled 0. */
        for (uint64_t t = 40, k = 0; t <= 280; t += 60, k++) {
                bool pure = t < 280;
                BtrfsLook l = look(12300000 + (pure ? k : 3) * 1000000, 500000, 1, 1000.0 * (double) (pure ? k : 3),
                                   100.0 * (double) (pure ? k : 3), t);

                s.pure = pure;
                btrfs_meter_apply(&m, &l, &s);
                btrfs_look_done(&l);
        }
        ok(m.status.rate_source == BTRFS_FIGURE_MODELLED && m.status.per_day == 0 && m.status.mean_per_day > 0,
           "a modelled 0 after measured bytes");
        ok(m.status.mean_source == BTRFS_FIGURE_MEASURED && m.status.mean_modelled_per_day == 0 &&
                   streq(btrfs_bytes_label(m.status.mean_modelled_per_day, m.status.mean_per_day), "measured"),
           "the mean: measured, no modelled byte in it");
        btrfs_meter_done(&m);
}

/* The place a btrfs filesystem is sampled through: the snapshotted
 * subvolume, even where its root is the longer. */
static size_t choose(const struct btrfs_facts *f, const uint64_t *ids, const size_t *lens, size_t n) {
        struct btrfs_place best, r;
        size_t at = 0;

        btrfs_place_rank(f, ids[0], lens[0], &best);
        for (size_t i = 1; i < n; i++) {
                btrfs_place_rank(f, ids[i], lens[i], &r);
                if (btrfs_place_better(&r, &best)) {
                        best = r;
                        at = i;
                }
        }
        return at;
}

static void test_place(void) {
        struct btrfs_subvol subs[] = {
                sub(256, 0xa1, 0, false, 1000),    /* "a/deeper/root", snapshotted */
                sub(257, 0xb1, 0xa1, true, 2000),  /* its read-only snapshots */
                sub(258, 0xb2, 0xa1, true, 3000),
                sub(300, 0xc1, 0, false, 1000),    /* "home": none */
                sub(400, 0xd1, 0, false, 1000),    /* "srv": one snapshot, newer */
                sub(401, 0xd2, 0xd1, true, 5000),
        };
        struct btrfs_facts f = { .have_info = true, .self = subs[3], .sight = BTRFS_SIGHT_ALL, .subs = subs,
                                 .n_subs = 4 };
        uint64_t ids[] = { 300, 256, 257, 0 };
        size_t lens[] = { 5, 14, 30, 1 };

        is_int(choose(&f, ids, lens, 2), 1, "the snapshotted subvolume wins over the shorter root");
        is_int(choose(&f, ids, lens, 3), 1, "a read-only snapshot mounted is no place: its atimes stay");
        is_int(choose(&f, ids, lens, 4), 1, "nor a mount whose subvolume is unknown");
        is_int(choose(NULL, ids, lens, 2), 0, "no look yet: the shortest root");
        f.sight = BTRFS_SIGHT_BENEATH;
        is_int(choose(&f, ids, lens, 2), 0, "a look that saw only some subvolumes: the shortest root");
        f.sight = BTRFS_SIGHT_NONE;
        is_int(choose(&f, ids, lens, 2), 0, "nor one that saw none");
        f.sight = BTRFS_SIGHT_ALL;
        f.n_subs = 6;
        uint64_t ids2[] = { 256, 400, 256 };
        size_t lens2[] = { 14, 20, 3 };

        is_int(choose(&f, ids2, lens2, 2), 1, "of two snapshotted, the newest snapshot wins");
        subs[5].otime = 3000;
        is_int(choose(&f, ids2, lens2, 2), 0, "as new: the most snapshots win");
        is_int(choose(&f, ids2, lens2, 3), 2, "of two mounts of one subvolume, the shorter root");
        /* The snapshots deleted: none shares any more. */
        memset(subs[1].parent_uuid, 0, 16);
        memset(subs[2].parent_uuid, 0, 16);
        memset(subs[5].parent_uuid, 0, 16);
        uint64_t ids3[] = { 256, 400 };
        size_t lens3[] = { 14, 14 };

        is_int(choose(&f, ids3, lens3, 2), 0, "none shares, roots as long: the oldest stays");
}

/* The place moved to another subvolume: its sample's count since its
 * newest snapshot is no growth of the last one's. */
static void test_moved(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status, out;
        BtrfsLook l = look(12300000, 500000, 1, 0, 0, 40);

        l.subvol = 256;
        apply(&m, l, true);
        l = look(12300000, 500000, 1, 0, 0, 100);
        l.subvol = 256;
        apply(&m, l, true); /* the first one's taint lifted */
        l = look(12835000, 500000, 1, 1000, 100, 160);
        l.subvol = 256;
        apply(&m, l, true);
        ok(m.model.intervals == 1 && fabs(st->bytes_per_inode - 535) < 1e-9, "learned through subvolume 256");
        btrfs_meter_status(&m, "rw,subvolid=256,subvol=/a", &out);
        ok(out.sampled, "a mount of it: sampled");
        btrfs_meter_status(&m, "rw,subvolid=300,subvol=/home", &out);
        ok(!out.sampled, "another subvolume's: not sampled");
        l = look(13000000, 500000, 1, 3000, 300, 220);
        l.subvol = 300;
        apply(&m, l, false);
        ok(!st->rate_fresh && m.model.intervals == 1 && fabs(st->bytes_per_inode - 535) < 1e-9,
           "moved: the new sample's count is no growth, nothing priced; the model stays");
        btrfs_meter_status(&m, "rw,subvolid=300,subvol=/home", &out);
        ok(out.sampled, "the new place's mount is the sampled one");
        l = look(13100000, 500000, 1, 3200, 320, 280);
        l.subvol = 300;
        apply(&m, l, false);
        ok(st->rate_fresh && st->rate_source == BTRFS_FIGURE_MODELLED && fabs(st->per_day * 60 / 86400 - 200 * 535) < 1e-3,
           "the next interval: its growth priced at the bytes learned");
        btrfs_meter_done(&m);
}

/* No mount writes atime (noatime alone): looks without a sweep keep the
 * facts and measure nothing; the status says exactly 0, not waiting; a
 * sweep's look, once a mount writes atime again, begins an interval
 * rather than measuring one from the last look without a sweep; and back. */
static void look_only(BtrfsMeter *m, BtrfsLook l) {
        BtrfsSweep s = { .target = "/mnt/noatime", .now = 2000, .prior = { 537, 1300 } };

        l.since = (struct btrfs_since) {}; /* no sweep: no sample's count */
        btrfs_meter_look(m, &l, &s);
        btrfs_look_done(&l);
}

static void test_look_only(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status, out;
        BtrfsLook l = look(12300000, 500000, 2, 0, 0, 40);

        l.facts.snapshots.newest_otime = 1500;
        look_only(&m, l);
        ok(st->have && st->facts.metadata_bytes_used == 12300000 && st->facts.snapshots.count == 2 &&
                   st->facts.snapshots.newest_otime == 1500 && st->at == 2000,
           "a look without a sweep: its facts kept (bytes, snapshots)");
        ok(!st->have_rate && st->since_source == BTRFS_FIGURE_NONE && st->inodes_since < 0,
           "and no interval measured, no total since the snapshot");
        btrfs_meter_status(&m, "rw,noatime,subvolid=256,subvol=/a", &out);
        btrfs_status_no_atime(&out);
        ok(out.have && out.facts.metadata_bytes_used == 12300000, "the status shows the facts");
        ok(out.no_atime && out.source == BTRFS_BYTES_NO_ATIME && out.have_rate && out.per_day == 0 &&
                   out.per_day_hi == 0 && out.rate_source == BTRFS_FIGURE_MEASURED && !out.sampled,
           "and exactly 0 bytes a day, source no_atime (not waiting), not sampled");
        is_str(btrfs_bytes_source_to_string(out.source), "no_atime", "its name");
        look_only(&m, look(14000000, 600000, 2, 0, 0, 100));
        ok(st->facts.metadata_bytes_used == 14000000 && !st->have_rate && m.sum_seconds == 0,
           "a second look: the facts follow; the growth is not atime's, nothing counted");
        BtrfsLook f = look(0, 0, 2, 0, 0, 130);
        f.r = -EMEDIUMTYPE;
        look_only(&m, f);
        ok(!st->have && st->error == -EMEDIUMTYPE && m.error_said, "a failed look: said, no facts");
        look_only(&m, look(14000000, 600000, 2, 0, 0, 160));
        ok(st->have && !m.error_said, "looks again");

        /* Remounted relatime: the sweeps' looks take over. */
        apply(&m, look(15000000, 600000, 2, 0, 0, 220), true);
        ok(st->source == BTRFS_BYTES_WAITING && !st->have_rate,
           "the first sweep's look begins an interval: the growth since the last look without a sweep is not measured");
        apply(&m, look(15000000, 600000, 2, 0, 0, 280), true);
        apply(&m, look(15535000, 600000, 2, 1000, 100, 340), true);
        ok(st->source == BTRFS_BYTES_MEASURED && fabs(st->bytes_per_inode - 535) < 1e-9, "then measured, as ever");
        btrfs_meter_status(&m, "rw,relatime,subvolid=256,subvol=/a", &out);
        ok(!out.no_atime && out.source == BTRFS_BYTES_MEASURED && out.per_day > 0, "its status: the sweeps'");

        /* And noatime again: the looks without a sweep, the model kept. */
        look_only(&m, look(15600000, 600000, 2, 0, 0, 400));
        btrfs_meter_status(&m, "rw,noatime,subvolid=256,subvol=/a", &out);
        btrfs_status_no_atime(&out);
        ok(out.have && out.per_day == 0 && out.mean_seconds == 0 && out.source == BTRFS_BYTES_NO_ATIME &&
                   out.since_source == BTRFS_FIGURE_NONE && out.model_intervals == 1,
           "noatime again: 0 bytes a day, no mean, no total since; the model learned stays");
        btrfs_meter_done(&m);
}

int main(void) {
        test_model();
        test_look_only();
        test_meter();
        test_meter_fifo();
        test_prior();
        test_prior_dirs();
        test_bytes_label();
        test_snapshots();
        test_place();
        test_moved();
        test_parse();
        test_interval();
        test_taint();
        test_find_fsid();
        return tap_done();
}
