/* fstab-drift.h: a live atime policy that fstab would undo at the next mount: what fstab asks for the
 * mount at a target, read with libmount, against what is live, and the two commands that keep either, each
 * argument a shell word. For the status, the advice and the fstab command alike. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Drift: 1 and a sentence in buf when the live atime policy of the mount
 * at target differs from its fstab entry (either way), 0 when it does not
 * or fstab has no entry for it, -ENOMEM. */
int fstab_drift(const char *fstab, const char *target, const char *live_atime, bool live_lazytime, char *buf,
                size_t len);
