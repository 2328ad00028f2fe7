/* fabrik.c - FABRIK: backward and forward reaching passes; constraints applied in the forward pass. */
#include "iter.h"
#include "solvers.h"

void ikd_fabrik_run(const ikd_problem *p, ikd_ws *ws, ikd_pose_joint *pose, ikd_result *res)
{
    const ikd_joint *j = p->joints;
    size_t n = ws->n;
    ikd_vec3 root = j[0].position, target = p->target;
    double tol = p->options.tolerance;
    double dist = ikd_vec3_dist(root, target);

    if (!ws->constrained && dist >= ws->total) {
        /* Out of reach and free to point anywhere: straight at it, in one step. */
        ikd_ws_straighten(ws, root, target, pose);
        ikd_ws_finish(ws, p, IKD_SOLVER_FABRIK, 1, pose, res);
        return;
    }
    ikd_ws_unstraighten(ws, p, pose);
    ikd_ws_enforce(ws, j, pose); /* start from a pose within the limits */

    double err = ikd_vec3_dist(pose[n - 1].position, target), prev = INFINITY;
    int it = 0, timed_out = 0;
    while (err > tol && it < p->options.max_iterations) {
        if ((timed_out = ikd_ws_out_of_time(p))) break;
        it++;
        /* backward: effector onto the target, each joint pulled toward its child */
        pose[n - 1].position = target;
        for (size_t i = n - 1; i-- > 0;) {
            ikd_vec3 d = ikd_vec3_norm_or(ikd_vec3_sub(pose[i + 1].position, pose[i].position), ws->d0[i]);
            const ikd_constraint *child = &j[i + 1].constraint;
            if (child->type == IKD_CONSTRAINT_BALL) {
                /* a cone is symmetric: bone i must lie within the child's
                 * cone around bone i+1 just as bone i+1 around bone i */
                ikd_limit_frame f = {ikd_ws_bone_dir(ws, pose, i + 1), ikd_quat_identity()};
                d = ikd_constraint_apply(child, f, d);
            } else if (child->type == IKD_CONSTRAINT_HINGE) {
                /* the child's hinge seen from bone i+1: bone i turned back by
                 * the hinge angle, so the mirrored range [-max, -min] about the
                 * axis as bone i carries it now */
                ikd_constraint mirror = *child;
                mirror.min_deg = -child->max_deg;
                mirror.max_deg = -child->min_deg;
                ikd_limit_frame f = {ikd_ws_bone_dir(ws, pose, i + 1), ikd_quat_arc(ws->d0[i], d)};
                d = ikd_constraint_apply(&mirror, f, d);
            }
            pose[i].position = ikd_vec3_mad(pose[i + 1].position, d, -ws->len[i]);
        }
        /* forward: root back in place, each bone within its limits */
        ikd_ws_enforce(ws, j, pose);
        err = ikd_vec3_dist(pose[n - 1].position, target);
        /* stalled (a limit or the reach holds it): more passes will not help */
        if (prev - err <= 1e-12 * ws->total && err >= prev - 1e-12 * ws->total && it > 1) break;
        prev = err;
    }
    ikd_ws_finish_timed(ws, p, IKD_SOLVER_FABRIK, it, timed_out, pose, res);
}
