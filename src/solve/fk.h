/* fk.h - a skeleton's forward kinematics over some of its joints, shared inside the library (the multi-goal solver's iterations). */
#ifndef IKD__FK_H
#define IKD__FK_H

#include "ikd/skeleton.h"

/* ikd_skeleton_fk over the joints with need[i] != 0 (the root always; a
 * needed joint's parent must be needed too); the others' entries of `out`
 * are left as they were. With `others`, over the joints need leaves out
 * instead (the needed ones' entries already computed). need NULL: every
 * joint (ikd_skeleton_fk). */
void ikd__skeleton_fk_some(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *local, ikd_pose_joint *out,
                           const int *need, int others);

#endif
