/* api.h - the HTTP API as pure functions: routing table and endpoint handlers (no sockets, no MHD). */
#ifndef IKD_API_H
#define IKD_API_H

#include <stddef.h>

#include "../codec/buf.h"
#include "ikd/solve.h"

typedef enum ikd_route_id { IKD_ROUTE_SOLVE, IKD_ROUTE_HEALTHZ } ikd_route_id;

typedef struct ikd_route {
    const char *path;
    ikd_route_id id;
    const char *allow;  /* the Allow header value: methods accepted */
    int has_body;       /* POST with a JSON body, solved on the worker pool */
} ikd_route;

/* The route for `path` (exact match), or NULL (404). */
const ikd_route *ikd_api_route(const char *path);
/* 1 when `method` is in route->allow. */
int ikd_api_method_allowed(const ikd_route *route, const char *method);
/* 1 when a Content-Type header value (NULL = absent) is acceptable as JSON. */
int ikd_api_json_content_type(const char *content_type);

/* Per-worker scratch for solves: the pose and the solver workspace for the
 * longest allowed chain, allocated once. */
typedef struct ikd_api_scratch {
    size_t max_joints;
    ikd_pose_joint *pose;
    void *work;
    size_t work_size;
} ikd_api_scratch;

int ikd_api_scratch_init(ikd_api_scratch *s, size_t max_joints);
void ikd_api_scratch_destroy(ikd_api_scratch *s);

/* POST /v1/solve: decode, validate, solve, encode into `out`. Returns the
 * HTTP status (200, or the error's status with an error body). */
int ikd_api_solve(ikd_api_scratch *s, const char *body, size_t len, ikd_buf *out);

/* Write an error body for `code` (field may be NULL; fmt NULL = default
 * message) and return its HTTP status. */
int ikd_api_error(ikd_buf *out, ikd_code code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* GET /healthz body. Returns 200. */
int ikd_api_healthz(ikd_buf *out);

#endif
