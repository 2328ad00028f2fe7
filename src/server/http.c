/* http.c - libmicrohttpd glue: routing, auth, CORS, limits, suspend/resume around pool jobs, replies, logs. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../codec/buf.h"
#include "log.h"

/* RECEIVING: reading the body of a solve; DECIDED: the answer is known from
 * the headers but is queued only on MHD's final call (a response queued in
 * the first call makes libmicrohttpd close the connection); QUEUED: on the
 * pool, connection suspended; DONE: the job has finished; ANSWERED: queued. */
typedef enum { REQ_RECEIVING, REQ_DECIDED, REQ_QUEUED, REQ_DONE, REQ_ANSWERED } req_state;

typedef struct ikd_http_req ikd_http_req;

/* One slice of a batch, run by whichever worker takes it. */
typedef struct chunk_job {
    ikd_pool_job job; /* first member: the pool hands this back */
    ikd_http_req *rq;
    size_t lo, hi;
} chunk_job;

/* One request's context (MHD's per-request pointer). */
struct ikd_http_req {
    ikd_pool_job job; /* first member: the pool hands this back */
    ikd_http *h;
    struct MHD_Connection *conn;
    const ikd_route *route;
    req_state state;
    int too_large;
    int status;
    int close;          /* answer with Connection: close */
    int cors_ok;        /* the Origin is allowed: send CORS headers */
    ikd_buf body;
    ikd_buf reply;
    const char *reply_type;
    const char *allow;  /* Allow header of a decided answer */
    int has_body;       /* the request declares a body (Content-Length > 0 or chunked) */
    int preflight;      /* a CORS preflight: answer with the Access-Control-Allow-* headers */
    unsigned long reply_bytes;
    unsigned long long t_start, t_worker, deadline_ns;
    ikd_api_outcome outcome;
    ikd_encoding in_enc;   /* the body's encoding (Content-Type) */
    ikd_encoding out_enc;  /* the reply's encoding (Accept, else in_enc) */
    ikd_request req;       /* a solve decoded on the I/O thread */
    int req_ready;
    ikd_batch batch;
    chunk_job *chunks;
    atomic_int chunks_left;
    char method[16];
    char path[256];
    char origin[256];
    char request_id[72];
};

/* Bodies up to this size are decoded on the I/O thread (so that analytic
 * solves can be answered there); larger ones are decoded by a worker. */
#define IKD_INLINE_DECODE_MAX 8192

/* ---- replies ----------------------------------------------------------- */

static void add_cors(ikd_http_req *rq, struct MHD_Response *r)
{
    ikd_http *h = rq->h;
    if (!h->cors_any && h->cors_count == 0) return;
    MHD_add_response_header(r, "Vary", "Origin");
    if (!rq->cors_ok) return;
    MHD_add_response_header(r, "Access-Control-Allow-Origin", h->cors_any ? "*" : rq->origin);
    MHD_add_response_header(r, "Access-Control-Expose-Headers", "X-Request-Id, Retry-After");
}

/* Queue `rq->reply` as the answer with status `status`; `allow` adds an
 * Allow header. Counts the request in the metrics. */
static enum MHD_Result queue_now(ikd_http_req *rq, int status, const char *allow);

/* Answer: at once when a body is on its way (it will not be read: the
 * connection closes after), else on MHD's final call for this request so
 * that the connection stays open for the next one. */
static enum MHD_Result respond(ikd_http_req *rq, int status, const char *allow)
{
    if (rq->state == REQ_RECEIVING && !rq->has_body) {
        rq->state = REQ_DECIDED;
        rq->status = status;
        rq->allow = allow;
        return MHD_YES;
    }
    if (rq->state == REQ_RECEIVING) rq->close = 1;
    return queue_now(rq, status, allow);
}

static enum MHD_Result queue_now(ikd_http_req *rq, int status, const char *allow)
{
    size_t len;
    char *data = ikd_buf_release(&rq->reply, &len);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, data ? data : "", data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    if (len || status != 204)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                rq->reply_type ? rq->reply_type : ikd_encoding_media_type(rq->out_enc));
    MHD_add_response_header(r, "X-Request-Id", rq->request_id);
    if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (status == 503) MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (status == 401) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"ikd\"");
    if (rq->close || atomic_load(&rq->h->draining)) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (rq->preflight) {
        MHD_add_response_header(r, "Access-Control-Allow-Methods", rq->route->allow_all);
        MHD_add_response_header(r, "Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, X-Request-Id");
        MHD_add_response_header(r, "Access-Control-Max-Age", "600");
    }
    add_cors(rq, r);
    enum MHD_Result ret = MHD_queue_response(rq->conn, (unsigned int)status, r);
    MHD_destroy_response(r);
    rq->status = status;
    rq->reply_bytes = len;
    rq->state = REQ_ANSWERED;
    ikd_metrics_request(&rq->h->metrics, rq->route ? (int)rq->route->id : IKD_METRICS_ROUTES - 1, status);
    return ret;
}

static enum MHD_Result respond_error(ikd_http_req *rq, ikd_code code, const char *field, const char *msg,
                                     const char *allow)
{
    int status = ikd_api_error(&rq->reply, rq->out_enc, code, field, msg ? "%s" : NULL, msg);
    rq->reply_type = NULL;
    return respond(rq, status, allow);
}

/* ---- pool jobs --------------------------------------------------------- */

static void debug_delay(ikd_http *h)
{
    long delay = h->cfg->debug_delay_ms;
    if (delay > 0) {
        struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The job is done: hand the connection back to MHD (rq is not touched after). */
static void job_done(ikd_http_req *rq)
{
    rq->state = REQ_DONE;
    MHD_resume_connection(rq->conn);
}

/* A request that waited in the queue past its deadline is refused. */
static int past_deadline(ikd_http_req *rq)
{
    if (!rq->deadline_ns || ikd_clock_ns() <= rq->deadline_ns) return 0;
    ikd_metrics_reject(&rq->h->metrics, IKD_REJECT_DEADLINE);
    rq->status = ikd_api_error(&rq->reply, rq->out_enc, IKD_E_DEADLINE, "", "the request waited %.0f ms, past --deadline-ms",
                               (double)(ikd_clock_ns() - rq->t_start) / 1e6);
    return 1;
}

static void record_solve(ikd_http_req *rq)
{
    if (rq->outcome.solved)
        ikd_metrics_solve(&rq->h->metrics, rq->outcome.solver, rq->outcome.status, rq->outcome.solve_s);
}

static void solve_job(ikd_pool_job *job, void *worker_data)
{
    ikd_http_req *rq = (ikd_http_req *)job;
    ikd_http *h = rq->h;
    rq->t_worker = ikd_clock_ns();
    debug_delay(h);
    if (!past_deadline(rq)) {
        if (rq->req_ready)
            rq->status = ikd_api_run(worker_data, &rq->req, rq->deadline_ns, rq->out_enc, &rq->reply, &rq->outcome);
        else
            rq->status = ikd_api_solve(worker_data, &h->limits, rq->deadline_ns, rq->in_enc, rq->out_enc,
                                       rq->body.data ? rq->body.data : "", rq->body.len, &rq->reply, &rq->outcome);
        record_solve(rq);
    }
    job_done(rq);
}

/* The last chunk of a batch to finish writes the reply. */
static void batch_chunk_finished(ikd_http_req *rq)
{
    if (atomic_fetch_sub(&rq->chunks_left, 1) != 1) return;
    ikd_http *h = rq->h;
    for (size_t i = 0; i < rq->batch.count; i++) {
        const ikd_batch_item *it = &rq->batch.items[i];
        if (it->err.code == IKD_E_OK) ikd_metrics_solve(&h->metrics, it->res.solver, it->res.status, it->solve_us / 1e6);
    }
    rq->status = ikd_api_batch_write(&rq->batch, rq->out_enc, &rq->reply);
    ikd_api_batch_destroy(&rq->batch);
    job_done(rq);
}

static void chunk_run(ikd_pool_job *job, void *worker_data)
{
    chunk_job *c = (chunk_job *)job;
    ikd_api_batch_solve(&c->rq->batch, c->lo, c->hi, worker_data);
    batch_chunk_finished(c->rq);
}

/* Decode the batch here, then spread its items over the pool in slices;
 * slices the queue cannot take run on this worker. */
static void batch_job(ikd_pool_job *job, void *worker_data)
{
    ikd_http_req *rq = (ikd_http_req *)job;
    ikd_http *h = rq->h;
    rq->t_worker = ikd_clock_ns();
    debug_delay(h);
    if (past_deadline(rq)) {
        job_done(rq);
        return;
    }
    int status = ikd_api_batch_open(&h->limits, rq->deadline_ns, rq->in_enc, rq->out_enc,
                                    rq->body.data ? rq->body.data : "", rq->body.len, &rq->batch, &rq->reply);
    if (status) {
        rq->status = status;
        job_done(rq);
        return;
    }
    /* Slices go only to idle workers: when every worker is busy (a loaded
     * server), handing slices around costs wake-ups and cache misses and
     * gains nothing, so the batch is solved here. */
    size_t n = rq->batch.count, per = 16, queued, running;
    ikd_pool_load(&h->pool, &queued, &running);
    size_t idle = (size_t)h->nworkers > queued + running ? (size_t)h->nworkers - queued - running : 0;
    size_t nchunks = (n + per - 1) / per;
    if (nchunks > 1 + idle) nchunks = 1 + idle;
    if (nchunks < 1) nchunks = 1;
    rq->chunks = calloc(nchunks, sizeof *rq->chunks);
    if (!rq->chunks) nchunks = 1;
    atomic_store(&rq->chunks_left, (int)nchunks);
    size_t lo = 0, inline_from = nchunks;
    for (size_t c = 0; c < nchunks; c++) {
        size_t hi = lo + (n - lo) / (nchunks - c);
        if (rq->chunks) rq->chunks[c] = (chunk_job){{chunk_run}, rq, lo, hi};
        lo = hi;
    }
    if (!rq->chunks) {
        ikd_api_batch_solve(&rq->batch, 0, n, worker_data);
        batch_chunk_finished(rq);
        return;
    }
    /* chunk 0 stays here; the others go to the pool while it has room */
    for (size_t c = 1; c < nchunks; c++) {
        if (ikd_pool_submit(&h->pool, &rq->chunks[c].job) != 0) {
            inline_from = c;
            break;
        }
    }
    /* run the ones the pool did not take first, then ours, so that our own
     * finishing (which may free rq) comes last */
    for (size_t c = inline_from; c < nchunks; c++) chunk_run(&rq->chunks[c].job, worker_data);
    chunk_run(&rq->chunks[0].job, worker_data);
}

/* ---- request handling -------------------------------------------------- */

static int origin_allowed(ikd_http *h, const char *origin)
{
    if (!origin) return 0;
    if (h->cors_any) return 1;
    for (int i = 0; i < h->cors_count; i++)
        if (strcmp(h->cors[i], origin) == 0) return 1;
    return 0;
}

/* Constant-time check of "Bearer TOKEN" against the configured token. */
static int token_ok(const char *header, const char *token)
{
    if (!header || strncasecmp(header, "Bearer ", 7) != 0) return 0;
    const char *got = header + 7;
    size_t gl = strlen(got), tl = strlen(token);
    unsigned diff = gl != tl;
    for (size_t i = 0; i < tl; i++) diff |= (unsigned)(token[i] ^ (i < gl ? got[i] : 0));
    return diff == 0;
}

static void set_request_id(ikd_http *h, ikd_http_req *rq)
{
    const char *given = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "X-Request-Id");
    if (given) {
        size_t n = strlen(given);
        int ok = n > 0 && n <= 64;
        for (size_t i = 0; ok && i < n; i++) {
            char c = given[i];
            ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' ||
                 c == '.' || c == ':';
        }
        if (ok) {
            memcpy(rq->request_id, given, n + 1);
            return;
        }
    }
    unsigned long id = atomic_fetch_add(&h->next_id, 1);
    static const char hex[] = "0123456789abcdef";
    unsigned long parts[2] = {h->id_salt & 0xfffffffful, id & 0xfffffffful};
    char *o = rq->request_id; /* "%08lx-%08lx" */
    for (int p = 0; p < 2; p++) {
        for (int k = 7; k >= 0; k--) *o++ = hex[(parts[p] >> (4 * k)) & 15];
        *o++ = p ? '\0' : '-';
    }
}

static enum MHD_Result handle_options(ikd_http_req *rq)
{
    if (!rq->route) return respond_error(rq, IKD_E_NOT_FOUND, "", "no such endpoint (see openapi.yaml)", NULL);
    const char *want = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Access-Control-Request-Method");
    if (!rq->origin[0] || !want) return respond(rq, 204, rq->route->allow_all); /* plain OPTIONS */
    if (!rq->cors_ok)
        return respond_error(rq, IKD_E_FORBIDDEN_ORIGIN, "", "this Origin is not allowed (--cors-origins)", NULL);
    rq->preflight = 1;
    return respond(rq, 204, NULL);
}

static void gauges(ikd_http *h, ikd_metrics_gauges *g)
{
    ikd_pool_load(&h->pool, &g->queue_depth, &g->running);
    g->queue_capacity = (size_t)h->cfg->queue;
    g->workers = (size_t)h->nworkers;
    g->in_flight = ikd_http_active(h);
    g->draining = atomic_load(&h->draining);
}

static enum MHD_Result handle_inline(ikd_http_req *rq)
{
    ikd_http *h = rq->h;
    rq->reply_type = NULL;
    switch (rq->route->id) {
    case IKD_ROUTE_HEALTHZ: return respond(rq, ikd_api_healthz(&rq->reply, rq->out_enc), NULL);
    case IKD_ROUTE_READYZ:
        return respond(rq, ikd_api_readyz(&rq->reply, rq->out_enc, atomic_load(&h->ready) && !atomic_load(&h->draining)),
                       NULL);
    case IKD_ROUTE_SOLVERS: {
        const ikd_buf *cat = &h->solvers_doc[rq->out_enc];
        ikd_buf_append(&rq->reply, cat->data, cat->len);
        return respond(rq, 200, NULL);
    }
    case IKD_ROUTE_METRICS: {
        size_t n;
        const ikd_route *all = ikd_api_routes(&n);
        const char *names[IKD_METRICS_ROUTES];
        for (size_t i = 0; i < n && i < IKD_METRICS_ROUTES - 1; i++) names[i] = all[i].path;
        names[IKD_METRICS_ROUTES - 1] = "unmatched";
        /* the unmatched slot is rendered under its own name */
        ikd_metrics_gauges g;
        gauges(h, &g);
        ikd_metrics_render(&h->metrics, names, IKD_METRICS_ROUTES, &g, &rq->reply);
        rq->reply_type = "text/plain; version=0.0.4; charset=utf-8";
        return respond(rq, 200, NULL);
    }
    default: return respond_error(rq, IKD_E_INTERNAL, "", NULL, NULL);
    }
}

static enum MHD_Result on_first_call(ikd_http *h, ikd_http_req *rq, const char *method)
{
    struct MHD_Connection *conn = rq->conn;
    if (strcmp(method, "OPTIONS") == 0) return handle_options(rq);
    if (!rq->route) return respond_error(rq, IKD_E_NOT_FOUND, "", "no such endpoint (see openapi.yaml)", NULL);
    if (h->cfg->api_token[0] && !rq->route->open &&
        !token_ok(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION), h->cfg->api_token))
        return respond_error(rq, IKD_E_UNAUTHORIZED, "", "send Authorization: Bearer <token> (--api-token)", NULL);
    if (!ikd_api_method_allowed(rq->route, method)) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s takes %s", rq->route->path, rq->route->allow);
        return respond_error(rq, IKD_E_METHOD, "", msg, rq->route->allow_all);
    }
    if (!rq->route->has_body) return handle_inline(rq);
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    int enc = ikd_encoding_from_content_type(ct);
    if (enc < 0) {
        rq->close = 1; /* the body is not read */
        return respond_error(rq, IKD_E_MEDIA_TYPE, "", "the body must be application/json or application/msgpack",
                             NULL);
    }
    rq->in_enc = (ikd_encoding)enc;
    rq->out_enc = ikd_encoding_from_accept(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
                                           rq->in_enc);
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long declared = 0;
    if (cl) {
        char *end;
        errno = 0;
        declared = strtoull(cl, &end, 10);
        if (errno || end == cl || (unsigned long long)h->cfg->max_body < declared) {
            char msg[96];
            snprintf(msg, sizeof msg, "the body is larger than %ld bytes (--max-body)", h->cfg->max_body);
            ikd_metrics_reject(&h->metrics, IKD_REJECT_TOO_LARGE);
            rq->close = 1;
            return respond_error(rq, IKD_E_TOO_LARGE, "", msg, NULL);
        }
    }
    if (declared) ikd_buf_reserve(&rq->body, (size_t)declared);
    return MHD_YES;
}

/* Copy a string, cut to fit `size` bytes with its NUL. */
static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    ikd_http *h = cls;
    (void)version;
    ikd_http_req *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq) return MHD_NO;
        *con_cls = rq;
        atomic_fetch_add(&h->active, 1);
        rq->h = h;
        rq->conn = conn;
        rq->t_start = ikd_clock_ns();
        if (h->cfg->deadline_ms > 0) rq->deadline_ns = rq->t_start + (unsigned long long)h->cfg->deadline_ms * 1000000ull;
        copy_str(rq->method, sizeof rq->method, method);
        copy_str(rq->path, sizeof rq->path, url);
        ikd_buf_init(&rq->body);
        ikd_buf_init(&rq->reply);
        ikd_request_init(&rq->req);
        rq->route = ikd_api_route(url);
        rq->in_enc = IKD_ENC_JSON;
        rq->out_enc = ikd_encoding_from_accept(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
                                               IKD_ENC_JSON);
        set_request_id(h, rq);
        const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
        if (origin) copy_str(rq->origin, sizeof rq->origin, origin);
        rq->cors_ok = origin_allowed(h, origin);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
        rq->has_body = (cl && strtoull(cl, NULL, 10) > 0) || (te && strcasestr(te, "chunked"));
        return on_first_call(h, rq, method);
    }
    if (rq->state == REQ_ANSWERED || rq->state == REQ_DECIDED) { /* discard any body that follows */
        if (*upload_data_size == 0 && rq->state == REQ_DECIDED) return queue_now(rq, rq->status, rq->allow);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (!rq->too_large) {
            if (rq->body.len + *upload_data_size > (size_t)h->cfg->max_body) {
                rq->too_large = 1;
                ikd_buf_destroy(&rq->body);
            } else {
                ikd_buf_append(&rq->body, upload_data, *upload_data_size);
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->state == REQ_DONE) {
        rq->reply_type = NULL;
        return queue_now(rq, rq->status, NULL);
    }
    if (rq->state == REQ_QUEUED) return MHD_YES; /* spurious call while suspended */
    if (rq->too_large) {
        char msg[96];
        snprintf(msg, sizeof msg, "the body is larger than %ld bytes (--max-body)", h->cfg->max_body);
        ikd_metrics_reject(&h->metrics, IKD_REJECT_TOO_LARGE);
        return respond_error(rq, IKD_E_TOO_LARGE, "", msg, NULL);
    }
    if (rq->body.failed) return respond_error(rq, IKD_E_NOMEM, "", NULL, NULL);
    if (rq->route->id == IKD_ROUTE_SOLVE && rq->body.len <= IKD_INLINE_DECODE_MAX) {
        /* decode here; an analytic solve is answered here too (it costs less
         * than the hand-off), everything else goes to the pool decoded */
        ikd_error err;
        if (ikd_api_decode(&h->limits, rq->in_enc, rq->body.data ? rq->body.data : "", rq->body.len, &rq->req,
                           &err) != IKD_E_OK) {
            rq->status = ikd_api_error_body(&rq->reply, rq->out_enc, &err);
            return queue_now(rq, rq->status, NULL);
        }
        rq->req_ready = 1;
        ikd_solver s = rq->req.problem.solver;
        if (s == IKD_SOLVER_AUTO) s = ikd_solver_pick(&rq->req.problem);
        if (s == IKD_SOLVER_TWO_BONE && h->cfg->debug_delay_ms == 0) {
            ikd_pose_joint pose[3];
            ikd_api_scratch scratch = {3, pose, NULL, 0};
            rq->status = ikd_api_run(&scratch, &rq->req, rq->deadline_ns, rq->out_enc, &rq->reply, &rq->outcome);
            record_solve(rq);
            return queue_now(rq, rq->status, NULL);
        }
    }
    rq->job.run = rq->route->id == IKD_ROUTE_BATCH ? batch_job : solve_job;
    rq->state = REQ_QUEUED;
    MHD_suspend_connection(conn);
    int rc = ikd_pool_submit(&h->pool, &rq->job);
    if (rc != 0) {
        ikd_metrics_reject(&h->metrics, rc == -1 ? IKD_REJECT_QUEUE_FULL : IKD_REJECT_DRAINING);
        rq->status = ikd_api_error(&rq->reply, rq->out_enc, rc == -1 ? IKD_E_OVERLOADED : IKD_E_DRAINING, "", NULL);
        job_done(rq);
    }
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    ikd_http *h = cls;
    ikd_http_req *rq = *con_cls;
    if (!rq) return;
    if (ikd_log_enabled(IKD_LOG_INFO)) {
        /* the client's address, formatted once per connection (on_connection) */
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        const char *client = ci && ci->socket_context ? ci->socket_context : "";
        unsigned long long now = ikd_clock_ns();
        ikd_access a = {rq->method, rq->path, rq->request_id,
                        rq->outcome.solved ? ikd_solver_name(rq->outcome.solver) : NULL, client[0] ? client : NULL,
                        rq->state == REQ_ANSWERED ? rq->status : 0, rq->reply_bytes,
                        (double)(now - rq->t_start) / 1e6,
                        rq->t_worker ? (double)(rq->t_worker - rq->t_start) / 1e6 : 0.0};
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && rq->state != REQ_ANSWERED) a.status = 499; /* client went away */
        ikd_log_access(&a);
    }
    ikd_buf_destroy(&rq->body);
    ikd_buf_destroy(&rq->reply);
    ikd_request_destroy(&rq->req);
    free(rq->chunks);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&h->active, 1);
}

/* The client's address as text (empty when unknown), for the access log. */
static void client_address(struct MHD_Connection *conn, char *out, size_t len)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    out[0] = '\0';
    if (!ci || !ci->client_addr) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

/* ---- the connection limit ----------------------------------------------
 * --max-connections is enforced here, not with libmicrohttpd's own limit:
 * that one is split evenly over the I/O threads, and in libmicrohttpd 0.9.75
 * (epoll, thread pool) a thread that reaches its share stops noticing its
 * closed connections until their timeout, so one burst of connections (a load
 * test started twice) left the server refusing everyone for 30 s. libmicrohttpd
 * gets a limit no thread can reach; this policy closes a connection over ours
 * at once. */
/* Counts open connections, and keeps each one's client address as text in its
 * socket context (formatted here once, not in every request's log line; NULL
 * when out of memory, and the log line then has no client). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    ikd_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&h->connections, 1);
        char *client = malloc(INET6_ADDRSTRLEN);
        if (client) client_address(conn, client, INET6_ADDRSTRLEN);
        *socket_context = client;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&h->connections, 1);
        free(*socket_context);
        *socket_context = NULL;
    }
}

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    ikd_http *h = cls;
    (void)addr;
    (void)addrlen;
    if (atomic_load(&h->connections) < h->cfg->max_connections) return MHD_YES;
    ikd_metrics_reject(&h->metrics, IKD_REJECT_CONNECTIONS);
    return MHD_NO;
}

/* ---- start and stop ---------------------------------------------------- */

static int bind_listen(ikd_http *h, const char *scheme, char *errbuf, size_t errlen)
{
    char host[256], portstr[16];
    int port;
    ikd_config_split_listen(h->cfg->listen, host, sizeof host, &port);
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        snprintf(errbuf, errlen, "listen %s: %s", h->cfg->listen, gai_strerror(gai));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        /* non-blocking: several I/O threads wait on it, and one that loses the race
         * for a new connection must not block in accept() */
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(errbuf, errlen, "listen %s: %s", h->cfg->listen, strerror(err));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char addr[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
        snprintf(h->url, sizeof h->url, "%s://[%s]:%d", scheme, addr, ntohs(s6->sin6_port));
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
        snprintf(h->url, sizeof h->url, "%s://%s:%d", scheme, addr, ntohs(s4->sin_port));
    }
    h->listen_fd = fd;
    return 0;
}

static void *worker_init(void *arg, int index)
{
    ikd_http *h = arg;
    (void)index;
    ikd_api_scratch *s = malloc(sizeof *s);
    if (!s || ikd_api_scratch_init(s, (size_t)h->cfg->max_joints) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void worker_destroy(void *data)
{
    ikd_api_scratch_destroy(data);
    free(data);
}

static char *read_file(const char *path, char *errbuf, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    ikd_buf b;
    ikd_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ikd_buf_append(&b, chunk, n);
    fclose(f);
    if (b.failed || b.len == 0) {
        snprintf(errbuf, errlen, "%s: empty or unreadable", path);
        ikd_buf_destroy(&b);
        return NULL;
    }
    return ikd_buf_release(&b, NULL);
}

static void parse_origins(ikd_http *h)
{
    const char *p = h->cfg->cors_origins;
    while (*p) {
        size_t n = strcspn(p, ",");
        while (n && (*p == ' ')) p++, n--;
        size_t m = n;
        while (m && p[m - 1] == ' ') m--;
        if (m == 1 && *p == '*') h->cors_any = 1;
        else if (m && m < sizeof h->cors[0] && h->cors_count < IKD_HTTP_MAX_ORIGINS) {
            memcpy(h->cors[h->cors_count], p, m);
            h->cors[h->cors_count++][m] = '\0';
        }
        p += n;
        if (*p == ',') p++;
    }
}

int ikd_http_start(ikd_http *h, const ikd_config *cfg, char *errbuf, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->cfg = cfg;
    h->listen_fd = -1;
    atomic_init(&h->active, 0);
    atomic_init(&h->connections, 0);
    atomic_init(&h->draining, 0);
    atomic_init(&h->ready, 0);
    atomic_init(&h->next_id, 1);
    h->id_salt = (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16);
    ikd_metrics_init(&h->metrics);
    h->limits = (ikd_api_limits){(size_t)cfg->max_joints, (int)cfg->max_iterations, (size_t)cfg->max_batch};
    for (int e = 0; e < 2; e++) {
        ikd_buf_init(&h->solvers_doc[e]);
        ikd_api_solvers(&h->limits, (ikd_encoding)e, &h->solvers_doc[e]);
    }
    parse_origins(h);
    int tls = cfg->tls_cert[0] != '\0';
    if (tls) {
        if (!(h->tls_cert = read_file(cfg->tls_cert, errbuf, errlen))) goto fail;
        if (!(h->tls_key = read_file(cfg->tls_key, errbuf, errlen))) goto fail;
    }
    if (bind_listen(h, tls ? "https" : "http", errbuf, errlen) != 0) goto fail;
    long workers = cfg->workers;
    if (workers == 0) {
        workers = sysconf(_SC_NPROCESSORS_ONLN);
        if (workers < 1) workers = 1;
    }
    h->nworkers = (int)workers;
    long io_threads = cfg->io_threads;
    if (io_threads == 0) {
        io_threads = sysconf(_SC_NPROCESSORS_ONLN);
        if (io_threads < 1) io_threads = 1;
    }
    if (ikd_pool_init(&h->pool, (int)workers, (size_t)cfg->queue, worker_init, worker_destroy, h) != 0) {
        snprintf(errbuf, errlen, "cannot start %ld workers", workers);
        goto fail;
    }
    h->pool_started = 1;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (tls) flags |= MHD_USE_TLS;
    struct MHD_OptionItem ops[] = {
        {MHD_OPTION_LISTEN_SOCKET, h->listen_fd, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)io_threads, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->conn_timeout, NULL},
        /* libmicrohttpd zeroes this buffer for every request on a keep-alive
         * connection: with its default 32 KiB, memset was 7% of the daemon's samples
         * in perf during single requests */
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)cfg->conn_buffer, NULL},
        /* beyond any one thread's reach: accept_policy enforces --max-connections */
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)((cfg->max_connections + 64) * io_threads), NULL},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, h},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)cfg->max_connections_per_ip, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h},
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->tls_cert},
        {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, h->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    h->daemon = MHD_start_daemon(flags, 0, accept_policy, h, on_request, h, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(errbuf, errlen, "cannot start the HTTP daemon%s", tls ? " (check the TLS certificate and key)" : "");
        goto fail;
    }
    atomic_store(&h->ready, 1);
    return 0;
fail:
    if (h->pool_started) ikd_pool_destroy(&h->pool);
    h->pool_started = 0;
    if (h->listen_fd >= 0) close(h->listen_fd);
    h->listen_fd = -1;
    free(h->tls_cert);
    free(h->tls_key);
    for (int e = 0; e < 2; e++) ikd_buf_destroy(&h->solvers_doc[e]);
    return -1;
}

void ikd_http_drain(ikd_http *h)
{
    atomic_store(&h->draining, 1);
    atomic_store(&h->ready, 0);
    if (h->daemon && h->listen_fd >= 0) {
        MHD_socket fd = MHD_quiesce_daemon(h->daemon);
        if (fd != MHD_INVALID_SOCKET) close(fd);
        h->listen_fd = -1;
    }
}

long ikd_http_active(ikd_http *h) { return atomic_load(&h->active); }

void ikd_http_stop(ikd_http *h)
{
    if (h->pool_started) ikd_pool_destroy(&h->pool); /* runs queued jobs; each resumes its connection */
    h->pool_started = 0;
    if (h->daemon) MHD_stop_daemon(h->daemon);
    h->daemon = NULL;
    if (h->listen_fd >= 0) close(h->listen_fd);
    h->listen_fd = -1;
    free(h->tls_cert);
    free(h->tls_key);
    h->tls_cert = h->tls_key = NULL;
    for (int e = 0; e < 2; e++) ikd_buf_destroy(&h->solvers_doc[e]);
}
