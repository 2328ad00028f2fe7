/* bone.h - the one rule for a bone's unit direction, shared by the constraints and the iterative solvers. */
#ifndef IKD__BONE_H
#define IKD__BONE_H

#include "ikd/math.h"

/* The unit direction from `from` to `to`; `fallback` when they coincide. */
static inline ikd_vec3 ikd__bone_dir(ikd_vec3 from, ikd_vec3 to, ikd_vec3 fallback)
{
    return ikd_vec3_norm_or(ikd_vec3_sub(to, from), fallback);
}

#endif
