/* route.h - the API's routing table: paths, methods, which endpoints take a body and which need no token. */
#ifndef IKD_ROUTE_H
#define IKD_ROUTE_H

#include <stddef.h>

typedef enum ikd_route_id {
    IKD_ROUTE_SOLVE,
    IKD_ROUTE_BATCH,
    IKD_ROUTE_SKELETON,
    IKD_ROUTE_CLIP,
    IKD_ROUTE_IMPORT,
    IKD_ROUTE_SKELETONS,
    IKD_ROUTE_SOLVERS,
    IKD_ROUTE_HEALTHZ,
    IKD_ROUTE_READYZ,
    IKD_ROUTE_METRICS,
    IKD_ROUTE_UI, /* "/", and every path under /ui/ and /client/: the embedded files */
    IKD_ROUTE__COUNT
} ikd_route_id;

typedef struct ikd_route {
    const char *path;
    ikd_route_id id;
    const char *allow;     /* methods accepted besides OPTIONS */
    const char *allow_all; /* the Allow header value: allow + OPTIONS */
    int has_body;          /* POST with a body, solved on the worker pool */
    int open;              /* reachable without the API token (health checks) */
    int big_body;          /* its body limit: 0 --max-body, 1 --max-clip-body, 2 --max-import-body */
} ikd_route;

/* The route for `path` (exact match; any path under /ui/ or /client/ is
 * the UI route), or NULL (404). */
const ikd_route *ikd_route_find(const char *path);
/* All routes (IKD_ROUTE__COUNT of them, indexed by id). */
const ikd_route *ikd_route_all(void);
/* 1 when `method` is in route->allow. */
int ikd_route_allows(const ikd_route *route, const char *method);

#endif
