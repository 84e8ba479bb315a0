/* status-reply.h: GetStatus's reply, written from the Report that
 * status.c makes of the view (the same the metrics are written from),
 * each mount with its recent history when asked for. Whole, for one mount
 * or all at once, or in pieces for a build in slices (reply-cache.h): a
 * mount at a time, then the daemon's figures around them. */
#pragma once

#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <stdint.h>

#include "report.h"
#include "view.h"

/* What GetStatus's history_s 'seconds' (1 to 86400; 0: none) is served
 * as: 60 points of the finest ring that reaches so far (its resolution
 * times 60, 86400 at most), or past every ring's 60 points (rings of
 * atimed.conf finer than the default), the last ring's 60. So any
 * history_s is one of a few (3600, 36000 and 86400 with the default
 * rings), each a reply kept: a flood of history_s, each different, is
 * served from them, not built afresh for each; and a mount's history in
 * the reply is 60 values at most. */
int64_t status_reply_span(const View *v, int64_t seconds);
/* One mount of the report in GetStatus's form, with its recent history if
 * asked for. */
json_object *status_reply_mount(const View *v, const ReportMount *rm, int64_t history_s);
/* The reply of a status whose mounts are the JSON text 'mounts' ("[" and
 * its elements; consumed), the daemon's figures from 'rep'. */
json_object *status_reply_finish(const Report *rep, struct printbuf *mounts);
/* The status of the mount at target (NULL: of every mount), with
 * history_s of history (0: none), its mounts as JSON text for the wire,
 * written from the same Report as the metrics. */
json_object *status_reply_build(const View *v, const char *target, int64_t history_s);
