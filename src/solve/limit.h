/* limit.h - the limit module's rules shared inside the library (the multi-goal solver reads limits in their own terms). */
#ifndef IKD__LIMIT_H
#define IKD__LIMIT_H

#include "ikd/skeleton.h"

/* The angle of a rotation about the unit `axis` (its twist about it), in
 * (-pi, pi]: 2 atan2(q.xyz . axis, q.w). */
double ikd__twist_angle(ikd_quat q, ikd_vec3 axis);

/* 1 when deviation d keeps ball or euler limit l (by the rules of
 * ikd_limit_project, without building the projection); 0 otherwise and
 * for other types. */
int ikd__limit_inside(const ikd_limit *l, ikd_quat d);

#endif
