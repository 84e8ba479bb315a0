/* fuzz-changes: the policy changes file (history.changes) parser, through
 * store_parse_changes(), into a store that holds histories under two of
 * the keys its seed corpus names (so that what parses is also taken in). */
#include <stdint.h>
#include <stdlib.h>

#include "stats.h"
#include "store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct stats_ring_spec specs[STATS_MAX_RINGS];
static unsigned n_specs;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        if (stats_parse_rings("1min:6h, 1h:90d", specs, &n_specs) < 0 || n_specs == 0)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const keys[] = { "uuid=a target=/srv", "source=tmpfs fstype=tmpfs target=/tmp" };
        struct stats_sample x = { .t = 1800000000, .has_activity = true, .per_min = 1, .has_policy = true };
        const char *why;
        Store *s = NULL;

        if (n_specs == 0)
                LLVMFuzzerInitialize(NULL, NULL);
        if (store_new("/nonexistent", specs, n_specs, 0, &s) < 0)
                abort();
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
                if (store_add(s, keys[i], &x) < 0)
                        abort();
        (void) store_parse_changes(s, (const char *) data, size, &why);
        store_free(s);
        return 0;
}
