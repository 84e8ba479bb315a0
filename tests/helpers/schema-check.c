/* schema-check: checks a method's reply against the Varlink interface that
 * documents it. Every field of the reply must be documented, every field the
 * documentation does not mark optional (?T) must be there, and each value
 * must have the documented type, recursively through named types, arrays
 * and enums.
 *
 *   schema-check IDL-FILE METHOD < reply-parameters.json
 * Prints each mismatch with its JSON path; exits 1 if there is any. */
#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES 64
#define MAX_FIELDS 64

struct field {
        char name[64];
        char type[256];
};

struct type {
        char name[64];
        struct field f[MAX_FIELDS];
        int n;
};

static struct type types[MAX_TYPES];
static int n_types, errors;

static void trim(char *s) {
        char *e = s + strlen(s);

        while (e > s && isspace((unsigned char) e[-1]))
                *--e = 0;
        memmove(s, s + strspn(s, " \t"), strlen(s + strspn(s, " \t")) + 1);
}

/* Reads "name: type" items separated by commas, up to the closing ')' that
 * matches depth 0; 'text' starts after the opening '('. */
static const char *parse_fields(const char *text, struct type *t) {
        const char *p = text;

        while (*p) {
                char item[512];
                int depth = 0, o = 0;

                /* Skip blanks and comment lines. */
                while (*p && (isspace((unsigned char) *p) || *p == '#')) {
                        if (*p == '#')
                                while (*p && *p != '\n')
                                        p++;
                        else
                                p++;
                }
                if (*p == ')')
                        return p + 1;
                while (*p && !(depth == 0 && (*p == ',' || *p == ')')) && o < (int) sizeof item - 1) {
                        if (*p == '(')
                                depth++;
                        if (*p == ')')
                                depth--;
                        if (*p == '#') { /* a comment inside: to the end of the line */
                                while (*p && *p != '\n')
                                        p++;
                                continue;
                        }
                        item[o++] = *p++;
                }
                item[o] = 0;
                if (*p == ',')
                        p++;
                trim(item);
                if (!*item)
                        continue;
                {
                        char *colon = strchr(item, ':');
                        struct field *f;

                        if (!colon || t->n >= MAX_FIELDS) {
                                fprintf(stderr, "schema-check: cannot read field '%s' of %s\n", item, t->name);
                                exit(2);
                        }
                        *colon = 0;
                        f = &t->f[t->n++];
                        snprintf(f->name, sizeof f->name, "%s", item);
                        snprintf(f->type, sizeof f->type, "%s", colon + 1);
                        trim(f->name);
                        trim(f->type);
                }
        }
        return p;
}

static void parse_idl(const char *text, const char *method) {
        const char *p = text;

        while ((p = strstr(p, "\n")) != NULL) {
                const char *line = ++p;
                struct type *t;

                if (strncmp(line, "type ", 5) == 0) {
                        t = &types[n_types++];
                        sscanf(line + 5, "%63[A-Za-z0-9_]", t->name);
                        p = parse_fields(strchr(line, '(') + 1, t);
                } else if (strncmp(line, "method ", 7) == 0) {
                        char name[48];
                        const char *arrow;

                        sscanf(line + 7, "%47[A-Za-z0-9_]", name);
                        arrow = strstr(line, "-> (");
                        if (!arrow)
                                continue;
                        t = &types[n_types++];
                        /* The method asked about is the nameless root type. */
                        if (strcmp(name, method) == 0)
                                t->name[0] = 0;
                        else
                                snprintf(t->name, sizeof t->name, "method:%s", name);
                        p = parse_fields(arrow + 4, t);
                }
        }
}

static const struct type *find_type(const char *name) {
        for (int i = 0; i < n_types; i++)
                if (strcmp(types[i].name, name) == 0)
                        return &types[i];
        return NULL;
}

static void bad(const char *path, const char *what, const char *a) {
        printf("%s: %s %s\n", *path ? path : "(reply)", what, a);
        errors++;
}

static void check(json_object *v, const char *type, const char *path);

static void check_object(json_object *o, const struct type *t, const char *path) {
        char sub[1024];

        if (!json_object_is_type(o, json_type_object)) {
                bad(path, "expected an object of type", t->name[0] ? t->name : "reply");
                return;
        }
        json_object_object_foreach(o, key, val) {
                int i;

                for (i = 0; i < t->n && strcmp(t->f[i].name, key) != 0; i++)
                        ;
                snprintf(sub, sizeof sub, "%s.%s", path, key);
                if (i == t->n)
                        bad(sub, "undocumented field, not in", t->name[0] ? t->name : "the method's reply");
                else
                        check(val, t->f[i].type, sub);
        }
        for (int i = 0; i < t->n; i++)
                if (t->f[i].type[0] != '?' && !json_object_object_get_ex(o, t->f[i].name, NULL)) {
                        snprintf(sub, sizeof sub, "%s.%s", path, t->f[i].name);
                        bad(sub, "documented field missing, of type", t->f[i].type);
                }
}

static void check(json_object *v, const char *type, const char *path) {
        if (type[0] == '?') {
                if (v && !json_object_is_type(v, json_type_null))
                        check(v, type + 1, path);
                return;
        }
        if (!v || json_object_is_type(v, json_type_null)) {
                bad(path, "null, but not optional:", type);
                return;
        }
        if (strncmp(type, "[]", 2) == 0) {
                char sub[1024];

                if (!json_object_is_type(v, json_type_array)) {
                        bad(path, "expected an array:", type);
                        return;
                }
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
                        check(json_object_array_get_idx(v, i), type + 2, sub);
                }
                return;
        }
        if (strcmp(type, "int") == 0) {
                if (!json_object_is_type(v, json_type_int))
                        bad(path, "expected", type);
        } else if (strcmp(type, "float") == 0) {
                if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                        bad(path, "expected", type);
        } else if (strcmp(type, "string") == 0) {
                if (!json_object_is_type(v, json_type_string))
                        bad(path, "expected", type);
        } else if (strcmp(type, "bool") == 0) {
                if (!json_object_is_type(v, json_type_boolean))
                        bad(path, "expected", type);
        } else if (type[0] == '(') {
                char list[256], *save = NULL;
                int found = 0;

                snprintf(list, sizeof list, "%s", type + 1);
                if (!json_object_is_type(v, json_type_string)) {
                        bad(path, "expected one of", type);
                        return;
                }
                for (char *w = strtok_r(list, "(), ", &save); w; w = strtok_r(NULL, "(), ", &save))
                        found |= strcmp(w, json_object_get_string(v)) == 0;
                if (!found)
                        bad(path, "value not in", type);
        } else {
                const struct type *t = find_type(type);

                if (!t)
                        bad(path, "unknown type in the interface:", type);
                else
                        check_object(v, t, path);
        }
}

int main(int argc, char *argv[]) {
        static char idl[1 << 20], input[1 << 24];
        size_t n;
        FILE *f;
        json_object *reply;
        const struct type *t;

        if (argc != 3 || !(f = fopen(argv[1], "r"))) {
                fprintf(stderr, "usage: schema-check IDL-FILE METHOD < reply.json\n");
                return 2;
        }
        idl[0] = '\n';
        n = fread(idl + 1, 1, sizeof idl - 2, f);
        idl[n + 1] = 0;
        fclose(f);
        parse_idl(idl, argv[2]);
        t = find_type("");
        if (!t) {
                fprintf(stderr, "schema-check: no method %s in %s\n", argv[2], argv[1]);
                return 2;
        }
        n = fread(input, 1, sizeof input - 1, stdin);
        input[n] = 0;
        reply = json_tokener_parse(input);
        if (!reply) {
                printf("the reply is not JSON\n");
                return 1;
        }
        check_object(reply, t, "");
        json_object_put(reply);
        return errors ? 1 : 0;
}
