/* bone.h - the one rule for a bone's unit direction and for a unit direction given, shared inside the library. */
#ifndef IKD__BONE_H
#define IKD__BONE_H

#include "ikd/math.h"

/* The unit direction from `from` to `to`; `fallback` when they coincide. */
static inline ikd_vec3 ikd__bone_dir(ikd_vec3 from, ikd_vec3 to, ikd_vec3 fallback)
{
    return ikd_vec3_norm_or(ikd_vec3_sub(to, from), fallback);
}

/* `v` made unit when it is a finite, non-zero direction; 0 (v untouched)
 * when it is not one. */
static inline int ikd__unit_dir(ikd_vec3 *v)
{
    double l = ikd_vec3_len(*v);
    if (!ikd_vec3_isfinite(*v) || !(l > 1e-300) || !isfinite(l)) return 0;
    *v = ikd_vec3_norm_or(*v, *v); /* exact for the tiniest too */
    return 1;
}

#endif
