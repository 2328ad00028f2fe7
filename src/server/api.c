/* api.c - routing table and endpoint handlers of the HTTP API, as pure functions over buffers. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const ikd_route routes[IKD_ROUTE__COUNT] = {
    {"/v1/solve", IKD_ROUTE_SOLVE, "POST", "POST, OPTIONS", 1, 0},
    {"/v1/solve/batch", IKD_ROUTE_BATCH, "POST", "POST, OPTIONS", 1, 0},
    {"/v1/solvers", IKD_ROUTE_SOLVERS, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 0},
    {"/healthz", IKD_ROUTE_HEALTHZ, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 1},
    {"/readyz", IKD_ROUTE_READYZ, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 1},
    {"/metrics", IKD_ROUTE_METRICS, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 0},
};

const ikd_route *ikd_api_route(const char *path)
{
    for (size_t i = 0; i < IKD_ROUTE__COUNT; i++)
        if (strcmp(routes[i].path, path) == 0) return &routes[i];
    return NULL;
}

const ikd_route *ikd_api_routes(size_t *count)
{
    *count = IKD_ROUTE__COUNT;
    return routes;
}

int ikd_api_method_allowed(const ikd_route *route, const char *method)
{
    size_t n = strlen(method);
    const char *p = route->allow;
    while (*p) {
        size_t len = strcspn(p, ", ");
        if (len == n && strncmp(p, method, n) == 0) return 1;
        p += len;
        p += strspn(p, ", ");
    }
    return 0;
}

int ikd_api_scratch_init(ikd_api_scratch *s, size_t max_joints)
{
    memset(s, 0, sizeof *s);
    s->max_joints = max_joints;
    s->pose = calloc(max_joints, sizeof *s->pose);
    s->work_size = ikd_workspace_size(max_joints);
    s->work = s->work_size ? malloc(s->work_size) : NULL;
    if (!s->pose || (s->work_size && !s->work)) {
        ikd_api_scratch_destroy(s);
        return -1;
    }
    return 0;
}

void ikd_api_scratch_destroy(ikd_api_scratch *s)
{
    free(s->pose);
    free(s->work);
    memset(s, 0, sizeof *s);
}

int ikd_api_error_body(ikd_buf *out, ikd_encoding enc, const ikd_error *err)
{
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_reply_error(&e, err);
    return ikd_code_http_status(err->code);
}

int ikd_api_error(ikd_buf *out, ikd_encoding enc, ikd_code code, const char *field, const char *fmt, ...)
{
    ikd_error err;
    ikd_error_set(&err, code, field, NULL);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err.message, sizeof err.message, fmt, ap);
        va_end(ap);
    }
    return ikd_api_error_body(out, enc, &err);
}

/* A fresh request whose default iteration cap respects --max-iterations. */
static void request_init(ikd_request *req, const ikd_api_limits *lim)
{
    ikd_request_init(req);
    if (req->problem.options.max_iterations > lim->max_iterations)
        req->problem.options.max_iterations = lim->max_iterations;
}

/* The server's limits on a decoded request, then the library's validation;
 * for batch item `item` (>= 0) error fields get "problems[item]" in front. */
static ikd_code check_request(ikd_request *req, const ikd_api_limits *lim, long item, ikd_error *err)
{
    ikd_code rc;
    if (req->problem.joint_count > lim->max_joints)
        rc = ikd_error_set(err, IKD_E_INVALID, "chain.joints", "at most %zu joints are allowed (--max-joints)",
                           lim->max_joints);
    else if (req->problem.options.max_iterations > lim->max_iterations)
        rc = ikd_error_set(err, IKD_E_INVALID, "options.max_iterations",
                           "must be an integer in [1, %d] (--max-iterations)", lim->max_iterations);
    else
        rc = ikd_validate(&req->problem, err);
    if (rc && item >= 0) {
        char inner[IKD_ERROR_FIELD_MAX];
        memcpy(inner, err->field, sizeof inner);
        int n = snprintf(err->field, sizeof err->field, "problems[%ld]", item);
        size_t room = sizeof err->field - 1 - (size_t)n, k = inner[0] ? strlen(inner) : 0;
        if (k && room > 1) {
            err->field[n++] = '.';
            room--;
            if (k > room) k = room;
            memcpy(err->field + n, inner, k);
            err->field[n + (int)k] = '\0';
        }
    }
    return rc;
}

static double elapsed_us(unsigned long long t0) { return (double)(ikd_clock_ns() - t0) / 1e3; }

ikd_code ikd_api_decode(const ikd_api_limits *lim, ikd_encoding enc, const char *body, size_t len, ikd_request *req,
                        ikd_error *err)
{
    ikd_doc doc;
    request_init(req, lim);
    ikd_code rc = ikd_doc_load(&doc, enc, body, len, err);
    if (rc == IKD_E_OK) rc = ikd_decode_solve(doc.root, -1, req, err);
    ikd_doc_free(&doc);
    if (rc == IKD_E_OK) rc = check_request(req, lim, -1, err);
    return rc;
}

int ikd_api_run(ikd_api_scratch *s, ikd_request *req, unsigned long long deadline_ns, ikd_encoding out_enc,
                ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_error err;
    ikd_result res;
    if (outcome) outcome->solved = 0;
    req->problem.deadline_ns = deadline_ns;
    unsigned long long t0 = ikd_clock_ns();
    if (ikd_solve(&req->problem, s->work, s->work_size, s->pose, &res, &err) != IKD_E_OK)
        return ikd_api_error_body(out, out_enc, &err);
    double us = elapsed_us(t0);
    if (outcome) *outcome = (ikd_api_outcome){1, res.solver, res.status, us / 1e6};
    ikd_emitter e;
    ikd_emit_reply(&e, out_enc, out);
    ikd_reply_solve(&e, req, &res, s->pose, us);
    if (out->failed) return ikd_api_error(out, out_enc, IKD_E_INTERNAL, "", "the reply could not be encoded");
    return 200;
}

int ikd_api_solve(ikd_api_scratch *s, const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                  ikd_encoding out_enc, const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_request req;
    ikd_error err;
    int status;
    if (outcome) outcome->solved = 0;
    if (ikd_api_decode(lim, in_enc, body, len, &req, &err) != IKD_E_OK)
        status = ikd_api_error_body(out, out_enc, &err);
    else
        status = ikd_api_run(s, &req, deadline_ns, out_enc, out, outcome);
    ikd_request_destroy(&req);
    return status;
}

int ikd_api_batch_open(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                       ikd_encoding out_enc, const char *body, size_t len, ikd_batch *b, ikd_buf *out)
{
    ikd_error err;
    ikd_doc doc;
    ikd_val items;
    int status = 0;
    memset(b, 0, sizeof *b);
    b->deadline_ns = deadline_ns;
    if (ikd_doc_load(&doc, in_enc, body, len, &err) != IKD_E_OK || ikd_decode_batch(doc.root, &items, &err) != IKD_E_OK) {
        status = ikd_api_error_body(out, out_enc, &err);
        goto done;
    }
    b->count = items.ops->size(items.v);
    if (b->count > lim->max_batch) {
        status = ikd_api_error(out, out_enc, IKD_E_TOO_LARGE, "problems",
                               "at most %zu problems per batch (--max-batch), got %zu", lim->max_batch, b->count);
        b->count = 0;
        goto done;
    }
    size_t joints = 0;
    b->items = malloc((b->count ? b->count : 1) * sizeof *b->items); /* every item is set up below */
    b->joints.cap = 3 * b->count;
    b->joints.joints = malloc((b->joints.cap ? b->joints.cap : 1) * sizeof *b->joints.joints);
    if (!b->items || !b->joints.joints) {
        b->count = 0; /* no item set up yet: nothing for destroy to walk */
        goto nomem;
    }
    ikd_request fresh; /* set up once, copied into every item */
    request_init(&fresh, lim);
    fresh.pool = &b->joints;
    for (size_t i = 0; i < b->count; i++) {
        ikd_batch_item *it = &b->items[i];
        it->req = fresh;
        ikd_error_clear(&it->err);
        if (ikd_decode_solve(ikd_val_at(items, i), (long)i, &it->req, &it->err) == IKD_E_OK)
            check_request(&it->req, lim, (long)i, &it->err);
        if (it->err.code == IKD_E_OK) joints += it->req.problem.joint_count;
    }
    /* not zeroed: ikd_solve writes every joint of an item it solves, and items
     * that fail are answered with their error, never their pose */
    b->poses = malloc((joints ? joints : 1) * sizeof *b->poses);
    if (!b->poses) goto nomem;
    for (size_t i = 0, at = 0; i < b->count; i++) {
        if (b->items[i].err.code != IKD_E_OK) continue;
        b->items[i].pose = b->poses + at;
        at += b->items[i].req.problem.joint_count;
    }
    goto done;
nomem:
    ikd_api_batch_destroy(b);
    status = ikd_api_error(out, out_enc, IKD_E_NOMEM, "", NULL);
done:
    ikd_doc_free(&doc);
    return status;
}

void ikd_api_batch_solve(ikd_batch *b, size_t lo, size_t hi, ikd_api_scratch *s)
{
    unsigned long long t0 = ikd_clock_ns(); /* one clock read per item: each solve ends where the next begins */
    for (size_t i = lo; i < hi && i < b->count; i++) {
        ikd_batch_item *it = &b->items[i];
        if (it->err.code != IKD_E_OK) continue;
        it->req.problem.deadline_ns = b->deadline_ns;
        ikd_solve(&it->req.problem, s->work, s->work_size, it->pose, &it->res, &it->err);
        unsigned long long t1 = ikd_clock_ns();
        it->solve_us = (double)(t1 - t0) / 1e3;
        t0 = t1;
    }
}

int ikd_api_batch_write(const ikd_batch *b, ikd_encoding out_enc, ikd_buf *out)
{
    ikd_emitter e;
    ikd_emit_reply(&e, out_enc, out);
    /* room for a two-bone reply per item up front (about 500 bytes in
     * MessagePack, 800 in JSON): no copying as the reply grows */
    ikd_buf_reserve(out, b->count * (out_enc == IKD_ENC_MSGPACK ? 512 : 832));
    ikd_emit_map(&e, 1);
    ikd_emit_key(&e, "results");
    ikd_emit_array(&e, b->count);
    for (size_t i = 0; i < b->count; i++) {
        const ikd_batch_item *it = &b->items[i];
        if (it->err.code != IKD_E_OK) ikd_reply_error(&e, &it->err);
        else ikd_reply_solve(&e, &it->req, &it->res, it->pose, it->solve_us);
    }
    ikd_emit_end(&e);
    ikd_emit_end(&e);
    return 200;
}

void ikd_api_batch_destroy(ikd_batch *b)
{
    for (size_t i = 0; b->items && i < b->count; i++) ikd_request_destroy(&b->items[i].req);
    free(b->items);
    free(b->joints.joints);
    free(b->poses);
    memset(b, 0, sizeof *b);
}

int ikd_api_batch(ikd_api_scratch *s, const ikd_api_limits *lim, ikd_encoding in_enc, ikd_encoding out_enc,
                  const char *body, size_t len, ikd_buf *out)
{
    ikd_batch b;
    int status = ikd_api_batch_open(lim, 0, in_enc, out_enc, body, len, &b, out);
    if (status) return status;
    ikd_api_batch_solve(&b, 0, b.count, s);
    status = ikd_api_batch_write(&b, out_enc, out);
    ikd_api_batch_destroy(&b);
    return status;
}

static int status_body(ikd_buf *out, ikd_encoding enc, const char *status)
{
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_emit_map(&e, 1);
    ikd_emit_key(&e, "status");
    ikd_emit_str(&e, status);
    ikd_emit_end(&e);
    return 200;
}

int ikd_api_healthz(ikd_buf *out, ikd_encoding enc) { return status_body(out, enc, "ok"); }

int ikd_api_readyz(ikd_buf *out, ikd_encoding enc, int ready)
{
    status_body(out, enc, ready ? "ready" : "not_ready");
    return ready ? 200 : 503;
}

static const struct {
    ikd_solver solver;
    const char *summary;
    const char *constraints[3];
    int min_joints, max_joints, orientation;
} solver_rows[] = {
    {IKD_SOLVER_AUTO, "picks a solver from the request: 3 free joints -> two_bone; a target rotation -> jacobian; free "
                      "chains -> ccd; constrained chains -> fabrik/jacobian/ccd in turn until one reaches",
     {"hinge", "ball", NULL}, 2, IKD_MAX_JOINTS, 1},
    {IKD_SOLVER_TWO_BONE, "analytic law-of-cosines solve of a 3-joint chain; pole picks the bend plane", {NULL}, 3, 3, 0},
    {IKD_SOLVER_CCD, "cyclic coordinate descent, effector side first; free joint pairs solved in closed form",
     {"hinge", "ball", NULL}, 2, IKD_MAX_JOINTS, 0},
    {IKD_SOLVER_FABRIK, "forward and backward reaching passes with the root fixed", {"hinge", "ball", NULL}, 2,
     IKD_MAX_JOINTS, 0},
    {IKD_SOLVER_JACOBIAN, "damped least squares (or transpose) on the joint Jacobian; solves target.rotation too",
     {"hinge", "ball", NULL}, 2, IKD_MAX_JOINTS, 1},
};

int ikd_api_solvers(const ikd_api_limits *lim, ikd_encoding enc, ikd_buf *out)
{
    size_t nopt, nrows = sizeof solver_rows / sizeof solver_rows[0];
    const ikd_option_info *opts = ikd_options_table(&nopt);
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_emit_map(&e, 2);
    ikd_emit_key(&e, "solvers");
    ikd_emit_array(&e, nrows);
    for (size_t r = 0; r < nrows; r++) {
        ikd_solver sv = solver_rows[r].solver;
        unsigned mask = sv == IKD_SOLVER_AUTO ? ~0u : (1u << sv);
        size_t nmine = 0, ncons = 0;
        for (size_t i = 0; i < nopt; i++) nmine += (opts[i].solvers & mask) != 0;
        while (solver_rows[r].constraints[ncons]) ncons++;
        size_t maxj = (size_t)solver_rows[r].max_joints < lim->max_joints ? (size_t)solver_rows[r].max_joints
                                                                          : lim->max_joints;
        ikd_emit_map(&e, 7);
        ikd_emit_key(&e, "name");
        ikd_emit_str(&e, ikd_solver_name(sv));
        ikd_emit_key(&e, "description");
        ikd_emit_str(&e, solver_rows[r].summary);
        ikd_emit_key(&e, "constraints");
        ikd_emit_array(&e, ncons);
        for (size_t c = 0; c < ncons; c++) ikd_emit_str(&e, solver_rows[r].constraints[c]);
        ikd_emit_end(&e);
        ikd_emit_key(&e, "min_joints");
        ikd_emit_int(&e, solver_rows[r].min_joints);
        ikd_emit_key(&e, "max_joints");
        ikd_emit_int(&e, (long long)maxj);
        ikd_emit_key(&e, "target_rotation");
        ikd_emit_bool(&e, solver_rows[r].orientation);
        ikd_emit_key(&e, "options");
        ikd_emit_array(&e, nmine);
        for (size_t i = 0; i < nopt; i++) {
            const ikd_option_info *o = &opts[i];
            if (!(o->solvers & mask)) continue;
            ikd_emit_map(&e, o->type == IKD_OPT_ENUM ? 5 : 6);
            ikd_emit_key(&e, "name");
            ikd_emit_str(&e, o->name);
            ikd_emit_key(&e, "type");
            ikd_emit_str(&e, o->type == IKD_OPT_INT ? "integer" : o->type == IKD_OPT_NUMBER ? "number" : "string");
            ikd_emit_key(&e, "default");
            if (o->type == IKD_OPT_ENUM) ikd_emit_str(&e, o->choices[(int)o->def]);
            else ikd_emit_num(&e, o->def);
            if (o->type == IKD_OPT_ENUM) {
                size_t nc = 0;
                while (o->choices[nc]) nc++;
                ikd_emit_key(&e, "enum");
                ikd_emit_array(&e, nc);
                for (size_t c = 0; c < nc; c++) ikd_emit_str(&e, o->choices[c]);
                ikd_emit_end(&e);
            } else {
                double max = o->max;
                if (o->type == IKD_OPT_INT && !strcmp(o->name, "max_iterations")) max = lim->max_iterations;
                ikd_emit_key(&e, o->min_open ? "exclusive_minimum" : "minimum");
                ikd_emit_num(&e, o->min);
                ikd_emit_key(&e, o->max_open ? "exclusive_maximum" : "maximum");
                ikd_emit_num(&e, max);
            }
            ikd_emit_key(&e, "description");
            ikd_emit_str(&e, o->doc);
            ikd_emit_end(&e);
        }
        ikd_emit_end(&e);
        ikd_emit_end(&e);
    }
    ikd_emit_end(&e);
    ikd_emit_key(&e, "limits");
    ikd_emit_map(&e, 3);
    ikd_emit_key(&e, "max_joints");
    ikd_emit_int(&e, (long long)lim->max_joints);
    ikd_emit_key(&e, "max_iterations");
    ikd_emit_int(&e, lim->max_iterations);
    ikd_emit_key(&e, "max_batch");
    ikd_emit_int(&e, (long long)lim->max_batch);
    ikd_emit_end(&e);
    ikd_emit_end(&e);
    return 200;
}
