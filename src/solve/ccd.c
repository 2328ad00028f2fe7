/* ccd.c - cyclic coordinate descent, effector-side joint first, with hinge/ball limits and a step cap. */
#include "iter.h"
#include "solvers.h"

/* Turn every joint after i about pose[i] by q. */
static void rotate_subtree(ikd_pose_joint *pose, size_t n, size_t i, ikd_quat q)
{
    ikd_vec3 pivot = pose[i].position;
    for (size_t k = i + 1; k < n; k++)
        pose[k].position = ikd_vec3_add(pivot, ikd_quat_rotate(q, ikd_vec3_sub(pose[k].position, pivot)));
}

/* The rotation at joint i that best turns the effector toward the target,
 * within the step cap and the joint's limits. */
static ikd_quat ccd_step(const ikd_problem *p, const ikd__ws *ws, const ikd_pose_joint *pose, size_t i, double max_step)
{
    const ikd_joint *j = p->joints;
    size_t n = ws->n;
    const ikd_constraint *c = &j[i].constraint;
    ikd_vec3 pi = pose[i].position;
    ikd_vec3 v1 = ikd_vec3_sub(pose[n - 1].position, pi), v2 = ikd_vec3_sub(p->target, pi);
    ikd_vec3 d = ikd__ws_bone_dir(ws, pose, i);
    ikd_quat r;
    if (c->type == IKD_CONSTRAINT_HINGE) {
        ikd_limit_frame f = ikd__ws_frame(ws, j, pose, i);
        ikd_vec3 axis = ikd_constraint_axis(c, f);
        ikd_vec3 a = ikd_vec3_reject(v1, axis), b = ikd_vec3_reject(v2, axis);
        double ang = 0;
        if (ikd_vec3_len(a) > 1e-12 * ws->total && ikd_vec3_len(b) > 1e-12 * ws->total)
            ang = atan2(ikd_vec3_dot(ikd_vec3_cross(a, b), axis), ikd_vec3_dot(a, b));
        if (ang > max_step) ang = max_step;
        if (ang < -max_step) ang = -max_step;
        r = ikd_quat_axis_angle(axis, ang);
        /* land the bone exactly on its allowed arc (clamps the angle, and
         * removes any drift out of the hinge plane) */
        ikd_vec3 want = ikd_constraint_apply(c, f, ikd_quat_rotate(r, d));
        return ikd_quat_mul(ikd_quat_arc(ikd_quat_rotate(r, d), want), r);
    }
    double la = ikd_vec3_len(v1), lb = ikd_vec3_len(v2);
    if (la < 1e-12 * ws->total || lb < 1e-12 * ws->total) return ikd_quat_identity();
    ikd_vec3 axis = ikd_vec3_cross(v1, v2);
    double ang = atan2(ikd_vec3_len(axis), ikd_vec3_dot(v1, v2));
    if (ikd_vec3_len(axis) <= 1e-12 * la * lb) return ikd_quat_identity();
    axis = ikd_vec3_norm_or(axis, ikd_vec3_any_perp(v1));
    if (ang > max_step) ang = max_step;
    r = ikd_quat_axis_angle(axis, ang);
    if (c->type == IKD_CONSTRAINT_BALL) {
        ikd_vec3 nd = ikd_quat_rotate(r, d);
        ikd_vec3 want = ikd_constraint_apply(c, ikd__ws_frame(ws, j, pose, i), nd);
        r = ikd_quat_mul(ikd_quat_arc(nd, want), r);
    }
    return r;
}

/* Two neighbouring free joints i and i+1 as one block: the rest of the chain
 * after i+1 is held rigid, and the pair is solved exactly by the law of
 * cosines in its current bend plane (the target clamped into the pair's
 * reach). This is what lets CCD extend a nearly straight chain quickly, where
 * single-joint steps only creep. */
static void ccd_pair(const ikd__ws *ws, ikd_pose_joint *pose, size_t i, ikd_vec3 target)
{
    size_t n = ws->n;
    ikd_vec3 a = pose[i].position, b = pose[i + 1].position, e = pose[n - 1].position;
    double la = ws->len[i], lb = ikd_vec3_dist(e, b), eps = 1e-12 * ws->total;
    ikd_vec3 d = ikd_vec3_sub(target, a);
    double dist = ikd_vec3_len(d);
    if (lb < eps || dist < eps) return;
    ikd_vec3 u = ikd_vec3_scale(d, 1.0 / dist);
    double x, h, D = ikd__two_bone_reach(la, lb, dist, &x, &h);
    ikd_vec3 w = ikd_vec3_reject(ikd_vec3_sub(b, a), u);
    if (ikd_vec3_len(w) < 1e-9 * la) w = ikd_vec3_reject(ikd_vec3_sub(e, b), u);
    w = ikd_vec3_len(w) < 1e-9 * la ? ikd_vec3_any_perp(u) : ikd_vec3_norm_or(w, ikd_vec3_any_perp(u));
    ikd_vec3 b2 = ikd_vec3_add(ikd_vec3_mad(a, u, x), ikd_vec3_scale(w, h));
    ikd_vec3 e2 = ikd_vec3_mad(a, u, D);
    rotate_subtree(pose, n, i, ikd_quat_arc(ikd_vec3_sub(b, a), ikd_vec3_sub(b2, a)));
    b2 = pose[i + 1].position;
    rotate_subtree(pose, n, i + 1, ikd_quat_arc(ikd_vec3_sub(pose[n - 1].position, b2), ikd_vec3_sub(e2, b2)));
}

static void ccd_single(const ikd_problem *p, const ikd__ws *ws, ikd_pose_joint *pose, size_t i, double max_step)
{
    ikd_quat q = ccd_step(p, ws, pose, i, max_step);
    if (1.0 - fabs(q.w) > 1e-18) rotate_subtree(pose, ws->n, i, q);
}

void ikd__ccd_run(const ikd_problem *p, ikd__ws *ws, ikd_pose_joint *pose, ikd_result *res)
{
    const ikd_joint *j = p->joints;
    size_t n = ws->n;
    ikd_vec3 root = j[0].position, target = p->target;
    double tol = p->options.tolerance;
    double max_step = p->options.max_step_deg * IKD_DEG2RAD;
    /* pair blocks change the step size, so they are used only without a step cap */
    int pairs = p->options.max_step_deg >= 180.0;

    if (!ws->constrained && ikd_vec3_dist(root, target) >= ws->total) {
        ikd__ws_straighten(ws, root, target, pose);
        ikd__ws_finish(ws, p, IKD_SOLVER_CCD, 1, pose, res);
        return;
    }
    ikd__ws_unstraighten(ws, p, pose);
    ikd__ws_enforce(ws, j, pose);
    double err = ikd_vec3_dist(pose[n - 1].position, target), prev = INFINITY;
    int it = 0, timed_out = 0;
    while (err > tol && it < p->options.max_iterations) {
        if ((timed_out = ikd__ws_out_of_time(p))) break;
        it++;
        /* effector side first: joint i+1 (alone, or with joint i as a free pair) */
        int root_done = 0;
        for (size_t i = n - 2; i-- > 0 && err > tol;) {
            int free_pair = pairs && j[i].constraint.type == IKD_CONSTRAINT_NONE &&
                            j[i + 1].constraint.type == IKD_CONSTRAINT_NONE;
            if (free_pair) ccd_pair(ws, pose, i, target);
            else ccd_single(p, ws, pose, i + 1, max_step);
            root_done = free_pair && i == 0;
            err = ikd_vec3_dist(pose[n - 1].position, target);
        }
        if (!root_done && err > tol) {
            ccd_single(p, ws, pose, 0, max_step);
            err = ikd_vec3_dist(pose[n - 1].position, target);
        }
        if (prev - err <= 1e-12 * ws->total && it > 1) break; /* no progress: stalled */
        prev = err;
    }
    /* exact lengths and limits for the returned pose (rotations accumulate rounding) */
    ikd__ws_enforce(ws, j, pose);
    ikd__ws_finish_timed(ws, p, IKD_SOLVER_CCD, it, timed_out, pose, res);
}
