/* fuzz-config: atimed.conf text through config_load_string(). Whatever
 * parses prints (atimed --check-config) as text that parses back to a
 * configuration printing the same: nothing is cut, dropped or misread on
 * the way, long lines and paths in their escaped form included. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Printed, read back, printed again: the same text. */
static void check_round_trip(const struct config *c) {
        struct config *c2 = NULL;
        char **errors = NULL, *out = config_print_string(c), *out2 = NULL;
        int r;

        if (!out)
                return;
        r = config_load_string("fuzz.conf", out, strlen(out), &c2, &errors);
        if (r == -EINVAL) {
                fprintf(stderr, "printed configuration refused: %s\n%s", errors[0], out);
                abort();
        }
        if (r == 0 && (out2 = config_print_string(c2)) && strcmp(out, out2) != 0) {
                fprintf(stderr, "printed differently once read back:\n%s\n---\n%s", out, out2);
                abort();
        }
        free(out);
        free(out2);
        config_free(c2);
        strv_free(errors);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct config *c = NULL;
        char **errors = NULL;
        int r;

        r = config_load_string("fuzz.conf", (const char *) data, size, &c, &errors);
        /* Exactly one of: a config, a list of errors, or no memory. */
        if ((r == 0) != (c != NULL) || (r == -EINVAL) != (errors != NULL))
                abort();
        if (c)
                check_round_trip(c);
        config_free(c);
        strv_free(errors);
        return 0;
}
