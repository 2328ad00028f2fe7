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
    free(r->joints);
    free(r->names);
    ikd_request_init(r);
}

int ikd_request_alloc_joints(ikd_request *r, size_t count)
{
    r->joints = calloc(count ? count : 1, sizeof *r->joints);
    r->names = calloc(count ? count : 1, sizeof *r->names);
    if (!r->joints || !r->names) return -1;
    for (size_t i = 0; i < count; i++) {
        r->joints[i].rotation = ikd_quat_identity();
        r->joints[i].constraint.min_deg = -180.0;
        r->joints[i].constraint.max_deg = 180.0;
    }
    r->problem.joints = r->joints;
    r->problem.joint_count = count;
    return 0;
}
