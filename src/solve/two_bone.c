/* two_bone.c - analytic two-bone IK (law of cosines) with a pole point for the bend plane. */
#include "solvers.h"

/* Below this fraction of the chain length a direction counts as undefined. */
#define IKD_TWO_BONE_EPS 1e-9

/* The unit direction from the root to the target, or when the target sits on
 * the root, the start direction root -> effector (or of the first bone). */
static ikd_vec3 two_bone_aim(ikd_vec3 root, ikd_vec3 to_target, double dist, const ikd_joint *j, double scale)
{
    if (dist > IKD_TWO_BONE_EPS * scale) return ikd_vec3_scale(to_target, 1.0 / dist);
    ikd_vec3 bone = ikd_vec3_norm_or(ikd_vec3_sub(j[1].position, root), ikd_vec3_make(1, 0, 0));
    ikd_vec3 e0 = ikd_vec3_sub(j[2].position, root);
    if (ikd_vec3_len(e0) > IKD_TWO_BONE_EPS * scale) return ikd_vec3_norm_or(e0, bone);
    return bone;
}

/* The unit direction, perpendicular to `u`, the middle joint bends toward:
 * 1. the pole's offset from the root-target line;
 * 2. else the start pose's bend (middle joint's offset from the root-effector
 *    line), swung by the shortest arc from the start effector direction to u;
 * 3. else (straight start chain) the first bone's start direction off u;
 * 4. else a fixed perpendicular of u (ikd_vec3_any_perp). */
static ikd_vec3 two_bone_bend(const ikd_problem *p, ikd_vec3 u, double scale)
{
    const ikd_joint *j = p->joints;
    ikd_vec3 root = j[0].position;
    double eps = IKD_TWO_BONE_EPS * scale;
    if (p->has_pole) {
        ikd_vec3 w = ikd_vec3_reject(ikd_vec3_sub(p->pole, root), u);
        if (ikd_vec3_len(w) > eps) return ikd_vec3_norm_or(w, u);
    }
    ikd_vec3 b1 = ikd_vec3_sub(j[1].position, root);
    ikd_vec3 e0 = ikd_vec3_sub(j[2].position, root);
    double e0len = ikd_vec3_len(e0);
    if (e0len > eps) {
        ikd_vec3 e0u = ikd_vec3_scale(e0, 1.0 / e0len);
        ikd_vec3 s = ikd_vec3_reject(b1, e0u);
        if (ikd_vec3_len(s) > eps) {
            ikd_vec3 w = ikd_vec3_reject(ikd_quat_rotate(ikd_quat_arc(e0u, u), s), u);
            if (ikd_vec3_len(w) > eps) return ikd_vec3_norm_or(w, u);
        }
    }
    ikd_vec3 w = ikd_vec3_reject(b1, u);
    if (ikd_vec3_len(w) > eps) return ikd_vec3_norm_or(w, u);
    return ikd_vec3_any_perp(u);
}

double ikd__two_bone_reach(double l1, double l2, double dist, double *along, double *height)
{
    double dmin = fabs(l1 - l2), dmax = l1 + l2;
    double d = dist < dmin ? dmin : (dist > dmax ? dmax : dist);
    double a, h;
    if (dist >= dmax || (dmin > 0.0 && dist <= dmin)) {
        /* On or past a reach limit the pair is straight (or folded flat):
         * set it exactly rather than through the ill-conditioned sqrt. */
        a = (dist >= dmax || l1 >= l2) ? l1 : -l1;
        h = 0.0;
    } else if (d > 0.0) {
        /* a = (l1^2 - l2^2 + d^2) / 2d and h^2 = (l1 - a)(l1 + a), each
         * factor formed without cancellation (Heron's product, as in Kahan's
         * needle-like triangles): 2d (l1 - a) = (l2 - (d - l1))(l2 + (d - l1))
         * and 2d (l1 + a) = (l1 + d - l2)(l1 + d + l2). From the squares, a
         * bone 1e-5 of the other lost up to 1.2e-4 of its length to rounding
         * (now 2.2e-10); square roots of the factors (not of their product)
         * stay finite up to IKD_MAX_EXTENT. */
        double dl = d - l1, lo = fmax(0.0, (l2 - dl) * (l2 + dl)), hi = fmax(0.0, (l1 + d - l2) * (l1 + d + l2));
        a = l1 - lo / (2.0 * d);
        if (a > l1) a = l1;
        if (a < -l1) a = -l1;
        h = sqrt(lo) * sqrt(hi) / (2.0 * d);
    } else { /* d = 0 only when l1 == l2: folded onto the root */
        a = 0.0;
        h = l1;
    }
    *along = a;
    *height = h;
    return d;
}

/* Soft IK and stretch (DESIGN.md "Two-bone options"): the distance to aim
 * at for a target `dist` from the root, and the factor both bones scale by
 * (1 without stretch). Soften eases targets beyond soften x reach in along
 * 1 - exp, so the aimed distance stays below the reach and moves smoothly;
 * stretch then lengthens both bones alike, at most `stretch` times, to
 * cover what is left. */
double ikd__two_bone_soft(double reach, double soften, double stretch, double dist, double *scale)
{
    double da = soften * reach, ds = reach - da, d = dist;
    if (soften < 1 && ds > 0 && dist > da) d = da + ds * (1 - exp(-(dist - da) / ds));
    else if (dist > reach) d = reach;
    *scale = 1;
    if (stretch > 1 && dist > d && d > 0) *scale = fmin(dist / d, stretch);
    return d * *scale;
}

void ikd__two_bone_run(const ikd_problem *p, ikd_pose_joint *pose, ikd_result *res)
{
    const ikd_joint *j = p->joints;
    ikd_vec3 root = j[0].position;
    double l1 = ikd_chain_bone_length(j, 0), l2 = ikd_chain_bone_length(j, 1);
    double scale = l1 + l2, k = 1;
    ikd_vec3 to_target = ikd_vec3_sub(p->target, root);
    double dist = ikd_vec3_len(to_target);
    ikd_vec3 u = two_bone_aim(root, to_target, dist, j, scale);
    ikd_vec3 w = two_bone_bend(p, u, scale);
    int soft = p->options.soften < 1 || p->options.stretch > 1;
    double aim = soft ? ikd__two_bone_soft(scale, p->options.soften, p->options.stretch, dist, &k) : dist;

    double a, h, d = ikd__two_bone_reach(k * l1, k * l2, aim, &a, &h);

    /* The middle joint at the first bone's length along (a, h); the
     * effector on the aimed point when that is the second bone's length
     * away to rounding (1e-12 of the reach: so a target in reach is met
     * exactly, even with tolerance 0), else at that length toward it. Where
     * the triangle is ill-conditioned (a target near |l1 - l2| from the
     * root on bones of 4e13) (a, h) carries more rounding than the bones'
     * own, and the effector on the target changed a bone by 2.6e-4 of its
     * length; that rounding is in `error` now, never in a bone. */
    ikd_vec3 el = ikd_vec3_add(ikd_vec3_scale(u, a), ikd_vec3_scale(w, h));
    double n = ikd_vec3_len(el);
    ikd_vec3 aimed = (d == dist) ? p->target : ikd_vec3_mad(root, u, d);
    pose[0].position = root;
    pose[1].position = n > 0 ? ikd_vec3_mad(root, el, k * l1 / n) : ikd_vec3_mad(root, u, k * l1);
    ikd_vec3 lower = ikd_vec3_sub(aimed, pose[1].position);
    double m = ikd_vec3_len(lower);
    pose[2].position = fabs(m - k * l2) <= 1e-12 * k * scale || !(m > 0) ? aimed : ikd_vec3_mad(pose[1].position, lower, k * l2 / m);
    ikd_chain_pose_rotations(j, 3, p->has_target_rotation ? &p->target_rotation : NULL, pose);

    res->solver = IKD_SOLVER_TWO_BONE;
    res->iterations = 1;
    res->error = ikd_vec3_dist(pose[2].position, p->target);
    res->reached = res->error <= p->options.tolerance;
    /* softened, a target in (stretched) reach is met as soft IK means it: the
     * effector where softening puts it, `error` the distance left */
    if (soft && !res->reached && dist <= k * scale * (1 + 1e-12) && fabs(d - aim) <= 1e-12 * scale) res->reached = 1;
    res->status = res->reached ? IKD_STATUS_REACHED : IKD_STATUS_UNREACHABLE;
}
