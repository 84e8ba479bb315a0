/* reply.h: the pieces every method's reply is made of: its parameters
 * read, its fields added, a NoSuchMount that says why, and a list of
 * thousands of elements serialized one at a time. No state; each piece
 * returns NULL (or -ENOMEM) only when memory runs out. Names (targets,
 * paths: any bytes) go out in their protocol form (escape.h), so every
 * reply stays valid UTF-8. */
#pragma once

#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <stdbool.h>
#include <stdint.h>

#include "control.h"
#include "view.h"

/* The InvalidParameter error naming 'name'. */
json_object *reply_invalid_parameter(const char *name);
/* An optional string parameter: 0 if absent (*ret NULL), 1 if present,
 * -EINVAL if of another type. */
int reply_param_string(json_object *params, const char *name, const char **ret);
/* An optional integer parameter: 0 if absent, 1 if present, -EINVAL if of
 * another type or outside [lo, hi]. */
int reply_param_int(json_object *params, const char *name, int64_t lo, int64_t hi, int64_t *ret);

/* Adds v (taken) to o as 'key'; -ENOMEM if v is NULL (it was not made). */
int reply_add(json_object *o, const char *key, json_object *v);
/* The same where NULL is meant: json-c's NULL is JSON null. */
int reply_add_nullable(json_object *o, const char *key, json_object *v);
/* A name in its protocol form, or JSON null for NULL. */
json_object *reply_name_or_null(const char *s);
/* A number printed with at most 'decimals' digits after the point (json-c
 * would print every binary digit of 3000.08). */
json_object *reply_rounded(double v, int decimals);

/* NoSuchMount; with a reason when a mount is there that atimed leaves out
 * on purpose, so that a client can say why. Answered from the mount table
 * the daemon holds: a failing request reads no file. */
json_object *reply_no_such_mount(const View *v, const char *target);
/* Whether peer may call the methods that change things: root, or a member
 * of the privileged group. */
bool reply_peer_privileged(const View *v, const ControlPeer *peer);

/* A list built as JSON text, one element at a time: a status of thousands
 * of mounts never holds thousands of json-c trees at once (megabytes that
 * would stay in the heap after it). The list is a printbuf that begins
 * with "["; reply_list_append() adds j (freed, whatever happens) after a
 * comma where one is due; the caller closes it with "]" and hands it to
 * reply_text_new(). */
int reply_list_append(struct printbuf *pb, json_object *j);
/* A JSON value held as the text 'text' (taken, freed on failure too),
 * serialized as is. */
json_object *reply_text_new(struct printbuf *text);
void reply_printbuf_freep(struct printbuf **pb);
