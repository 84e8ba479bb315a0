/* place.c: where a filesystem is sampled: the mount its sampler reaches
 * it through, on btrfs the subvolume that snapshots share, and the
 * sampler made for that place (see place.h). */
#include "place.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "btrfs.h"
#include "log.h"
#include "time-util.h"

/* The subvolume a btrfs mount shows (subvolid=); 0: unknown, or no
 * memory to tell. */
static uint64_t mount_subvol(const TrackedMount *m) {
        _cleanup_free_ char *path = NULL;
        uint64_t id = 0;

        return btrfs_subvol_from_options(m->entry->super_options, &id, &path) < 0 ? 0 : id;
}

/* The mount the sampler reaches the filesystem through: on btrfs, one of
 * the subvolume place_choose_btrfs() chose (where atime costs space,
 * and what the model prices); else the one showing most of it (the
 * shortest root), the oldest on a tie; never one whose root is a file or
 * whose path leads to another mount. */
static const TrackedMount *place_ranked(const Filesystem *fs, struct btrfs_place *ret) {
        const TrackedMount *best = NULL;
        struct btrfs_place best_rank = {}, r;

        for (size_t i = 0; i < fs->n_mounts; i++) {
                const TrackedMount *m = fs->mounts[i];

                if (!mount_sampled(m))
                        continue;
                r = (struct btrfs_place) { .root_len = strlen(m->entry->root) };
                if (fs->place_subvol != 0 && mount_subvol(m) == fs->place_subvol) {
                        r = fs->place_rank;
                        r.root_len = strlen(m->entry->root);
                }
                if (!best || btrfs_place_better(&r, &best_rank)) {
                        best = m;
                        best_rank = r;
                }
        }
        if (ret)
                *ret = best_rank;
        return best;
}

/* On btrfs, after each look: the subvolume to sample, of those mounted
 * (btrfs_place_rank(), by the look's facts), kept for place_of(), which
 * runs often and must not go through every subvolume each time. A failed
 * look leaves the choice where it was, rather than moving the place back
 * and forth. */
void place_choose_btrfs(Filesystem *fs) {
        const struct btrfs_facts *f = btrfs_meter_facts(&fs->btrfs);
        struct btrfs_place best = {}, r;
        uint64_t best_id = 0;

        if (!f)
                return;
        for (size_t i = 0; i < fs->n_mounts && f->sight == BTRFS_SIGHT_ALL; i++) {
                const TrackedMount *m = fs->mounts[i];
                uint64_t id;

                /* Mounted noatime or read-only only, reads of it cost nothing. */
                if (!mount_measured(m) || (id = mount_subvol(m)) == 0)
                        continue;
                btrfs_place_rank(f, id, strlen(m->entry->root), &r);
                if (r.shares && (best_id == 0 || btrfs_place_better(&r, &best))) {
                        best = r;
                        best_id = id;
                }
        }
        fs->place_subvol = best_id;
        fs->place_rank = best;
}

/* Every mount's subvolume, looked up in the same pass as the place's
 * (btrfs_look_want()): each is found, said deleted or said beyond what is
 * looked up at once, and the ones that write atime tell the look which
 * snapshotted subvolumes the sample does not cover. */
void place_want_btrfs(const Filesystem *fs, BtrfsLook *l) {
        for (size_t i = 0; i < fs->n_mounts && l->on; i++)
                btrfs_look_want(l, mount_subvol(fs->mounts[i]), mount_measured(fs->mounts[i]));
}

const TrackedMount *place_of(const Filesystem *fs) {
        return place_ranked(fs, NULL);
}

/* A btrfs no mount of which is sampled (each noatime or read-only): its
 * snapshots and metadata are looked at all the same, at the sweeps'
 * cadence, in a job of its own (FS_JOB_LOOK: no walk, no sweep), with the
 * sweeps' deadline and back-off. */
bool place_looks_only(const Filesystem *fs) {
        const TrackedMount *place;

        return !fs->orphaned && !fs_needs_sampling(fs) && (place = place_of(fs)) && place->entry->fstype &&
               streq(place->entry->fstype, "btrfs");
}

/* On btrfs, once the first look is back and whenever the choice changes:
 * which subvolume is sampled, and why (atimed(8), BTRFS). */
static void place_say(Filesystem *fs, const TrackedMount *place, const struct btrfs_place *r) {
        const struct btrfs_facts *f = btrfs_meter_facts(&fs->btrfs);
        const char *target = place->entry->target;
        uint64_t id = mount_subvol(place);
        int why = !f ? 0 : r->shares ? 1 : f->sight == BTRFS_SIGHT_ALL ? 2 : 3;

        if (why == 0 || (fs->place_said == why && fs->place_said_subvol == id))
                return;
        fs->place_said = why;
        fs->place_said_subvol = id;
        if (why == 1)
                log_mount_info(target, "%s: btrfs sampled through subvolume %llu (root %s): %u snapshot%s share its "
                               "tree; reads of the filesystem's other subvolumes count only in measured intervals",
                               target, (unsigned long long) id, place->entry->root, r->snapshots,
                               r->snapshots == 1 ? "" : "s");
        else if (why == 2)
                log_mount_info(target, "%s: btrfs sampled through subvolume %llu (root %s), the shortest root: no "
                               "subvolume mounted here has snapshots sharing its tree", target,
                               (unsigned long long) id, place->entry->root);
        else
                log_mount_info(target, "%s: btrfs sampled through subvolume %llu (root %s), the shortest root: the "
                               "snapshots of the filesystem's other subvolumes cannot be seen (atimed(8), BTRFS)",
                               target, (unsigned long long) id, place->entry->root);
}

/* The sampler for fs, created on first need; reset when the place moved. */
int place_ensure_sampler(Filesystem *fs) {
        struct btrfs_place rank;
        const TrackedMount *place = place_ranked(fs, &rank);
        uint64_t seed;
        int r;

        if (!place)
                return -ENOENT;
        if (streq(place->entry->fstype, "btrfs"))
                place_say(fs, place, &rank);
        if (fs->sampler && fs->place_root && streq(fs->place_root, place->entry->root) &&
            fs->seen.k == fs->tracker->config->sample_size)
                return 0;
        if (fs->busy)
                return -EBUSY; /* retried when its job is back */
        if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != sizeof seed)
                seed = now_usec(CLOCK_MONOTONIC) ^ (uint64_t) fs->devno;
        fs->sampler = sampler_free(fs->sampler);
        fs->seen = (SamplerView) {};
        free(fs->place_root);
        fs->place_root = strdup(place->entry->root);
        if (!fs->place_root)
                return -ENOMEM;
        fs->next_walk = 0;
        fs->figured = false;
        fs->first_asked = 0;
        tracker_plan(fs->tracker, PLAN_WALKS);
        r = sampler_new(fs->tracker->config->sample_size, seed, &fs->sampler);
        if (r < 0)
                return r;
        sampler_view(fs->sampler, &fs->seen);
        return 0;
}
