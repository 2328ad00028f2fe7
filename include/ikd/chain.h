/* ikd/chain.h - the joint chain model, its validation, forward kinematics and pose rotations. */
#ifndef IKD_CHAIN_H
#define IKD_CHAIN_H

#include <stddef.h>

#include "ikd/error.h"
#include "ikd/math.h"

/* Longest chain the library accepts (the server's --max-joints is at most this). */
#define IKD_MAX_JOINTS 4096

typedef enum ikd_constraint_type {
    IKD_CONSTRAINT_NONE = 0, /* the bone may point anywhere */
    IKD_CONSTRAINT_HINGE,    /* the bone turns about one axis, within [min_deg, max_deg] */
    IKD_CONSTRAINT_BALL      /* the bone stays within a cone of half-angle max_deg */
} ikd_constraint_type;

/* A limit on the bone that starts at this joint (bone i runs from joint i to
 * joint i+1), measured against the parent bone (bone i-1), or for the root
 * against `reference`. The effector (last joint) has no bone and takes no
 * constraint. */
typedef struct ikd_constraint {
    ikd_constraint_type type; /* default IKD_CONSTRAINT_NONE */
    /* Hinge axis. Frame: world, in the start pose; it turns with the parent
     * bone as the chain moves (the root's stays fixed in world). Unit: none,
     * any non-zero length (normalised by validation). Hinge only. */
    ikd_vec3 axis;
    /* Hinge: signed bend angle range about `axis`, degrees, -180 <= min_deg <=
     * max_deg <= 180; 0 = straight on from the parent bone, positive =
     * counter-clockwise seen from the axis tip. Defaults -180 and 180.
     * Ball: max_deg is the cone half-angle from the parent bone's direction,
     * degrees in [0, 180], default 180; min_deg is unused. */
    double min_deg, max_deg;
    /* Root joint only: the world-space direction the root's limits are
     * measured from (it plays the parent bone). Unit: none, non-zero.
     * Default (has_reference = 0): the root bone's start direction. */
    int has_reference;
    ikd_vec3 reference;
} ikd_constraint;

/* One joint of a chain in the start pose. */
typedef struct ikd_joint {
    ikd_vec3 position;           /* frame: world; unit: the caller's length unit; finite */
    ikd_quat rotation;           /* frame: world; unit quaternion (|q| within 1e-3 of 1,
                                    normalised by validation); default identity */
    ikd_constraint constraint;   /* default: none */
} ikd_joint;

/* One joint of a solved pose. */
typedef struct ikd_pose_joint {
    ikd_vec3 position;       /* frame: world */
    ikd_quat rotation;       /* frame: world */
    ikd_quat local_rotation; /* relative to the parent joint's world rotation; the
                                root's local rotation is its world rotation */
} ikd_pose_joint;

/* Largest accepted chain length, and distance of the target or pole from the
 * root, in the chain's unit: squares of every distance a solver computes stay
 * finite doubles below it. */
#define IKD_MAX_EXTENT 1e150

/* Smallest accepted chain length, and skeleton size when it is not 0 (the
 * longest root-to-joint path through the bones): the squares of shorter
 * distances fall below the smallest normal doubles, and lengths computed
 * from them lose their digits (a fuzzed skeleton of size 4e-162 came back
 * with a bone a fifth short). */
#define IKD_MIN_EXTENT 1e-150

/* Smallest accepted bone length relative to the longest bone of the chain;
 * shorter bones are refused as zero-length (coincident joints). */
#define IKD_MIN_BONE_RATIO 1e-9

/* Smallest accepted bone length relative to the largest coordinate of the
 * chain (absolute value): shorter bones lose their direction to rounding. */
#define IKD_MIN_BONE_PRECISION 1e-7

/* Check a chain: at least `min_joints` joints (>= 2) and at most
 * IKD_MAX_JOINTS, finite positions, non-zero bones (see IKD_MIN_BONE_RATIO
 * and IKD_MIN_BONE_PRECISION), a total length from IKD_MIN_EXTENT to below IKD_MAX_EXTENT,
 * unit rotations, well-formed constraints, none on the effector.
 * Normalises in place the rotations (accepted within 1e-3 of unit length)
 * and the constraint axes and reference directions (any non-zero length). On failure fills `err`
 * with a field path like "chain.joints[2].position" and returns its code. */
ikd_code ikd_chain_validate(ikd_joint *joints, size_t count, size_t min_joints, ikd_error *err);

/* Length of bone i (joint i to i+1) in the start pose. */
static inline double ikd_chain_bone_length(const ikd_joint *joints, size_t i)
{
    return ikd_vec3_dist(joints[i].position, joints[i + 1].position);
}

/* Sum of all bone lengths of the start pose. */
double ikd_chain_length(const ikd_joint *joints, size_t count);

/* Rotations for a pose whose positions are already in pose[i].position:
 * bone i's world rotation is the start rotation turned by the shortest arc
 * from its start direction to its new one; the effector keeps its start
 * rotation, or takes `*effector_rotation` when that is not NULL. Fills
 * rotation and local_rotation of every joint. Never allocates. */
void ikd_chain_pose_rotations(const ikd_joint *joints, size_t count, const ikd_quat *effector_rotation,
                              ikd_pose_joint *pose);

/* Forward kinematics: the pose reached when each joint i takes the world
 * rotation `world[i]` (bone i is the start bone turned by
 * world[i] * conj(start rotation i)); the root stays at its start position.
 * Fills positions, rotations and local rotations. */
void ikd_chain_fk_world(const ikd_joint *joints, size_t count, const ikd_quat *world, ikd_pose_joint *pose);

/* Forward kinematics from local rotations: world[i] = world[i-1] * local[i]
 * (world[0] = local[0]), then as ikd_chain_fk_world. `scratch` holds `count`
 * quaternions. */
void ikd_chain_fk_local(const ikd_joint *joints, size_t count, const ikd_quat *local, ikd_quat *scratch,
                        ikd_pose_joint *pose);

#endif
