/* userns: runs a command as a subordinate uid of a user, in a user
 * namespace that user owns, as the user would with newuidmap(1): the
 * child becomes OWNER, makes the namespace, and the parent (root, standing
 * in for the setuid newuidmap, which checks /etc/subuid) maps the
 * namespace's 0 onto OUTER; the child then runs COMMAND as that 0, which
 * the host sees as uid OUTER (gid OUTER too).
 *
 *   userns OWNER OUTER COMMAND [ARG...]
 *
 * OWNER is a user name or uid. The parent waits for the command and exits
 * with its status (SIGTERM and SIGINT are passed on); 125 if the namespace
 * could not be made. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

static void pass_on(int sig) {
        if (child > 0)
                kill(child, sig);
}

static int write_map(pid_t pid, const char *which, unsigned long outer) {
        char path[64], line[64];
        int fd, n;

        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, which);
        n = snprintf(line, sizeof line, "0 %lu 1\n", outer);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, line, (size_t) n) != n) {
                fprintf(stderr, "userns: %s: %s\n", path, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return close(fd);
}

/* In the child: OWNER, a namespace of its own, 0 in it once mapped. */
static void become(uid_t owner, gid_t group, int unshared, int mapped, char **argv) {
        char c;

        if (setgroups(0, NULL) < 0 || setresgid(group, group, group) < 0 || setresuid(owner, owner, owner) < 0 ||
            unshare(CLONE_NEWUSER) < 0 || write(unshared, "u", 1) != 1 || read(mapped, &c, 1) != 1 || c != 'm' ||
            setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
                fprintf(stderr, "userns: cannot enter the namespace: %s\n", strerror(errno));
                _exit(125);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "userns: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
}

int main(int argc, char *argv[]) {
        int unshared[2], mapped[2], status;
        unsigned long outer;
        struct passwd *pw;
        char c, *end;

        if (argc < 4) {
                fprintf(stderr, "usage: userns OWNER OUTER COMMAND [ARG...]\n");
                return 125;
        }
        pw = getpwnam(argv[1]);
        if (!pw)
                pw = getpwuid((uid_t) strtoul(argv[1], NULL, 10));
        errno = 0;
        outer = strtoul(argv[2], &end, 10);
        if (!pw || errno || *end || outer == 0 || pipe2(unshared, O_CLOEXEC) < 0 || pipe2(mapped, O_CLOEXEC) < 0) {
                fprintf(stderr, "userns: bad owner or uid\n");
                return 125;
        }
        child = fork();
        if (child < 0)
                return 125;
        if (child == 0)
                become(pw->pw_uid, pw->pw_gid, unshared[1], mapped[0], argv + 3);
        close(unshared[1]);
        close(mapped[0]);
        signal(SIGTERM, pass_on);
        signal(SIGINT, pass_on);
        if (read(unshared[0], &c, 1) != 1 || write_map(child, "uid_map", outer) < 0 ||
            write_map(child, "gid_map", outer) < 0)
                c = 'x';
        else
                c = 'm';
        (void) write(mapped[1], &c, 1);
        while (waitpid(child, &status, 0) < 0)
                if (errno != EINTR)
                        return 125;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
