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
/* Prefix lines with <N>: "auto" (not on a terminal), forced on or off. */
void log_set_prefix(int mode);
void log_set_program(const char *name);

/* Logs at 'level' with errno 'error' available to %m; returns -|error|
 * (or 0 when error is 0) so callers can "return log_error_errno(r, ...)". */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

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
