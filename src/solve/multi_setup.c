/* multi_setup.c - the skeleton solver's workspace and per-solve set-up: columns, targets, goal paths, idle joints. */

#include <math.h>
#include <string.h>

#include "limit.h"
#include "multi.h"

static size_t align8(size_t b) { return (b + 7) & ~(size_t)7; }

size_t ikd_multi_workspace_size(size_t joints, size_t goals)
{
    size_t cols = 3 * joints + 3, rows = MULTI_ROWS_PER_GOAL * goals;
    size_t ints = 5 * joints + 7 * goals + rows + MULTI_PRELOCK + 2 * goals * cols + goals * joints + goals * goals;
    return align8(ints * sizeof(int)) + align8(3 * joints + 3) + align8(goals) + (2 * joints + goals) * sizeof(double) +
           joints * sizeof(ikd_quat) +
           joints * 4 * sizeof(ikd_vec3) + (3 * cols + 12 * joints) * sizeof(double) + joints * sizeof(ikd_quat) +
           goals * (3 * sizeof(ikd_vec3) + sizeof(ikd_quat)) + align8(goals) +
           (rows * cols + 2 * rows * rows + (5 + 2 * MULTI_WB + MULTI_PRELOCK) * rows + MULTI_WB * (MULTI_WB + 3) + (8 + 2 * MULTI_MIX) * cols) * sizeof(double) + 3 * joints * sizeof(ikd_quat) + 64;
}

void ikd__multi_ws_carve(multi_ws *w, void *mem, size_t n, size_t g)
{
    char *m = mem;
    w->n = n, w->g = g, w->cmax = w->cols = 3 * n + 3, w->rows = MULTI_ROWS_PER_GOAL * g;
    w->only_far = 0, w->hold_root = 0, w->mixpos = 0; /* (mixn: each descent's start) */
    size_t rows = w->rows;
    w->reach = (double *)m, m += n * sizeof(double);
    w->pang = (double *)m, m += n * sizeof(double);
    w->gw = (double *)m, m += g * sizeof(double);
    w->tpos = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->aim_local = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->swivel = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->trot = (ikd_quat *)m, m += g * sizeof(ikd_quat);
    w->best = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->keep = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->held = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->pol = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->J = (double *)m, m += rows * w->cmax * sizeof(double);
    w->A = (double *)m, m += rows * rows * sizeof(double);
    w->A0 = (double *)m, m += rows * rows * sizeof(double);
    w->e = (double *)m, m += rows * sizeof(double);
    w->y = (double *)m, m += rows * sizeof(double);
    w->t = (double *)m, m += MULTI_WB * rows * sizeof(double);
    w->tu = (double *)m, m += MULTI_WB * rows * sizeof(double);
    w->y0 = (double *)m, m += rows * sizeof(double);
    w->tf = (double *)m, m += MULTI_WB * sizeof(double);
    w->ts = (double *)m, m += MULTI_WB * sizeof(double);
    w->tc = (double *)m, m += MULTI_WB * (MULTI_WB + 1) * sizeof(double);
    w->dinv = (double *)m, m += rows * sizeof(double);
    w->rdamp = (double *)m, m += rows * sizeof(double);
    w->psave = (double *)m, m += MULTI_PRELOCK * rows * sizeof(double);
    w->dq = (double *)m, m += w->cols * sizeof(double);
    w->z = (double *)m, m += w->cols * sizeof(double);
    w->dqp = (double *)m, m += w->cols * sizeof(double);
    w->mixg = (double *)m, m += MULTI_MIX * w->cols * sizeof(double);
    w->mixq = (double *)m, m += MULTI_MIX * w->cols * sizeof(double);
    w->mixraw = (double *)m, m += w->cols * sizeof(double);
    w->mixtook = (double *)m, m += w->cols * sizeof(double);
    w->fix = (double *)m, m += w->cols * sizeof(double);
    w->zc = (double *)m, m += w->cols * sizeof(double);
    w->axw = (ikd_vec3 *)m, m += 3 * n * sizeof(ikd_vec3);
    w->zw = (ikd_vec3 *)m, m += n * sizeof(ikd_vec3);
    w->cval = (double *)m, m += w->cols * sizeof(double);
    w->clo = (double *)m, m += w->cols * sizeof(double);
    w->chi = (double *)m, m += w->cols * sizeof(double);
    w->cs = (double *)m, m += w->cols * sizeof(double);
    w->zinv = (double *)m, m += 9 * n * sizeof(double);
    w->ea = (double *)m, m += 3 * n * sizeof(double);
    w->eq = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->col = (int *)m, m += n * sizeof(int);
    w->dof = (int *)m, m += n * sizeof(int);
    w->idle = (int *)m, m += n * sizeof(int);
    w->need = (int *)m, m += n * sizeof(int);
    w->act = (int *)m, m += n * sizeof(int);
    w->row0 = (int *)m, m += g * sizeof(int);
    w->far = (int *)m, m += g * sizeof(int);
    w->fbase = (int *)m, m += g * sizeof(int);
    w->fstraight = (int *)m, m += g * sizeof(int);
    w->glen = (int *)m, m += g * sizeof(int);
    w->gdepth = (int *)m, m += g * sizeof(int);
    w->row_goal = (int *)m, m += rows * sizeof(int);
    w->pcol = (int *)m, m += MULTI_PRELOCK * sizeof(int);
    w->gcol = (int *)m, m += g * w->cmax * sizeof(int);
    w->gidx = (int *)m, m += g * w->cols * sizeof(int);
    w->gpath = (int *)m, m += g * n * sizeof(int);
    w->pre = (int *)m, m += g * g * sizeof(int);
    w->swfrom = (int *)m, m += g * sizeof(int);
    m = (char *)align8((size_t)m);
    w->locked = (unsigned char *)m, m += 3 * n + 3;
    m = (char *)align8((size_t)m);
    w->off = (unsigned char *)m, m += align8(g);
    memset(w->off, 0, g);
    w->want = (unsigned char *)m;
}

/* Each joint's columns, and with `ranged` (options.stiffness "range") the
 * range metric: each column's scale w->cs is its range over 180 degrees
 * (at most 1, at least MULTI_RANGE_FLOOR; a ball joint's swing columns
 * span twice its cone), and the step solves for the column's angle over
 * its scale. The least-norm step and the rest pull then weigh a turn of
 * the column by 1 / scale^2: a joint with a narrow range (a clavicle, a
 * spine segment, an ankle, a joint a recording's limits barely allow)
 * turns less than one with a wide range for the same move of the goals,
 * as a body's do (docs/solvers.md, "Joint stiffness"). */
void ikd__multi_setup_columns(multi_ws *w, const ikd_skeleton *s, int ranged)
{
    for (size_t k = 0; k < s->count; k++) {
        ikd_limit_type t = s->joints[k].limit.type;
        w->dof[k] = t == IKD_LIMIT_FIXED ? 0 : t == IKD_LIMIT_HINGE ? 1 : 3;
        w->reach[k] = k ? w->reach[s->joints[k].parent] + ikd_vec3_len(s->joints[k].offset) : 0;
    }
    w->ranged = ranged;
    ikd__multi_layout_columns(w, s, NULL);
}

void ikd__multi_layout_columns(multi_ws *w, const ikd_skeleton *s, const int *skip)
{
    int c = 0;
    w->nact = 0;
    for (size_t k = 0; k < s->count; k++) {
        w->col[k] = w->dof[k] && !(skip && skip[k]) ? c : -1;
        if (w->col[k] >= 0) c += w->dof[k], w->act[w->nact++] = (int)k;
    }
    w->cols = (size_t)c + 3; /* root translation last */
    for (size_t k = 0; k < w->cols; k++) w->cs[k] = 1;
    if (!w->ranged) return;
    for (size_t k = 0; k < s->count; k++) {
        const ikd_limit *l = &s->joints[k].limit;
        if (w->col[k] < 0) continue; /* fixed, or left out */
        double *x = &w->cs[w->col[k]];
        if (l->type == IKD_LIMIT_HINGE) x[0] = (l->max_deg - l->min_deg) / 180;
        else if (l->type == IKD_LIMIT_EULER) for (int a = 0; a < 3; a++) x[a] = (l->euler_max_deg[a] - l->euler_min_deg[a]) / 180;
        else if (l->type == IKD_LIMIT_BALL) x[0] = (l->twist_max_deg - l->twist_min_deg) / 180, x[1] = x[2] = 2 * l->max_deg / 180;
        else continue;
        for (int a = 0; a < w->dof[k]; a++) x[a] = fmax(MULTI_RANGE_FLOOR, fmin(1, x[a]));
    }
}

/* The ground goal's targets (DESIGN.md): position point + height * normal;
 * rotation: the rest rotation with the heading (twist about up) of the
 * start pose's rotation change, tilted by the shortest arc from up to the
 * normal. */
static void ground_targets(const ikd_multi_problem *p, const ikd_goal *g, const ikd_pose_joint *start, ikd_vec3 *pos,
                           ikd_quat *rot)
{
    const ikd_skeleton *s = p->skeleton;
    const ikd_skeleton_joint *j = &s->joints[g->joint];
    double h = g->ground_height;
    if (!g->has_ground_height) {
        double lowest = ikd_vec3_dot(s->joints[0].position, p->up);
        for (size_t k = 1; k < s->count; k++) lowest = fmin(lowest, ikd_vec3_dot(s->joints[k].position, p->up));
        h = ikd_vec3_dot(j->position, p->up) - lowest;
    }
    *pos = ikd_vec3_mad(g->ground_point, g->ground_normal, h);
    ikd_quat change = ikd_quat_mul(start[g->joint].rotation, ikd_quat_conj(j->rotation)), swing, heading;
    ikd_limit_swing_twist(change, p->up, &swing, &heading);
    *rot = ikd_quat_norm(ikd_quat_mul(ikd_quat_mul(ikd_quat_arc(p->up, g->ground_normal), heading), j->rotation));
}

/* Each goal's row weight (w->gw): its weight over the largest; with
 * by_priority (ikd_multi_solve, once its first descent leaves goals
 * unmet), goals.priority first. The distinct
 * priorities are ranked from the highest (rank 0); a goal weighs its
 * weight over the largest of its rank's, times MULTI_PRIORITY^rank. Goals
 * that cannot all be met then settle where the weighted squares of their
 * errors are least: a higher goal gives up about MULTI_PRIORITY^2 (1%) of
 * what a conflict would move a lower one, and polish_top (multi.c) then
 * meets the highest rank exactly. A smaller ratio would separate ranks
 * more, but the descents' progress and stall tests compare the weighted
 * error with absolute thresholds (1e-12 x size): at 1e-3 a rank's squares
 * fell below them and its goals stopped converging (46 of 400 generated
 * sets with random priorities met, against 400 without). Ranks past
 * MULTI_PRIORITY_LEVELS - 1 share the last. */
void ikd__multi_goal_weights(multi_ws *w, const ikd_multi_problem *p, int by_priority)
{
    for (size_t i = 0; i < w->g; i++) {
        int rank = 0;
        double top = 0;
        for (size_t k = 0; k < w->g; k++) { /* distinct priorities above goal i's; the largest weight at its own */
            int pk = by_priority ? p->goals[k].priority : 0, above = pk > (by_priority ? p->goals[i].priority : 0);
            for (size_t e = 0; above && e < k; e++) above = p->goals[e].priority != pk; /* counted once */
            rank += above;
            if (pk == (by_priority ? p->goals[i].priority : 0)) top = fmax(top, p->goals[k].weight);
        }
        double scale = 1;
        for (int r = 0; r < rank && r < MULTI_PRIORITY_LEVELS - 1; r++) scale *= MULTI_PRIORITY;
        w->gw[i] = p->goals[i].weight / top * scale;
    }
}

/* The angle the pull takes each hinge back to (w->pang): multi_pull_to's
 * about its axis (0 at rest). */
void ikd__multi_setup_preferred(multi_ws *w, const ikd_multi_problem *p)
{
    const ikd_skeleton *s = p->skeleton;
    for (size_t k = 0; k < w->n; k++) {
        w->pang[k] = 0;
        if (s->joints[k].limit.type != IKD_LIMIT_HINGE) continue;
        ikd_quat d = ikd_quat_mul(ikd_quat_conj(s->joints[k].rest_local), multi_pull_to(p, k));
        double a = 2 * atan2(ikd_vec3_dot(ikd_vec3_make(d.x, d.y, d.z), s->joints[k].limit.local_axis), d.w);
        if (a > M_PI) a -= 2 * M_PI;
        if (a < -M_PI) a += 2 * M_PI;
        w->pang[k] = ikd__hinge_angle(&s->joints[k].limit, a);
    }
}

/* Goal i's limb, if its swivel is free for a natural swivel (want bit 64;
 * limb_turn, multi_step.c): a rotation goal on a 3-DoF joint c whose
 * parent m (the middle joint) and grandparent u are 3-DoF too (no limit,
 * or a ball or euler box such as a recording's; a hinge sets its own
 * swivel), no pole asked, no options.preferred (there the pull to the
 * animation decides it; the limits still bind). */
static int free_limb(const multi_ws *w, const ikd_multi_problem *p, size_t i, long *m, long *u)
{
    const ikd_goal *g = &p->goals[i];
    return !g->has_pole && (w->want[i] & 2) && ikd__multi_limb_of(w, p, i, m, u) && *u != 0 &&
           w->dof[*u] == 3 && w->dof[g->joint] == 3 && w->dof[*m] == 3;
}

/* A free limb (free_limb) whose swivel nothing else decides: no
 * options.preferred (a layered solve keeps the preferred pose's). */
static int swivel_limb(const multi_ws *w, const ikd_multi_problem *p, size_t i, long *m, long *u)
{
    return !p->preferred && free_limb(w, p, i, m, u);
}

/* The natural swivels read a pose's geometry: the rest pose's (ref NULL),
 * or where that is no standing pose the start pose's (ref: its forward
 * kinematics; ikd__multi_swivels_from_start). Joint k's world position
 * and rotation there. */
static ikd_vec3 ref_pos(const ikd_skeleton *s, const ikd_pose_joint *ref, long k)
{
    return ref ? ref[k].position : s->joints[k].position;
}

static ikd_quat ref_rot(const ikd_skeleton *s, const ikd_pose_joint *ref, long k)
{
    return ref ? ref[k].rotation : s->joints[k].rotation;
}

/* Whether side d (world, in ref) keeps the natural swivel: a limb bent
 * there (by at least MULTI_POLE_BEND) to the other side of its line
 * vetoes it (the rest pull then keeps that bend). */
static int bend_agrees(const ikd_skeleton *s, const ikd_pose_joint *ref, long c, long m, long u, ikd_vec3 d)
{
    ikd_vec3 axis = ikd_vec3_norm_or(ikd_vec3_sub(ref_pos(s, ref, c), ref_pos(s, ref, u)), ikd_vec3_make(0, 1, 0));
    ikd_vec3 bend = ikd_vec3_reject(ikd_vec3_sub(ref_pos(s, ref, m), ref_pos(s, ref, u)), axis);
    return !(ikd_vec3_len(bend) >= MULTI_POLE_BEND * ikd_vec3_len(s->joints[m].offset) && ikd_vec3_dot(bend, d) < 0);
}

/* A leg's natural swivel: where goal i's free limb ends in a foot (the mean
 * of c's children's rest offsets, the toes, lies at least
 * MULTI_SWIVEL_ACROSS of its length across the line u-c; a hand's fingers
 * lie along the arm; read from a start pose, c also lies within
 * MULTI_SWIVEL_ACROSS of the limb's reach of the lowest joint along up:
 * a posed wrist can bend the fingers across the arm's line), the toes'
 * side of the line, kept in c's frame there and turned with the foot's
 * target (w->swfrom -1): the knee goes over the toes. */
static void leg_swivel(multi_ws *w, const ikd_multi_problem *p, size_t i, const ikd_pose_joint *ref)
{
    const ikd_skeleton *s = p->skeleton;
    const ikd_goal *g = &p->goals[i];
    long m, u, c = (long)g->joint;
    if (!free_limb(w, p, i, &m, &u)) return;
    ikd_vec3 axis = ikd_vec3_sub(ref_pos(s, ref, c), ref_pos(s, ref, u)), toes = ikd_vec3_make(0, 0, 0);
    if (!(ikd_vec3_len(axis) > 0)) return;
    axis = ikd_vec3_scale(axis, 1 / ikd_vec3_len(axis));
    for (size_t k = g->joint + 1; k < s->count; k++)
        if (s->joints[k].parent == c) toes = ikd_vec3_add(toes, ikd_vec3_sub(ref_pos(s, ref, (long)k), ref_pos(s, ref, c)));
    ikd_vec3 d = ikd_vec3_reject(toes, axis);
    if (!(ikd_vec3_len(d) > 0) || ikd_vec3_len(d) < MULTI_SWIVEL_ACROSS * ikd_vec3_len(toes)) return;
    if (ref) { /* a posed hand's fingers may lie across its arm's line too: a foot is one of the lowest joints */
        double lowest = INFINITY, reach = ikd_vec3_len(s->joints[m].offset) + ikd_vec3_len(s->joints[c].offset);
        for (size_t k = 0; k < s->count; k++) lowest = fmin(lowest, ikd_vec3_dot(ref[k].position, p->up));
        if (ikd_vec3_dot(ref[c].position, p->up) > lowest + MULTI_SWIVEL_ACROSS * reach) return;
    }
    if (!bend_agrees(s, ref, c, m, u, d)) return;
    d = ikd_vec3_scale(d, 1 / ikd_vec3_len(d));
    w->swivel[i] = ikd_quat_rotate(ikd_quat_conj(ref_rot(s, ref, c)), d), w->swfrom[i] = -1;
    w->want[i] |= p->preferred ? 128 : 64; /* layered: the side only where the preferred pose has no bend (prebend) */
}

/* An arm's natural swivel: goal i's free limb with no limits on its upper
 * and middle joints (a recording's box or a hinge already says where the
 * elbow goes) that is no leg (its end lies at least MULTI_SWIVEL_ACROSS of
 * the limb's reach above the skeleton's lowest joint along `down`), hung
 * from a trunk joint t (u's nearest ancestor with more than one child, not
 * the root: a chest) beside it (u lies at least MULTI_SWIVEL_ACROSS of its
 * distance from t across `down`, the line from t to the trunk's foot: t's
 * nearest ancestor with more than one child, or the root). The elbow goes
 * down, out (toward u's side) and back (away from the toes of the
 * request's legs under a natural swivel, `fwd`; none without such legs),
 * the three mixed as down + (out + back) / 2, kept in t's rest frame and
 * turned with t's pose (w->swfrom t). On Debian's three mocap clips and
 * the mannequin's animations the recorded elbows' sides are 14-27 degrees
 * from it on average, where the rest pull's were 23-52
 * (docs/solvers.md, "Natural swivel"). */
static void arm_swivel(multi_ws *w, const ikd_multi_problem *p, size_t i, ikd_vec3 fwd, const ikd_pose_joint *ref)
{
    const int *kids = w->need; /* each joint's children (setup_targets; setup_paths sets need after) */
    const ikd_skeleton *s = p->skeleton;
    long m, u, c = (long)p->goals[i].joint, t;
    if ((w->want[i] & 64) || !swivel_limb(w, p, i, &m, &u) || s->joints[u].limit.type != IKD_LIMIT_NONE ||
        s->joints[m].limit.type != IKD_LIMIT_NONE)
        return;
    for (t = s->joints[u].parent; t > 0 && kids[t] < 2;) t = s->joints[t].parent;
    if (t <= 0) return;
    long b = s->joints[t].parent; /* the trunk's foot: t's nearest ancestor with more than one child (hips), or the root */
    while (b > 0 && kids[b] < 2) b = s->joints[b].parent;
    ikd_vec3 down = ikd_vec3_sub(ref_pos(s, ref, b), ref_pos(s, ref, t));
    ikd_vec3 beside = ikd_vec3_sub(ref_pos(s, ref, u), ref_pos(s, ref, t));
    if (!(ikd_vec3_len(down) > 0)) return;
    down = ikd_vec3_scale(down, 1 / ikd_vec3_len(down));
    double lowest = -INFINITY, reach = ikd_vec3_len(s->joints[m].offset) + ikd_vec3_len(s->joints[c].offset);
    for (size_t k = 0; k < s->count; k++) lowest = fmax(lowest, ikd_vec3_dot(ref_pos(s, ref, (long)k), down));
    if (ikd_vec3_dot(ref_pos(s, ref, c), down) > lowest - MULTI_SWIVEL_ACROSS * reach) return; /* a leg without toes */
    ikd_vec3 out = ikd_vec3_reject(beside, down), back = ikd_vec3_reject(fwd, down);
    if (!(ikd_vec3_len(out) > 0) || ikd_vec3_len(out) < MULTI_SWIVEL_ACROSS * ikd_vec3_len(beside)) return;
    ikd_vec3 side = ikd_vec3_add(down, ikd_vec3_scale(out, 0.5 / ikd_vec3_len(out)));
    if (ikd_vec3_len(back) > 1e-9) side = ikd_vec3_sub(side, ikd_vec3_scale(back, 0.5 / ikd_vec3_len(back)));
    if (!bend_agrees(s, ref, c, m, u, side)) return; /* (it takes the bend across the line: side's part along it adds nothing) */
    w->swivel[i] = ikd_quat_rotate(ikd_quat_conj(ref_rot(s, ref, t)), side), w->swfrom[i] = (int)t, w->want[i] |= 64;
}

/* Where goal i's natural swivel points now (world): its side turned with
 * the foot's target, or with the arm's trunk joint as pose has it. */
ikd_vec3 ikd__multi_swivel_side(const multi_ws *w, const ikd_pose_joint *pose, size_t i)
{
    return ikd_quat_rotate(w->swfrom[i] < 0 ? w->trot[i] : pose[w->swfrom[i]].rotation, w->swivel[i]);
}

/* A straight knee under a natural swivel (w->swivel; layered on a pose,
 * options.preferred, a leg's side alone: want bit 128, and only a knee
 * the preferred pose leaves straight) whose foot's target
 * is nearer its hip than the leg reaches: bent at the start, toward the
 * toes' side, by the angle that brings the foot to that distance (the law
 * of cosines), within its limits. A straight limb has no bend direction
 * for a step to follow (the distance's derivative is 0 there), so the
 * first steps bent it whichever way the other goals' rows leaned: a leg
 * straight in one frame (a T-pose) and bent in the next bent backward
 * against its bound and came forward frames later (a flip). A knee (not an
 * elbow) bent less than MULTI_FLIP_BEND the other way is straightened first
 * and bent so too: a clip's predicted start carried a nearly straight knee's side
 * across the line (the mannequin's run, after three frames out of reach),
 * and the pull, at most pull_max_deg a frame, would have taken 45 frames to
 * turn it back. */
void ikd__multi_prebend(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose)
{
    const ikd_skeleton *s = p->skeleton;
    int any = 0;
    for (size_t i = 0; i < w->g; i++) any |= w->want[i] & 192;
    if (!any) return;
    ikd_skeleton_fk(s, p->root, local, pose);
    for (size_t i = 0; i < w->g; i++) {
        if (!(w->want[i] & 192)) continue;
        size_t c = p->goals[i].joint, m = (size_t)s->joints[c].parent, u = (size_t)s->joints[m].parent;
        ikd_vec3 thigh = ikd_vec3_sub(pose[m].position, pose[u].position), shin = ikd_vec3_sub(pose[c].position, pose[m].position);
        double a = ikd_vec3_len(thigh), b = ikd_vec3_len(shin), d = ikd_vec3_dist(w->tpos[i], pose[u].position);
        ikd_vec3 line = ikd_vec3_norm_or(ikd_vec3_sub(pose[c].position, pose[u].position), ikd_vec3_make(0, 1, 0));
        ikd_vec3 off = ikd_vec3_reject(thigh, line);
        if (!(a > 0 && b > 0)) continue;
        if (ikd_vec3_dist(pose[c].position, w->tpos[i]) <= p->tolerance) continue; /* at its goal already: as it is */
        if (ikd_vec3_len(off) >= MULTI_POLE_BEND * a) { /* bent: the toes' way, or well bent the other, it stays */
            if ((w->want[i] & 128) || w->swfrom[i] >= 0 || ikd_vec3_len(off) >= MULTI_FLIP_BEND * a || /* (layered: the preferred bend) */
                ikd_vec3_dot(off, ikd__multi_swivel_side(w, pose, i)) >= 0)
                continue; /* (an elbow may point anywhere: only a knee is turned so) */
            ikd_vec3 to = ikd_vec3_cross(shin, thigh); /* nearly straight the other way: straightened first */
            if (!(ikd_vec3_len(to) > 0)) continue;
            double ang = atan2(ikd_vec3_len(to), ikd_vec3_dot(shin, thigh));
            ikd_vec3 al = ikd_quat_rotate(ikd_quat_conj(pose[u].rotation), ikd_vec3_scale(to, 1 / ikd_vec3_len(to)));
            local[m] = ikd__multi_within_limit(s, m, ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(al, ang), local[m])));
            ikd_skeleton_fk(s, p->root, local, pose);
            thigh = ikd_vec3_sub(pose[m].position, pose[u].position), shin = ikd_vec3_sub(pose[c].position, pose[m].position);
            line = ikd_vec3_norm_or(ikd_vec3_sub(pose[c].position, pose[u].position), ikd_vec3_make(0, 1, 0));
        }
        double cosk = (a * a + b * b - d * d) / (2 * a * b); /* the knee's inner angle */
        if (!(cosk > -1 + 1e-9)) continue;                   /* as far as the leg reaches: straight is right */
        double bend = M_PI - acos(fmin(1, cosk));
        ikd_vec3 cue = ikd_vec3_reject(ikd__multi_swivel_side(w, pose, i), line);
        ikd_vec3 axis = ikd_vec3_cross(cue, ikd_vec3_scale(shin, 1 / b)); /* the shin swings away from the toes' side */
        if (!(ikd_vec3_len(axis) > 1e-9)) continue;
        axis = ikd_vec3_scale(axis, 1 / ikd_vec3_len(axis));
        ikd_vec3 al = ikd_quat_rotate(ikd_quat_conj(pose[u].rotation), axis); /* in the knee's parent's frame */
        local[m] = ikd__multi_within_limit(s, m, ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(al, bend), local[m])));
        ikd_skeleton_fk(s, p->root, local, pose);
    }
}

void ikd__multi_setup_swivels(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *ref)
{
    const ikd_skeleton *s = p->skeleton;
    for (size_t i = 0; i < w->g; i++)
        if (!(w->want[i] & 192)) leg_swivel(w, p, i, ref);
    ikd_vec3 fwd = ikd_vec3_make(0, 0, 0); /* the legs' toes' side, for the arms' back */
    for (size_t i = 0; i < w->g; i++)
        if (w->want[i] & 64) fwd = ikd_vec3_add(fwd, ikd_quat_rotate(ref_rot(s, ref, (long)p->goals[i].joint), w->swivel[i]));
    for (size_t k = 0; k < w->n; k++) w->need[k] = 0; /* scratch until setup_paths: children per joint */
    for (size_t k = 1; k < w->n; k++) w->need[s->joints[k].parent]++;
    for (size_t i = 0; i < w->g; i++) arm_swivel(w, p, i, fwd, ref);
}

void ikd__multi_swivels_from_start(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, ikd_pose_joint *pose,
                                   int fk)
{
    int missing = 0;
    for (size_t i = 0; i < w->g; i++) {
        long m, u;
        missing += !(w->want[i] & 192) && free_limb(w, p, i, &m, &u); /* (layered too: a leg's side, for prebend) */
    }
    if (!p->start || !missing) return;
    if (fk) ikd_skeleton_fk(p->skeleton, p->root, local, pose);
    ikd__multi_setup_swivels(w, p, pose);
}

void ikd__multi_setup_targets(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *start)
{
    /* foot placement: a free root is drawn, along the ground, over its
     * ground goals' targets as it stands over their joints at rest
     * (secondary), and its moves along the ground weigh MULTI_ANCHOR / size
     * per unit (multi_root_move): the pelvis lowers so both feet reach
     * rather than sliding toward the lower one (docs/solvers.md) */
    ikd_vec3 at = ikd_vec3_make(0, 0, 0), rest = at;
    int n = 0;
    w->wmax = 1;
    ikd__multi_goal_weights(w, p, 0);
    for (size_t i = 0; i < w->g; i++) {
        const ikd_goal *g = &p->goals[i];
        w->want[i] = (unsigned char)((g->has_position || g->has_ground ? 1 : 0) | (g->has_rotation || g->has_ground ? 2 : 0) |
                                     (g->has_aim ? 4 : 0));
        long m, u;
        if (p->root_free && p->soften < 1 && ikd__multi_limb_of(w, p, i, &m, &u)) w->want[i] |= 16;
        w->tpos[i] = g->position;
        w->trot[i] = g->rotation;
        if (g->has_ground) {
            ground_targets(p, g, start, &w->tpos[i], &w->trot[i]);
            at = ikd_vec3_add(at, w->tpos[i]), rest = ikd_vec3_add(rest, p->skeleton->joints[g->joint].position), n++;
        }
        if (ikd__multi_inside_bones(w, p, i)) w->want[i] |= 32;
        if (g->has_aim)
            w->aim_local[i] = ikd_quat_rotate(ikd_quat_conj(p->skeleton->joints[g->joint].rotation), g->aim_axis);
    }
    ikd__multi_setup_swivels(w, p, NULL);
    w->anchored = p->root_free && n > 0;
    if (n) w->anchor = ikd_vec3_add(p->skeleton->joints[0].position, ikd_vec3_scale(ikd_vec3_sub(at, rest), 1.0 / n));
    /* over the legs' columns' mean scale: under the range metric the
     * root's sliding keeps its price against them */
    double sum = 0;
    int nc = 0;
    for (size_t i = 0; i < w->g && n; i++)
        for (size_t k = p->goals[i].has_ground ? p->goals[i].joint : 0; k > 0; k = (size_t)p->skeleton->joints[k].parent)
            for (int a = 0; a < w->dof[k]; a++) sum += w->cs[w->col[k] + a], nc++;
    w->anchor_w = MULTI_ANCHOR / p->skeleton->size / (nc ? sum / nc : 1);
    ikd__multi_setup_preferred(w, p);
    ikd__multi_layout_rows(w);
}

/* Each goal's first row (only the rows it uses: 3 for a position, 1 more
 * softened with a free root, 3 for a rotation, 2 for an aim), the row
 * count and each row's goal, from w->want. */
void ikd__multi_layout_rows(multi_ws *w)
{
    size_t rows = 0;
    for (size_t i = 0; i < w->g; i++) {
        size_t nr;
        w->row0[i] = (int)rows;
        multi_goal_rows(w, i, &nr);
        for (size_t r = rows; r < rows + nr; r++) w->row_goal[r] = (int)i;
        rows += nr;
    }
    w->rows = rows;
}

/* Each goal's compact columns (a free root's, then its path's, root
 * first), the compact column of each global one, and the columns each
 * pair of goals shares: from the goals' paths and the column layout. */
static void goal_columns(multi_ws *w, const ikd_multi_problem *p)
{
    for (size_t i = 0; i < w->g; i++) {
        const int *path = &w->gpath[i * w->n];
        int *gc = &w->gcol[i * w->cmax], d = w->gdepth[i], c = 0;
        if (p->root_free)
            for (int a = 0; a < 3; a++) gc[c++] = (int)w->cols - 3 + a;
        for (int t = 0; t < d; t++)
            for (int a = 0; a < w->dof[path[t]]; a++) gc[c++] = w->col[path[t]] + a;
        w->glen[i] = c;
        int *gx = &w->gidx[i * w->cols];
        for (size_t col = 0; col < w->cols; col++) gx[col] = -1;
        for (int t = 0; t < c; t++) gx[gc[t]] = t;
    }
    for (size_t a = 0; a < w->g; a++)
        for (size_t b = 0; b <= a; b++) {
            int m = 0, la = w->glen[a], lb = w->glen[b];
            const int *ca = &w->gcol[a * w->cmax], *cb = &w->gcol[b * w->cmax];
            while (m < la && m < lb && ca[m] == cb[m]) m++;
            w->pre[a * w->g + b] = w->pre[b * w->g + a] = m;
        }
}

/* Each goal's path (the joints that move it, root first), the joints on
 * none (idle), and goal_columns. */
void ikd__multi_setup_paths(multi_ws *w, const ikd_multi_problem *p)
{
    const ikd_skeleton *s = p->skeleton;
    for (size_t k = 0; k < w->n; k++) w->idle[k] = w->dof[k] > 0, w->need[k] = k == 0;
    for (size_t i = 0; i < w->g; i++)
        for (long k = (long)p->goals[i].joint; k > 0 && !w->need[k]; k = s->joints[k].parent) w->need[k] = 1;
    for (size_t i = 0; i < w->g; i++) {
        int *path = &w->gpath[i * w->n], d = 0;
        long j = (long)p->goals[i].joint;
        /* a goal on the joint's position alone: its own rotation moves nothing
         * the goal asks (a joint no goal moves: at rest, snap_idle) */
        if (!(w->want[i] & 6)) j = s->joints[j].parent;
        for (long k = j; k >= 0; k = s->joints[k].parent)
            if (w->dof[k]) path[d++] = (int)k;
        for (int a = 0, b = d - 1; a < b; a++, b--) {
            int t = path[a];
            path[a] = path[b], path[b] = t;
        }
        for (int t = 0; t < d; t++) w->idle[path[t]] = 0;
        w->gdepth[i] = d;
    }
    goal_columns(w, p);
}

/* The joints no goal moves (w->idle) keep no columns: every per-column
 * pass of the iterations runs over the goals' paths alone (a real rig's
 * fingers and toes: 24 of the mannequin's 45 joints, about 10% of its
 * solve time; docs/performance.md). */
void ikd__multi_drop_idle(multi_ws *w, const ikd_multi_problem *p)
{
    ikd__multi_layout_columns(w, p->skeleton, w->idle);
    goal_columns(w, p); /* (the paths and idle joints stay) */
    memset(w->locked, 0, w->cols);
}

/* Joint k's local rotation q (unit) kept within its limit: q itself when
 * its deviation from rest is allowed (tested without trigonometry, against
 * the bounds validation keeps in the limit), else
 * the rest rotation times the deviation's projection. */
ikd_quat ikd__multi_within_limit(const ikd_skeleton *s, size_t k, ikd_quat q)
{
    const ikd_skeleton_joint *j = &s->joints[k];
    if (j->limit.type == IKD_LIMIT_NONE) return q;
    ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), q); /* unit, as q and rest_local are (up to rounding) */
    if (ikd__limit_inside_by(&j->limit, j->limit.bounds, d)) return q;
    return ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_limit_project(&j->limit, d)));
}

/* The rotation vector (axis * angle, radians, angle in [0, pi]) of q. */
ikd_vec3 ikd__multi_rot_vec(ikd_quat q)
{
    if (q.w < 0) q = ikd_quat_make(-q.x, -q.y, -q.z, -q.w);
    ikd_vec3 v = ikd_vec3_make(q.x, q.y, q.z);
    return ikd_vec3_scale(v, ikd__multi_rot_scale(ikd_vec3_len(v), q.w));
}

double ikd__multi_rot_scale(double s, double c)
{
    return s < 1e-15 ? 2.0 : 2 * atan2(s, c) / s;
}

/* Joints on no goal's path (a position goal's own joint is not on its
 * path: ikd__multi_setup_paths) are left out of the iterations: with a rest
 * pull they go to their rest rotation (options.preferred's when given; the
 * nearest allowed one), where the
 * pull would take them, turning at most options.pull_max_deg when it is
 * set (a limb whose goal a clip drops between frames eases back); without
 * a pull they stay where they start. */
void ikd__multi_snap_idle(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local)
{
    if (!(p->rest_pull > 0)) return;
    double most = multi_pull_bound(p);
    for (size_t k = 0; k < w->n; k++) {
        if (!w->idle[k]) continue;
        ikd_quat to = ikd__multi_within_limit(p->skeleton, k, multi_pull_to(p, k));
        /* the turn from local[k] to `to`, about an axis in the parent's frame */
        ikd_vec3 v = ikd__multi_rot_vec(ikd_quat_mul(to, ikd_quat_conj(local[k])));
        double ang = ikd_vec3_len(v);
        if (!(ang > most)) local[k] = to;
        else {
            ikd_quat part = ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(ikd_vec3_scale(v, 1 / ang), most), local[k]));
            local[k] = ikd__multi_within_limit(p->skeleton, k, part);
        }
    }
}

int ikd__multi_root_at_goal(const ikd_multi_problem *p, ikd_multi_problem *q)
{
    if (!p->root_free) return 0;
    for (size_t i = 0; i < p->goal_count; i++) {
        const ikd_goal *g = &p->goals[i];
        if (g->joint != 0 || !g->has_position || g->has_ground) continue;
        *q = *p;
        q->root = g->position;
        return 1;
    }
    return 0;
}
