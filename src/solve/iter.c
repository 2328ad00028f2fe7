/* iter.c - shared machinery of the iterative solvers: workspace, enforcement pass, straightening, status. */
#include "iter.h"

void ikd__ws_setup(ikd__ws *ws, void *mem, const ikd_problem *p, ikd_pose_joint *pose)
{
    size_t n = p->joint_count;
    double *d = mem;
    ws->n = n;
#define IKD__WS_CARVE(name, type, per_joint) \
    ws->name = (type *)(void *)d;            \
    d += (per_joint) * n;
    IKD__WS_LAYOUT(IKD__WS_CARVE)
#undef IKD__WS_CARVE
    ws->total = 0;
    ws->longest = 0;
    ws->constrained = 0;
    const ikd_joint *j = p->joints;
    for (size_t i = 0; i < n; i++) {
        pose[i].position = j[i].position;
        if (j[i].constraint.type != IKD_CONSTRAINT_NONE) ws->constrained = 1;
        if (i + 1 < n) {
            ikd_vec3 b = ikd_vec3_sub(j[i + 1].position, j[i].position);
            double l = ikd_vec3_len(b);
            ws->len[i] = l;
            ws->d0[i] = ikd_vec3_scale(b, 1.0 / l);
            ws->total += l;
            if (l > ws->longest) ws->longest = l;
        }
    }
}

void ikd__ws_enforce(const ikd__ws *ws, const ikd_joint *joints, ikd_pose_joint *pose)
{
    pose[0].position = joints[0].position;
    for (size_t i = 0; i + 1 < ws->n; i++) {
        ikd_vec3 d = ikd__ws_bone_dir(ws, pose, i);
        if (joints[i].constraint.type != IKD_CONSTRAINT_NONE)
            d = ikd_constraint_apply(&joints[i].constraint, ikd__ws_frame(ws, joints, pose, i), d);
        pose[i + 1].position = ikd_vec3_mad(pose[i].position, d, ws->len[i]);
    }
}

void ikd__ws_straighten(const ikd__ws *ws, ikd_vec3 root, ikd_vec3 target, ikd_pose_joint *pose)
{
    ikd_vec3 u = ikd_vec3_norm_or(ikd_vec3_sub(target, root), ws->d0[0]);
    double along = 0;
    pose[0].position = root;
    for (size_t i = 0; i + 1 < ws->n; i++) {
        along += ws->len[i];
        pose[i + 1].position = ikd_vec3_mad(root, u, along);
    }
}

void ikd__ws_unstraighten(const ikd__ws *ws, const ikd_problem *p, ikd_pose_joint *pose)
{
    size_t n = ws->n;
    if (n < 3) return;
    ikd_vec3 root = pose[0].position;
    ikd_vec3 u = ikd_vec3_norm_or(ikd_vec3_sub(pose[n - 1].position, root), ws->d0[0]);
    double eps = 1e-9 * ws->total;
    for (size_t i = 1; i < n; i++)
        if (ikd_vec3_len(ikd_vec3_reject(ikd_vec3_sub(pose[i].position, root), u)) > eps) return; /* bent */
    if (ikd_vec3_len(ikd_vec3_reject(ikd_vec3_sub(p->target, root), u)) > eps) return; /* target off the line */
    ikd_vec3 side = ikd_vec3_make(0, 0, 0);
    if (p->has_pole) side = ikd_vec3_norm_or(ikd_vec3_reject(ikd_vec3_sub(p->pole, root), u), side);
    if (ikd_vec3_len(side) == 0) side = ikd_vec3_any_perp(u);
    /* A gentle arc: interior joint i moves sideways by 1% of the chain length
     * times sin(pi * along / total); lengths are restored by the caller's pass. */
    double along = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        along += ws->len[i - 1];
        pose[i].position = ikd_vec3_mad(pose[i].position, side, 0.01 * ws->total * sin(IKD_PI * along / ws->total));
    }
}

int ikd__ws_out_of_reach(const ikd__ws *ws, const ikd_problem *p)
{
    double dist = ikd_vec3_dist(p->target, p->joints[0].position);
    return dist > ws->total || dist < 2 * ws->longest - ws->total;
}

void ikd__ws_finish(const ikd__ws *ws, const ikd_problem *p, ikd_solver solver, int iterations, ikd_pose_joint *pose,
                   ikd_result *res)
{
    size_t n = ws->n;
    res->solver = solver;
    res->iterations = iterations;
    res->error = ikd_vec3_dist(pose[n - 1].position, p->target);
    res->reached = res->error <= p->options.tolerance;
    if (res->reached) {
        res->status = IKD_STATUS_REACHED;
    } else {
        res->status = ikd__ws_out_of_reach(ws, p) ? IKD_STATUS_UNREACHABLE : IKD_STATUS_MAX_ITERATIONS;
    }
    ikd_chain_pose_rotations(p->joints, n, p->has_target_rotation ? &p->target_rotation : NULL, pose);
}

void ikd__ws_finish_timed(const ikd__ws *ws, const ikd_problem *p, ikd_solver solver, int iterations, int timed_out,
                         ikd_pose_joint *pose, ikd_result *res)
{
    ikd__ws_finish(ws, p, solver, iterations, pose, res);
    if (timed_out && !res->reached) res->status = IKD_STATUS_DEADLINE;
}
