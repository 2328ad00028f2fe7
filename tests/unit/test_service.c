/* test_service.c - libcheck suite: the service layer without a transport: routes, wire codes, replies, a call's life. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/buf.h"
#include "codec/codec.h"
#include "service/api.h"
#include "service/call.h"
#include "service/reply.h"
#include "service/route.h"
#include "service/wire.h"
#include "testutil.h"

START_TEST(reply_round_trips_the_pose)
{
    /* The reply's numbers read back to exactly the solver's doubles. */
    ikd_joint j[3] = {{.position = {0, 0, 0}}, {.position = {0.1, 1, 0}}, {.position = {0, 2, 0.3}}};
    for (int i = 0; i < 3; i++) j[i].rotation = ikd_quat_identity();
    ikd_request req;
    ikd_request_init(&req);
    req.problem.joints = j;
    req.problem.joint_count = 3;
    req.problem.target = ikd_vec3_make(0.7, 1.1, 0.3);
    ikd_error err;
    ikd_result res;
    ikd_pose_joint pose[3];
    ck_assert_int_eq(ikd_validate(&req.problem, &err), 0);
    ck_assert_int_eq(ikd_solve(&req.problem, NULL, 0, pose, &res, &err), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    ikd_emitter em;
    ikd_emit_init(&em, IKD_ENC_JSON, &out);
    ikd_reply_solve(&em, &req, &res, pose, 1.5);
    ck_assert(!out.failed);
    json_error_t e;
    json_t *doc = json_loadb(out.data, out.len, 0, &e);
    ck_assert_ptr_nonnull(doc);
    json_t *joints = json_object_get(doc, "joints");
    for (size_t i = 0; i < 3; i++) {
        json_t *p = json_object_get(json_array_get(joints, i), "position");
        ck_assert(json_real_value(json_array_get(p, 0)) == pose[i].position.x ||
                  json_integer_value(json_array_get(p, 0)) == pose[i].position.x);
        ck_assert(json_number_value(json_array_get(p, 1)) == pose[i].position.y);
        ck_assert(json_number_value(json_array_get(p, 2)) == pose[i].position.z);
        json_t *q = json_object_get(json_array_get(joints, i), "rotation");
        ck_assert(json_number_value(json_array_get(q, 3)) == pose[i].rotation.w);
    }
    ck_assert_ptr_null(json_object_get(json_array_get(joints, 0), "name"));
    json_decref(doc);
    ikd_buf_destroy(&out);
}
END_TEST

START_TEST(content_type_and_routes)
{
    ck_assert_int_eq(ikd_encoding_from_content_type(NULL), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/json"), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_content_type("Application/JSON; charset=utf-8"), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/msgpack"), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/x-msgpack"), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/jsonx"), -1);
    ck_assert_int_eq(ikd_encoding_from_content_type("text/plain"), -1);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/x-www-form-urlencoded"), -1);
    ck_assert_int_eq(ikd_encoding_from_accept(NULL, IKD_ENC_MSGPACK), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_accept("*/*", IKD_ENC_JSON), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_accept("text/html, application/msgpack;q=0.9", IKD_ENC_JSON), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_accept("application/json", IKD_ENC_MSGPACK), IKD_ENC_JSON);
    const ikd_route *r = ikd_route_find("/v1/solve");
    ck_assert_ptr_nonnull(r);
    ck_assert(ikd_route_allows(r, "POST"));
    ck_assert(!ikd_route_allows(r, "GET"));
    ck_assert(!ikd_route_allows(r, "POS"));
    ck_assert_ptr_null(ikd_route_find("/v1/solve/"));
    ck_assert(ikd_route_allows(ikd_route_find("/healthz"), "HEAD"));
}
END_TEST

START_TEST(wire_table_covers_every_code)
{
    for (int c = 0; c < IKD_E__SERVICE_END; c++) {
        int st = ikd_wire_status(c);
        ck_assert_msg(c == IKD_E_OK ? st == 200 : (st >= 400 && st <= 503), "code %d: status %d", c, st);
        ck_assert_msg(strcmp(ikd_wire_code(c), "") != 0 && ikd_wire_message(c)[0], "code %d has no wire name", c);
    }
    ck_assert_str_eq(ikd_wire_code(IKD_E_INVALID), "invalid_request");
    ck_assert_int_eq(ikd_wire_status(IKD_E_INVALID), 400);
    ck_assert_str_eq(ikd_wire_code(IKD_E_MALFORMED), "malformed_request");
    ck_assert_int_eq(ikd_wire_status(IKD_E_TOO_LARGE), 413);
    ck_assert_int_eq(ikd_wire_status(IKD_E_MEDIA_TYPE), 415);
    ck_assert_int_eq(ikd_wire_status(IKD_E_OVERLOADED), 503);
    ck_assert_str_eq(ikd_wire_code(IKD_E_NOMEM), "internal_error");
    ck_assert_int_eq(ikd_wire_status(IKD_E_NOMEM), 500);
    ck_assert_str_eq(ikd_wire_code(IKD_E__SERVICE_END), "internal_error");
    ck_assert_int_eq(ikd_wire_status(-7), 500);
    /* an error body uses the code's default message when it has none */
    ikd_buf out;
    ikd_buf_init(&out);
    ck_assert_int_eq(ikd_reply_errorf(&out, IKD_ENC_JSON, IKD_E_OVERLOADED, NULL, NULL), 503);
    ck_assert_ptr_nonnull(strstr(out.data, "\"overloaded\""));
    ck_assert_ptr_nonnull(strstr(out.data, ikd_wire_message(IKD_E_OVERLOADED)));
    ikd_buf_destroy(&out);
}
END_TEST

START_TEST(batch_slices_plan)
{
    for (size_t n = 0; n <= 300; n++)
        for (size_t idle = 0; idle <= 8; idle++) {
            size_t k = ikd_batch_slices(n, idle);
            ck_assert_uint_ge(k, 1);
            ck_assert_uint_le(k, 1 + idle);
            if (n > 0) ck_assert_uint_le(k, (n + IKD_BATCH_SLICE - 1) / IKD_BATCH_SLICE);
            if (n >= IKD_BATCH_SLICE * (1 + idle)) ck_assert_uint_eq(k, 1 + idle); /* every idle worker gets one */
        }
}
END_TEST

/* ---- a call's life, with a pool that runs tasks at once ---------------- */

typedef struct fake {
    int submit_rc;       /* what submit answers: 0 runs the task at once */
    int queue_full;
    size_t idle;
    int solved, finished, submitted;
    int rejected[IKD_REJECT__COUNT];
    ikd_api_scratch scratch;
} fake;

static fake F;

static void f_solved(void *ctx, ikd_solver s, ikd_status st, double secs)
{
    (void)ctx, (void)s, (void)st;
    ck_assert(secs >= 0);
    F.solved++;
}
static void f_rejected(void *ctx, ikd_reject_reason why) { (void)ctx, F.rejected[why]++; }
static int f_submit(void *ctx, ikd_task *t)
{
    (void)ctx;
    if (F.submit_rc) return F.submit_rc;
    F.submitted++;
    t->run(t, &F.scratch);
    return 0;
}
static size_t f_idle(void *ctx) { return (void)ctx, F.idle; }
static int f_queue_full(void *ctx) { return (void)ctx, F.queue_full; }
static int f_ready(void *ctx) { return (void)ctx, 1; }
static void f_metrics(void *ctx, ikd_buf *out) { (void)ctx, ikd_buf_puts(out, "ikd_up 1\n"); }
static void f_finished(ikd_call *c) { (void)c, F.finished++; }

static ikd_service svc;

static void service_up_budget(const char *cors, const char *token, long deadline_ms, size_t budget)
{
    memset(&F, 0, sizeof F);
    ck_assert_int_eq(ikd_api_scratch_init(&F.scratch, 64), 0);
    ikd_service_settings set = {.limits = {64, 1000, 100, NULL, 0, 0, NULL, NULL}, .max_body = 65536, .deadline_ms = deadline_ms,
                                .head_max = 8192, .memory_budget = budget, .cors_origins = cors, .api_token = token};
    ikd_service_hooks hooks = {.solved = f_solved, .rejected = f_rejected, .submit = f_submit, .idle = f_idle,
                               .queue_full = f_queue_full, .ready = f_ready, .metrics = f_metrics,
                               .finished = f_finished};
    ck_assert_int_eq(ikd_service_init(&svc, &set, &hooks), 0);
}

static void service_up(const char *cors, const char *token, long deadline_ms)
{
    service_up_budget(cors, token, deadline_ms, 0);
}

static void service_down(void)
{
    ck_assert_uint_eq(ikd_service_held(&svc), 0); /* every call gave its share of the budget back */
    ikd_service_destroy(&svc);
    ikd_api_scratch_destroy(&F.scratch);
}

static const char *find_header(const ikd_call *c, const char *name)
{
    ikd_header h[IKD_CALL_MAX_HEADERS];
    size_t n = ikd_call_headers(c, 0, h);
    for (size_t i = 0; i < n; i++)
        if (strcmp(h[i].name, name) == 0) return h[i].value;
    return NULL;
}

/* Run a whole request through a call: head, body, pool. Returns the status. */
static int run_call(ikd_call *c, const ikd_head *h, const char *body)
{
    ikd_call_init(c, &svc, ikd_clock_ns());
    ikd_call_next next = ikd_call_head(c, h);
    if (next == IKD_CALL_READ) {
        if (body) ikd_call_body(c, body, strlen(body));
        next = ikd_call_body_end(c);
    }
    if (next == IKD_CALL_POOL) {
        int before = F.finished;
        ikd_call_submit(c);
        ck_assert_int_eq(F.finished, before + 1);
    }
    return c->status;
}

static ikd_head post(const char *path, const char *type)
{
    return (ikd_head){.method = "POST", .path = path, .content_type = type};
}

START_TEST(call_head_checks)
{
    service_up("https://app.example", "secret", 0);
    ikd_call c;
    ikd_head h = {.method = "GET", .path = "/nope"};
    ck_assert_int_eq(run_call(&c, &h, NULL), 404);
    ck_assert_uint_eq(strlen(c.request_id), 17); /* generated: 8 hex, '-', 8 hex */
    ck_assert_str_eq(find_header(&c, "Vary"), "Origin");
    ikd_call_destroy(&c);

    h = (ikd_head){.method = "GET", .path = "/v1/solvers", .request_id = "client-id.1"};
    ck_assert_int_eq(run_call(&c, &h, NULL), 401);
    ck_assert_str_eq(c.request_id, "client-id.1");
    ck_assert_ptr_nonnull(find_header(&c, "WWW-Authenticate"));
    ikd_call_destroy(&c);

    h.authorization = "Bearer secret";
    h.request_id = "bad id with spaces";
    ck_assert_int_eq(run_call(&c, &h, NULL), 200);
    ck_assert_str_ne(c.request_id, "bad id with spaces");
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"solvers\""));
    ikd_call_destroy(&c);

    h = (ikd_head){.method = "GET", .path = "/healthz"}; /* open without the token */
    ck_assert_int_eq(run_call(&c, &h, NULL), 200);
    ikd_call_destroy(&c);

    h = (ikd_head){.method = "DELETE", .path = "/v1/solve", .authorization = "Bearer secret"};
    ck_assert_int_eq(run_call(&c, &h, NULL), 405);
    ck_assert_str_eq(find_header(&c, "Allow"), "POST, OPTIONS");
    ikd_call_destroy(&c);

    h = post("/v1/solve", "text/plain");
    h.authorization = "Bearer secret";
    ck_assert_int_eq(run_call(&c, &h, NULL), 415);
    ck_assert_str_eq(find_header(&c, "Connection"), "close");
    ikd_call_destroy(&c);

    h = post("/v1/solve", NULL);
    h.authorization = "Bearer secret";
    h.content_length = "70000"; /* over max_body 65536: refused from the head */
    ck_assert_int_eq(run_call(&c, &h, NULL), 413);
    ck_assert_int_eq(F.rejected[IKD_REJECT_TOO_LARGE], 1);
    ikd_call_destroy(&c);

    h.content_length = NULL; /* chunked: refused once the body passes the limit */
    h.transfer_encoding = "chunked";
    static char big[70000];
    memset(big, ' ', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ck_assert_int_eq(run_call(&c, &h, big), 413);
    ck_assert_int_eq(F.rejected[IKD_REJECT_TOO_LARGE], 2);
    ikd_call_destroy(&c);

    /* CORS: a preflight from an allowed origin, and from another */
    h = (ikd_head){.method = "OPTIONS", .path = "/v1/solve", .origin = "https://app.example", .cors_request_method = "POST"};
    ck_assert_int_eq(run_call(&c, &h, NULL), 204);
    ck_assert_str_eq(find_header(&c, "Access-Control-Allow-Origin"), "https://app.example");
    ck_assert_str_eq(find_header(&c, "Access-Control-Allow-Methods"), "POST, OPTIONS");
    ck_assert_ptr_null(find_header(&c, "Content-Type"));
    ikd_call_destroy(&c);
    h.origin = "https://evil.example";
    ck_assert_int_eq(run_call(&c, &h, NULL), 403);
    ck_assert_ptr_null(find_header(&c, "Access-Control-Allow-Origin"));
    ikd_call_destroy(&c);
    service_down();

    /* without --cors-origins nothing says Vary */
    service_up("", "", 0);
    h = (ikd_head){.method = "GET", .path = "/healthz", .origin = "https://app.example"};
    ck_assert_int_eq(run_call(&c, &h, NULL), 200);
    ck_assert_ptr_null(find_header(&c, "Vary"));
    ck_assert_ptr_null(find_header(&c, "Access-Control-Allow-Origin"));
    ikd_call_destroy(&c);
    service_down();
}
END_TEST

START_TEST(call_solves_inline_pooled_and_refused)
{
    service_up("", "", 0);
    ikd_call c;
    ikd_head h = post("/v1/solve", "application/json");
    /* analytic: answered on the transport's thread, no pool */
    ck_assert_int_eq(run_call(&c, &h, "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]}"), 200);
    ck_assert_int_eq(F.submitted, 0);
    ck_assert_int_eq(F.solved, 1);
    ck_assert(c.outcome.solved && c.outcome.solver == IKD_SOLVER_TWO_BONE);
    ikd_call_destroy(&c);
    /* iterative: on the pool */
    const char *ccd = "{\"solver\":\"ccd\",\"chain\":{\"joints\":[[0,0,0],[1,0,0],[2,0,0],[3,0,0]]},\"target\":[1,1,1]}";
    ck_assert_int_eq(run_call(&c, &h, ccd), 200);
    ck_assert_int_eq(F.submitted, 1);
    ck_assert_int_eq(F.solved, 2);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"solver\":\"ccd\""));
    ck_assert_uint_gt(c.t_worker, 0);
    ikd_call_destroy(&c);
    /* an invalid body is answered before any pool */
    ck_assert_int_eq(run_call(&c, &h, "{\"chain\":{\"joints\":[[0,0,0]]},\"target\":[1,1,1]}"), 400);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"chain.joints\""));
    ikd_call_destroy(&c);
    /* a full queue, then a stopping pool */
    F.submit_rc = -1;
    ck_assert_int_eq(run_call(&c, &h, ccd), 503);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"overloaded\""));
    ck_assert_str_eq(find_header(&c, "Retry-After"), "1");
    ck_assert_int_eq(F.rejected[IKD_REJECT_QUEUE_FULL], 1);
    ikd_call_destroy(&c);
    F.submit_rc = -2;
    ck_assert_int_eq(run_call(&c, &h, ccd), 503);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"shutting_down\""));
    ck_assert_int_eq(F.rejected[IKD_REJECT_DRAINING], 1);
    ikd_call_destroy(&c);
    /* MessagePack asked for in Accept */
    F.submit_rc = 0;
    h.accept = "application/msgpack";
    ck_assert_int_eq(run_call(&c, &h, "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]}"), 200);
    ck_assert_str_eq(find_header(&c, "Content-Type"), "application/msgpack");
    ck_assert_int_eq((unsigned char)c.reply.data[0] & 0xf0, 0x80); /* a fixmap */
    ikd_call_destroy(&c);
    service_down();
}
END_TEST

/* Skeleton solves are answered on the transport's thread while their moving
 * average is under inline_us, on the pool when it is not (or inline_us is 0). */
START_TEST(call_skeleton_inline_while_short)
{
    service_up("", "", 0);
    ikd_call c;
    ikd_head h = post("/v1/solve/skeleton", "application/json");
    const char *body = "{\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0],[0,3,0]]},"
                       "\"goals\":[{\"joint\":3,\"position\":[1,2,0]}]}";
    svc.inline_us = 1000000;
    ck_assert_int_eq(run_call(&c, &h, body), 200);
    ck_assert_int_eq(F.submitted, 0);
    ck_assert(c.outcome.solved && c.outcome.skeleton);
    unsigned long avg = atomic_load(&svc.skeleton_avg_ns);
    ck_assert_uint_gt(avg, 0); /* the solve counted: 1/16 of its time */
    ikd_call_destroy(&c);
    /* a run of long solves sends them to the pool, where the average goes on */
    atomic_store(&svc.skeleton_avg_ns, 2000000000ul);
    ck_assert_int_eq(run_call(&c, &h, body), 200);
    ck_assert_int_eq(F.submitted, 1);
    ck_assert_uint_lt(atomic_load(&svc.skeleton_avg_ns), 2000000000ul);
    ikd_call_destroy(&c);
    /* 0: always the pool */
    svc.inline_us = 0;
    atomic_store(&svc.skeleton_avg_ns, 0);
    ck_assert_int_eq(run_call(&c, &h, body), 200);
    ck_assert_int_eq(F.submitted, 2);
    ikd_call_destroy(&c);
    /* a bad body inline is the same 400 as on the pool */
    svc.inline_us = 1000000;
    ck_assert_int_eq(run_call(&c, &h, "{\"skeleton\":{\"joints\":[[0,0,0]]},\"goals\":[]}"), 400);
    ck_assert_int_eq(F.submitted, 2);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"field\""));
    ikd_call_destroy(&c);
    service_down();
}
END_TEST

START_TEST(call_deadline_in_the_queue)
{
    service_up("", "", 5);
    ikd_call c;
    ikd_head h = post("/v1/solve", "application/json");
    ikd_call_init(&c, &svc, ikd_clock_ns() - 50 * 1000000ull); /* arrived 50 ms ago, deadline 5 ms */
    ck_assert_int_eq(ikd_call_head(&c, &h), IKD_CALL_READ);
    const char *ccd = "{\"solver\":\"ccd\",\"chain\":{\"joints\":[[0,0,0],[1,0,0],[2,0,0],[3,0,0]]},\"target\":[1,1,1]}";
    ikd_call_body(&c, ccd, strlen(ccd));
    ck_assert_int_eq(ikd_call_body_end(&c), IKD_CALL_POOL);
    ikd_call_submit(&c);
    ck_assert_int_eq(c.status, 503);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"deadline_exceeded\""));
    ck_assert_int_eq(F.rejected[IKD_REJECT_DEADLINE], 1);
    ck_assert_int_eq(F.solved, 0);
    ikd_call_destroy(&c);
    service_down();
}
END_TEST

START_TEST(call_batch_fans_out_in_order)
{
    service_up("", "", 0);
    /* 50 items, item k's target differs: the reply must keep the order */
    ikd_buf body;
    ikd_buf_init(&body);
    ikd_buf_puts(&body, "{\"problems\":[");
    for (int k = 0; k < 50; k++) {
        char item[160];
        snprintf(item, sizeof item, "%s{\"solver\":\"ccd\",\"chain\":{\"joints\":[[0,0,0],[1,0,0],[2,0,0],[3,0,0]]},"
                                    "\"target\":[%d,0.5,0]}", k ? "," : "", k % 2 ? 1 : 2);
        ikd_buf_puts(&body, item);
    }
    ikd_buf_puts(&body, ",{\"chain\":{\"joints\":[[0,0,0]]},\"target\":[1,1,1]}]}"); /* item 50 is bad */
    for (size_t idle = 0; idle <= 3; idle++) {
        ikd_call c;
        F.idle = idle;
        F.submitted = F.solved = 0;
        ikd_head h = post("/v1/solve/batch", "application/json");
        ck_assert_int_eq(run_call(&c, &h, body.data), 200);
        ck_assert_int_eq(F.submitted, 1 + (int)ikd_batch_slices(51, idle) - 1);
        ck_assert_int_eq(F.solved, 50);
        json_error_t e;
        json_t *doc = json_loadb(c.reply.data, c.reply.len, 0, &e);
        json_t *results = json_object_get(doc, "results");
        ck_assert_uint_eq(json_array_size(results), 51);
        for (size_t k = 0; k < 50; k++) {
            json_t *eff = json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(results, k),
                                                                                        "joints"), 3), "position"), 0);
            ck_assert_msg(fabs(json_number_value(eff) - (k % 2 ? 1 : 2)) < 1e-3, "item %zu out of order", k);
        }
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(results, 50), "error"), "field")),
                         "problems[50].chain.joints");
        json_decref(doc);
        ikd_call_destroy(&c);
    }
    ikd_buf_destroy(&body);
    service_down();
}
END_TEST


/* A declared body that could never fit with its decoded document (413),
 * one that does not fit now (503), a chunked body beyond the budget, and a
 * batch whose reply could never fit (413) or does not fit now (503); a full
 * queue refuses a batch before its body is read. */
START_TEST(call_memory_budget)
{
    service_up_budget("", "", 0, 49152);
    ikd_call c, holder;
    ikd_head h = post("/v1/solve/batch", "application/json");
    h.content_length = "20000"; /* 20000 + 7 x 20000 for jansson's tree */
    ck_assert_int_eq(run_call(&c, &h, NULL), 413);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "--memory-budget"));
    ck_assert_ptr_null(find_header(&c, "Retry-After"));
    ck_assert_int_eq(F.rejected[IKD_REJECT_MEMORY], 1);
    ikd_call_destroy(&c);
    h.content_length = "5000"; /* fits: 40000 bytes charged from the head */
    ikd_call_init(&c, &svc, ikd_clock_ns());
    ck_assert_int_eq(ikd_call_head(&c, &h), IKD_CALL_READ);
    ck_assert_uint_eq(ikd_service_held(&svc), 40000);
    ck_assert_int_eq(run_call(&holder, &h, NULL), 503); /* ... and leaves no room for a second */
    ck_assert_str_eq(find_header(&holder, "Retry-After"), "1");
    ikd_call_destroy(&holder);
    ikd_call_destroy(&c);
    ck_assert_uint_eq(ikd_service_held(&svc), 0);
    h.content_length = NULL;
    h.transfer_encoding = "chunked";
    static char big[70000];
    memset(big, ' ', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ikd_call_init(&c, &svc, ikd_clock_ns());
    ck_assert_int_eq(ikd_call_head(&c, &h), IKD_CALL_READ);
    ikd_call_body(&c, big, 30000);
    ck_assert(!ikd_call_refused(&c));
    ck_assert_uint_eq(ikd_service_held(&svc), 30000);
    ikd_call_body(&c, big, 30000);
    ck_assert(ikd_call_refused(&c)); /* 503 is decided now, before the rest */
    ck_assert_uint_eq(ikd_service_held(&svc), 0);
    ck_assert_int_eq(ikd_call_body_end(&c), IKD_CALL_ANSWER);
    ck_assert_int_eq(c.status, 503);
    ikd_call_destroy(&c);
    /* a batch of 20 chains of 20 joints (4.4 KB): its reply (~125 KB) can never fit 48 KiB */
    ikd_buf body;
    ikd_buf_init(&body);
    ikd_buf_puts(&body, "{\"problems\":[");
    for (int k = 0; k < 20; k++) {
        ikd_buf_puts(&body, k ? ",{\"solver\":\"ccd\",\"chain\":{\"joints\":[" : "{\"solver\":\"ccd\",\"chain\":{\"joints\":[");
        for (int i = 0; i < 20; i++) {
            char j[32];
            snprintf(j, sizeof j, "%s[0,%d,0]", i ? "," : "", i);
            ikd_buf_puts(&body, j);
        }
        ikd_buf_puts(&body, "]},\"target\":[3,3,0]}");
    }
    ikd_buf_puts(&body, "]}");
    h.transfer_encoding = NULL;
    ck_assert_int_eq(run_call(&c, &h, body.data), 413);
    ck_assert_ptr_nonnull(strstr(c.reply.data, "\"field\":\"problems\""));
    ikd_call_destroy(&c);
    ikd_buf_destroy(&body);
    /* a small batch fits, unless another call holds the budget */
    const char *small = "{\"problems\":[{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]}]}";
    ck_assert_int_eq(run_call(&c, &h, small), 200);
    ck_assert_uint_gt(ikd_service_held(&svc), 0); /* the reply is held until the call ends */
    ikd_call_destroy(&c);
    ikd_call_init(&holder, &svc, ikd_clock_ns());
    h.transfer_encoding = "chunked";
    ck_assert_int_eq(ikd_call_head(&holder, &h), IKD_CALL_READ);
    ikd_call_body(&holder, big, 48900);
    h.transfer_encoding = NULL;
    ck_assert_int_eq(run_call(&c, &h, small), 503);
    ikd_call_destroy(&c);
    ikd_call_destroy(&holder);
    ck_assert_int_eq(run_call(&c, &h, small), 200);
    ikd_call_destroy(&c);
    /* a full queue: a batch is refused from its head, before its body */
    F.queue_full = 1;
    ikd_call_init(&c, &svc, ikd_clock_ns());
    ck_assert_int_eq(ikd_call_head(&c, &h), IKD_CALL_ANSWER);
    ck_assert_int_eq(c.status, 503);
    ck_assert(c.close);
    ikd_call_destroy(&c);
    /* ... while a small solve is still read (it may be answered inline) */
    ikd_head hs = post("/v1/solve", "application/json");
    ck_assert_int_eq(run_call(&c, &hs, "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]}"), 200);
    ikd_call_destroy(&c);
    service_down();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("service");
    TCase *tc = tcase_create("service");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, reply_round_trips_the_pose);
    tcase_add_test(tc, content_type_and_routes);
    tcase_add_test(tc, wire_table_covers_every_code);
    tcase_add_test(tc, batch_slices_plan);
    tcase_add_test(tc, call_head_checks);
    tcase_add_test(tc, call_solves_inline_pooled_and_refused);
    tcase_add_test(tc, call_skeleton_inline_while_short);
    tcase_add_test(tc, call_deadline_in_the_queue);
    tcase_add_test(tc, call_batch_fans_out_in_order);
    tcase_add_test(tc, call_memory_budget);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
