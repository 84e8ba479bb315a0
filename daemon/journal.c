/* journal.c: structured log entries, where the journal takes them (see
 * journal.h). */
#include "journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

bool journal_available(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
               (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino &&
               journal_socket_available();
}

bool journal_socket_available(void) {
        return access(JOURNAL_SOCKET, W_OK) == 0;
}

/* One entry: the message, its priority, and the object's field. A value
 * with a newline or any other byte goes as it is: sd_journal_send() frames
 * such fields with their length. */
static bool journal_sink(int level, const char *message, const char *field, const char *value) {
        return sd_journal_send("MESSAGE=%s", message, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=atimed", "%s=%s",
                               field, value, NULL) >= 0;
}

bool journal_log_setup(void) {
        if (!journal_available())
                return false;
        log_set_sink(journal_sink);
        return true;
}
