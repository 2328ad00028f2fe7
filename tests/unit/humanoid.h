/* humanoid.h - a humanoid skeleton with realistic limits and generated goal sets (fixed seeds), for the bench and tests. */
#ifndef IKD_HUMANOID_H
#define IKD_HUMANOID_H

#include <stddef.h>

#include "testutil.h"

#define HUMANOID_JOINTS 25
#define HUMANOID_MAX_GOALS 6

typedef enum {
    HSET_POSITIONS,   /* hands and feet: 4 position goals, fixed root */
    HSET_FULL,        /* hands and feet position + rotation, and a head aim */
    HSET_FREE_ROOT,   /* 4 position goals, the pelvis free to move */
    HSET_GROUND,      /* both feet on tilted planes (ground goals), free root */
    HSET_NO_LIMITS,   /* 4 position goals, every joint free */
    HSET__COUNT
} hset_kind;

const char *hset_name(hset_kind k);

/* The humanoid's joint names, index = joint. */
extern const char *const humanoid_names[HUMANOID_JOINTS];

/* One problem of set `kind`: the skeleton (in joints, validated), its goals
 * from forward kinematics of a random pose inside the limits (so they are
 * reachable), half of the skeletons turned by a random world rotation, some
 * starting from a random pose (`start` filled and *has_start = 1), and with
 * `far` one hand goal moved beyond reach (*far_goal = its index, else -1). */
typedef struct humanoid_problem {
    ikd_skeleton_joint joints[HUMANOID_JOINTS];
    ikd_skeleton skeleton;
    ikd_goal goals[HUMANOID_MAX_GOALS];
    size_t goal_count;
    ikd_quat start[HUMANOID_JOINTS];
    int has_start;
    ikd_quat target[HUMANOID_JOINTS]; /* the pose the goals came from (local rotations; the root's is rest) */
    ikd_vec3 root;
    ikd_vec3 up;   /* the skeleton's up: the world y axis turned with it */
    int root_free;
    int far_goal;
} humanoid_problem;

void humanoid_make(tu_rng *r, hset_kind kind, int far, humanoid_problem *hp);

/* Rest poses of the humanoid family. */
enum { HUMANOID_REST_T, HUMANOID_REST_A, HUMANOID_REST_SITTING };

/* A problem of set `kind` (no goal out of reach) on a rig of the humanoid
 * family: stature 0.5-2 x the bench's, the spine's, arms' and legs' bones
 * each 0.8-1.25 x, every range 0.6-1.3 x, rest pose T, A (arms 45 degrees
 * down) or sitting (thighs forward, knees bent 90 degrees), half turned by
 * a random world rotation. Returns the rest pose's name. */
const char *humanoid_family_make(tu_rng *r, hset_kind kind, humanoid_problem *hp);

/* hp said as a rig whose zero pose is a straight line (each joint's frame
 * turned so that its first child lies along its x axis): into *lr, hp's
 * rest pose said so into stand; IKD_E_OK, or an error for a ground goal
 * or an invalid result (humanoid.c). */
ikd_code humanoid_straight_line(const humanoid_problem *hp, humanoid_problem *lr, ikd_quat *stand);

/* A robot arm of `dof` (6 or 7) hinge joints (yaw, then pitch and roll
 * joints with rest-pose axes and ranges) and a fixed flange, as a skeleton
 * without branches (a chain); one goal: the flange's position and rotation
 * from forward kinematics of a random pose inside the limits; half turned
 * by a random world rotation, a quarter starting from a random pose. */
void arm_make(tu_rng *r, int dof, humanoid_problem *hp);

/* A robot arm of the arm family: `dof` hinges as URDFs give them. Each
 * joint's rest frame is turned from its parent's by quarter turns about
 * its axes (1 in 6: any rotation), its offset 0.05-0.4 along one axis of
 * the parent's frame (1 in 4 with a step across); a fixed joint before a
 * hinge 1 in 3; the hinge turns about one of its own axes, over a full
 * circle 1 in 4, else a range 90-350 degrees wide anywhere in [-180, 180]
 * (so rest may lie outside it, as the Panda's joint4); a fixed flange and
 * tool at the end; the base half the time turned in the world. One goal on
 * the tool from forward kinematics of random angles inside the ranges
 * (hp->target): position and rotation 3 in 4, else position only; the
 * start the rest pose, 1 in 4 a random pose. */
void arm_family_make(tu_rng *r, int dof, humanoid_problem *hp);

/* Clips for issue 16's coherence measures: a skeleton and `frames` frames of
 * goals from forward kinematics of a smooth periodic joint trajectory
 * (period `period` frames) inside the limits, so every frame is reachable
 * and a smooth solution exists. */
typedef enum clip_kind {
    CLIP_HUMANOID_FULL, /* the humanoid, hands and feet position + rotation */
    CLIP_HUMANOID_POS,  /* the humanoid, hands and feet positions */
    CLIP_CHAIN_FREE,    /* 8-joint chains, the end's position: free joints */
    CLIP_CHAIN_HINGE,   /* knee-like hinges, [0, 150] degrees */
    CLIP_CHAIN_BALL,    /* 45-degree balls */
    CLIP__COUNT
} clip_kind;

const char *clip_kind_name(clip_kind k);

/* A multi-goal problem on hp's skeleton (its up and root_free) toward the
 * n `goals` (validated in place: pass a copy to keep them) from `start`
 * (NULL: the rest pose) with the root at `root`; validation's code. */
ikd_code humanoid_setup(ikd_multi_problem *p, const humanoid_problem *hp, ikd_goal *goals, size_t n,
                        const ikd_quat *start, ikd_vec3 root, ikd_error *err);

typedef struct clip_problem {
    humanoid_problem hp; /* skeleton, root, up; its goals are frame 0's */
    size_t frames, goal_count;
    ikd_goal *goals;     /* [frames x goal_count], malloc'd */
    ikd_quat *truth;     /* [frames x joints]: the generating poses' local rotations */
} clip_problem;

void clip_make(tu_rng *r, clip_kind kind, size_t frames, size_t period, clip_problem *cp);
void clip_free(clip_problem *cp);

/* How far apart the joints of poses a and b (local rotations, root at
 * `root`) are: the largest distance between a joint's two positions, over
 * the skeleton's size (issue 16's loop closure asks for 1e-3). */
double clip_positions_apart(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *a, const ikd_quat *b);

#endif
