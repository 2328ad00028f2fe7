/* multi_step.c - one skeleton step: the rest pull, the damped least-squares step with locked columns, applying it. */
#include <string.h>

#include "limit.h"
#include "multi.h"

/* Joint k's local rotation after turning it by its step in dq times
 * `scale` (about world axes at the current pose); *angle gets the turn. */
static ikd_quat turned(const multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                       size_t k, double scale, double *angle)
{
    ikd_vec3 ax[3], v = ikd_vec3_make(0, 0, 0);
    int na = multi_joint_axes(w, k, ax);
    for (int a = 0; a < na; a++) v = ikd_vec3_mad(v, ax[a], w->dq[w->col[k] + a] * scale);
    double ang = *angle = ikd_vec3_len(v);
    if (!(ang > 0)) return local[k];
    /* the world turn in the parent's frame: pr^-1 R(v) pr = R(pr^-1 v) */
    ikd_vec3 vl = k ? ikd_quat_rotate(ikd_quat_conj(pose[p->skeleton->joints[k].parent].rotation), v) : v;
    return ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(ikd_vec3_scale(vl, 1 / ang), ang), local[k]));
}

/* A world rotation vector as rates of joint k's columns. */
static void to_columns(multi_ws *w, const ikd_skeleton *s, size_t k, ikd_vec3 v)
{
    double *z = &w->z[w->col[k]];
    const ikd_vec3 *ax = &w->axw[3 * k];
    if (s->joints[k].limit.type == IKD_LIMIT_EULER) {
        const double *m = &w->zinv[9 * k];
        for (int a = 0; a < 3; a++) z[a] = m[3 * a] * v.x + m[3 * a + 1] * v.y + m[3 * a + 2] * v.z;
    } else {
        for (int a = 0; a < w->dof[k]; a++) z[a] = ikd_vec3_dot(v, ax[a]); /* orthonormal columns */
    }
}

/* Goal i's limb (its joint's parent the middle joint, a 3-DoF grandparent
 * `up`) turned about the line from up to the goal's joint. A pole (the
 * goal's `pole`) adds half the angle from the middle joint's side of the
 * line to the pole's to up's pull. A natural swivel (w->swivel: a knee
 * that is no hinge, over the toes) replaces the pull's own turn along the
 * swivel (up about the line, the goal's joint back: the motion that keeps
 * the goal's position and rotation) by the same half angle toward the
 * toes' side, so the rest pull, which says nothing about where a
 * straight-at-rest leg bends, no longer decides it (docs/solvers.md,
 * "Natural swivel"). An arm's (down, out and back from its chest) adds
 * twice the angle along the same swivel to the pull's own: replacing it
 * moved the chest (the pull's swivel at the shoulder and hand is also part
 * of the trunk's twist), and the rest pull then holds the elbow about a
 * third of the way short. Both fade in over the first MULTI_POLE_BEND of the
 * limb's bend (a straight limb has no bend to turn); the swivel also over
 * how far across the line the natural side lies. */
static void limb_turn(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i)
{
    const ikd_skeleton *s = p->skeleton;
    const ikd_goal *g = &p->goals[i];
    long mid = s->joints[g->joint].parent, up = mid > 0 ? s->joints[mid].parent : -1;
    if (!(g->has_pole || (w->want[i] & 64)) || up < 0 || w->dof[up] != 3) return;
    ikd_vec3 axis = ikd_vec3_norm_or(ikd_vec3_sub(pose[g->joint].position, pose[up].position), ikd_vec3_make(0, 1, 0));
    ikd_vec3 have = ikd_vec3_reject(ikd_vec3_sub(pose[mid].position, pose[up].position), axis);
    ikd_vec3 toward = g->has_pole ? ikd_vec3_sub(g->pole, pose[up].position) : ikd__multi_swivel_side(w, pose, i);
    ikd_vec3 want = ikd_vec3_reject(toward, axis);
    if (ikd_vec3_len(have) < 1e-9 * s->size || ikd_vec3_len(want) < 1e-9 * s->size) return;
    /* the middle joint's distance from the limb's line, over the upper bone */
    double fade = fmin(1, ikd_vec3_len(have) / ikd_vec3_len(s->joints[mid].offset) / MULTI_POLE_BEND);
    double half = 0.5 * ikd_vec3_signed_angle(have, want, axis);
    if (!g->has_pole) /* a swivel nearly along the line says little: whole from MULTI_SWIVEL_ACROSS across it */
        fade *= fmin(1, ikd_vec3_len(want) / ikd_vec3_len(toward) / MULTI_SWIVEL_ACROSS);
    if (g->has_pole) {
        w->zw[up] = ikd_vec3_mad(w->zw[up], axis, half * fade);
        return;
    }
    if (w->swfrom[i] >= 0) { /* an arm: twice the angle, added to the pull's own (docs/solvers.md) */
        w->zw[up] = ikd_vec3_mad(w->zw[up], axis, 4 * half * fade);
        w->zw[g->joint] = ikd_vec3_mad(w->zw[g->joint], axis, -4 * half * fade);
        return;
    }
    double own = 0.5 * (ikd_vec3_dot(w->zw[up], axis) - ikd_vec3_dot(w->zw[g->joint], axis)); /* the pull's swivel */
    w->zw[up] = ikd_vec3_mad(w->zw[up], axis, fade * (half - own));
    w->zw[g->joint] = ikd_vec3_mad(w->zw[g->joint], axis, -fade * (half - own));
}

/* An euler-limited joint's pull back to neutral (no options.preferred), as
 * a world rotation vector: straight along its own three angles, each to
 * its neutral (neutral_deg, else the middle of its range:
 * ikd__limit_euler_neutral), the rates times the gimbal axes. Its box is
 * convex in those angles, so from inside the pull's path stays inside.
 * Along the shortest arc instead (as other joints are pulled), a box in
 * other axes than the arc's was left on the way: the pull pressed the
 * joint into a bound and slid it into a corner far from both start and
 * rest (Debian's Boxing_Toes on a rig whose joint frames are turned up to
 * 90 degrees, limits the recording keeps in channel order: frame 0 turned
 * a shoulder 126 degrees off the recording that already met every goal;
 * docs/solvers.md, "The pull of an euler box"). A banded box (whole
 * turns but the middle angle: ikd__euler_banded) is pulled along the
 * shortest arc as a ball is: its outer angles say nothing near a pole. */
static ikd_vec3 euler_pull(const multi_ws *w, const ikd_skeleton *s, size_t k)
{
    double to[3];
    ikd__limit_euler_neutral(&s->joints[k].limit, to);
    ikd_vec3 v = ikd_vec3_make(0, 0, 0);
    for (int a = 0; a < 3; a++) v = ikd_vec3_add(v, ikd_vec3_scale(w->axw[3 * k + a], to[a] - w->cval[w->col[k] + a]));
    return v;
}

/* The secondary task, in column space: each joint's deviation from rest
 * (options.preferred's pose when given) pulled back by rest_pull, a free
 * root toward the preferred root, and limbs toward their poles and
 * natural swivels (limb_turn). */
static void secondary(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose)
{
    const ikd_skeleton *s = p->skeleton;
    memset(w->z, 0, w->cols * sizeof(double));
    /* each 3-DoF joint's turn back to rest, in its rest frame: the rotation
     * vector of its deviation's inverse (ikd__multi_rot_vec's arithmetic),
     * in three passes so that the joints' atan2 calls follow one another
     * (independent: each need not wait for the last joint's finish); the
     * scratch zc holds each half angle's sine (-1: no pull; -2: an euler
     * box's, along its own angles: euler_pull) and cosine */
    double *hs = w->zc, *hc = w->zc + s->count;
    memset(w->zw, 0, s->count * sizeof *w->zw); /* (limb_turn reads a goal's joint's, columns or not) */
    for (size_t a = 0; a < w->nact; a++) { /* the joints with columns (the others' hs are never read) */
        size_t k = (size_t)w->act[a];
        hs[k] = -1;
        if (!w->dof[k] || w->idle[k] || p->rest_pull <= 0 || w->dof[k] == 1) continue; /* hinges: below */
        if (!p->preferred && s->joints[k].limit.type == IKD_LIMIT_EULER && !ikd__euler_banded(&s->joints[k].limit)) {
            hs[k] = -2;
            continue;
        }
        ikd_quat q = ikd_quat_conj(ikd_quat_mul(ikd_quat_conj(multi_pull_to(p, k)), local[k])); /* the deviation's inverse */
        if (q.w < 0) q = ikd_quat_make(-q.x, -q.y, -q.z, -q.w);
        w->zw[k] = ikd_vec3_make(q.x, q.y, q.z);
        hs[k] = ikd_vec3_len(w->zw[k]), hc[k] = q.w;
    }
    for (size_t a = 0; a < w->nact; a++) {
        size_t k = (size_t)w->act[a];
        if (!(hs[k] < 0)) hs[k] = ikd__multi_rot_scale(hs[k], hc[k]);
    }
    for (size_t a = 0; a < w->nact; a++) {
        size_t k = (size_t)w->act[a];
        if (hs[k] < 0) continue;
        const ikd_skeleton_joint *j = &s->joints[k];
        ikd_quat frame = ikd_quat_mul(k ? pose[j->parent].rotation : ikd_quat_identity(), multi_pull_to(p, k));
        w->zw[k] = ikd_quat_rotate(frame, ikd_vec3_scale(w->zw[k], hs[k])); /* the whole way back to rest (or preferred) */
    }
    for (size_t a = 0; a < w->nact; a++)
        if (hs[w->act[a]] == -2) w->zw[w->act[a]] = euler_pull(w, s, (size_t)w->act[a]);
    for (size_t i = 0; i < w->g; i++) limb_turn(w, p, pose, i);
    if (w->anchored && p->rest_pull > 0 && !w->hold_root) { /* the root along the ground, the whole way */
        ikd_vec3 d = ikd_vec3_sub(w->anchor, pose[0].position);
        d = ikd_vec3_scale(ikd_vec3_reject(d, p->up), w->anchor_w); /* along the ground, in column values */
        w->z[w->cols - 3] = d.x, w->z[w->cols - 2] = d.y, w->z[w->cols - 1] = d.z;
    } else if (p->root_free && p->has_preferred_root && p->rest_pull > 0 && !w->hold_root) { /* toward the preferred root */
        ikd_vec3 d = ikd_vec3_sub(p->preferred_root, pose[0].position);
        w->z[w->cols - 3] = d.x, w->z[w->cols - 2] = d.y, w->z[w->cols - 1] = d.z;
    }
    for (size_t a = 0; a < w->nact; a++) {
        size_t k = (size_t)w->act[a];
        if (w->dof[k] == 3 && !w->idle[k]) to_columns(w, s, k, w->zw[k]); /* an idle joint has no column frame: its z stays 0 */
        if (w->dof[k] == 1 && !w->idle[k] && p->rest_pull > 0) w->z[w->col[k]] = w->pang[k] - w->cval[w->col[k]]; /* a hinge: back by its angle */
    }
}

/* Column c's angle after its step times `scale`, clamped to its range. */
static double stepped(const multi_ws *w, size_t c, double scale)
{
    double a = w->cval[c] + w->dq[c] * scale;
    if (a > w->chi[c]) a = w->chi[c];
    if (a < w->clo[c]) a = w->clo[c];
    return a;
}

/* The largest turn of a joint in the step w->dq, radians (what apply
 * turns before it scales the step). */
double ikd__multi_step_turn(const multi_ws *w)
{
    double worst = 0; /* the largest square (sqrt is monotonic and rounds exactly: the same value) */
    for (size_t t = 0; t < w->nact; t++) {
        size_t k = (size_t)w->act[t];
        double q = 0;
        for (int a = 0; a < w->dof[k]; a++) q += w->dq[w->col[k] + a] * w->dq[w->col[k] + a];
        if (q > worst) worst = q;
    }
    return sqrt(worst);
}

/* Turn every joint by its step (world rotation vectors, scaled so none
 * turns more than MULTI_MAX_STEP), move a free root, then put every joint
 * back within its limits. Returns the largest turn. */
double ikd__multi_apply(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, const ikd_pose_joint *pose,
                        ikd_vec3 *root, double max_step)
{
    const ikd_skeleton *s = p->skeleton;
    double worst = ikd__multi_step_turn(w);
    double scale = worst > max_step ? max_step / worst : 1;
    for (size_t x = 0; x < w->nact; x++) { /* (the others: fixed, at rest since the start; idle, see snap_idle) */
        size_t k = (size_t)w->act[x];
        const ikd_skeleton_joint *j = &s->joints[k];
        double ang;
        if (!w->dof[k] || w->idle[k]) continue;
        if (j->limit.type == IKD_LIMIT_EULER && !ikd__euler_banded(&j->limit)) { /* its columns are its angles' rates: the angles move by the step */
            size_t c = (size_t)w->col[k];
            double *a = &w->ea[3 * k];
            for (int t = 0; t < 3; t++) a[t] = stepped(w, c + (size_t)t, scale);
            local[k] = w->eq[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd__euler_out(&j->limit, ikd__euler_quat_product(j->limit.order, a))));
            for (int t = 0; t < 3; t++) a[t] = ikd__wrap_pi(a[t]); /* a whole turn's range is unbounded */
            continue;
        }
        if (j->limit.type == IKD_LIMIT_HINGE) { /* a turn about its own axis: the angle moves by the step */
            double a = stepped(w, (size_t)w->col[k], scale);
            local[k] = w->eq[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_quat_axis_angle(j->limit.local_axis, a)));
            w->ea[3 * k] = ikd__hinge_angle(&j->limit, ikd__wrap_pi(a));
            continue;
        }
        local[k] = turned(w, p, local, pose, k, scale, &ang);
        local[k] = ikd__multi_within_limit(s, k, local[k]);
    }
    if (p->root_free)
        *root = ikd_vec3_add(*root, multi_root_move(w, p->up, ikd_vec3_make(w->dq[w->cols - 3], w->dq[w->cols - 2], w->dq[w->cols - 1])));
    return worst * scale;
}

/* s plus the squares of goal i's task error rows. */
static double add_goal_sq(const multi_ws *w, size_t i, double s)
{
    size_t nr, r0 = multi_goal_rows(w, i, &nr);
    for (size_t r = r0; r < r0 + nr; r++) s += w->e[r] * w->e[r];
    return s;
}

/* The damping for a task error of norm `en`: options.damping times it (at
 * most the skeleton's size), and never quite 0. */
double ikd__multi_damping_for(const ikd_multi_problem *p, double en)
{
    return p->damping * fmin(en, p->skeleton->size) + 1e-9 * p->skeleton->size;
}

/* The task error's norm over the goals within reach (the rows of a goal
 * out of reach are damped by their own: primary_step). */
double ikd__multi_task_norm(const multi_ws *w)
{
    double s = 0;
    for (size_t i = 0; i < w->g; i++)
        if (w->far[i] < 0) s = add_goal_sq(w, i, s);
    return sqrt(s);
}

/* 1 when column c's step would leave its range by more than a quarter of
 * the step (the projection would undo most of it). */
static int column_leaves(const multi_ws *w, size_t c)
{
    double v = w->cval[c] + w->dq[c], d = fabs(w->dq[c]);
    if (d < 1e-12) return 0;
    return v - w->chi[c] > 0.25 * d + 1e-9 || w->clo[c] - v > 0.25 * d + 1e-9;
}

/* Clears the last step's locks; with `bounded` (options.pull_max_deg set:
 * a clip's frames after the first; or primary_step's `guess`: a cold
 * solve's long steps) the columns it locked that still sit at or past a bound of their
 * range (most steps that follow push on against it) are locked again
 * before the product is formed, at most
 * MULTI_PRELOCK: their step is 0 and their entries go to w->psave; the
 * first solve checks the guess (prelock_holds). Returns how many. */
static int prelock(multi_ws *w, int bounded)
{
    int np = 0;
    for (size_t col = 0; col < w->cols; col++) {
        int was = w->locked[col] == 2;
        w->locked[col] = 0;
        if (!was || !bounded || np >= MULTI_PRELOCK) continue;
        if (!(w->cval[col] >= w->chi[col] || w->cval[col] <= w->clo[col])) continue; /* inside (or unbounded) */
        w->locked[col] = 2, w->fix[col] = 0;
        w->pcol[np] = (int)col;
        ikd__multi_move_column(w, col, &w->psave[(size_t)np++ * w->rows], 0);
    }
    return np;
}

/* 1 when every pre-locked column's lock holds at the solve in w->y: the
 * step it would take on its own (J^T y + k z for that column: the
 * objective's descent along it, the others as solved) points out of its
 * range or is nil. */
static int prelock_holds(const multi_ws *w, int np, double k)
{
    for (int a = 0; a < np; a++) {
        size_t col = (size_t)w->pcol[a];
        const double *t = &w->psave[(size_t)a * w->rows];
        double d = k * w->z[col] / w->cs[col];
        for (size_t r = 0; r < w->rows; r++) d += t[r] * w->y[r];
        if (w->cval[col] >= w->chi[col] ? d < -1e-12 : d > 1e-12) return 0;
    }
    return 1;
}

/* The step in dq: damped least squares toward the goals, regularised
 * toward the rest pose (and the poles). With z the whole way back to rest,
 * it minimises |J dq - e|^2 + lambda^2 |dq|^2 + mu^2 |dq - z|^2:
 * dq = x0 + J^T (J J^T + c I)^-1 (e - J x0), c = lambda^2 + mu^2,
 * x0 = (mu^2 / c) z. Far from the goals lambda dominates and the pull is
 * faint; once they are met the pull takes whole steps in their null space,
 * so the pose settles in a few iterations, and it costs the goals about
 * mu^2 / sigma^2 of the deviation. Near the goals (within MULTI_NEAR x the
 * size) the pull's share is at least kmin (MULTI_NEAR_PULL) whatever the
 * damping: the settle starts while the goals are still being met, not only
 * after (docs/performance.md: fewer iterations; a full share opened clip
 * loops). A column whose step would leave its range is locked: it steps to
 * the bound it would leave and no further (what that does to the goals is
 * taken out of the task error), its column is zeroed and the rest solved
 * again, up to four rounds. (Locked where it stood instead, a joint near a
 * bound stopped short of it; those false stationary points were other local
 * minima: loops that did not close.) With `guess` (a cold solve's long
 * steps) the columns the last step locked are guessed as where the pull is
 * bounded (prelock). 0, or -1 when the system cannot be solved. */
int ikd__multi_primary_step(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                            double lambda, double mu, double kmin, int guess)
{
    int pull = mu > 0;
    for (size_t i = 0; i < w->g; i++) pull |= p->goals[i].has_pole;
    if (pull) secondary(w, p, local, pose);
    else memset(w->z, 0, w->cols * sizeof(double));
    double c = lambda * lambda + mu * mu, k = c > 0 ? mu * mu / c : 0;
    if (mu > 0 && k < kmin) k = kmin; /* near the goals: settle while meeting them */
    int np = prelock(w, p->pull_max_deg > 0 || guess);
    ikd__multi_form_product(w);
    /* each row damped by c; a far goal's rows (a block of their own: no
     * column is both theirs and another goal's) by its own error instead */
    for (size_t r = 0; r < w->rows; r++) w->rdamp[r] = c;
    for (size_t i = 0; i < w->g; i++) {
        if (w->far[i] < 0) continue;
        size_t nr, r0 = multi_goal_rows(w, i, &nr);
        double lf = ikd__multi_damping_for(p, sqrt(add_goal_sq(w, i, 0)));
        for (size_t r = r0; r < r0 + nr; r++) w->rdamp[r] = lf * lf + mu * mu;
    }
    int direct = 1; /* 1: w->y from the residual and a new factor of A0 + diag(rdamp); 0: lock_columns solved it */
    for (int round = 0; round < 4; round++) {
        if (direct) {
            if (ikd__multi_factor(w) != 0) return -1;
            ikd__multi_residual(w, k); /* e - J x0 */
            ikd__multi_solve_factored(w, w->y, w->y);
            memcpy(w->y0, w->y, w->rows * sizeof(double));
            w->nt = 0;
            if (round == 0 && np && !prelock_holds(w, np, k)) { /* a guess wrong: the step as if none were made */
                int wb = ikd__multi_unguess(w, np, k); /* (it unlocks them) */
                np = 0;
                if (wb != 0) { /* the product formed anew: factored and solved again */
                    round = -1;
                    continue;
                }
            }
        }
        ikd__multi_jt(w, w->y, w->dq);
        for (size_t col = 0; col < w->cols; col++) w->dq[col] = w->locked[col] ? w->fix[col] : w->cs[col] * w->dq[col] + k * w->z[col];
        int locked = 0;
        for (size_t col = 0; col < w->cols; col++) {
            if (w->locked[col] || !column_leaves(w, col)) continue;
            double bound = w->cval[col] + w->dq[col] > w->chi[col] ? w->chi[col] : w->clo[col];
            w->fix[col] = bound - w->cval[col];
            if (!(fabs(w->fix[col]) < fabs(w->dq[col]))) w->fix[col] = 0; /* at or past it already: stays */
            w->dq[col] = w->fix[col];
            w->locked[col] = 1; /* (its z is zeroed by lock_columns, which reads it) */
            locked = 1;
        }
        if (!locked) break;
        direct = ikd__multi_lock_columns(w, k) != 0;
    }
    return 0;
}
