/* request.h - a decoded solve request: the library problem plus what only the API carries (joint names). */
#ifndef IKD_REQUEST_H
#define IKD_REQUEST_H

#include <stddef.h>

#include "ikd/solve.h"

#define IKD_NAME_MAX 256 /* longest joint name in bytes */

/* Caller-owned room for the joints of many requests (a batch's items):
 * requests that point at it take their joints from it while it lasts,
 * instead of one malloc each. */
typedef struct ikd_joint_pool {
    ikd_joint *joints;
    size_t cap, used;
} ikd_joint_pool;

typedef struct ikd_request {
    ikd_problem problem;  /* problem.joints points into `joints` */
    ikd_joint *joints;    /* joint_count entries: owned, or from `pool` */
    char **names;         /* owned array of owned strings, NULL until a joint is named (NULL = unnamed) */
    ikd_joint_pool *pool; /* optional, set by the caller before decoding; not owned */
    int pooled;           /* `joints` came from `pool` */
} ikd_request;

void ikd_request_init(ikd_request *r);
/* Free what the request owns; safe on an initialised or destroyed request. */
void ikd_request_destroy(ikd_request *r);
/* Allocate `count` joints (default-initialised), from `pool` when it has room.
 * -1 on failure. */
int ikd_request_alloc_joints(ikd_request *r, size_t count);
/* Name joint i (a copy of name[0..len), the name slots made on first use). -1 on failure. */
int ikd_request_set_name(ikd_request *r, size_t i, const char *name, size_t len);

#endif
