/* hostile.c - libcheck end-to-end suite: hostile requests against the real daemon. After each one
 * the daemon must answer with the right status and JSON error, stay alive, and answer the next good
 * request correctly; shutdown under load must answer every request it accepted. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * times + tl + 1);
    memcpy(s, head, hl);
    for (size_t i = 0; i < times; i++) memcpy(s + hl + i * ul, unit, ul);
    memcpy(s + hl + ul * times, tail, tl + 1);
    return s;
}

static long rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

START_TEST(huge_and_deep_documents)
{
    const char *args[] = {"--max-body", "4000000", NULL};
    daemon_proc d = start_ikd(args);
    long before = rss_kb(d.pid);
    /* 100,000 joints: parsed, then refused by the joint limit */
    char *many = repeat("{\"chain\":{\"joints\":[[0,0,0]", ",[0,1,0]", 100000, "]},\"target\":[1,1,0]}");
    reply r = request(d.port, "POST", "/v1/solve", "application/json", many);
    assert_error(&r, 400, "invalid_request", "chain.joints");
    free(r.body);
    free(many);
    /* nesting 100,000 deep */
    char *deep = repeat("", "[", 100000, "");
    r = request(d.port, "POST", "/v1/solve", "application/json", deep);
    assert_error(&r, 400, "malformed_request", "");
    free(r.body);
    free(deep);
    deep = repeat("{\"chain\":", "{\"a\":", 100000, "");
    r = request(d.port, "POST", "/v1/solve", "application/json", deep);
    assert_error(&r, 400, "malformed_request", "");
    free(r.body);
    free(deep);
    /* the same in a batch of many items */
    char *batch = repeat("{\"problems\":[1", ",{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]}", 1023, "]}");
    r = request(d.port, "POST", "/v1/solve/batch", "application/json", batch);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    free(batch);
    assert_alive(d.port);
    /* memory comes back (the daemon trims the heap every 2 s): within 16 MB of
     * where it started, within 10 s */
    /* (not under AddressSanitizer, whose allocator keeps freed memory by design:
     * `make asan` sets IKD_TEST_SANITIZED; `make test` always checks it) */
    if (!getenv("IKD_TEST_SANITIZED")) {
        long after = rss_kb(d.pid);
        for (int i = 0; i < 40 && after >= before + 16384; i++) {
            struct timespec wait = {0, 250000000L};
            nanosleep(&wait, NULL);
            after = rss_kb(d.pid);
        }
        ck_assert_msg(after < before + 16384, "RSS %ld kB -> %ld kB", before, after);
    }
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

START_TEST(bad_text_and_numbers)
{
    daemon_proc d = start_ikd(NULL);
    static const struct {
        const char *body;
        int status;
        const char *code, *field;
    } cases[] = {
        {"{\"chain\":{\"joints\":[{\"name\":\"\xff\xfe\",\"position\":[0,0,0]},[0,1,0],[0,2,0]]},\"target\":[1,1,0]}", 400,
         "malformed_request", ""},                                                      /* invalid UTF-8 */
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]", 400, "malformed_request", ""}, /* truncated */
        {"{\"chain\":{\"joints\":[[-0,-0,-0],[0,1,0],[0,2,0]]},\"target\":[1e-320,1,0]}", 200, NULL, NULL}, /* -0, denormal */
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1e-12,0],[0,2e-12,0]]},\"target\":[1,1,0]}", 200, NULL, NULL}, /* tiny bones */
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1e12,0],[0,2e12,0]]},\"target\":[1e12,1e12,0]}", 200, NULL, NULL},
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1e15,0,0]}", 200, NULL, NULL},
        {"{\"chain\":{\"joints\":[[1,0,0],[1,1e-12,0],[1,2e-12,0]]},\"target\":[1,1,0]}", 400, "invalid_request",
         "chain.joints[1].position"},                                                   /* bone lost in rounding */
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1e200,0],[0,2e200,0]]},\"target\":[1,1,0]}", 400, "invalid_request",
         "chain.joints[1].position"},                                                   /* a bone too long to square */
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1e150,0],[0,2e150,0]]},\"target\":[1,1,0]}", 400, "invalid_request",
         "chain.joints"},                                                               /* longer than 1e150 */
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1e300,0,0]}", 400, "invalid_request",
         "target.position"},
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0],\"options\":{\"max_iterations\":-5}}", 400,
         "invalid_request", "options.max_iterations"},
        {"{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0],\"options\":{\"max_iterations\":99999999999999999999}}",
         400, "invalid_request", "options.max_iterations"}, /* beyond 64 bits: a number, but not an allowed one */
        {"\xef\xbb\xbf{}", 400, "malformed_request", ""},                                 /* byte order mark */
        {"null", 400, "malformed_request", ""}, /* jansson takes only an object or array at the top */
        {"\"just a string\"", 400, "malformed_request", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reply r = request(d.port, "POST", "/v1/solve", "application/json", cases[i].body);
        if (cases[i].status == 200) {
            ck_assert_msg(r.status == 200, "case %zu: %d %s", i, r.status, r.body);
            json_error_t e;
            json_t *doc = json_loads(r.body, 0, &e); /* finite numbers only, or it would not parse */
            ck_assert_ptr_nonnull(doc);
            json_t *joints = json_object_get(doc, "joints");
            for (size_t k = 0; k < json_array_size(joints); k++) {
                json_t *q = json_object_get(json_array_get(joints, k), "rotation");
                double l = 0;
                for (int c = 0; c < 4; c++) l += pow(json_number_value(json_array_get(q, c)), 2);
                ck_assert_msg(fabs(sqrt(l) - 1) < 1e-12, "case %zu: rotation not unit", i);
            }
            json_decref(doc);
        } else {
            assert_error(&r, cases[i].status, cases[i].code, cases[i].field);
        }
        free(r.body);
        assert_alive(d.port);
    }
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

/* Send `text` and wait up to 8 s for the server's answer: its status, 0 when
 * it closed the connection without one, -1 when neither happened. */
static int status_or_close(int port, const char *text, size_t len)
{
    int fd = connect_to(port);
    send_all(fd, text, len);
    shutdown(fd, SHUT_WR);
    char buf[64] = {0};
    size_t got = 0;
    int result = -1;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 8000) != 1) break;
        ssize_t k = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (k <= 0) {
            result = got >= 12 ? atoi(buf + 9) : 0;
            break;
        }
        got += (size_t)k;
        if (got >= 12) {
            result = atoi(buf + 9);
            break;
        }
    }
    close(fd);
    return result;
}

/* --conn-buffer bounds the request line and headers: within it, served;
 * beyond it, libmicrohttpd's 431; either way the daemon carries on. */
START_TEST(headers_over_conn_buffer)
{
    const char *args[] = {"--conn-buffer", "4096", NULL};
    daemon_proc d = start_ikd(args);
    char *small = repeat("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ", "y", 1500, "\r\n\r\n");
    harness_phase = "headers within --conn-buffer";
    ck_assert_int_eq(status_or_close(d.port, small, strlen(small)), 200);
    free(small);
    char *big = repeat("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ", "y", 6000, "\r\n\r\n");
    harness_phase = "headers over --conn-buffer";
    ck_assert_int_eq(status_or_close(d.port, big, strlen(big)), 431);
    free(big);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

START_TEST(bad_http)
{
    const char *args[] = {"--conn-timeout", "2", NULL};
    daemon_proc d = start_ikd(args);
    /* a very long URL and a very long header: refused by libmicrohttpd (an error
     * status, or the connection dropped), never hanging, daemon unharmed */
    char *url = repeat("GET /v1/solve?", "x", 100000, " HTTP/1.1\r\nHost: x\r\n\r\n");
    harness_phase = "long URL";
    int st = status_or_close(d.port, url, strlen(url));
    ck_assert_msg(st == 0 || st >= 400, "long URL: %d", st);
    free(url);
    assert_alive(d.port);
    char *hdr = repeat("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: ", "y", 100000, "\r\n\r\n");
    harness_phase = "long header";
    st = status_or_close(d.port, hdr, strlen(hdr));
    ck_assert_msg(st == 0 || st >= 400, "long header: %d", st);
    free(hdr);
    assert_alive(d.port);
    reply r;
    /* garbage instead of HTTP */
    harness_phase = "after garbage";
    int fd = connect_to(d.port);
    send_all(fd, "\x16\x03\x01\x02\x00garbage\r\n\r\n", 16);
    struct pollfd p = {fd, POLLIN, 0};
    poll(&p, 1, 3000);
    close(fd);
    assert_alive(d.port);
    /* pipelined: two requests in one write, answered in order (read to the end:
     * both replies may arrive in one segment) */
    harness_phase = "pipelined";
    fd = connect_to(d.port);
    char two[2048];
    int n = snprintf(two, sizeof two,
                     "POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "X-Request-Id: first\r\n\r\n%s"
                     "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: second\r\nConnection: close\r\n\r\n",
                     strlen(SOLVE), SOLVE);
    send_all(fd, two, (size_t)n);
    char all[16384];
    size_t got = 0;
    for (;;) {
        struct pollfd pp = {fd, POLLIN, 0};
        ck_assert_msg(poll(&pp, 1, 10000) == 1, "pipelined: no answer");
        ssize_t k = recv(fd, all + got, sizeof all - 1 - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
    }
    all[got] = 0;
    close(fd);
    char *first = strstr(all, "X-Request-Id: first"), *second = strstr(all, "X-Request-Id: second");
    ck_assert_msg(first && second && first < second, "pipelined replies: %s", all);
    ck_assert_int_eq(strncmp(all, "HTTP/1.1 200", 12), 0);
    ck_assert_ptr_nonnull(strstr(first, "\"reached\":true"));
    ck_assert_ptr_nonnull(strstr(second, "{\"status\":\"ok\"}"));
    ck_assert_int_eq(stop_ikd(&d), 0);
    /* many connections from one address, all served; on a daemon with the
     * default --conn-timeout. The 2 s above bounds the phases that wait for
     * libmicrohttpd to give up; here it was the one thing that depends on
     * timing: once, in a CI run under the sanitizers (2026-11-23), one of the
     * 200 connections ended without a reply, which a stall of 2 s on the
     * shared machine would explain (not reproduced in 52 runs since) */
    d = start_ikd(NULL);
    harness_phase = "200 connections";
    enum { K = 200 };
    int fds[K];
    for (int k = 0; k < K; k++) fds[k] = connect_to(d.port);
    char req[512];
    n = solve_text(req, sizeof req, 1);
    for (int k = 0; k < K; k++) send_all(fds[k], req, (size_t)n);
    for (int k = 0; k < K; k++) {
        r = read_reply(fds[k]);
        ck_assert_int_eq(r.status, 200);
        free(r.body);
        close(fds[k]);
    }
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

typedef struct client {
    int port;
    atomic_int *stop;
    int ok, refused, broken;
} client;

/* Keep-alive solves until the connection is closed or refused. */
static void *client_main(void *arg)
{
    client *c = arg;
    char req[512];
    int n = solve_text(req, sizeof req, 0);
    while (!atomic_load(c->stop)) {
        int fd = connect_to(c->port);
        if (fd < 0) {
            c->refused++;
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (;;) {
            if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) break;
            char buf[8192];
            size_t got = 0;
            int complete = 0;
            for (;;) { /* read one reply; note a partial one */
                struct pollfd p = {fd, POLLIN, 0};
                if (poll(&p, 1, 5000) != 1) break;
                ssize_t k = recv(fd, buf + got, sizeof buf - 1 - got, 0);
                if (k <= 0) break;
                got += (size_t)k;
                buf[got] = 0;
                char *end = strstr(buf, "\r\n\r\n"), *cl = strcasestr(buf, "Content-Length:");
                if (end && cl && got >= (size_t)(end + 4 - buf) + strtoul(cl + 15, NULL, 10)) {
                    complete = 1;
                    break;
                }
            }
            if (!complete) {
                if (got) c->broken++; /* some bytes of a reply, not all: never allowed */
                break;
            }
            if (strncmp(buf, "HTTP/1.1 200", 12) != 0 || !strstr(buf, "\"reached\":true")) c->broken++;
            else c->ok++;
            if (strcasestr(buf, "Connection: close")) break;
        }
        close(fd);
    }
    return NULL;
}

START_TEST(sigterm_under_load)
{
    const char *args[] = {"--workers", "2", "--shutdown-grace", "20", NULL};
    daemon_proc d = start_ikd(args);
    enum { N = 8 };
    atomic_int stop = 0;
    client cs[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        cs[i] = (client){d.port, &stop, 0, 0, 0};
        pthread_create(&th[i], NULL, client_main, &cs[i]);
    }
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    kill(d.pid, SIGTERM);
    int st = wait_ikd(&d);
    atomic_store(&stop, 1);
    int ok = 0, broken = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok += cs[i].ok;
        broken += cs[i].broken;
    }
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert_int_gt(ok, 100);
    ck_assert_msg(broken == 0, "%d replies cut short or wrong", broken);
}
END_TEST


/* ---- pressure: signals, shutdown, descriptors --------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* SIGHUP is logged and ignored: the daemon keeps serving, then drains on
 * SIGTERM with status 0. */
START_TEST(sighup_is_ignored)
{
    daemon_proc d = start_ikd(NULL);
    kill(d.pid, SIGHUP);
    pause_ms(300);
    ck_assert_int_eq(waitpid(d.pid, NULL, WNOHANG), 0);
    assert_alive(d.port);
    kill(d.pid, SIGHUP);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

/* Connections the kernel accepted while the daemon could not (stopped with
 * SIGSTOP, then SIGTERM and SIGCONT) are all answered, none reset. */
START_TEST(sigterm_answers_the_backlog)
{
    enum { N = 20 };
    const char *args[] = {"--workers", "1", NULL};
    daemon_proc d = start_ikd(args);
    kill(d.pid, SIGSTOP);
    int fds[N];
    char req[512];
    int n = solve_text(req, sizeof req, 1);
    for (int i = 0; i < N; i++) {
        fds[i] = connect_to(d.port); /* completes in the kernel's backlog */
        ck_assert_int_ge(fds[i], 0);
        send_all(fds[i], req, (size_t)n);
    }
    kill(d.pid, SIGTERM);
    kill(d.pid, SIGCONT);
    harness_phase = "a connection from the backlog at SIGTERM";
    for (int i = 0; i < N; i++) {
        reply r = read_reply(fds[i]);
        ck_assert_msg(r.status == 200, "connection %d: status %d", i, r.status);
        free(r.body);
        close(fds[i]);
    }
    int st = wait_ikd(&d);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

typedef struct batch_client {
    int port;
    const char *body;
    int status;
} batch_client;

static void *batch_client_main(void *arg)
{
    batch_client *c = arg;
    reply r = request(c->port, "POST", "/v1/solve/batch", "application/json", c->body);
    c->status = r.status;
    free(r.body);
    return NULL;
}

/* --shutdown-grace is a limit: with long batches running and queued at
 * SIGTERM, the daemon exits about a grace (plus a second for the last
 * answers) later, and every client gets an answer: 200 for the batch that
 * was running (its remaining items stop with status "deadline"), 503 for the
 * queued ones. */
START_TEST(shutdown_grace_is_a_limit)
{
    enum { CLIENTS = 4, ITEMS = 1000 };
    const char *args[] = {"--workers", "1", "--shutdown-grace", "1", "--deadline-ms", "0", "--max-batch", "1000",
                          "--max-iterations", "100000", NULL};
    daemon_proc d = start_ikd(args);
    char *body = straight_chain_batch(ITEMS, 60, "jacobian", "\"target\":[30,30,30],\"options\":{\"method\":\"transpose\",\"tolerance\":0,\"max_iterations\":100000}");
    pthread_t th[CLIENTS];
    batch_client bc[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        bc[i] = (batch_client){d.port, body, 0};
        pthread_create(&th[i], NULL, batch_client_main, &bc[i]);
    }
    pause_ms(300);
    double t0 = now_s();
    kill(d.pid, SIGTERM);
    int st = wait_ikd(&d);
    double took = now_s() - t0;
    for (int i = 0; i < CLIENTS; i++) pthread_join(th[i], NULL);
    free(body);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_msg(took < 4.0, "exit took %.1f s with --shutdown-grace 1", took);
    int ok = 0, refused = 0;
    for (int i = 0; i < CLIENTS; i++) {
        ck_assert_msg(bc[i].status == 200 || bc[i].status == 503, "client %d: status %d", i, bc[i].status);
        ok += bc[i].status == 200;
        refused += bc[i].status == 503;
    }
    ck_assert_int_ge(ok, 1);
    ck_assert_int_ge(refused, 1);
}
END_TEST

/* CPU seconds the process has used (user + system). */
static double cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, stime = 0;
    /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stime) != 2) return -1;
    return (double)(ut + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Under a descriptor limit of 64 the connection limit comes from it (64
 * less the daemon's own 20 with one I/O thread: 44): more idle connections
 * than that are closed at once instead of exhausting descriptors, no thread
 * spins on a failing accept, and as soon as connections close the daemon
 * serves new ones. */
START_TEST(descriptor_limit)
{
    const char *args[] = {"--workers", "1", "--io-threads", "1", NULL};
    setenv("IKD_TEST_WRAPPER", "prlimit --nofile=64:64", 1);
    daemon_proc d = start_ikd(args);
    unsetenv("IKD_TEST_WRAPPER");
    enum { IDLE = 80 };
    int fds[IDLE];
    for (int i = 0; i < IDLE; i++) fds[i] = connect_to(d.port);
    pause_ms(300);
    double c0 = cpu_s(d.pid);
    pause_ms(1000);
    double used = cpu_s(d.pid) - c0;
    ck_assert_msg(used >= 0 && used < 0.3, "the daemon used %.2f CPU seconds while idle connections waited", used);
    /* the 44 it kept are served; the others were closed */
    int open_ones = 0;
    char req[512];
    int n = solve_text(req, sizeof req, 0);
    for (int i = 0; i < IDLE; i++) {
        struct pollfd p = {fds[i], POLLIN, 0};
        char c;
        if (poll(&p, 1, 0) == 1 && recv(fds[i], &c, 1, MSG_PEEK) == 0) { /* closed by the daemon */
            close(fds[i]);
            fds[i] = -1;
            continue;
        }
        open_ones++;
    }
    ck_assert_msg(open_ones <= 44, "%d connections kept under a limit of 44", open_ones);
    ck_assert_int_ge(open_ones, 40);
    for (int i = 0; i < IDLE; i++) /* closing them frees descriptors: new clients are served */
        if (fds[i] >= 0) close(fds[i]);
    pause_ms(200);
    assert_alive(d.port);
    int fd = connect_to(d.port);
    send_all(fd, req, (size_t)n);
    reply r = read_reply(fd);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    close(fd);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

/* The first bytes of the answer to `text` sent on a fresh connection
 * (without closing the sending side), within `ms`; "" when none came. */
static void answer_to(int port, const char *text, size_t len, int ms, char *out, size_t size)
{
    int fd = connect_to(port);
    send_all(fd, text, len);
    size_t got = 0;
    out[0] = 0;
    double end = now_s() + ms / 1000.0;
    while (got < size - 1 && now_s() < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) != 1) continue;
        ssize_t k = recv(fd, out + got, size - 1 - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
        out[got] = 0;
        if (strstr(out, "\r\n\r\n") && strstr(out, "}}")) break;
    }
    close(fd);
}

/* RFC 9112 framing that libmicrohttpd leaves to ikd: each gets its JSON
 * error at once (no waiting for --conn-timeout), and the daemon goes on. */
START_TEST(http_framing)
{
    const char *args[] = {"--max-body", "65536", "--conn-timeout", "30", "--linger-bytes", "1048576", NULL};
    daemon_proc d = start_ikd(args);
    static const struct {
        const char *text, *status, *code;
    } cases[] = {
        {"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
         "501", "not_implemented"},
        {"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: identity\r\n\r\n",
         "501", "not_implemented"},
        {"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
         "Content-Length: 3\r\n\r\n{}",
         "400", "malformed_request"},
        {"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
         "Transfer-Encoding: chunked\r\n\r\n{}",
         "400", "malformed_request"},
        {"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", "400", "malformed_request"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[2048];
        double t0 = now_s();
        answer_to(d.port, cases[i].text, strlen(cases[i].text), 5000, out, sizeof out);
        ck_assert_msg(!strncmp(out + 9, cases[i].status, 3), "case %zu: %.200s", i, out);
        ck_assert_msg(strstr(out, cases[i].code) != NULL, "case %zu: %.400s", i, out);
        ck_assert_msg(now_s() - t0 < 2.0, "case %zu answered after %.1f s", i, now_s() - t0);
    }
    /* a chunked body past --max-body: 413 while the client is still sending,
     * and the connection cut after a bounded rest, --linger-bytes (1 MiB
     * here, as the bound before --linger-bytes was; with 4 MiB the kernel's
     * socket buffers took the client past 8 MB once under ASan; it read
     * 13 GB before there was a bound) */
    int fd = connect_to(d.port);
    const char *head = "POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    send_all(fd, head, strlen(head));
    static char chunk[65536 + 16];
    int cn = snprintf(chunk, sizeof chunk, "10000\r\n");
    memset(chunk + cn, ' ', 65536);
    memcpy(chunk + cn + 65536, "\r\n", 2);
    size_t clen = (size_t)cn + 65538, sent = 0;
    char out[1024] = {0};
    size_t got = 0;
    for (int k = 0; k < 20000 && sent < (64u << 20); k++) {
        ssize_t w = send(fd, chunk, clen, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) sent += (size_t)w;
        else if (w < 0 && errno != EAGAIN) break; /* cut */
        struct pollfd p = {fd, POLLIN, 0};
        if (got < sizeof out - 1 && poll(&p, 1, w > 0 ? 0 : 10) == 1) {
            ssize_t r = recv(fd, out + got, sizeof out - 1 - got, 0);
            if (r <= 0) break;
            got += (size_t)r;
        }
    }
    close(fd);
    ck_assert_msg(!strncmp(out, "HTTP/1.1 413", 12), "chunked over --max-body: %.200s", out);
    ck_assert_ptr_nonnull(strstr(out, "payload_too_large"));
    ck_assert_msg(sent < (8u << 20), "the daemon read %zu bytes past a 64 KiB limit", sent);
    /* a head of every size around --conn-buffer (8 KiB) gets a real answer:
     * 200 up to the limit, 431 beyond (an empty reply came just under it) */
    for (int pad = 7400; pad <= 8600; pad += 50) {
        char *text = repeat("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ", "y", (size_t)pad, "\r\n\r\n");
        harness_phase = "a head near --conn-buffer";
        int st = status_or_close(d.port, text, strlen(text));
        ck_assert_msg(st == 200 || st == 431, "head with %d bytes of padding: status %d", pad, st);
        if (strlen(text) <= 8192) ck_assert_msg(st == 200, "head of %zu bytes within --conn-buffer: %d", strlen(text), st);
        free(text);
    }
    /* a client that leaves before its answer is counted as 499, not 200 */
    ck_assert_int_eq(stop_ikd(&d), 0);
    const char *slow[] = {"--debug-delay-ms", "300", "--workers", "1", NULL};
    d = start_ikd(slow);
    fd = connect_to(d.port);
    char req[1024];
    int n = snprintf(req, sizeof req, "POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                      "Content-Length: %zu\r\n\r\n{\"solver\":\"ccd\",%s", strlen(SOLVE) + 15, SOLVE + 1);
    send_all(fd, req, (size_t)n);
    pause_ms(50);
    close(fd);
    pause_ms(600);
    reply r = request(d.port, "GET", "/metrics", NULL, NULL);
    ck_assert_msg(strstr(r.body, "ikd_http_requests_total{route=\"/v1/solve\",code=\"499\"} 1\n") != NULL, "%.2000s", strstr(r.body, "ikd_http_requests_total") ? strstr(r.body, "ikd_http_requests_total") : r.body);
    ck_assert_ptr_null(strstr(r.body, "ikd_http_requests_total{route=\"/v1/solve\",code=\"200\"} 1\n"));
    free(r.body);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

/* stderr to a pipe nobody reads: logging must not hold up serving. The old
 * daemon froze about 300 requests in (/healthz included) and did not act on
 * SIGTERM until the pipe drained. */
START_TEST(unread_stderr_never_blocks)
{
    int out[2], err[2];
    ck_assert_int_eq(pipe(out), 0);
    ck_assert_int_eq(pipe(err), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        execl(ikd_bin(), ikd_bin(), "--listen", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(err[1]); /* err[0] stays open and is never read */
    char line[256] = {0};
    size_t got = 0;
    while (got < sizeof line - 1 && !strchr(line, '\n')) {
        struct pollfd p = {out[0], POLLIN, 0};
        ck_assert_msg(poll(&p, 1, 5000) == 1, "no start line");
        ssize_t k = read(out[0], line + got, sizeof line - 1 - got);
        ck_assert_int_gt(k, 0);
        got += (size_t)k;
    }
    close(out[0]);
    int port = atoi(line + 34);
    char req[512];
    int n = solve_text(req, sizeof req, 0);
    int fd = connect_to(port);
    double worst = 0;
    for (int i = 0; i < 6000; i++) { /* about 1.3 MB of access lines, over pipe (64 KiB) and buffer (512 KiB) */
        double t0 = now_s();
        send_all(fd, req, (size_t)n);
        reply r = read_reply(fd);
        ck_assert_int_eq(r.status, 200);
        free(r.body);
        if (now_s() - t0 > worst) worst = now_s() - t0;
    }
    close(fd);
    ck_assert_msg(worst < 1.0, "a request took %.2f s", worst);
    assert_alive(port);
    reply r = request(port, "GET", "/metrics", NULL, NULL);
    char *dl = strstr(r.body, "\nikd_log_dropped_lines_total ");
    ck_assert_ptr_nonnull(dl);
    ck_assert_msg(atol(dl + 30) > 0, "no line was dropped: %.80s", dl);
    free(r.body);
    double t0 = now_s();
    kill(pid, SIGTERM);
    daemon_proc piped = {pid, 0};
    int st = wait_ikd(&piped);
    ck_assert_msg(now_s() - t0 < 5.0, "exit took %.1f s with stderr unread", now_s() - t0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(err[0]);
}
END_TEST

/* Memory is bounded by --memory-budget: six clients send 1 MB batches of
 * 1024-joint chains (about 15 MB of reply each) and do not read their
 * replies; then 150 clients each declare a body of 1 MiB and send it
 * slowly. The old daemon held every body and reply (108 MB for the six,
 * 157 MB for the 150); now what does not fit gets 503 (memory) at once. */
START_TEST(memory_is_bounded)
{
    const char *args[] = {"--memory-budget", "33554432", "--max-body", "2097152", "--workers", "1", NULL};
    daemon_proc d = start_ikd(args);
    long rss0 = rss_kb(d.pid);
    char *body = straight_chain_batch(80, 1024, "ccd", "\"target\":[300,300,0]");
    size_t n = strlen(body);
    char head[256];
    int hn = snprintf(head, sizeof head,
                      "POST /v1/solve/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\n\r\n", n);
    enum { SIX = 6 };
    int fds[SIX];
    for (int i = 0; i < SIX; i++) {
        fds[i] = connect_to(d.port);
        send_all(fds[i], head, (size_t)hn);
        send_all(fds[i], body, n);
    }
    long peak = 0;
    for (int t = 0; t < 40; t++) { /* 4 s, replies unread */
        long r = rss_kb(d.pid);
        if (r > peak) peak = r;
        pause_ms(100);
    }
    int ok = 0, refused = 0;
    for (int i = 0; i < SIX; i++) {
        char first[16] = {0};
        struct pollfd p = {fds[i], POLLIN, 0};
        if (poll(&p, 1, 10000) == 1) recv(fds[i], first, sizeof first - 1, 0);
        ok += !strncmp(first, "HTTP/1.1 200", 12);
        refused += !strncmp(first, "HTTP/1.1 503", 12);
        close(fds[i]);
    }
    free(body);
    ck_assert_msg(ok >= 1 && ok + refused == SIX, "%d answered 200, %d 503 of %d", ok, refused, SIX);
    ck_assert_msg(peak - rss0 < 64 * 1024, "RSS grew by %ld kB with six unread 15 MB replies (budget 32 MiB)",
                  peak - rss0);
    /* 150 slow bodies of 1 MiB each: most are refused from their heads */
    enum { SLOW = 150 };
    int slow[SLOW];
    const char *sh = "POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048575\r\n\r\n{";
    for (int i = 0; i < SLOW; i++) {
        slow[i] = connect_to(d.port);
        send_all(slow[i], sh, strlen(sh));
    }
    pause_ms(500);
    long r150 = rss_kb(d.pid);
    int refused_slow = 0;
    for (int i = 0; i < SLOW; i++) {
        char first[16] = {0};
        struct pollfd p = {slow[i], POLLIN, 0};
        if (poll(&p, 1, 0) == 1 && recv(slow[i], first, sizeof first - 1, 0) > 0)
            refused_slow += !strncmp(first, "HTTP/1.1 503", 12);
        close(slow[i]);
    }
    ck_assert_msg(refused_slow >= SLOW - 40, "only %d of %d slow 1 MiB bodies refused", refused_slow, SLOW);
    ck_assert_msg(r150 - rss0 < 64 * 1024, "RSS grew by %ld kB with 150 slow bodies", r150 - rss0);
    reply r = request(d.port, "GET", "/metrics", NULL, NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "ikd_rejections_total{reason=\"memory\"}"));
    ck_assert_ptr_null(strstr(r.body, "ikd_rejections_total{reason=\"memory\"} 0\n"));
    free(r.body);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

/* A reply that cannot be built (an allocation fails) is a 5xx JSON error,
 * never a 200 with a cut body (it was: a batch reply ended mid-number), in
 * both encodings; out of memory while parsing is not blamed on the client.
 * The daemon runs with allocations above 3 MiB failing: an LD_PRELOAD shim,
 * or under the sanitizers ASan's own allocation limit. */
START_TEST(failed_allocations_are_5xx)
{
    const char *shim = getenv("IKD_TEST_FAILALLOC");
    char wrapper[512];
    if (getenv("IKD_TEST_SANITIZED"))
        snprintf(wrapper, sizeof wrapper, "env ASAN_OPTIONS=max_allocation_size_mb=3:allocator_may_return_null=1:"
                                          "detect_leaks=0");
    else
        snprintf(wrapper, sizeof wrapper, "env LD_PRELOAD=%s IKD_FAIL_ABOVE=3145728", shim ? shim : "build/tests/failalloc.so");
    setenv("IKD_TEST_WRAPPER", wrapper, 1);
    const char *args[] = {"--max-body", "4194304", NULL};
    daemon_proc d = start_ikd(args);
    unsetenv("IKD_TEST_WRAPPER");
    /* poses of 2.8 MB (they fit), a reply of 3.6 MB (it does not) */
    char *body = straight_chain_batch(1000, 32, "ccd", "\"target\":[5,5,0]");
    static const char *accepts[] = {"application/json", "application/msgpack"};
    for (int e = 0; e < 2; e++) {
        char extra[64];
        snprintf(extra, sizeof extra, "Accept: %s\r\n", accepts[e]);
        harness_phase = "a batch whose reply cannot be built";
        reply r = request_h(d.port, "POST", "/v1/solve/batch", "application/json", extra, body);
        ck_assert_msg(r.status == 500, "%s: status %d", accepts[e], r.status);
        char ctype[64];
        snprintf(ctype, sizeof ctype, "Content-Type: %s", accepts[e]);
        ck_assert_msg(strcasestr(r.headers, ctype) != NULL, "%s: %s", accepts[e], r.headers);
        if (e == 0) assert_error(&r, 500, "internal_error", "");
        else ck_assert(r.body_len < 256 && memmem(r.body, r.body_len, "internal_error", 14) != NULL);
        free(r.body);
    }
    free(body);
    /* a JSON string of 2.9 MB (the body fits; jansson grows the string to 4 MiB): out of memory while parsing, a
     * 500, not a 400 "malformed at line -1" */
    size_t big = 2900000;
    char *text = malloc(big + 64);
    int k = snprintf(text, big + 64, "{\"name\":\"");
    memset(text + k, 'a', big);
    snprintf(text + k + big, 64, "\"}");
    harness_phase = "a document jansson cannot allocate";
    reply r = request(d.port, "POST", "/v1/solve", "application/json", text);
    free(text);
    assert_error(&r, 500, "internal_error", "");
    ck_assert_ptr_nonnull(strstr(r.body, "out of memory while parsing"));
    free(r.body);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("daemon");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, huge_and_deep_documents);
    tcase_add_test(tc, bad_text_and_numbers);
    tcase_add_test(tc, bad_http);
    tcase_add_test(tc, headers_over_conn_buffer);
    tcase_add_test(tc, sigterm_under_load);
    suite_add_tcase(s, tc);
    TCase *pressure = tcase_create("pressure");
    tcase_set_timeout(pressure, 120);
    tcase_add_test(pressure, sighup_is_ignored);
    tcase_add_test(pressure, sigterm_answers_the_backlog);
    tcase_add_test(pressure, shutdown_grace_is_a_limit);
    tcase_add_test(pressure, descriptor_limit);
    tcase_add_test(pressure, http_framing);
    tcase_add_test(pressure, unread_stderr_never_blocks);
    tcase_add_test(pressure, memory_is_bounded);
    tcase_add_test(pressure, failed_allocations_are_5xx);
    suite_add_tcase(s, pressure);
    return run_suite(s);
}
