/* fabrik.c - FABRIK: backward and forward reaching passes; constraints applied in the forward pass. */
#include "iter.h"
#include "solvers.h"

/* Restarts. FABRIK on a constrained chain can settle where a limit holds one
 * joint and the passes undo each other's moves, short of a target the chain
 * could reach (a hinge chain bent the wrong way, most often). When it stalls
 * there it starts again from the next of these poses, within the shared
 * iteration budget and deadline, and the closest end of all is kept. Each
 * start moves the problem's start positions about the root-target line:
 * a joint's offset from the line becomes mirror * offset + turn * (u x offset)
 * (u the line's direction), then the limits are applied from the root.
 * What they gain is measured by `make bench` (docs/performance.md). */
typedef struct restart_start {
    double mirror, turn;
} restart_start;

static const restart_start restarts[] = {
    {-1, 0}, /* the other bend: mirrored through the line */
    {0, 1},  /* a quarter turn about the line */
    {0, -1}, /* the other quarter turn */
    {0, 0},  /* straight along the line (then bent slightly off it) */
    {-3, 0}, /* mirrored and bent three times as far */
};

static void restart_pose(const ikd__ws *ws, const ikd_problem *p, const restart_start *r, ikd_pose_joint *pose)
{
    const ikd_joint *j = p->joints;
    ikd_vec3 root = j[0].position;
    ikd_vec3 u = ikd_vec3_norm_or(ikd_vec3_sub(p->target, root), ws->d0[0]);
    for (size_t i = 0; i < ws->n; i++) {
        ikd_vec3 rel = ikd_vec3_sub(j[i].position, root);
        ikd_vec3 off = ikd_vec3_reject(rel, u);
        ikd_vec3 moved = ikd_vec3_add(ikd_vec3_scale(off, r->mirror), ikd_vec3_scale(ikd_vec3_cross(u, off), r->turn));
        pose[i].position = ikd_vec3_add(root, ikd_vec3_add(ikd_vec3_sub(rel, off), moved));
    }
    ikd__ws_unstraighten(ws, p, pose);
    ikd__ws_enforce(ws, j, pose);
}

void ikd__fabrik_run(const ikd_problem *p, ikd__ws *ws, ikd_pose_joint *pose, ikd_result *res)
{
    const ikd_joint *j = p->joints;
    size_t n = ws->n;
    ikd_vec3 root = j[0].position, target = p->target;
    double tol = p->options.tolerance;
    double dist = ikd_vec3_dist(root, target);

    if (!ws->constrained && dist >= ws->total) {
        /* Out of reach and free to point anywhere: straight at it, in one step. */
        ikd__ws_straighten(ws, root, target, pose);
        ikd__ws_finish(ws, p, IKD_SOLVER_FABRIK, 1, pose, res);
        return;
    }
    ikd__ws_unstraighten(ws, p, pose);
    ikd__ws_enforce(ws, j, pose); /* start from a pose within the limits */

    /* a constrained chain can stall short of a target it could reach; it
     * may then start again (see restarts), unless the target is out of reach,
     * where no start pose would help */
    int may_restart = ws->constrained && !ikd__ws_out_of_reach(ws, p);
    ikd_vec3 *best = ws->dir; /* the closest pose of the earlier starts (FABRIK leaves dir unused) */
    double best_err = INFINITY;
    size_t restart = 0;

    double err = ikd_vec3_dist(pose[n - 1].position, target), prev = INFINITY;
    int it = 0, timed_out = 0;
    while (err > tol && it < p->options.max_iterations) {
        if ((timed_out = ikd__ws_out_of_time(p))) break;
        it++;
        /* backward: effector onto the target, each joint pulled toward its child */
        pose[n - 1].position = target;
        for (size_t i = n - 1; i-- > 0;) {
            ikd_vec3 d = ikd_vec3_norm_or(ikd_vec3_sub(pose[i + 1].position, pose[i].position), ws->d0[i]);
            const ikd_constraint *child = &j[i + 1].constraint;
            if (child->type == IKD_CONSTRAINT_BALL) {
                /* a cone is symmetric: bone i must lie within the child's
                 * cone around bone i+1 just as bone i+1 around bone i */
                ikd_limit_frame f = {ikd__ws_bone_dir(ws, pose, i + 1), ikd_quat_identity()};
                d = ikd_constraint_apply(child, f, d);
            } else if (child->type == IKD_CONSTRAINT_HINGE) {
                /* the child's hinge seen from bone i+1: bone i turned back by
                 * the hinge angle, so the mirrored range [-max, -min] about the
                 * axis as bone i carries it now */
                ikd_constraint mirror = *child;
                mirror.min_deg = -child->max_deg;
                mirror.max_deg = -child->min_deg;
                ikd_limit_frame f = {ikd__ws_bone_dir(ws, pose, i + 1), ikd_quat_arc(ws->d0[i], d)};
                d = ikd_constraint_apply(&mirror, f, d);
            }
            pose[i].position = ikd_vec3_mad(pose[i + 1].position, d, -ws->len[i]);
        }
        /* forward: root back in place, each bone within its limits */
        ikd__ws_enforce(ws, j, pose);
        err = ikd_vec3_dist(pose[n - 1].position, target);
        /* stalled (a limit or the reach holds it): more passes will not help
         * from here; start again from the next start pose, if any is left */
        if (prev - err <= 1e-12 * ws->total && err >= prev - 1e-12 * ws->total && it > 1) {
            if (!may_restart || restart == sizeof restarts / sizeof restarts[0]) break;
            if (err < best_err) {
                best_err = err;
                for (size_t i = 0; i < n; i++) best[i] = pose[i].position;
            }
            restart_pose(ws, p, &restarts[restart++], pose);
            err = ikd_vec3_dist(pose[n - 1].position, target);
            prev = INFINITY;
            continue;
        }
        prev = err;
    }
    if (err > tol && best_err < err) /* an earlier start ended closer */
        for (size_t i = 0; i < n; i++) pose[i].position = best[i];
    ikd__ws_finish_timed(ws, p, IKD_SOLVER_FABRIK, it, timed_out, pose, res);
}
