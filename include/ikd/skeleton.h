/* ikd/skeleton.h - skeletons (joint trees with a rest pose and limits), poses, limits on a joint's deviation from rest, forward kinematics. */
#ifndef IKD_SKELETON_H
#define IKD_SKELETON_H

#include <stddef.h>

#include "ikd/chain.h"
#include "ikd/error.h"
#include "ikd/math.h"

/* The model of DESIGN.md "Skeletons, clips and the editor". A skeleton is
 * its rest pose: every joint's world position and rotation, and its parent.
 * A pose is the root's world position and every joint's local rotation
 * (relative to its parent's world rotation; the root's is its world
 * rotation). A child's offset from its parent is fixed in the parent's
 * frame. A joint's deviation D_j = rest_local_j^-1 local_j is its rotation
 * relative to rest, in its own rest frame; limits bound D_j. */

typedef enum ikd_limit_type {
    IKD_LIMIT_NONE = 0, /* free */
    IKD_LIMIT_FIXED,    /* D_j is the identity */
    IKD_LIMIT_HINGE,    /* D_j turns about `axis` by an angle in [min_deg, max_deg] */
    IKD_LIMIT_BALL,     /* swing-twist of D_j about the twist axis: swing <= max_deg,
                           twist in [twist_min_deg, twist_max_deg] */
    IKD_LIMIT_EULER     /* D_j = R_o1(a) R_o2(b) R_o3(c) about the joint's rest axes, each in its range */
} ikd_limit_type;

/* The six intrinsic orders: the letters are the axes of the joint's rest
 * frame, applied left to right (D = R_first R_second R_third). */
typedef enum ikd_euler_order {
    IKD_EULER_XYZ = 0,
    IKD_EULER_XZY,
    IKD_EULER_YXZ,
    IKD_EULER_YZX,
    IKD_EULER_ZXY,
    IKD_EULER_ZYX
} ikd_euler_order;

/* "xyz", ...; NULL for an unknown value. Parse: 0, or -1 when unknown. */
const char *ikd_limit_order_name(ikd_euler_order o);
int ikd_limit_order_from_name(const char *name, ikd_euler_order *out);

typedef struct ikd_limit {
    ikd_limit_type type; /* default IKD_LIMIT_NONE */
    /* Hinge: the rotation axis (required). Ball: the twist axis (optional;
     * default the rest direction from the joint to its first child, required
     * for a joint without children). Frame: world, in the rest pose; any
     * non-zero length (normalised by validation). */
    int has_axis;
    ikd_vec3 axis;
    /* Hinge: the angle range, degrees, -180 <= min_deg <= max_deg <= 180,
     * 0 = rest, right-hand rule about the axis; defaults -180 and 180.
     * Ball: max_deg is the largest swing from the twist axis, degrees in
     * [0, 180], default 180; min_deg unused. */
    double min_deg, max_deg;
    /* Ball: twist about the twist axis, degrees, -180 <= min <= max <= 180,
     * defaults -180 and 180. */
    double twist_min_deg, twist_max_deg;
    /* Euler: the order and each angle's range in the order's letter
     * sequence, degrees in [-180, 180] (min <= max); the middle angle's
     * range must lie inside (-90, 90). */
    ikd_euler_order order;
    double euler_min_deg[3], euler_max_deg[3];
    /* Set by ikd_skeleton_validate: the axis in the joint's rest frame
     * (hinge axis, ball twist axis), unit. */
    ikd_vec3 local_axis;
} ikd_limit;

/* A joint limit set to its type's defaults (unlimited ranges). */
void ikd_limit_init(ikd_limit *l, ikd_limit_type type);

/* The allowed deviation closest to `d` (a unit quaternion) for limit `l`
 * (validated): hinge: the twist of d about the axis, its angle clamped to
 * the range (the nearer end along the circle); ball: swing and twist each
 * clamped; euler: each angle of d's decomposition clamped; fixed: identity;
 * none: d. Keeps the sign of w of a returned rotation >= 0. */
ikd_quat ikd_limit_project(const ikd_limit *l, ikd_quat d);

/* How far `d` is outside `l`, radians (0 when allowed): the angle between d
 * and its projection. */
double ikd_limit_violation(const ikd_limit *l, ikd_quat d);

/* The angles (radians) of `d` = R_o1(a[0]) R_o2(a[1]) R_o3(a[2]) in `order`,
 * the middle angle in [-pi/2, pi/2]; and the rotation from angles. */
void ikd_limit_euler_angles(ikd_euler_order order, ikd_quat d, double a[3]);
ikd_quat ikd_limit_euler_quat(ikd_euler_order order, const double a[3]);

/* Swing-twist: d = swing * twist, twist a rotation about the unit `axis`,
 * swing a rotation about an axis normal to it. */
void ikd_limit_swing_twist(ikd_quat d, ikd_vec3 axis, ikd_quat *swing, ikd_quat *twist);

typedef struct ikd_skeleton_joint {
    long parent;         /* index of a joint listed earlier; -1 for the root
                            (joint 0 and only it) */
    ikd_vec3 position;   /* rest pose, world; finite */
    ikd_quat rotation;   /* rest pose, world; unit (within 1e-3, normalised by
                            validation); default identity */
    ikd_limit limit;     /* default none */
    /* Set by ikd_skeleton_validate: */
    ikd_vec3 offset;      /* position relative to the parent, in the parent's rest frame */
    ikd_quat rest_local;  /* rest rotation relative to the parent's */
    long first_child;     /* -1 when none */
} ikd_skeleton_joint;

typedef struct ikd_skeleton {
    ikd_skeleton_joint *joints; /* caller-owned, root first */
    size_t count;               /* 1..IKD_MAX_JOINTS */
    double size;                /* set by validation: the longest root-to-joint path
                                   through the bones (the skeleton's reach from its root) */
} ikd_skeleton;

/* Check every field (paths "skeleton.joints[3].parent", ...) and fill the
 * derived fields; normalises rotations and axes in place. */
ikd_code ikd_skeleton_validate(ikd_skeleton *s, ikd_error *err);

/* Forward kinematics: from the root's world position and every joint's
 * local rotation, each joint's world position, world rotation and local
 * rotation (as given). */
void ikd_skeleton_fk(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *local, ikd_pose_joint *out);

/* The rest pose's local rotations (rest_local of each joint). */
void ikd_skeleton_rest_pose(const ikd_skeleton *s, ikd_quat *local);

/* The largest limit violation over the joints of a pose given by its local
 * rotations (radians). */
double ikd_skeleton_max_violation(const ikd_skeleton *s, const ikd_quat *local);

#endif
