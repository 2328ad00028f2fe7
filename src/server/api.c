/* api.c - routing table and endpoint handlers of the HTTP API, as pure functions over buffers. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../codec/json.h"

static const ikd_route routes[] = {
    {"/v1/solve", IKD_ROUTE_SOLVE, "POST", 1},
    {"/healthz", IKD_ROUTE_HEALTHZ, "GET, HEAD", 0},
};

const ikd_route *ikd_api_route(const char *path)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(routes[i].path, path) == 0) return &routes[i];
    return NULL;
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

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int ikd_api_solve(ikd_api_scratch *s, const char *body, size_t len, ikd_buf *out)
{
    ikd_request req;
    ikd_error err;
    ikd_result res;
    int status = 200;
    ikd_request_init(&req);
    if (ikd_json_parse_solve(body, len, &req, &err) != IKD_E_OK) goto fail;
    if (req.problem.joint_count > s->max_joints) {
        ikd_error_set(&err, IKD_E_INVALID, "chain.joints", "at most %zu joints are allowed (--max-joints)",
                      s->max_joints);
        goto fail;
    }
    if (ikd_validate(&req.problem, &err) != IKD_E_OK) goto fail;
    double t0 = now_us();
    if (ikd_solve(&req.problem, s->work, s->work_size, s->pose, &res, &err) != IKD_E_OK) goto fail;
    double t1 = now_us();
    ikd_buf_reset(out);
    ikd_json_write_solve(out, &req, &res, s->pose, t1 - t0);
    if (out->failed) {
        ikd_error_set(&err, IKD_E_INTERNAL, "", "the solver produced a non-finite pose");
        goto fail;
    }
    ikd_request_destroy(&req);
    return status;
fail:
    ikd_request_destroy(&req);
    return error_reply(out, &err);
}

int ikd_api_healthz(ikd_buf *out)
{
    ikd_buf_reset(out);
    ikd_buf_puts(out, "{\"status\":\"ok\"}");
    return 200;
}
