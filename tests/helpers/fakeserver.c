/* fakeserver: a server of the control protocol's framing that is not
 * atimed: it answers each request by its method from a table of canned
 * replies. For tests of what atimectl does with a server it should not
 * believe (another user's, a server that hangs, resets or talks
 * nonsense).
 *
 *   fakeserver PATH TABLE
 *     PATH   the socket to listen on (made; an old one is removed)
 *     TABLE  lines "METHOD REPLY": REPLY is sent as it is, followed by a
 *            NUL; "@close" closes the connection without a word, "@hang"
 *            keeps it open and answers nothing (until the client goes).
 *            A method not in the table gets MethodNotFound.
 * One connection at a time, one request each: atimectl's way. Runs until
 * killed; each method asked is written to stdout, a line each. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char table[1 << 20];

/* The reply for method in the table, or NULL. */
static const char *reply_for(const char *method) {
        size_t ml = strlen(method);

        for (char *l = table; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n'))
                if (strncmp(l, method, ml) == 0 && l[ml] == ' ')
                        return l + ml + 1;
        return NULL;
}

/* The method named in a request: the value of its "method" member. */
static void method_of(const char *req, char *out, size_t len) {
        const char *m = strstr(req, "\"method\"");
        size_t n;

        out[0] = 0;
        if (!m || !(m = strchr(m + 8, '"')))
                return;
        n = strcspn(m + 1, "\"");
        snprintf(out, len, "%.*s", (int) (n < len ? n : len - 1), m + 1);
}

static void serve(int c) {
        char req[65536], method[256], line[4096];
        const char *rep;
        size_t got = 0, rl;
        ssize_t n;

        while (got < sizeof req - 1 && (n = read(c, req + got, sizeof req - 1 - got)) > 0) {
                got += (size_t) n;
                if (memchr(req, 0, got))
                        break;
        }
        req[got] = 0;
        if (got == 0)
                return; /* a client that asked nothing (it did not trust us) */
        method_of(req, method, sizeof method);
        printf("%s\n", method);
        fflush(stdout);
        rep = reply_for(method);
        if (rep && strncmp(rep, "@close", 6) == 0)
                return;
        if (rep && strncmp(rep, "@hang", 5) == 0) {
                while (read(c, req, sizeof req) > 0)
                        ;
                return;
        }
        if (!rep) {
                snprintf(line, sizeof line, "{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":"
                                            "{\"method\":\"%s\"}}", method);
                rep = line;
        }
        rl = strcspn(rep, "\n");
        if (write(c, rep, rl) != (ssize_t) rl || write(c, "", 1) != 1)
                perror("fakeserver: write");
}

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        FILE *f;
        size_t n;
        int fd;

        if (argc != 3 || strlen(argv[1]) >= sizeof sa.sun_path)
                return 2;
        f = fopen(argv[2], "re");
        if (!f)
                return perror(argv[2]), 1;
        n = fread(table, 1, sizeof table - 1, f);
        table[n] = 0;
        fclose(f);
        /* A client that goes away before the reply must not end the server. */
        signal(SIGPIPE, SIG_IGN);
        strcpy(sa.sun_path, argv[1]);
        unlink(argv[1]);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 16) < 0)
                return perror(argv[1]), 1;
        for (;;) {
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

                if (c < 0 && errno == EINTR)
                        continue;
                if (c < 0)
                        return perror("accept"), 1;
                serve(c);
                close(c);
        }
}
