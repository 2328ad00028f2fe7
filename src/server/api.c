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

int ikd_api_json_content_type(const char *ct)
{
    if (!ct) return 1; /* absent: assume JSON (curl --data-binary without -H) */
    while (*ct == ' ' || *ct == '\t') ct++;
    size_t n = strcspn(ct, "; \t");
    return n == strlen("application/json") && strncasecmp(ct, "application/json", n) == 0;
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

static int error_reply(ikd_buf *out, const ikd_error *err)
{
    ikd_buf_reset(out);
    ikd_json_write_error(out, err);
    return ikd_code_http_status(err->code);
}

int ikd_api_error(ikd_buf *out, ikd_code code, const char *field, const char *fmt, ...)
{
    ikd_error err;
    ikd_error_set(&err, code, field, NULL);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err.message, sizeof err.message, fmt, ap);
        va_end(ap);
    }
    return error_reply(out, &err);
}

/* The server's limits on a decoded request, then the library's validation. */
static ikd_code check_request(ikd_request *req, const ikd_api_limits *lim, ikd_error *err)
{
    if (req->problem.joint_count > lim->max_joints)
        return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "at most %zu joints are allowed (--max-joints)",
                             lim->max_joints);
    if (req->problem.options.max_iterations > lim->max_iterations)
        return ikd_error_set(err, IKD_E_INVALID, "options.max_iterations",
                             "must be an integer in [1, %d] (--max-iterations)", lim->max_iterations);
    return ikd_validate(&req->problem, err);
}

/* A fresh request whose default iteration cap respects --max-iterations. */
static void request_init(ikd_request *req, const ikd_api_limits *lim)
{
    ikd_request_init(req);
    if (req->problem.options.max_iterations > lim->max_iterations)
        req->problem.options.max_iterations = lim->max_iterations;
}

static double elapsed_us(unsigned long long t0) { return (double)(ikd_clock_ns() - t0) / 1e3; }

int ikd_api_solve(ikd_api_scratch *s, const ikd_api_limits *lim, unsigned long long deadline_ns, const char *body,
                  size_t len, ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_request req;
    ikd_error err;
    ikd_result res;
    if (outcome) outcome->solved = 0;
    request_init(&req, lim);
    if (ikd_json_parse_solve(body, len, &req, &err) != IKD_E_OK) goto fail;
    if (check_request(&req, lim, &err) != IKD_E_OK) goto fail;
    req.problem.deadline_ns = deadline_ns;
    unsigned long long t0 = ikd_clock_ns();
    if (ikd_solve(&req.problem, s->work, s->work_size, s->pose, &res, &err) != IKD_E_OK) goto fail;
    double us = elapsed_us(t0);
    if (outcome) *outcome = (ikd_api_outcome){1, res.solver, res.status, us / 1e6};
    ikd_buf_reset(out);
    ikd_json_write_solve(out, &req, &res, s->pose, us);
    if (out->failed) {
        ikd_error_set(&err, IKD_E_INTERNAL, "", "the reply could not be encoded");
        goto fail;
    }
    ikd_request_destroy(&req);
    return 200;
fail:
    ikd_request_destroy(&req);
    return error_reply(out, &err);
}

int ikd_api_batch_open(const ikd_api_limits *lim, unsigned long long deadline_ns, const char *body, size_t len,
                       ikd_batch *b, ikd_buf *out)
{
    ikd_error err;
    memset(b, 0, sizeof *b);
    b->deadline_ns = deadline_ns;
    if (ikd_json_batch_open(body, len, &b->json, &err) != IKD_E_OK) return error_reply(out, &err);
    b->count = b->json.count;
    if (b->count > lim->max_batch) {
        ikd_json_batch_close(&b->json);
        return ikd_api_error(out, IKD_E_TOO_LARGE, "problems", "at most %zu problems per batch (--max-batch), got %zu",
                             lim->max_batch, b->count);
    }
    size_t joints = 0;
    b->items = calloc(b->count ? b->count : 1, sizeof *b->items);
    if (!b->items) goto nomem;
    for (size_t i = 0; i < b->count; i++) {
        ikd_batch_item *it = &b->items[i];
        request_init(&it->req, lim);
        if (ikd_json_batch_item(&b->json, i, &it->req, &it->err) == IKD_E_OK &&
            check_request(&it->req, lim, &it->err) != IKD_E_OK) {
            /* prefix the library's field path with the item's place */
            char inner[IKD_ERROR_FIELD_MAX];
            memcpy(inner, it->err.field, sizeof inner);
            int n = snprintf(it->err.field, sizeof it->err.field, "problems[%zu]", i);
            size_t room = sizeof it->err.field - 1 - (size_t)n, k = inner[0] ? strlen(inner) : 0;
            if (k && room > 1) {
                it->err.field[n++] = '.';
                room--;
                if (k > room) k = room;
                memcpy(it->err.field + n, inner, k);
                it->err.field[n + (int)k] = '\0';
            }
        }
        if (it->err.code == IKD_E_OK) joints += it->req.problem.joint_count;
    }
    b->poses = calloc(joints ? joints : 1, sizeof *b->poses);
    if (!b->poses) goto nomem;
    for (size_t i = 0, at = 0; i < b->count; i++) {
        if (b->items[i].err.code != IKD_E_OK) continue;
        b->items[i].pose = b->poses + at;
        at += b->items[i].req.problem.joint_count;
    }
    return 0;
nomem:
    ikd_api_batch_destroy(b);
    return ikd_api_error(out, IKD_E_NOMEM, "", NULL);
}

void ikd_api_batch_solve(ikd_batch *b, size_t lo, size_t hi, ikd_api_scratch *s)
{
    for (size_t i = lo; i < hi && i < b->count; i++) {
        ikd_batch_item *it = &b->items[i];
        if (it->err.code != IKD_E_OK) continue;
        it->req.problem.deadline_ns = b->deadline_ns;
        unsigned long long t0 = ikd_clock_ns();
        ikd_solve(&it->req.problem, s->work, s->work_size, it->pose, &it->res, &it->err);
        it->solve_us = elapsed_us(t0);
    }
}

int ikd_api_batch_write(const ikd_batch *b, ikd_buf *out)
{
    ikd_buf_reset(out);
    ikd_buf_puts(out, "{\"results\":[");
    for (size_t i = 0; i < b->count; i++) {
        const ikd_batch_item *it = &b->items[i];
        if (i) ikd_buf_putc(out, ',');
        if (it->err.code != IKD_E_OK) ikd_json_write_error(out, &it->err);
        else ikd_json_write_solve(out, &it->req, &it->res, it->pose, it->solve_us);
    }
    ikd_buf_puts(out, "]}");
    return 200;
}

void ikd_api_batch_destroy(ikd_batch *b)
{
    for (size_t i = 0; b->items && i < b->count; i++) ikd_request_destroy(&b->items[i].req);
    free(b->items);
    free(b->poses);
    ikd_json_batch_close(&b->json);
    memset(b, 0, sizeof *b);
}

int ikd_api_batch(ikd_api_scratch *s, const ikd_api_limits *lim, const char *body, size_t len, ikd_buf *out)
{
    ikd_batch b;
    int status = ikd_api_batch_open(lim, 0, body, len, &b, out);
    if (status) return status;
    ikd_api_batch_solve(&b, 0, b.count, s);
    status = ikd_api_batch_write(&b, out);
    ikd_api_batch_destroy(&b);
    return status;
}

int ikd_api_healthz(ikd_buf *out)
{
    ikd_buf_reset(out);
    ikd_buf_puts(out, "{\"status\":\"ok\"}");
    return 200;
}

int ikd_api_readyz(ikd_buf *out, int ready)
{
    ikd_buf_reset(out);
    ikd_buf_puts(out, ready ? "{\"status\":\"ready\"}" : "{\"status\":\"not_ready\"}");
    return ready ? 200 : 503;
}

static const struct {
    ikd_solver solver;
    const char *summary;
    const char *constraints;
    int min_joints, max_joints, orientation;
} solver_rows[] = {
    {IKD_SOLVER_AUTO, "picks a solver from the request: 3 free joints -> two_bone; a target rotation -> jacobian; free "
                      "chains -> ccd; constrained chains -> fabrik/jacobian/ccd in turn until one reaches",
     "[\"hinge\",\"ball\"]", 2, IKD_MAX_JOINTS, 1},
    {IKD_SOLVER_TWO_BONE, "analytic law-of-cosines solve of a 3-joint chain; pole picks the bend plane", "[]", 3, 3, 0},
    {IKD_SOLVER_CCD, "cyclic coordinate descent, effector side first; free joint pairs solved in closed form",
     "[\"hinge\",\"ball\"]", 2, IKD_MAX_JOINTS, 0},
    {IKD_SOLVER_FABRIK, "forward and backward reaching passes with the root fixed", "[\"hinge\",\"ball\"]", 2,
     IKD_MAX_JOINTS, 0},
    {IKD_SOLVER_JACOBIAN, "damped least squares (or transpose) on the joint Jacobian; solves target.rotation too",
     "[\"hinge\",\"ball\"]", 2, IKD_MAX_JOINTS, 1},
};

int ikd_api_solvers(const ikd_api_limits *lim, ikd_buf *out)
{
    size_t nopt;
    const ikd_option_info *opts = ikd_options_table(&nopt);
    ikd_buf_reset(out);
    ikd_buf_puts(out, "{\"solvers\":[");
    for (size_t r = 0; r < sizeof solver_rows / sizeof solver_rows[0]; r++) {
        char tmp[160];
        ikd_solver sv = solver_rows[r].solver;
        size_t maxj = (size_t)solver_rows[r].max_joints < lim->max_joints ? (size_t)solver_rows[r].max_joints
                                                                          : lim->max_joints;
        ikd_buf_puts(out, r ? ",{\"name\":" : "{\"name\":");
        ikd_buf_json_string(out, ikd_solver_name(sv));
        ikd_buf_puts(out, ",\"description\":");
        ikd_buf_json_string(out, solver_rows[r].summary);
        snprintf(tmp, sizeof tmp, ",\"constraints\":%s,\"min_joints\":%d,\"max_joints\":%zu,\"target_rotation\":%s",
                 solver_rows[r].constraints, solver_rows[r].min_joints, maxj,
                 solver_rows[r].orientation ? "true" : "false");
        ikd_buf_puts(out, tmp);
        ikd_buf_puts(out, ",\"options\":[");
        int first = 1;
        for (size_t i = 0; i < nopt; i++) {
            const ikd_option_info *o = &opts[i];
            unsigned mask = sv == IKD_SOLVER_AUTO ? ~0u : (1u << sv);
            if (!(o->solvers & mask)) continue;
            ikd_buf_puts(out, first ? "{\"name\":" : ",{\"name\":");
            first = 0;
            ikd_buf_json_string(out, o->name);
            ikd_buf_puts(out, ",\"type\":");
            ikd_buf_json_string(out, o->type == IKD_OPT_INT ? "integer" : o->type == IKD_OPT_NUMBER ? "number" : "string");
            if (o->type == IKD_OPT_ENUM) {
                ikd_buf_puts(out, ",\"default\":");
                ikd_buf_json_string(out, o->choices[(int)o->def]);
                ikd_buf_puts(out, ",\"enum\":[");
                for (int c = 0; o->choices[c]; c++) {
                    if (c) ikd_buf_putc(out, ',');
                    ikd_buf_json_string(out, o->choices[c]);
                }
                ikd_buf_putc(out, ']');
            } else {
                double max = o->max;
                if (o->type == IKD_OPT_INT && !strcmp(o->name, "max_iterations")) max = lim->max_iterations;
                ikd_buf_puts(out, ",\"default\":");
                ikd_buf_json_number(out, o->def);
                ikd_buf_puts(out, o->min_open ? ",\"exclusive_minimum\":" : ",\"minimum\":");
                ikd_buf_json_number(out, o->min);
                ikd_buf_puts(out, o->max_open ? ",\"exclusive_maximum\":" : ",\"maximum\":");
                ikd_buf_json_number(out, max);
            }
            ikd_buf_puts(out, ",\"description\":");
            ikd_buf_json_string(out, o->doc);
            ikd_buf_putc(out, '}');
        }
        ikd_buf_puts(out, "]}");
    }
    char lims[160];
    snprintf(lims, sizeof lims, "],\"limits\":{\"max_joints\":%zu,\"max_iterations\":%d,\"max_batch\":%zu}}",
             lim->max_joints, lim->max_iterations, lim->max_batch);
    ikd_buf_puts(out, lims);
    return 200;
}
