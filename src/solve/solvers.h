/* solvers.h - internal entry points of the individual solvers, called by the dispatcher (solve.c). */
#ifndef IKD_SOLVERS_H
#define IKD_SOLVERS_H

#include "ikd/solve.h"

/* Each runs on a problem that ikd_validate accepted; never allocates. */
void ikd_two_bone_run(const ikd_problem *p, ikd_pose_joint *pose, ikd_result *res);

struct ikd_ws;
void ikd_ccd_run(const ikd_problem *p, struct ikd_ws *ws, ikd_pose_joint *pose, ikd_result *res);
void ikd_fabrik_run(const ikd_problem *p, struct ikd_ws *ws, ikd_pose_joint *pose, ikd_result *res);
void ikd_jacobian_run(const ikd_problem *p, struct ikd_ws *ws, ikd_pose_joint *pose, ikd_result *res);

#endif
