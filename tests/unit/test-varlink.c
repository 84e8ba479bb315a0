/* test-varlink: message parsing limits and the builders. */
#include <errno.h>
#include <string.h>

#include "protocol.h"
#include "../tap.h"
#include "varlink.h"

static int parse(const char *s) {
        json_object *o = NULL;
        int r = varlink_parse(s, strlen(s), &o);

        json_object_put(o);
        return r;
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
        return tap_done();
}
