/* fuzz-request: control-protocol requests, split on NUL bytes as the socket
 * does, parsed by varlink_parse() and dispatched by methods_dispatch() over
 * a view of a fixed mount table (no tracker, store or consumers). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "methods.h"
#include "protocol.h"
#include "varlink.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MESSAGES 16

/* tests/fixtures/mountinfo-basic, inline so the fuzzer runs from anywhere. */
static const char mountinfo[] =
        "22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
        "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
        "63 27 7:0 / /srv/strict rw - ext4 /dev/loop0 rw\n"
        "64 27 7:0 / /srv/noatime rw,noatime - ext4 /dev/loop0 rw\n"
        "65 27 7:1 / /srv/lazy rw,relatime - xfs /dev/loop1 rw,lazytime,attr2\n"
        "66 27 0:40 / /srv/ndir rw,nodiratime - tmpfs tmpfs rw,size=1024k\n"
        "67 27 7:2 / /srv/ro ro,relatime - ext4 /dev/loop2 ro\n"
        "68 27 7:3 / /srv/sbro rw,relatime - ext4 /dev/loop3 ro\n"
        "70 27 7:4 / /srv/under rw,relatime - ext4 /dev/loop4 rw\n"
        "71 70 7:5 / /srv/under rw,noatime - ext4 /dev/loop5 rw\n"
        "72 27 7:6 /sub /srv/with\\040space rw,relatime - ext4 /dev/loop6 rw\n"
        "73 23 0:41 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        "this line is garbage\n"
        "74 27 0:42 / /srv/fuse rw,nosuid,nodev,relatime - fuse.bindfs /src rw,user_id=0,group_id=0\n"
        "75 27 0:43 / /var/lib/docker/overlay2/abc/merged rw,relatime - overlay overlay rw,lowerdir=/a,upperdir=/b,workdir=/c\n";

static View view = { .privileged_gid = (gid_t) -1 };
static struct config *config;
static MountTable *table;
static Methods *methods;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        struct mount_filter all = {};
        char path[64];
        int fd;

        (void) argc;
        (void) argv;
        log_set_max_level(-1); /* the dispatcher logs refusals: keep the fuzzer quiet */
        if (config_new(&config) < 0 || methods_new(&view, &methods) < 0)
                abort();
        view.config = config;
        fd = memfd_create("mountinfo", MFD_CLOEXEC);
        if (fd < 0 || write(fd, mountinfo, sizeof mountinfo - 1) != (ssize_t) (sizeof mountinfo - 1))
                abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (mount_table_load(path, &all, &table) < 0 || !table || table->n == 0)
                abort();
        close(fd);
        view.mounts = table;
        view.started_realtime = 1700000000ULL * USEC_PER_SEC;
        return 0;
}

static void dispatch(const char *buf, size_t len, bool root) {
        _cleanup_json_ json_object *req = NULL, *reply = NULL;
        _cleanup_(control_call_unrefp) ControlCall *call = NULL;
        json_object *method, *params = NULL;
        const char *name;
        ControlPeer peer = { .pid = 4242 };
        int r;

        if (varlink_parse(buf, len, &req) < 0)
                return;
        if (!json_object_object_get_ex(req, VL_METHOD, &method) || !json_object_is_type(method, json_type_string))
                return;
        name = json_object_get_string(method);
        if (json_object_object_get_ex(req, VL_PARAMETERS, &params) && !json_object_is_type(params, json_type_object))
                params = NULL;

        peer.uid = peer.gid = root ? 0 : 1000;
        if (control_call_new_detached(&peer, &call) < 0)
                return;
        r = methods_dispatch(methods, call, name, params, &reply);
        if (r > 0) {
                if (reply)
                        abort(); /* "answers later" must leave *ret alone */
                reply = control_call_steal_reply(call);
        }
        if (r >= 0 && !reply)
                abort(); /* every request gets an answer */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *p = (const char *) data, *end = p + size;
        /* The last byte picks, bit by bit, which messages come from root. */
        uint8_t who = size ? data[size - 1] : 0;

        if (!config)
                LLVMFuzzerInitialize(NULL, NULL);
        for (unsigned i = 0; i < MAX_MESSAGES && p < end; i++) {
                const char *nul = memchr(p, 0, (size_t) (end - p));
                size_t len = nul ? (size_t) (nul - p) : (size_t) (end - p);

                dispatch(p, len, (who >> (i % 8)) & 1);
                p += len + 1;
        }
        return 0;
}
