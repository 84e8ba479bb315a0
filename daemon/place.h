/* place.h: where a filesystem is sampled. The walk and the sweeps reach a
 * filesystem through one of its mounts, the place: the one that shows
 * most of it (the shortest root), never one whose root is a file or whose
 * path leads to another mount; on btrfs, a mount of the subvolume that
 * snapshots share, as the last look chose it (where atime costs space,
 * and what the btrfs model prices). The sampler is made for the place and
 * made again when the place or the sample's size changes.
 *
 * Owns: Filesystem.place_root, place_subvol, place_rank and what was said
 * of the place (place_said*), and the Filesystem's sampler's life (made
 * and replaced here, freed with the filesystem). Borrows: the mounts'
 * entries, the configuration, the btrfs meter's facts
 * (btrfs_meter_facts()). Failure: no place (-ENOENT, nothing to sample
 * through), a job out (-EBUSY: asked again when it is back), no memory. */
#pragma once

#include "tracker-base.h"

/* The mount fs is reached through; NULL: none can be. */
const TrackedMount *place_of(const Filesystem *fs);
/* On btrfs, after each look: the subvolume to sample, of those mounted
 * where atime is written, by the look's facts (btrfs_place_rank()); a look
 * that did not list every subvolume leaves the choice where it was. */
void place_choose_btrfs(Filesystem *fs);
/* Into a btrfs look: the subvolume of each of fs's mounts, and whether
 * that mount writes atime. */
void place_want_btrfs(const Filesystem *fs, BtrfsLook *l);
/* A btrfs no mount of which is sampled (each noatime or read-only): looked
 * at alone, at the sweeps' cadence (FS_JOB_LOOK). */
bool place_looks_only(const Filesystem *fs);
/* The sampler for fs at its place, made on first need and made again
 * where the place or [sampler] sample_size changed (only when no job of
 * fs is out); Filesystem.seen is its view. On btrfs, says once where it
 * samples and why. */
int place_ensure_sampler(Filesystem *fs);
