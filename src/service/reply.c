/* reply.c - the reply layouts of the API: solve results, errors with their HTTP status, health. */
#include "reply.h"

#include <math.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* "joints": [{["name"], "position", "rotation", "local_rotation"}, ...]
 * (the key included); names[i] NULL (or names NULL) for an unnamed joint.
 * lr (JSON, or NULL): where each local_rotation's text lies in the body,
 * offset and length (for emit_pose's rotations, the same numbers). */
static inline void emit_joints(ikd_emitter *e, char *const *names, const ikd_pose_joint *pose, size_t n, size_t *lr)
{
    IKD_EMIT_KEY(e, "joints");
    ikd_emit_array(e, n);
    for (size_t i = 0; i < n; i++) {
        const ikd_pose_joint *j = &pose[i];
        const char *name = names ? names[i] : NULL;
        ikd_emit_map(e, name ? 4 : 3);
        if (name) {
            IKD_EMIT_KEY(e, "name");
            ikd_emit_str(e, name);
        }
        IKD_EMIT_KEY(e, "position");
        ikd_emit_nums(e, &j->position.x, 3);
        IKD_EMIT_KEY(e, "rotation");
        ikd_emit_nums(e, &j->rotation.x, 4);
        IKD_EMIT_KEY(e, "local_rotation");
        size_t at = e->out->len;
        ikd_emit_nums(e, &j->local_rotation.x, 4);
        if (lr) lr[2 * i] = at, lr[2 * i + 1] = e->out->len - at;
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
}

void ikd_reply_solve(ikd_emitter *e, const ikd_request *req, const ikd_result *res, const ikd_pose_joint *pose,
                     double solve_us)
{
    int rot = res->solver == IKD_SOLVER_JACOBIAN && req->problem.has_target_rotation;
    ikd_emit_map(e, 7 + (size_t)rot);
    IKD_EMIT_KEY(e, "solver");
    ikd_emit_str(e, ikd_solver_name(res->solver));
    IKD_EMIT_KEY(e, "status");
    ikd_emit_str(e, ikd_status_name(res->status));
    IKD_EMIT_KEY(e, "reached");
    ikd_emit_bool(e, res->reached);
    IKD_EMIT_KEY(e, "error");
    ikd_emit_num(e, res->error);
    IKD_EMIT_KEY(e, "iterations");
    ikd_emit_int(e, res->iterations);
    if (rot) {
        IKD_EMIT_KEY(e, "rotation_error_deg");
        ikd_emit_num(e, res->rotation_error_deg);
    }
    emit_joints(e, req->names, pose, req->problem.joint_count, NULL);
    IKD_EMIT_KEY(e, "solve_us");
    ikd_emit_num(e, solve_us);
    ikd_emit_end(e);
}

/* A joint named as the request named it: its name, else its index. */
static void emit_joint_ref(ikd_emitter *e, const ikd_skel_request *req, size_t j)
{
    if (req->names && req->names[j]) ikd_emit_str(e, req->names[j]);
    else ikd_emit_int(e, (long long)j);
}

/* "status", "goals": [{"joint","status","error","rotation_error_deg"[,"stretch"]}, ...] */
static void emit_goals(ikd_emitter *e, const ikd_skel_request *req, const ikd_goal *goals, size_t count,
                       const ikd_goal_result *gr, ikd_multi_status status)
{
    IKD_EMIT_KEY(e, "status");
    ikd_emit_str(e, ikd_multi_status_name(status));
    IKD_EMIT_KEY(e, "goals");
    ikd_emit_array(e, count);
    int stretch = req->problem.stretch > 1;
    for (size_t i = 0; i < count; i++) {
        ikd_emit_map(e, 4 + stretch);
        IKD_EMIT_KEY(e, "joint");
        emit_joint_ref(e, req, goals[i].joint);
        IKD_EMIT_KEY(e, "status");
        ikd_emit_str(e, ikd_goal_status_name(gr[i].status));
        IKD_EMIT_KEY(e, "error");
        ikd_emit_num(e, gr[i].error);
        IKD_EMIT_KEY(e, "rotation_error_deg");
        ikd_emit_num(e, gr[i].rotation_error_deg);
        if (stretch) {
            IKD_EMIT_KEY(e, "stretch");
            ikd_emit_num(e, gr[i].stretch);
        }
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
}

/* "pose": {"root", "rotations"[, "translations": as the request gave them,
 * a clip frame's own (ft, x NaN: the request's) over them]}; with lr
 * (emit_joints' spans, and pose: the joints they were written from), a
 * rotation the joints wrote already is copied as text. */
static void emit_pose(ikd_emitter *e, const ikd_skel_request *req, ikd_vec3 root, const ikd_quat *local, size_t n,
                      const ikd_vec3 *ft, const size_t *lr, const ikd_pose_joint *pose)
{
    IKD_EMIT_KEY(e, "pose");
    ikd_emit_map(e, req->translations || ft ? 3 : 2);
    IKD_EMIT_KEY(e, "root");
    ikd_emit_nums(e, &root.x, 3);
    IKD_EMIT_KEY(e, "rotations");
    ikd_emit_array(e, n);
    for (size_t i = 0; i < n; i++) {
        if (lr && !memcmp(&local[i], &pose[i].local_rotation, sizeof local[i])) ikd_emit_again(e, lr[2 * i], lr[2 * i + 1]);
        else ikd_emit_nums(e, &local[i].x, 4);
    }
    ikd_emit_end(e);
    if (req->translations || ft) {
        IKD_EMIT_KEY(e, "translations");
        ikd_emit_array(e, n);
        for (size_t i = 0; i < n; i++) {
            if (ft && !isnan(ft[i].x)) ikd_emit_nums(e, &ft[i].x, 3);
            else if (req->translations && req->has_translation[i]) ikd_emit_nums(e, &req->translations[i].x, 3);
            else ikd_emit_null(e);
        }
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
}

void ikd_reply_skeleton(ikd_emitter *e, const ikd_skel_request *req, const ikd_quat *local, const ikd_pose_joint *pose,
                        const ikd_goal_result *gr, const ikd_multi_result *res, double solve_us)
{
    size_t n = req->skeleton.count;
    /* JSON: the pose's rotations copied from the joints' local_rotation
     * text (100 of a 25-joint reply's 390 numbers; without memory for the
     * spans, written twice) */
    size_t *lr = e->enc == IKD_ENC_JSON ? malloc(2 * n * sizeof *lr) : NULL;
    ikd_emit_map(e, 6);
    emit_goals(e, req, req->goals, req->goal_count, gr, res->status);
    emit_joints(e, req->names, pose, n, lr);
    emit_pose(e, req, res->root, local, n, NULL, lr, pose);
    free(lr);
    IKD_EMIT_KEY(e, "iterations");
    ikd_emit_int(e, res->iterations);
    IKD_EMIT_KEY(e, "solve_us");
    ikd_emit_num(e, solve_us);
    ikd_emit_end(e);
}

void ikd_reply_clip_frame(ikd_emitter *e, const ikd_skel_request *req, size_t k, const ikd_goal *goals, size_t count,
                          const ikd_quat *local, const ikd_vec3 *ft, const ikd_goal_result *gr,
                          const ikd_multi_result *res, double solve_us)
{
    ikd_emit_map(e, 6);
    IKD_EMIT_KEY(e, "frame");
    ikd_emit_int(e, (long long)k);
    emit_goals(e, req, goals, count, gr, res->status);
    emit_pose(e, req, res->root, local, req->skeleton.count, ft, NULL, NULL);
    IKD_EMIT_KEY(e, "iterations");
    ikd_emit_int(e, res->iterations);
    IKD_EMIT_KEY(e, "solve_us");
    ikd_emit_num(e, solve_us);
    ikd_emit_end(e);
}

void ikd_reply_clip_summary(ikd_emitter *e, const ikd_skel_request *req, const ikd_clip_summary *s)
{
    ikd_emit_map(e, 8);
    IKD_EMIT_KEY(e, "frames");
    ikd_emit_int(e, (long long)s->frames);
    IKD_EMIT_KEY(e, "reached");
    ikd_emit_int(e, (long long)s->reached);
    IKD_EMIT_KEY(e, "iterations");
    ikd_emit_int(e, s->iterations);
    IKD_EMIT_KEY(e, "solve_us");
    ikd_emit_num(e, s->solve_us);
    IKD_EMIT_KEY(e, "max_change_deg");
    ikd_emit_num(e, s->max_change_deg);
    IKD_EMIT_KEY(e, "max_change_frame");
    ikd_emit_int(e, (long long)s->max_change_frame);
    IKD_EMIT_KEY(e, "max_change_joint");
    emit_joint_ref(e, req, s->max_change_joint);
    IKD_EMIT_KEY(e, "flips");
    ikd_emit_int(e, (long long)s->flips);
    ikd_emit_end(e);
}

void ikd_reply_error(ikd_emitter *e, const ikd_error *err)
{
    ikd_emit_map(e, 1);
    IKD_EMIT_KEY(e, "error");
    ikd_emit_map(e, 3);
    IKD_EMIT_KEY(e, "code");
    ikd_emit_str(e, ikd_wire_code(err->code));
    IKD_EMIT_KEY(e, "message");
    ikd_emit_str(e, err->message[0] ? err->message : ikd_wire_message(err->code));
    IKD_EMIT_KEY(e, "field");
    ikd_emit_str(e, err->field);
    ikd_emit_end(e);
    ikd_emit_end(e);
}

int ikd_reply_error_body(ikd_buf *out, ikd_encoding enc, const ikd_error *err)
{
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_reply_error(&e, err);
    return ikd_wire_status(err->code);
}

int ikd_reply_errorf(ikd_buf *out, ikd_encoding enc, int code, const char *field, const char *fmt, ...)
{
    ikd_error err;
    ikd_error_clear(&err);
    err.code = code;
    snprintf(err.field, sizeof err.field, "%s", field ? field : "");
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err.message, sizeof err.message, fmt, ap);
        va_end(ap);
    }
    return ikd_reply_error_body(out, enc, &err);
}

void ikd_reply_status(ikd_buf *out, ikd_encoding enc, const char *status)
{
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_emit_map(&e, 1);
    ikd_emit_key(&e, "status");
    ikd_emit_str(&e, status);
    ikd_emit_end(&e);
}
