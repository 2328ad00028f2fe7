/* e2e.c - libcheck end-to-end suite: starts the real ikd on a free loopback port and speaks HTTP to it. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

START_TEST(solve_and_health)
{
    daemon_proc d = start_ikd(NULL);
    reply r = request(d.port, "GET", "/healthz", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"status\":\"ok\"}");
    free(r.body);
    r = request(d.port, "POST", "/v1/solve", "application/json", SOLVE);
    ck_assert_int_eq(r.status, 200);
    json_error_t e;
    json_t *doc = json_loads(r.body, 0, &e);
    ck_assert_ptr_nonnull(doc);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "two_bone");
    ck_assert(json_is_true(json_object_get(doc, "reached")));
    json_t *knee = json_object_get(json_array_get(json_object_get(doc, "joints"), 1), "position");
    ck_assert_double_gt(json_number_value(json_array_get(knee, 2)), 0.1); /* toward the pole (+z) */
    json_t *foot = json_object_get(json_array_get(json_object_get(doc, "joints"), 2), "position");
    ck_assert_double_le(fabs(json_number_value(json_array_get(foot, 0)) - 1), 1e-9);
    json_decref(doc);
    free(r.body);
    /* no Content-Type at all is taken as JSON */
    r = request(d.port, "POST", "/v1/solve", NULL, SOLVE);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

START_TEST(fixtures_over_http)
{
    char path[512];
    snprintf(path, sizeof path, "%s/solve.json", fixtures_dir());
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    ck_assert_msg(doc != NULL, "%s: %s", path, e.text);
    daemon_proc d = start_ikd(NULL);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "cases"), i, c) {
        json_t *raw = json_object_get(c, "raw");
        char *body = raw ? strdup(json_string_value(raw))
                         : json_dumps(json_object_get(c, "body"), JSON_COMPACT | JSON_ENCODE_ANY);
        reply r = request(d.port, "POST", "/v1/solve", "application/json", body);
        int want = (int)json_integer_value(json_object_get(c, "status"));
        ck_assert_msg(r.status == want, "%s: status %d, want %d: %s", json_string_value(json_object_get(c, "name")),
                      r.status, want, r.body);
        if (want != 200)
            assert_error(&r, want, json_string_value(json_object_get(c, "code")),
                         json_string_value(json_object_get(c, "field")));
        free(r.body);
        free(body);
    }
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
    json_decref(doc);
}
END_TEST

START_TEST(http_errors)
{
    const char *args[] = {"--max-body", "4096", NULL};
    daemon_proc d = start_ikd(args);
    reply r = request(d.port, "GET", "/v1/nothing", NULL, NULL);
    assert_error(&r, 404, "not_found", "");
    free(r.body);
    r = request(d.port, "GET", "/v1/solve", NULL, NULL);
    assert_error(&r, 405, "method_not_allowed", "");
    ck_assert_ptr_nonnull(strcasestr(r.headers, "\r\nAllow: POST"));
    free(r.body);
    r = request(d.port, "DELETE", "/healthz", NULL, NULL);
    assert_error(&r, 405, "method_not_allowed", "");
    ck_assert_ptr_nonnull(strcasestr(r.headers, "\r\nAllow: GET, HEAD"));
    free(r.body);
    r = request(d.port, "POST", "/v1/solve", "text/plain; charset=utf-8", SOLVE);
    assert_error(&r, 415, "unsupported_media_type", "");
    ck_assert_ptr_nonnull(strstr(r.body, "\"Content-Type text/plain is not accepted: send Content-Type: application/json"));
    free(r.body);
    r = request(d.port, "POST", "/v1/solve", "", SOLVE); /* present and empty (absent is read as JSON) */
    assert_error(&r, 415, "unsupported_media_type", "");
    ck_assert_ptr_nonnull(strstr(r.body, "the Content-Type is empty"));
    free(r.body);
    r = request(d.port, "POST", "/v1/solve", "application/x-www-form-urlencoded", SOLVE);
    assert_error(&r, 415, "unsupported_media_type", "");
    /* what curl -d alone sends: the message names it and the header to send */
    ck_assert_ptr_nonnull(strstr(r.body, "Content-Type application/x-www-form-urlencoded (curl -d's default)"));
    ck_assert_ptr_nonnull(strstr(r.body, "send Content-Type: application/json"));
    free(r.body);

    /* body over --max-body: declared by Content-Length, and streamed chunked */
    char *big = malloc(8193);
    memset(big, ' ', 8192);
    big[8192] = 0;
    r = request(d.port, "POST", "/v1/solve", "application/json", big);
    assert_error(&r, 413, "payload_too_large", "");
    free(r.body);
    int fd = connect_to(d.port);
    const char *head = "POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    send_all(fd, head, strlen(head));
    for (int k = 0; k < 8; k++) {
        send_all(fd, "400\r\n", 5);
        send_all(fd, big, 1024);
        send_all(fd, "\r\n", 2);
    }
    send_all(fd, "0\r\n\r\n", 5);
    r = read_reply(fd);
    close(fd);
    assert_error(&r, 413, "payload_too_large", "");
    free(r.body);
    /* just under the limit is read (and is then malformed JSON, not too large) */
    big[4000] = 0;
    r = request(d.port, "POST", "/v1/solve", "application/json", big);
    assert_error(&r, 400, "malformed_request", "");
    free(r.body);
    free(big);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

START_TEST(keep_alive_serves_several_requests)
{
    daemon_proc d = start_ikd(NULL);
    int fd = connect_to(d.port);
    char req[512];
    int n = solve_text(req, sizeof req, 0);
    for (int k = 0; k < 5; k++) {
        send_all(fd, req, (size_t)n);
        reply r = read_reply(fd);
        ck_assert_int_eq(r.status, 200);
        free(r.body);
    }
    close(fd);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

START_TEST(full_queue_answers_503)
{
    /* One worker, a queue of one, each solve held 400 ms: of 8 simultaneous
     * requests at most 2 are taken, the others are refused at once. */
    const char *args[] = {"--workers", "1", "--queue", "1", "--debug-delay-ms", "400", NULL};
    daemon_proc d = start_ikd(args);
    enum { K = 8 };
    int fds[K];
    char req[512];
    int n = solve_text(req, sizeof req, 1);
    for (int k = 0; k < K; k++) {
        fds[k] = connect_to(d.port);
        ck_assert_int_ge(fds[k], 0);
        send_all(fds[k], req, (size_t)n);
    }
    int ok = 0, refused = 0;
    for (int k = 0; k < K; k++) {
        reply r = read_reply(fds[k]);
        close(fds[k]);
        if (r.status == 200) {
            ok++;
        } else {
            assert_error(&r, 503, "overloaded", "");
            ck_assert_ptr_nonnull(strcasestr(r.headers, "\r\nRetry-After: "));
            refused++;
        }
        free(r.body);
    }
    ck_assert_int_ge(ok, 1);
    ck_assert_int_le(ok, 2);
    ck_assert_int_eq(ok + refused, K);
    assert_alive(d.port);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

START_TEST(sigterm_finishes_accepted_requests)
{
    const char *args[] = {"--workers", "2", "--debug-delay-ms", "500", NULL};
    daemon_proc d = start_ikd(args);
    char req[512];
    int n = solve_text(req, sizeof req, 1);
    int fds[3];
    for (int k = 0; k < 3; k++) {
        fds[k] = connect_to(d.port);
        send_all(fds[k], req, (size_t)n);
    }
    struct timespec ts = {0, 150 * 1000000L};
    nanosleep(&ts, NULL);
    kill(d.pid, SIGTERM);
    nanosleep(&ts, NULL);
    /* new connections are refused while it drains */
    ck_assert_int_lt(connect_to(d.port), 0);
    for (int k = 0; k < 3; k++) {
        reply r = read_reply(fds[k]);
        close(fds[k]);
        ck_assert_msg(r.status == 200, "in-flight request %d: %d %s", k, r.status, r.body);
        ck_assert_ptr_nonnull(strstr(r.body, "\"reached\":true"));
        free(r.body);
    }
    int st = wait_ikd(&d);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

static int run_cmd(const char *const *argv, char *out, size_t outlen)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t k;
    while (got < outlen - 1 && (k = read(p[0], out + got, outlen - 1 - got)) > 0) got += (size_t)k;
    out[got] = 0;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(command_line)
{
    char out[8192];
    const char *help[] = {ikd_bin(), "--help", NULL};
    ck_assert_int_eq(run_cmd(help, out, sizeof out), 0);
    const char *flags[] = {"--listen", "IKD_LISTEN", "--workers", "--queue", "--max-body", "--max-joints", NULL};
    for (const char **f = flags; *f; f++) ck_assert_msg(strstr(out, *f) != NULL, "--help lacks %s", *f);
    const char *bad[] = {ikd_bin(), "--workers", "many", NULL};
    ck_assert_int_eq(run_cmd(bad, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--workers"));
    const char *port[] = {ikd_bin(), "--listen", "127.0.0.1:99999", NULL};
    ck_assert_int_eq(run_cmd(port, out, sizeof out), 2);
}
END_TEST

START_TEST(environment_sets_options)
{
    setenv("IKD_MAX_BODY", "64", 1);
    daemon_proc d = start_ikd(NULL);
    unsetenv("IKD_MAX_BODY");
    reply r = request(d.port, "POST", "/v1/solve", "application/json", SOLVE);
    assert_error(&r, 413, "payload_too_large", "");
    free(r.body);
    ck_assert_int_eq(stop_ikd(&d), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("e2e");
    TCase *tc = tcase_create("daemon");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, solve_and_health);
    tcase_add_test(tc, fixtures_over_http);
    tcase_add_test(tc, http_errors);
    tcase_add_test(tc, keep_alive_serves_several_requests);
    tcase_add_test(tc, full_queue_answers_503);
    tcase_add_test(tc, sigterm_finishes_accepted_requests);
    tcase_add_test(tc, command_line);
    tcase_add_test(tc, environment_sets_options);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
