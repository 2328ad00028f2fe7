/* multi_aim.c - a cold skeleton solve's aimed restart: each limb bent by the law of cosines and pointed at its goal. */
#include <math.h>

#include "multi.h"

/* Joint k's pose from its parent's, as ikd_skeleton_fk computes it. */
static void pose_one(const ikd_skeleton *s, const ikd_quat *local, ikd_pose_joint *pose, size_t k)
{
    const ikd_pose_joint *pp = &pose[s->joints[k].parent];
    pose[k].position = ikd_vec3_add(pp->position, ikd_quat_rotate(pp->rotation, s->joints[k].offset));
    pose[k].rotation = ikd_quat_norm(ikd_quat_mul(pp->rotation, local[k]));
}

/* The angle at limb joint m between its bones to u and to c, radians. */
static double inner_angle(const ikd_pose_joint *pose, long u, long m, long c)
{
    return ikd_vec3_angle(ikd_vec3_sub(pose[u].position, pose[m].position), ikd_vec3_sub(pose[c].position, pose[m].position));
}

/* Goal i's limb (u, m and the goal's joint c: shoulder, elbow, hand) bent
 * at m to the angle that puts c at the target's distance from u (the law
 * of cosines, within reach), about m's hinge or, a 3-DoF m, in the limb's
 * bend plane (a straight one is only swung), whichever way the limits
 * leave nearer that angle; then swung at u by the shortest arc to point c
 * at the target; c turned to the target's rotation. Each within its
 * limit; pose holds u, m and c after (pose_one: u's parent as it was). */
static void aim_limb(const multi_ws *w, const ikd_multi_problem *p, size_t i, long u, long m, ikd_quat *local,
                     ikd_pose_joint *pose)
{
    const ikd_skeleton *s = p->skeleton;
    long c = (long)p->goals[i].joint;
    ikd_vec3 pu = pose[u].position, to = w->tpos[i];
    double a = ikd_vec3_dist(pu, pose[m].position), b = ikd_vec3_dist(pose[m].position, pose[c].position);
    double d = fmin(fmax(ikd_vec3_dist(to, pu), fabs(a - b)), a + b);
    double want = acos(fmin(1, fmax(-1, (a * a + b * b - d * d) / (2 * a * b)))), cur = inner_angle(pose, u, m, c);
    ikd_vec3 n = ikd_vec3_cross(ikd_vec3_sub(pu, pose[m].position), ikd_vec3_sub(pose[c].position, pose[m].position));
    int hinge = w->dof[m] == 1;
    if (a > 0 && b > 0 && (hinge || ikd_vec3_len(n) > 1e-9 * a * b)) {
        ikd_vec3 axis = hinge ? s->joints[m].limit.local_axis /* (the turn about m's own frame: local[m] times it) */
                              : ikd_quat_rotate(ikd_quat_conj(pose[m].rotation), ikd_vec3_scale(n, 1 / ikd_vec3_len(n)));
        ikd_quat was = local[m], best = was;
        double off = fabs(cur - want);
        for (int sg = -1; sg <= 1; sg += 2) {
            local[m] = ikd__multi_within_limit(s, (size_t)m, ikd_quat_norm(ikd_quat_mul(was, ikd_quat_axis_angle(axis, sg * (want - cur)))));
            pose_one(s, local, pose, (size_t)m), pose_one(s, local, pose, (size_t)c);
            double o = fabs(inner_angle(pose, u, m, c) - want);
            if (o < off - 1e-9) off = o, best = local[m]; /* (a tie keeps the first: the same start wherever the problem lies) */
        }
        local[m] = best;
        pose_one(s, local, pose, (size_t)m), pose_one(s, local, pose, (size_t)c);
    }
    ikd_quat pr = pose[s->joints[u].parent].rotation, swing = ikd_quat_arc(ikd_vec3_sub(pose[c].position, pu), ikd_vec3_sub(to, pu));
    swing = ikd_quat_mul(ikd_quat_mul(ikd_quat_conj(pr), swing), pr); /* the world turn in u's parent's frame */
    local[u] = ikd__multi_within_limit(s, (size_t)u, ikd_quat_norm(ikd_quat_mul(swing, local[u])));
    pose_one(s, local, pose, (size_t)u), pose_one(s, local, pose, (size_t)m);
    if (w->want[i] & 2)
        local[c] = ikd__multi_within_limit(s, (size_t)c, ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(pose[m].rotation), w->trot[i])));
    pose_one(s, local, pose, (size_t)c);
}

int ikd__multi_preaim(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose)
{
    const ikd_skeleton *s = p->skeleton;
    if (p->start || p->preferred || p->soften < 1) return 0;
    int any = 0;
    for (size_t i = 0; i < w->g; i++) {
        const ikd_goal *g = &p->goals[i];
        long m, u;
        if (g->has_pole || g->has_ground || (w->want[i] & 32) || !ikd__multi_limb_of(w, p, i, &m, &u) || u <= 0 ||
            w->dof[u] != 3 || !w->dof[m])
            continue;
        if (!local) return 1;
        if (!any++) {
            for (size_t k = 0; k < s->count; k++)
                if (!w->idle[k]) local[k] = ikd__multi_within_limit(s, k, s->joints[k].neutral_local);
            ikd_skeleton_fk(s, p->root, local, pose);
        }
        aim_limb(w, p, i, u, m, local, pose);
    }
    return any > 0;
}
