/* test-peer: whom a control connection counts against (peer.h): the
 * subordinate uids file parsed (names, numbers, lines it skips), each uid's
 * owner looked up at the edges of overlapping ranges, the rules (the owner
 * of a subordinate uid, a namespace's block, a uid of its own), and the
 * file read again when it changes, not believed when others may write it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "peer.h"

static int resolve(const char *name, uid_t *ret) {
        if (streq(name, "alice"))
                *ret = 1000;
        else if (streq(name, "bob"))
                *ret = 1001;
        else if (streq(name, "root"))
                *ret = 0;
        else
                return -ENOENT;
        return 0;
}

static void test_parse(void) {
        static const char text[] = "bob:300000:65536\n"
                                   "# a comment\n"
                                   "\n"
                                   "alice:100000:65536\r\n"
                                   "1002:200000:65536\n"
                                   "root:1000000:65536\n"
                                   "carol:400000:65536\n" /* unknown */
                                   "alice:500000\n"
                                   "alice:-5:10\n"
                                   "alice: 600000:10\n"
                                   "alice:4294967290:10\n" /* past the last uid */
                                   "alice:700000:0\n"
                                   ":800000:10\n"
                                   "alice:900000:10"; /* no newline at the end */
        struct subuid_range *r = NULL;
        unsigned skipped = 0;
        size_t n = 0;
        uid_t owner = 0;

        is_int(peer_subuid_parse(text, strlen(text), resolve, &r, &n, &skipped), 0, "parsed");
        is_int(n, 5, "five ranges");
        is_int(skipped, 7, "seven lines skipped: an unknown owner, malformed, empty or out of range");
        ok(n == 5 && r[0].start == 100000 && r[0].owner == 1000 && r[1].start == 200000 && r[1].owner == 1002 &&
                   r[2].owner == 1001 && r[3].start == 900000 && r[4].owner == 0,
           "sorted by start; names resolved, numbers taken as uids");
        ok(peer_subuid_owner(r, n, 100000, &owner) && owner == 1000, "the first uid of alice's range is hers");
        ok(peer_subuid_owner(r, n, 165535, &owner) && owner == 1000, "and the last");
        ok(!peer_subuid_owner(r, n, 165536, &owner), "one past it: no one's");
        ok(!peer_subuid_owner(r, n, 99999, &owner), "one before it: no one's");
        ok(peer_subuid_owner(r, n, 909, &owner) == false, "a low uid: no one's");
        ok(peer_subuid_owner(r, n, 900009, &owner) && owner == 1000, "a range written last, without a newline");
        ok(!peer_subuid_owner(r, n, 4294967294U, &owner), "the last uid: no one's");
        free(r);

        is_int(peer_subuid_parse("", 0, resolve, &r, &n, &skipped), 0, "an empty file");
        ok(n == 0 && skipped == 0, "no range, nothing skipped");
        free(r);
}

static void test_overlap(void) {
        /* A long range of alice's with bob's inside it, and one of 1002's
         * starting at the same uid as bob's. */
        static const char text[] = "alice:100000:1000000\nbob:200000:10\n1002:200000:5\n";
        struct subuid_range *r = NULL;
        unsigned skipped;
        size_t n;
        uid_t owner = 0;

        is_int(peer_subuid_parse(text, strlen(text), resolve, &r, &n, &skipped), 0, "overlapping ranges parsed");
        ok(peer_subuid_owner(r, n, 200007, &owner) && owner == 1001, "inside bob's: bob's");
        ok(peer_subuid_owner(r, n, 200003, &owner) && (owner == 1001 || owner == 1002), "where two begin: one of theirs");
        ok(peer_subuid_owner(r, n, 900000, &owner) && owner == 1000, "past bob's, still in alice's: alice's");
        ok(!peer_subuid_owner(r, n, 1100000, &owner), "past alice's: no one's");
        free(r);
}

static int in_ours;
static unsigned asked;
static int ask(void *userdata) {
        (void) userdata;
        asked++;
        return in_ours;
}

static void test_rules(void) {
        static const char text[] = "alice:100000:65536\nroot:1048576:65536\n";
        struct subuid_range *r = NULL;
        unsigned skipped;
        size_t n;
        PeerUserFrom from;

        is_int(peer_subuid_parse(text, strlen(text), resolve, &r, &n, &skipped), 0, "parsed");
        asked = 0;
        in_ours = 0;
        is_int(peer_user_of(100005, r, n, ask, NULL, &from), 1000, "a subordinate uid counts as its owner");
        is_int(from, PEER_USER_SUBUID, "said so");
        is_int(peer_user_of(1000, r, n, ask, NULL, &from), 1000, "the owner's own uid as itself");
        is_int(from, PEER_USER_UID, "said so");
        is_int(peer_user_of(60000, r, n, ask, NULL, &from), 60000, "a uid below 65536, in another namespace: itself");
        is_int(asked, 0, "none of these asked where the peer is");
        is_int(peer_user_of(0x6F000123, r, n, ask, NULL, &from), 0x6F000000, "a high uid in another namespace: its block");
        is_int(from, PEER_USER_RANGE, "said so");
        is_int(peer_user_of(1048581, r, n, ask, NULL, &from), 1048576, "root's subordinate uids: their block, never root");
        is_int(from, PEER_USER_RANGE, "said so");
        in_ours = -ESRCH;
        is_int(peer_user_of(0x6F000123, r, n, ask, NULL, &from), 0x6F000000, "a peer gone: its block");
        in_ours = 1;
        is_int(peer_user_of(0x6F000123, r, n, ask, NULL, &from), 0x6F000123, "a high uid in the daemon's namespace: itself");
        is_int(from, PEER_USER_UID, "said so");
        is_int(peer_user_of(100005, r, n, ask, NULL, &from), 1000, "a subordinate uid in the daemon's namespace: its owner");
        is_int(peer_user_of(0, r, n, ask, NULL, &from), 0, "root is root");
        free(r);

        ok(peer_uid_map_same("0 0 4294967295\n", 15, "0 0 4294967295\n", 15), "the same map: the same namespace");
        ok(!peer_uid_map_same("0 1000 1\n", 9, "0 0 4294967295\n", 15), "another map: another");
        ok(!peer_uid_map_same(NULL, 0, "0 0 4294967295\n", 15), "none: not told the same");
}

static void write_file(const char *path, const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text) || fchmod(fd, mode) < 0 || close(fd) < 0)
                abort();
}

static void test_refresh(void) {
        char dir[] = "/tmp/test-peer-XXXXXX", path[64];
        PeerUsers *u = NULL;
        const char *why = NULL;
        unsigned skipped = 9;
        uint64_t now = 1000 * USEC_PER_SEC;
        PeerUserFrom from;

        if (!mkdtemp(dir))
                abort();
        snprintf(path, sizeof path, "%s/subuid", dir);
        is_int(peer_users_new(path, &u), 0, "a view of %s", path);
        is_int(peer_users_refresh(u, now, &skipped, &why), 1, "absent: read as empty");
        is_int(peer_users_key(u, -1, 0, 165536 + 5, &from), 131072, "no one owns it: a peer not told, its block");
        write_file(path, "65534:165536:65536\nnonsense\n", 0644);
        is_int(peer_users_refresh(u, now + 1, &skipped, &why), 0, "not looked at again within a second");
        is_int(peer_users_refresh(u, now + USEC_PER_SEC, &skipped, &why), 1, "a second later: read anew");
        is_int(skipped, 1, "a line skipped, counted");
        is_int(peer_users_key(u, -1, 0, 165536 + 5, &from), 65534, "now nobody's");
        is_int(peer_users_refresh(u, now + 2 * USEC_PER_SEC, &skipped, &why), 0, "unchanged: not read again");
        write_file(path, "65534:165536:65536\n", 0664);
        is_int(peer_users_refresh(u, now + 3 * USEC_PER_SEC, &skipped, &why), -EPERM, "writable by its group: not believed");
        ok(why && strstr(why, "not believed"), "saying why (%s)", strna(why));
        is_int(peer_users_key(u, -1, 0, 165536 + 5, &from), 131072, "its ranges are gone");
        is_int(peer_users_refresh(u, now + 4 * USEC_PER_SEC, &skipped, &why), 0, "said once");
        ok(chmod(path, 0644) == 0, "made root's alone");
        is_int(peer_users_refresh(u, now + 5 * USEC_PER_SEC, &skipped, &why), 1, "read anew");
        is_int(peer_users_key(u, -1, 0, 165536 + 5, &from), 65534, "believed again");
        peer_users_free(u);
        (void) unlink(path);
        (void) rmdir(dir);
}

int main(void) {
        test_parse();
        test_overlap();
        test_rules();
        if (geteuid() == 0)
                test_refresh(); /* the file must be root's */
        return tap_done();
}
