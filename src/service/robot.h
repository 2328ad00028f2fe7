/* robot.h - a URDF robot as a skeleton: one joint per URDF joint at its frame's origin, hinges with the file's limits. */
#ifndef IKD_ROBOT_H
#define IKD_ROBOT_H

#include "../codec/urdf.h"
#include "api.h"

/* The import reply of a parsed URDF in `out`: the root link as joint 0 at
 * the origin, then every URDF joint depth first at its frame's origin with
 * that frame as its rest rotation; with `limits`, revolute joints are
 * hinges on their axis within [lower, upper] (cut to +-180 degrees, a whole
 * turn or more: unlimited), continuous ones hinges without limits, fixed
 * ones fixed, prismatic, planar and floating ones fixed at zero with a
 * warning; mimic joints are warned of. The skeleton is kept by reference.
 * IKD_E_OK, or an error naming the joint ("robot.joint[elbow].limit"). */
int ikd_robot_reply(const ikd_api_limits *lim, ikd_urdf *u, int limits, ikd_encoding enc, ikd_buf *out, ikd_error *err);

#endif
