/* test-strv: string lists. */
#include "strv.h"
#include "../tap.h"

int main(void) {
        _cleanup_strv_free_ char **l = NULL, **c = NULL;
        _cleanup_free_ char *j = NULL;

        ok(strv_split("  ext4, xfs ,,btrfs\t", " \t,", &l) == 0, "split");
        is_int(strv_length(l), 3, "three words");
        ok(strv_contains(l, "xfs") && !strv_contains(l, "xf"), "contains exact words only");
        j = strv_join(l, "|");
        is_str(j, "ext4|xfs|btrfs", "join");
        ok(strv_copy(l, &c) == 0 && strv_equal(l, c), "copy is equal");
        ok(strv_extend(&c, "tmpfs") == 0 && !strv_equal(l, c), "extended copy differs");
        ok(strv_equal(NULL, (char *[]) { NULL }), "NULL equals empty");
        return tap_done();
}
