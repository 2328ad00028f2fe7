/* ikd/skeleton.h - skeletons (joint trees with a rest pose and limits), poses, limits on a joint's deviation from rest, forward kinematics. */
#ifndef IKD_SKELETON_H
#define IKD_SKELETON_H

#include <stdatomic.h>
#include <stddef.h>

#include "ikd/chain.h"
#include "ikd/error.h"
#include "ikd/math.h"
#include "ikd/solve.h"

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
    IKD_LIMIT_EULER     /* D_j = R_o1(a) R_o2(b) R_o3(c) about the joint's rest axes (or the
                           limit's frame), each in its range */
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

/* "none", "fixed", "hinge", "ball", "euler" (a request's constraint type);
 * NULL for an unknown value. */
const char *ikd_limit_type_name(ikd_limit_type t);

/* "xyz", ...; NULL for an unknown value. Parse: 0, or -1 when unknown. */
const char *ikd_limit_order_name(ikd_euler_order o);
int ikd_limit_order_from_name(const char *name, ikd_euler_order *out);

#define IKD_LIMIT_BOUNDS 16 /* the length of ikd_limit.bounds */

typedef struct ikd_limit {
    ikd_limit_type type; /* default IKD_LIMIT_NONE */
    /* Hinge: the rotation axis (required). Ball: the twist axis (optional;
     * default the rest direction from the joint to its first child, required
     * for a joint without children). Frame: world, in the rest pose; any
     * non-zero length (normalised by validation). */
    int has_axis;
    ikd_vec3 axis;
    /* Hinge: the angle range, degrees, -360 <= min_deg <= max_deg <= 360
     * and max_deg - min_deg <= 360, 0 = rest, right-hand rule about the
     * axis; defaults -180 and 180. A range past +-180 (a robot joint's
     * [47, 313]) is continuous across 180: its angles are read within half a
     * turn of its middle.
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
    /* Euler: where the skeleton solver's rest pull takes the joint, each
     * angle in degrees within its range (JSON `neutral_deg`), when
     * has_neutral is 1. Default (has_neutral 0): the middle of each range,
     * the middle of the motion the box allows (for a box a recording keeps,
     * the middle of what the performer did; a symmetric box's middle is
     * rest). Other limit types have no such field: a hinge or a ball is
     * pulled to rest, or to the middle of a range that excludes it. */
    double euler_neutral_deg[3];
    int has_neutral;
    /* Euler: the box's axes (JSON `frame`) when has_frame is 1: a rotation,
     * world, in the rest pose, whose x, y and z axes are the axes the
     * order's letters name (anatomical axes on a joint whose own are rolled:
     * a glTF bone's, a BVH character facing 45 degrees off an axis).
     * Default (has_frame 0): the joint's rest rotation, its own axes. Unit
     * within 1e-3 (normalised by validation). The box then bounds
     * F^-1 D_j F, F the frame in the joint's rest frame (local_frame). */
    int has_frame;
    ikd_quat frame;
    /* Set by ikd_skeleton_validate: the axis in the joint's rest frame
     * (hinge axis, ball twist axis), unit. */
    ikd_vec3 local_axis;
    /* Set by ikd_skeleton_validate: an euler box's frame in the joint's
     * rest frame (rest rotation^-1 frame), unit; identity without one. */
    ikd_quat local_frame;
    /* Set by ikd_skeleton_validate: the ranges above as the sines and
     * cosines the skeleton solver's inside test compares with (computed
     * once per skeleton, not per solve); internal, no unit. */
    double bounds[IKD_LIMIT_BOUNDS];
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
    ikd_quat neutral_local; /* where the skeleton solver's rest pull takes the joint (local, unit):
                               an euler limit's neutral (its neutral_deg, else the middle of each
                               range); otherwise rest_local where its limit allows rest, else
                               rest_local turned to the middle of each range that excludes rest */
    long first_child;     /* -1 when none */
} ikd_skeleton_joint;

typedef struct ikd_skeleton {
    ikd_skeleton_joint *joints; /* caller-owned, root first */
    size_t count;               /* 1..IKD_MAX_JOINTS */
    double size;                /* set by validation: the longest root-to-joint path
                                   through the bones (the skeleton's reach from its root) */
} ikd_skeleton;

/* Check every field (paths "skeleton.joints[3].parent", ...; coordinates
 * below IKD_MAX_EXTENT, a size of 0 or at least IKD_MIN_EXTENT) and
 * fill the derived fields; normalises rotations and axes in place. */
ikd_code ikd_skeleton_validate(ikd_skeleton *s, ikd_error *err);

/* Forward kinematics: from the root's world position and every joint's
 * local rotation, each joint's world position, world rotation and local
 * rotation (as given). */
void ikd_skeleton_fk(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *local, ikd_pose_joint *out);

/* The rest pose's local rotations (rest_local of each joint). */
void ikd_skeleton_rest_pose(const ikd_skeleton *s, ikd_quat *local);

/* The pose the skeleton solver's rest pull aims at (neutral_local of each
 * joint): rest where each limit allows it, an euler box's neutral; how a
 * skeleton solve or a clip without a start pose starts. */
void ikd_skeleton_neutral_pose(const ikd_skeleton *s, ikd_quat *local);

/* The largest limit violation over the joints of a pose given by its local
 * rotations (radians). */
double ikd_skeleton_max_violation(const ikd_skeleton *s, const ikd_quat *local);

/* A linear predictor of the next pose of a motion (how /v1/solve/clip
 * starts frame k >= 2): `last` (local rotations, unit) turned on by its
 * change since `before`, each joint's turn `last[j] before[j]^-1` applied
 * once more, capped at max_deg degrees (> 0) per joint; the root likewise
 * moved on by root_last - root_before, capped at max_deg in radians times
 * the skeleton's size. Writes the prediction to out (which may be `last`)
 * and *root_out; out is unit but not limited (a solve projects its start
 * into the limits). */
void ikd_skeleton_predict(const ikd_skeleton *s, const ikd_quat *before, const ikd_quat *last, ikd_vec3 root_before,
                          ikd_vec3 root_last, double max_deg, ikd_quat *out, ikd_vec3 *root_out);

/* ---- solving a skeleton toward several goals at once (multi.c) --------- */

/* One goal on one joint. At least one of position, rotation, aim, ground;
 * ground excludes position and rotation, and aim excludes rotation and
 * ground (each sets the rotation the aim would point). */
typedef struct ikd_goal {
    size_t joint;              /* the joint's index */
    int has_position;
    ikd_vec3 position;         /* the joint's world position; finite */
    int has_rotation;
    ikd_quat rotation;         /* the joint's full world rotation (twist included); unit */
    int has_aim;
    ikd_vec3 aim_axis;         /* a direction fixed to the joint: world, in the rest pose; non-zero */
    ikd_vec3 aim_at;           /* the world point it should point at */
    int has_ground;            /* foot placement: */
    ikd_vec3 ground_point;     /* a point of the ground plane, world */
    ikd_vec3 ground_normal;    /* its normal, non-zero (normalised) */
    int has_ground_height;
    double ground_height;      /* the joint's height above the plane; default its rest
                                  height above the lowest joint of the rest pose, along up */
    int has_pole;
    ikd_vec3 pole;             /* the point the limb's middle joint (the joint's
                                  grandparent's child on the way) prefers to bend toward */
    double weight;             /* > 0, default 1: ranks goals of one priority that cannot all be met */
    int priority;              /* default 0, range [-1000000, 1000000]: goals of a higher priority
                                  are met as if the lower ones were absent; the lower ones get
                                  what is left (multi_setup.c: each lower level's rows weigh
                                  1e-3 of the level above; five levels are told apart, lower
                                  ones share the fifth) */
} ikd_goal;

#define IKD_GOAL_PRIORITY_MAX 1000000 /* goals[].priority lies in [-this, this] */

/* A goal with defaults (no target yet, weight 1, priority 0) on `joint`. */
void ikd_goal_init(ikd_goal *g, size_t joint);

typedef enum ikd_goal_status {
    IKD_GOAL_REACHED = 0,  /* within tolerance */
    IKD_GOAL_UNREACHABLE,  /* no pose meets it (farther from a fixed root than the bones reach) */
    IKD_GOAL_NOT_REACHED   /* the solve ended without meeting it */
} ikd_goal_status;

/* "reached", "unreachable", "not_reached". */
const char *ikd_goal_status_name(ikd_goal_status s);

typedef struct ikd_multi_problem {
    const ikd_skeleton *skeleton; /* validated */
    ikd_vec3 root;                /* the start pose's root position, world */
    const ikd_quat *start;        /* the start pose's local rotations; NULL = the rest pose */
    const ikd_quat *preferred;    /* the pose the pull goes toward instead of the rest pose (local
                                     rotations, unit; options.preferred, a clip's frames[k].preferred):
                                     IK layered on an animation. NULL = the rest pose */
    int has_preferred_root;       /* 1: a free root is also pulled toward preferred_root */
    ikd_vec3 preferred_root;      /* world, skeleton units */
    const ikd_quat *heading;      /* ground goals' headings: this pose's (local rotations, unit);
                                     NULL = the start pose's. ikd_motion_frame sets the frame
                                     before's solution, which a predicted start is not */
    int root_free;                /* 1: the root may translate (a pelvis); default 0 */
    ikd_vec3 up;                  /* world up, for ground goals; default (0, 1, 0) */
    const ikd_goal *goals;
    size_t goal_count;            /* 1..joint count */
    int max_iterations;           /* default 1000 (a clip's frames: IKD_CLIP_MAX_ITERATIONS, 300), range
                                     [1, 100000]: iterations of every descent together; restarts: up to
                                     max(8, max_iterations / 80) */
    double tolerance;             /* position error counted as met, skeleton units; default 1e-4 */
    double rotation_tolerance_deg;/* rotation and aim error counted as met; default 0.1 */
    double rest_pull;             /* [0, 1], default 0.1: how strongly the freedom the goals
                                     leave is pulled toward the rest pose; 0 = off */
    double damping;               /* damped least squares factor (times the goals' error),
                                     default 0.25, [0, 100] */
    double soften;                /* (0, 1], default 1 (off): soft IK for two-bone limbs (as
                                     ikd_options.soften): a position goal on a limb's end
                                     (its joint's parent and grandparent: knee and hip,
                                     elbow and shoulder) beyond soften x the limb's reach from
                                     the upper joint is eased in; it is met there (status),
                                     `error` the distance to the goal itself */
    double stretch;               /* [1, 100], default 1 (off): two-bone limbs (as
                                     ikd_options.stretch): a position goal on a limb's end
                                     that the solve leaves beyond the limb's reach (or
                                     softening eases in) is met by lengthening both bones of
                                     the limb alike about its upper joint, up to this factor;
                                     the joints below move with them (pose positions; local
                                     rotations and every other bone unchanged) */
    double pull_max_deg;          /* [0, 180] degrees, default 0 (no bound): the most the rest
                                     pull may turn any joint in this solve (its steps near the
                                     goals, each capped at what is left); once spent, the solve
                                     meets the goals without the pull and stops. Joints on no
                                     goal's path turn toward rest by at most this. For frames
                                     solved one from the last (a clip): where the pull's nearest
                                     pose jumps (a fold: a straight knee that must bend, an arm
                                     trading twist), the pose gets there over several frames
                                     instead of in one. ikd_motion (ikd/motion.h) sets it per frame */
    unsigned long long deadline_ns; /* as ikd_problem.deadline_ns; 0 = none */
    const atomic_int *cancel;     /* as ikd_problem.cancel; NULL = none */
    int stiffness;                /* options.stiffness: IKD_STIFFNESS_EQUAL (default) or
                                     IKD_STIFFNESS_RANGE, how a step and the rest pull weigh each
                                     joint's turn. EQUAL: every radian alike. RANGE: a column whose
                                     range spans r < 180 degrees costs (180 / r)^2 what a free one
                                     does, so joints with narrow limits move least (motion capture
                                     tracked with limits derived from the recording; docs/solvers.md,
                                     "Joint stiffness") */
} ikd_multi_problem;

/* ikd_multi_problem.stiffness (options.stiffness: "equal", "range") */
enum { IKD_STIFFNESS_EQUAL, IKD_STIFFNESS_RANGE };

void ikd_multi_init(ikd_multi_problem *p);

/* Check the goals and options (field paths "goals[1].joint", "options.rest_pull",
 * ...); normalises rotations and directions in place. The skeleton must be
 * validated already. */
ikd_code ikd_multi_validate(ikd_multi_problem *p, ikd_goal *goals, ikd_error *err);

typedef enum ikd_multi_status {
    IKD_MULTI_REACHED = 0, /* every goal met */
    IKD_MULTI_PARTIAL,     /* some goal not met (see each goal's status) */
    IKD_MULTI_DEADLINE     /* stopped at the deadline (or cancelled) */
} ikd_multi_status;

/* "reached", "partial", "deadline". */
const char *ikd_multi_status_name(ikd_multi_status s);

typedef struct ikd_goal_result {
    ikd_goal_status status;
    double error;              /* position error (aim: 0), skeleton units */
    double rotation_error_deg; /* rotation or aim error, degrees; 0 without either */
    double stretch;            /* the factor both bones of the goal's limb were lengthened
                                  by (options.stretch), in [1, stretch]; 1 when not */
} ikd_goal_result;

typedef struct ikd_multi_result {
    ikd_multi_status status;
    int iterations;
    ikd_vec3 root;             /* the solved root position */
} ikd_multi_result;

/* The skeleton solver's options table (the fields of ikd_multi_problem
 * from max_iterations to pull_max_deg: names, defaults, bounds) and its length,
 * IKD_MULTI_OPTION_COUNT (a compile-time constant, for callers' arrays). */
#define IKD_MULTI_OPTION_COUNT 9
const ikd_option_info *ikd_multi_options_table(size_t *count);

/* Bytes of scratch for a skeleton of `joints` joints and `goals` goals. */
size_t ikd_multi_workspace_size(size_t joints, size_t goals);

/* Solve by damped least squares over every goal at once: 3 rotational
 * degrees of freedom per joint (1 for a hinge, 0 when fixed) and the root's
 * translation when free. A joint's columns are its constraint's own axes
 * (a hinge's axis; a ball joint's twist, swing and cone tangent; an euler
 * joint's gimbal axes), so a bound stops one column, not the joint; every
 * limit holds at every iteration. The freedom the goals leave is pulled
 * toward the rest pose (in the null space of the goals) for up to 60
 * iterations once they are met. When reachable goals stay unmet (a local
 * minimum: limits, an arm's elbow on the wrong side) it descends again
 * from up to max(8, max_iterations / 80) fixed poses spread over the
 * limits, within max_iterations in all, and keeps the best pose. One
 * position and/or rotation goal on a chain of hinges and fixed joints from
 * a fixed root (a robot arm; no preferred pose, pole, pull bound, soften,
 * stretch or range stiffness) is solved over the hinge angles alone
 * (src/solve/serial.c: the same damped steps and restarts, half of
 * max_iterations, then the freedom left settled to the nearest pose to
 * rest along the goal); where that does not meet it, as above with the
 * iterations left. Writes the pose (local rotations, and
 * each joint's world position and rotation) and each goal's result. Never
 * allocates; deterministic; honours the deadline. */
ikd_code ikd_multi_solve(const ikd_multi_problem *p, void *work, size_t work_size, ikd_quat *local,
                         ikd_pose_joint *pose, ikd_goal_result *goal_results, ikd_multi_result *res, ikd_error *err);

#endif
