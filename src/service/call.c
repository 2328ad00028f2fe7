/* call.c - one request through the API: head checks, body limits, inline or pooled solving, batch fan-out, deadlines. */
#include "call.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "clip.h"
#include "clipjob.h"
#include "reply.h"
#include "wire.h"

/* Bodies up to this size are decoded on the transport's thread (so that
 * analytic solves can be answered there); larger ones by a worker. */
#define IKD_INLINE_DECODE_MAX 8192

/* One slice of a batch, run by whichever worker takes it. */
typedef struct ikd_call_slice {
    ikd_task task; /* first member: the pool hands it back */
    ikd_call *call;
    size_t lo, hi;
} ikd_call_slice;

/* ---- the service ------------------------------------------------------- */

int ikd_service_init(ikd_service *s, const ikd_service_settings *set, const ikd_service_hooks *hooks)
{
    memset(s, 0, sizeof *s);
    s->limits = set->limits;
    atomic_init(&s->stop, 0);
    s->limits.cancel = &s->stop;
    s->max_body = set->max_body;
    /* the larger of the two: a --max-body raised for clips before
     * --max-clip-body existed still lets them through */
    s->max_clip_body = set->max_clip_body > set->max_body ? set->max_clip_body : set->max_body;
    s->max_import_body = set->max_import_body ? set->max_import_body : s->max_clip_body;
    s->deadline_ms = set->deadline_ms;
    s->debug_delay_ms = set->debug_delay_ms;
    s->inline_us = set->inline_us;
    atomic_init(&s->skeleton_avg_ns, 0);
    s->head_max = set->head_max;
    s->find_file = set->find_file;
    s->budget = set->memory_budget;
    atomic_init(&s->held, 0);
    if (ikd_skelstore_init(&s->store, set->skeleton_cache, &s->held) != 0) return -1;
    s->limits.lookup = &s->store.lookup;
    s->limits.store = &s->store;
    s->hooks = *hooks;
    ikd_guard_init(&s->guard, set->cors_origins ? set->cors_origins : "", set->api_token ? set->api_token : "");
    atomic_init(&s->next_id, 1);
    s->id_salt = (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16);
    for (int e = 0; e < 2; e++) {
        ikd_buf_init(&s->solvers_doc[e]);
        ikd_api_solvers(&s->limits, (ikd_encoding)e, &s->solvers_doc[e]);
        if (s->solvers_doc[e].failed) {
            ikd_service_destroy(s);
            return -1;
        }
    }
    return 0;
}

void ikd_service_stop(ikd_service *s) { atomic_store(&s->stop, 1); }

size_t ikd_service_held(const ikd_service *s) { return atomic_load(&((ikd_service *)s)->held); }

void ikd_service_destroy(ikd_service *s)
{
    ikd_skelstore_destroy(&s->store);
    for (int e = 0; e < 2; e++) ikd_buf_destroy(&s->solvers_doc[e]);
}

/* ---- replies ----------------------------------------------------------- */

static ikd_call_next answer(ikd_call *c, int status)
{
    c->status = status;
    return IKD_CALL_ANSWER;
}

ikd_call_next ikd_call_error(ikd_call *c, int code, const char *fmt, ...)
{
    ikd_error err;
    ikd_error_clear(&err);
    err.code = code;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err.message, sizeof err.message, fmt, ap);
        va_end(ap);
    }
    c->reply_type = NULL;
    c->outcome.error = code;
    return answer(c, ikd_reply_error_body(&c->reply, c->out_enc, &err));
}

size_t ikd_call_headers(const ikd_call *c, int draining, ikd_header out[IKD_CALL_MAX_HEADERS])
{
    size_t n = 0;
    if (c->reply.len || c->status != 204)
        out[n++] = (ikd_header){"Content-Type", c->reply_type ? c->reply_type : ikd_encoding_media_type(c->out_enc)};
    out[n++] = (ikd_header){"X-Request-Id", c->request_id};
    if (c->allow) out[n++] = (ikd_header){"Allow", c->allow};
    if (c->status == 503) out[n++] = (ikd_header){"Retry-After", "1"};
    if (c->status == 401) out[n++] = (ikd_header){"WWW-Authenticate", "Bearer realm=\"ikd\""};
    if (c->close || draining) out[n++] = (ikd_header){"Connection", "close"};
    if (c->preflight) {
        out[n++] = (ikd_header){"Access-Control-Allow-Methods", c->route->allow_all};
        out[n++] = (ikd_header){"Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, X-Request-Id"};
        out[n++] = (ikd_header){"Access-Control-Max-Age", "600"};
    }
    if (ikd_guard_cors(&c->svc->guard)) {
        out[n++] = (ikd_header){"Vary", "Origin"};
        if (c->cors_ok) {
            out[n++] = (ikd_header){"Access-Control-Allow-Origin", c->svc->guard.cors_any ? "*" : c->origin};
            out[n++] = (ikd_header){"Access-Control-Expose-Headers", "X-Request-Id, Retry-After"};
        }
    }
    return n;
}

int ikd_call_route_slot(const ikd_call *c) { return c->route ? (int)c->route->id : IKD_ROUTE__COUNT; }

/* ---- the head ---------------------------------------------------------- */

void ikd_call_init(ikd_call *c, ikd_service *s, unsigned long long now)
{
    memset(c, 0, sizeof *c);
    c->svc = s;
    c->t_start = now;
    if (s->deadline_ms > 0) c->deadline_ns = now + (unsigned long long)s->deadline_ms * 1000000ull;
    ikd_buf_init(&c->body);
    ikd_buf_init(&c->reply);
    ikd_request_init(&c->req);
    c->in_enc = c->out_enc = IKD_ENC_JSON;
}

void ikd_call_destroy(ikd_call *c)
{
    ikd_budget_release(c, c->charged);
    ikd_buf_destroy(&c->body);
    ikd_buf_destroy(&c->reply);
    ikd_request_destroy(&c->req);
    free(c->slices);
    c->slices = NULL;
}

/* The client's X-Request-Id when it is 1-64 characters of [0-9A-Za-z-_.:],
 * else "SALT-COUNTER" in hex. */
static void set_request_id(ikd_call *c, const char *given)
{
    if (given) {
        size_t n = strlen(given);
        int ok = n > 0 && n <= 64;
        for (size_t i = 0; ok && i < n; i++) {
            char ch = given[i];
            ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-' ||
                 ch == '_' || ch == '.' || ch == ':';
        }
        if (ok) {
            memcpy(c->request_id, given, n + 1);
            return;
        }
    }
    unsigned long id = atomic_fetch_add(&c->svc->next_id, 1);
    static const char hex[] = "0123456789abcdef";
    unsigned long parts[2] = {c->svc->id_salt & 0xfffffffful, id & 0xfffffffful};
    char *o = c->request_id; /* "%08lx-%08lx" */
    for (int p = 0; p < 2; p++) {
        for (int k = 7; k >= 0; k--) *o++ = hex[(parts[p] >> (4 * k)) & 15];
        *o++ = p ? '\0' : '-';
    }
}

static ikd_call_next head_options(ikd_call *c, const ikd_head *h)
{
    if (!c->origin[0] || !h->cors_request_method) { /* plain OPTIONS */
        c->allow = c->route->allow_all;
        return answer(c, 204);
    }
    if (!c->cors_ok) return ikd_call_error(c, IKD_E_FORBIDDEN_ORIGIN, NULL);
    c->preflight = 1;
    return answer(c, 204);
}

/* GET /v1/solvers, /healthz, /readyz, /metrics. */
/* An embedded file of the editor or client (404 with --ui off or for an
 * unknown file). */
static ikd_call_next head_asset(ikd_call *c, const char *path)
{
    const ikd_file *a = c->svc->find_file ? c->svc->find_file(path) : NULL;
    if (!a) return ikd_call_error(c, IKD_E_NOT_FOUND, c->svc->find_file ? "no such file" : "the editor is off (--ui off)");
    ikd_buf_append(&c->reply, (const char *)a->data, a->len);
    c->reply_type = a->type;
    return answer(c, c->reply.failed ? 500 : 200);
}

static ikd_call_next head_get(ikd_call *c, const char *path)
{
    ikd_service *s = c->svc;
    switch (c->route->id) {
    case IKD_ROUTE_UI: return head_asset(c, path);
    case IKD_ROUTE_HEALTHZ: return answer(c, ikd_api_healthz(&c->reply, c->out_enc));
    case IKD_ROUTE_READYZ: return answer(c, ikd_api_readyz(&c->reply, c->out_enc, s->hooks.ready(s->hooks.ctx)));
    case IKD_ROUTE_SOLVERS: {
        const ikd_buf *cat = &s->solvers_doc[c->out_enc];
        ikd_buf_append(&c->reply, cat->data, cat->len);
        return answer(c, c->reply.failed ? 500 : 200);
    }
    case IKD_ROUTE_METRICS:
        s->hooks.metrics(s->hooks.ctx, &c->reply);
        c->reply_type = "text/plain; version=0.0.4; charset=utf-8";
        return answer(c, 200);
    default: return ikd_call_error(c, IKD_E_INTERNAL, NULL);
    }
}

static ikd_call_next too_large(ikd_call *c)
{
    c->svc->hooks.rejected(c->svc->hooks.ctx, IKD_REJECT_TOO_LARGE);
    return ikd_call_error(c, IKD_E_TOO_LARGE, "the body is larger than %ld bytes (%s)", ikd_budget_body_limit(c), ikd_budget_body_flag(c));
}

/* RFC 9112's framing rules that libmicrohttpd leaves to the application;
 * IKD_CALL_READ when the head passes them. */
static ikd_call_next head_framing(ikd_call *c, const ikd_head *h)
{
    ikd_service *s = c->svc;
    c->close = c->unframed = 1; /* a refused head's body, if any, is never read */
    if (s->head_max > 0 && h->head_bytes > (size_t)s->head_max)
        return ikd_call_error(c, IKD_E_HEAD_TOO_LARGE, "the request line and headers take %zu bytes, over %ld (--conn-buffer)",
                            h->head_bytes, s->head_max);
    if (h->bad_byte) return ikd_call_error(c, IKD_E_BAD_HTTP, "a header holds a NUL or a bare CR");
    if (h->length_conflict) return ikd_call_error(c, IKD_E_BAD_HTTP, "Content-Length is given twice with different values");
    if (h->transfer_encoding) {
        if (h->content_length) return ikd_call_error(c, IKD_E_BAD_HTTP, "both Content-Length and Transfer-Encoding are given");
        const char *te = h->transfer_encoding;
        te += strspn(te, " \t");
        size_t n = strcspn(te, " \t");
        if (n != 7 || strncasecmp(te, "chunked", 7) != 0 || te[n + strspn(te + n, " \t")] != '\0')
            return ikd_call_error(c, IKD_E_NOT_IMPLEMENTED, "Transfer-Encoding '%.60s' is not supported (only chunked)",
                                h->transfer_encoding);
    }
    c->close = c->unframed = 0;
    return IKD_CALL_READ;
}

/* A clip whose Accept lists a stream type before any whole-body type is
 * streamed (frames as they are solved). */
static void set_stream(ikd_call *c, const char *accept)
{
    for (const char *p = accept; p && *p;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, ";, \t");
        if (n == strlen(IKD_CLIP_NDJSON) && strncasecmp(p, IKD_CLIP_NDJSON, n) == 0) {
            c->stream_wanted = 1, c->out_enc = IKD_ENC_JSON;
            return;
        }
        if (n == strlen(IKD_CLIP_MSGPACK_STREAM) && strncasecmp(p, IKD_CLIP_MSGPACK_STREAM, n) == 0) {
            c->stream_wanted = 1, c->out_enc = IKD_ENC_MSGPACK;
            return;
        }
        if (n == strlen(IKD_CLIP_BVH) && strncasecmp(p, IKD_CLIP_BVH, n) == 0) {
            c->bvh_wanted = 1;
            return;
        }
        if (n && (strncasecmp(p, "application/", 12) == 0 || strncmp(p, "*/*", 3) == 0)) return; /* a whole body first */
        p += strcspn(p, ",");
    }
}

/* 415 naming the Content-Type received (`type`, present: an absent one is
 * read as JSON; its media type, up to 64 characters) and the header to
 * send instead: `curl -d` alone sends application/x-www-form-urlencoded. */
static ikd_call_next media_type_error(ikd_call *c, const char *type)
{
    static const char want[] = "send Content-Type: application/json (or application/msgpack)";
    type += strspn(type, " \t"); /* as ikd_encoding_from_content_type reads it */
    char got[65];
    size_t n = strcspn(type, "; \t");
    if (n == 0) return ikd_call_error(c, IKD_E_MEDIA_TYPE, "the Content-Type is empty: %s", want);
    if (n > 64) n = 64;
    for (size_t k = 0; k < n; k++) got[k] = type[k] > 0x20 && type[k] < 0x7f ? type[k] : '?'; /* printable ASCII only */
    got[n] = 0;
    const char *curl = strcasecmp(got, "application/x-www-form-urlencoded") == 0 ? " (curl -d's default)" : "";
    return ikd_call_error(c, IKD_E_MEDIA_TYPE, "Content-Type %s%s is not accepted: %s", got, curl, want);
}

static ikd_call_next head_import(ikd_call *c, const ikd_head *h);
static ikd_call_next head_body(ikd_call *c, const ikd_head *h);

ikd_call_next ikd_call_head(ikd_call *c, const ikd_head *h)
{
    ikd_service *s = c->svc;
    c->route = ikd_route_find(h->path);
    c->out_enc = ikd_encoding_from_accept(h->accept, IKD_ENC_JSON);
    set_request_id(c, h->request_id);
    if (h->origin) snprintf(c->origin, sizeof c->origin, "%s", h->origin);
    c->cors_ok = ikd_guard_origin_allowed(&s->guard, h->origin);
    c->has_body = (h->content_length && strtoull(h->content_length, NULL, 10) > 0) || h->transfer_encoding;
    if (head_framing(c, h) != IKD_CALL_READ) return IKD_CALL_ANSWER;
    if (!c->route) return ikd_call_error(c, IKD_E_NOT_FOUND, "no such endpoint (see openapi.yaml)");
    if (strcmp(h->method, "OPTIONS") == 0) return head_options(c, h);
    if (!c->route->open && !ikd_guard_token_ok(&s->guard, h->authorization))
        return ikd_call_error(c, IKD_E_UNAUTHORIZED, "send Authorization: Bearer <token> (--api-token)");
    if (!ikd_route_allows(c->route, h->method)) {
        c->allow = c->route->allow_all;
        return ikd_call_error(c, IKD_E_METHOD, "%s takes %s", c->route->path, c->route->allow);
    }
    if (!c->route->has_body) return head_get(c, h->path);
    if (c->route->id == IKD_ROUTE_IMPORT) return head_import(c, h);
    int enc = ikd_encoding_from_content_type(h->content_type);
    if (enc < 0) {
        c->close = 1; /* the body is not read */
        return media_type_error(c, h->content_type);
    }
    c->in_enc = (ikd_encoding)enc;
    c->out_enc = ikd_encoding_from_accept(h->accept, c->in_enc);
    if (c->route->id == IKD_ROUTE_CLIP) set_stream(c, h->accept);
    return head_body(c, h);
}

/* POST /v1/import: a file of any media type an import takes; its options
 * from the query; the reply JSON unless Accept asks for MessagePack. */
static ikd_call_next head_import(ikd_call *c, const ikd_head *h)
{
    if (!ikd_import_media_ok(h->content_type)) {
        c->close = 1;
        return ikd_call_error(c, IKD_E_MEDIA_TYPE, "Content-Type %.60s is not a file POST /v1/import reads: send "
                              "application/x-bvh, model/gltf-binary, model/gltf+json, application/xml or "
                              "application/octet-stream", h->content_type);
    }
    ikd_error err;
    if (ikd_import_opts_parse(&c->import, h->args, &err) != IKD_E_OK) {
        c->outcome.error = err.code;
        c->status = ikd_reply_error_body(&c->reply, c->out_enc, &err);
        return IKD_CALL_ANSWER;
    }
    snprintf(c->import_type, sizeof c->import_type, "%s", h->content_type ? h->content_type : "");
    c->in_enc = IKD_ENC_JSON;
    return head_body(c, h);
}

/* The body's length against its limit, the queue and the memory budget. */
static ikd_call_next head_body(ikd_call *c, const ikd_head *h)
{
    ikd_service *s = c->svc;
    unsigned long long declared = 0;
    if (h->content_length) {
        char *end;
        errno = 0;
        declared = strtoull(h->content_length, &end, 10);
        if (errno || end == h->content_length || (unsigned long long)ikd_budget_body_limit(c) < declared) {
            c->close = 1;
            return too_large(c);
        }
    }
    /* a body that can only go to the pool is refused before it is read
     * when the queue is full (a small solve may still be answered here) */
    if ((c->route->id != IKD_ROUTE_SOLVE || declared > IKD_INLINE_DECODE_MAX || h->transfer_encoding) &&
        s->hooks.queue_full(s->hooks.ctx)) {
        c->close = 1;
        s->hooks.rejected(s->hooks.ctx, IKD_REJECT_QUEUE_FULL);
        return ikd_call_error(c, IKD_E_OVERLOADED, NULL);
    }
    /* a GLB's import is charged by what it decodes, known once it is read
     * (budget.c): until then only its body is */
    const char *format = c->route->id == IKD_ROUTE_IMPORT ? ikd_import_format(&c->import, h->content_type, NULL, 0) : "";
    c->decode_later = !format || !strcmp(format, "glb");
    if (declared) {
        size_t est = c->decode_later ? 0 : ikd_budget_decode_estimate(c, (size_t)declared);
        if (s->budget && (size_t)declared + est > s->budget) {
            c->close = 1;
            return ikd_budget_never_fits(c, (size_t)declared, est);
        }
        if (!ikd_budget_charge(c, (size_t)declared, 0)) {
            c->close = 1;
            return ikd_budget_over(c, (size_t)declared);
        }
        if (!c->decode_later && !ikd_budget_charge_decode(c, (size_t)declared)) {
            c->close = 1;
            return IKD_CALL_ANSWER;
        }
        c->declared = 1;
        ikd_buf_reserve(&c->body, (size_t)declared);
    }
    return IKD_CALL_READ;
}

/* ---- the body ---------------------------------------------------------- */

void ikd_call_body(ikd_call *c, const char *data, size_t n)
{
    if (ikd_call_refused(c)) return;
    if (c->body.len + n > (size_t)ikd_budget_body_limit(c)) {
        c->too_large = 1;
        ikd_buf_destroy(&c->body);
        ikd_budget_release(c, c->charged);
        return;
    }
    if (!c->declared && !ikd_budget_charge(c, n, 0)) { /* chunked: charged as it comes */
        c->over_budget = 1;
        ikd_buf_destroy(&c->body);
        ikd_budget_release(c, c->charged);
        return;
    }
    ikd_buf_append(&c->body, data, n);
}

int ikd_call_refused(const ikd_call *c) { return c->too_large || c->over_budget; }

void ikd_call_record(ikd_call *c)
{
    const ikd_service_hooks *h = &c->svc->hooks;
    if (c->outcome.solved && c->outcome.clip) {
        if (h->clip_solved) h->clip_solved(h->ctx, c->outcome.frames);
    } else if (c->outcome.solved && c->outcome.skeleton) {
        unsigned long avg = atomic_load_explicit(&c->svc->skeleton_avg_ns, memory_order_relaxed);
        double ns = c->outcome.solve_s * 1e9;
        atomic_store_explicit(&c->svc->skeleton_avg_ns, (unsigned long)((double)avg + (ns - (double)avg) / 16.0),
                              memory_order_relaxed);
        if (h->skeleton_solved) h->skeleton_solved(h->ctx, c->outcome.multi, c->outcome.goals, c->outcome.solve_s);
    } else if (c->outcome.solved) {
        h->solved(h->ctx, c->outcome.solver, c->outcome.status, c->outcome.solve_s);
    }
}

/* A skeleton solve is answered on the I/O thread that read it (as an
 * analytic solve is) while skeleton solves have lately been short: the
 * hand-off to a worker and back costs two thread wake-ups, a large share
 * of a 100 us solve. A run of long solves sends them to the pool again. */
static int skeleton_here(const ikd_call *c)
{
    const ikd_service *s = c->svc;
    if (c->route->id != IKD_ROUTE_SKELETON || s->inline_us <= 0 || s->debug_delay_ms != 0) return 0;
    if (c->body.len > IKD_INLINE_DECODE_MAX || atomic_load(&s->stop)) return 0;
    return atomic_load_explicit(&s->skeleton_avg_ns, memory_order_relaxed) < (unsigned long)s->inline_us * 1000ul;
}

/* A whole-body call's solve (or registration, or import), its record and
 * its reply's charge, on a worker or on the transport's thread. */
static void run_whole(ikd_call *c, void *worker_data)
{
    ikd_service *s = c->svc;
    const char *body = c->body.data ? c->body.data : "";
    if (c->route->id == IKD_ROUTE_SKELETONS)
        c->status = ikd_api_register(&s->limits, c->in_enc, c->out_enc, body, c->body.len, &c->reply,
                                     &c->outcome.error);
    else if (c->route->id == IKD_ROUTE_IMPORT) /* (its charge first: ikd_budget_charge_late) */
        c->status = !ikd_budget_charge_late(c) ? c->status : ikd_api_import(&s->limits, &c->import, c->import_type[0] ?
                    c->import_type : NULL, c->out_enc, body, c->body.len, &c->reply, &c->outcome.error);
    else if (c->route->id == IKD_ROUTE_SKELETON)
        c->status = ikd_api_skeleton(&s->limits, c->deadline_ns, c->in_enc, c->out_enc, body, c->body.len, &c->reply,
                                     &c->outcome);
    else if (c->req_ready)
        c->status = ikd_api_run(worker_data, &c->req, c->deadline_ns, c->out_enc, &c->reply, &c->outcome);
    else
        c->status = ikd_api_solve(worker_data, &s->limits, c->deadline_ns, c->in_enc, c->out_enc, body, c->body.len,
                                  &c->reply, &c->outcome);
    ikd_budget_decoded(c);
    ikd_call_record(c);
    ikd_budget_charge(c, c->reply.len, 1);
}

ikd_call_next ikd_call_body_end(ikd_call *c)
{
    ikd_service *s = c->svc;
    if (c->too_large) return too_large(c);
    if (c->over_budget) return ikd_budget_over(c, 0);
    if (c->body.failed) return ikd_call_error(c, IKD_E_NOMEM, "out of memory while reading the body");
    /* chunked: now its size is known (an import that may be a GLB: on the worker, run_whole) */
    if (!c->declared && !c->decode_later && !ikd_budget_charge_decode(c, c->body.len)) return IKD_CALL_ANSWER;
    if (skeleton_here(c)) return run_whole(c, NULL), IKD_CALL_ANSWER;
    if (c->route->id != IKD_ROUTE_SOLVE || c->body.len > IKD_INLINE_DECODE_MAX) return IKD_CALL_POOL;
    /* decode here; an analytic solve is answered here too (it costs less
     * than the hand-off), everything else goes to the pool decoded */
    ikd_error err;
    int rc = ikd_api_decode(&s->limits, c->in_enc, c->body.data ? c->body.data : "", c->body.len, &c->req, &err);
    ikd_budget_decoded(c);
    if (rc != IKD_E_OK) {
        c->outcome.error = err.code;
        return answer(c, ikd_reply_error_body(&c->reply, c->out_enc, &err));
    }
    c->req_ready = 1;
    ikd_solver solver = c->req.problem.solver;
    if (solver == IKD_SOLVER_AUTO) solver = ikd_solver_pick(&c->req.problem);
    if (solver != IKD_SOLVER_TWO_BONE || s->debug_delay_ms != 0) return IKD_CALL_POOL;
    ikd_pose_joint pose[3];
    ikd_api_scratch scratch = {3, pose, NULL, 0};
    run_whole(c, &scratch);
    return IKD_CALL_ANSWER;
}

/* ---- on the pool ------------------------------------------------------- */

static void debug_delay(const ikd_service *s)
{
    long delay = s->debug_delay_ms;
    if (delay > 0) {
        struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* A call taken by a worker: the debug delay, then the deadline policy (a
 * request that waited in the queue past its deadline is refused). 1 when
 * it may go on. */
static int worker_start(ikd_call *c)
{
    c->t_worker = ikd_clock_ns();
    debug_delay(c->svc);
    if (atomic_load(&c->svc->stop)) {
        ikd_call_error(c, IKD_E_DRAINING, "the server stopped at the end of its shutdown grace (--shutdown-grace)");
        return 0;
    }
    if (!c->deadline_ns || ikd_clock_ns() <= c->deadline_ns) return 1;
    c->svc->hooks.rejected(c->svc->hooks.ctx, IKD_REJECT_DEADLINE);
    ikd_call_error(c, IKD_E_DEADLINE, "the request waited %.0f ms, past --deadline-ms",
                 (double)(ikd_clock_ns() - c->t_start) / 1e6);
    return 0;
}

static void solve_task(ikd_task *task, void *worker_data)
{
    ikd_call *c = (ikd_call *)task;
    ikd_service *s = c->svc;
    if (c->stream_wanted && worker_start(c)) {
        ikd_clipjob_stream(c); /* hands the call back itself */
        return;
    }
    if (!c->stream_wanted && worker_start(c)) {
        if (c->route->id == IKD_ROUTE_CLIP) {
            ikd_clipjob_whole(c); /* records and charges its own reply */
            s->hooks.finished(c);
            return;
        }
        run_whole(c, worker_data);
    }
    s->hooks.finished(c);
}

/* The last slice of a batch to finish writes the reply. */
static void slice_finished(ikd_call *c)
{
    if (atomic_fetch_sub(&c->slices_left, 1) != 1) return;
    ikd_service *s = c->svc;
    for (size_t i = 0; i < c->batch.count; i++) {
        const ikd_batch_item *it = &c->batch.items[i];
        if (it->err.code != IKD_E_OK) continue;
        if (!it->skel) {
            s->hooks.solved(s->hooks.ctx, it->res.solver, it->res.status, it->solve_us / 1e6);
        } else if (s->hooks.skeleton_solved) {
            unsigned goals[3] = {0, 0, 0};
            for (size_t g = 0; g < it->skel->req.goal_count; g++)
                if ((unsigned)it->skel->gr[g].status < 3) goals[it->skel->gr[g].status]++;
            s->hooks.skeleton_solved(s->hooks.ctx, it->skel->res.status, goals, it->solve_us / 1e6);
        }
    }
    c->status = ikd_batch_write(&c->batch, c->out_enc, &c->reply);
    if (c->status != 200) c->outcome.error = IKD_E_NOMEM;
    ikd_batch_destroy(&c->batch);
    ikd_budget_release(c, c->reply_estimate); /* the estimate charged before solving, */
    ikd_budget_charge(c, c->reply.len, 1);    /* for what the reply takes */
    s->hooks.finished(c);
}

static void slice_task(ikd_task *task, void *worker_data)
{
    ikd_call_slice *sl = (ikd_call_slice *)task;
    ikd_batch_solve(&sl->call->batch, sl->lo, sl->hi, worker_data);
    slice_finished(sl->call);
}

/* Charge the batch's reply before solving it: a reply that could never fit
 * the budget is refused with 413, one that does not fit now with 503; 0
 * then (the batch is destroyed, the answer written). */
static int charge_batch_reply(ikd_call *c)
{
    size_t est = ikd_batch_reply_size(&c->batch, c->out_enc);
    if (!ikd_budget_charge_reply(c, est, "problems", "send fewer or shorter problems")) {
        ikd_batch_destroy(&c->batch);
        return 0;
    }
    c->reply_estimate = est;
    return 1;
}

/* Decode the batch here, then spread its items over idle workers in
 * slices; slices the queue cannot take run on this worker. */
static void batch_task(ikd_task *task, void *worker_data)
{
    ikd_call *c = (ikd_call *)task;
    ikd_service *s = c->svc;
    if (!worker_start(c)) {
        s->hooks.finished(c);
        return;
    }
    int status = ikd_batch_open(&s->limits, c->deadline_ns, c->in_enc, c->out_enc, c->body.data ? c->body.data : "",
                                c->body.len, &c->batch, &c->reply);
    ikd_budget_decoded(c);
    if (status || !charge_batch_reply(c)) {
        if (status) c->status = status, c->outcome.error = c->batch.error;
        s->hooks.finished(c);
        return;
    }
    size_t n = c->batch.count, nslices = ikd_batch_slices(n, s->hooks.idle(s->hooks.ctx));
    c->slices = calloc(nslices, sizeof *c->slices);
    if (!c->slices) {
        atomic_store(&c->slices_left, 1);
        ikd_batch_solve(&c->batch, 0, n, worker_data);
        slice_finished(c);
        return;
    }
    atomic_store(&c->slices_left, (int)nslices);
    for (size_t k = 0, lo = 0; k < nslices; k++) {
        size_t hi = lo + (n - lo) / (nslices - k);
        c->slices[k] = (ikd_call_slice){{slice_task, NULL}, c, lo, hi};
        lo = hi;
    }
    /* slice 0 stays here; the others go to the pool while it has room */
    size_t inline_from = nslices;
    for (size_t k = 1; k < nslices; k++) {
        if (s->hooks.submit(s->hooks.ctx, &c->slices[k].task) != 0) {
            inline_from = k;
            break;
        }
    }
    /* run the ones the pool did not take first, then ours, so that our own
     * finishing (which may end the call) comes last */
    for (size_t k = inline_from; k < nslices; k++) slice_task(&c->slices[k].task, worker_data);
    slice_task(&c->slices[0].task, worker_data);
}

void ikd_call_submit(ikd_call *c)
{
    ikd_service *s = c->svc;
    c->task.run = c->route->id == IKD_ROUTE_BATCH ? batch_task : solve_task;
    int rc = s->hooks.submit(s->hooks.ctx, &c->task);
    if (rc == 0) return;
    s->hooks.rejected(s->hooks.ctx, rc == -1 ? IKD_REJECT_QUEUE_FULL : IKD_REJECT_DRAINING);
    ikd_call_error(c, rc == -1 ? IKD_E_OVERLOADED : IKD_E_DRAINING, NULL);
    s->hooks.finished(c);
}
