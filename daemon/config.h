/* config.h: atimed's configuration, one struct filled from built-in
 * defaults and then the ini file. Every value is parsed once, in config.c,
 * into the type its users need (durations in usec, sizes in bytes, the cost
 * table and the history rings as structs): nothing else parses the file's
 * text again. The file says exactly what is taken, or it is refused: no
 * line, name or path is ever cut. Nothing outside config.c sees inih. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "advisor.h"
#include "config-types.h"
#include "consumers.h"
#include "macro.h"

#define ATIMED_CONFIG_DEFAULT SYSCONFDIR "/atimed/atimed.conf"
#define ATIMED_STATE_DIR_DEFAULT LOCALSTATEDIR "/lib/atimed"

/* A [mount:PATH] section: settings for the mount at PATH. Every section
 * for one mount, however its path is written, is one entry. */
struct mount_config {
        char *target; /* the mount point's bytes (PATH decoded), as mountinfo names it */
        char *probe_dir; /* where to probe instead of the mount point; NULL: default */
        AtimeNeed needs_atime; /* declared for it: software the scan cannot see reads atime */
        bool ignore;           /* never advise a change */
        unsigned needs_atime_line; /* the file's line that declares it; 0: not declared */
        /* needs_atime as a consumer (kind CONSUMER_CONFIG, source "FILE:LINE"),
         * for the advice and for any client's guard, as the scan's are; NULL
         * if none is declared. Points into struct config's 'declared'. */
        const struct consumer *declared;
};

struct config {
        char *path; /* the file it was read from; NULL for built-in defaults */

        /* [daemon] */
        int log_level;
        char *state_dir;
        unsigned worker_threads;
        char *helper_socket; /* atimed-helper's, where the service manager runs it (helper-client.h); read at start */

        /* [control] */
        char *socket_path;
        mode_t socket_mode;
        char *socket_group; /* NULL: leave the group as created */
        unsigned max_clients;
        unsigned max_clients_per_user;
        unsigned reserved_clients;
        uint64_t max_message_size;
        uint64_t idle_timeout_usec;
        uint64_t user_loop_usec; /* of each second; 0: no limit */
        uint64_t user_reply_memory; /* bytes of unsent replies per user; 0: no limit */
        uint64_t reply_memory;      /* the same, all users but root and privileged_group */
        char *privileged_group; /* may call methods that change things; NULL: root only */

        /* [mounts] */
        char *mountinfo_path;
        char **include_fstypes;
        char **exclude_fstypes;
        char **exclude_paths;
        uint64_t rescan_delay_usec;
        bool mount_events; /* changes by fanotify and statmount where the kernel has them (mount-events.h); read at start */

        /* [probe] */
        uint64_t probe_interval_usec;
        uint64_t probe_timeout_usec;
        char *probe_dir; /* relative to each mount point; NULL: the mount point */

        /* [sampler] */
        uint64_t sampler_interval_usec;
        unsigned sample_size;
        unsigned walk_rate; /* directory entries per second, for all walks together */
        unsigned idle_walk_rate; /* the same for first walks while the host's CPUs are idle */
        char *stat_path;         /* the host's CPU times (/proc/stat), for idle_walk_rate (hostload.h) */
        uint64_t walk_refresh_usec;
        uint64_t sampler_timeout_usec;

        /* [device] */
        char *diskstats_path;
        char *sysfs_path;
        char *jbd2_path; /* ext4's journal statistics (fscounter.h) */

        /* [btrfs] */
        bool btrfs_snapshot_search; /* read the tree of subvolumes through atimed's helper (helper-client.h); read at start */

        /* [consumers] */
        char **tmpfiles_dirs;
        char **mail_spools;
        char *tmpreaper_conf;
        char *tmpwatch_cron;
        char *popcon_conf;
        uint64_t consumers_interval_usec;

        /* [advisor] */
        unsigned noatime_threshold; /* atime updates per minute */
        unsigned min_saving;        /* atime updates per minute a change must save to be advised */
        uint64_t advice_window_usec;
        struct config_costs costs;

        /* [export] */
        char *textfile; /* Prometheus text for node_exporter's textfile collector; NULL: none */
        mode_t textfile_mode; /* whatever the umask */

        /* [store] */
        uint64_t flush_interval_usec;
        struct config_rings rings;
        unsigned max_histories;

        /* [mount:PATH] sections, in file order */
        struct mount_config *mounts;
        size_t n_mounts;
        Consumers *declared; /* their needs_atime, one consumer each; NULL if none */
};

/* The [mount:PATH] settings for target, or NULL. */
const struct mount_config *config_find_mount(const struct config *c, const char *target);

int config_new(struct config **ret);
struct config *config_free(struct config *c);
DEFINE_FREE_FUNC(struct config, config_free);

/* Reads 'path' over the defaults. Returns 0; -EINVAL with one message per
 * problem ("path:line: ...") in *ret_errors; or -errno if the file cannot be
 * read (nothing in *ret_errors). */
int config_load(const char *path, struct config **ret, char ***ret_errors);
/* The same for text in memory; 'name' is used in messages. */
int config_load_string(const char *name, const char *text, size_t len, struct config **ret, char ***ret_errors);

/* Prints the effective configuration in the file's own syntax, which reads
 * back to the same configuration (paths in their escaped form). 0 or
 * -ENOMEM (then the text is incomplete). */
int config_print(const struct config *c, FILE *f);
/* The same as a string; NULL if out of memory. */
char *config_print_string(const struct config *c);
