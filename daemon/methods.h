/* methods.h: what each control-protocol method does, over the manager's
 * state. The transport is control.c's. */
#pragma once

#include <json-c/json.h>

#include "control.h"
#include "manager.h"

/* control_dispatch_t for a Manager. */
json_object *methods_dispatch(void *manager, const ControlPeer *peer, const char *method, json_object *params);

/* For tests: the methods served, NULL-terminated, and the Varlink interface
 * description of 'interface' (NULL if not served). */
const char *const *methods_list(void);
const char *methods_interface_description(const char *interface);

/* One mount in the GetStatus form. */
json_object *methods_mount_to_json(const MountEntry *e);
