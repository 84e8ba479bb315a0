/* fuzz-config: atimed.conf text through config_load_string(). */
#include <stdint.h>
#include <stdlib.h>

#include "config.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct config *c = NULL;
        char **errors = NULL;
        int r;

        r = config_load_string("fuzz.conf", (const char *) data, size, &c, &errors);
        /* Exactly one of: a config, a list of errors, or no memory. */
        if ((r == 0) != (c != NULL) || (r == -EINVAL) != (errors != NULL))
                abort();
        config_free(c);
        strv_free(errors);
        return 0;
}
