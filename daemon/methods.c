/* methods.c: the control protocol's methods (see protocol.h for names and
 * the interface descriptions below for their shapes). */
#include "methods.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "protocol.h"
#include "varlink.h"

/* The Varlink interface descriptions, served by GetInterfaceDescription so
 * that generic Varlink tools can introspect atimed. Keep them in step with the
 * code: tests/unit/test-methods checks each method below is described. */
static const char varlink_service_description[] =
        "# The service interface every Varlink service provides: what the\n"
        "# service is and which interfaces it implements.\n"
        "interface org.varlink.service\n"
        "\n"
        "method GetInfo() -> (\n"
        "  vendor: string,\n"
        "  product: string,\n"
        "  version: string,\n"
        "  url: string,\n"
        "  interfaces: []string\n"
        ")\n"
        "\n"
        "method GetInterfaceDescription(interface: string) -> (description: string)\n"
        "\n"
        "error InterfaceNotFound (interface: string)\n"
        "error MethodNotFound (method: string)\n"
        "error MethodNotImplemented (method: string)\n"
        "error InvalidParameter (parameter: string)\n"
        "error PermissionDenied ()\n"
        "error ExpectedMore ()\n";

static const char atimed_description[] =
        "# atimed: the atime policy really in force on this host's mounts.\n"
        "interface io.atimed\n"
        "\n"
        "type Device (\n"
        "  major: int,\n"
        "  minor: int\n"
        ")\n"
        "\n"
        "type Mount (\n"
        "  mount_id: int,\n"
        "  target: string,\n"
        "  source: string,\n"
        "  fstype: string,\n"
        "  root: string,\n"
        "  device: Device,\n"
        "  # Effective: mountinfo never prints strictatime.\n"
        "  atime: (strictatime, relatime, noatime),\n"
        "  # True under noatime too, which implies it.\n"
        "  nodiratime: bool,\n"
        "  # A superblock option: shared by every mount of the filesystem.\n"
        "  lazytime: bool,\n"
        "  read_only: bool,\n"
        "  options: string,\n"
        "  super_options: string\n"
        ")\n"
        "\n"
        "# The daemon and every tracked mount, or only the one at target.\n"
        "method GetStatus(target: ?string) -> (\n"
        "  schema_version: int,\n"
        "  version: string,\n"
        "  hostname: string,\n"
        "  started_at: int,\n"
        "  uptime_s: int,\n"
        "  mounts: []Mount\n"
        ")\n"
        "\n"
        "error NoSuchMount (target: string)\n"
        "error InvalidRequest (reason: string)\n"
        "error RequestTooLarge (limit: int)\n"
        "error TooManyClients (reason: string)\n"
        "error InternalError (reason: string)\n";

typedef json_object *(*method_fn)(Manager *m, const ControlPeer *peer, json_object *params);

struct method {
        const char *name;
        method_fn call;
        const char *const *params; /* accepted parameter names, NULL-terminated */
};

static json_object *invalid_parameter(const char *name) {
        return varlink_error_new_str(ERROR_INVALID_PARAMETER, P_PARAMETER, name);
}

/* NULL if every parameter is one the method accepts; else the error reply. */
static json_object *check_param_names(const struct method *me, json_object *params) {
        if (!params)
                return NULL;
        json_object_object_foreach(params, key, val) {
                bool known = false;

                (void) val;
                for (const char *const *p = me->params; p && *p && !known; p++)
                        known = streq(*p, key);
                if (!known)
                        return invalid_parameter(key);
        }
        return NULL;
}

/* An optional string parameter: 0 if absent (*ret NULL), 1 if present,
 * -EINVAL if of another type. */
static int param_string(json_object *params, const char *name, const char **ret) {
        json_object *v;

        *ret = NULL;
        if (!params || !json_object_object_get_ex(params, name, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        *ret = json_object_get_string(v);
        return 1;
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

json_object *methods_mount_to_json(const MountEntry *e) {
        _cleanup_json_ json_object *o = json_object_new_object(), *dev = json_object_new_object();

        if (!o || !dev)
                return NULL;
        if (add(dev, F_MAJOR, json_object_new_int64(major(e->devno))) < 0 ||
            add(dev, F_MINOR, json_object_new_int64(minor(e->devno))) < 0)
                return NULL;
        if (add(o, F_MOUNT_ID, json_object_new_int(e->id)) < 0 ||
            add(o, F_TARGET, json_object_new_string(e->target)) < 0 ||
            add(o, F_SOURCE, json_object_new_string(e->source)) < 0 ||
            add(o, F_FSTYPE, json_object_new_string(e->fstype)) < 0 ||
            add(o, F_ROOT, json_object_new_string(e->root)) < 0 || add(o, F_DEVICE, TAKE_PTR(dev)) < 0 ||
            add(o, F_ATIME, json_object_new_string(atime_mode_to_string(e->policy.atime))) < 0 ||
            add(o, F_NODIRATIME, json_object_new_boolean(e->policy.nodiratime)) < 0 ||
            add(o, F_LAZYTIME, json_object_new_boolean(e->policy.lazytime)) < 0 ||
            add(o, F_READ_ONLY, json_object_new_boolean(e->policy.read_only)) < 0 ||
            add(o, F_OPTIONS, json_object_new_string(e->vfs_options)) < 0 ||
            add(o, F_SUPER_OPTIONS, json_object_new_string(e->super_options)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *method_get_info(Manager *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *ifs = json_object_new_array();

        if (!p || !ifs)
                return NULL;
        if (json_object_array_add(ifs, json_object_new_string(VARLINK_SERVICE_INTERFACE)) < 0 ||
            json_object_array_add(ifs, json_object_new_string(ATIMED_INTERFACE)) < 0)
                return NULL;
        if (add(p, F_VENDOR, json_object_new_string(PACKAGE_NAME)) < 0 ||
            add(p, F_PRODUCT, json_object_new_string(PACKAGE_NAME)) < 0 ||
            add(p, F_VERSION, json_object_new_string(PACKAGE_VERSION)) < 0 ||
            add(p, F_URL, json_object_new_string(PACKAGE_URL)) < 0 || add(p, F_INTERFACES, TAKE_PTR(ifs)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

const char *methods_interface_description(const char *interface) {
        if (streq(interface, VARLINK_SERVICE_INTERFACE))
                return varlink_service_description;
        if (streq(interface, ATIMED_INTERFACE))
                return atimed_description;
        return NULL;
}

static json_object *method_get_interface_description(Manager *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = NULL;
        const char *iface, *desc;

        if (param_string(params, P_INTERFACE, &iface) <= 0)
                return invalid_parameter(P_INTERFACE);
        desc = methods_interface_description(iface);
        if (!desc)
                return varlink_error_new_str(ERROR_INTERFACE_NOT_FOUND, P_INTERFACE, iface);
        p = json_object_new_object();
        if (!p || add(p, F_DESCRIPTION, json_object_new_string(desc)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

static json_object *method_get_status(Manager *m, const ControlPeer *peer, json_object *params) {
        _cleanup_json_ json_object *p = json_object_new_object(), *mounts = json_object_new_array();
        const char *target;
        char host[256] = "";
        bool found = false;
        int r;

        if (!p || !mounts)
                return NULL;
        r = param_string(params, F_TARGET, &target);
        if (r < 0)
                return invalid_parameter(F_TARGET);

        for (size_t i = 0; m->mounts && i < m->mounts->n; i++) {
                const MountEntry *e = &m->mounts->entries[i];

                if (target && !streq(target, e->target))
                        continue;
                json_object *j = methods_mount_to_json(e);

                found = true;
                if (!j || json_object_array_add(mounts, j) < 0) {
                        json_object_put(j);
                        return NULL;
                }
        }
        if (target && !found)
                return varlink_error_new_str(ERROR_NO_SUCH_MOUNT, F_TARGET, target);

        (void) gethostname(host, sizeof host - 1);
        if (add(p, F_SCHEMA_VERSION, json_object_new_int(ATIMED_SCHEMA_VERSION)) < 0 ||
            add(p, F_VERSION, json_object_new_string(PACKAGE_VERSION)) < 0 ||
            add(p, F_HOSTNAME, json_object_new_string(host)) < 0 ||
            add(p, F_STARTED_AT, json_object_new_int64((int64_t) (m->started_realtime / USEC_PER_SEC))) < 0 ||
            add(p, F_UPTIME_S,
                json_object_new_int64((int64_t) ((now_usec(CLOCK_MONOTONIC) - m->started_monotonic) / USEC_PER_SEC))) < 0 ||
            add(p, F_MOUNTS, TAKE_PTR(mounts)) < 0)
                return NULL;
        return varlink_reply_new(TAKE_PTR(p));
}

static const char *const no_params[] = { NULL };
static const char *const interface_params[] = { P_INTERFACE, NULL };
static const char *const status_params[] = { F_TARGET, NULL };

static const struct method methods[] = {
        { METHOD_GET_INFO, method_get_info, no_params },
        { METHOD_GET_INTERFACE_DESCRIPTION, method_get_interface_description, interface_params },
        { METHOD_GET_STATUS, method_get_status, status_params },
};

const char *const *methods_list(void) {
        static const char *names[ELEMENTSOF(methods) + 1];

        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                names[i] = methods[i].name;
        return names;
}

json_object *methods_dispatch(void *userdata, const ControlPeer *peer, const char *method, json_object *params) {
        Manager *m = userdata;
        const char *dot;
        json_object *bad;
        bool iface_known = false;

        for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
                if (!streq(methods[i].name, method))
                        continue;
                bad = check_param_names(&methods[i], params);
                if (bad)
                        return bad;
                return methods[i].call(m, peer, params);
        }

        /* Varlink tells an unknown interface from an unknown method. */
        dot = strrchr(method, '.');
        if (dot) {
                size_t l = (size_t) (dot - method);

                iface_known = (l == strlen(ATIMED_INTERFACE) && strncmp(method, ATIMED_INTERFACE, l) == 0) ||
                              (l == strlen(VARLINK_SERVICE_INTERFACE) &&
                               strncmp(method, VARLINK_SERVICE_INTERFACE, l) == 0);
        }
        if (!iface_known && dot) {
                _cleanup_free_ char *iface = strndup(method, (size_t) (dot - method));
                return iface ? varlink_error_new_str(ERROR_INTERFACE_NOT_FOUND, P_INTERFACE, iface) : NULL;
        }
        return varlink_error_new_str(ERROR_METHOD_NOT_FOUND, P_METHOD, method);
}
