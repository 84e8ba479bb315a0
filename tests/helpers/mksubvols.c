/* mksubvols: makes N empty btrfs subvolumes in DIR (DIR/PREFIXi), as fast
 * as the kernel takes them: what any user may do in a directory of their
 * own, and what btrfs-attacks.sh does as nobody to blind a look that
 * lists every subvolume. Usage: mksubvols DIR N [PREFIX] */
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
        long n;
        int fd;

        if (argc < 3 || (n = strtol(argv[2], NULL, 10)) <= 0) {
                fprintf(stderr, "usage: mksubvols DIR N [PREFIX]\n");
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[1]);
                return 1;
        }
        for (long i = 0; i < n; i++) {
                struct btrfs_ioctl_vol_args a = {};

                snprintf(a.name, sizeof a.name, "%s%ld", argc > 3 ? argv[3] : "s", i);
                if (ioctl(fd, BTRFS_IOC_SUBVOL_CREATE, &a) < 0) {
                        fprintf(stderr, "mksubvols: %s: %s (after %ld)\n", a.name, strerror(errno), i);
                        return 1;
                }
        }
        close(fd);
        return 0;
}
