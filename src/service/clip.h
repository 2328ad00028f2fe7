/* clip.h - POST /v1/solve/clip: one skeleton, many frames of goals, each frame solved from the one before. */
#ifndef IKD_CLIP_H
#define IKD_CLIP_H

#include "api.h"
#include "ikd/motion.h"
#include "reply.h"
#include "stream.h"

/* Frames per clip when ikd_api_limits.max_frames is 0 (--max-frames' default). */
#define IKD_CLIP_MAX_FRAMES 10000

/* Clip bodies up to this many bytes are parsed whole, as other requests
 * are (their tree, about 7 times the body, is small); larger ones a frame
 * at a time (ikd_clip_open), which holds about 2 times the body at most
 * but costs some 10% more time per frame (a parse per frame, and a scan). */
#define IKD_CLIP_WHOLE_MAX (1024u * 1024u)
/* The limits' clip_whole_max, or its default. */
size_t ikd_clip_whole_max(const ikd_api_limits *lim);

/* Decode a clip body, apply the server limits (frames over max_frames:
 * IKD_E_TOO_LARGE), validate the skeleton and every frame's goals (field
 * paths "frames[k].goals[i]...") before anything is solved. `req` is set
 * up either way: destroy it after. The frames are parsed one at a time
 * (ikd_doc_find) and kept packed; the rest of the body is parsed whole. */
int ikd_clip_open(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, size_t len, ikd_skel_request *req,
                  ikd_error *err);

/* Memory a clip's decoding asks for beyond what its body's length told:
 * reserve(ctx, n) before the members other than "frames" (n bytes of the
 * body) are parsed whole; 0 when it may go on, else IKD_E_OVERLOADED or
 * IKD_E_TOO_LARGE with err set. NULL: nothing is asked. */
typedef struct ikd_clip_reserve {
    int (*reserve)(void *ctx, size_t body_bytes, ikd_error *err);
    void *ctx;
} ikd_clip_reserve;

int ikd_clip_open_reserved(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, size_t len,
                           const ikd_clip_reserve *reserve, ikd_skel_request *req, ikd_error *err);

typedef struct ikd_clip_run ikd_clip_run;

/* ikd_clip_open, then ikd_clip_begin: 0 when the clip is ready to solve
 * (end `run` after), else the HTTP status with an error body in `out` and
 * its code in *error. Destroy `req` either way. */
int ikd_clip_prepare(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                     ikd_encoding out_enc, const char *body, size_t len, const ikd_clip_reserve *reserve,
                     ikd_skel_request *req, ikd_clip_run *run, ikd_buf *out, int *error);

/* A clip being solved: scratch for the largest frame, the motion (each
 * frame's start and pull bound, include/ikd/motion.h), what the frames did
 * so far. The request keeps every frame's goals packed; each frame's are
 * unpacked into `goals` when it is solved. */
struct ikd_clip_run {
    ikd_goal *goals;          /* the frame being solved's goals, unpacked */
    size_t goal_count;
    ikd_frame_pref pref;      /* ... and its preferred pose (pref.rot, pref.trans: one per joint) */
    ikd_skeleton_joint *sk_joints; /* a frame with translations: the skeleton with its offsets ... */
    ikd_skeleton sk;          /* ... (joints: sk_joints) */
    size_t next;              /* the next frame to solve */
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
/* Bytes the run and the request hold (charged to the memory budget while
 * a clip is solved). */
size_t ikd_clip_held(const ikd_clip_run *run, const ikd_skel_request *req);
/* An upper bound of the whole reply's size in `enc` (charged before a clip
 * is solved into one reply). */
size_t ikd_clip_reply_size(const ikd_clip_run *run, const ikd_skel_request *req, ikd_encoding enc);
/* Solve frame k (frames in order, from 0) by ikd_motion's rule: frame 0
 * from the request's pose, frame 1 from frame 0's, frame k >= 2 from frame
 * k-1's turned on by its change since frame k-2. */
void ikd_clip_step(ikd_clip_run *run, const ikd_skel_request *req, size_t k);
void ikd_clip_end(ikd_clip_run *run);
/* Solve the frames from run->next on into `st` as they are solved: NDJSON
 * (enc JSON: one JSON object and a newline per frame) or MessagePack (one
 * map per frame), then {"summary": {...}} the same way, and the end.
 * Returns 1 when the stream parked the producer (its reader is behind:
 * ikd_stream_push); the stream's resume or abandon callback follows, and
 * a call after resume goes on where this one stopped. 0 when the clip
 * ended, or the transport went away (st->cancel). */
int ikd_clip_stream(const ikd_skel_request *req, ikd_clip_run *run, ikd_encoding enc, ikd_stream *st);
/* Solve every frame into one reply {"frames": [...], "summary": {...}}
 * in `out`; the HTTP status (200, or 500 when it could not be built). */
int ikd_clip_write(const ikd_skel_request *req, ikd_clip_run *run, ikd_encoding enc, ikd_buf *out,
                   ikd_api_outcome *outcome);
/* The media types of the two streams. */
#define IKD_CLIP_NDJSON "application/x-ndjson"
#define IKD_CLIP_MSGPACK_STREAM "application/x-msgpack-stream"
#define IKD_CLIP_BVH "application/x-bvh"
/* Solve every frame into a BVH file in `out` (the skeleton's rest pose as
 * its hierarchy, the root's position and every joint's rotation as
 * channels, Frame Time 1 / req->fps, default 1/30); the HTTP status. */
int ikd_clip_write_bvh(const ikd_skel_request *req, ikd_clip_run *run, ikd_buf *out, ikd_api_outcome *outcome);
/* The run as an outcome for metrics and the log. */
void ikd_clip_outcome(const ikd_clip_run *run, ikd_api_outcome *outcome);

/* The whole of POST /v1/solve/clip without streaming: {"frames": [...],
 * "summary": {...}} in `out`; the HTTP status. */
int ikd_api_clip(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc, ikd_encoding out_enc,
                 const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome);

#endif
