/* metrics.h: atimed's state in the Prometheus text exposition format
 * (version 0.0.4, which OpenMetrics parsers read too), from a Report (see
 * report.h). atimectl prints it; the daemon writes the same text for
 * node_exporter's textfile collector, in a worker thread. Base units:
 * seconds and bytes; rates per second. One pass over the mounts per metric
 * family: linear in the number of mounts. */
#pragma once

#include <stdio.h>

#include "report.h"

/* The advice metrics only if r->have_advice. */
int metrics_write(FILE *f, const Report *r);
