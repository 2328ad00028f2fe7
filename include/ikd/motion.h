/* ikd/motion.h - a motion solved frame by frame: where each frame starts and how far its rest pull may turn (POST /v1/solve/clip's rule). */
#ifndef IKD_MOTION_H
#define IKD_MOTION_H

#include <stddef.h>

#include "ikd/math.h"
#include "ikd/skeleton.h"

/* A clip's frames are solved in order, each from the one before, so that
 * no joint flips between frames and goals that loop give poses that loop
 * (DESIGN.md "POST /v1/solve/clip"). The rule, the same for the server's
 * clips and a program that links the library:
 *
 * - frame 0 starts from the motion's start pose and settles fully
 *   (options.pull_max_deg 0);
 * - frame 1 starts from frame 0's solution, frame k >= 2 from frame k-1's
 *   turned on by its change since frame k-2 (ikd_skeleton_predict, at most
 *   predict_max_deg a joint; a free root likewise);
 * - frames after the first bound the rest pull by pull_max_deg a frame, so
 *   a jump of the pull's pose spreads over frames; but a cut settles fully,
 *   as frame 0 does: a frame where a position goal's target moved more
 *   than cut x the skeleton's size since the last frame's goal on the same
 *   joint (a bind pose ahead of the take, an edit), where nearness to the
 *   last frame is lost already (a goal out of reach, however far, is no
 *   cut: only the targets' moves count);
 * - frames after the first take their ground goals' headings from frame
 *   k-1's solution (the problem's `heading`), not from the predicted start,
 *   which would carry the feet's turns on from frame to frame.
 *
 * Use: ikd_motion_init once; then for each frame ikd_motion_frame (sets the
 * problem's start, heading, root and pull bound), ikd_multi_solve, ikd_motion_push
 * (records the solution). Memory is the caller's (ikd_motion_memory_size);
 * nothing allocates. */

/* options.pull_max_deg of a clip's frames after the first: 4 degrees a
 * frame, which with the predicted start's 2 (below) keeps a fold's move at
 * about 6 degrees a frame (docs/performance.md, "Rate-limited settles",
 * "Predicted starts"). */
#define IKD_CLIP_PULL_MAX_DEG 4.0

/* A cut (the rule above): a goal's target moved half the skeleton's size
 * (its longest root-to-joint path) in a frame. Hands move under 0.3 of it a
 * frame in Debian's three BVH clips at 30 fps (a boxing take's punches
 * included); CMU's takes leave their bind pose (frame 0) by 0.55 and 0.84
 * of it. Bounded there, frame 1's pull left the wrists and forearms
 * sharing their twist as the descent's long path had split it (a hand
 * 34 degrees turned where the recording turns it 10; docs/solvers.md). */
#define IKD_CLIP_CUT 0.5

/* options.max_iterations of a clip's frames (a skeleton request's is 1000):
 * a frame starts near its solution, and on frames whose goals leave the
 * limits (a recording outside the humanoid preset) 1000 gave the whole-
 * skeleton pass of layered frames room to wander: 01_03's layered frames
 * flipped 25 times against 0, and Boxing_Toes' tracking p99 went from
 * about 3 to 4.2 ms (docs/solvers.md, "Restarts"). */
#define IKD_CLIP_MAX_ITERATIONS 300

/* options.stiffness of a clip's frames (a skeleton request's is "equal"):
 * "range", each joint's turn weighed by the inverse square of its range.
 * Motion capture tracked with limits the recording keeps: Debian's three
 * BVH clips from 14 flips and 22-34 mm mean joint error to none and
 * 18-20 mm; single solves keep "equal", under which a goal out of reach
 * points its limb at it and a fed-back pose stays put (docs/solvers.md,
 * "Joint stiffness"). */
#define IKD_CLIP_STIFFNESS IKD_STIFFNESS_RANGE

/* The predictor's cap: frame k >= 2 starts from frame k-1's pose turned on
 * by at most 2 degrees a joint (docs/performance.md, "Predicted starts"). */
#define IKD_CLIP_PREDICT_MAX_DEG 2.0

typedef struct ikd_motion {
    const ikd_skeleton *skeleton; /* validated; the motion's every frame is of it */
    double pull_max_deg;    /* frames after the first: options.pull_max_deg, degrees in [0, 180] (0: no bound);
                               default IKD_CLIP_PULL_MAX_DEG */
    double predict_max_deg; /* the predictor's cap per joint, degrees > 0; default IKD_CLIP_PREDICT_MAX_DEG;
                               0: every frame after the first starts from the last solution as it is */
    double cut;             /* a cut's distance, in skeleton sizes (the rule above), >= 0; default IKD_CLIP_CUT;
                               0: no frame after the first is a cut */
    int stiffness;          /* every frame's options.stiffness (IKD_STIFFNESS_*); default IKD_CLIP_STIFFNESS */
    size_t frames;          /* frames recorded so far (ikd_motion_push): the next frame's index */
    ikd_quat *last;         /* [count] the last frame's local rotations (unit); before any frame, the start pose */
    ikd_quat *before;       /* [count] the frame's before the last */
    ikd_quat *start;        /* [count] the next frame's predicted start */
    ikd_vec3 *target;       /* [count] per joint, the last position goal's target (a cut's test) ... */
    size_t *target_frame;   /* [count] ... and the frame it was set for, plus 1 (0: none yet) */
    ikd_vec3 root_last;     /* the last frame's root (world, skeleton units); before any frame, the start root */
    ikd_vec3 root_before;   /* the root of the frame before the last */
} ikd_motion;

/* Bytes of memory ikd_motion_init needs for a skeleton of `joints` joints;
 * IKD_MOTION_MEMORY is the same as a constant expression (static buffers). */
#define IKD_MOTION_MEMORY(joints) ((joints) * (3 * sizeof(ikd_quat) + sizeof(ikd_vec3) + sizeof(size_t)))
size_t ikd_motion_memory_size(size_t joints);

/* A motion of skeleton s (validated) starting from `start` (local
 * rotations; NULL: the rest pose) with the root at `root`; `mem` holds
 * ikd_motion_memory_size(s->count) bytes (aligned for doubles) and must
 * outlive the motion. Defaults as documented in ikd_motion. */
void ikd_motion_init(ikd_motion *m, const ikd_skeleton *s, const ikd_quat *start, ikd_vec3 root, void *mem);

/* Sets p->start, p->heading, p->root, p->pull_max_deg and p->stiffness for the next
 * frame (m->frames) by the rule above, and records its position goals'
 * targets (a cut's test: call it once per frame, with the frame's goals). p->start and p->heading point into
 * m's memory: solve before the next ikd_motion_push. */
void ikd_motion_frame(ikd_motion *m, ikd_multi_problem *p);

/* Records the next frame's solution: its local rotations (normalised, as
 * a request carrying this pose reads them) and its root. */
void ikd_motion_push(ikd_motion *m, const ikd_quat *local, ikd_vec3 root);

#endif
