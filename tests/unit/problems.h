/* problems.h - generated IK problem sets (fixed seed) shared by the benchmark and the solver property tests. */
#ifndef IKD_PROBLEMS_H
#define IKD_PROBLEMS_H

#include <stddef.h>

#include "testutil.h"

typedef enum {
    PSET_FREE,  /* unconstrained 3D chains; bones up to 60 degrees off their parents */
    PSET_HINGE, /* planar hinge chains with knee-like limits [-10, 150] degrees */
    PSET_BALL   /* 3D chains with 45-degree ball cones */
} pset_kind;

const char *pset_name(pset_kind k);

/* Fill joints[n] (start pose) and *target for problem from `r`. With
 * `unreachable` the target lies beyond the chain's length (1.05 to 2 times).
 * Otherwise the target is the effector of a second pose of the same chain
 * that keeps every limit, so an exact solution exists. */
void pset_make(tu_rng *r, pset_kind kind, size_t n, int unreachable, ikd_joint *joints, ikd_vec3 *target);

#endif
