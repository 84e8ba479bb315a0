/* btrfs-facts: what daemon/btrfs.c finds for one btrfs mount point, as
 * key=value lines, for tests/integration/btrfs.sh to hold against
 * btrfs-progs. Usage: btrfs-facts MOUNTPOINT DEVNAME [SYSFS [WANTED-ID...]]
 * The subvolumes are read as atimed's helper reads them where this
 * process holds CAP_SYS_ADMIN, else by libbtrfsutil as atimed falls back
 * to (ATIMED_FACTS_LISTER=util forces that); ATIMED_FACTS_LISTER=helper
 * asks atimed's helper, forked here as the daemon forks it (root), or at
 * the socket ATIMED_FACTS_HELPER names. */
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrfs.h"
#include "caps.h"
#include "helper-client.h"

int main(int argc, char **argv) {
        struct btrfs_wanted wanted[BTRFS_TRACKED_MAX];
        const char *sysfs = argc > 3 ? argv[3] : "/sys", *lister = getenv("ATIMED_FACTS_LISTER");
        BtrfsLookArgs a = { .sysfs = sysfs, .wanted = wanted };
        struct btrfs_facts f;
        char *fsid = NULL;
        char u[BTRFS_UUID_STRING_MAX];
        int fd, r;

        if (argc < 3) {
                fprintf(stderr, "usage: btrfs-facts MOUNTPOINT DEVNAME [SYSFS [WANTED-ID...]]\n");
                return 2;
        }
        for (int i = 4; i < argc && a.n_wanted < BTRFS_TRACKED_MAX; i++)
                wanted[a.n_wanted++] = (struct btrfs_wanted) { .id = strtoull(argv[i], NULL, 10), .writes_atime = true };
        a.lister = (lister && strcmp(lister, "util") == 0) || !caps_have(CAP_SYS_ADMIN) ? BTRFS_LIST_UTIL : BTRFS_LIST_SCAN;
        if (lister && strcmp(lister, "helper") == 0) {
                const char *sock = getenv("ATIMED_FACTS_HELPER");

                if (sock && caps_have(CAP_SYS_ADMIN)) {
                        fprintf(stderr, "ATIMED_FACTS_HELPER: drop CAP_SYS_ADMIN first, or the helper is forked\n");
                        return 2;
                }
                r = helper_client_start(true, sock ? sock : "");
                if (r < 0) {
                        fprintf(stderr, "helper: %s\n", strerror(-r));
                        return 1;
                }
                a.lister = BTRFS_LIST_AUTO;
        }
        fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[1]);
                return 1;
        }
        r = btrfs_find_fsid(sysfs, argv[2], &fsid);
        printf("fsid=%s\n", r < 0 ? "" : fsid);
        a.fsid = fsid;
        r = btrfs_look(fd, &a, &f);
        close(fd);
        if (r < 0) {
                fprintf(stderr, "btrfs_look: %s\n", strerror(-r));
                free(fsid);
                return 1;
        }
        btrfs_uuid_format(f.self.uuid, u);
        printf("id=%llu\nuuid=%s\nhave_info=%d\nsight=%s\nsight_error=%s\nhelper_error=%s\n",
               (unsigned long long) f.self.id, f.have_info ? u : "", f.have_info, btrfs_sight_to_string(f.sight),
               f.sight_error ? strerror(-f.sight_error) : "", f.helper_error ? strerror(-f.helper_error) : "");
        printf("snapshots=%u\nread_only=%u\nnewest_otime=%lld\nperiod_s=%lld\n", f.snapshots.count,
               f.snapshots.read_only, (long long) f.snapshots.newest_otime, (long long) f.snapshots.period_s);
        printf("have_space=%d\nmetadata_bytes_used=%llu\nspace_error=%s\n", f.have_space,
               (unsigned long long) f.metadata_bytes_used, f.space_error ? strerror(-f.space_error) : "");
        printf("subvolumes=%llu\npartial=%d\nevidence=%d\ndead=%llu\ntree_bytes=%llu\nlevel=%u\n",
               (unsigned long long) f.subvolumes, f.partial, f.evidence.have, (unsigned long long) f.evidence.dead,
               (unsigned long long) f.self.tree_bytes, f.self.level);
        printf("unseen_known=%d\nunseen=%u\nunseen_tree_bytes=%llu\n", f.unseen.known, f.unseen.count,
               (unsigned long long) f.unseen.tree_bytes);
        for (size_t i = 0; i < f.n_tracked; i++)
                printf("tracked=%llu snapshots=%u\n", (unsigned long long) f.tracked[i].sub.id,
                       f.tracked[i].snapshots.count);
        btrfs_facts_done(&f);
        free(fsid);
        helper_client_stop();
        return 0;
}
