/* clip.c - POST /v1/solve/clip: decode, validate every frame, solve the frames in order (each from the last), reply. */
#include "clip.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/bvh.h"
#include "../codec/field.h"
#include "../codec/skelpack.h"
#include "reply.h"
#include "wire.h"

/* "frames[k]." in front of a goal error's field (options' errors are the
 * clip's, not a frame's). */
static void frame_field(ikd_error *err, size_t k)
{
    if (strncmp(err->field, "goals", 5) != 0) return;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "frames[%zu]", k);
    ikd_api_field_prefix(err, prefix);
}

/* The frames of a body loaded with them deferred: each parsed, decoded,
 * validated and packed on its own (at most one frame's document at a time). */
static int frames_each(const ikd_api_limits *lim, ikd_doc_elems *it, ikd_skel_request *req, ikd_goal *goals,
                       ikd_frame_pref *pref, ikd_error *err);

static int open_frames(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, const ikd_doc_span *span,
                       ikd_skel_request *req, ikd_error *err)
{
    ikd_goal goals[IKD_SKEL_MAX_GOALS];
    ikd_doc_elems it;
    if (ikd_doc_elems_begin(&it, in_enc, body, span) != 0)
        return ikd_error_set(err, IKD_E_INVALID, "frames", "must be a non-empty array");
    ikd_frame_pref pref = {.rot = malloc(req->skeleton.count * sizeof(ikd_quat)),
                           .trans = malloc(req->skeleton.count * sizeof(ikd_vec3))};
    int rc = pref.rot && pref.trans ? frames_each(lim, &it, req, goals, &pref, err)
                                    : ikd_error_set(err, IKD_E_NOMEM, "frames", "out of memory for the clip's frames");
    free(pref.rot);
    free(pref.trans);
    return rc;
}

/* open_frames' loop: each frame of `it` decoded, validated and packed. */
static int frames_each(const ikd_api_limits *lim, ikd_doc_elems *it, ikd_skel_request *req, ikd_goal *goals,
                       ikd_frame_pref *pref, ikd_error *err)
{
    size_t max = lim->max_frames ? lim->max_frames : IKD_CLIP_MAX_FRAMES;
    ikd_doc doc;
    int more;
    while ((more = ikd_doc_elems_next(it, &doc, err)) == 1) {
        size_t k = it->index - 1, n = 0;
        if (k >= max) {
            ikd_doc_free(&doc);
            /* how many there are, for the message (each parsed, none kept) */
            while ((more = ikd_doc_elems_next(it, &doc, err)) == 1) ikd_doc_free(&doc);
            if (more < 0) return err->code;
            return ikd_error_set(err, IKD_E_TOO_LARGE, "frames", "at most %zu frames per clip (--max-frames), got %zu",
                                 max, it->index);
        }
        int rc = ikd_clip_decode_frame(doc.root, k, req, goals, &n, pref, err);
        ikd_doc_free(&doc);
        if (rc == IKD_E_OK) {
            ikd_multi_problem p = req->problem;
            p.goal_count = n;
            rc = ikd_multi_validate(&p, goals, err);
            if (rc) frame_field(err, k);
        }
        if (rc == IKD_E_OK && ikd_skelpack_frame(req, goals, n, pref) != 0)
            rc = ikd_error_set(err, IKD_E_NOMEM, "frames", "out of memory for the clip's frames");
        if (rc) return rc;
    }
    if (more < 0) return err->code;
    if (req->frame_count == 0) return ikd_error_set(err, IKD_E_INVALID, "frames", "must be a non-empty array");
    ikd_skelpack_trim(req);
    return IKD_E_OK;
}

size_t ikd_clip_whole_max(const ikd_api_limits *lim) { return lim->clip_whole_max ? lim->clip_whole_max : IKD_CLIP_WHOLE_MAX; }

/* A clip parsed whole: decoded, checked, every frame validated, then its
 * goals packed. */
static int open_whole(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, size_t len,
                      ikd_skel_request *req, ikd_error *err)
{
    ikd_doc doc;
    int rc = ikd_doc_load(&doc, in_enc, body, len, err);
    if (rc == IKD_E_OK) {
        ikd_val fv = ikd_field_member(doc.root, "frames");
        size_t frames = ikd_val_type(fv) == IKD_DOC_ARRAY ? fv.ops->size(fv.v) : 0;
        size_t max = lim->max_frames ? lim->max_frames : IKD_CLIP_MAX_FRAMES;
        if (frames > max)
            rc = ikd_error_set(err, IKD_E_TOO_LARGE, "frames", "at most %zu frames per clip (--max-frames), got %zu",
                               max, frames);
    }
    if (rc == IKD_E_OK) rc = ikd_clip_decode(doc.root, lim->max_joints, req, err);
    ikd_doc_free(&doc);
    if (rc == IKD_E_OK && req->problem.max_iterations > lim->max_iterations)
        rc = ikd_error_set(err, IKD_E_INVALID, "options.max_iterations", "must be an integer in [1, %d] (--max-iterations)",
                           lim->max_iterations);
    if (rc == IKD_E_OK) rc = ikd_skel_request_validate(req, err);
    for (size_t k = 0; rc == IKD_E_OK && k < req->frame_count; k++) { /* every frame before any is solved */
        ikd_multi_problem p = req->problem;
        p.goal_count = req->frame_first[k + 1] - req->frame_first[k];
        rc = ikd_multi_validate(&p, req->goals + req->frame_first[k], err);
        if (rc) frame_field(err, k);
    }
    if (rc == IKD_E_OK && ikd_skelpack_all(req) != 0)
        rc = ikd_error_set(err, IKD_E_NOMEM, "frames", "out of memory for the clip's frames");
    return rc;
}

int ikd_clip_open_reserved(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, size_t len,
                           const ikd_clip_reserve *reserve, ikd_skel_request *req, ikd_error *err)
{
    ikd_doc doc;
    ikd_doc_span span;
    ikd_api_skel_init(req, lim);
    req->problem.pull_max_deg = IKD_CLIP_PULL_MAX_DEG; /* a clip's defaults (frames after the first) */
    req->problem.stiffness = IKD_CLIP_STIFFNESS;
    if (req->problem.max_iterations > IKD_CLIP_MAX_ITERATIONS) req->problem.max_iterations = IKD_CLIP_MAX_ITERATIONS;
    if (len <= ikd_clip_whole_max(lim)) return open_whole(lim, in_enc, body, len, req, err);
    int found = ikd_doc_find(in_enc, body, len, "frames", &span, err);
    if (found < 0) return err->code;
    size_t rest = found ? len - (span.end - span.start) : len;
    if (reserve && reserve->reserve && reserve->reserve(reserve->ctx, rest, err) != 0) return err->code;
    int rc = found ? ikd_doc_load_except(&doc, in_enc, body, len, &span, err) : ikd_doc_load(&doc, in_enc, body, len, err);
    if (rc == IKD_E_OK) rc = found ? ikd_clip_decode_head(doc.root, lim->max_joints, req, err)
                                   : ikd_clip_decode(doc.root, lim->max_joints, req, err); /* no frames: says so */
    ikd_doc_free(&doc); /* before the frames' documents */
    if (rc == IKD_E_OK && !found) rc = ikd_error_set(err, IKD_E_INVALID, "frames", "is required");
    if (rc == IKD_E_OK && req->problem.max_iterations > lim->max_iterations)
        rc = ikd_error_set(err, IKD_E_INVALID, "options.max_iterations", "must be an integer in [1, %d] (--max-iterations)",
                           lim->max_iterations);
    if (rc == IKD_E_OK) rc = ikd_skel_request_validate(req, err);
    if (rc == IKD_E_OK) rc = open_frames(lim, in_enc, body, &span, req, err);
    return rc;
}

int ikd_clip_open(const ikd_api_limits *lim, ikd_encoding in_enc, const char *body, size_t len, ikd_skel_request *req,
                  ikd_error *err)
{
    return ikd_clip_open_reserved(lim, in_enc, body, len, NULL, req, err);
}

int ikd_clip_begin(ikd_clip_run *run, const ikd_skel_request *req, unsigned long long deadline_ns)
{
    size_t n = req->skeleton.count, most = 1;
    memset(run, 0, sizeof *run);
    for (size_t k = 0; k < req->frame_count; k++)
        if (req->frame_first[k + 1] - req->frame_first[k] > most) most = req->frame_first[k + 1] - req->frame_first[k];
    run->work_size = ikd_multi_workspace_size(n, most);
    run->work = malloc(run->work_size);
    run->local = malloc(n * sizeof *run->local);
    run->motion_mem = malloc(ikd_motion_memory_size(n));
    run->pose = malloc(n * sizeof *run->pose);
    run->gr = malloc(most * sizeof *run->gr);
    run->goals = malloc(most * sizeof *run->goals);
    run->pref.rot = malloc(n * sizeof *run->pref.rot);
    run->pref.trans = malloc(n * sizeof *run->pref.trans);
    run->sk_joints = malloc(n * sizeof *run->sk_joints);
    if (!run->work || !run->local || !run->motion_mem || !run->pose || !run->gr || !run->goals || !run->pref.rot ||
        !run->pref.trans || !run->sk_joints) {
        ikd_clip_end(run);
        return -1;
    }
    ikd_motion_init(&run->motion, &req->skeleton, req->problem.start, req->problem.root, run->motion_mem);
    run->motion.pull_max_deg = req->problem.pull_max_deg; /* the clip's option (default IKD_CLIP_PULL_MAX_DEG) */
    run->motion.stiffness = req->problem.stiffness;       /* (default IKD_CLIP_STIFFNESS) */
    run->deadline_ns = deadline_ns;
    return 0;
}

/* The translations of the frame just solved (frames[k].preferred's), or NULL. */
static const ikd_vec3 *frame_trans(const ikd_clip_run *run)
{
    return run->pref.has && run->pref.has_trans ? run->pref.trans : NULL;
}

/* Frame k's goals into run->goals, its preferred pose into run->pref. */
static void unpack_frame(ikd_clip_run *run, const ikd_skel_request *req, size_t k)
{
    run->goal_count = req->frame_first[k + 1] - req->frame_first[k];
    ikd_skelpack_unpack(req, k, run->goals, &run->pref);
}

void ikd_clip_step(ikd_clip_run *run, const ikd_skel_request *req, size_t k)
{
    ikd_multi_problem p = req->problem;
    ikd_error err;
    size_t n = req->skeleton.count;
    unpack_frame(run, req, k);
    p.goals = run->goals;
    p.goal_count = run->goal_count;
    ikd_motion_frame(&run->motion, &p);
    if (run->pref.has) {
        /* IK layered on an animation (frames[k].preferred): the frame starts
         * from the animation's pose and is pulled back to it, unbounded (the
         * animation is the motion: what moves between frames is its own);
         * its root places a fixed root and draws a free one */
        p.start = p.preferred = run->pref.rot;
        p.pull_max_deg = 0;
        if (run->pref.has_root) p.root = p.preferred_root = run->pref.root, p.has_preferred_root = 1;
        if (run->pref.has_trans) { /* this frame's offsets (the solvers keep them as given) */
            memcpy(run->sk_joints, req->skeleton.joints, n * sizeof *run->sk_joints);
            for (size_t j = 1; j < n; j++)
                if (!isnan(run->pref.trans[j].x)) run->sk_joints[j].offset = run->pref.trans[j];
            run->sk = req->skeleton, run->sk.joints = run->sk_joints;
            p.skeleton = &run->sk;
        }
    }
    p.deadline_ns = run->deadline_ns;
    unsigned long long t0 = ikd_clock_ns();
    ikd_multi_solve(&p, run->work, run->work_size, run->local, run->pose, run->gr, &run->res, &err);
    run->solve_us = (double)(ikd_clock_ns() - t0) / 1e3;
    ikd_clip_summary *s = &run->summary;
    s->frames++;
    s->reached += run->res.status == IKD_MULTI_REACHED;
    s->iterations += run->res.iterations;
    s->solve_us += run->solve_us;
    run->by_status[run->res.status < 3 ? run->res.status : 1]++;
    for (size_t j = 0; k > 0 && j < n; j++) { /* how far each joint turned since the last frame */
        double d = ikd_quat_angle_between(run->motion.last[j], run->local[j]) * IKD_RAD2DEG;
        if (d > s->max_change_deg) s->max_change_deg = d, s->max_change_frame = k, s->max_change_joint = j;
        if (d > IKD_CLIP_FLIP_DEG) s->flips++;
    }
    /* this pose as a request carrying it would give it (ikd_motion_push
     * normalises it as the decoder does): a clip is exactly its frames sent
     * one by one, each with the pose of the reply before (frame 1) or the
     * prediction from the two replies before (frame k >= 2) */
    ikd_motion_push(&run->motion, run->local, run->res.root);
}

void ikd_clip_end(ikd_clip_run *run)
{
    free(run->work);
    free(run->local);
    free(run->motion_mem);
    free(run->pose);
    free(run->gr);
    free(run->goals);
    free(run->pref.rot);
    free(run->pref.trans);
    free(run->sk_joints);
    run->work = NULL, run->local = NULL, run->motion_mem = NULL, run->pose = NULL, run->gr = NULL;
    run->goals = NULL, run->pref.rot = NULL, run->pref.trans = NULL, run->sk_joints = NULL;
}

size_t ikd_clip_held(const ikd_clip_run *run, const ikd_skel_request *req)
{
    size_t n = req->skeleton.count, nf = req->frame_count;
    (void)nf;
    return run->work_size + req->pack_cap + 2 * req->frames_cap * sizeof(size_t) +
           n * (2 * sizeof(ikd_skeleton_joint) + 3 * sizeof(ikd_quat) + sizeof(ikd_vec3) + sizeof(ikd_pose_joint) + 64) +
           ikd_motion_memory_size(n);
}

/* Per frame of a reply, bytes at most: a joint's rotation (four numbers
 * of up to 24 characters in JSON, 9 bytes in MessagePack, and their
 * punctuation), a goal's result without its joint's name, and the rest
 * (frame, status, root, iterations, solve_us). A 25-joint humanoid frame
 * with four goals measured 1,976 bytes of JSON against 3,032 here. */
#define CLIP_JOINT_JSON 104
#define CLIP_JOINT_MSGPACK 40
#define CLIP_GOAL_JSON 100
#define CLIP_GOAL_MSGPACK 64
#define CLIP_FRAME_JSON 200
#define CLIP_FRAME_MSGPACK 100

size_t ikd_clip_reply_size(const ikd_clip_run *run, const ikd_skel_request *req, ikd_encoding enc)
{
    (void)run;
    int js = enc == IKD_ENC_JSON;
    size_t names = 0, n = req->skeleton.count, nf = req->frame_count, goals = req->frame_first[nf];
    for (size_t j = 0; req->names && j < n; j++) names = req->names[j] && strlen(req->names[j]) > names ? strlen(req->names[j]) : names;
    return 1024 + nf * (n * (js ? CLIP_JOINT_JSON : CLIP_JOINT_MSGPACK) + (js ? CLIP_FRAME_JSON : CLIP_FRAME_MSGPACK)) +
           goals * ((js ? CLIP_GOAL_JSON : CLIP_GOAL_MSGPACK) + names + 24);
}

int ikd_clip_prepare(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                     ikd_encoding out_enc, const char *body, size_t len, const ikd_clip_reserve *reserve,
                     ikd_skel_request *req, ikd_clip_run *run, ikd_buf *out, int *error)
{
    ikd_error err;
    if (ikd_clip_open_reserved(lim, in_enc, body, len, reserve, req, &err) != IKD_E_OK) {
        *error = err.code;
        return ikd_reply_error_body(out, out_enc, &err);
    }
    if (ikd_clip_begin(run, req, deadline_ns) != 0) {
        *error = IKD_E_NOMEM;
        return ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", "out of memory for the clip's solve");
    }
    return 0;
}

int ikd_clip_write(const ikd_skel_request *req, ikd_clip_run *run, ikd_encoding enc, ikd_buf *out,
                   ikd_api_outcome *outcome)
{
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_emit_map(&e, 2);
    ikd_emit_key(&e, "frames");
    ikd_emit_array(&e, req->frame_count);
    for (size_t k = 0; k < req->frame_count; k++) {
        ikd_clip_step(run, req, k);
        ikd_reply_clip_frame(&e, req, k, run->goals, run->goal_count, run->local, frame_trans(run), run->gr, &run->res,
                             run->solve_us);
    }
    ikd_emit_end(&e);
    ikd_emit_key(&e, "summary");
    ikd_reply_clip_summary(&e, req, &run->summary);
    ikd_emit_end(&e);
    if (outcome) ikd_clip_outcome(run, outcome);
    if (!out->failed) return 200;
    if (outcome) outcome->error = IKD_E_NOMEM;
    return ikd_reply_errorf(out, enc, IKD_E_NOMEM, "", "the reply could not be built");
}

int ikd_api_clip(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc, ikd_encoding out_enc,
                 const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_skel_request req;
    ikd_clip_run run;
    int error = IKD_E_OK;
    int status = ikd_clip_prepare(lim, deadline_ns, in_enc, out_enc, body, len, NULL, &req, &run, out, &error);
    if (outcome) *outcome = (ikd_api_outcome){.solved = 0, .error = error};
    if (status == 0) {
        status = ikd_clip_write(&req, &run, out_enc, out, outcome);
        ikd_clip_end(&run);
    }
    ikd_skel_request_destroy(&req);
    return status;
}

int ikd_clip_stream(const ikd_skel_request *req, ikd_clip_run *run, ikd_encoding enc, ikd_stream *st)
{
    ikd_buf b;
    ikd_emitter e;
    ikd_buf_init(&b);
    while (run->next < req->frame_count && !atomic_load(&st->cancel)) {
        size_t k = run->next++;
        ikd_clip_step(run, req, k);
        ikd_emit_reply(&e, enc, &b);
        ikd_reply_clip_frame(&e, req, k, run->goals, run->goal_count, run->local, frame_trans(run), run->gr, &run->res,
                             run->solve_us);
        if (enc == IKD_ENC_JSON) ikd_buf_append(&b, "\n", 1);
        int rc = b.failed ? -1 : ikd_stream_push(st, b.data, b.len, 0);
        if (rc < 0) break;
        if (rc > 0) { /* parked: the reader is behind */
            ikd_buf_destroy(&b);
            return 1;
        }
    }
    ikd_emit_reply(&e, enc, &b);
    ikd_emit_map(&e, 1);
    ikd_emit_key(&e, "summary");
    ikd_reply_clip_summary(&e, req, &run->summary);
    ikd_emit_end(&e);
    if (enc == IKD_ENC_JSON) ikd_buf_append(&b, "\n", 1);
    ikd_stream_push(st, b.failed ? "" : b.data, b.failed ? 0 : b.len, 1);
    ikd_buf_destroy(&b);
    return 0;
}

void ikd_clip_outcome(const ikd_clip_run *run, ikd_api_outcome *outcome)
{
    *outcome = (ikd_api_outcome){.solved = 1, .clip = 1, .solve_s = run->summary.solve_us / 1e6};
    for (int i = 0; i < 3; i++) outcome->frames[i] = run->by_status[i];
}

int ikd_clip_write_bvh(const ikd_skel_request *req, ikd_clip_run *run, ikd_buf *out, ikd_api_outcome *outcome)
{
    for (size_t k = 0; k < req->frame_count; k++) { /* the file's offsets are the skeleton's: one set for every frame */
        unpack_frame(run, req, k);
        if (!frame_trans(run)) continue;
        if (outcome) outcome->error = IKD_E_INVALID;
        char field[64];
        snprintf(field, sizeof field, "frames[%zu].preferred.translations", k);
        return ikd_reply_errorf(out, IKD_ENC_JSON, IKD_E_INVALID, field,
                                "a clip written as BVH takes no per-frame translations (ask for JSON, or use pose.translations)");
    }
    size_t *order = malloc(req->skeleton.count * sizeof *order);
    if (!order) {
        if (outcome) outcome->error = IKD_E_NOMEM;
        return ikd_reply_errorf(out, IKD_ENC_JSON, IKD_E_NOMEM, "", "out of memory for the BVH file");
    }
    size_t n = ikd_bvh_write_head(out, &req->skeleton, req->names, req->frame_count, 1.0 / (req->fps > 0 ? req->fps : 30.0),
                                  order);
    for (size_t k = 0; k < req->frame_count; k++) {
        ikd_clip_step(run, req, k);
        ikd_bvh_write_frame(out, &req->skeleton, order, n, run->res.root, run->local);
    }
    free(order);
    if (outcome) ikd_clip_outcome(run, outcome);
    if (!out->failed) return 200;
    if (outcome) outcome->error = IKD_E_NOMEM;
    return ikd_reply_errorf(out, IKD_ENC_JSON, IKD_E_NOMEM, "", "the BVH file could not be built");
}
