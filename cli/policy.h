/* policy.h: an atime policy as atimectl speaks of it: as a user writes it
 * (POLICY: "noatime", "relatime,lazytime", "nolazytime"), as mount(8) and
 * fstab take it, and as the change that atimed's advice for a mount stands
 * for. The advice is asked of atimed here, for the fstab and remount
 * commands alike. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "report.h"

/* An atime policy as a user writes it: "noatime", "relatime,lazytime",
 * "nolazytime". */
struct policy_spec {
        const char *atime; /* "noatime", "relatime", "strictatime", or NULL: leave alone */
        int lazytime;      /* 1, 0, or -1: leave alone */
        int nodiratime;    /* 1: add nodiratime, or -1: leave alone */
};

#define POLICY_HELP                                                                                  \
        "A POLICY is noatime, relatime or strictatime, optionally with nodiratime, lazytime or nolazytime " \
        "(such as relatime,lazytime or relatime,nodiratime), or those alone."

/* Parses POLICY: 0, -EINVAL for what is not one (POLICY_HELP says what
 * is), -ENOMEM. */
int policy_parse(const char *s, struct policy_spec *ret);
/* The policy as POLICY is written, into buf. */
void policy_format(const struct policy_spec *p, char *buf, size_t len);
/* The options that take mount(8) to the policy from whatever the mount has
 * now: it adds them to the mount's own, and relatime clears no noatime
 * there (the kernel keeps noatime where both are asked), so "atime" comes
 * first. strictatime clears noatime itself. */
void policy_format_remount(const struct policy_spec *p, char *buf, size_t len);
/* The change a recommendation stands for; false if it advises keeping. */
bool policy_of_advice(const ReportAdvice *a, struct policy_spec *ret);

/* The advice for the mount holding path (its mount point in 'target'), or
 * for all (path NULL), as atimed gives it; an exit code (EXIT_OK), the
 * failure said. */
int policy_advice_reply(const char *path, json_object **ret, char *target, size_t len);
/* The same, parsed: one mount each. */
int policy_advice(const char *path, Report **ret, char *target, size_t len);
