/* test-btrfs: the pure part of the btrfs modules on plain inputs: the
 * tree of roots' records gathered (which subvolumes are snapshots of a
 * mount's, the evidence, what the sample does not cover), sysfs counters
 * and mount options read, what an interval's metadata growth is taken
 * for (atime's cost only where the interval was pure, the data still,
 * the tracked snapshots the same and the filesystem's evidence still,
 * and only once the commit that would show a write has come), and the
 * model learnt so that no one interval makes it. The look itself is
 * judged on a real btrfs by tests/integration/btrfs.sh against
 * btrfs-progs, the attacks by btrfs-attacks.sh. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "btrfs.h"
#include "btrfs-meter.h"
#include "btrfs-model.h"
#include "btrfs-roots.h"
#include "log.h"

/* A subvolume's record, as the helper sends it: uuid and parent_uuid
 * filled with a tag byte each (0: none). */
static struct btrfs_root_record rec(uint64_t id, uint64_t parent, uint8_t tag, uint8_t parent_tag, bool ro,
                                   int64_t otime) {
        struct btrfs_root_record r = { .id = id, .parent_id = parent, .read_only = ro, .otime = otime, .refs = 1,
                                       .tree_bytes = 16384, .generation = 10 };

        memset(r.uuid, tag, 16);
        if (parent_tag) {
                memset(r.parent_uuid, parent_tag, 16);
                r.last_snapshot = 9;
        }
        return r;
}

/* The records gathered, wanting 'w' (n of them), 'place' sampled. */
static void gather(const struct btrfs_root_record *r, size_t n, const struct btrfs_wanted *w, size_t nw, uint64_t place,
                   const struct btrfs_roots_end *end, struct btrfs_roots_result *ret) {
        BtrfsRoots *g = NULL;

        ok(btrfs_roots_new(w, nw, place, 42, &g) == 0, "a gathering");
        for (size_t i = 0; i < n; i++)
                btrfs_roots_add(&r[i], g);
        ok(btrfs_roots_finish(g, end, ret) == 0, "gathered");
        btrfs_roots_free(g);
}

static const struct btrfs_tracked *tracked(const struct btrfs_roots_result *g, uint64_t id) {
        for (size_t i = 0; i < g->n_tracked; i++)
                if (g->tracked[i].sub.id == id)
                        return &g->tracked[i];
        return NULL;
}

/* The one tracked subvolume a test needs: not there, the test stops. */
static struct btrfs_subvol tracked_sub(const struct btrfs_roots_result *g, uint64_t id) {
        const struct btrfs_tracked *t = tracked(g, id);

        if (!t) {
                printf("Bail out! subvolume %llu not gathered\n", (unsigned long long) id);
                exit(EXIT_FAILURE);
        }
        return t->sub;
}

static void test_snapshots(void) {
        struct btrfs_root_record r[] = {
                rec(5, 0, 0x05, 0, false, 0),
                rec(256, 5, 0xa1, 0, false, 1000),
                rec(257, 5, 0xb1, 0xa1, true, 2000),  /* a read-only snapshot of 256 */
                rec(258, 5, 0xb2, 0xa1, false, 3000), /* a writable one, newer */
                rec(259, 5, 0xb3, 0xb1, true, 4000),  /* a snapshot of a snapshot: not 256's */
                rec(260, 5, 0xb4, 0, false, 5000),    /* another subvolume */
        };
        struct btrfs_wanted w[] = { { 256, true }, { 257, false }, { 5, false }, { 999, false } };
        struct btrfs_roots_end end = { .records = 6, .csum_generation = 7 };
        struct btrfs_roots_result g;
        const struct btrfs_tracked *t;
        int64_t since = 0;

        gather(r, ELEMENTSOF(r), w, ELEMENTSOF(w), 256, &end, &g);
        t = tracked(&g, 256);
        ok(t && t->snapshots.count == 2, "two subvolumes have 256's uuid as parent_uuid");
        ok(t && t->snapshots.read_only == 1 && t->snapshots.newest_otime == 3000, "one read-only, the newest made at 3000");
        ok(t && t->snapshots.ids_sum == 257 + 258, "their ids, to tell one deleted and one made from none");
        ok(t && t->snapshots.period_s == 1000 && t->n_snapshot_ids == 2 && t->snapshot_ids[0] == 258,
           "made 1000 s apart: the rhythm; their ids kept, newest first");
        ok(t && btrfs_shares(&t->sub, &t->snapshots, &since) && since == 3000, "snapshotted: shares since its newest");
        t = tracked(&g, 257);
        ok(t && t->snapshots.count == 1 && t->sub.read_only, "a snapshot's own snapshot counted for it");
        ok(tracked(&g, 5) && !tracked(&g, 999) && g.n_tracked == 3, "the top level found, an id not there not");
        ok(g.evidence.have && g.evidence.subvolumes == 6 && g.evidence.csum_generation == 7 && g.subvolumes == 6,
           "the evidence: six subvolumes, the checksum tree's generation");
        ok(g.unseen.known && g.unseen.count == 0,
           "nothing unseen: 258 shares, but no mount writing atime reaches it (5's mount does not)");
        /* Another mount's subvolume, found by a look through another. */
        struct btrfs_facts f = { .have_info = true, .have_subvol = true, .self = tracked_sub(&g, 5),
                                 .sight = BTRFS_SIGHT_ALL, .tracked = g.tracked, .n_tracked = g.n_tracked };
        struct btrfs_subvol found;
        struct btrfs_snapshots s;

        ok(btrfs_facts_of(&f, 256, &found, &s) && found.id == 256 && s.count == 2, "a tracked one: its snapshots");
        ok(!btrfs_facts_of(&f, 260, &found, &s), "one no mount shows: not kept");
        f.sight = BTRFS_SIGHT_NONE;
        ok(!btrfs_facts_of(&f, 5, &found, &s), "the one looked through, without sight: not seen");
        btrfs_roots_result_done(&g);

        /* Without the scan's end (the helper did not finish): no evidence. */
        gather(r, ELEMENTSOF(r), w, 1, 256, NULL, &g);
        ok(!g.evidence.have && g.truncated, "no end: no evidence, a part");
        btrfs_roots_result_done(&g);
        ok(!btrfs_shares(&(struct btrfs_subvol) { .id = 260 }, &(struct btrfs_snapshots) {}, &since) && since == 0,
           "a lone subvolume shares nothing");
}

/* Any number of snapshots: counted whole, the newest kept. */
static void test_many(void) {
        size_t n = 3 * BTRFS_SNAPSHOTS_KEPT;
        struct btrfs_root_record *r = calloc(n + 1, sizeof *r);
        struct btrfs_wanted w = { 256, true };
        struct btrfs_roots_result g;
        const struct btrfs_tracked *t;

        r[0] = rec(256, 5, 0xa1, 0, false, 1000);
        for (size_t i = 1; i <= n; i++)
                r[i] = rec(256 + i, 5, 0xb1, 0xa1, true, (int64_t) (1000 + 10 * i));
        gather(r, n + 1, &w, 1, 256, &(struct btrfs_roots_end) {}, &g);
        t = tracked(&g, 256);
        ok(t && t->snapshots.count == n, "%zu snapshots counted", n);
        ok(t && t->n_snapshot_ids == BTRFS_SNAPSHOTS_KEPT && t->snapshot_ids[0] == 256 + n &&
                   t->snapshots.period_s == 10 && t->snapshots.newest_otime == (int64_t) (1000 + 10 * n),
           "the newest %d kept, newest first, their rhythm", BTRFS_SNAPSHOTS_KEPT);
        btrfs_roots_result_done(&g);
        free(r);
}

/* Snapshotted subvolumes a mount writing atime reaches, other than the
 * one sampled: what the sample does not cover. */
static void test_unseen(void) {
        struct btrfs_root_record r[] = {
                rec(5, 0, 0x05, 0, false, 0),
                rec(256, 5, 0xa1, 0, false, 1000),     /* vol, beneath the top level */
                rec(257, 5, 0xb1, 0xa1, true, 2000),   /* its read-only snapshot, a sibling */
                rec(258, 256, 0xc1, 0, false, 1000),   /* nested in vol */
                rec(259, 258, 0xc2, 0, false, 1000),   /* nested deeper, snapshotted: */
                rec(260, 5, 0xc3, 0xc2, false, 2000),  /* its writable snapshot, a sibling of vol */
                rec(261, 256, 0xc4, 0, false, 1000),   /* nested in vol, never snapshotted */
        };
        struct btrfs_wanted top = { 5, true }, vol = { 256, true };
        struct btrfs_roots_result g;

        r[1].last_snapshot = r[4].last_snapshot = 9; /* the kernel marks an origin too */
        r[6].tree_bytes = 1 << 20;
        gather(r, ELEMENTSOF(r), &top, 1, 5, &(struct btrfs_roots_end) {}, &g);
        ok(g.unseen.known && g.unseen.count == 3 && g.unseen.tree_bytes == 3 * 16384,
           "the top level sampled: vol, the nested one snapshotted and that snapshot are unseen (%u)", g.unseen.count);
        btrfs_roots_result_done(&g);
        gather(r, ELEMENTSOF(r), &vol, 1, 256, &(struct btrfs_roots_end) {}, &g);
        ok(g.unseen.count == 1 && g.unseen.ids[0] == 259,
           "vol sampled: the snapshotted one nested in it is unseen, the sibling snapshot not reached");
        btrfs_roots_result_done(&g);
        vol.writes_atime = false;
        gather(r, ELEMENTSOF(r), &vol, 1, 256, &(struct btrfs_roots_end) {}, &g);
        ok(g.unseen.count == 0, "mounted noatime: nothing read there, nothing unseen");
        btrfs_roots_result_done(&g);
}

/* What the evidence says between two looks. */
static void test_evidence(void) {
        struct btrfs_root_record r[] = { rec(5, 0, 0x05, 0, false, 0), rec(256, 5, 0xa1, 0, false, 1000),
                                         rec(257, 5, 0xb1, 0xa1, true, 2000) };
        struct btrfs_wanted w = { 256, true };
        struct btrfs_roots_end end = { .csum_generation = 7 };
        struct btrfs_roots_result a, b;

        gather(r, ELEMENTSOF(r), &w, 1, 256, &end, &a);
        r[1].generation = r[1].ctransid = 99; /* atime updates move these */
        gather(r, ELEMENTSOF(r), &w, 1, 256, &end, &b);
        ok(btrfs_evidence_still(&a.evidence, &b.evidence), "a tree's generation moved (atime updates): still");
        btrfs_roots_result_done(&b);
        r[1].tree_bytes += 16384;
        gather(r, ELEMENTSOF(r), &w, 1, 256, &end, &b);
        ok(!btrfs_evidence_still(&a.evidence, &b.evidence), "a tree grew by a node (files made): moved");
        btrfs_roots_result_done(&b);
        r[1].tree_bytes -= 16384;
        end.csum_generation = 8;
        gather(r, ELEMENTSOF(r), &w, 1, 256, &end, &b);
        ok(!btrfs_evidence_still(&a.evidence, &b.evidence), "a checksum written (data): moved");
        btrfs_roots_result_done(&b);
        end.csum_generation = 7;
        struct btrfs_root_record more[] = { r[0], r[1], r[2], rec(300, 5, 0xd1, 0, false, 3000) };
        gather(more, ELEMENTSOF(more), &w, 1, 256, &end, &b);
        ok(!btrfs_evidence_still(&a.evidence, &b.evidence), "a subvolume made, by anyone: moved");
        btrfs_roots_result_done(&b);
        more[3].refs = 0;
        gather(more, ELEMENTSOF(more), &w, 1, 256, &end, &b);
        ok(b.evidence.dead == 1 && !btrfs_evidence_still(&b.evidence, &b.evidence),
           "one deleted, its tree not yet freed: never still");
        btrfs_roots_result_done(&b);
        btrfs_roots_result_done(&a);
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
                .evidence = { .have = true, .subvolumes = 3, .set_digest = 11, .trees_digest = 22, .csum_generation = 7 },
                .unseen = { .known = true },
        };
}

static void test_interval(void) {
        struct btrfs_facts a = facts(12300000, 500000, 1, 257), b = facts(23000000, 500000, 1, 257);
        BtrfsIntervalInput in = { .prev = &a, .cur = &b, .seconds = 60, .pure = true };
        BtrfsIntervalVerdict v = btrfs_interval(&in);

        is_int(v.source, BTRFS_BYTES_PENDING, "a pure interval: held for its commit");
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
        b.evidence.set_digest++;
        b.evidence.subvolumes++;
        v = btrfs_interval(&in);
        ok(v.source == BTRFS_BYTES_IMPURE && v.writes,
           "a subvolume made elsewhere, by anyone: a write, not a snapshot of this one (the figure is modelled)");
        b = facts(23000000, 500000, 1, 257);
        b.evidence.trees_digest++;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_IMPURE, "a tree grew or shrank by a node (files made): impure");
        b = facts(23000000, 500000, 1, 257);
        b.evidence.csum_generation++;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_IMPURE, "a checksum written (data, freed or rewritten): impure");
        b = facts(23000000, 500000, 1, 257);
        b.evidence.have = false;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_UNPROVEN, "no evidence at one end: not provable");
        b = facts(12300000, 500000, 1, 257);
        v = btrfs_interval(&in);
        ok(v.source == BTRFS_BYTES_PENDING && v.bytes == 0, "nothing un-shared: a zero, held");
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
        is_str(btrfs_bytes_source_to_string(BTRFS_BYTES_PENDING), "pending", "pending's");
        is_str(btrfs_sight_to_string(BTRFS_SIGHT_BENEATH), "beneath", "sight names");
}

/* Another mount's subvolume snapshotted: the interval changes only for the
 * tracked ones' snapshots. */
static void test_interval_tracked(void) {
        struct btrfs_tracked ta = { .sub = { .id = 300 }, .snapshots = { .count = 1, .ids_sum = 301 } }, tb = ta;
        struct btrfs_facts a = facts(1000, 0, 1, 257), b = facts(1000, 0, 1, 257);
        BtrfsIntervalInput in = { .prev = &a, .cur = &b, .seconds = 60, .pure = true };

        a.tracked = &ta;
        b.tracked = &tb;
        a.n_tracked = b.n_tracked = 1;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_PENDING, "the tracked ones the same: held");
        tb.snapshots.count = 2;
        tb.snapshots.ids_sum += 302;
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_SNAPSHOT_CHANGED, "another mount's subvolume snapshotted: said");
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
        is_int(btrfs_interval(&in).source, BTRFS_BYTES_PENDING, "and held for its own commit");

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
        btrfs_model_learn(&m, 5000, 0, 0, 0, 0);
        btrfs_model_learn(&m, NAN, 100, 10, 0, 0);
        btrfs_model_learn(&m, -1, 100, 10, 0, 0);
        btrfs_model_learn(&m, 5000, 100, 0, 0, 0);
        ok(!btrfs_model_ready(&m), "a run with no sampled inode written, or a bad figure, teaches nothing");
        btrfs_model_learn(&m, 10700000, 20000, 200, 0, 0);
        ok(btrfs_model_ready(&m) && m.intervals == 1, "a measured run with inodes written teaches");
        btrfs_model_price(&m, 1000, 10, &b, &lo, &hi);
        ok(fabs(b - 535000) < 1e-6, "535 bytes an inode, as the issue's grep measured: 1000 inodes 535 kB");
        ok(lo < b && b < hi && lo > 0, "inside its 95%% interval (%.0f-%.0f)", lo, hi);
        btrfs_model_price(&m, 1000, 1000, &b, &lo, &hi);
        double narrow = hi - lo;
        btrfs_model_price(&m, 1000, 10, &b, &lo, &hi);
        ok(narrow < hi - lo, "more sampled inodes: a narrower interval");
}

/* No one run makes it: the forged run (92,751 bytes an inode
 * from files made, not read) moves a model that starts from the table's
 * 537 at most a step, the next honest run takes it back, and a value
 * beyond the table's range is not saved until a window of runs agrees. */
static void test_model_robust(void) {
        BtrfsModel m = {};
        const char *why;

        btrfs_model_learn(&m, 92751.0 * 100, 100, 20, 0, 537);
        ok(btrfs_model_value(&m) <= 537 * BTRFS_MODEL_STEP + 1e-9,
           "one forged run: at most a step from the table's value (%.0f)", btrfs_model_value(&m));
        btrfs_model_learn(&m, 540.0 * 1000, 1000, 100, 0, 537);
        ok(fabs(btrfs_model_value(&m) - 540) < 1e-9, "the next honest run: back at its value (%.0f)", btrfs_model_value(&m));
        for (int i = 0; i < 3; i++)
                btrfs_model_learn(&m, 530.0 * 1000, 1000, 100, 0, 537);
        btrfs_model_learn(&m, 92751.0 * 100, 100, 20, 0, 537);
        ok(btrfs_model_value(&m) < 600, "a forged run among honest ones: the median holds (%.0f)", btrfs_model_value(&m));
        ok(btrfs_model_keepable(&m, 537, 16384, &why) && !why, "within the table's range: saved, nothing to say");

        /* A ceiling: no inode un-shares more than its leaf and the nodes above it. */
        BtrfsModel c = {};
        btrfs_model_learn(&c, 1e9, 10, 10, 3 * 16384, 0);
        ok(btrfs_model_value(&c) <= 3 * 16384, "bounded by the ceiling (%.0f)", btrfs_model_value(&c));

        /* Beyond the range: used, not saved, until the runs agree. */
        BtrfsModel far = {};
        for (int i = 0; i < 4; i++)
                btrfs_model_learn(&far, 8000.0 * 1000, 1000, 100, 0, 537);
        ok(btrfs_model_value(&far) > 537 * BTRFS_PRIOR_SPREAD && !btrfs_model_keepable(&far, 537, 16384, &why) && why,
           "8,000 bytes an inode, four runs: beyond the range, not saved (%s)", why);
        ok(btrfs_model_keepable(&far, 537, 65536, &why) && !why, "on 64 KiB nodes the range is four times wider: saved");
        for (int i = 0; i < BTRFS_MODEL_WINDOW; i++)
                btrfs_model_learn(&far, 8000.0 * 1000, 1000, 100, 0, 537);
        ok(btrfs_model_keepable(&far, 537, 16384, &why) && why, "a full window agreeing: saved, and said why (%s)", why);
        far.agreed = false;
        ok(!btrfs_model_seedable(&far, 537, 16384, &why) && why,
           "a saved model beyond the range, not saved as agreed (before the bound): not taken back");
        far.agreed = true;
        ok(btrfs_model_seedable(&far, 537, 16384, &why), "saved as agreed: taken back");
        ok(btrfs_model_seedable(&m, 537, 16384, &why), "one within the range: taken back");
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

static void apply_sweep(BtrfsMeter *m, BtrfsLook l, bool pure, double prior) {
        BtrfsSweep s = { .target = "/mnt/test", .pure = pure, .commit_s = 30, .now = 2000, .prior = { prior, 0 } };

        btrfs_meter_apply(m, &l, &s);
        btrfs_look_done(&l);
}

static void apply(BtrfsMeter *m, BtrfsLook l, bool pure) {
        apply_sweep(m, l, pure, 0);
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
        ok(st->source == BTRFS_BYTES_PENDING && !st->have_rate && st->pending == 1,
           "a pure interval: held until its commit, nothing counted yet");
        apply(&m, look(23000000, 500000, 1, 20000, 200, 220), true);
        ok(st->source == BTRFS_BYTES_MEASURED && st->rate_source == BTRFS_FIGURE_MEASURED,
           "committed, the evidence still: measured");
        ok(fabs(st->per_day - 10700000.0 * 1440) < 1e-3 && st->per_day_lo == st->per_day, "10.7 MB a minute");
        ok(st->since_source == BTRFS_FIGURE_MEASURED && fabs(st->since - 10700000) < 1e-6,
           "since the snapshot: the measured 10.7 MB");
        ok(st->model_intervals == 0, "its reads' run is not over: nothing learnt yet");

        /* The filesystem wrote data too: the bytes are the model's. The
         * interval held before it closes the run: learnt. */
        apply(&m, look(30000000, 900000, 1, 21000, 210, 280), false);
        ok(fabs(st->bytes_per_inode - 535) < 1e-9 && st->model_intervals == 1, "the model learned 535 bytes an inode");
        ok(st->source == BTRFS_BYTES_IMPURE && st->rate_source == BTRFS_FIGURE_MODELLED, "an impure interval: modelled");
        ok(fabs(st->per_day - 535000.0 * 720) < 1e-3,
           "1000 more inodes, 535 kB, with the 0 bytes measured before: over two minutes (%.0f)", st->per_day);
        ok(st->per_day_lo < st->per_day && st->per_day < st->per_day_hi, "inside its interval");
        ok(fabs(st->total - 10700000) < 1e-6, "the measured total keeps only what was measured");
        ok(st->since_source == BTRFS_FIGURE_MODELLED && fabs(st->since - 21000.0 * 535) < 1e-3,
           "since the snapshot: 21000 inodes at 535 bytes, modelled");

        /* sysfs gone: said, nothing lost. */
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
        apply(&m, look(31000000, 900000, 1, 21500, 215, 460), true);
        apply(&m, look(31000000, 900000, 1, 21500, 215, 520), true);
        apply(&m, look(31535000, 900000, 1, 22500, 225, 580), true);
        apply(&m, look(31535000, 900000, 1, 22500, 225, 640), true);
        apply(&m, look(31535000, 900000, 1, 22500, 225, 700), true);
        ok(st->source == BTRFS_BYTES_MEASURED && m.model.intervals == 2 && !m.error_said,
           "looks again: measured, and learns again");
        ok(fabs(st->total - 11235000) < 1e-6, "535 kB more measured (%.0f)", st->total);

        /* A snapshot made mid-interval. */
        BtrfsLook c = look(32000000, 900000, 2, 0, 0, 760);
        c.facts.snapshots.ids_sum = 257 + 261;
        c.facts.snapshots.newest_otime = c.since.since = 1500;
        c.facts.evidence.set_digest++; /* a subvolume made */
        c.facts.evidence.subvolumes++;
        apply(&m, c, true);
        ok(st->source == BTRFS_BYTES_SNAPSHOT_CHANGED && m.change_said, "a snapshot made: not atime's, said");
        ok(st->since_source == BTRFS_FIGURE_MEASURED && st->since == 0, "the total since the new one begins at 0");
        ok(m.model.intervals == 2 && fabs(st->total - 11235000) < 1e-6 && m.n_pending == 0,
           "nothing lost, nothing held");

        /* Quotas the operator turned on, inconsistent, then unreadable. */
        BtrfsLook q = look(32000000, 900000, 2, 0, 0, 820);
        q.facts.snapshots.ids_sum = 257 + 261;
        q.facts.snapshots.newest_otime = q.since.since = 1500;
        q.facts.evidence = c.facts.evidence;
        q.facts.quotas = q.facts.have_qgroups = q.facts.qgroups_inconsistent = true;
        q.facts.self.exclusive = 16384;
        apply(&m, q, true);
        ok(m.inconsistent_said && st->facts.have_qgroups && st->facts.self.exclusive == 16384 && st->have,
           "inconsistent quotas: said, their bytes shown as they are");
        q = look(32000000, 900000, 2, 0, 0, 880);
        q.facts.snapshots.ids_sum = 257 + 261;
        q.facts.snapshots.newest_otime = q.since.since = 1500;
        q.facts.evidence = c.facts.evidence;
        q.facts.quotas = true;
        q.facts.qgroup_error = -EACCES;
        apply(&m, q, true);
        ok(m.qgroup_said && !st->facts.have_qgroups && st->source != BTRFS_BYTES_IMPURE &&
                   fabs(st->total - 11235000) < 1e-6,
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

/* The inflation: files made in a subvolume no snapshot shares,
 * nothing read. The sample sees nothing (btrfs counts no free inodes),
 * the data does not move, the metadata grows: only the evidence tells,
 * at the commit, which may come an interval after the bytes moved. The
 * figure stays, the model learns nothing. */
static void test_meter_inflation(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status;
        BtrfsLook l;

        apply_sweep(&m, look(12300000, 500000, 1, 0, 0, 40), true, 537);
        apply_sweep(&m, look(12300000, 500000, 1, 0, 0, 100), true, 537); /* tainted by the first look */
        /* The bytes move before the commit; the tree's size only at it. */
        apply_sweep(&m, look(14000000, 500000, 1, 0, 0, 160), true, 537);
        ok(st->source == BTRFS_BYTES_PENDING && st->total == 0, "grown, evidence not yet moved: held, not counted");
        l = look(16700000, 500000, 1, 0, 0, 220);
        l.facts.evidence.trees_digest++;
        apply_sweep(&m, l, true, 537);
        ok(st->source == BTRFS_BYTES_IMPURE && st->total == 0 && m.n_pending == 0,
           "the commit shows a tree grown: both intervals modelled, nothing measured");
        ok(st->rate_source == BTRFS_FIGURE_MODELLED && st->per_day == 0 && st->model_intervals == 0,
           "no inode read: 0 bytes modelled, the model untaught");
        btrfs_meter_done(&m);
}

/* A loaded host: the commit that carries a pass's bytes comes long after
 * its reads, more than a commit period (a transaction thread that got no
 * CPU). The run is learnt once that commit has come, not a period after
 * the reads, which learnt a pass of 0 bytes and then bytes without reads
 * (the model fell to half its value). */
static void test_meter_late_commit(void) {
        BtrfsMeter m = {};
        uint64_t meta = 12300000, commits = 1;

        for (uint64_t t = 40; t <= 400; t += 10) {
                BtrfsLook l = look(meta, 500000, 1, t >= 130 ? 1000 : 0, t >= 130 ? 100 : 0, t);

                if (t == 180) {
                        meta += 535000; /* the pass's commit, 50 s after its reads */
                        commits++;
                }
                l.facts.metadata_bytes_used = meta;
                l.facts.commits = commits;
                apply(&m, l, true);
        }
        ok(m.status.model_intervals == 1 && fabs(m.status.bytes_per_inode - 535) < 1,
           "the pass's bytes came 50 s after its reads: learnt once they had, 535 bytes an inode (%.1f, %u runs)",
           m.status.bytes_per_inode, m.status.model_intervals);
        ok(fabs(m.status.total - 535000) < 1e-6, "and the whole 535 kB measured (%.0f)", m.status.total);
        btrfs_meter_done(&m);
}

/* Looks a second apart (the fine sweeps'), a commit every 30 s: more
 * intervals are held than the bound keeps before any is confirmed. They
 * are held together, never modelled for want of room: the pass is
 * measured, whole. */
static void test_meter_fast_looks(void) {
        BtrfsMeter m = {};
        uint64_t meta = 12300000;
        bool measured = false;
        unsigned most = 0;

        for (uint64_t t = 40; t <= 400; t++) {
                BtrfsLook l = look(meta, 500000, 1, t >= 150 ? 1000 : 0, t >= 150 ? 100 : 0, t);

                if (t == 160)
                        meta += 535000;
                l.facts.metadata_bytes_used = meta;
                l.facts.commits = 1 + (t >= 160) + (t >= 190);
                apply(&m, l, true);
                measured |= m.status.source == BTRFS_BYTES_MEASURED;
                most = m.status.pending > most ? m.status.pending : most;
        }
        ok(measured && most <= BTRFS_PENDING_MAX, "looks a second apart: measured (at most %u held)", most);
        ok(fabs(m.status.total - 535000) < 1e-6, "the pass's 535 kB measured whole (%.0f)", m.status.total);
        ok(m.status.model_intervals == 1 && fabs(m.status.bytes_per_inode - 535) < 1, "and learnt: %.1f bytes an inode",
           m.status.bytes_per_inode);
        btrfs_meter_done(&m);
}

/* Reads of a snapshotted subvolume the sample does not cover: a modelled
 * interval's top holds what they can un-share (never 0 to 0). */
static void test_meter_unseen(void) {
        BtrfsMeter m = {};
        struct btrfs_status *st = &m.status;
        BtrfsLook l;

        for (uint64_t t = 40; t <= 160; t += 60) {
                l = look(12300000 + (t == 160 ? 10000000 : 0), 500000, 0, 0, 0, t);
                l.facts.unseen = (struct btrfs_unseen) { .known = true, .count = 1, .tree_bytes = 20000000, .ids = { 258 } };
                apply(&m, l, t != 160);
        }
        ok(st->rate_source == BTRFS_FIGURE_MODELLED && st->per_day == 0 && st->widened,
           "the place shares nothing: 0 modelled, widened");
        ok(fabs(st->per_day_hi - 10000000.0 * 1440) < 1e-3,
           "its top: the metadata's growth, under what the unseen tree holds (%.0f)", st->per_day_hi);
        /* The place's own mount shows those bytes (its history, its
         * advice), though its subvolume has no snapshot; another does not. */
        struct btrfs_status shown = *st;

        shown.sampled = true;
        ok(st->reaches_unseen && btrfs_status_shows_bytes(&shown), "the mount sampled through shows the bytes");
        shown.sampled = false;
        ok(!btrfs_status_shows_bytes(&shown), "a mount not sampled through, sharing nothing of its own, does not");
        /* An interval in which the metadata did not grow: nothing landed,
         * the commit that lands it is in a later interval, which holds it. */
        l = look(22300000, 500000, 0, 0, 0, 220);
        l.facts.unseen = (struct btrfs_unseen) { .known = true, .count = 1, .tree_bytes = 20000000, .ids = { 258 } };
        apply(&m, l, false);
        ok(st->rate_fresh && st->per_day_hi == 0 && st->widened,
           "no growth: a top of 0, the mean still said widened (%.0f)", st->per_day_hi);
        btrfs_meter_done(&m);
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

        /* A model kept from before a restart: the seed (once a look has
         * brought the cost table to judge it by). */
        BtrfsMeter r = { .priced = true };
        BtrfsModel saved = { .bytes = 2048000, .inodes = 4000, .hits = 400, .intervals = 3 };

        btrfs_meter_seed(&r, &saved);
        ok(r.model.intervals == 3 && r.status.bytes_per_inode == 512 && r.status.model_intervals == 3,
           "a kept model seeds a meter that learned nothing (512 bytes an inode, 3 intervals)");
        saved.bytes = 1;
        btrfs_meter_seed(&r, &saved);
        ok(r.model.bytes == 2048000, "but not one that has a model");
        BtrfsMeter z = { .priced = true };
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
        for (uint64_t t = 160; t <= 340; t += 60) {
                uint64_t k = t >= 220; /* then held, confirmed, and its run closed by a quiet one */
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
         * since the snapshot: a modelled 0 (with the quiet interval before
         * it, held, confirmed at it: 0 bytes measured). */
        for (uint64_t t = 40, k = 0; t <= 340; t += 60, k = MIN(k + 1, 3)) {
                bool pure = t < 340;
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

/* A look through subvolume 300 that gathered 'r' for the mounts of 256,
 * 257, 300 and 400. */
static void place_facts(const struct btrfs_root_record *r, size_t n, struct btrfs_facts *f) {
        struct btrfs_wanted w[] = { { 300, true }, { 256, true }, { 257, true }, { 400, true } };
        struct btrfs_roots_result g;

        gather(r, n, w, ELEMENTSOF(w), 300, &(struct btrfs_roots_end) {}, &g);
        *f = (struct btrfs_facts) { .have_info = true, .have_subvol = true, .self = tracked_sub(&g, 300),
                                    .sight = BTRFS_SIGHT_ALL, .tracked = g.tracked, .n_tracked = g.n_tracked };
}

static void test_place(void) {
        struct btrfs_root_record r[] = {
                rec(256, 5, 0xa1, 0, false, 1000),    /* "a/deeper/root", snapshotted */
                rec(257, 5, 0xb1, 0xa1, true, 2000),  /* its read-only snapshots */
                rec(258, 5, 0xb2, 0xa1, true, 3000),
                rec(300, 5, 0xc1, 0, false, 1000),    /* "home": none */
                rec(400, 5, 0xd1, 0, false, 1000),    /* "srv": one snapshot, newer */
                rec(401, 5, 0xd2, 0xd1, true, 5000),
        };
        struct btrfs_facts f;
        uint64_t ids[] = { 300, 256, 257, 0 };
        size_t lens[] = { 5, 14, 30, 1 };

        place_facts(r, 4, &f);
        is_int(choose(&f, ids, lens, 2), 1, "the snapshotted subvolume wins over the shorter root");
        is_int(choose(&f, ids, lens, 3), 1, "a read-only snapshot mounted is no place: its atimes stay");
        is_int(choose(&f, ids, lens, 4), 1, "nor a mount whose subvolume is unknown");
        is_int(choose(NULL, ids, lens, 2), 0, "no look yet: the shortest root");
        f.sight = BTRFS_SIGHT_BENEATH;
        is_int(choose(&f, ids, lens, 2), 0, "a look that saw only some subvolumes: the shortest root");
        f.sight = BTRFS_SIGHT_NONE;
        is_int(choose(&f, ids, lens, 2), 0, "nor one that saw none");
        btrfs_facts_done(&f);
        place_facts(r, 6, &f);
        uint64_t ids2[] = { 256, 400, 256 };
        size_t lens2[] = { 14, 20, 3 };

        is_int(choose(&f, ids2, lens2, 2), 1, "of two snapshotted, the newest snapshot wins");
        btrfs_facts_done(&f);
        r[5].otime = 3000;
        place_facts(r, 6, &f);
        is_int(choose(&f, ids2, lens2, 2), 0, "as new: the most snapshots win");
        is_int(choose(&f, ids2, lens2, 3), 2, "of two mounts of one subvolume, the shorter root");
        btrfs_facts_done(&f);
        /* The snapshots deleted: none shares any more. */
        memset(r[1].parent_uuid, 0, 16);
        memset(r[2].parent_uuid, 0, 16);
        memset(r[5].parent_uuid, 0, 16);
        place_facts(r, 6, &f);
        uint64_t ids3[] = { 256, 400 };
        size_t lens3[] = { 14, 14 };

        is_int(choose(&f, ids3, lens3, 2), 0, "none shares, roots as long: the oldest stays");
        btrfs_facts_done(&f);
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
        for (uint64_t t = 160; t <= 280; t += 60) { /* read, held, confirmed, its run closed */
                l = look(12835000, 500000, 1, 1000, 100, t);
                l.subvol = 256;
                apply(&m, l, true);
        }
        ok(m.model.intervals == 1 && fabs(st->bytes_per_inode - 535) < 1e-9, "learned through subvolume 256");
        btrfs_meter_status(&m, "rw,subvolid=256,subvol=/a", &out);
        ok(out.sampled, "a mount of it: sampled");
        btrfs_meter_status(&m, "rw,subvolid=300,subvol=/home", &out);
        ok(!out.sampled, "another subvolume's: not sampled");
        l = look(13000000, 500000, 1, 3000, 300, 340);
        l.subvol = 300;
        apply(&m, l, false);
        ok(st->rate_source == BTRFS_FIGURE_MEASURED && st->per_day == 0 && m.model.intervals == 1 &&
                   fabs(st->bytes_per_inode - 535) < 1e-9,
           "moved: the new sample's count is no growth, nothing priced (the quiet interval held before: 0 "
           "measured); the model stays");
        btrfs_meter_status(&m, "rw,subvolid=300,subvol=/home", &out);
        ok(out.sampled, "the new place's mount is the sampled one");
        l = look(13100000, 500000, 1, 3200, 320, 400);
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
        apply(&m, look(15535000, 600000, 2, 1000, 100, 400), true);
        ok(st->source == BTRFS_BYTES_MEASURED && st->per_day > 0, "then measured, as ever, once committed");
        btrfs_meter_status(&m, "rw,relatime,subvolid=256,subvol=/a", &out);
        ok(!out.no_atime && out.source == BTRFS_BYTES_MEASURED && out.per_day > 0, "its status: the sweeps'");
        apply(&m, look(15535000, 600000, 2, 1000, 100, 460), true);
        ok(fabs(st->bytes_per_inode - 535) < 1e-9, "and learnt from, once the reads' run is over");

        /* And noatime again: the looks without a sweep, the model kept. */
        look_only(&m, look(15600000, 600000, 2, 0, 0, 520));
        btrfs_meter_status(&m, "rw,noatime,subvolid=256,subvol=/a", &out);
        btrfs_status_no_atime(&out);
        ok(out.have && out.per_day == 0 && out.mean_seconds == 0 && out.source == BTRFS_BYTES_NO_ATIME &&
                   out.since_source == BTRFS_FIGURE_NONE && out.model_intervals == 1,
           "noatime again: 0 bytes a day, no mean, no total since; the model learned stays");
        btrfs_meter_done(&m);
}

int main(void) {
        test_model();
        test_model_robust();
        test_many();
        test_unseen();
        test_evidence();
        test_interval_tracked();
        test_meter_inflation();
        test_meter_late_commit();
        test_meter_fast_looks();
        test_meter_unseen();
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
