/* methods.h: what each control-protocol method does, over the manager's
 * state. The transport is control.c's. */
#pragma once

#include <json-c/json.h>

#include "control.h"
#include "manager.h"
#include "tracker.h"

/* control_dispatch_t for a Manager. */
int methods_dispatch(void *manager, ControlCall *call, const char *method, json_object *params, json_object **ret);

/* For tests: the methods served, NULL-terminated, and the Varlink interface
 * description of 'interface' (NULL if not served). */
const char *const *methods_list(void);
const char *methods_interface_description(const char *interface);

/* The serialized GetStatus kept in m->status_cache. */
void methods_status_cache_free(struct StatusCache *c);
