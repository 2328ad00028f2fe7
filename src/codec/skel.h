/* skel.h - a decoded skeleton solve request (POST /v1/solve/skeleton): skeleton, start pose, goals, options, names. */
#ifndef IKD_SKEL_H
#define IKD_SKEL_H

#include <stddef.h>

#include "doc.h"
#include "ikd/error.h"
#include "ikd/skeleton.h"

/* Most goals in one skeleton request (the solver's system grows with them). */
#define IKD_SKEL_MAX_GOALS 64

typedef struct ikd_skel_request {
    ikd_skeleton skeleton;      /* skeleton.joints points at `joints` */
    ikd_skeleton_joint *joints; /* owned */
    char **names;               /* owned: one per joint, NULL when unnamed (NULL: none named) */
    ikd_quat *start;            /* owned: the start pose's local rotations; NULL = rest */
    ikd_goal *goals;            /* owned */
    size_t goal_count;
    ikd_multi_problem problem;  /* skeleton, goals and start point into this request */
    /* A clip (POST /v1/solve/clip): every frame's goals are in `goals`, frame
     * k's from frame_first[k] to frame_first[k + 1]; 0 frames: not a clip. */
    size_t frame_count;
    size_t *frame_first;        /* owned: frame_count + 1 */
} ikd_skel_request;

void ikd_skel_request_init(ikd_skel_request *r);
void ikd_skel_request_destroy(ikd_skel_request *r);

/* Decode a skeleton request from `root` (shapes, types, names to indices;
 * values are checked by ikd_skeleton_validate and ikd_multi_validate).
 * `item` >= 0: item `item` of a batch ("problems[item]." in front of every
 * field path). `max_joints` bounds the joint count. */
int ikd_skel_decode(ikd_val root, long item, size_t max_joints, ikd_skel_request *req, ikd_error *err);

/* Decode a clip request: the same fields with `frames` ([{"goals": [...]},
 * ...], at least one) in place of `goals`; field paths
 * "frames[k].goals[i]...". problem.goals is frame 0's. */
int ikd_clip_decode(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err);

#endif
