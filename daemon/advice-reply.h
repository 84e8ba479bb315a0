/* advice-reply.h: GetRecommendations' reply, each mount's advice with
 * its evidence, saving and the consumers it weighed; and GetConsumers',
 * who reads atime at a path. A consumer found in a file only root can
 * read shows its path to privileged callers alone. Whole, for one mount
 * or all at once, or a recommendation at a time for a build in slices
 * (reply-cache.h). */
#pragma once

#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <stdbool.h>

#include "control.h"
#include "recommend.h"
#include "view.h"

/* One recommendation in the reply's form; 'privileged': the caller may
 * see private paths. NULL on OOM. */
json_object *advice_reply_one(const struct recommendation *r, bool privileged);
/* The reply of a list of recommendations, the JSON text 'list' ("[" and
 * its elements; consumed). */
json_object *advice_reply_finish(struct printbuf *list);
/* The list as JSON text, one recommendation serialized at a time (as the
 * status's mounts are). The advice for the mount at target, or for all
 * (NULL). */
json_object *advice_reply_build(const View *view, const char *target, bool privileged);
/* GetConsumers: who reads atime at target, whatever atimed makes of the
 * mount there (readers.h): what the guards of atimectl remount and fstab
 * --set check a policy against. */
json_object *advice_reply_consumers(const View *v, const ControlPeer *peer, json_object *params);
