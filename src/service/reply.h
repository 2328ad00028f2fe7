/* reply.h - the reply layouts of the API (solve results, errors, health) in either encoding. */
#ifndef IKD_REPLY_H
#define IKD_REPLY_H

#include "../codec/buf.h"
#include "../codec/emit.h"
#include "../codec/request.h"
#include "../codec/skel.h"
#include "ikd/solve.h"

/* {"solver","status","reached","error","iterations",["rotation_error_deg"],"joints","solve_us"} */
void ikd_reply_solve(ikd_emitter *e, const ikd_request *req, const ikd_result *res, const ikd_pose_joint *pose,
                     double solve_us);
/* {"status","goals","joints","pose","iterations","solve_us"}: a skeleton
 * solve (POST /v1/solve/skeleton); goals name their joint as the request
 * did when it has a name. */
void ikd_reply_skeleton(ikd_emitter *e, const ikd_skel_request *req, const ikd_quat *local, const ikd_pose_joint *pose,
                        const ikd_goal_result *gr, const ikd_multi_result *res, double solve_us);
/* What a clip's frames did (POST /v1/solve/clip's "summary"). A flip is a
 * joint turning more than IKD_CLIP_FLIP_DEG between consecutive frames (frame
 * 0 is not compared with the start pose: the first goals may be anywhere). */
#define IKD_CLIP_FLIP_DEG 30.0
typedef struct ikd_clip_summary {
    size_t frames, reached;  /* frames solved, frames whose every goal was met */
    long iterations;
    double solve_us;
    double max_change_deg;   /* the largest turn of a joint between consecutive frames */
    size_t max_change_frame, max_change_joint;
    size_t flips;
} ikd_clip_summary;

/* {"frame","status","goals","pose","iterations","solve_us"}: frame k of a
 * clip, whose goals are goals[0..count). */
void ikd_reply_clip_frame(ikd_emitter *e, const ikd_skel_request *req, size_t k, const ikd_goal *goals, size_t count,
                          const ikd_quat *local, const ikd_vec3 *ft, const ikd_goal_result *gr,
                          const ikd_multi_result *res, double solve_us);
/* {"frames","reached","iterations","solve_us","max_change_deg","max_change_frame","max_change_joint","flips"} */
void ikd_reply_clip_summary(ikd_emitter *e, const ikd_skel_request *req, const ikd_clip_summary *s);

/* {"error":{"code","message","field"}}: the wire code of err->code, its
 * message (the code's default when empty) and field path. */
void ikd_reply_error(ikd_emitter *e, const ikd_error *err);

/* A whole error body in `out` (emptied first); returns the code's HTTP status. */
int ikd_reply_error_body(ikd_buf *out, ikd_encoding enc, const ikd_error *err);
/* The same for `code` with a printf-style message (fmt NULL = the code's
 * default message) and a field (NULL = ""). */
int ikd_reply_errorf(ikd_buf *out, ikd_encoding enc, int code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* {"status": status} in `out` (emptied first). */
void ikd_reply_status(ikd_buf *out, ikd_encoding enc, const char *status);

#endif
