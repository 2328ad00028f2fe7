/* ikd/constraint.h - joint limits as DESIGN.md defines them: the closest allowed bone direction, and limit checks. */
#ifndef IKD_CONSTRAINT_H
#define IKD_CONSTRAINT_H

#include <stddef.h>

#include "ikd/chain.h"

/* The frame joint i's limits are measured in, for the current pose:
 * `parent_dir` is the parent bone's current unit direction (the root: its
 * reference direction) and `carry` the parent bone's rotation since the
 * start pose (shortest arc from its start direction; the root: identity),
 * which turns the start-pose hinge axis into the current one. */
typedef struct ikd_limit_frame {
    ikd_vec3 parent_dir;
    ikd_quat carry;
} ikd_limit_frame;

/* The limit frame of joint i (constraint `c`) from the parent bone's unit
 * start direction and its current one; for the root (i == 0) `parent_start`
 * is the root bone's start direction (the default reference) and
 * `parent_now` is not read. Only a hinge's frame carries an axis: for other
 * constraints `carry` is identity. The one rule every frame comes from. */
ikd_limit_frame ikd_constraint_frame_of(const ikd_constraint *c, size_t i, ikd_vec3 parent_start,
                                        ikd_vec3 parent_now);

/* The limit frame of joint i in `pose` (positions only are read). */
ikd_limit_frame ikd_constraint_frame(const ikd_joint *joints, const ikd_pose_joint *pose, size_t i);

/* The allowed unit direction closest to the unit direction `dir` for a bone
 * with constraint `c` in frame `f`. Hinge: `dir` projected into the plane
 * normal to the carried axis, its signed angle clamped to [min_deg, max_deg]
 * (to the nearer end along the circle). Ball: `dir` turned back onto the cone
 * of half-angle max_deg around parent_dir when outside. None: `dir`. */
ikd_vec3 ikd_constraint_apply(const ikd_constraint *c, ikd_limit_frame f, ikd_vec3 dir);

/* How far the unit direction `dir` is outside its limits, in radians
 * (0 when allowed): hinge = angle out of the hinge plane plus the angle
 * beyond [min_deg, max_deg]; ball = angle beyond max_deg. */
double ikd_constraint_violation(const ikd_constraint *c, ikd_limit_frame f, ikd_vec3 dir);

/* The signed hinge angle of `dir` in frame `f`, radians in (-pi, pi]
 * (0 = straight on from the parent bone, right-hand rule about the axis). */
double ikd_constraint_hinge_angle(const ikd_constraint *c, ikd_limit_frame f, ikd_vec3 dir);

/* The current hinge axis (unit, world) of a hinge constraint in frame `f`. */
static inline ikd_vec3 ikd_constraint_axis(const ikd_constraint *c, ikd_limit_frame f)
{
    return ikd_quat_rotate(f.carry, c->axis);
}

/* Largest violation over all joints of `pose` (radians). */
double ikd_chain_max_violation(const ikd_joint *joints, size_t count, const ikd_pose_joint *pose);

#endif
