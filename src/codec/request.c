/* request.c - init, joint allocation and destruction of a decoded request. */
#include "request.h"

#include <stdlib.h>
#include <string.h>

void ikd_request_init(ikd_request *r)
{
    memset(r, 0, sizeof *r);
    ikd_problem_init(&r->problem);
}

void ikd_request_destroy(ikd_request *r)
{
    for (size_t i = 0; r->names && i < r->problem.joint_count; i++) free(r->names[i]);
    if (!r->pooled) free(r->joints);
    free(r->names);
    ikd_request_init(r);
}

/* A joint as the API's defaults leave it: at the origin, unrotated, free. */
static const ikd_joint joint_default = {.rotation = {0, 0, 0, 1}, .constraint = {.min_deg = -180.0, .max_deg = 180.0}};

int ikd_request_alloc_joints(ikd_request *r, size_t count)
{
    ikd_joint_pool *p = r->pool;
    if (p && count <= p->cap - p->used) {
        r->joints = p->joints + p->used;
        p->used += count;
        r->pooled = 1;
    } else {
        r->joints = malloc((count ? count : 1) * sizeof *r->joints);
        if (!r->joints) return -1;
    }
    for (size_t i = 0; i < count; i++) r->joints[i] = joint_default;
    r->problem.joints = r->joints;
    r->problem.joint_count = count;
    return 0;
}

int ikd_request_set_name(ikd_request *r, size_t i, const char *name, size_t len)
{
    if (!r->names && !(r->names = calloc(r->problem.joint_count, sizeof *r->names))) return -1;
    free(r->names[i]);
    if (!(r->names[i] = malloc(len + 1))) return -1;
    memcpy(r->names[i], name, len);
    r->names[i][len] = '\0';
    return 0;
}
