/* reclimits.h - limits=recording: the euler limits every frame of a take keeps (BVH, glTF), in the order that fits each joint tightest. */
#ifndef IKD_RECLIMITS_H
#define IKD_RECLIMITS_H

#include "../codec/bvh.h"
#include "ikd/skeleton.h"

#define IKD_RECLIMITS_MARGIN_DEG 10.0 /* beyond what the take does on each angle: one take is not a
                                         performer's whole range (the tracking measure's margin) */
#define IKD_RECLIMITS_MIDDLE_DEG 89.9 /* the middle angle's bound: an euler box's middle range lies
                                         inside (-90, 90) */

/* For each joint of b but the root and End Sites (js[j] is b's joint j):
 * an euler limit every frame of the take keeps. In each of the six orders
 * the box is each angle's range over the frames (ikd_limit_euler_angles,
 * degrees) widened by IKD_RECLIMITS_MARGIN_DEG, within [-180, 180], the
 * middle angle within +-IKD_RECLIMITS_MIDDLE_DEG, an angle whose values
 * span more than 300 degrees (it wraps across +-180) the whole turn; the
 * joint gets the box with the least measure in the rotation group (the
 * order of its rotation channels, axes it has no channel for after in x,
 * y, z order, where none is less; near gimbal lock a box holds far more
 * than the take did), or where one is less, the least box in the
 * principal axes of the joint's motion (the eigenvectors of its rotation
 * vectors' covariance: a hinge's motion is one axis) with them as its
 * `frame` (world: the joint's rest rotation times the axes). neutral_deg: the joint's rotation in the frame
 * nearest its mean rotation over the take (a pose the performer held), so
 * the rest pull aims at the performance, not at the file's zero pose. A joint without rotation
 * channels is fixed. A take without frames changes nothing; returns the
 * joints limited. */
size_t ikd_reclimits_bvh(const ikd_bvh *b, ikd_skeleton_joint *js);

/* The same for sampled poses (a glTF file's animations): rot holds frame
 * k's local rotation of joint j at [k * n + j], js[0..n) the skeleton
 * (parents, world rest rotations); each joint but the root gets the box
 * of its rotations relative to its rest (rest_local^-1 local), its "own"
 * order xyz, and a joint no frame turns from its rest is fixed. Returns
 * the joints limited (0 without frames). */
size_t ikd_reclimits_poses(const ikd_quat *rot, size_t frames, ikd_skeleton_joint *js, size_t n);

#endif
