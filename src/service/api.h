/* api.h - the endpoints as pure functions over buffers: solve, batch on one thread, health, the solver catalogue. */
#ifndef IKD_API_H
#define IKD_API_H

#include <stdatomic.h>
#include <stddef.h>

#include "../codec/buf.h"
#include "../codec/codec.h"
#include "../codec/emit.h"
#include "../codec/request.h"
#include "../codec/skel.h"
#include "skelstore.h"
#include "ikd/solve.h"

/* Server-side limits applied on top of the library's own checks. */
typedef struct ikd_api_limits {
    size_t max_joints;       /* per chain */
    int max_iterations;      /* highest options.max_iterations */
    size_t max_batch;        /* problems per batch */
    const atomic_int *cancel; /* given to every solve (ikd_problem.cancel); NULL = none */
    size_t max_frames;       /* frames per clip; 0 = IKD_CLIP_MAX_FRAMES */
    size_t clip_whole_max;   /* clip bodies up to this many bytes are parsed whole; 0 = IKD_CLIP_WHOLE_MAX
                                (tests set 1 to parse every clip a frame at a time) */
    const ikd_skel_lookup *lookup; /* where "skeleton": "sk_..." is found; NULL: ids are refused (409) */
    struct ikd_skelstore *store;   /* where POST /v1/skeletons and /v1/import keep skeletons; NULL: nowhere */
} ikd_api_limits;

/* Per-worker scratch for solves: the pose and the solver workspace for the
 * longest allowed chain, allocated once. */
typedef struct ikd_api_scratch {
    size_t max_joints;
    ikd_pose_joint *pose;
    void *work;
    size_t work_size;
} ikd_api_scratch;

int ikd_api_scratch_init(ikd_api_scratch *s, size_t max_joints);
void ikd_api_scratch_destroy(ikd_api_scratch *s);

/* What a solve did, for metrics and logs. */
typedef struct ikd_api_outcome {
    int solved;          /* 0 when the request failed before solving */
    ikd_solver solver;
    ikd_status status;
    double solve_s;
    int error;           /* the code of an error reply (for the log); IKD_E_OK otherwise */
    int skeleton;        /* 1: a skeleton solve (multi and goals below, not solver and status) */
    ikd_multi_status multi;
    unsigned goals[3];   /* the skeleton's goals by ikd_goal_status */
    int clip;            /* 1: a clip (frames below, solve_s the frames' total) */
    unsigned frames[3];  /* the clip's frames by ikd_multi_status */
} ikd_api_outcome;

/* A fresh request whose default iteration cap respects lim->max_iterations. */
void ikd_api_request_init(ikd_request *req, const ikd_api_limits *lim);
/* The server's limits on a decoded request, then ikd_validate; for batch
 * item `item` (>= 0) error fields get "problems[item]" in front. */
int ikd_api_check(ikd_request *req, const ikd_api_limits *lim, long item, ikd_error *err);

/* `prefix` in front of err's field, joined by a dot ("problems[3]" +
 * "chain.joints" -> "problems[3].chain.joints"; an empty field becomes the
 * prefix alone); cut to fit the field's room. */
void ikd_api_field_prefix(ikd_error *err, const char *prefix);

/* A fresh skeleton request with the server's cancel flag and iteration cap. */
void ikd_api_skel_init(ikd_skel_request *req, const ikd_api_limits *lim);
/* Decode a skeleton request, apply the server limits, validate skeleton
 * and goals; for batch item `item` (>= 0) error fields get
 * "problems[item]." in front. */
int ikd_api_skel_decode(ikd_val root, const ikd_api_limits *lim, long item, ikd_skel_request *req, ikd_error *err);

/* POST /v1/solve in two steps. Decode: parse a body in `enc`, apply the
 * server limits and ikd_validate; IKD_E_OK, or the error in `err`. */
int ikd_api_decode(const ikd_api_limits *lim, ikd_encoding enc, const char *body, size_t len, ikd_request *req,
                        ikd_error *err);
/* Run: solve a decoded request (stopping at `deadline_ns`, 0 = none) and
 * write the reply in `out_enc`. Returns the HTTP status. `outcome` may be NULL. */
int ikd_api_run(ikd_api_scratch *s, ikd_request *req, unsigned long long deadline_ns, ikd_encoding out_enc,
                ikd_buf *out, ikd_api_outcome *outcome);
/* Both steps (the whole of POST /v1/solve as a pure function). */
int ikd_api_solve(ikd_api_scratch *s, const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                  ikd_encoding out_enc, const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome);

/* POST /v1/solve/skeleton: decode, validate, solve (scratch allocated for
 * this skeleton: a skeleton's system is too large to keep per worker for
 * every size), reply. Returns the HTTP status. */
int ikd_api_skeleton(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                     ikd_encoding out_enc, const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome);

/* POST /v1/solve/batch on one thread (tests, fuzzing; the service spreads
 * a batch over the pool with the steps of batch.h). Returns the HTTP status. */
int ikd_api_batch(ikd_api_scratch *s, const ikd_api_limits *lim, ikd_encoding in_enc, ikd_encoding out_enc,
                  const char *body, size_t len, ikd_buf *out);

/* GET /healthz, GET /readyz (503 when not ready), GET /v1/solvers. */
int ikd_api_healthz(ikd_buf *out, ikd_encoding enc);
int ikd_api_readyz(ikd_buf *out, ikd_encoding enc, int ready);
int ikd_api_solvers(const ikd_api_limits *lim, ikd_encoding enc, ikd_buf *out);

/* POST /v1/skeletons: {"skeleton": {...}} validated, kept in lim->store
 * and answered {"id": "sk_...", "joints": n}; the HTTP status, *error the
 * code of an error reply. */
int ikd_api_register(const ikd_api_limits *lim, ikd_encoding in_enc, ikd_encoding out_enc, const char *body, size_t len,
                     ikd_buf *out, int *error);
/* Validate a skeleton, compute its id and keep it in lim->store (when it
 * fits): IKD_E_OK with the id, or the validation's error. */
int ikd_api_keep_skeleton(const ikd_api_limits *lim, ikd_skeleton *s, char *const *names, char id[IKD_SKEL_ID_LEN + 1],
                          ikd_error *err);

#endif
