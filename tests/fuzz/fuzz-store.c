/* fuzz-store: the history snapshot and journal parsers, through
 * store_load_buffers(). The first byte b splits the rest: the first
 * b * len / 255 bytes are the snapshot ("history"), the others the journal
 * ("history.journal"); an empty part is a missing file (so b = 0 is a
 * journal alone, b = 255 a snapshot alone).
 *
 * Both files are checksummed (CRC-32), which random mutations almost never
 * get right: each input is loaded twice, as it is and with every checksum
 * recomputed, so that the parsers behind the checksums are fuzzed too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "store.h"
#include "strv.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "now" for what depends on it: 2027-01-15, after the corpus's samples. */
#define NOW INT64_C(1800086400)

static struct stats_ring_spec specs[STATS_MAX_RINGS];
static unsigned n_specs;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        if (stats_parse_rings("1min:6h, 10min:7d, 1h:90d", specs, &n_specs) < 0 || n_specs == 0)
                abort();
        return 0;
}

/* CRC-32 (IEEE 802.3), as store.c computes it. */
static uint32_t crc32_of(const uint8_t *p, size_t len) {
        uint32_t c = 0xFFFFFFFFu;

        while (len--) {
                c ^= *p++;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        return c ^ 0xFFFFFFFFu;
}

static void put_u32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
        p[2] = (uint8_t) (v >> 16);
        p[3] = (uint8_t) (v >> 24);
}

static uint32_t get_u32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* Snapshot: one CRC over everything before the last 4 bytes. */
static void fix_snapshot(uint8_t *p, size_t len) {
        if (len >= 16)
                put_u32(p + len - 4, crc32_of(p, len - 4));
}

/* Journal: a 12-byte header, then blocks of magic, payload length, seq,
 * payload, and a CRC of all but itself. */
static void fix_journal(uint8_t *p, size_t len) {
        size_t off = 12;

        while (off < len && len - off >= 16) {
                uint32_t payload = get_u32(p + off + 4);

                if (payload > len - off - 16 || len - off - 16 - payload < 4)
                        break;
                put_u32(p + off + 16 + payload, crc32_of(p + off, 16 + (size_t) payload));
                off += 16 + (size_t) payload + 4;
        }
}

/* What the daemon reads from a loaded store (GetHistory, GetStatus, the advisor). */
static void walk(Store *s) {
        static struct stats_point buf[1000000 / 64]; /* capacities here: 360, 1008, 2160 */

        for (size_t i = 0; i < store_n_mounts(s); i++) {
                const MountHistory *h = store_get(s, i);

                if (!h || !h->key || store_find(s, h->key) != h)
                        abort();
                if (i > 0 && strcmp(store_get(s, i - 1)->key, h->key) >= 0)
                        abort(); /* sorted, no duplicates */
                for (unsigned r = 0; r < h->n_rings; r++) {
                        uint32_t n;
                        int64_t oldest = history_oldest(h, r);

                        if (h->rings[r].spec.capacity > sizeof buf / sizeof buf[0])
                                abort();
                        n = history_ring_points(h, r, buf);
                        if (n != h->rings[r].count || n > h->rings[r].spec.capacity)
                                abort();
                        if (n > 0) {
                                if (!history_point(h, r, h->rings[r].head_t) || !history_point(h, r, oldest))
                                        abort();
                        } else if (oldest != INT64_MAX)
                                abort();
                }
                (void) history_pick_ring(h, NOW - 6 * 3600);
        }
        (void) store_memory(s);
}

static void load(const uint8_t *snap, size_t snap_len, const uint8_t *journal, size_t journal_len) {
        struct store_load_report rep = {};
        Store *s = NULL;

        if (store_new(NULL, specs, n_specs, 0, &s) < 0)
                return;
        if (store_load_buffers(s, snap_len ? snap : NULL, snap_len, journal_len ? journal : NULL, journal_len, &rep) == 0) {
                if (rep.mounts != store_n_mounts(s))
                        abort();
                walk(s);
                /* And the store keeps working: the daemon adds a sample at
                 * the current time (a fixed, plausible one here). */
                if (store_n_mounts(s) > 0) {
                        struct stats_sample x = {
                                .t = NOW, .has_activity = true, .per_min = 1, .lo = 0, .hi = 2,
                                .has_policy = true, .atime = 1,
                        };
                        char *key = strdup(store_get(s, 0)->key);

                        if (key)
                                (void) store_add(s, key, &x);
                        free(key);
                }
        }
        store_load_report_done(&rep);
        store_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t len, split;
        uint8_t *copy;

        if (n_specs == 0)
                LLVMFuzzerInitialize(NULL, NULL);
        if (size < 1)
                return 0;
        len = size - 1;
        split = (size_t) data[0] * len / 255;

        load(data + 1, split, data + 1 + split, len - split);

        copy = malloc(len ? len : 1);
        if (!copy)
                return 0;
        memcpy(copy, data + 1, len);
        fix_snapshot(copy, split);
        fix_journal(copy + split, len - split);
        if (memcmp(copy, data + 1, len) != 0)
                load(copy, split, copy + split, len - split);
        free(copy);
        return 0;
}
