/* constraint.c - hinge and ball limits measured against the parent bone, projection and checks. */
#include "ikd/constraint.h"

#include "bone.h"

/* Bone i's unit direction in a pose, and in the start pose (fallback +x). */
static ikd_vec3 bone_dir(const ikd_pose_joint *pose, size_t i)
{
    return ikd__bone_dir(pose[i].position, pose[i + 1].position, ikd_vec3_make(1, 0, 0));
}

static ikd_vec3 start_dir(const ikd_joint *joints, size_t i)
{
    return ikd__bone_dir(joints[i].position, joints[i + 1].position, ikd_vec3_make(1, 0, 0));
}

ikd_limit_frame ikd_constraint_frame_of(const ikd_constraint *c, size_t i, ikd_vec3 parent_start,
                                        ikd_vec3 parent_now)
{
    ikd_limit_frame f;
    if (i == 0) {
        f.parent_dir = c->has_reference ? c->reference : parent_start;
        f.carry = ikd_quat_identity();
    } else {
        f.parent_dir = parent_now;
        /* only a hinge's axis is carried; a ball needs the direction alone */
        f.carry = c->type == IKD_CONSTRAINT_HINGE ? ikd_quat_arc(parent_start, parent_now) : ikd_quat_identity();
    }
    return f;
}

ikd_limit_frame ikd_constraint_frame(const ikd_joint *joints, const ikd_pose_joint *pose, size_t i)
{
    size_t parent = i ? i - 1 : 0;
    return ikd_constraint_frame_of(&joints[i].constraint, i, start_dir(joints, parent),
                                   i ? bone_dir(pose, parent) : ikd_vec3_make(0, 0, 0));
}

/* The hinge's zero direction: the parent direction in the hinge plane (or,
 * when the parent bone lies along the axis, a fixed perpendicular). */
static ikd_vec3 hinge_zero(ikd_vec3 axis, ikd_vec3 parent_dir)
{
    ikd_vec3 z = ikd_vec3_reject(parent_dir, axis);
    if (ikd_vec3_len(z) < 1e-9) return ikd_vec3_any_perp(axis);
    return ikd_vec3_norm_or(z, ikd_vec3_any_perp(axis));
}

double ikd_constraint_hinge_angle(const ikd_constraint *c, ikd_limit_frame f, ikd_vec3 dir)
{
    ikd_vec3 axis = ikd_constraint_axis(c, f);
    ikd_vec3 zero = hinge_zero(axis, f.parent_dir);
    ikd_vec3 q = ikd_vec3_reject(dir, axis);
    if (ikd_vec3_len(q) < 1e-12) return 0.0;
    return atan2(ikd_vec3_dot(ikd_vec3_cross(zero, q), axis), ikd_vec3_dot(zero, q));
}

/* Distance from angle a to b along the circle, in [0, pi]. */
static double circ_dist(double a, double b)
{
    double d = fmod(fabs(a - b), 2 * IKD_PI);
    return d > IKD_PI ? 2 * IKD_PI - d : d;
}

static double clamp_hinge(const ikd_constraint *c, double theta)
{
    double lo = c->min_deg * IKD_DEG2RAD, hi = c->max_deg * IKD_DEG2RAD;
    if (theta >= lo && theta <= hi) return theta;
    /* Outside: the nearer end along the circle (keeps the sign right when the
     * range is one-sided, e.g. a knee at [0, 150] asked for -170). */
    return circ_dist(theta, lo) <= circ_dist(theta, hi) ? lo : hi;
}

ikd_vec3 ikd_constraint_apply(const ikd_constraint *c, ikd_limit_frame f, ikd_vec3 dir)
{
    switch (c->type) {
    case IKD_CONSTRAINT_HINGE: {
        ikd_vec3 axis = ikd_constraint_axis(c, f);
        ikd_vec3 zero = hinge_zero(axis, f.parent_dir);
        double theta = clamp_hinge(c, ikd_constraint_hinge_angle(c, f, dir));
        /* zero rotated by theta about axis (both unit, zero normal to axis) */
        ikd_vec3 side = ikd_vec3_cross(axis, zero);
        return ikd_vec3_add(ikd_vec3_scale(zero, cos(theta)), ikd_vec3_scale(side, sin(theta)));
    }
    case IKD_CONSTRAINT_BALL: {
        double max = c->max_deg * IKD_DEG2RAD;
        double ang = ikd_vec3_angle(f.parent_dir, dir);
        if (ang <= max) return dir;
        ikd_vec3 axis = ikd_vec3_cross(f.parent_dir, dir);
        axis = ikd_vec3_len(axis) < 1e-12 ? ikd_vec3_any_perp(f.parent_dir) : ikd_vec3_norm_or(axis, ikd_vec3_any_perp(f.parent_dir));
        return ikd_quat_rotate(ikd_quat_axis_angle(axis, max), f.parent_dir);
    }
    default:
        return dir;
    }
}

double ikd_constraint_violation(const ikd_constraint *c, ikd_limit_frame f, ikd_vec3 dir)
{
    switch (c->type) {
    case IKD_CONSTRAINT_HINGE: {
        ikd_vec3 axis = ikd_constraint_axis(c, f);
        double off_plane = fabs(IKD_PI / 2 - ikd_vec3_angle(axis, dir));
        double theta = ikd_constraint_hinge_angle(c, f, dir);
        double lo = c->min_deg * IKD_DEG2RAD, hi = c->max_deg * IKD_DEG2RAD;
        double out = (theta >= lo && theta <= hi) ? 0.0 : fmin(circ_dist(theta, lo), circ_dist(theta, hi));
        return off_plane + out;
    }
    case IKD_CONSTRAINT_BALL: {
        double ang = ikd_vec3_angle(f.parent_dir, dir) - c->max_deg * IKD_DEG2RAD;
        return ang > 0 ? ang : 0.0;
    }
    default:
        return 0.0;
    }
}

double ikd_chain_max_violation(const ikd_joint *joints, size_t count, const ikd_pose_joint *pose)
{
    double worst = 0.0;
    for (size_t i = 0; i + 1 < count; i++) {
        if (joints[i].constraint.type == IKD_CONSTRAINT_NONE) continue;
        double v = ikd_constraint_violation(&joints[i].constraint, ikd_constraint_frame(joints, pose, i),
                                            bone_dir(pose, i));
        if (!(v <= worst)) worst = v;
    }
    return worst;
}
