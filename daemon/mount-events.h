/* mount-events.h: the mount table kept by the kernel's events, at a cost
 * per change that does not grow with the table (issue 47).
 *
 * A fanotify group reports each mount attached to or detached from
 * atimed's mount namespace by its 64-bit id; statmount(2) reads that one
 * mount (mount-kernel.h). The model holds every mount of the namespace,
 * indexed by id and by mount point. The table in force (mounts.h) is
 * rebuilt only when a change can alter it: the mount is one the filter
 * tracks, or sits on the way to one (at a directory above a tracked
 * mount's target, where mounting over hides it). A change elsewhere (a
 * container's tmpfs, excluded) costs a statmount and two hash updates.
 *
 * fanotify says nothing of a remount that changes only flags (6.18 has
 * attach and detach only). The mountinfo poll (MountMonitor) stays as a
 * trigger: when it fires, the tracked mounts are read again with
 * statmount, never the whole table; its cost grows with the tracked
 * mounts, not with all of them. A change that can alter the table sets a
 * timer of rescan_delay: a burst of them costs one build of it.
 *
 * The queue overflowing (the kernel dropped events) or a record that does
 * not parse resyncs: listmount(2) and a statmount of every mount, once.
 * Where the calls are refused or fail for good, the owner is told (lost)
 * and goes back to reading mountinfo. All of it runs on the event loop:
 * each call is one mount's, under the namespace lock held for reading,
 * and each wakeup handles at most a bounded number of events. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "macro.h"
#include "mounts.h"

typedef struct MountEvents MountEvents;
/* A new table to put in force: taken. 0 or -errno. */
typedef int (*mount_events_apply_fn)(MountTable *t, void *userdata);
/* The event path stopped for good (-errno said why): events are no longer
 * read; the owner frees this later and reads mountinfo instead. */
typedef void (*mount_events_lost_fn)(int error, void *userdata);

struct mount_events_stats {
        uint64_t events;    /* mount ids reported */
        uint64_t statmounts;
        uint64_t rebuilds;  /* tables built */
        uint64_t resyncs;   /* full reads after an overflow */
        size_t n_all;       /* mounts in the namespace */
};

/* 'fan_fd': the fanotify group (taken, also on failure). The filter's
 * lists are borrowed until the next mount_events_set_filter(). */
int mount_events_new(sd_event *e, int fan_fd, const struct mount_filter *filter, mount_events_apply_fn apply,
                     mount_events_lost_fn lost, void *userdata, MountEvents **ret);
/* A table is built at most once per 'delay' ([mounts] rescan_delay): a
 * burst of changes to tracked mounts costs one build, each change only
 * its statmount. */
void mount_events_set_delay(MountEvents *m, uint64_t delay_usec);
/* The whole namespace read (listmount, then statmount of each) and the
 * table applied: at start. -ENOSYS/-EPERM where the calls are refused. */
int mount_events_load(MountEvents *m);
/* A new filter (reload): the tracked set computed again, the table
 * applied. */
int mount_events_set_filter(MountEvents *m, const struct mount_filter *filter);
/* The mount table changed in some way (the mountinfo poll): the tracked
 * mounts read again, for remounts. */
void mount_events_refresh(MountEvents *m);
void mount_events_get_stats(const MountEvents *m, struct mount_events_stats *ret);
MountEvents *mount_events_free(MountEvents *m);
DEFINE_FREE_FUNC(MountEvents, mount_events_free);
