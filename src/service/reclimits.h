/* reclimits.h - limits=recording: the euler limits every frame of a BVH take keeps, in each joint's own channel order. */
#ifndef IKD_RECLIMITS_H
#define IKD_RECLIMITS_H

#include "../codec/bvh.h"
#include "ikd/skeleton.h"

#define IKD_RECLIMITS_MARGIN_DEG 10.0 /* beyond what the take does on each angle: one take is not a
                                         performer's whole range (the tracking measure's margin) */
#define IKD_RECLIMITS_MIDDLE_DEG 89.9 /* the middle angle's bound: an euler box's middle range lies
                                         inside (-90, 90) */

/* For each joint of b but the root and End Sites (js[j] is b's joint j):
 * an euler limit in the order of its rotation channels (axes it has no
 * channel for follow, in x, y, z order, at 0), each angle's range what the
 * take's frames do (ikd_limit_euler_angles of each frame's rotation,
 * degrees) widened by IKD_RECLIMITS_MARGIN_DEG, within [-180, 180] and the
 * middle angle within +-IKD_RECLIMITS_MIDDLE_DEG; an angle whose values
 * span more than 300 degrees (it wraps across +-180) gets the whole turn.
 * neutral_deg: the middle of what the take does (a wrapping angle: its
 * circular mean), so the rest pull aims at the middle of the motion, not at
 * the file's zero pose. A joint without rotation channels is fixed. A take
 * without frames changes nothing; returns the joints limited. */
size_t ikd_reclimits_bvh(const ikd_bvh *b, ikd_skeleton_joint *js);

#endif
