/* protocol.h: the one definition of the control protocol's interface,
 * method, error and field names, used by both atimed and atimectl.
 * Transport: JSON objects over a SOCK_STREAM Unix socket, each followed by a
 * NUL byte, in Varlink's request/reply/error form. */
#pragma once

#define ATIMED_SOCKET_DEFAULT RUNDIR "/atimed/io.atimed"
/* atimed-helper.socket's (helper-proto.h): root's alone. */
#define ATIMED_HELPER_SOCKET_DEFAULT RUNDIR "/atimed/helper"
#define ATIMED_SOCKET_ENV "ATIMED_SOCKET"

/* Version of the JSON documents (status, history, ...); bumped on any
 * incompatible change of a field's meaning. */
#define ATIMED_SCHEMA_VERSION 2

#define VARLINK_SERVICE_INTERFACE "org.varlink.service"
#define ATIMED_INTERFACE "io.atimed"

/* Message envelope */
#define VL_METHOD "method"
#define VL_PARAMETERS "parameters"
#define VL_ERROR "error"
#define VL_ONEWAY "oneway"
#define VL_MORE "more"
#define VL_UPGRADE "upgrade"
#define VL_CONTINUES "continues"

/* Methods */
#define METHOD_GET_INFO "org.varlink.service.GetInfo"
#define METHOD_GET_INTERFACE_DESCRIPTION "org.varlink.service.GetInterfaceDescription"
#define METHOD_GET_STATUS "io.atimed.GetStatus"
#define METHOD_PROBE "io.atimed.Probe"
#define METHOD_GET_HISTORY "io.atimed.GetHistory"
#define METHOD_GET_RECOMMENDATIONS "io.atimed.GetRecommendations"
/* Who reads atime at a path, whatever atimed makes of the mount there: what
 * atimectl's guards check a policy against. */
#define METHOD_GET_CONSUMERS "io.atimed.GetConsumers"
#define METHOD_RELOAD "io.atimed.Reload"

/* Errors: Varlink's own, then ours */
#define ERROR_INTERFACE_NOT_FOUND "org.varlink.service.InterfaceNotFound"
#define ERROR_METHOD_NOT_FOUND "org.varlink.service.MethodNotFound"
#define ERROR_METHOD_NOT_IMPLEMENTED "org.varlink.service.MethodNotImplemented"
#define ERROR_INVALID_PARAMETER "org.varlink.service.InvalidParameter"
#define ERROR_PERMISSION_DENIED "org.varlink.service.PermissionDenied"
#define ERROR_NO_SUCH_MOUNT "io.atimed.NoSuchMount"
#define ERROR_INVALID_REQUEST "io.atimed.InvalidRequest"
#define ERROR_REQUEST_TOO_LARGE "io.atimed.RequestTooLarge"
#define ERROR_TOO_MANY_CLIENTS "io.atimed.TooManyClients"
/* The caller's user (or all users but root) hold as many unsent reply
 * bytes as [control] allows: read those first. */
#define ERROR_REPLY_BUDGET_EXCEEDED "io.atimed.ReplyBudgetExceeded"
#define ERROR_INTERNAL "io.atimed.InternalError"
/* Reload: the configuration was not put in force; the running one stays. */
#define ERROR_INVALID_CONFIGURATION "io.atimed.InvalidConfiguration"

/* Error parameters */
#define P_METHOD "method"
#define P_PARAMETER "parameter"
#define P_INTERFACE "interface"
#define P_REASON "reason"
#define P_LIMIT "limit"
#define P_SINCE "since"
#define P_RESOLUTION "resolution"
#define P_HISTORY_S "history_s"
#define P_ERRORS "errors" /* InvalidConfiguration: "file:line: ..." each */

/* GetInfo reply (Varlink's fixed names) */
#define F_VENDOR "vendor"
#define F_PRODUCT "product"
#define F_VERSION "version"
#define F_URL "url"
#define F_INTERFACES "interfaces"
#define F_DESCRIPTION "description"

/* Reload: the file now in force; null for the built-in defaults */
#define F_CONFIG "config"

/* GetStatus */
#define F_SCHEMA_VERSION "schema_version"
#define F_HOSTNAME "hostname"
#define F_STARTED_AT "started_at"
#define F_UPTIME_S "uptime_s"
#define F_MOUNTS "mounts"
#define F_MOUNT_ID "mount_id"
#define F_TARGET "target"
#define F_SOURCE "source"
#define F_FSTYPE "fstype"
#define F_ROOT "root"
#define F_DEVICE "device"
#define F_MAJOR "major"
#define F_MINOR "minor"
#define F_ATIME "atime"
#define F_NODIRATIME "nodiratime"
#define F_LAZYTIME "lazytime"
#define F_READ_ONLY "read_only"
#define F_OPTIONS "options"
#define F_SUPER_OPTIONS "super_options"
#define F_STALLED "stalled"
/* false when the mount is over-mounted: its target leads to another mount
 * (mounted over it or over a directory above it); absent: true. */
#define F_REACHABLE "reachable"
#define F_STUCK_THREADS "stuck_threads"
#define F_ADVICE_CHANGES "advice_changes"
#define F_MOUNT_CHANGES "mount_changes"
/* MountChanges: "events" or "mountinfo", why not events, the ids the
 * kernel reported, the full reads after its queue overflowed, the mounts
 * in atimed's namespace */
#define F_MC_SOURCE "source"
#define F_MC_REASON "reason"
#define F_MC_EVENTS "events"
#define F_MC_RESYNCS "resyncs"
#define F_MC_MOUNTS "mounts"

/* GetStatus: a mount's probe (also the reply of Probe) */
#define F_PROBE "probe"
#define F_EFFECTIVE "effective"
#define F_VERIFIED "verified"
#define F_AT "at"
#define F_MATCHES_TABLE "matches_table"
#define F_REASON "reason"
#define F_EXPLANATION "explanation"

/* GetStatus: a mount's activity over the last completed interval */
#define F_ACTIVITY "activity"
#define F_ATIME_INODES_PER_MIN "atime_inodes_per_min"
#define F_CI95 "ci95"
#define F_ATIME_UPDATES_PER_MIN "atime_updates_per_min"
#define F_UPDATES_CI95 "updates_ci95"
#define F_WRITEBACKS_PER_MIN "inode_writebacks_per_min"
#define F_TICK_MS "tick_ms"
#define F_FIGURE_SOURCE "figure_source"   /* activity_source_to_string() */
#define F_KERNEL_COUNTER "kernel_counter" /* fs_counter_kind_to_string() */
#define F_KERNEL_TRANSACTIONS_PER_MIN "kernel_transactions_per_min"
#define F_COUNTER_DISAGREES "counter_disagrees"
/* Atimes set by utimensat()/futimens() (touch -a, cp -p, rsync), per
 * minute: no mount option saves them, so no other figure counts them. */
#define F_ATIME_SETS_PER_MIN "atime_sets_per_min"
/* While a filesystem's first walk runs: the share of its inodes the figure's
 * sample was drawn from (1 after), and the seconds until a figure from the
 * whole walk's sample is due (null then). */
#define F_COVERAGE "coverage"
#define F_READY_IN_S "ready_in_s"

/* GetStatus: a btrfs mount's subvolume, the snapshots that share its
 * tree, and the metadata atime un-shares from them (daemon/btrfs.h) */
#define F_BTRFS "btrfs"
#define F_SUBVOLUME "subvolume"
#define F_SUBVOLUME_ID "id"
#define F_UUID "uuid"
#define F_DELETED "deleted"
#define F_SNAPSHOTS "snapshots"
#define F_SEEN "seen" /* btrfs_sight_to_string() */
#define F_COUNT "count"
#define F_NEWEST_AGE_S "newest_age_s"
#define F_PERIOD_S "period_s"
#define F_METADATA_BYTES_USED "metadata_bytes_used"
#define F_UNSHARED_BYTES_PER_DAY "unshared_bytes_per_day"
#define F_UNSHARED_BYTES "unshared_bytes"
#define F_BYTES_SOURCE "source" /* btrfs_bytes_source_to_string() */
#define F_RATE_SOURCE "rate_source" /* btrfs_figure_source_to_string() */
#define F_UNSHARED_LO "unshared_bytes_per_day_lo"
#define F_UNSHARED_HI "unshared_bytes_per_day_hi"
#define F_UNSHARED_SOURCE "unshared_source" /* a history point's: btrfs_figure_source_to_string() */
#define F_SINCE_SNAPSHOT "since_newest_snapshot"
#define F_BYTES "bytes"
#define F_LO "lo"
#define F_HI "hi"
#define F_INODES "inodes"
#define F_BYTES_PER_INODE "bytes_per_inode"
#define F_TABLE_BYTES_PER_INODE "table_bytes_per_inode"
#define F_TABLE_BYTES_PER_DIR "table_bytes_per_dir"
#define F_MODEL_INTERVALS "model_intervals"
#define F_SAMPLED "sampled"
#define F_MODEL_NOTE "model_note"
#define F_QGROUPS "qgroups"
#define F_EXCLUSIVE "exclusive"
#define F_SNAPSHOTS_EXCLUSIVE "snapshots_exclusive"
#define F_INCONSISTENT "inconsistent"
#define F_UNSEEN "unseen"
#define F_SUBVOLUMES "subvolumes"
#define F_TREE_BYTES "tree_bytes"
#define F_WIDENED "widened"
#define F_PENDING "pending"

/* GetStatus: what a mount waits for until its first figure */
#define F_PROGRESS "progress"
#define F_STAGE "stage"
#define F_WALKED "walked"
#define F_INODES "inodes"
#define F_ETA_S "eta_s"
#define STAGE_WAITING "waiting"   /* its turn to be walked has not come */
#define STAGE_WALKING "walking"   /* the walk that draws the sample */
#define STAGE_BASELINE "baseline" /* the sample's atimes are being recorded */
#define STAGE_MEASURING "measuring" /* the first interval runs */
#define STAGE_STALLED "stalled"
/* Never sampled (no figure ever comes): the mount's root is a file (a
 * file bind mount), or it is over-mounted (see F_REACHABLE). */
#define STAGE_FILE_MOUNT "file_mount"
#define STAGE_OVERMOUNTED "overmounted"
#define F_INTERVAL_S "interval_s"
#define F_SAMPLE_SIZE "sample_size"
#define F_POPULATION "population"
#define F_EXACT "exact"
#define F_SHARED "shared"
/* Kernel atime updates per minute and its 95% interval (issue 11's figure);
 * a client of a daemon without them takes the inode figures. */
#define F_ATIME_UPDATES_PER_MIN "atime_updates_per_min"
#define F_UPDATES_CI95 "updates_ci95"
/* GetStatus: a mount's atime updates since the daemon started */
#define F_ATIME_UPDATES_TOTAL "atime_updates_total"

/* GetStatus: a mount's device */
#define F_NAME "name"
#define F_KIND "kind"
#define F_LABEL "label"
#define F_PARENTS "parents"
#define F_ROTATIONAL "rotational"
#define F_WRITE_IOPS "write_iops"
#define F_WRITE_KIB_PER_S "write_kib_per_s"
#define F_METADATA_BYTES_PER_DAY "btrfs_metadata_bytes_per_day"
#define F_WRITES_TOTAL "writes_total"
#define F_WRITTEN_BYTES_TOTAL "written_bytes_total"

/* Values of F_ATIME */
#define ATIME_STRICT_NAME "strictatime"
#define ATIME_RELATIME_NAME "relatime"
#define ATIME_NOATIME_NAME "noatime"

/* GetStatus with history_s: a mount's recent atime writes per minute */
#define F_HISTORY "history"

/* GetHistory */
#define F_KEY "key"
#define F_RESOLUTION_S "resolution_s"
#define F_RESOLUTIONS_S "resolutions_s"
#define F_SINCE "since"
#define F_UNTIL "until"
#define F_TRUNCATED "truncated"
#define F_POINTS "points"
#define F_T "t"
#define F_SAMPLES "samples"
#define F_POLICY_CHANGED "policy_changed"

/* GetRecommendations */
#define F_RECOMMENDATIONS "recommendations"
#define F_CURRENT "current"
#define F_RECOMMENDED "recommended"
#define F_ACTION "action"
#define F_CHANGE "change"
#define F_REASONS "reasons"
#define F_CONSUMERS "consumers"
#define F_KIND "kind"
#define F_NEED "need"
#define F_PATH "path"
#define F_WHY "why"
#define F_SAVING "saving"
#define F_ATIME_WRITES_PER_MIN "atime_writes_per_min"
#define F_CPU_US_PER_S "cpu_us_per_s"
#define F_CONFIDENCE "confidence"
#define F_BASIS "basis"
#define F_OBSERVED_S "observed_s"
#define F_EVIDENCE "evidence"
#define F_PEAK_PER_MIN "peak_per_min"
#define F_LO_PER_MIN "lo_per_min"
#define F_HI_PER_MIN "hi_per_min"
#define F_WINDOW_S "window_s"

/* GetRecommendations and GetHistory: a mount's last change of atime policy
 * and what it saved (PolicyChange) */
#define F_POLICY_CHANGE "policy_change"
#define F_AT "at"
#define F_PREVIOUS "previous"
#define F_ADVISED "advised"
#define F_PROMISED_PER_MIN "promised_updates_per_min"
#define F_STATE "state"
#define F_COMPARISON "comparison"
#define F_POINTS_BEFORE "points_before"
#define F_POINTS_AFTER "points_after"
#define F_AFTER_S "after_s"
#define F_BEFORE_PER_MIN "before_updates_per_min"
#define F_AFTER_PER_MIN "after_updates_per_min"
#define F_SAVED_PER_MIN "saved_updates_per_min"
#define F_SAVED_CI95 "saved_ci95"

/* Buckets a verdict wants on each side of a change before it gives a
 * figure: fewer after it is too_early, fewer before too_little_before (as
 * docs/io.atimed.varlink says). */
#define VERDICT_MIN_POINTS 6

/* Values of F_STATE */
#define VERDICT_TOO_EARLY_NAME "too_early"
#define VERDICT_TOO_LITTLE_BEFORE_NAME "too_little_before"
#define VERDICT_MEASURED_NAME "measured"

/* Values of F_ACTION */
#define ACTION_KEEP "keep"
#define ACTION_LAZYTIME "lazytime"
