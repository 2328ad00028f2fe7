/* route.c - the API's routing table and method checks. */
#include "route.h"

#include <string.h>

static const ikd_route routes[IKD_ROUTE__COUNT] = {
    [IKD_ROUTE_SOLVE] = {"/v1/solve", IKD_ROUTE_SOLVE, "POST", "POST, OPTIONS", 1, 0},
    [IKD_ROUTE_BATCH] = {"/v1/solve/batch", IKD_ROUTE_BATCH, "POST", "POST, OPTIONS", 1, 0},
    [IKD_ROUTE_SKELETON] = {"/v1/solve/skeleton", IKD_ROUTE_SKELETON, "POST", "POST, OPTIONS", 1, 0},
    [IKD_ROUTE_CLIP] = {"/v1/solve/clip", IKD_ROUTE_CLIP, "POST", "POST, OPTIONS", 1, 0, 1},
    [IKD_ROUTE_IMPORT] = {"/v1/import", IKD_ROUTE_IMPORT, "POST", "POST, OPTIONS", 1, 0, 2},
    [IKD_ROUTE_SKELETONS] = {"/v1/skeletons", IKD_ROUTE_SKELETONS, "POST", "POST, OPTIONS", 1, 0, 0},
    [IKD_ROUTE_SOLVERS] = {"/v1/solvers", IKD_ROUTE_SOLVERS, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 0},
    [IKD_ROUTE_HEALTHZ] = {"/healthz", IKD_ROUTE_HEALTHZ, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 1},
    [IKD_ROUTE_READYZ] = {"/readyz", IKD_ROUTE_READYZ, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 1},
    [IKD_ROUTE_METRICS] = {"/metrics", IKD_ROUTE_METRICS, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 0},
    /* open: a browser cannot send a token to load the page; the page asks
     * for it and sends it with every API call */
    [IKD_ROUTE_UI] = {"/", IKD_ROUTE_UI, "GET, HEAD", "GET, HEAD, OPTIONS", 0, 1},
};

const ikd_route *ikd_route_find(const char *path)
{
    for (size_t i = 0; i < IKD_ROUTE__COUNT; i++)
        if (strcmp(routes[i].path, path) == 0) return &routes[i];
    if (strncmp(path, "/ui/", 4) == 0 || strncmp(path, "/client/", 8) == 0) return &routes[IKD_ROUTE_UI];
    return NULL;
}

const ikd_route *ikd_route_all(void) { return routes; }

int ikd_route_allows(const ikd_route *route, const char *method)
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
