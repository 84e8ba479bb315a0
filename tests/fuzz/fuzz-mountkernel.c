/* fuzz-mountkernel: the kernel's records as atimed reads them, from bytes
 * that are not the kernel's: a statmount(2) record (kmount_parse()) and a
 * read of a fanotify group's mount events (kmount_events_parse()). Neither
 * may read past the bytes given, loop, or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mount-kernel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void each(uint64_t id, void *userdata) {
        (*(uint64_t *) userdata) ^= id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Copies of exactly 'size' bytes, so that a read past them shows. */
        uint8_t *copy = malloc(size ? size : 1);
        uint64_t sum = 0;
        bool overflow;
        KMount k = {};

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        if (kmount_parse(copy, size, &k) == 0)
                kmount_done(&k);
        (void) kmount_events_parse(copy, size, each, &sum, &overflow);
        free(copy);
        return 0;
}
