/* fstab.c: the /etc/fstab editor behind `atimectl fstab` (see fstab.h). It owns rewriting the options
 * field of each entry a request names and no other byte; the text is read by fstab-parse.c, the diff shown
 * to the operator is fstab-diff.c's and the safe replacement of the file fstab-write.c's. libmount is
 * deliberately not used to write: it loses alignment and trailing comments, resets the mode and does not
 * fsync (docs/architecture.md, "Facts").
 *
 * An edit goes in three steps: fstab_parse_entries() finds the entries and their fields, apply_requests()
 * works out the new options fields, splice_options() puts them into a copy of the text. */
#include "fstab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fstab-parse.h"
#include "macro.h"
#include "strv.h"

static bool isempty(const char *s) {
        return !s || !*s;
}

static bool is_network_fstype(const char *type) {
        static const char *const table[] = {
                "nfs", "nfs4", "cifs", "smb3", "smbfs", "sshfs", "glusterfs", "ceph", "9p", "davfs", "afs",
                "ncpfs", "ncp", "ocfs2", "gfs", "gfs2", "lustre", "beegfs", "gpfs", "coda", "orangefs",
                "pvfs2", "s3fs", "rclone", "cvmfs", "moosefs", "mfs", "lizardfs", "curlftpfs", "afpfs",
        };
        const char *t = startswith(type, "fuse.") ?: startswith(type, "fuseblk.") ?: type;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(t, table[i]))
                        return true;
        return false;
}

/* Why an entry is left alone unless named, as the second half of a note, or NULL to edit it. */
static int skip_reason(const char *text, const struct entry *e, char **ret) {
        _cleanup_free_ char *spec = fstab_span_dup(text, e->field[FIELD_SPEC]),
                            *file = fstab_span_dup(text, e->field[FIELD_FILE]),
                            *type = fstab_span_dup(text, e->field[FIELD_TYPE]);
        _cleanup_strv_free_ char **types = NULL;

        if (!spec || !file || !type)
                return -ENOMEM;

        if (streq(type, "swap") || streq(file, "swap"))
                return asprintf(ret, "%s is swap space: left alone", spec) < 0 ? -ENOMEM : 0;
        if (streq(file, "none"))
                return asprintf(ret, "%s has no mount point (none): left alone", spec) < 0 ? -ENOMEM : 0;

        /* The type may be a list for mount(8) to try ("nfs4,nfs"); any network type in it counts. The old
         * FUSE spelling names the helper in the source ("sshfs#user@host:/dir" with type "fuse"). */
        if (strv_split(type, ",", &types) < 0)
                return -ENOMEM;
        STRV_FOREACH(t, types)
                if (is_network_fstype(*t))
                        return asprintf(ret, "%s is a network filesystem (%s): left alone", file, type) < 0 ? -ENOMEM : 0;
        if ((streq(type, "fuse") || streq(type, "fuseblk")) && strchr(spec, '#')) {
                _cleanup_free_ char *helper = strndup(spec, strcspn(spec, "#"));

                if (!helper)
                        return -ENOMEM;
                if (is_network_fstype(helper))
                        return asprintf(ret, "%s is a network filesystem (%s): left alone", file, helper) < 0 ? -ENOMEM : 0;
        }

        *ret = NULL;
        return 0;
}

/* Splits mount options on commas outside double quotes (SELinux contexts contain commas). Empty items are
 * kept so that an untouched field can be recognised as such. -EBADMSG for an unbalanced quote. */
static int split_options(const char *s, size_t n, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        bool quoted = false;
        size_t start = 0;

        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i <= n; i++) {
                if (i < n && s[i] == '"')
                        quoted = !quoted;
                if (i == n || (s[i] == ',' && !quoted)) {
                        _cleanup_free_ char *item = memdup_str(s + start, i - start);

                        if (!item || strv_extend(&l, item) < 0)
                                return -ENOMEM;
                        start = i + 1;
                }
        }
        if (quoted)
                return -EBADMSG;
        *ret = TAKE_PTR(l);
        return 0;
}

static bool is_atime_policy(const char *o) {
        static const char *const table[] = {
                "atime", "noatime", "relatime", "norelatime", "strictatime", "nostrictatime",
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(o, table[i]))
                        return true;
        return false;
}

/* Applies one request to a list of options. Empty items are dropped on the way: they only survive in a
 * field that ends up unchanged (the caller compares with the original). */
static int apply_request(char **opts, const struct fstab_request *req, char ***ret) {
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        bool placed = false, have_lazy = false, have_nodir = false;

        if (!l)
                return -ENOMEM;
        STRV_FOREACH(o, opts) {
                if (isempty(*o))
                        continue;
                if (req->atime && is_atime_policy(*o)) {
                        /* The new policy takes the place of the first old one, so that a hand-ordered
                         * field keeps its order. */
                        if (!placed && strv_extend(&l, req->atime) < 0)
                                return -ENOMEM;
                        placed = true;
                        continue;
                }
                /* noatime implies nodiratime; any other policy still needs it spelled out. */
                if (req->atime && streq(req->atime, "noatime") && streq(*o, "nodiratime"))
                        continue;
                if (req->nodiratime && streq(*o, "nodiratime")) {
                        if (have_nodir)
                                continue;
                        have_nodir = true;
                }
                if (req->lazytime >= 0 && streq(*o, "nolazytime"))
                        continue;
                if (streq(*o, "lazytime")) {
                        if (req->lazytime == 0 || (req->lazytime == 1 && have_lazy))
                                continue;
                        have_lazy = true;
                }
                if (strv_extend(&l, *o) < 0)
                        return -ENOMEM;
        }
        if (req->atime && !placed && strv_extend(&l, req->atime) < 0)
                return -ENOMEM;
        /* After the policy it goes with, where the policy was placed last. */
        if (req->nodiratime && !have_nodir && !(req->atime && streq(req->atime, "noatime")) &&
            strv_extend(&l, "nodiratime") < 0)
                return -ENOMEM;
        if (req->lazytime == 1 && !have_lazy && strv_extend(&l, "lazytime") < 0)
                return -ENOMEM;

        *ret = TAKE_PTR(l);
        return 0;
}

static int strv_drop_empty(char **l, char ***ret) {
        _cleanup_strv_free_ char **c = calloc(1, sizeof(char *));

        if (!c)
                return -ENOMEM;
        STRV_FOREACH(s, l)
                if (!isempty(*s) && strv_extend(&c, *s) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

static bool is_placeholder(const char *target) {
        return streq(target, "none") || streq(target, "swap");
}

static int validate_request(const struct fstab_request *req) {
        if (isempty(req->target))
                return -EINVAL;
        if (req->target[0] != '/' && !is_placeholder(req->target))
                return -EINVAL;
        if (req->atime && !streq(req->atime, "noatime") && !streq(req->atime, "relatime") &&
            !streq(req->atime, "strictatime"))
                return -EINVAL;
        if (req->lazytime < -1 || req->lazytime > 1)
                return -EINVAL;
        return 0;
}

static void changes_free(struct fstab_change *c, size_t n) {
        for (size_t i = 0; c && i < n; i++) {
                free(c[i].target);
                free(c[i].old_options);
                free(c[i].new_options);
        }
        free(c);
}

void fstab_result_done(struct fstab_result *r) {
        if (!r)
                return;
        free(r->text);
        changes_free(r->changes, r->n_changes);
        strv_free(r->not_found);
        strv_free(r->skipped);
        *r = (struct fstab_result) {};
}

/* Whether a request that was not named by the user must leave entry e alone. Returns 1 when it must (the
 * reason noted), 0 when the entry may be edited, -ENOMEM. */
static int entry_left_alone(const char *text, const struct entry *e, const struct fstab_request *req, char ***notes) {
        _cleanup_free_ char *reason = NULL;
        int r;

        if (req->named)
                return 0;
        r = skip_reason(text, e, &reason);
        if (r < 0)
                return r;
        if (!reason)
                return 0;
        r = fstab_note(notes, "line %u: %s", e->line, reason);
        return r < 0 ? r : 1;
}

/* The options field of e as items, empty items dropped, in *ret_was, and a copy to edit in *ret_opts.
 * Returns 0; 1 for an unbalanced quote (noted, nothing returned); -ENOMEM. */
static int entry_options(const char *text, const struct entry *e, char ***notes, char ***ret_was, char ***ret_opts) {
        _cleanup_strv_free_ char **orig = NULL, **was = NULL, **opts = NULL;
        struct span o = e->field[FIELD_OPTS];
        int r;

        r = split_options(text + o.start, o.end - o.start, &orig);
        if (r == -EBADMSG) {
                r = fstab_note(notes, "line %u: unbalanced quote in the options: left alone", e->line);
                return r < 0 ? r : 1;
        }
        if (r < 0)
                return r;
        r = strv_drop_empty(orig, &was);
        if (r < 0)
                return r;
        r = strv_copy(was, &opts);
        if (r < 0)
                return r;
        *ret_was = TAKE_PTR(was);
        *ret_opts = TAKE_PTR(opts);
        return 0;
}

/* The new options field of e from its edited items (*opts, which may grow): 1 and the field in *ret, or 0 when the field is left as
 * it is (the same items as before, or a first item that would read as a comment, noted). -ENOMEM. */
static int entry_new_field(const struct entry *e, char **was, char ***opts, char ***notes, char **ret) {
        int r;

        /* Comparing item lists, not bytes, keeps a field whose only flaw is an empty item (",,") as it is. */
        if (strv_equal(was, *opts))
                return 0;
        if (!(*opts)[0] && strv_extend(opts, "defaults") < 0)
                return -ENOMEM;
        if ((*opts)[0][0] == '#') {
                /* An options field that begins with '#' reads as a comment: the
                 * edit would not survive the next reading of the file. */
                r = fstab_note(notes, "line %u: an option begins with '#': left alone", e->line);
                return r < 0 ? r : 0;
        }
        *ret = strv_join(*opts, ",");
        return *ret ? 1 : -ENOMEM;
}

/* Edits the options of one entry for every request naming it, and marks those requests in found[]. Returns
 * 1 and the new field in *ret when the field changes, 0 when it does not; *ret_applied tells whether some
 * request was applied to it (not only left it alone). */
static int edit_entry(const char *text, const struct entry *e, const struct fstab_request *reqs, char **targets,
                      size_t n_reqs, bool *found, char ***notes, bool *ret_applied, char **ret) {
        _cleanup_strv_free_ char **was = NULL, **opts = NULL;
        bool applied = false;
        int r;

        *ret_applied = false;
        for (size_t i = 0; i < n_reqs; i++) {
                char **n = NULL;

                if (!streq(targets[i], e->target))
                        continue;
                found[i] = true;

                r = entry_left_alone(text, e, &reqs[i], notes);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (!was) {
                        r = entry_options(text, e, notes, &was, &opts);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                continue;
                }
                applied = true;

                r = apply_request(opts, &reqs[i], &n);
                if (r < 0)
                        return r;
                strv_free(opts);
                opts = n;
        }

        *ret_applied = applied;
        if (!applied)
                return 0;
        return entry_new_field(e, was, &opts, notes, ret);
}

/* The request targets as entry targets are kept (trailing slashes dropped), in request order. */
static int request_targets(const struct fstab_request *reqs, size_t n_reqs, char ***ret) {
        _cleanup_strv_free_ char **targets = calloc(n_reqs + 1, sizeof(char *));

        if (!targets)
                return -ENOMEM;
        for (size_t i = 0; i < n_reqs; i++) {
                targets[i] = strdup(reqs[i].target);
                if (!targets[i])
                        return -ENOMEM;
                fstab_normalize_path(targets[i]);
        }
        *ret = TAKE_PTR(targets);
        return 0;
}

/* ------------------------------------------------------------------ apply */

/* Notes that entry j's mount point is listed more than once, when j is the group's second entry: told once
 * per mount point. Placeholders ("none") are not mount points, so several of them are normal. */
static int note_duplicate(const struct entry *entries, size_t j, char ***notes) {
        const struct entry *e = &entries[j];

        if (e->count <= 1 || e->first == j || is_placeholder(e->target))
                return 0;
        for (size_t k = e->first + 1; k < j; k++)
                if (entries[k].first == e->first)
                        return 0;
        return fstab_note(notes, "line %u: %s is listed more than once; changed every line", e->line, e->target);
}

/* Fills c with the change of entry e's options field to 'options' (taken). On failure c holds what it got,
 * for changes_free(). */
static int change_record(const char *text, const struct entry *e, char *options, struct fstab_change *c) {
        c->line = e->line;
        c->target = strdup(e->target);
        c->old_options = fstab_span_dup(text, e->field[FIELD_OPTS]);
        c->new_options = options;
        return c->target && c->old_options ? 0 : -ENOMEM;
}

/* The edits apply_requests() found: changes[k] is the change of entries[entry[k]]. */
struct edits {
        struct fstab_change *changes;
        size_t *entry;
        size_t n;
};

static void edits_done(struct edits *d) {
        changes_free(d->changes, d->n);
        free(d->entry);
        *d = (struct edits) {};
}

/* Apply step: applies the requests to every entry they name, in line order, and marks in found[] the
 * requests that named some entry. What is left alone and why is noted. The changed fields in *ret (changes
 * NULL when nothing changes). Returns 0 or -ENOMEM; on failure nothing is returned. */
static int apply_requests(const char *text, const struct entry *entries, size_t n_entries,
                          const struct fstab_request *reqs, char **targets, size_t n_reqs, bool *found, char ***notes,
                          struct edits *ret) {
        struct edits d = {
                .changes = calloc(n_entries + 1, sizeof(struct fstab_change)),
                .entry = calloc(n_entries + 1, sizeof(size_t)),
        };
        int r = d.changes && d.entry ? 0 : -ENOMEM;

        for (size_t j = 0; r >= 0 && j < n_entries; j++) {
                char *opts = NULL;
                bool applied;
                int changed;

                changed = r = edit_entry(text, &entries[j], reqs, targets, n_reqs, found, notes, &applied, &opts);
                if (r >= 0 && applied)
                        r = note_duplicate(entries, j, notes);
                if (r < 0 || changed == 0) {
                        free(opts);
                        continue;
                }
                d.entry[d.n] = j;
                r = change_record(text, &entries[j], opts, &d.changes[d.n++]);
        }
        if (r < 0) {
                edits_done(&d);
                return r;
        }
        if (d.n == 0) {
                free(d.changes);
                d.changes = NULL;
        }
        *ret = d;
        return 0;
}

/* The targets of the requests that named no entry, as the user spelled them, each once (strv, NULL if
 * none). */
static int requests_not_found(const struct fstab_request *reqs, char **targets, const bool *found, size_t n_reqs,
                              char ***ret) {
        _cleanup_strv_free_ char **not_found = NULL;

        for (size_t i = 0; i < n_reqs; i++) {
                bool dup = false;

                if (found[i])
                        continue;
                for (size_t k = 0; k < i; k++)
                        if (!found[k] && streq(targets[k], targets[i]))
                                dup = true;
                if (!dup && strv_extend(&not_found, reqs[i].target) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(not_found);
        return 0;
}

/* ------------------------------------------------------------------ splice */

/* Splice step: the text with the edited options fields in place of the old ones and every other byte copied
 * as it was; a bare entry gets its new fourth field after a separator like the one before its third. The
 * result is NUL-terminated; its length in *ret_len. */
static int splice_options(const char *text, size_t len, const struct entry *entries, const struct edits *d,
                          char **ret, size_t *ret_len) {
        size_t out_len = len, from = 0;
        char *out, *p;

        for (size_t k = 0; k < d->n; k++) {
                const struct entry *e = &entries[d->entry[k]];

                out_len = out_len - (e->field[FIELD_OPTS].end - e->field[FIELD_OPTS].start) +
                          strlen(d->changes[k].new_options) + e->bare;
        }
        out = p = malloc(out_len + 1);
        if (!out)
                return -ENOMEM;
        for (size_t k = 0; k < d->n; k++) {
                const struct entry *e = &entries[d->entry[k]];
                struct span o = e->field[FIELD_OPTS];
                size_t l = strlen(d->changes[k].new_options);

                memcpy(p, text + from, o.start - from);
                p += o.start - from;
                if (e->bare)
                        *p++ = text[e->field[FIELD_TYPE].start - 1];
                memcpy(p, d->changes[k].new_options, l);
                p += l;
                from = o.end;
        }
        if (len > from)
                memcpy(p, text + from, len - from);
        out[out_len] = 0;
        *ret = out;
        *ret_len = out_len;
        return 0;
}

/* ------------------------------------------------------------------ the edit */

static int validate_call(const char *text, size_t len, const struct fstab_request *reqs, size_t n_reqs,
                         const struct fstab_result *ret) {
        if ((!text && len > 0) || (!reqs && n_reqs > 0) || !ret)
                return -EINVAL;
        for (size_t i = 0; i < n_reqs; i++) {
                int r = validate_request(&reqs[i]);

                if (r < 0)
                        return r;
        }
        return 0;
}

int fstab_edit(const char *text, size_t len, const struct fstab_request *reqs, size_t n_reqs, struct fstab_result *ret) {
        _cleanup_strv_free_ char **targets = NULL, **not_found = NULL, **notes = NULL;
        _cleanup_free_ bool *found = NULL;
        struct entry *entries = NULL;
        size_t n_entries = 0, out_len = 0;
        struct edits d = {};
        char *out = NULL;
        int r;

        r = validate_call(text, len, reqs, n_reqs, ret);
        if (r < 0)
                return r;
        r = request_targets(reqs, n_reqs, &targets);
        if (r < 0)
                return r;
        found = calloc(n_reqs + 1, sizeof(bool));
        if (!found)
                return -ENOMEM;

        r = fstab_parse_entries(text, len, &notes, &entries, &n_entries);
        if (r < 0)
                return r;
        r = apply_requests(text, entries, n_entries, reqs, targets, n_reqs, found, &notes, &d);
        if (r >= 0)
                r = requests_not_found(reqs, targets, found, n_reqs, &not_found);
        if (r >= 0)
                r = splice_options(text, len, entries, &d, &out, &out_len);
        fstab_entries_free(entries, n_entries);
        free(d.entry);
        if (r < 0) {
                changes_free(d.changes, d.n);
                return r;
        }
        *ret = (struct fstab_result) {
                .text = out,
                .len = out_len,
                .changes = d.changes,
                .n_changes = d.n,
                .not_found = TAKE_PTR(not_found),
                .skipped = TAKE_PTR(notes),
        };
        return 0;
}
