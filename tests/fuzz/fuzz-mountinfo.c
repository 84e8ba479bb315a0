/* fuzz-mountinfo: /proc/self/mountinfo text through mount_table_load()
 * (libmount's parser, then atimed's filter, hidden-mount and policy logic),
 * with the configuration's default filter; and the input split at its first
 * newline as the two option strings of mount_policy_from_options(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "macro.h"
#include "mounts.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];
static struct config *config;
static struct mount_filter filter;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        log_set_max_level(-1);
        if (config_new(&config) < 0)
                abort();
        filter = (struct mount_filter) {
                .include_fstypes = config->include_fstypes,
                .exclude_fstypes = config->exclude_fstypes,
                .exclude_paths = config->exclude_paths,
        };
        memfd = memfd_create("mountinfo", MFD_CLOEXEC);
        if (memfd < 0)
                abort();
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
        return 0;
}

static int put_file(const uint8_t *data, size_t size) {
        if (ftruncate(memfd, 0) < 0)
                return -1;
        for (size_t off = 0; off < size;) {
                ssize_t k = pwrite(memfd, data + off, size - off, (off_t) off);

                if (k <= 0)
                        return -1;
                off += (size_t) k;
        }
        return 0;
}

static unsigned n_diff;
static void count_diff(const MountEntry *old, const MountEntry *new, void *userdata) {
        (void) old;
        (void) new;
        (void) userdata;
        n_diff++;
}

static void check_table(const MountTable *t) {
        static const MountTable empty = {};
        char buf[64];

        for (size_t i = 0; i < t->n; i++) {
                const MountEntry *e = &t->entries[i], *f;

                if (!e->target || !e->source || !e->fstype || !e->root || !e->vfs_options || !e->super_options)
                        abort();
                if (i > 0 && t->entries[i - 1].id > e->id)
                        abort(); /* sorted by id */
                f = mount_table_find_target(t, e->target);
                if (!f || !streq(f->target, e->target))
                        abort();
                (void) mount_policy_format(&e->policy, buf, sizeof buf);
                if ((unsigned) e->policy.atime >= _ATIME_MAX || !atime_mode_to_string(e->policy.atime))
                        abort();
        }
        n_diff = 0;
        mount_table_diff(t, t, count_diff, NULL);
        if (n_diff != 0)
                abort(); /* a table does not differ from itself */
        mount_table_diff(&empty, t, count_diff, NULL);
        if (n_diff != t->n)
                abort(); /* everything is new against nothing */
        n_diff = 0;
        mount_table_diff(t, NULL, count_diff, NULL);
        if (n_diff != t->n)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        MountTable *t = NULL;
        const char *nl;
        char *vfs, *super;
        struct mount_policy p;
        char buf[64];

        if (!config)
                LLVMFuzzerInitialize(NULL, NULL);

        if (put_file(data, size) == 0 && mount_table_load(memfd_path, &filter, &t) == 0) {
                check_table(t);
                mount_table_free(t);
        }

        nl = memchr(data, '\n', size);
        vfs = memdup_str((const char *) data, nl ? (size_t) (nl - (const char *) data) : size);
        super = nl ? memdup_str(nl + 1, size - (size_t) (nl + 1 - (const char *) data)) : strdup("");
        if (vfs && super) {
                mount_policy_from_options(vfs, super, &p);
                (void) mount_policy_format(&p, buf, sizeof buf);
        }
        free(vfs);
        free(super);
        return 0;
}
