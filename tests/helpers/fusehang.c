/* fusehang: a FUSE mount whose server never answers, made the way any user
 * makes one: fusermount3 (setuid root) mounts and hands back /dev/fuse's
 * descriptor, which this program holds without ever reading it. Every
 * access to the mount (a lookup, a stat, even of its root) then waits
 * for an answer that never comes, until this program exits.
 *
 *   fusehang MOUNTPOINT FSNAME
 * mounts with -o allow_other,fsname=FSNAME (so root's accesses hang too;
 * fuse.conf must have user_allow_other), prints "mounted" and waits for a
 * signal. Exit 1 if fusermount3 failed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int receive_fd(int sock) {
        char data, control[CMSG_SPACE(sizeof(int))];
        struct iovec iov = { .iov_base = &data, .iov_len = 1 };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control };
        struct cmsghdr *cm;
        int fd;

        if (recvmsg(sock, &msg, 0) <= 0)
                return -1;
        cm = CMSG_FIRSTHDR(&msg);
        if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                return -1;
        memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        return fd;
}

int main(int argc, char *argv[]) {
        char opts[4096], commfd[16];
        int sv[2], fuse_fd, status;
        sigset_t set;
        pid_t pid;

        if (argc != 3 || (size_t) snprintf(opts, sizeof opts, "allow_other,fsname=%s", argv[2]) >= sizeof opts) {
                fprintf(stderr, "usage: fusehang MOUNTPOINT FSNAME\n");
                return 2;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
                return perror("socketpair"), 1;
        pid = fork();
        if (pid < 0)
                return perror("fork"), 1;
        if (pid == 0) {
                close(sv[0]);
                snprintf(commfd, sizeof commfd, "%d", sv[1]);
                setenv("_FUSE_COMMFD", commfd, 1);
                execlp("fusermount3", "fusermount3", "-o", opts, "--", argv[1], (char *) NULL);
                perror("fusermount3");
                _exit(127);
        }
        close(sv[1]);
        fuse_fd = receive_fd(sv[0]);
        close(sv[0]);
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || fuse_fd < 0) {
                fprintf(stderr, "fusehang: fusermount3 could not mount %s\n", argv[1]);
                return 1;
        }
        printf("mounted\n");
        fflush(stdout);
        /* Held, never read: the kernel's INIT and every request after it
         * wait here until a signal ends us. */
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        sigprocmask(SIG_BLOCK, &set, NULL);
        sigwaitinfo(&set, NULL);
        close(fuse_fd);
        return 0;
}
