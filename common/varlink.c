/* varlink.c: NUL-framed JSON messages (see varlink.h). */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "protocol.h"
#include "time-util.h"
#include "varlink.h"

/* Members of every object in the tree. */
static size_t count_members(json_object *o) {
        size_t n = 0;

        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, key, val) {
                        (void) key;
                        n += 1 + count_members(val);
                }
        } else if (json_object_is_type(o, json_type_array))
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        n += count_members(json_object_array_get_idx(o, i));
        return n;
}

/* What json-c accepts but a request must not hold, found in text json-c
 * has already parsed (so it is well-formed): each object member has one
 * ':' outside strings, so fewer members in the tree than such colons means
 * a key was repeated (json-c keeps the last: two meanings for one
 * request); a "\u0000" escape would cut a string short where we read it
 * as a C string. */
static int check_text(const char *buf, size_t len, json_object *o) {
        size_t colons = 0;
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                if (!in_string) {
                        if (buf[i] == '"')
                                in_string = true;
                        else if (buf[i] == ':')
                                colons++;
                } else if (buf[i] == '"')
                        in_string = false;
                else if (buf[i] == '\\' && i + 1 < len) {
                        if (buf[i + 1] == 'u' && i + 5 < len && memcmp(buf + i + 2, "0000", 4) == 0)
                                return -EILSEQ;
                        i++; /* the escaped character */
                }
        }
        return colons == count_members(o) ? 0 : -ENOTUNIQ;
}

int varlink_parse(const char *buf, size_t len, json_object **ret) {
        struct json_tokener *tok;
        json_object *o;
        enum json_tokener_error jerr;
        size_t consumed;
        int r;

        if (len == 0 || len > INT32_MAX || memchr(buf, 0, len))
                return -EBADMSG;
        tok = json_tokener_new_ex(VARLINK_MAX_DEPTH);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, buf, (int) len);
        jerr = json_tokener_get_error(tok);
        consumed = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);

        if (!o || jerr != json_tokener_success) {
                json_object_put(o);
                return -EBADMSG;
        }
        /* Only whitespace may follow the object. */
        for (size_t i = consumed; i < len; i++)
                if (!strchr(" \t\r\n", buf[i])) {
                        json_object_put(o);
                        return -EBADMSG;
                }
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        r = check_text(buf, consumed, o);
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}

int varlink_serialize(json_object *msg, char **ret, size_t *ret_len) {
        size_t len;
        const char *s = json_object_to_json_string_length(msg, VARLINK_JSON_FLAGS, &len);
        char *b;

        if (!s)
                return -ENOMEM;
        b = malloc(len + 1);
        if (!b)
                return -ENOMEM;
        memcpy(b, s, len);
        b[len] = 0;
        *ret = b;
        *ret_len = len + 1;
        return 0;
}

static json_object *envelope(const char *key, const char *value, json_object *params) {
        json_object *o = json_object_new_object();

        if (!params)
                params = json_object_new_object();
        if (!o || !params)
                goto fail;
        if (key && json_object_object_add(o, key, json_object_new_string(value)) < 0)
                goto fail;
        if (json_object_object_add(o, VL_PARAMETERS, params) < 0)
                goto fail;
        return o;
fail:
        json_object_put(params);
        json_object_put(o);
        return NULL;
}

json_object *varlink_request_new(const char *method, json_object *params) {
        return envelope(VL_METHOD, method, params);
}

json_object *varlink_reply_new(json_object *params) {
        return envelope(NULL, NULL, params);
}

json_object *varlink_error_new(const char *error, json_object *params) {
        return envelope(VL_ERROR, error, params);
}

json_object *varlink_error_new_str(const char *error, const char *key, const char *value) {
        json_object *p = json_object_new_object();

        if (p && key && json_object_object_add(p, key, json_object_new_string(value ? value : "")) < 0) {
                json_object_put(p);
                return NULL;
        }
        return varlink_error_new(error, p);
}

json_object *varlink_name_new(const char *raw) {
        _cleanup_free_ char *e = NULL;

        if (name_escape(raw, &e) < 0)
                return NULL;
        return json_object_new_string(e);
}

int varlink_connect(const char *path, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Waits for 'events' on fd until 'deadline'; -ETIMEDOUT past it. */
static int wait_fd(int fd, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int r, timeout;

                if (deadline == USEC_INFINITY)
                        timeout = -1;
                else if (now >= deadline)
                        return -ETIMEDOUT;
                else
                        timeout = (int) MIN((deadline - now + 999) / 1000, (uint64_t) INT32_MAX);
                r = poll(&p, 1, timeout);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                return 0;
        }
}

/* About how many values the JSON text holds (each but the first follows a
 * ',' or opens with '[' or '{'), counted without parsing it. */
static size_t count_values(const char *buf, size_t len) {
        size_t n = 1;
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                if (in_string) {
                        if (buf[i] == '\\')
                                i++;
                        else if (buf[i] == '"')
                                in_string = false;
                } else if (buf[i] == '"')
                        in_string = true;
                else
                        n += buf[i] == ',' || buf[i] == '[' || buf[i] == '{';
        }
        return n;
}

/* Sends all of 'out' before 'deadline'. A connection the server closed
 * meanwhile is not a failure yet: 1, and its error in *ret_send_error, so
 * that the caller reads what the server may have answered first. */
static int send_request(int fd, const char *out, size_t out_len, uint64_t deadline, int *ret_send_error) {
        size_t off = 0;
        int r;

        *ret_send_error = 0;
        while (off < out_len) {
                ssize_t n = send(fd, out + off, out_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
                        /* The server may have answered before reading (a
                         * refusal, TooManyClients) and closed: read that. */
                        *ret_send_error = -errno;
                        return 1;
                }
                if (n < 0 && errno == EAGAIN) {
                        r = wait_fd(fd, POLLOUT, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n < 0)
                        return -errno;
                off += (size_t) n;
        }
        return 0;
}

/* Grows the reply's buffer *in (of *in_alloc bytes) while under max_reply. */
static int grow_reply(char **in, size_t *in_alloc, size_t max_reply) {
        size_t na = *in_alloc ? *in_alloc * 2 : 65536;
        char *ni;

        if (*in_alloc >= max_reply)
                return -EMSGSIZE;
        na = MIN(na, max_reply);
        ni = realloc(*in, na);
        if (!ni)
                return -ENOMEM;
        *in = ni;
        *in_alloc = na;
        return 0;
}

/* Reads the reply, up to its NUL, before 'deadline', and parses it. A
 * connection closed before it: 'send_error' if sending had failed. */
static int recv_reply(int fd, size_t max_reply, uint64_t deadline, int send_error, json_object **ret) {
        _cleanup_free_ char *in = NULL;
        size_t in_len = 0, in_alloc = 0;
        int r;

        for (;;) {
                ssize_t n;
                char *nul;

                if (in_len == in_alloc) {
                        r = grow_reply(&in, &in_alloc, max_reply);
                        if (r < 0)
                                return r;
                }
                n = recv(fd, in + in_len, in_alloc - in_len, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        r = wait_fd(fd, POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n < 0)
                        return send_error ? send_error : -errno;
                if (n == 0)
                        return send_error ? send_error : -ECONNRESET;
                nul = memchr(in + in_len, 0, (size_t) n);
                in_len += (size_t) n;
                if (nul) {
                        if (count_values(in, (size_t) (nul - in)) > max_reply / VARLINK_REPLY_BYTES_PER_VALUE)
                                return -E2BIG;
                        return varlink_parse(in, (size_t) (nul - in), ret);
                }
        }
}

int varlink_call(int fd, const char *method, json_object *params, uint64_t timeout_usec,
                 size_t max_reply, json_object **ret_params, char **ret_error) {
        _cleanup_json_ json_object *req = NULL, *reply = NULL;
        _cleanup_free_ char *out = NULL;
        size_t out_len;
        uint64_t deadline = timeout_usec == USEC_INFINITY ? USEC_INFINITY : now_usec(CLOCK_MONOTONIC) + timeout_usec;
        json_object *p, *e;
        int r, send_error;

        req = varlink_request_new(method, params);
        if (!req)
                return -ENOMEM;
        r = varlink_serialize(req, &out, &out_len);
        if (r < 0)
                return r;
        r = send_request(fd, out, out_len, deadline, &send_error);
        if (r < 0)
                return r;
        r = recv_reply(fd, max_reply, deadline, send_error, &reply);
        if (r < 0)
                return r;

        p = json_object_object_get(reply, VL_PARAMETERS);
        e = json_object_object_get(reply, VL_ERROR);
        /* A reply's parameters are an object (an error's are shown as
         * they come): the callers walk them as one. */
        if (!e && p && !json_object_is_type(p, json_type_object))
                return -EBADMSG;
        if (ret_params)
                *ret_params = p ? json_object_get(p) : json_object_new_object();
        if (e) {
                if (ret_error)
                        *ret_error = strdup(json_object_get_string(e));
                return -EBADR;
        }
        if (ret_error)
                *ret_error = NULL;
        return 0;
}
