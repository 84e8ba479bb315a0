/* history-reply.h: GetHistory's reply, a mount's points as the store
 * keeps them (a ring chosen by resolution or by how far back), its last
 * change of policy judged, on btrfs the bytes atime un-shared; and the
 * history a mount's target or id names, which GetStatus reads too. */
#pragma once

#include <json-c/json.h>

#include "control.h"
#include "view.h"

/* The history of the tracked mount with id 'mount_id' (> 0; an
 * over-mounted one shares its target with another), else of the mount at
 * target; NULL if the store holds none. */
const MountHistory *history_reply_find(const View *v, int mount_id, const char *target);
/* GetHistory: the reply, or the error, for 'params'; NULL on OOM. A
 * tracked mount with no history yet gets an empty one that says why. */
json_object *history_reply_get(const View *v, const ControlPeer *peer, json_object *params);
