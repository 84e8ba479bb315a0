/* act-reply.h: the methods that act, Probe and Reload, answered once the
 * work they start elsewhere is done (a probe in the tracker's worker, the
 * configuration read in the reloader's). Each returns 1 when the call is
 * answered later through 'call' (held until then), or 0 with the reply,
 * an error, in *ret; -ENOMEM. The caller checked that the peer is
 * privileged. */
#pragma once

#include <json-c/json.h>

#include "control.h"
#include "view.h"

/* Probe: the policy in force on the mount at the target, found now. */
int act_reply_probe(const View *v, ControlCall *call, json_object *params, json_object **ret);
/* Reload: the configuration read again and put in force before the
 * reply, or the errors that kept the running one. */
int act_reply_reload(const View *v, ControlCall *call, json_object *params, json_object **ret);
