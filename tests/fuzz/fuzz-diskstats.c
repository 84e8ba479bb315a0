/* fuzz-diskstats: /proc/diskstats text through diskstats_parse(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        DiskStats *s = NULL;

        if (diskstats_parse((const char *) data, size, &s) < 0)
                return 0;
        for (size_t i = 0; i < s->n; i++) {
                /* The name is a C string in its array, and lookup finds an entry with those numbers. */
                const DiskStat *f;

                if (!memchr(s->v[i].name, 0, sizeof s->v[i].name))
                        abort();
                f = diskstats_find(s, s->v[i].major, s->v[i].minor);
                if (!f || f->major != s->v[i].major || f->minor != s->v[i].minor)
                        abort();
                if (i > 0) {
                        struct device_rate rate;

                        device_rate(&s->v[i - 1], &s->v[i], 1.5, &rate);
                }
        }
        diskstats_free(s);
        return 0;
}
