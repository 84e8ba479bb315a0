/* fuzz-consumers: the atime-consumer parsers. The first byte picks the
 * parser (tmpfiles.d, tmpreaper.conf, a tmpwatch cron script,
 * popularity-contest.conf), the rest is the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "consumers.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*parser_fn)(Consumers *c, const char *name, const char *text, size_t len);

static const struct {
        parser_fn parse;
        const char *name;
} parsers[] = {
        { consumers_parse_tmpfiles, "/etc/tmpfiles.d/fuzz.conf" },
        { consumers_parse_tmpreaper, "/etc/tmpreaper.conf" },
        { consumers_parse_tmpwatch, "/etc/cron.daily/tmpwatch" },
        { consumers_parse_popcon, "/etc/popularity-contest.conf" },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char t_root[] = "/", t_tmp[] = "/tmp", t_var[] = "/var", t_vartmp[] = "/var/tmp", t_home[] = "/home";
        static char *const targets[] = { t_root, t_tmp, t_var, t_vartmp, t_home, NULL };
        Consumers *c = NULL;
        unsigned which;

        if (size < 1)
                return 0;
        which = data[0] % (sizeof parsers / sizeof parsers[0]);
        if (consumers_new(&c) < 0)
                return 0;
        (void) parsers[which].parse(c, parsers[which].name, (const char *) data + 1, size - 1);

        /* What the daemon does with the result: every consumer's mount, and the need per mount. */
        for (size_t i = 0; i < c->n; i++) {
                ssize_t o = consumers_owner(c, i, targets, 5);

                if (o < -1 || o >= 5 || !c->v[i].path || !c->v[i].why || !c->v[i].source ||
                    (unsigned) c->v[i].need >= _NEED_MAX || (unsigned) c->v[i].kind >= _CONSUMER_KIND_MAX)
                        abort();
        }
        for (size_t t = 0; targets[t]; t++) {
                const struct consumer *strongest = NULL;
                AtimeNeed need = consumers_need_for_mount(c, targets[t], targets, &strongest);

                if ((need == NEED_NONE) != (strongest == NULL))
                        abort();
        }
        consumers_free(c);
        return 0;
}
