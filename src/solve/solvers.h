/* solvers.h - internal entry points of the individual solvers, called by the dispatcher (solve.c). */
#ifndef IKD_SOLVERS_H
#define IKD_SOLVERS_H

#include "ikd/solve.h"

/* ikd_chain_validate and ikd_validate; with `fix` 0 they write nothing and
 * require rotations and axes to be unit already (within 1e-12, as
 * validation leaves them): ikd_solve's check of what it is given. The
 * chain check also gives the chain's length (`length` may be NULL). */
ikd_code ikd__chain_check(ikd_joint *joints, size_t count, size_t min_joints, int fix, double *length,
                          ikd_error *err);
ikd_code ikd__problem_check(ikd_problem *p, int fix, ikd_error *err);

/* The law of cosines for a pair of bones of lengths l1 and l2 whose free
 * end should lie `dist` from the pair's root: returns that distance clamped
 * into the pair's reach [|l1 - l2|, l1 + l2] (the closest pose when out of
 * reach), and the middle joint's distance along the root-target line
 * (`*along`, negative when folded back) and off it (`*height`, >= 0). At or
 * past a reach limit the pair is set exactly straight or folded flat. */
double ikd__two_bone_reach(double l1, double l2, double dist, double *along, double *height);
/* Soft IK and stretch for a two-bone limb of reach `reach`: the distance to
 * aim at for a target `dist` away, and in *scale the factor both bones
 * lengthen by (1 without stretch). */
double ikd__two_bone_soft(double reach, double soften, double stretch, double dist, double *scale);

/* Each runs on a problem that ikd_validate accepted; never allocates. */
void ikd__two_bone_run(const ikd_problem *p, ikd_pose_joint *pose, ikd_result *res);

struct ikd__ws;
void ikd__ccd_run(const ikd_problem *p, struct ikd__ws *ws, ikd_pose_joint *pose, ikd_result *res);
void ikd__fabrik_run(const ikd_problem *p, struct ikd__ws *ws, ikd_pose_joint *pose, ikd_result *res);
void ikd__jacobian_run(const ikd_problem *p, struct ikd__ws *ws, ikd_pose_joint *pose, ikd_result *res);

#endif
