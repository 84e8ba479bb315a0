/* metrics.h: atimed's state in the Prometheus text exposition format
 * (version 0.0.4, which OpenMetrics parsers read too), from the replies of
 * GetStatus and GetRecommendations. atimectl prints it; the daemon writes
 * the same text for node_exporter's textfile collector. Base units: seconds
 * and bytes; rates per second. */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

/* 'recommendations' may be NULL (then no recommendation metrics). */
int metrics_write(FILE *f, json_object *status, json_object *recommendations);
