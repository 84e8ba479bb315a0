/* varlink.h: message framing and building for the control protocol, and
 * the client side of a call. Parsing is json-c's, with a depth limit. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

#define VARLINK_MAX_DEPTH 16

DEFINE_FREE_FUNC(json_object, json_object_put);
#define _cleanup_json_ _cleanup_(json_object_putp)

/* Parses exactly 'len' bytes (without the NUL) as one JSON object. Returns
 * -EBADMSG for malformed, too deep or non-object input, -ENOTUNIQ when an
 * object repeats a key, -EILSEQ when a string holds a NUL (\u0000). */
int varlink_parse(const char *buf, size_t len, json_object **ret);
/* Serializes 'msg' and appends the terminating NUL; *ret_len counts it. */
/* How messages are written: compact, "/" left alone. */
#define VARLINK_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
int varlink_serialize(json_object *msg, char **ret, size_t *ret_len);

/* Builders; they take ownership of 'params' (which may be NULL). NULL on OOM. */
json_object *varlink_request_new(const char *method, json_object *params);
json_object *varlink_reply_new(json_object *params);
json_object *varlink_error_new(const char *error, json_object *params);
/* An error with one string parameter, the common case. */
json_object *varlink_error_new_str(const char *error, const char *key, const char *value);

/* A JSON string holding a name of any bytes in its protocol form (see
 * escape.h): valid UTF-8 whatever 'raw' holds. NULL on OOM. */
json_object *varlink_name_new(const char *raw);

/* Client side. */
int varlink_connect(const char *path, int *ret_fd);
/* Sends the request and waits for its reply. On a Varlink error reply,
 * returns -EBADR and sets *ret_error to the error name; *ret_params is the
 * reply's (or error's) parameters either way: always an object for a
 * reply that is no error (one that has others is -EBADMSG), as they came
 * for an error. A reply longer than
 * max_reply is -EMSGSIZE; one of more than max_reply /
 * VARLINK_REPLY_BYTES_PER_VALUE values -E2BIG, before json-c parses it
 * (some 80 bytes a value: "[0,0,0,...]" would take 40 times its length);
 * one that varlink_parse() refuses, what it returns. */
#define VARLINK_REPLY_BYTES_PER_VALUE 16
int varlink_call(int fd, const char *method, json_object *params, uint64_t timeout_usec,
                 size_t max_reply, json_object **ret_params, char **ret_error);
