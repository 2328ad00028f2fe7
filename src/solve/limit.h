/* limit.h - the limit module's rules shared inside the library (the multi-goal solver reads limits in their own terms). */
#ifndef IKD__LIMIT_H
#define IKD__LIMIT_H

#include "ikd/skeleton.h"

/* The angle of a rotation about the unit `axis` (its twist about it), in
 * (-pi, pi]: 2 atan2(q.xyz . axis, q.w). */
double ikd__twist_angle(ikd_quat q, ikd_vec3 axis);

/* ikd_limit_euler_quat before it is made unit (a product of three unit
 * quaternions: unit up to rounding), for callers that normalise a product
 * it goes into anyway. */
ikd_quat ikd__euler_quat_product(ikd_euler_order order, const double a[3]);

/* An angle (radians, within a turn of (-pi, pi]) as (-pi, pi] holds it:
 * how twist and euler angles are given. */
double ikd__wrap_pi(double a);

/* A hinge's angle a (radians) as its range reads it: a itself where the
 * range lies within [-180, 180] degrees (the common case: nothing
 * changes), else a turned by whole turns to within half a turn of the
 * range's middle (a range past +-180 degrees, such as Kinova JACO's
 * [47, 313]: its angles are continuous across 180). */
double ikd__hinge_angle(const ikd_limit *l, double a);

/* Deviation d in euler limit l's own axes (F^-1 d F, F its local_frame),
 * and back (F e F^-1); d itself without a frame. */
static inline ikd_quat ikd__euler_in(const ikd_limit *l, ikd_quat d)
{
    return l->has_frame ? ikd_quat_mul(ikd_quat_conj(l->local_frame), ikd_quat_mul(d, l->local_frame)) : d;
}
static inline ikd_quat ikd__euler_out(const ikd_limit *l, ikd_quat e)
{
    return l->has_frame ? ikd_quat_mul(l->local_frame, ikd_quat_mul(e, ikd_quat_conj(l->local_frame))) : e;
}

/* The deviation the rest pull takes a joint to: an euler limit's neutral
 * (ikd__limit_euler_neutral); else identity (its rest) where the limit
 * allows it, else each range that excludes rest at its middle (a hinge's
 * angle, a ball's twist; a ball's swing cone always holds rest). */
ikd_quat ikd__limit_neutral(const ikd_limit *l);
/* One range's angle the pull goes to (radians; the range in degrees): 0
 * (rest) where the range holds it, else the range's middle. */
double ikd__limit_neutral_angle(double min_deg, double max_deg);
/* An euler limit's neutral angles (radians, in its order): its
 * neutral_deg when given, else the middle of each range. */
void ikd__limit_euler_neutral(const ikd_limit *l, double a[3]);

/* 1 when an euler order's axes are an even permutation of (x, y, z) (the
 * sign of its angles' matrix entries and of its middle gimbal axis). */
int ikd__euler_even(ikd_euler_order order);

/* 1 when euler limit l bounds its middle angle alone: its first and third
 * ranges are whole turns (a box that a recording's motion near gimbal
 * lock leaves open that way). Such a box is a band about the middle
 * axis, and the multi-goal solver steps the joint about orthonormal axes
 * rather than by its angles, whose rates blow up near the poles. */
int ikd__euler_banded(const ikd_limit *l);

/* 1 when deviation d keeps ball or euler limit l (by the rules of
 * ikd_limit_project, without building the projection); 0 otherwise and
 * for other types. */
int ikd__limit_inside(const ikd_limit *l, ikd_quat d);

/* A limit's bounds as the sines and cosines ikd__limit_inside_by compares
 * with, so that a solver that tests many deviations against one limit
 * computes its transcendental functions once: */
void ikd__limit_bounds(const ikd_limit *l, double b[IKD_LIMIT_BOUNDS]); /* validation keeps them in ikd_limit.bounds */

/* ikd__limit_inside(l, d) for a unit d, with l's bounds b from
 * ikd__limit_bounds, without arctangents: the same decompositions compared
 * as sines and cosines (within rounding of the angles' own comparisons);
 * the degenerate cases (a half-turn swing, gimbal lock, a twist of a half
 * turn) go to ikd__limit_inside itself. */
int ikd__limit_inside_by(const ikd_limit *l, const double b[IKD_LIMIT_BOUNDS], ikd_quat d);

#endif
