/* serial.h - the skeleton solver's path for one goal on a chain of hinges (a robot arm's flange), inside the library. */
#ifndef IKD__SERIAL_H
#define IKD__SERIAL_H

#include "ikd/skeleton.h"

/* Solves p when it is one position and/or rotation goal whose path from a
 * fixed root holds only hinges and fixed joints (at most 16 hinges), with
 * the rest pose as the pull's target, no bound on the pull and every
 * radian alike (options.stiffness "equal"): bounded Levenberg-Marquardt
 * over the hinge angles from the start pose, then from poses spread over
 * the ranges, within half of max_iterations; once met, the freedom left
 * (a 7R arm's elbow) settles toward rest. Returns 1 when it met the goal
 * (local, pose, gr and res are written as ikd_multi_solve writes them),
 * else 0 with *used the iterations it took (0 when p is not such a
 * problem): the caller solves p in the general way. Never allocates. */
int ikd__serial_solve(const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose, ikd_goal_result *gr,
                      ikd_multi_result *res, int *used);

#endif
