/* methods.h: what each control-protocol method does, over the daemon's
 * state as a View shows it (view.h). The transport is control.c's.
 * Methods owns the cached replies of every mount (reply-cache.h): whoever
 * changes what a reply shows calls methods_changed(). */
#pragma once

#include <json-c/json.h>

#include "control.h"
#include "reply-cache.h"
#include "view.h"

typedef struct Methods Methods;
/* 'view' must outlive the Methods and every call answered later. */
int methods_new(const View *view, Methods **ret);
/* Builds the replies of every mount that take the loop long in slices on
 * 'e', between other events (reply-cache.c says when); without it, every
 * reply is built at once. */
int methods_set_event(Methods *m, sd_event *e);
/* Charges 'usec' of the loop's time spent building, later and in slices,
 * a reply that the call of 'peer' asked for (control_server_charge()). */
void methods_set_charge(Methods *m, reply_cache_charge_t charge, void *userdata);
Methods *methods_free(Methods *m);
DEFINE_FREE_FUNC(Methods, methods_free);
/* Something a reply shows changed (the mount table, the tracker's figures,
 * advice, the configuration): the next GetStatus is built afresh (one
 * that takes the loop long, in slices, the last one served meanwhile
 * while it is at most a second old). */
void methods_changed(Methods *m);

/* control_dispatch_t for a Methods. */
int methods_dispatch(void *methods, ControlCall *call, const char *method, json_object *params, json_object **ret);

/* For tests: the methods served, NULL-terminated, and the Varlink interface
 * description of 'interface' (NULL if not served). */
const char *const *methods_list(void);
const char *methods_interface_description(const char *interface);
