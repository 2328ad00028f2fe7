/* multi_rows.c - one skeleton iteration's terms: each joint's columns, far goals, the task error and Jacobian rows. */
#include <string.h>

#include "limit.h"
#include "solvers.h"
#include "multi.h"

/* v of length l made unit, or when it has no direction a unit vector
 * normal to u (the normal computed only then). */
static inline ikd_vec3 unit_of_len_or_perp(ikd_vec3 v, double l, ikd_vec3 u)
{
    return l > 0 && isfinite(l) ? ikd_vec3_scale(v, 1 / l) : ikd_vec3_any_perp(u);
}

/* v made unit, or when it has no direction a unit vector normal to u. */
static ikd_vec3 unit_or_perp(ikd_vec3 v, ikd_vec3 u)
{
    return unit_of_len_or_perp(v, ikd_vec3_len(v), u);
}

/* 1 when w->ea holds joint k's angles at local[k] (apply set both). */
static int angles_kept(const multi_ws *w, const ikd_quat *local, size_t k)
{
    return !memcmp(&w->eq[k], &local[k], sizeof local[k]);
}

/* An euler joint whose box bounds its middle angle alone
 * (ikd__euler_banded), given its gimbal axes ax: columns about ax[0], the
 * middle axis ax[1] and their cross product, orthonormal, so a step's
 * metric is the turn itself. Its angles' rates would be that too far from
 * gimbal lock, but near it the first and third axes are nearly parallel
 * and a turn normal to both costs rates of 1 / cos(middle): at a middle
 * bound of 89.9 degrees, steps of 0.5 rad in the angles turned the joint
 * a few thousandths, and a tracked hip there crawled, stalled and left
 * its branch (Boxing_Toes, limits the recording keeps in channel order).
 * The middle column's rate is the middle angle's (ax[1] is normal to the
 * other two gimbal axes), so its bounds stay column bounds; one within
 * MULTI_GIMBAL_CAP of a pole is left to the projection: it cuts off a cap
 * that small about a pole the band holds all around, and as a column
 * bound its axis turns with the first angle, which the pole leaves
 * undefined. */
static void banded_frame(multi_ws *w, ikd_vec3 *ax, int c, size_t k)
{
    ax[2] = ikd_vec3_cross(ax[0], ax[1]); /* (the outer columns' whole turns: unbounded, ikd__multi_joint_frames) */
    double cap = (90 - MULTI_GIMBAL_CAP) * IKD_DEG2RAD;
    if (w->clo[c + 1] <= -cap) w->clo[c + 1] = -INFINITY;
    if (w->chi[c + 1] >= cap) w->chi[c + 1] = INFINITY;
    double *zi = &w->zinv[9 * k];
    for (int a = 0; a < 3; a++) zi[3 * a] = ax[a].x, zi[3 * a + 1] = ax[a].y, zi[3 * a + 2] = ax[a].z;
}

/* Joint k's columns at the current pose, in its constraint's own terms so
 * that each bound is on one column: a hinge turns about its axis; a ball
 * joint's columns are its twist (about the bone), its swing's radial
 * direction (away from the twist axis) and the tangent to the cone; an
 * euler joint's are its three gimbal axes (their rates are the angles'
 * rates); a free joint's the world axes. Each column's angle and range. */
static void joint_frame(multi_ws *w, const ikd_skeleton *s, const ikd_quat *local, const ikd_pose_joint *pose, size_t k)
{
    const ikd_skeleton_joint *j = &s->joints[k];
    const ikd_limit *l = &j->limit;
    ikd_vec3 *ax = &w->axw[3 * k];
    int c = w->col[k];
    if (c < 0) return;
    for (int a = 0; a < w->dof[k]; a++) w->cval[c + a] = 0, w->clo[c + a] = -INFINITY, w->chi[c + a] = INFINITY;
    if (w->idle[k]) return; /* (its parent's pose may be stale: the iterations compute only the joints they read) */
    ikd_quat F = ikd_quat_mul(k ? pose[j->parent].rotation : ikd_quat_identity(), j->rest_local);
    ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), local[k]);
    switch (l->type) {
    case IKD_LIMIT_HINGE: {
        ax[0] = ikd_quat_rotate(F, l->local_axis);
        w->cval[c] = angles_kept(w, local, k) ? w->ea[3 * k] : ikd__hinge_angle(l, ikd__twist_angle(d, l->local_axis));
        w->clo[c] = l->min_deg * IKD_DEG2RAD, w->chi[c] = l->max_deg * IKD_DEG2RAD;
        break;
    }
    case IKD_LIMIT_BALL: {
        /* d = swing x twist, the twist (p a, w) / |(p a, w)| about the twist
         * axis a (p = d.xyz . a, w = d.w): the swing d x twist^-1 is, up to
         * its length, (w v + p (a x v), p^2 + w^2) with v d.xyz less its
         * part along a (no division before it is made unit); the twist's
         * angle 2 atan2(p, w). A half-turn swing leaves no twist (p and w
         * both 0: ikd_limit_swing_twist's identity twist). */
        ikd_vec3 a = l->local_axis, v = ikd_vec3_make(d.x, d.y, d.z), sv;
        double p = ikd_vec3_dot(v, a), sww, ty = p, tx = d.w;
        if (p * p + d.w * d.w > 1e-24) {
            sv = ikd_vec3_add(ikd_vec3_scale(ikd_vec3_mad(v, a, -p), d.w), ikd_vec3_scale(ikd_vec3_cross(a, v), p));
            sww = p * p + d.w * d.w;
        } else {
            ikd_quat sq, tq;
            ikd_limit_swing_twist(d, a, &sq, &tq);
            if (sq.w < 0) sq = ikd_quat_make(-sq.x, -sq.y, -sq.z, -sq.w);
            sv = ikd_vec3_make(sq.x, sq.y, sq.z), sww = sq.w;
            ty = ikd_vec3_dot(ikd_vec3_make(tq.x, tq.y, tq.z), a), tx = tq.w;
        }
        double s2 = ikd_vec3_dot(sv, sv), sl = sqrt(s2), iq = 1 / sqrt(s2 + sww * sww);
        ikd_quat sw = ikd_quat_make(sv.x * iq, sv.y * iq, sv.z * iq, sww * iq); /* unit, w >= 0 */
        /* the bone's direction after the swing, and the swing's own axis
         * (radial; normal to the twist axis when there is no swing) */
        ikd_vec3 b = ikd_quat_rotate(sw, a);
        ikd_vec3 n = unit_of_len_or_perp(sv, sl, a);
        ax[0] = ikd_quat_rotate(F, b);
        ax[1] = ikd_quat_rotate(F, n);
        ax[2] = ikd_vec3_cross(ax[0], ax[1]); /* F (b x n): a rotation keeps cross products */
        w->cval[c] = ikd__wrap_pi(2 * atan2(ty, tx));
        w->clo[c] = l->twist_min_deg * IKD_DEG2RAD, w->chi[c] = l->twist_max_deg * IKD_DEG2RAD;
        /* a swing past the twist axis is a swing the other way: the radial
         * range is symmetric */
        w->cval[c + 1] = 2 * atan2(sl, sww), w->chi[c + 1] = l->max_deg * IKD_DEG2RAD;
        w->clo[c + 1] = -w->chi[c + 1];
        break;
    }
    case IKD_LIMIT_EULER: {
        static const int order_axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        const int *oa = order_axes[l->order];
        double ang[3];
        if (angles_kept(w, local, k)) memcpy(ang, &w->ea[3 * k], sizeof ang);
        else ikd_limit_euler_angles(l->order, ikd__euler_in(l, d), ang);
        /* D = R1(a) R2(b) R3(c): the gimbal axes are F e1, F R1 e2 and
         * F R1 R2 e3 = F D e3 (the joint's own e3); the middle one is normal
         * to both (sign: the order's parity). With a frame L (D = L E L^-1,
         * E the angles' product): F L e1 and F D L e3. */
        ikd_vec3 e1 = ikd_vec3_make(oa[0] == 0, oa[0] == 1, oa[0] == 2), e3 = ikd_vec3_make(oa[2] == 0, oa[2] == 1, oa[2] == 2);
        if (l->has_frame) e1 = ikd_quat_rotate(l->local_frame, e1), e3 = ikd_quat_rotate(l->local_frame, e3);
        ax[0] = ikd_quat_rotate(F, e1);
        ax[2] = ikd_quat_rotate(pose[k].rotation, e3);
        /* world vector -> rates: the inverse of [ax0 ax1 ax2] by cross
         * products, over its determinant ax0 . (ax1 x ax2); with
         * ax1 = sgn n / |n|, n = ax0 x ax2, that is -sgn |n| (one square
         * root and one division for both) */
        double sgn = ikd__euler_even(l->order) ? -1 : 1;
        ikd_vec3 n = ikd_vec3_cross(ax[0], ax[2]);
        double nl = ikd_vec3_len(n), inv = nl > 1e-3 && isfinite(nl) ? -sgn * (1 / nl) : 0; /* 0: (nearly) gimbal-locked */
        ax[1] = ikd_vec3_scale(unit_of_len_or_perp(n, nl, ax[0]), sgn);
        for (int a = 0; a < 3; a++) {
            w->cval[c + a] = ang[a], w->clo[c + a] = l->euler_min_deg[a] * IKD_DEG2RAD;
            w->chi[c + a] = l->euler_max_deg[a] * IKD_DEG2RAD;
        }
        if (ikd__euler_banded(l)) { /* its middle angle's axis and two normal to it (see banded_frame) */
            banded_frame(w, ax, c, k);
            break;
        }
        ikd_vec3 r0 = ikd_vec3_cross(ax[1], ax[2]), r1 = ikd_vec3_scale(n, -1), r2 = ikd_vec3_cross(ax[0], ax[1]);
        double *zi = &w->zinv[9 * k];
        zi[0] = r0.x * inv, zi[1] = r0.y * inv, zi[2] = r0.z * inv;
        zi[3] = r1.x * inv, zi[4] = r1.y * inv, zi[5] = r1.z * inv;
        zi[6] = r2.x * inv, zi[7] = r2.y * inv, zi[8] = r2.z * inv;
        break;
    }
    default:
        ax[0] = ikd_vec3_make(1, 0, 0), ax[1] = ikd_vec3_make(0, 1, 0), ax[2] = ikd_vec3_make(0, 0, 1);
        break;
    }
}

void ikd__multi_joint_frames(multi_ws *w, const ikd_skeleton *s, const ikd_quat *local, const ikd_pose_joint *pose)
{
    for (size_t t = 0; t < w->nact; t++) joint_frame(w, s, local, pose, (size_t)w->act[t]); /* (the others have no columns) */
    for (size_t c = w->cols - 3; c < w->cols; c++) w->cval[c] = 0; /* a free root's translation */
    for (size_t c = 0; c < w->cols; c++)
        if (c >= w->cols - 3 || w->chi[c] - w->clo[c] >= 2 * IKD_PI - 1e-9) /* a whole turn: no bound */
            w->clo[c] = -INFINITY, w->chi[c] = INFINITY;
}

/* The two-bone limb of goal i: a position goal on a joint whose parent
 * (*m, the knee or elbow) is not the root; *u its grandparent (hip or
 * shoulder). 0 when the goal has none. */
int ikd__multi_limb_of(const multi_ws *w, const ikd_multi_problem *p, size_t i, long *m, long *u)
{
    const ikd_skeleton *s = p->skeleton;
    size_t j = p->goals[i].joint;
    *m = j ? s->joints[j].parent : -1;
    *u = *m > 0 ? s->joints[*m].parent : -1;
    return (w->want[i] & 1) && *u >= 0;
}

double ikd__multi_limb_reach(const ikd_skeleton *s, size_t j, long m)
{
    return ikd_vec3_len(s->joints[j].offset) + ikd_vec3_len(s->joints[m].offset);
}

/* 1 when goal i is a position farther from a fixed root than the bones
 * between them reach, lengthened by `extra`. */
static int beyond_bones(const multi_ws *w, const ikd_multi_problem *p, size_t i, double extra)
{
    if (p->root_free || !(w->want[i] & 1)) return 0;
    return ikd_vec3_dist(w->tpos[i], p->root) > w->reach[p->goals[i].joint] + extra + p->tolerance;
}

/* 1 when goal i is a position farther from a fixed root than the bones
 * between them reach (a stretching limb's lengthened): no pose meets it. */
int ikd__multi_out_of_reach(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    double extra = 0;
    long m, u;
    if (((w->want[i] & 8) || p->soften < 1) && ikd__multi_limb_of(w, p, i, &m, &u)) {
        /* softened without stretching: aimed within the limb's reach from
         * wherever its upper joint is, so met there (see softened_beyond) */
        if (p->soften < 1 && !(p->stretch > 1)) return 0;
        extra = (p->stretch - 1) * ikd__multi_limb_reach(p->skeleton, p->goals[i].joint, m); /* lengthened by stretch_limbs */
    }
    return beyond_bones(w, p, i, extra);
}

/* How near goal i's joint comes to a fixed root at most, its path's bones
 * folded: the longest bone's excess over the others together (an upper
 * arm of 1 and a forearm of 0.3 reach no nearer than 0.7), else 0. Limits
 * are not weighed (as beyond_bones). */
static double fold_reach(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    const ikd_skeleton *s = p->skeleton;
    size_t j = p->goals[i].joint;
    double longest = 0;
    for (size_t k = j; k > 0; k = (size_t)s->joints[k].parent) longest = fmax(longest, ikd_vec3_len(s->joints[k].offset));
    return fmax(2 * longest - w->reach[j], 0);
}

/* 1 when goal i is a position nearer a fixed root than its path's bones
 * fold (fold_reach): no pose meets it. */
int ikd__multi_inside_bones(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    if (p->root_free || !(w->want[i] & 1)) return 0;
    return ikd_vec3_dist(w->tpos[i], p->root) < fold_reach(w, p, i) - p->tolerance;
}

/* 1 when no pose meets goal i's position: out of reach (beyond its bones,
 * ikd__multi_out_of_reach) or inside them (want bit 32). */
int ikd__multi_unreachable(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    return ikd__multi_out_of_reach(w, p, i) || (w->want[i] & 32);
}

/* 1 when goal i is a softened limb goal (options.soften, no stretch)
 * whose target itself lies beyond the bones' reach from a fixed root: met
 * where softening aims it, but reported unreachable, as two_bone's soften
 * reports a target beyond the limb's reach. */
int ikd__multi_softened_beyond(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    long m, u;
    return p->soften < 1 && !(p->stretch > 1) && ikd__multi_limb_of(w, p, i, &m, &u) && beyond_bones(w, p, i, 0);
}

/* Marks the goals out of reach (w->far, w->fbase, w->fstraight; far -1
 * for a goal within reach). One that shares joints with a reachable goal
 * (a hand, whose spine the other goals need) turns its two-bone limb from
 * the upper joint (the shoulder: the joints between, a clavicle with a
 * small range, took turns across their ranges when they shared the
 * pointing), straightened when its middle joint is a hinge; one that
 * shares none (a chain, or every goal out of reach) turns its whole path,
 * pointed from its first joint (a chain that also straightened converged
 * slowly and, with limits, off target). Without a two-bone limb, from its
 * first own joint. At each descent's start (options.stretch may have
 * changed what is out of reach). */
void ikd__multi_mark_far(multi_ws *w, const ikd_multi_problem *p)
{
    for (size_t i = 0; i < w->g; i++) w->far[i] = ikd__multi_out_of_reach(w, p, i) ? 0 : -1;
    for (size_t i = 0; i < w->g; i++) {
        if (w->far[i] < 0) continue;
        size_t j = p->goals[i].joint;
        int own = 0;
        for (size_t b = 0; b < w->g; b++)
            if (w->far[b] < 0 && w->pre[i * w->g + b] > own) own = w->pre[i * w->g + b];
        w->far[i] = own;
        long m, u;
        int limb = ikd__multi_limb_of(w, p, i, &m, &u);
        w->fbase[i] = (int)j, w->fstraight[i] = 0;
        for (int t = 0, c = 0, first = 1; t < w->gdepth[i]; c += w->dof[w->gpath[i * w->n + (size_t)t]], t++) {
            int k = w->gpath[i * w->n + (size_t)t];
            if (c < own) continue;
            if (first) w->fbase[i] = k, first = 0;                      /* the first own joint */
            if (limb && own > 0 && k == u) { /* on a branch: the limb alone */
                w->fbase[i] = k, w->far[i] = c;
                w->fstraight[i] = p->skeleton->joints[m].limit.type == IKD_LIMIT_HINGE && !(w->want[i] & 6);
            }
        }
    }
}

/* Goal i's position target as the solve aims it on a two-bone limb (from
 * the limb's upper joint where it is now): soft IK (options.soften < 1)
 * eases it in near the limb's full extension; a goal being stretched (want
 * bit 8) is aimed MULTI_STRETCH_AIM of the limb's reach away, or 1/stretch
 * of the target's distance where that is farther, the rest left to the
 * bones' scaling (stretch_limbs). Else the goal's target. */
ikd_vec3 ikd__multi_limb_target(const multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i)
{
    ikd_vec3 t = w->tpos[i];
    long m, u;
    if (w->want[i] & 32) { /* inside its bones: aimed MULTI_INSIDE x size past where they fold, toward the target */
        ikd_vec3 dir = ikd_vec3_norm_or(ikd_vec3_sub(t, p->root), ikd_vec3_norm_or(ikd_vec3_sub(pose[p->goals[i].joint].position, p->root), ikd_vec3_make(0, 1, 0)));
        return ikd_vec3_mad(p->root, dir, fold_reach(w, p, i) + MULTI_INSIDE * p->skeleton->size);
    }
    if (!(p->soften < 1 || (w->want[i] & 8)) || !ikd__multi_limb_of(w, p, i, &m, &u)) return t;
    double reach = ikd__multi_limb_reach(p->skeleton, p->goals[i].joint, m), k;
    ikd_vec3 to = ikd_vec3_sub(t, pose[u].position);
    double d = ikd_vec3_len(to);
    if (p->soften < 1) {
        if (!(d > p->soften * reach)) return t;
        return ikd_vec3_mad(pose[u].position, to, ikd__two_bone_soft(reach, p->soften, 1, d, &k) / d);
    }
    /* aimed where lengthening by at most `stretch` brings the end to the
     * target: beyond the limb's reach when the target is beyond the
     * stretched one (the rest of the skeleton then brings the limb closer) */
    double a = fmax(MULTI_STRETCH_AIM * reach, d / p->stretch);
    if (!(d > a)) return t;
    return ikd_vec3_mad(pose[u].position, to, a / d);
}

/* Goal i's two-bone limb as options.soften eases it: its reach (0: no
 * limb, or soften leaves it rigid), the distance the curve starts at
 * (*da = soften x reach) and the rest (*ds), *u the upper joint. */
static double soft_limb(const multi_ws *w, const ikd_multi_problem *p, size_t i, long *u, double *da, double *ds)
{
    long m;
    if (!ikd__multi_limb_of(w, p, i, &m, u)) return 0;
    double reach = ikd__multi_limb_reach(p->skeleton, p->goals[i].joint, m);
    *da = p->soften * reach, *ds = reach - *da;
    return *ds > 0 ? reach : 0;
}

/* M x (3 x 3, row-major) */
static ikd_vec3 mat3_mul(const double M[9], ikd_vec3 x)
{
    return ikd_vec3_make(M[0] * x.x + M[1] * x.y + M[2] * x.z, M[3] * x.x + M[4] * x.y + M[5] * x.z,
                         M[6] * x.x + M[7] * x.y + M[8] * x.z);
}

/* options.soften: goal i's aim (limb_target) as it moves with the limb's
 * upper joint h = pose[*u] (the spine and clavicle move a shoulder, the
 * pelvis a hip): aim = h + (t - h) e(d) / d, e the soft curve, d = |t - h|,
 * so d(aim)/dh = I - N with N = e'(d) n n^T + (e(d) / d) (I - n n^T), n the
 * unit (t - h); I - N, row-major, in G. 0 (the aim is the target, or no
 * softened limb) when nothing moves it. Without this term the rows took
 * the aim as fixed, and the joints above the limb chased it: half of the
 * humanoid's softened solves ended unmet after every restart. */
static int soft_aim_rate(const multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i, double G[9],
                         long *u)
{
    double da, ds;
    if (!(p->soften < 1) || (w->want[i] & 24) || w->far[i] >= 0 || !soft_limb(w, p, i, u, &da, &ds)) return 0;
    ikd_vec3 to = ikd_vec3_sub(w->tpos[i], pose[*u].position);
    double d = ikd_vec3_len(to);
    if (!(d > da)) return 0;
    double x = exp(-(d - da) / ds), e = da + ds * (1 - x), de = x; /* e(d) and e'(d) */
    const double n[3] = {to.x / d, to.y / d, to.z / d};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) G[3 * a + b] = (a == b ? 1 - e / d : 0) - (de - e / d) * n[a] * n[b];
    return 1;
}

/* options.soften with a free root (want bit 16): measured from the limb's
 * upper joint wherever it is, an eased aim is met wherever the root
 * stands, so it never moved the root (a foot placed on the ground with a
 * free pelvis floated a mean 0.29 of the skeleton's size above it). Such
 * a goal's rows ask for the target itself, and one more row penalises the
 * limb's extension r (end to upper joint) beyond soften x its reach by
 * phi(r), phi'(r) = 2 (g(r) - r), g the soft curve's inverse: with the
 * upper joint held, |t - f|^2 + phi(r) is least exactly where the curve
 * eases the end, and a free root moves until the limb need not reach so
 * far. Returns sqrt(phi(r)) (the row's error is its negative); *rate gets
 * its derivative in r, *u the upper joint; 0 and *rate 0 within soften x
 * the reach. */
static double soft_penalty(const multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i, double *rate,
                           long *u)
{
    double da, ds, L;
    *rate = 0;
    if (!(L = soft_limb(w, p, i, u, &da, &ds))) return 0;
    double r = ikd_vec3_dist(pose[p->goals[i].joint].position, pose[*u].position);
    if (!(r > da)) return 0;
    double left = fmax(L - r, 1e-12 * ds), lg = log(left / ds); /* a straight limb: ln's argument kept above 0 */
    double phi = 2 * (da * (r - da) + ds * (left * lg + r - da) - 0.5 * (r * r - da * da));
    double dphi = 2 * (da - ds * lg - r);
    if (!(phi > 1e-30 * L * L)) return 0;
    double rho = sqrt(phi);
    *rate = dphi / (2 * rho);
    return rho;
}

/* Far goal i's position error (its joint at pj): the chord from fbase[i]
 * pointed at the target, as the move that turns it there, normal to it
 * (*along gets the chord's direction: its length is not this goal's, so
 * along it the rows are empty); 0 when the goal has nothing to turn. */
static ikd_vec3 far_pointing(const multi_ws *w, const ikd_pose_joint *pose, size_t i, size_t j, double L, ikd_vec3 *along)
{
    ikd_vec3 pj = pose[j].position;
    ikd_vec3 base = pose[w->fbase[i]].position, chord = ikd_vec3_sub(pj, base);
    double ll = ikd_vec3_len(chord);
    if (!(w->far[i] < w->glen[i]) || !(ll > 1e-9 * L)) return ikd_vec3_make(0, 0, 0);
    *along = ikd_vec3_scale(chord, 1 / ll);
    ikd_vec3 to = ikd_vec3_norm_or(ikd_vec3_sub(w->tpos[i], base), *along), c = ikd_vec3_cross(*along, to);
    ikd_vec3 turn = ikd_vec3_scale(unit_or_perp(ikd_vec3_cross(c, *along), *along), ll * atan2(ikd_vec3_len(c), ikd_vec3_dot(*along, to)));
    if (!w->fstraight[i]) return turn;
    /* a hinged limb is also straightened (its bones' length, less the
     * chord's): the closest pose; its hinge stops at its bound */
    return ikd_vec3_mad(turn, *along, fmax(w->reach[j] - w->reach[w->fbase[i]] - ll, 0));
}

/* Where goal i's rows go and what its Jacobian rows need of its errors. */
typedef struct goal_rows {
    size_t r0, r1;    /* its first position row, its first rotation row */
    double wt, Lr;    /* its weight; what one radian of its rotation rows weighs */
    int far;          /* out of reach of a fixed root (w->far[i] >= 0) */
    ikd_vec3 b1, b2;  /* an aim's rows: a basis of the plane normal to its axis */
    ikd_vec3 along;   /* a far goal's chord (far_pointing) */
    double pen;       /* want bit 16: the extension row's rate, dsqrt(phi)/dr (soft_penalty) */
    long up;          /* ... and the limb's upper joint, whose moves leave its extension */
} goal_rows;

/* Goal i's task error rows (w->e) and its errors (gr[i]); *raw gets the
 * weighted squares of a reachable goal's errors. 1 when it is met. */
static int goal_errors(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i, ikd_goal_result *gr,
                       goal_rows *x, double *raw)
{
    const ikd_goal *g = &p->goals[i];
    double L = p->skeleton->size;
    size_t j = g->joint;
    int met = 1;
    x->r0 = (size_t)w->row0[i], x->r1 = x->r0 + (w->want[i] & 1 ? 3 : 0) + (w->want[i] & 16 ? 1 : 0);
    x->wt = w->gw[i], x->pen = 0, x->up = -1;
    /* a goal out of reach of a fixed root yields to the others ("the other
     * goals are still met"): it turns only joints of its own (mark_far),
     * and neither its error nor whether it is met counts */
    x->far = w->far[i] >= 0;
    x->Lr = (x->far ? MULTI_FAR_ROTATION : MULTI_ROTATION_WEIGHT) * L;
    ikd_vec3 pj = pose[j].position, rv = ikd_vec3_make(0, 0, 0), aim = rv;
    x->b1 = x->b2 = x->along = rv;
    gr[i].error = 0, gr[i].rotation_error_deg = 0;
    if (w->want[i] & 1) {
        ikd_vec3 d = x->far && !(p->soften < 1 || (w->want[i] & 8)) /* softened or stretching: limb_target's aim */
                         ? far_pointing(w, pose, i, j, L, &x->along)
                         : ikd_vec3_sub(ikd__multi_limb_target(w, p, pose, i), pj);
        double dl = ikd_vec3_len(d), aimed = dl; /* from where it is aimed (limb_target) */
        gr[i].error = x->far || (w->want[i] & 32) ? ikd_vec3_dist(w->tpos[i], pj) : dl;
        if (!x->far) *raw += x->wt * x->wt * dl * dl;
        if (w->want[i] & 16) { /* the target itself, and the limb's extension penalised (soft_penalty) */
            d = ikd_vec3_sub(w->tpos[i], pj), dl = ikd_vec3_len(d);
            w->e[x->r0 + 3] = -x->wt * soft_penalty(w, p, pose, i, &x->pen, &x->up);
        }
        /* A far goal's turn aims 0.4 L at most a step. A reachable goal's
         * error is not clamped: clamping each goal alone (each toward its
         * target by the same length) balances goals that cannot all be met
         * where the clamped pulls cancel, not where their weighted squares are
         * least (two goals on one joint, 2 apart: a point 0.2 from the
         * midpoint, weights 2:1 met 1.8 : 0.2 instead of 1.6 : 0.4). The
         * step's length is bounded by the damping (options.damping times
         * this error) and MULTI_MAX_STEP / MULTI_FAR_STEP. */
        if (x->far && dl > 0.4 * L) d = ikd_vec3_scale(d, 0.4 * L / dl);
        w->e[x->r0] = x->wt * d.x, w->e[x->r0 + 1] = x->wt * d.y, w->e[x->r0 + 2] = x->wt * d.z;
        if (aimed > p->tolerance && !x->far) met = 0;
    }
    if (w->want[i] & 2) rv = ikd__multi_rot_vec(ikd_quat_mul(w->trot[i], ikd_quat_conj(pose[j].rotation)));
    if (w->want[i] & 4) {
        aim = ikd_quat_rotate(pose[j].rotation, w->aim_local[i]);
        ikd_vec3 to = ikd_vec3_norm_or(ikd_vec3_sub(g->aim_at, pj), aim), c = ikd_vec3_cross(aim, to);
        rv = ikd_vec3_scale(unit_or_perp(c, aim), atan2(ikd_vec3_len(c), ikd_vec3_dot(aim, to)));
        /* an aim is two rows: its error and rates normal to the axis (the
         * axis' own turn moves no aim), in a basis b1, b2 of that plane */
        x->b1 = ikd_vec3_any_perp(aim), x->b2 = ikd_vec3_cross(aim, x->b1);
    }
    if (w->want[i] & 6) {
        double wl = x->wt * x->Lr;
        gr[i].rotation_error_deg = ikd_vec3_len(rv) * IKD_RAD2DEG;
        if (!x->far) *raw += wl * wl * ikd_vec3_dot(rv, rv);
        if (x->far && ikd_vec3_len(rv) > 1.0) rv = ikd_vec3_scale(rv, 1.0 / ikd_vec3_len(rv)); /* as above */
        if (w->want[i] & 4) w->e[x->r1] = wl * ikd_vec3_dot(rv, x->b1), w->e[x->r1 + 1] = wl * ikd_vec3_dot(rv, x->b2);
        else w->e[x->r1] = wl * rv.x, w->e[x->r1 + 1] = wl * rv.y, w->e[x->r1 + 2] = wl * rv.z;
        if (ikd_vec3_len(rv) > p->rotation_tolerance_deg * IKD_DEG2RAD && !x->far) met = 0;
    }
    return met;
}

/* Goal i's Jacobian rows over its compact columns: a free root's
 * translation, then the path's joints (the goal joint itself turns only
 * its rotation). */
static void goal_jacobian(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i, const goal_rows *x)
{
    size_t j = p->goals[i].joint, nr, cm = w->cmax, c = 0;
    ikd_vec3 pj = pose[j].position;
    double wt = x->wt, G[9];
    long up = -1;
    int above = (w->want[i] & 1) && soft_aim_rate(w, p, pose, i, G, &up); /* the joints above `up` move the aim */
    int pen = x->pen != 0; /* the extension row: the joints above x->up move the limb's upper joint */
    ikd_vec3 hu = above ? pose[up].position : pj, n = ikd_vec3_make(0, 0, 0), hp = pj;
    if (pen) hp = pose[x->up].position, n = ikd_vec3_norm_or(ikd_vec3_sub(pj, hp), n);
    multi_goal_rows(w, i, &nr);
    for (size_t r = 0; r < nr; r++) memset(&w->J[(x->r0 + r) * cm], 0, (size_t)w->glen[i] * sizeof(double));
    double *Jp = &w->J[x->r0 * cm], *Jr = &w->J[x->r1 * cm], *Je = Jp + 3 * cm;
    if (p->root_free) {
        if ((w->want[i] & 1) && !w->hold_root) /* the end, less the aim it moves along (I - G) */
            for (size_t a = 0; a < 3; a++)
                for (size_t b = 0; b < 3; b++) Jp[a * cm + b] = wt * ((a == b) - (above ? G[3 * a + b] : 0));
        for (size_t a = 0; a < 3 && w->anchored; a++) { /* the rows' rates per column value (multi_root_move) */
            ikd_vec3 r = multi_root_move(w, p->up, ikd_vec3_make(Jp[a * cm], Jp[a * cm + 1], Jp[a * cm + 2]));
            Jp[a * cm] = r.x, Jp[a * cm + 1] = r.y, Jp[a * cm + 2] = r.z;
        }
        c = 3;
    }
    for (int t = 0; t < w->gdepth[i]; t++) {
        size_t k = (size_t)w->gpath[i * w->n + (size_t)t];
        ikd_vec3 ax[3];
        int na = multi_joint_axes(w, k, ax);
        ikd_vec3 arm = ikd_vec3_sub(pj, pose[k].position), harm = ikd_vec3_sub(hu, pose[k].position);
        ikd_vec3 parm = ikd_vec3_sub(hp, pose[k].position);
        above &= (long)k != up;
        pen &= (long)k != x->up;
        for (int a = 0; a < na; a++, c++) {
            if ((int)c < w->far[i]) continue; /* a far goal's shared prefix: not its to turn */
            if ((w->want[i] & 1) && k != j) {
                ikd_vec3 v = ikd_vec3_cross(ax[a], arm);
                if (w->want[i] & 16) /* the extension's rate: the end's, less the upper joint's when k moves it */
                    Je[c] = wt * x->pen * ikd_vec3_dot(n, pen ? ikd_vec3_sub(v, ikd_vec3_cross(ax[a], parm)) : v);
                if (above) v = ikd_vec3_sub(v, mat3_mul(G, ikd_vec3_cross(ax[a], harm)));
                if (x->far && !w->fstraight[i]) /* normal to its chord */
                    v = ikd_vec3_sub(v, ikd_vec3_scale(x->along, ikd_vec3_dot(v, x->along)));
                else if (x->far && (long)k == p->skeleton->joints[j].parent) /* the hinge straightens, the upper joint points */
                    v = ikd_vec3_scale(x->along, ikd_vec3_dot(v, x->along));
                Jp[c] = wt * v.x, Jp[cm + c] = wt * v.y, Jp[2 * cm + c] = wt * v.z;
            }
            if (w->want[i] & 2) {
                Jr[c] = wt * x->Lr * ax[a].x, Jr[cm + c] = wt * x->Lr * ax[a].y, Jr[2 * cm + c] = wt * x->Lr * ax[a].z;
            } else if (w->want[i] & 4) {
                Jr[c] = wt * x->Lr * ikd_vec3_dot(ax[a], x->b1), Jr[cm + c] = wt * x->Lr * ikd_vec3_dot(ax[a], x->b2);
            }
        }
    }
    const int *gc = &w->gcol[i * cm];
    for (size_t b = 0; w->ranged && b < (size_t)w->glen[i]; b++) { /* the range metric's columns: J S */
        double sc = w->cs[gc[b]];
        if (sc != 1)
            for (size_t r = 0; r < nr; r++) w->J[(x->r0 + r) * cm + b] *= sc;
    }
}

/* The task error and (with `jac`: joint_frames must be current) Jacobian
 * rows of every goal; returns 1 when every goal is met. Rotation rows are
 * scaled by the skeleton's size times MULTI_ROTATION_WEIGHT (one radian
 * weighs 0.35 skeleton sizes). */
int ikd__multi_build_rows(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, ikd_goal_result *gr, int jac)
{
    int all = 1;
    double raw = 0;
    memset(w->e, 0, w->rows * sizeof(double));
    for (size_t i = 0; i < w->g; i++) {
        goal_rows x;
        double skipped = 0;
        int met = goal_errors(w, p, pose, i, gr, &x, w->off[i] ? &skipped : &raw);
        all &= met || w->off[i];
        if ((w->only_far && !x.far) || w->off[i]) { /* far_refine, or polish_top's lower goals: this goal asks nothing */
            size_t nr;
            multi_goal_rows(w, i, &nr);
            for (size_t r = x.r0; r < x.r0 + nr; r++) w->e[r] = 0;
            if (jac)
                for (size_t r = x.r0; r < x.r0 + nr; r++) memset(&w->J[r * w->cmax], 0, (size_t)w->glen[i] * sizeof(double));
            continue;
        }
        if (jac) goal_jacobian(w, p, pose, i, &x);
    }
    w->raw = sqrt(raw);
    return all;
}
