/* skel.h - a decoded skeleton solve request (POST /v1/solve/skeleton): skeleton, start pose, goals, options, names. */
#ifndef IKD_SKEL_H
#define IKD_SKEL_H

#include <stddef.h>

#include "doc.h"
#include "ikd/error.h"
#include "ikd/skeleton.h"

/* Most goals in one skeleton request (the solver's system grows with them). */
#define IKD_SKEL_MAX_GOALS 64

typedef struct ikd_skel_request ikd_skel_request;

/* Where "skeleton": "sk_..." is looked up (the service's store): get
 * copies the skeleton under id[0..len) into req (joints, names, count) and
 * sets *found; *nomem when memory ran out. */
typedef struct ikd_skel_lookup {
    void (*get)(void *ctx, const char *id, size_t len, ikd_skel_request *req, int *found, int *nomem);
    void *ctx;
} ikd_skel_lookup;

struct ikd_skel_request {
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
    /* A clip's goals packed (ikd_skelpack_frame): only the parts each goal
     * has, so that a long clip holds little memory while it is solved (a
     * 6-DoF goal takes 72 bytes, not sizeof(ikd_goal)). With them, `goals`
     * is NULL and frame k's goals are unpacked by ikd_skelpack_unpack. */
    unsigned char *pack;        /* owned */
    size_t pack_len, pack_cap;
    size_t *pack_at;            /* owned: frame k's goals start at pack + pack_at[k]; frame_count + 1 */
    size_t frames_cap;          /* room in frame_first and pack_at */
    const ikd_skel_lookup *lookup; /* where skeleton ids are found; NULL: ids are refused */
    int by_reference;           /* the skeleton came from the lookup */
    double fps;                 /* a clip's frames per second (its BVH's Frame Time); 0 = 30 */
    /* pose.translations: joint j's offset from its parent in the parent's
     * frame (has_translation[j]; else the rest offset). Applied to the
     * skeleton's rest positions when decoded (the solvers keep them as
     * given) and echoed in every pose of the reply. NULL: none given. */
    ikd_vec3 *translations;     /* owned */
    unsigned char *has_translation; /* owned */
    /* options.preferred: the pose the pull goes toward (problem.preferred
     * points here; the start pose when `pose` gives no rotations). */
    ikd_quat *preferred;        /* owned; NULL: none */
    /* A clip decoded whole: frames[k].preferred until ikd_skelpack_all packs
     * them (fpref[k * count ...], fpref_has[k] bit 1 rotations, bit 2 root,
     * bit 4 translations). */
    ikd_quat *fpref;            /* owned; NULL: no frame has one */
    unsigned char *fpref_has;   /* owned */
    ikd_vec3 *fpref_root;       /* owned */
    ikd_vec3 *fpref_trans;      /* owned: [frames x count] (bit 4 of fpref_has) */
};

/* One clip frame's `preferred` (frames[k].preferred): its rotations in
 * rot (the caller's, one per joint), has 1 when the frame gives one; its
 * translations (has_trans) in trans (the caller's, one per joint; x NaN
 * where the entry is null: the request's offset). */
typedef struct ikd_frame_pref {
    int has, has_root, has_trans;
    ikd_vec3 root;
    ikd_quat *rot;
    ikd_vec3 *trans;
} ikd_frame_pref;

void ikd_skel_request_init(ikd_skel_request *r);
void ikd_skel_request_destroy(ikd_skel_request *r);

/* ikd_skeleton_validate on the decoded request's skeleton, unless it came
 * from the lookup as it was kept (by reference, no pose.translations):
 * only validated skeletons are kept, with their derived fields and size. */
int ikd_skel_request_validate(ikd_skel_request *r, ikd_error *err);

/* POST /v1/skeletons' body: {"skeleton": {...}} (the skeleton only). */
int ikd_skel_decode_register(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err);

/* Decode a skeleton request from `root` (shapes, types, names to indices;
 * values are checked by ikd_skeleton_validate and ikd_multi_validate).
 * `item` >= 0: item `item` of a batch ("problems[item]." in front of every
 * field path). `max_joints` bounds the joint count. */
int ikd_skel_decode(ikd_val root, long item, size_t max_joints, ikd_skel_request *req, ikd_error *err);

/* Decode a clip request: the same fields with `frames` ([{"goals": [...]},
 * ...], at least one) in place of `goals`; field paths
 * "frames[k].goals[i]...". problem.goals is frame 0's. */
int ikd_clip_decode(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err);

/* A clip decoded a frame at a time (the body's frames parsed one by one,
 * ikd_doc_elems): the fields but `frames` from `root` (its "frames" is not
 * looked at), then each frame's goals with ikd_clip_decode_frame. */
int ikd_clip_decode_head(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err);
/* Frame k ({"goals": [...], "preferred": {...}}) into goals[0..*count)
 * (room for IKD_SKEL_MAX_GOALS) and pref (pref->rot: room for one rotation
 * per joint); field paths "frames[k].goals[i]...". */
int ikd_clip_decode_frame(ikd_val frame, size_t k, ikd_skel_request *req, ikd_goal *goals, size_t *count,
                          ikd_frame_pref *pref, ikd_error *err);


#endif
