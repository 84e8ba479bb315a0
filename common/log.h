/* log.h: logging to stderr with sd-daemon <N> priority prefixes, so that
 * journald files each line at its level. Lower layers return errors; the
 * caller that decides logs once, with context. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "macro.h"

void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);
/* Lines on a terminal start with the program's name; elsewhere (the
 * journal's stream, a file) with the <N> priority prefix journald reads. */
void log_set_program(const char *name);

/* Logs at 'level' with errno 'error' available to %m; returns -|error|
 * (or 0 when error is 0) so callers can "return log_error_errno(r, ...)". */
#define log_internal(level, error, ...) log_object_internal((level), (error), NULL, NULL, __VA_ARGS__)

/* Where structured entries go (the daemon's journal): called with the
 * message as the text line shows it (controls escaped) and one field of
 * the object the message is about (name and raw value); returns true if it
 * took the entry, and then no text line is written. */
typedef bool (*LogSink)(int level, const char *message, const char *field, const char *value);
void log_set_sink(LogSink sink);

/* As log_internal, about one object whose name anyone may choose (a mount
 * point, a path): the text shows it escaped, a sink gets it unaltered as
 * the field 'field' (e.g. "ATIMED_MOUNT"), so that journalctl
 * ATIMED_MOUNT=... finds every message about it whatever bytes it holds. */
int log_object_internal(int level, int error, const char *field, const char *value, const char *fmt, ...)
        _printf_(5, 6);

#define log_full_errno(level, error, ...) \
        ({ int _l_ = (level); _l_ <= log_get_max_level() ? log_internal(_l_, (error), __VA_ARGS__) : -abs(error); })
#define log_debug(...)   log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...)    log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, e, __VA_ARGS__)
#define log_oom() log_error_errno(-ENOMEM, "Out of memory.")

#define log_mount_full(level, error, target, ...)                                                      \
        ({ int _l_ = (level); _l_ <= log_get_max_level() ? log_object_internal(_l_, (error), "ATIMED_MOUNT", \
                                                                               (target), __VA_ARGS__)       \
                                                         : -abs(error); })
#define log_mount_debug(target, ...)   log_mount_full(LOG_DEBUG, 0, target, __VA_ARGS__)
#define log_mount_info(target, ...)    log_mount_full(LOG_INFO, 0, target, __VA_ARGS__)
#define log_mount_notice(target, ...)  log_mount_full(LOG_NOTICE, 0, target, __VA_ARGS__)
#define log_mount_warning(target, ...) log_mount_full(LOG_WARNING, 0, target, __VA_ARGS__)
#define log_mount_error(target, ...)   log_mount_full(LOG_ERR, 0, target, __VA_ARGS__)
#define log_mount_warning_errno(target, e, ...) log_mount_full(LOG_WARNING, e, target, __VA_ARGS__)
#define log_mount_error_errno(target, e, ...)   log_mount_full(LOG_ERR, e, target, __VA_ARGS__)

/* At most 'burst' messages per 'interval_usec' (monotonic) for what others
 * can trigger at will (refused connections, refused calls): a hostile peer
 * must not be able to fill the journal. The first message let through after
 * a suppression is preceded by a line saying how many were dropped. */
typedef struct LogRatelimit {
        uint64_t interval_usec;
        unsigned burst;
        uint64_t begin;
        unsigned n;
        unsigned suppressed;
} LogRatelimit;

#define LOG_RATELIMIT_INIT(interval, b) { .interval_usec = (interval), .burst = (b) }

/* Whether a message at 'level' may be logged now (counted if so). */
bool log_ratelimit_test(LogRatelimit *rl, int level);

#define log_ratelimit_full(rl, level, ...) \
        ({ int _rl_l_ = (level); \
           _rl_l_ <= log_get_max_level() && log_ratelimit_test((rl), _rl_l_) ? log_internal(_rl_l_, 0, __VA_ARGS__) : 0; })
