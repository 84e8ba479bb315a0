/* fstab.c: the /etc/fstab editor behind `atimectl fstab` (see fstab.h). It owns parsing fstab text just
 * enough to find the options field of each entry, rewriting that field and no other byte, the diff shown to
 * the operator, and the safe replacement of the file. libmount is deliberately not used to write: it loses
 * alignment and trailing comments, resets the mode and does not fsync (docs/architecture.md, "Facts").
 *
 * An edit goes in three steps: parse_entries() finds the entries and their fields, apply_requests() works
 * out the new options fields, splice_options() puts them into a copy of the text. */
#include "fstab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "strv.h"

/* /etc/fstab is small; anything this big is not an fstab and is not worth reading whole. */
#define FSTAB_SIZE_MAX (16U * 1024U * 1024U)

enum {
        FIELD_SPEC,
        FIELD_FILE,
        FIELD_TYPE,
        FIELD_OPTS,
        FIELD_FREQ,
        FIELD_PASSNO,
        _FIELD_MAX,
};

struct span {
        size_t start, end; /* byte offsets into the text, [start, end) */
};

struct entry {
        unsigned line;
        struct span field[_FIELD_MAX];
        size_t n_fields;
        bool bare;    /* three fields: no options field, which means "defaults" */
        char *target; /* unescaped mount point, trailing slashes dropped */
        size_t first; /* index of the first entry with the same target */
        size_t count; /* how many entries share the target */
};

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool isempty(const char *s) {
        return !s || !*s;
}

static void entries_free(struct entry *e, size_t n) {
        for (size_t i = 0; e && i < n; i++)
                free(e[i].target);
        free(e);
}

static void normalize_path(char *p) {
        size_t l = strlen(p);

        while (l > 1 && p[l - 1] == '/')
                p[--l] = 0;
}

/* fstab(5) writes blanks and a few other bytes in fields as \ooo (getmntent's \040, \011, \012, \134, \043);
 * any three-digit octal escape is decoded, as libmount does. \000 would cut the string short, so it stays
 * literal. */
static char *unescape_field(const char *s, size_t n) {
        char *r = malloc(n + 1), *p = r;

        if (!r)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        unsigned v = (unsigned) (s[i + 1] - '0') << 6 | (unsigned) (s[i + 2] - '0') << 3 |
                                     (unsigned) (s[i + 3] - '0');

                        if (v != 0) {
                                *p++ = (char) v;
                                i += 3;
                                continue;
                        }
                }
                *p++ = s[i];
        }
        *p = 0;
        return r;
}

/* The text need not end in a NUL. */
static char *span_dup(const char *text, struct span s) {
        return memdup_str(text + s.start, s.end - s.start);
}

static bool span_is_number(const char *text, struct span s) {
        if (s.start == s.end)
                return false;
        for (size_t i = s.start; i < s.end; i++)
                if (text[i] < '0' || text[i] > '9')
                        return false;
        return true;
}

/* Splits one line (without its "\n", and without a "\r" before it) into fields. Returns 1 for an entry,
 * 0 for a comment or blank line, -EBADMSG for a line that is neither: it is then only reported. */
static int split_line(const char *text, size_t start, size_t end, struct entry *e) {
        size_t i = start;

        while (i < end && is_blank(text[i]))
                i++;
        if (i == end || text[i] == '#')
                return 0;
        /* Fields are handled as C strings. */
        if (memchr(text + start, 0, end - start))
                return -EBADMSG;

        e->n_fields = 0;
        for (;;) {
                size_t s;

                while (i < end && is_blank(text[i]))
                        i++;
                /* A field starting with '#' begins a trailing comment; a '#' inside a field is data
                 * (a literal one in the mount point is written \043). */
                if (i == end || text[i] == '#')
                        break;
                if (e->n_fields == _FIELD_MAX)
                        return -EBADMSG;
                s = i;
                while (i < end && !is_blank(text[i]))
                        i++;
                e->field[e->n_fields++] = (struct span) { s, i };
        }

        /* "spec file type" alone is an entry: mount(8) and findmnt --verify
         * take the options as "defaults" and dump and pass as 0. An edit
         * adds the options field after the type. */
        if (e->n_fields == FIELD_OPTS) {
                e->field[FIELD_OPTS] = (struct span) { e->field[FIELD_TYPE].end, e->field[FIELD_TYPE].end };
                e->bare = true;
                return 1;
        }
        if (e->n_fields < FIELD_OPTS)
                return -EBADMSG;
        for (size_t f = FIELD_FREQ; f < e->n_fields; f++)
                if (!span_is_number(text, e->field[f]))
                        return -EBADMSG;
        return 1;
}

static int note(char ***notes, const char *fmt, ...) _printf_(2, 3);
static int note(char ***notes, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (strv_contains(*notes, s))
                return 0;
        return strv_extend(notes, s);
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
        _cleanup_free_ char *spec = span_dup(text, e->field[FIELD_SPEC]), *file = span_dup(text, e->field[FIELD_FILE]),
                            *type = span_dup(text, e->field[FIELD_TYPE]);
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
        r = note(notes, "line %u: %s", e->line, reason);
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
                r = note(notes, "line %u: unbalanced quote in the options: left alone", e->line);
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
                r = note(notes, "line %u: an option begins with '#': left alone", e->line);
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

/* ------------------------------------------------------------------ parse */

/* The bounds of the line at pos: [pos, *ret_end) without its "\n" and without a "\r" before it (a CRLF file
 * keeps its "\r": it is part of the line end, not of the last field); the next line starts at *ret_next. */
static void line_bounds(const char *text, size_t len, size_t pos, size_t *ret_end, size_t *ret_next) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t) (nl - text) : len;

        *ret_next = nl ? end + 1 : len;
        if (end > pos && text[end - 1] == '\r')
                end--;
        *ret_end = end;
}

/* Appends e to the entries, with its unescaped target, and joins it to the group of earlier entries with the
 * same target (first: the group's first entry, whose count grows). -ENOMEM leaves the entries as they were. */
static int entries_append(const char *text, struct entry e, struct entry **entries, size_t *n_entries) {
        struct entry *ne = realloc(*entries, sizeof(struct entry) * (*n_entries + 1));

        if (!ne)
                return -ENOMEM;
        *entries = ne;
        e.target = unescape_field(text + e.field[FIELD_FILE].start, e.field[FIELD_FILE].end - e.field[FIELD_FILE].start);
        if (!e.target)
                return -ENOMEM;
        normalize_path(e.target);
        e.first = *n_entries;
        e.count = 1;
        for (size_t j = 0; j < *n_entries; j++)
                if (streq(ne[j].target, e.target)) {
                        e.first = ne[j].first;
                        ne[e.first].count++;
                        break;
                }
        ne[(*n_entries)++] = e;
        return 0;
}

/* Parse step: the entries of the text in line order, comments and blank lines passed over, each with its
 * target and how many entries share it (count, the same in every entry of a group). A malformed line is
 * noted ("line N: malformed entry: left alone") and is no entry. The whole text is read before anything is
 * edited, so that duplicates are known. Returns 0 or -ENOMEM; on failure nothing is returned. */
static int parse_entries(const char *text, size_t len, char ***notes, struct entry **ret, size_t *ret_n) {
        struct entry *entries = NULL;
        size_t n_entries = 0;
        unsigned line = 0;
        int r;

        for (size_t pos = 0, end, next; pos < len; pos = next) {
                struct entry e = { .line = ++line };

                line_bounds(text, len, pos, &end, &next);
                r = split_line(text, pos, end, &e);
                if (r == -EBADMSG)
                        r = note(notes, "line %u: malformed entry: left alone", e.line);
                else if (r > 0)
                        r = entries_append(text, e, &entries, &n_entries);
                if (r < 0) {
                        entries_free(entries, n_entries);
                        return r;
                }
        }
        for (size_t j = 0; j < n_entries; j++)
                entries[j].count = entries[entries[j].first].count;
        *ret = entries;
        *ret_n = n_entries;
        return 0;
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
                normalize_path(targets[i]);
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
        return note(notes, "line %u: %s is listed more than once; changed every line", e->line, e->target);
}

/* Fills c with the change of entry e's options field to 'options' (taken). On failure c holds what it got,
 * for changes_free(). */
static int change_record(const char *text, const struct entry *e, char *options, struct fstab_change *c) {
        c->line = e->line;
        c->target = strdup(e->target);
        c->old_options = span_dup(text, e->field[FIELD_OPTS]);
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

        r = parse_entries(text, len, &notes, &entries, &n_entries);
        if (r < 0)
                return r;
        r = apply_requests(text, entries, n_entries, reqs, targets, n_reqs, found, &notes, &d);
        if (r >= 0)
                r = requests_not_found(reqs, targets, found, n_reqs, &not_found);
        if (r >= 0)
                r = splice_options(text, len, entries, &d, &out, &out_len);
        entries_free(entries, n_entries);
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

struct text_line {
        const char *p;
        size_t n;     /* without the "\n" */
        bool newline; /* false only for a last line without one */
};

static int split_text(const char *t, size_t len, struct text_line **ret, size_t *ret_n) {
        _cleanup_free_ struct text_line *l = NULL;
        size_t n = 0, cap = 0;

        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(t + pos, '\n', len - pos);
                size_t end = nl ? (size_t) (nl - t) : len;

                if (n == cap) {
                        struct text_line *nn;

                        cap = cap ? cap * 2 : 64;
                        nn = realloc(l, cap * sizeof(*l));
                        if (!nn)
                                return -ENOMEM;
                        l = nn;
                }
                l[n++] = (struct text_line) { t + pos, end - pos, !!nl };
                pos = nl ? end + 1 : len;
        }
        *ret = TAKE_PTR(l);
        *ret_n = n;
        return 0;
}

static bool line_eq(const struct text_line *a, const struct text_line *b) {
        return a->n == b->n && a->newline == b->newline && memcmp(a->p, b->p, a->n) == 0;
}

static void print_line(FILE *f, char prefix, const struct text_line *l) {
        fputc(prefix, f);
        fwrite(l->p, 1, l->n, f);
        fputc('\n', f);
        if (!l->newline)
                fputs("\\ No newline at end of file\n", f);
}

/* As diff prints a range: ",count" only when it is not 1, and for an empty range the line before it. */
static void print_range(FILE *f, size_t start, size_t count) {
        if (count == 1)
                fprintf(f, "%zu", start + 1);
        else
                fprintf(f, "%zu,%zu", count == 0 ? start : start + 1, count);
}

#define DIFF_CONTEXT 3

/* Which lines differ, paired by position: past the end of the shorter text every line is a change. The
 * flags in *ret (one more than needed, false), their number, the longer text's line count, in *ret_n. */
static int changed_lines(const struct text_line *a, size_t na, const struct text_line *b, size_t nb, bool **ret,
                         size_t *ret_n) {
        size_t n = MAX(na, nb);
        bool *changed = calloc(n + 1, sizeof(bool));

        if (!changed)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                changed[i] = i >= na || i >= nb || !line_eq(&a[i], &b[i]);
        *ret = changed;
        *ret_n = n;
        return 0;
}

/* The last changed line of the hunk that begins with the change at 'first': changes with at most
 * 2 * context unchanged lines between them share a hunk, as in diff. */
static size_t hunk_last(const bool *changed, size_t n, size_t first) {
        size_t last = first;

        for (size_t k = first + 1; k < n && k <= last + 2 * DIFF_CONTEXT + 1; k++)
                if (changed[k])
                        last = k;
        return last;
}

/* Prints the hunk of lines [start, end): its header, then context lines and each run of changes as the old
 * lines, then the new ones. */
static void print_hunk(FILE *f, const struct text_line *a, size_t na, const struct text_line *b, size_t nb,
                       const bool *changed, size_t start, size_t end) {
        fputs("@@ -", f);
        print_range(f, MIN(start, na), MIN(end, na) - MIN(start, na));
        fputs(" +", f);
        print_range(f, MIN(start, nb), MIN(end, nb) - MIN(start, nb));
        fputs(" @@\n", f);

        for (size_t k = start; k < end;) {
                size_t run;

                if (!changed[k]) {
                        print_line(f, ' ', &a[k]);
                        k++;
                        continue;
                }
                for (run = k; run < end && changed[run]; run++)
                        ;
                for (size_t m = k; m < run && m < na; m++)
                        print_line(f, '-', &a[m]);
                for (size_t m = k; m < run && m < nb; m++)
                        print_line(f, '+', &b[m]);
                k = run;
        }
}

/* The hunks of two split texts, with their header lines, into the memory stream's buffer in *ret. */
static int write_diff(const struct text_line *a, size_t na, const struct text_line *b, size_t nb,
                      const char *old_label, const char *new_label, char **ret) {
        _cleanup_free_ bool *changed = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t n, size = 0;
        FILE *f;
        int r;

        r = changed_lines(a, na, b, nb, &changed, &n);
        if (r < 0)
                return r;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "--- %s\n+++ %s\n", old_label, new_label);
        for (size_t i = 0; i < n;) {
                size_t start, end;

                if (!changed[i]) {
                        i++;
                        continue;
                }
                start = i > DIFF_CONTEXT ? i - DIFF_CONTEXT : 0;
                end = MIN(n, hunk_last(changed, n, i) + 1 + DIFF_CONTEXT);
                print_hunk(f, a, na, b, nb, changed, start, end);
                i = end;
        }
        if (ferror(f)) {
                fclose(f);
                return -ENOMEM;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int fstab_diff(const char *old_text, size_t old_len, const char *new_text, size_t new_len, const char *old_label,
               const char *new_label, char **ret) {
        _cleanup_free_ struct text_line *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        int r;

        if ((!old_text && old_len > 0) || (!new_text && new_len > 0) || !old_label || !new_label || !ret)
                return -EINVAL;

        if (old_len == new_len && (old_len == 0 || memcmp(old_text, new_text, old_len) == 0)) {
                *ret = strdup("");
                return *ret ? 0 : -ENOMEM;
        }

        r = split_text(old_text, old_len, &a, &na);
        if (r < 0)
                return r;
        r = split_text(new_text, new_len, &b, &nb);
        if (r < 0)
                return r;
        return write_diff(a, na, b, nb, old_label, new_label, ret);
}

static int read_fd_full(int fd, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                ssize_t k;

                if (len == cap) {
                        char *nb;

                        if (cap >= FSTAB_SIZE_MAX)
                                return -EFBIG;
                        cap = cap ? cap * 2 : 4096;
                        nb = realloc(buf, cap + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                }
                k = read(fd, buf + len, cap - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* Reads 'path' (not following a final symlink) and tells whether it still holds 'expected'. */
static int check_unchanged(const char *path, const char *expected, size_t expected_len, struct stat *ret_st) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        r = read_fd_full(fd, &buf, &len);
        if (r < 0)
                return r;
        if (len != expected_len || (len > 0 && memcmp(buf, expected, len) != 0))
                return -ESTALE;
        if (ret_st)
                *ret_st = st;
        return 0;
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Gives an open file the original's owner and mode: owner first, since chown may clear setuid/setgid bits. */
static int copy_owner_mode(int fd, const struct stat *st) {
        struct stat now;

        if (fstat(fd, &now) < 0)
                return negative_errno();
        if ((now.st_uid != st->st_uid || now.st_gid != st->st_gid) && fchown(fd, st->st_uid, st->st_gid) < 0)
                return negative_errno();
        if (fchmod(fd, st->st_mode & 07777) < 0)
                return negative_errno();
        return 0;
}

static int fsync_directory_of(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        _cleanup_close_ int fd = -1;
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash)
                strcpy(dir, ".");
        else if (slash == dir)
                dir[1] = 0;
        else
                *slash = 0;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fsync(fd) < 0)
                return negative_errno();
        return 0;
}

/* Gives the new file fd the owner and mode in st and the content text, fsync'd. */
static int fill_copy(int fd, const struct stat *st, const char *text, size_t len) {
        int r;

        r = copy_owner_mode(fd, st);
        if (r >= 0)
                r = write_all(fd, text, len);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        return r;
}

/* Creates the backup file, never over an existing one: backup_path, or by default
 * "<path>.atimectl-<unix seconds>" with ".N" appended if that exists. Its name in *ret_name, the open file
 * in *ret_fd. */
static int create_backup(const char *path, const char *backup_path, char **ret_name, int *ret_fd) {
        _cleanup_free_ char *name = NULL;
        long long now = (long long) time(NULL);
        int fd = -1;

        if (backup_path) {
                name = strdup(backup_path);
                if (!name)
                        return -ENOMEM;
                fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd < 0)
                        return negative_errno();
        }
        /* Two runs within one second must not overwrite the first backup, the one that holds the file as the
         * operator left it. */
        for (unsigned attempt = 0; fd < 0; attempt++) {
                free(name);
                if ((attempt == 0 ? asprintf(&name, "%s.atimectl-%lld", path, now)
                                  : asprintf(&name, "%s.atimectl-%lld.%u", path, now, attempt)) < 0) {
                        name = NULL;
                        return -ENOMEM;
                }
                fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd < 0 && (errno != EEXIST || attempt >= 100))
                        return negative_errno();
        }
        *ret_name = TAKE_PTR(name);
        *ret_fd = fd;
        return 0;
}

/* Writes content to a new backup file (see create_backup()) with the owner and mode in st, fsync'd with its
 * directory; its name in *ret. On failure no backup is left. */
static int write_backup(const char *path, const char *backup_path, const char *content, size_t len,
                        const struct stat *st, char **ret) {
        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = create_backup(path, backup_path, &name, &fd);
        if (r < 0)
                return r;
        r = fill_copy(fd, st, content, len);
        if (r >= 0)
                r = fsync_directory_of(name);
        if (r < 0) {
                (void) unlink(name);
                return r;
        }
        *ret = TAKE_PTR(name);
        return 0;
}

static int temp_name_for(const char *path, char **ret) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        int dirlen = slash ? (int) (slash - path) + 1 : 0;

        if (!*base)
                return -EINVAL;
        return asprintf(ret, "%.*s.%s.atimectl-XXXXXX", dirlen, path, base) < 0 ? -ENOMEM : 0;
}

/* Writes text to a new temporary file beside 'path' with the owner and mode in st, fsync'd; its name in
 * *ret. On failure no temporary file is left. */
static int write_temp_copy(const char *path, const struct stat *st, const char *text, size_t len, char **ret) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = temp_name_for(path, &tmp);
        if (r < 0)
                return r;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = fill_copy(fd, st, text, len);
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        *ret = TAKE_PTR(tmp);
        return 0;
}

/* The old text unchanged in 'path', moves the written copy tmp over it. On failure tmp is removed. */
static int replace_with(const char *path, const char *tmp, const char *expected_old, size_t old_len) {
        int r;

        /* Someone may have edited the file while the backup and the new copy were being written. */
        r = check_unchanged(path, expected_old, old_len, NULL);
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

int fstab_write(const char *path, const char *expected_old, size_t old_len, const char *new_text, size_t new_len,
                const char *backup_path, char **ret_backup) {
        _cleanup_free_ char *backup = NULL, *tmp = NULL;
        struct stat st, lst;
        int r;

        if (isempty(path) || (!expected_old && old_len > 0) || (!new_text && new_len > 0) || !ret_backup)
                return -EINVAL;

        /* Renaming over a symlink would replace the link with a regular file; do not guess which was meant. */
        if (lstat(path, &lst) < 0)
                return negative_errno();
        if (S_ISLNK(lst.st_mode))
                return -ELOOP;

        r = check_unchanged(path, expected_old, old_len, &st);
        if (r < 0)
                return r;

        r = write_backup(path, backup_path, expected_old, old_len, &st, &backup);
        if (r < 0)
                return r;
        r = write_temp_copy(path, &st, new_text, new_len, &tmp);
        if (r >= 0)
                r = replace_with(path, tmp, expected_old, old_len);
        if (r < 0) {
                (void) unlink(backup);
                return r;
        }

        /* The file is replaced by now; a failure here only means the rename may not be durable yet, so the
         * backup is kept. */
        r = fsync_directory_of(path);
        if (r < 0)
                return r;

        *ret_backup = TAKE_PTR(backup);
        return 0;
}
