/* log.c: stderr logging with <N> priority prefixes (see log.h). */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "log.h"
#include "string-table.h"
#include "time-util.h"

static int max_level = LOG_INFO;
static const char *program = NULL;
static LogSink sink = NULL;

static const char *const log_level_table[] = {
        [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",     [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
};
static const StringAlias log_level_aliases[] = {
        { "error", LOG_ERR },
        { "warn", LOG_WARNING },
};

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

DEFINE_STRING_TABLE_LOOKUP_FROM_STRING_WITH_ALIASES(log_level, int);

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(log_level, int);

void log_set_program(const char *name) {
        program = name;
}

void log_set_sink(LogSink s) {
        sink = s;
}

static int log_emit(int level, int error, const char *field, const char *value, const char *fmt, va_list ap)
        _printf_(5, 0);
static int log_emit(int level, int error, const char *field, const char *value, const char *fmt, va_list ap) {
        int saved = errno;
        char buf[2048], safe[2048];
        bool prefix;

        error = abs(error);
        /* %m in fmt refers to 'error', as in systemd's log_*_errno(). */
        errno = error;
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        /* Messages carry names anyone can choose: a newline there must not
         * start a line of its own ("<0>..." would be filed as an emergency),
         * nor an escape sequence reach a terminal. */
        (void) escape_controls_buf(buf, safe, sizeof safe);

        if (sink && field && value && sink(level, safe, field, value))
                goto done;
        prefix = !isatty(STDERR_FILENO);
        if (prefix)
                fprintf(stderr, "<%d>%s\n", level, safe);
        else if (program)
                fprintf(stderr, "%s: %s\n", program, safe);
        else
                fprintf(stderr, "%s\n", safe);
done:
        errno = saved;
        return -error;
}

int log_object_internal(int level, int error, const char *field, const char *value, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_emit(level, error, field, value, fmt, ap);
        va_end(ap);
        return r;
}

bool log_ratelimit_test(LogRatelimit *rl, int level) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        if (rl->begin == 0 || now >= rl->begin + rl->interval_usec) {
                unsigned dropped = rl->suppressed;

                rl->begin = now;
                rl->n = 0;
                rl->suppressed = 0;
                if (dropped > 0)
                        (void) log_internal(level, 0, "Suppressed %u similar messages.", dropped);
        }
        if (rl->n < rl->burst) {
                rl->n++;
                return true;
        }
        rl->suppressed++;
        return false;
}
