/* harness.c - what the end-to-end suites share: start/stop the real ikd, a raw HTTP/1.1 client, error checks. */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

const char *harness_phase = "";

const char *ikd_bin(void)
{
    const char *b = getenv("IKD_BIN");
    return b && *b ? b : "build/ikd";
}

const char *fixtures_dir(void)
{
    const char *d = getenv("IKD_TEST_FIXTURES");
    return d && *d ? d : "tests/fixtures";
}

/* Start ikd with --listen 127.0.0.1:0 plus `args` (NULL-terminated); read its start line. */
daemon_proc start_ikd(const char *const *args)
{
    int out[2];
    ck_assert_int_eq(pipe(out), 0);
    daemon_proc d = {0, 0};
    d.pid = fork();
    ck_assert_int_ge(d.pid, 0);
    if (d.pid == 0) {
        /* IKD_TEST_WRAPPER (e.g. "valgrind --error-exitcode=99 ...") runs the daemon under a tool */
        const char *argv[64];
        int n = 0;
        char *wrap = getenv("IKD_TEST_WRAPPER") ? strdup(getenv("IKD_TEST_WRAPPER")) : NULL;
        for (char *w = wrap ? strtok(wrap, " ") : NULL; w && n < 30; w = strtok(NULL, " ")) argv[n++] = w;
        argv[n++] = ikd_bin();
        argv[n++] = "--listen";
        argv[n++] = "127.0.0.1:0";
        for (; args && *args && n < 63; args++) argv[n++] = *args;
        argv[n] = NULL;
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test killed on its timeout takes its daemon along */
        dup2(out[1], 1);
        if (!getenv("IKD_TEST_VERBOSE")) freopen("/dev/null", "w", stderr);
        close(out[0]);
        close(out[1]);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    int start_ms = getenv("IKD_TEST_WRAPPER") ? 60000 : 5000;
    char line[256] = {0};
    size_t got = 0;
    struct pollfd p = {out[0], POLLIN, 0};
    while (got < sizeof line - 1 && !strchr(line, '\n')) {
        ck_assert_msg(poll(&p, 1, start_ms) == 1, "ikd did not print its start line");
        ssize_t n = read(out[0], line + got, sizeof line - 1 - got);
        ck_assert_msg(n > 0, "ikd exited before listening");
        got += (size_t)n;
    }
    close(out[0]);
    ck_assert_msg(strncmp(line, "ikd listening on http://127.0.0.1:", 34) == 0, "start line: %s", line);
    d.port = atoi(line + 34);
    ck_assert_int_gt(d.port, 0);
    return d;
}

/* Seconds a blocking step may take before the test calls it a hang: a
 * daemon drains in --shutdown-grace (10 s) plus a second; sanitizers and
 * valgrind run several times slower. */
static int hang_s(void) { return getenv("IKD_TEST_WRAPPER") || getenv("IKD_TEST_SANITIZED") ? 240 : 60; }

/* Wait for the daemon to exit; returns waitpid's status. A daemon still
 * running after hang_s() has its threads' stacks printed (when gdb is
 * there) and is killed, and the test fails saying so. */
int wait_ikd(daemon_proc *d)
{
    int st = 0;
    pid_t w = 0;
    for (int ms = 0; ms < hang_s() * 1000 && (w = waitpid(d->pid, &st, WNOHANG)) == 0; ms += 20) usleep(20 * 1000);
    if (w == 0) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "command -v gdb >/dev/null && gdb -p %d -batch -ex 'thread apply all bt' 1>&2",
                 (int)d->pid);
        fprintf(stderr, "%s: ikd (pid %d) still running after %d s; its threads:\n", harness_phase, (int)d->pid,
                hang_s());
        if (system(cmd) != 0) fprintf(stderr, "(no gdb: no stacks)\n");
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &st, 0);
        ck_abort_msg("%s: ikd did not exit within %d s", harness_phase, hang_s());
    }
    ck_assert_int_eq(w, d->pid);
    return st;
}

/* SIGTERM and wait; returns the exit status (or -1 if not a normal exit). */
int stop_ikd(daemon_proc *d)
{
    kill(d->pid, SIGTERM);
    int st = wait_ikd(d);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int connect_to(int port) { return connect_with_rcvbuf(port, 0); }

int connect_with_rcvbuf(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {hang_s(), 0}; /* a read or write that waits this long is a hang: it fails instead */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0) return; /* the server may close early (413): the reply is still readable */
        data += n;
        len -= (size_t)n;
    }
}

/* Read one whole reply (the server closes, or Content-Length is satisfied). */
reply read_reply(int fd)
{
    reply r = {0};
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ck_assert_msg(poll(&p, 1, 10000) == 1, "no reply within 10 s (%s)", harness_phase);
        if (len + 4096 > cap) buf = realloc(buf, cap *= 2);
        ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
        if (n <= 0) break;
        len += (size_t)n;
        buf[len] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            /* skip interim 100 Continue replies */
            if (strncmp(buf, "HTTP/1.1 100", 12) == 0) {
                size_t skip = (size_t)(end + 4 - buf);
                memmove(buf, buf + skip, len - skip);
                len -= skip;
                buf[len] = 0;
                if (!strstr(buf, "\r\n\r\n")) continue;
                end = strstr(buf, "\r\n\r\n");
            }
            char *cl = strcasestr(buf, "\r\nContent-Length:");
            if (cl && cl < end && len >= (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10)) break;
        }
    }
    buf[len] = 0;
    char *end = strstr(buf, "\r\n\r\n");
    ck_assert_msg(end != NULL, "incomplete reply (%s): %s", harness_phase, buf);
    r.status = atoi(buf + 9);
    size_t hl = (size_t)(end - buf);
    if (hl >= sizeof r.headers) hl = sizeof r.headers - 1;
    memcpy(r.headers, buf, hl);
    r.body_len = len - (size_t)(end + 4 - buf);
    r.body = malloc(r.body_len + 1);
    memcpy(r.body, end + 4, r.body_len);
    r.body[r.body_len] = 0;
    free(buf);
    return r;
}

reply request_h(int port, const char *method, const char *path, const char *ctype, const char *extra,
                const char *body)
{
    int fd = connect_to(port);
    ck_assert_int_ge(fd, 0);
    size_t blen = body ? strlen(body) : 0;
    size_t cap = strlen(method) + strlen(path) + (extra ? strlen(extra) : 0) + (ctype ? strlen(ctype) : 0) + 256;
    char *head = malloc(cap);
    int n = snprintf(head, cap, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s%s%s%s", method, path,
                     ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "", extra ? extra : "");
    if (body) n += snprintf(head + n, cap - (size_t)n, "Content-Length: %zu\r\n", blen);
    n += snprintf(head + n, cap - (size_t)n, "\r\n");
    send_all(fd, head, (size_t)n);
    free(head);
    if (body) send_all(fd, body, blen);
    reply r = read_reply(fd);
    close(fd);
    return r;
}

reply request(int port, const char *method, const char *path, const char *ctype, const char *body)
{
    return request_h(port, method, path, ctype, NULL, body);
}

int has_header(const reply *r, const char *name, const char *value)
{
    char pat[256];
    snprintf(pat, sizeof pat, "\r\n%s: ", name);
    const char *at = strcasestr(r->headers, pat);
    if (!at) return 0;
    if (!value) return 1;
    at += strlen(pat);
    size_t n = strcspn(at, "\r");
    return n == strlen(value) && strncmp(at, value, n) == 0;
}

const char *const SOLVE = "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0],\"pole\":[0,1,3]}";

/* The error object of a reply: code and field must match. */
void assert_error(const reply *r, int status, const char *code, const char *field)
{
    ck_assert_msg(r->status == status, "status %d (want %d): %s", r->status, status, r->body);
    ck_assert_ptr_nonnull(strcasestr(r->headers, "Content-Type: application/json"));
    json_error_t e;
    json_t *doc = json_loads(r->body, 0, &e);
    ck_assert_msg(doc != NULL, "error body is not JSON: %s", r->body);
    json_t *err = json_object_get(doc, "error");
    ck_assert_str_eq(json_string_value(json_object_get(err, "code")), code);
    ck_assert_str_eq(json_string_value(json_object_get(err, "field")), field);
    ck_assert(json_string_length(json_object_get(err, "message")) > 0);
    json_decref(doc);
}

void assert_closed_unanswered(int fd, int ms)
{
    char buf[256];
    struct pollfd p = {fd, POLLIN, 0};
    ck_assert_msg(poll(&p, 1, ms) == 1, "%s: not closed within %d ms", harness_phase, ms);
    ck_assert_msg(recv(fd, buf, sizeof buf, 0) <= 0, "%s: answered instead of closed", harness_phase);
}

void assert_alive(int port)
{
    reply r = request(port, "POST", "/v1/solve", "application/json", SOLVE);
    ck_assert_msg(r.status == 200, "status %d: %s", r.status, r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "\"status\":\"reached\""));
    free(r.body);
}


int solve_text(char *buf, size_t size, int close)
{
    return snprintf(buf, size,
                    "POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%s"
                    "Content-Length: %zu\r\n\r\n%s",
                    close ? "Connection: close\r\n" : "", strlen(SOLVE), SOLVE);
}

int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

char *straight_chain_batch(size_t items, int joints, const char *solver, const char *rest)
{
    size_t cap = 64 + items * ((size_t)joints * 16 + strlen(solver) + strlen(rest) + 64), n = 0;
    char *body = malloc(cap);
    ck_assert_ptr_nonnull(body);
    n += (size_t)snprintf(body + n, cap - n, "{\"problems\":[");
    for (size_t k = 0; k < items; k++) {
        n += (size_t)snprintf(body + n, cap - n, "%s{\"solver\":\"%s\",\"chain\":{\"joints\":[", k ? "," : "", solver);
        for (int i = 0; i < joints; i++) n += (size_t)snprintf(body + n, cap - n, "%s[0,%d,0]", i ? "," : "", i);
        n += (size_t)snprintf(body + n, cap - n, "]},%s}", rest);
    }
    snprintf(body + n, cap - n, "]}");
    return body;
}
