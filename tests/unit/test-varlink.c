/* test-varlink: message parsing limits and the builders. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol.h"
#include "../tap.h"
#include "varlink.h"

static int parse(const char *s) {
        json_object *o = NULL;
        int r = varlink_parse(s, strlen(s), &o);

        json_object_put(o);
        return r;
}

/* What varlink_call() makes of 'reply' (written before the call, so it
 * waits in the socket) with a limit of max_reply bytes. */
static int call_with_reply(const char *reply, size_t max_reply) {
        _cleanup_json_ json_object *params = NULL;
        _cleanup_free_ char *error = NULL;
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
            write(sv[1], reply, strlen(reply) + 1) != (ssize_t) strlen(reply) + 1)
                abort();
        r = varlink_call(sv[0], "a.B", NULL, 5 * USEC_PER_SEC, max_reply, &params, &error);
        close(sv[0]);
        close(sv[1]);
        return r;
}

/* A reply of many small values is refused before json-c builds an object
 * of some 80 bytes for each: "[0,0,...]" took 40 times its length. */
static void test_reply_values(void) {
        char reply[8192];
        size_t n = 0;

        n += (size_t) snprintf(reply, sizeof reply, "{\"parameters\":{\"a\":[0");
        for (int i = 0; i < 300; i++)
                n += (size_t) snprintf(reply + n, sizeof reply - n, ",0");
        snprintf(reply + n, sizeof reply - n, "]}}");
        is_int(call_with_reply(reply, 4096), -E2BIG, "301 values in %zu bytes, past 4096/%d: refused", strlen(reply),
               VARLINK_REPLY_BYTES_PER_VALUE);
        is_int(call_with_reply(reply, 8192), 0, "within 8192/%d: read", VARLINK_REPLY_BYTES_PER_VALUE);
        is_int(call_with_reply("{\"parameters\":{\"a\":\"[[[[,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\\\"[[[[[[[[[[,,,,,\"}}", 128), 0,
               "brackets and commas in a string are no values");
        is_int(call_with_reply("{\"parameters\":{}}", 4096), 0, "a reply of few values is read");
        is_int(call_with_reply("{\"parameters\":[1,2]}", 4096), -EBADMSG, "a reply whose parameters are a list");
        is_int(call_with_reply("{\"parameters\":\"s\"}", 4096), -EBADMSG, "or a string");
        is_int(call_with_reply("{}", 4096), 0, "a reply without parameters has none");
        is_int(call_with_reply("{\"error\":\"a.B\",\"parameters\":[1]}", 4096), -EBADR,
               "an error's parameters of any type: the error");
}

int main(void) {
        char deep[256] = "", *p = deep;

        is_int(parse("{\"method\":\"a.b\"}"), 0, "an object");
        is_int(parse("  {\"a\":1}\n"), 0, "surrounding whitespace");
        is_int(parse("[1,2]"), -EBADMSG, "an array is not a message");
        is_int(parse("\"x\""), -EBADMSG, "a string is not a message");
        is_int(parse("{\"a\":1} x"), -EBADMSG, "trailing garbage");
        is_int(parse("{\"a\":1}{\"b\":2}"), -EBADMSG, "two objects in one message");
        is_int(parse("{\"a\":"), -EBADMSG, "truncated");
        is_int(parse("{\"a\":1,}"), -EBADMSG, "trailing comma (strict)");
        is_int(parse("{\"a\":\"\xff\xfe\"}"), -EBADMSG, "invalid UTF-8");
        is_int(parse(""), -EBADMSG, "empty");
        is_int(parse("{\"method\":\"a.B\",\"method\":\"a.C\"}"), -ENOTUNIQ, "a repeated key");
        is_int(parse("{\"a\":{\"b\":1,\"c\":[{\"d\":1,\"d\":2}]}}"), -ENOTUNIQ, "a repeated key deep inside");
        is_int(parse("{\"a:b\":\"x:y\",\"c\":\"\\\":\",\"d\":[\":\"]}"), 0,
               "colons and escaped quotes inside strings are not members");
        is_int(parse("{\"a\":\"x\\u0000y\"}"), -EILSEQ, "\\u0000 in a value");
        is_int(parse("{\"a\\u0000b\":1}"), -EILSEQ, "\\u0000 in a key");
        is_int(parse("{\"a\":\"x\\\\u0000y\"}"), 0, "an escaped backslash before u0000 is no NUL");
        {
                json_object *o = NULL;
                is_int(varlink_parse("{}\0{}", 5, &o), -EBADMSG, "embedded NUL");
        }
        for (int i = 0; i < 40; i++)
                *p++ = '[';
        strcpy(p, "1");
        p += 1;
        for (int i = 0; i < 40; i++)
                *p++ = ']';
        *p = 0;
        {
                char msg[300];
                snprintf(msg, sizeof msg, "{\"a\":%s}", deep);
                is_int(parse(msg), -EBADMSG, "nesting deeper than %d refused", VARLINK_MAX_DEPTH);
        }

        {
                _cleanup_json_ json_object *e = varlink_error_new_str(ERROR_METHOD_NOT_FOUND, P_METHOD, "x.Y");
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;

                ok(varlink_serialize(e, &buf, &len) == 0 && buf[len - 1] == 0 && strlen(buf) == len - 1,
                   "serialized message ends in exactly one NUL");
                is_str(buf, "{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":{\"method\":\"x.Y\"}}",
                       "error message form");
        }
        {
                _cleanup_json_ json_object *r = varlink_request_new(METHOD_GET_STATUS, NULL);
                is_str(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN),
                       "{\"method\":\"io.atimed.GetStatus\",\"parameters\":{}}", "request form");
        }
        test_reply_values();
        return tap_done();
}
