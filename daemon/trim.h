/* trim.h: the heap given back to the system when the daemon has freed much
 * of it: after the mount table shrank by many mounts (containers stopped,
 * churn), once things settle; and once a tick pass, where a megabyte or
 * more lies free (a full status of many mounts, a re-read table or a flush
 * builds and drops megabytes at a time).
 *
 * Owns its timer and what it remembers of the table's size. Borrows the
 * event loop. Never fails: without a timer it trims at once. */
#pragma once

#include <stddef.h>
#include <systemd/sd-event.h>

#include "macro.h"

typedef struct Trimmer Trimmer;

int trimmer_new(sd_event *e, Trimmer **ret);
Trimmer *trimmer_free(Trimmer *x);
DEFINE_FREE_FUNC(Trimmer, trimmer_free);

/* A mount table of n_all mounts (filtered out ones too) is in force: a
 * trim is planned where it has shrunk by many since the last. */
void trimmer_table(Trimmer *x, size_t n_all);
/* At the end of a tick pass: a trim where a megabyte or more lies free. */
void trimmer_if_worth_it(Trimmer *x);
