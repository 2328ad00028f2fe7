/* urdf.h - URDF robot descriptions read into their joint tree (origins, axes, limits), XML parsed safely. */
#ifndef IKD_URDF_H
#define IKD_URDF_H

#include <stddef.h>

#include "filewarn.h"
#include "ikd/error.h"
#include "ikd/math.h"

#define IKD_URDF_NAME_MAX 257 /* longest link or joint name kept, NUL included (a skeleton's longest, 256
                                 bytes; longer: 400) */

typedef enum { IKD_URDF_REVOLUTE, IKD_URDF_CONTINUOUS, IKD_URDF_PRISMATIC, IKD_URDF_FIXED, IKD_URDF_FLOATING,
               IKD_URDF_PLANAR } ikd_urdf_type;

typedef struct ikd_urdf_joint {
    char name[IKD_URDF_NAME_MAX];
    ikd_urdf_type type;
    char parent[IKD_URDF_NAME_MAX], child[IKD_URDF_NAME_MAX]; /* link names */
    ikd_vec3 xyz, rpy;        /* <origin>: the joint's frame in its parent link's, metres and radians (times scale: xyz) */
    ikd_vec3 axis;            /* <axis xyz>, in the joint's frame; default (1, 0, 0) */
    int has_lower, has_upper; /* <limit lower= upper=> given */
    double lower, upper;      /* radians (metres for prismatic) */
    int mimic;                /* a <mimic> element */
} ikd_urdf_joint;

typedef struct ikd_urdf {
    char name[IKD_URDF_NAME_MAX];    /* <robot name> */
    char (*links)[IKD_URDF_NAME_MAX]; /* owned */
    size_t link_count;
    ikd_urdf_joint *joints;          /* owned, in the file's order */
    size_t joint_count;
    ikd_file_warnings warnings;
    int too_large;                   /* the error was a count over max_joints */
} ikd_urdf;

/* Parse a URDF document. XML entities are never expanded (a DOCTYPE that
 * declares any is refused at once) and nothing outside the body is read.
 * Errors name the element: "robot.joint[elbow].limit", "robot.link[3]",
 * or "line 12" for XML that is not well formed. `scale` multiplies the
 * origins. More than max_joints joints: IKD_E_INVALID with too_large set.
 * Free `out` with ikd_urdf_free either way. */
int ikd_urdf_read(const char *text, size_t len, double scale, size_t max_joints, ikd_urdf *out, ikd_error *err);
void ikd_urdf_free(ikd_urdf *u);

#endif
