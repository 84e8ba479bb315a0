/* replay.c: a stand-in for libFuzzer's main(): runs a fuzz target once on
 * each input named on the command line (files, or every regular file in a
 * directory), so that `make check` replays the corpora under gcc with
 * ASan/UBSan when clang and libFuzzer are not used. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Exactly 'size' bytes in their own allocation, so that ASan catches a read
 * one past the end as libFuzzer would. */
static int replay_file(const char *path) {
        FILE *f = fopen(path, "rbe");
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        for (;;) {
                if (len == cap) {
                        uint8_t *nb;

                        cap = cap ? cap * 2 : 4096;
                        nb = realloc(buf, cap);
                        if (!nb) {
                                free(buf);
                                fclose(f);
                                return -1;
                        }
                        buf = nb;
                }
                size_t k = fread(buf + len, 1, cap - len, f);
                if (k == 0)
                        break;
                len += k;
        }
        if (ferror(f)) {
                fprintf(stderr, "%s: read error\n", path);
                free(buf);
                fclose(f);
                return -1;
        }
        fclose(f);

        uint8_t *exact = malloc(len ? len : 1);
        if (!exact) {
                free(buf);
                return -1;
        }
        if (len)
                memcpy(exact, buf, len);
        free(buf);
        (void) LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        return 0;
}

static int cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Every regular file directly in 'dir', in name order. */
static int replay_dir(const char *dir, unsigned *n) {
        DIR *d = opendir(dir);
        struct dirent *de;
        char **names = NULL;
        size_t count = 0, cap = 0;
        int ret = 0;

        if (!d) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (count == cap) {
                        char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
                        if (!nn) {
                                ret = -1;
                                break;
                        }
                        names = nn;
                }
                if (!(names[count] = strdup(de->d_name))) {
                        ret = -1;
                        break;
                }
                count++;
        }
        closedir(d);
        if (count)
                qsort(names, count, sizeof *names, cmp);
        for (size_t i = 0; i < count; i++) {
                char *p = NULL;
                struct stat st;

                if (ret == 0 && asprintf(&p, "%s/%s", dir, names[i]) >= 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                        if (replay_file(p) < 0)
                                ret = -1;
                        else
                                (*n)++;
                }
                free(p);
                free(names[i]);
        }
        free(names);
        return ret;
}

int main(int argc, char **argv) {
        unsigned n = 0;
        int ret = 0;

        if (LLVMFuzzerInitialize)
                (void) LLVMFuzzerInitialize(&argc, &argv);
        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        ret = 1;
                } else if (S_ISDIR(st.st_mode)) {
                        if (replay_dir(argv[i], &n) < 0)
                                ret = 1;
                } else if (replay_file(argv[i]) < 0)
                        ret = 1;
                else
                        n++;
        }
        printf("replayed %u inputs\n", n);
        return ret;
}
