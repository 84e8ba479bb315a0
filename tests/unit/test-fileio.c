/* test-fileio: whole files, at and around the size limit, and /proc;
 * writes in full; mkdir -p; atomic replacement, which neither opens nor
 * follows what sits at a predictable name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "../tap.h"

static void put(int fd, size_t n) {
        char b[4096];
        size_t done = 0;

        memset(b, 'x', sizeof b);
        if (ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0)
                while (done < n) {
                        ssize_t k = write(fd, b, MIN(sizeof b, n - done));

                        if (k <= 0)
                                break;
                        done += (size_t) k;
                }
        ok(done == n, "%zu bytes written", n);
}

static bool is_temporary_name(const char *s) {
        const char *p = startswith(s, ".out.");

        if (!p || strlen(p) != 16 + 4 || !streq(p + 16, ".tmp"))
                return false;
        for (int i = 0; i < 16; i++)
                if (!strchr("0123456789abcdef", p[i]))
                        return false;
        return true;
}

/* The directory's entries named as temporary files of "out": how many, and
 * the last. */
static unsigned count_temporaries(const char *dir, char *last, size_t size) {
        DIR *d = opendir(dir);
        struct dirent *de;
        unsigned n = 0;

        while (d && (de = readdir(d)))
                if (is_temporary_name(de->d_name)) {
                        n++;
                        if (last)
                                snprintf(last, size, "%s", de->d_name);
                }
        if (d)
                closedir(d);
        return n;
}

struct writer {
        const char *text;
        int r;               /* returned after writing */
        const char *dir;     /* where to look for the temporary file */
        char seen[NAME_MAX + 1];
        unsigned n_seen;
};

static int write_text(FILE *f, void *userdata) {
        struct writer *w = userdata;

        fputs(w->text, f);
        if (w->dir)
                w->n_seen = count_temporaries(w->dir, w->seen, sizeof w->seen);
        return w->r;
}

static char *slurp(const char *path) {
        char *t = NULL;
        size_t len;

        return read_full_file(path, 1 << 20, &t, &len) == 0 ? t : NULL;
}

static void test_loop_write(const char *dir) {
        char path[PATH_MAX], big[300000];
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *t = NULL;
        size_t len;

        snprintf(path, sizeof path, "%s/loop", dir);
        memset(big, 'y', sizeof big);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ok(fd >= 0 && loop_write(fd, big, sizeof big) == 0, "loop_write() of 300000 bytes");
        ok(read_full_file(path, sizeof big, &t, &len) == 0 && len == sizeof big && t[len - 1] == 'y',
           "all of them are there");
        ok(loop_write(fd, NULL, 0) == 0, "nothing to write: fine");
        {
                int closed = dup(fd);

                close(closed);
                is_int(loop_write(closed, "x", 1), -EBADF, "a closed fd: EBADF");
        }
        unlink(path);
}

static void test_mkdir_parents(const char *dir) {
        char path[PATH_MAX], sub[PATH_MAX];
        struct stat st;

        snprintf(path, sizeof path, "%s/a/b/c/leaf", dir);
        umask(022);
        is_int(mkdir_parents(path, 0750), 0, "mkdir_parents() of a/b/c/leaf");
        snprintf(sub, sizeof sub, "%s/a/b/c", dir);
        ok(stat(sub, &st) == 0 && S_ISDIR(st.st_mode), "a/b/c is a directory");
        is_int(st.st_mode & 0777, 0750, "with the mode asked");
        ok(lstat(path, &st) < 0 && errno == ENOENT, "the last component is not made");
        is_int(mkdir_parents(path, 0750), 0, "again: what exists is left as it is");
        snprintf(sub, sizeof sub, "%s/a/file", dir);
        close(open(sub, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        snprintf(path, sizeof path, "%s/a/file/x/y", dir);
        is_int(mkdir_parents(path, 0755), -ENOTDIR, "a file in the way: ENOTDIR");
        unlink(sub);
        snprintf(sub, sizeof sub, "rm -rf '%s/a'", dir);
        ok(system(sub) == 0, "cleaned up");
}

static void test_write_atomic(const char *dir) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char path[PATH_MAX], outside[PATH_MAX], fifo[PATH_MAX], first[NAME_MAX + 1], name[NAME_MAX + 2];
        struct writer w = { .text = "one\n", .dir = dir };
        struct stat st;
        char *t;
        mode_t old;

        snprintf(path, sizeof path, "%s/out", dir);
        old = umask(0077);
        is_int(write_file_atomic_at(dfd, "out", 0644, WRITE_ATOMIC_FSYNC | WRITE_ATOMIC_FSYNC_DIR, write_text, &w), 0,
               "write_file_atomic_at() with both fsyncs");
        umask(old);
        is_str(t = slurp(path), "one\n", "the file holds what was written");
        free(t);
        ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "mode 0644 whatever the umask (%o)", st.st_mode & 0777);
        ok(w.n_seen == 1, "written as .out.<16 hex digits>.tmp (%s)", w.seen);
        snprintf(first, sizeof first, "%s", w.seen);
        is_int(count_temporaries(dir, NULL, 0), 0, "no temporary file left behind");

        /* What a hostile user could put at the names a careless writer uses. */
        snprintf(fifo, sizeof fifo, "%s/.out.tmp", dir);
        ok(mkfifo(fifo, 0600) == 0, "a FIFO at .out.tmp");
        snprintf(outside, sizeof outside, "%s/secret", dir);
        close(open(outside, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        snprintf(name, sizeof name, "%s/out.tmp", dir);
        ok(link(outside, name) == 0, "a hard link to another file at out.tmp");
        w.text = "two\n";
        is_int(write_file_atomic_at(dfd, "out", 0600, 0, write_text, &w), 0, "replaced past them");
        is_str(t = slurp(path), "two\n", "the new text is there");
        free(t);
        ok(w.n_seen == 1 && !streq(first, w.seen), "under another unpredictable name (%s)", w.seen);
        ok(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
        is_str(t = slurp(outside), "", "the linked file is untouched");
        free(t);
        unlink(fifo);
        unlink(name);

        /* A file linked to the target is replaced, not written through. */
        unlink(path);
        ok(link(outside, path) == 0, "the target a hard link to another file");
        w.text = "three\n";
        is_int(write_file_atomic_at(dfd, "out", 0600, 0, write_text, &w), 0, "replaced");
        is_str(t = slurp(outside), "", "the other file is untouched");
        free(t);
        unlink(outside);

        w = (struct writer) { .text = "half", .r = -EIO, .dir = dir };
        is_int(write_file_atomic_at(dfd, "out", 0600, WRITE_ATOMIC_FSYNC, write_text, &w), -EIO,
               "a writer that fails: its error");
        is_str(t = slurp(path), "three\n", "the old file is left as it was");
        free(t);
        is_int(count_temporaries(dir, NULL, 0), 0, "and its temporary file removed");

        memset(name, 'n', sizeof name - 1);
        name[NAME_MAX - 23] = 0;
        is_int(write_file_atomic_at(dfd, name, 0600, 0, write_text, &w), -ENAMETOOLONG, "a name too long: ENAMETOOLONG");
        w = (struct writer) { .text = "cwd" };
        ok(chdir(dir) == 0 && write_file_atomic_at(AT_FDCWD, "out", 0600, WRITE_ATOMIC_FSYNC, write_text, &w) == 0,
           "AT_FDCWD");
        is_str(t = slurp(path), "cwd", "written relative to the working directory");
        free(t);
        unlink(path);
}

static bool exists(const char *dir, const char *name) {
        char path[PATH_MAX];
        struct stat st;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        return lstat(path, &st) == 0;
}

static void make_file(const char *dir, const char *name) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/%s", dir, name);
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

static void test_remove_stale(const char *dir) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char path[PATH_MAX];
        const char *kept[] = { ".out.0123456789abcdeg.tmp", ".other.0123456789abcdef.tmp", ".out.tmp",
                               "out.0123456789abcdef.tmp", ".out.0123456789abcdef.tmp.x", ".out.0123456789abcde.tmp" };

        make_file(dir, ".out.0123456789abcdef.tmp");
        make_file(dir, ".out.fedcba9876543210.tmp");
        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                make_file(dir, kept[i]);
        snprintf(path, sizeof path, "%s/.out.00000000000000aa.tmp", dir);
        ok(mkfifo(path, 0600) == 0, "a FIFO named as a temporary");
        is_int(remove_stale_temporaries_at(dfd, "out"), 2, "remove_stale_temporaries_at(): the two temporaries");
        ok(!exists(dir, ".out.0123456789abcdef.tmp") && !exists(dir, ".out.fedcba9876543210.tmp"), "are gone");
        for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
                ok(exists(dir, kept[i]), "%s is kept", kept[i]);
                snprintf(path, sizeof path, "%s/%s", dir, kept[i]);
                unlink(path);
        }
        ok(exists(dir, ".out.00000000000000aa.tmp"), "and the FIFO: not a regular file");
        snprintf(path, sizeof path, "%s/.out.00000000000000aa.tmp", dir);
        unlink(path);
        is_int(remove_stale_temporaries_at(dfd, "out"), 0, "again: none");
}

static void test_read_refuses(const char *dir) {
        char path[PATH_MAX], link_path[PATH_MAX];
        char *t = NULL;
        size_t len;

        snprintf(path, sizeof path, "%s/target", dir);
        snprintf(link_path, sizeof link_path, "%s/link", dir);
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        ok(symlink(path, link_path) == 0, "a symlink");
        ok(read_full_file(link_path, 10, &t, &len) == 0 && len == 0, "followed without O_NOFOLLOW");
        free(t);
        t = NULL;
        is_int(read_full_file_at(AT_FDCWD, link_path, O_NOFOLLOW, 10, &t, &len), -ELOOP, "refused with it: ELOOP");
        ok(!t, "and nothing returned");
        unlink(link_path);
        unlink(path);
}

int main(void) {
        char path[] = "/tmp/test-fileio.XXXXXX";
        int fd = mkstemp(path);
        char *t = NULL;
        size_t len = 1;

        ok(fd >= 0, "temporary file");
        ok(read_full_file(path, 100, &t, &len) == 0 && t && len == 0 && t[0] == 0, "empty file: empty string");
        free(t);
        t = NULL;
        put(fd, 4096);
        ok(read_full_file(path, 4096, &t, &len) == 0 && len == 4096 && t[4095] == 'x' && t[4096] == 0,
           "exactly the limit, across the first buffer's end, NUL-terminated");
        free(t);
        t = NULL;
        put(fd, 4097);
        is_int(read_full_file(path, 4096, &t, &len), -EFBIG, "one byte over the limit: EFBIG");
        ok(!t, "and nothing returned");
        put(fd, 200000);
        ok(read_full_file(path, 1 << 20, &t, &len) == 0 && len == 200000 && t[199999] == 'x' && !t[200000],
           "grows past its first buffer");
        free(t);
        t = NULL;
        {
                char fifo[64], dir[64];

                snprintf(fifo, sizeof fifo, "%s.fifo", path);
                snprintf(dir, sizeof dir, "%s.dir", path);
                ok(mkfifo(fifo, 0600) == 0 && mkdir(dir, 0700) == 0, "a FIFO and a directory");
                is_int(read_full_file(fifo, 100, &t, &len), -EBADFD, "a FIFO: refused, not waited on");
                is_int(read_full_file_at(AT_FDCWD, fifo, O_NOFOLLOW | O_NOATIME, 100, &t, &len), -EBADFD,
                       "a FIFO with O_NOFOLLOW|O_NOATIME: refused too");
                is_int(read_full_file(dir, 100, &t, &len), -EISDIR, "a directory: EISDIR");
                ok(!t, "and nothing returned");
                ok(strstr(fileio_strerror(-EBADFD), "not a regular file") != NULL, "said plainly");
                unlink(fifo);
                rmdir(dir);
        }
        ok(read_full_file("/dev/null", 100, &t, &len) == 0 && len == 0, "/dev/null: empty");
        free(t);
        t = NULL;
        is_int(read_full_file("/dev/zero", 100, &t, &len), -EBADFD, "another device: refused");
        ok(read_full_file("/proc/self/mountinfo", 1 << 26, &t, &len) == 0 && len > 0 && strlen(t) == len,
           "/proc/self/mountinfo, which has no size to stat");
        free(t);
        is_int(read_full_file("/nonexistent/x", 10, &t, &len), -ENOENT, "missing file: ENOENT");
        close(fd);
        unlink(path);
        {
                char dir[] = "/tmp/test-fileio-dir.XXXXXX";

                ok(mkdtemp(dir) != NULL, "a scratch directory");
                test_loop_write(dir);
                test_mkdir_parents(dir);
                test_read_refuses(dir);
                test_write_atomic(dir);
                test_remove_stale(dir);
                ok(rmdir(dir) == 0, "nothing left in it");
        }
        return tap_done();
}
