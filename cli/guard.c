/* guard.c: the guard of atimectl's changes to the atime policy (remount
 * PATH POLICY, fstab --set): a policy below what a reader of atime at the
 * mount needs is refused. The readers are atimed's answer to GetConsumers:
 * those its scan finds and each [mount:PATH] needs_atime of its
 * configuration (source FILE:LINE), whatever atimed makes of the mount
 * (tracked, excluded, ignored, not mounted). atimectl does not read
 * atimed.conf itself: the daemon may run with another file (atimed
 * --config), and one parser of it is enough.
 *
 * The guard fails closed: where the answer cannot be had or read (atimed
 * down, a timeout, a reset, an error, a reply it cannot read, a server
 * that is not root's), the change is refused and nothing changes, unless
 * --force, which goes ahead and says what it did not check. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
#include "protocol.h"
#include "varlink.h"

/* 0 noatime, 1 relatime, 2 strictatime. */
static int atime_rank(const char *atime) {
        return streq(atime, "strictatime") ? 2 : streq(atime, "relatime") ? 1 : 0;
}

/* What a reader needs, ranked as atime_rank(); -1 for a need this atimectl
 * does not know (a newer atimed's, or a reply that is wrong): the guard
 * cannot tell what it allows. */
static int need_rank(const char *need) {
        return streq_ptr(need, "strict") ? 2 : streq_ptr(need, "relatime") ? 1 : -1;
}

/* The readers in a that 'atime' breaks, each named on stderr; their
 * number. */
static unsigned breaking_readers(const ReportAdvice *a, const char *target, const char *atime) {
        unsigned bad = 0;

        for (size_t i = 0; i < a->n_consumers; i++) {
                const ReportConsumer *c = &a->consumers[i];

                if (need_rank(c->need) <= atime_rank(atime))
                        continue;
                fprintf(stderr, "atimectl: %s on %s breaks a reader of atime that needs %s: %s [%s]\n", atime,
                        escape_name_tmp(target), streq_ptr(c->need, "strict") ? "strictatime" : "relatime",
                        escape_tmp(c->why), escape_tmp(c->source));
                bad++;
        }
        return bad;
}

/* The reply, read, and its readers in *ret_readers: -EBADMSG unless it is
 * about target and every reader's need is one the guard knows. */
static int readers_parse(json_object *reply, const char *target, Report **ret, const ReportAdvice **ret_readers) {
        _cleanup_(report_freep) Report *rep = NULL;
        _cleanup_free_ char *asked = NULL;
        const ReportMount *m;
        int r;

        r = report_from_consumers(reply, &rep);
        if (r < 0)
                return r;
        if (name_escape(target, &asked) < 0)
                return -ENOMEM;
        m = rep->n_mounts == 1 ? rep->mounts : NULL;
        if (!m || !streq_ptr(m->target, asked))
                return -EBADMSG;
        for (size_t i = 0; i < m->advice.n_consumers; i++)
                if (need_rank(m->advice.consumers[i].need) < 0)
                        return -EBADMSG;
        *ret_readers = &m->advice;
        *ret = TAKE_PTR(rep);
        return 0;
}

/* The guard could not be evaluated (why is said already): refused, or
 * with --force gone ahead, saying what was not checked. */
static int unchecked(const char *target, const char *atime) {
        if (!arg_force)
                return fail("who reads atime on %s cannot be checked, so %s is refused; nothing changed. --force sets "
                            "it without that check.", escape_name_tmp(target), atime);
        fprintf(stderr, "atimectl: going ahead with %s on %s (--force) without checking who reads atime there.\n",
                atime, escape_name_tmp(target));
        return EXIT_OK;
}

/* An error reply to GetConsumers, said in one line. */
static void say_error(const char *error, json_object *params) {
        if (streq(error, ERROR_METHOD_NOT_FOUND))
                fprintf(stderr, "atimectl: atimed does not answer %s: it is older than this atimectl.\n",
                        METHOD_GET_CONSUMERS);
        else
                (void) fail_remote(error, params);
}

int guard_atime_readers(const char *target, const char *atime) {
        _cleanup_json_ json_object *reply = NULL, *params = NULL;
        _cleanup_(report_freep) Report *rep = NULL;
        _cleanup_free_ char *error = NULL;
        const ReportAdvice *readers = NULL;
        json_object *t;
        unsigned bad;
        int r;

        /* No atime policy asked (lazytime alone), or strictatime, which
         * writes atime whenever any reader could want it. */
        if (!atime || atime_rank(atime) == 2)
                return EXIT_OK;
        params = json_object_new_object();
        t = varlink_name_new(target); /* the protocol's form: a mount point is any bytes */
        if (!params || !t || json_object_object_add(params, F_TARGET, t) < 0) {
                json_object_put(t);
                return fail("out of memory");
        }
        r = call_error(METHOD_GET_CONSUMERS, TAKE_PTR(params), &reply, &error);
        if (r != EXIT_OK && error)
                say_error(error, reply);
        if (r == EXIT_OK && (r = readers_parse(reply, target, &rep, &readers)) < 0)
                r = fail_parse(METHOD_GET_CONSUMERS, r);
        if (r != EXIT_OK)
                return unchecked(target, atime);
        bad = breaking_readers(readers, target, atime);
        if (bad && !arg_force)
                return fail("refused; nothing changed. --force sets %s anyway.", atime);
        if (bad)
                fprintf(stderr, "atimectl: going ahead with %s on %s (--force).\n", atime, escape_name_tmp(target));
        return EXIT_OK;
}
