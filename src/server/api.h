/* api.h - the HTTP API as pure functions: routing table and endpoint handlers (no sockets, no MHD). */
#ifndef IKD_API_H
#define IKD_API_H

#include <stddef.h>

#include "../codec/buf.h"
#include "../codec/codec.h"
#include "../codec/request.h"
#include "ikd/solve.h"

typedef enum ikd_route_id {
    IKD_ROUTE_SOLVE,
    IKD_ROUTE_BATCH,
    IKD_ROUTE_SOLVERS,
    IKD_ROUTE_HEALTHZ,
    IKD_ROUTE_READYZ,
    IKD_ROUTE_METRICS,
    IKD_ROUTE__COUNT
} ikd_route_id;

typedef struct ikd_route {
    const char *path;
    ikd_route_id id;
    const char *allow;  /* methods accepted besides OPTIONS */
    const char *allow_all; /* the Allow header value: allow + OPTIONS */
    int has_body;       /* POST with a JSON body, solved on the worker pool */
    int open;           /* reachable without the API token (health checks) */
} ikd_route;

/* The route for `path` (exact match), or NULL (404). */
const ikd_route *ikd_api_route(const char *path);
/* All routes, for metrics labels. */
const ikd_route *ikd_api_routes(size_t *count);
/* 1 when `method` is in route->allow. */
int ikd_api_method_allowed(const ikd_route *route, const char *method);

/* Server-side limits applied on top of the library's own checks. */
typedef struct ikd_api_limits {
    size_t max_joints;       /* per chain */
    int max_iterations;      /* highest options.max_iterations */
    size_t max_batch;        /* problems per batch */
} ikd_api_limits;

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

/* What a solve did, for metrics and logs. */
typedef struct ikd_api_outcome {
    int solved;          /* 0 when the request failed before solving */
    ikd_solver solver;
    ikd_status status;
    double solve_s;
} ikd_api_outcome;

/* POST /v1/solve in two steps. Decode: parse a body in `enc`, apply the
 * server limits and ikd_validate; IKD_E_OK, or the error in `err`. */
ikd_code ikd_api_decode(const ikd_api_limits *lim, ikd_encoding enc, const char *body, size_t len, ikd_request *req,
                        ikd_error *err);
/* Run: solve a decoded request (stopping at `deadline_ns`, 0 = none) and
 * write the reply in `out_enc`. Returns the HTTP status. `outcome` may be NULL. */
int ikd_api_run(ikd_api_scratch *s, ikd_request *req, unsigned long long deadline_ns, ikd_encoding out_enc,
                ikd_buf *out, ikd_api_outcome *outcome);
/* Both steps (the whole of POST /v1/solve as a pure function). */
int ikd_api_solve(ikd_api_scratch *s, const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                  ikd_encoding out_enc, const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome);

/* POST /v1/solve/batch, in three steps so that the middle one can be spread
 * over several workers: open (decode every item; a bad item keeps its error),
 * solve any range of items, write the reply. */
typedef struct ikd_batch_item {
    ikd_request req;
    ikd_error err;     /* err.code != IKD_E_OK: this item failed */
    ikd_result res;
    ikd_pose_joint *pose;
    double solve_us;
} ikd_batch_item;

typedef struct ikd_batch {
    size_t count;
    ikd_batch_item *items;
    ikd_pose_joint *poses; /* one block for every item's pose */
    ikd_joint_pool joints; /* room for the items' joints (three each; longer chains allocate their own) */
    unsigned long long deadline_ns;
} ikd_batch;

/* 0 on success (destroy the batch later), else the HTTP status with an error
 * body in `out` (nothing to destroy). */
int ikd_api_batch_open(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                       ikd_encoding out_enc, const char *body, size_t len, ikd_batch *b, ikd_buf *out);
void ikd_api_batch_solve(ikd_batch *b, size_t lo, size_t hi, ikd_api_scratch *s);
/* Returns 200. */
int ikd_api_batch_write(const ikd_batch *b, ikd_encoding out_enc, ikd_buf *out);
void ikd_api_batch_destroy(ikd_batch *b);
/* All three on one thread (tests, fuzzing). */
int ikd_api_batch(ikd_api_scratch *s, const ikd_api_limits *lim, ikd_encoding in_enc, ikd_encoding out_enc,
                  const char *body, size_t len, ikd_buf *out);

/* Write the error body of `err` and return its HTTP status. */
int ikd_api_error_body(ikd_buf *out, ikd_encoding enc, const ikd_error *err);
/* Write an error body for `code` (field may be NULL; fmt NULL = default
 * message) and return its HTTP status. */
int ikd_api_error(ikd_buf *out, ikd_encoding enc, ikd_code code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* GET /healthz, GET /readyz (503 when not ready), GET /v1/solvers. */
int ikd_api_healthz(ikd_buf *out, ikd_encoding enc);
int ikd_api_readyz(ikd_buf *out, ikd_encoding enc, int ready);
int ikd_api_solvers(const ikd_api_limits *lim, ikd_encoding enc, ikd_buf *out);

#endif
