/* btrfs-facts: what daemon/btrfs.c finds for one btrfs mount point, as
 * key=value lines, for tests/integration/btrfs.sh to hold against
 * btrfs-progs. Usage: btrfs-facts MOUNTPOINT DEVNAME [SYSFS] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrfs.h"

int main(int argc, char **argv) {
        struct btrfs_facts f;
        char *fsid = NULL;
        char u[BTRFS_UUID_STRING_MAX];
        int fd, r;

        if (argc < 3) {
                fprintf(stderr, "usage: btrfs-facts MOUNTPOINT DEVNAME [SYSFS]\n");
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[1]);
                return 1;
        }
        r = btrfs_find_fsid(argc > 3 ? argv[3] : "/sys", argv[2], &fsid);
        printf("fsid=%s\n", r < 0 ? "" : fsid);
        r = btrfs_look(fd, 0, argc > 3 ? argv[3] : "/sys", fsid, &f);
        close(fd);
        free(fsid);
        if (r < 0) {
                fprintf(stderr, "btrfs_look: %s\n", strerror(-r));
                return 1;
        }
        btrfs_uuid_format(f.self.uuid, u);
        printf("id=%llu\nuuid=%s\nhave_info=%d\nsight=%s\nsight_error=%s\n", (unsigned long long) f.self.id,
               f.have_info ? u : "", f.have_info, btrfs_sight_to_string(f.sight),
               f.sight_error ? strerror(-f.sight_error) : "");
        printf("snapshots=%u\nread_only=%u\nnewest_otime=%lld\n", f.snapshots.count, f.snapshots.read_only,
               (long long) f.snapshots.newest_otime);
        printf("have_space=%d\nmetadata_bytes_used=%llu\nspace_error=%s\n", f.have_space,
               (unsigned long long) f.metadata_bytes_used, f.space_error ? strerror(-f.space_error) : "");
        btrfs_facts_done(&f);
        return 0;
}
