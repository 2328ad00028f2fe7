/* clip.h - POST /v1/solve/clip: one skeleton, many frames of goals, each frame solved from the one before. */
#ifndef IKD_CLIP_H
#define IKD_CLIP_H

#include "api.h"
#include "ikd/motion.h"
#include "reply.h"
#include "stream.h"

/* Frames per clip when ikd_api_limits.max_frames is 0 (--max-frames' default). */
#define IKD_CLIP_MAX_FRAMES 10000

/* Decode a clip body, apply the server limits (frames over max_frames:
 * IKD_E_TOO_LARGE), validate the skeleton and every frame's goals (field
 * paths "frames[k].goals[i]...") before anything is solved. `req` is set
 * up either way: destroy it after. */
int ikd_clip_open(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, size_t len, ikd_skel_request *req,
                  ikd_error *err);

typedef struct ikd_clip_run ikd_clip_run;

/* ikd_clip_open, then ikd_clip_begin: 0 when the clip is ready to solve
 * (end `run` after), else the HTTP status with an error body in `out` and
 * its code in *error. Destroy `req` either way. */
int ikd_clip_prepare(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                     ikd_encoding out_enc, const char *body, size_t len, ikd_skel_request *req, ikd_clip_run *run,
                     ikd_buf *out, int *error);

/* A clip being solved: scratch for the largest frame, the motion (each
 * frame's start and pull bound, include/ikd/motion.h), what the frames did
 * so far. */
struct ikd_clip_run {
    void *work;
    size_t work_size;
    ikd_quat *local;          /* this frame's local rotations */
    void *motion_mem;
    ikd_motion motion;        /* the frames solved so far: the next one's start */
    ikd_pose_joint *pose;
    ikd_goal_result *gr;
    ikd_multi_result res;     /* this frame's */
    double solve_us;          /* this frame's */
    unsigned long long deadline_ns;
    ikd_clip_summary summary;
    unsigned by_status[3];    /* frames by ikd_multi_status */
};

/* 0, or -1 out of memory (nothing to end then). */
int ikd_clip_begin(ikd_clip_run *run, const ikd_skel_request *req, unsigned long long deadline_ns);
/* Solve frame k (frames in order, from 0) by ikd_motion's rule: frame 0
 * from the request's pose, frame 1 from frame 0's, frame k >= 2 from frame
 * k-1's turned on by its change since frame k-2. */
void ikd_clip_step(ikd_clip_run *run, const ikd_skel_request *req, size_t k);
void ikd_clip_end(ikd_clip_run *run);
/* Solve every frame into `st` as it is solved: NDJSON (enc JSON: one JSON
 * object and a newline per frame) or MessagePack (one map per frame), then
 * {"summary": {...}} the same way, and the end. Stops early when the
 * transport goes away (st->cancel). */
void ikd_clip_stream(const ikd_skel_request *req, ikd_clip_run *run, ikd_encoding enc, ikd_stream *st);
/* The media types of the two streams. */
#define IKD_CLIP_NDJSON "application/x-ndjson"
#define IKD_CLIP_MSGPACK_STREAM "application/x-msgpack-stream"
/* The run as an outcome for metrics and the log. */
void ikd_clip_outcome(const ikd_clip_run *run, ikd_api_outcome *outcome);

/* The whole of POST /v1/solve/clip without streaming: {"frames": [...],
 * "summary": {...}} in `out`; the HTTP status. */
int ikd_api_clip(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc, ikd_encoding out_enc,
                 const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome);

#endif
