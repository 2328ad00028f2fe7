/* multi.c - a skeleton toward several goals at once: descents, restarts, settles and stretching over multi_*.c's steps. */
#include <string.h>

#include "fk.h"
#include "multi.h"
#include "serial.h"

/* A stalled solve with a hinge against a bound of its range (a straight
 * knee: the limb's Jacobian is singular there and every step that would
 * bend it is a step along the bound) gets each such hinge on an unmet
 * goal's path turned 0.1 rad into its range; the next steps start from a
 * bent limb. Returns 1 when it turned one. */
static int nudge_hinges(multi_ws *w, const ikd_multi_problem *p, const ikd_goal_result *gr, ikd_quat *local)
{
    const ikd_skeleton *s = p->skeleton;
    int any = 0;
    for (size_t i = 0; i < w->g; i++) {
        if (gr[i].error <= p->tolerance || ikd__multi_out_of_reach(w, p, i)) continue;
        for (int t = 0; t < w->gdepth[i]; t++) {
            size_t k = (size_t)w->gpath[i * w->n + (size_t)t];
            const ikd_skeleton_joint *j = &s->joints[k];
            size_t c = (size_t)w->col[k];
            if (j->limit.type != IKD_LIMIT_HINGE || !isfinite(w->chi[c])) continue;
            double v = w->cval[c], lo = w->clo[c], hi = w->chi[c], to;
            if (hi - lo < 0.2) continue;
            if (v - lo < 1e-3) to = lo + 0.1;
            else if (hi - v < 1e-3) to = hi - 0.1;
            else continue;
            local[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_quat_axis_angle(j->limit.local_axis, to)));
            w->cval[c] = to, any = 1;
        }
    }
    return any;
}

static void finish_goals(const multi_ws *w, const ikd_multi_problem *p, ikd_goal_result *gr, int *all)
{
    *all = 1;
    for (size_t i = 0; i < w->g; i++) {
        int met = multi_met(p, &gr[i]);
        gr[i].status = met ? IKD_GOAL_REACHED : IKD_GOAL_NOT_REACHED;
        if (!met && ikd__multi_unreachable(w, p, i)) gr[i].status = IKD_GOAL_UNREACHABLE;
        if (met && ikd__multi_softened_beyond(w, p, i)) gr[i].status = IKD_GOAL_UNREACHABLE, met = 0;
        if (!met) *all = 0;
    }
}

/* While settling (goals met, the pull toward rest converging linearly):
 * when this step is nearly parallel to the last (|cosine| >= 0.99), the
 * steps form a geometric series of signed ratio r (the length ratio, its
 * sign the cosine's), and the step is scaled by 1 / (1 - r), the rest of
 * the series in one step (Aitken): stretched at most 6 times when it
 * continues the last one (r in [0.3, 1.5]: a settle that crawls along at
 * a steady or slowly growing pace, r about 1, leaves a saddle of the pull;
 * 6 steps ahead at once, as for r >= 5/6); shortened to about half when
 * it undoes it (r in [-2, -0.3]: the pose swings about the point it
 * converges to, as slowly as 0.985 a step where a limit or the pull's
 * compromise with the goals overshoots). Keeps the step in w->dqp for the
 * next call; returns |r| when it scaled (the rate the series' remainder
 * still shrinks at), else 0. */
static double extrapolate(multi_ws *w)
{
    double dd = 0, pp = 0, dp = 0;
    for (size_t c = 0; c < w->cols; c++) dd += w->dq[c] * w->dq[c], pp += w->dqp[c] * w->dqp[c], dp += w->dq[c] * w->dqp[c];
    memcpy(w->dqp, w->dq, w->cols * sizeof(double));
    if (!(pp > 0) || !(dd > 0)) return 0;
    double rate = sqrt(dd / pp), cosine = dp / sqrt(dd * pp), r = cosine < 0 ? -rate : rate;
    if (fabs(cosine) < 0.99 || (r > 0 && (r < 0.3 || r > 1.5)) || (r < 0 && (r > -0.3 || r < -2))) return 0;
    double f = r < 5.0 / 6 ? 1 / (1 - r) : 6;
    for (size_t c = 0; c < w->cols; c++) w->dq[c] *= f;
    memset(w->dqp, 0, w->cols * sizeof(double)); /* a scaled step starts no series */
    return fabs(r);
}

/* The limbs of the far goals turned toward their targets on w->best (at
 * `root`), everything else held: steps over their own columns alone
 * (build_rows with only_far; no pull) until the largest turn is under
 * MULTI_SETTLED, at most MULTI_FAR_REFINE or `budget`. For a settle that
 * ended at a held pose or at its cap: the far limbs' own steps were part
 * of the cycle it left, so they lag behind their targets there. Their
 * columns move no other goal: those stay met. Returns the iterations. */
static int far_refine(multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose, ikd_vec3 root,
                      ikd_goal_result *gr, int budget)
{
    const ikd_skeleton *s = p->skeleton;
    int it = 0;
    memcpy(local, w->best, s->count * sizeof *local);
    w->only_far = 1;
    while (it < budget && it < MULTI_FAR_REFINE) {
        ikd__skeleton_fk_some(s, root, local, pose, w->need, 0);
        ikd__multi_joint_frames(w, s, local, pose);
        ikd__multi_build_rows(w, p, pose, gr, 1);
        if (ikd__multi_primary_step(w, p, local, pose, 1e-9 * s->size, 0, 0, 0) != 0) break;
        it++;
        if (ikd__multi_apply(w, p, local, pose, &root, MULTI_MAX_STEP) < MULTI_SETTLED) break;
    }
    w->only_far = 0;
    memcpy(w->best, local, s->count * sizeof *local);
    return it;
}

/* The step just taken by a descent whose goals are `met`, as a settle
 * treats it: with `settling` (met since an earlier step, and that step no
 * leap) a step shorter than the last by a rate under MULTI_MIX_BELOW that
 * would not end the settle as it is is mixed with the settle's last steps
 * (Anderson: cold solves settle in fewer steps, and the next step's end
 * test takes the plain steps' rate); else (a settle that crawls or swings,
 * or no mixing) extrapolate's leap. Returns the leap's rate (0: none, the
 * step kept in w->dqp for the next). */
static double settle_leap(multi_ws *w, int met, int settling, int mixing, double prev_moved)
{
    double leap = 0;
    if (met && mixing) ikd__multi_mix_push(w);
    else w->mixn = -1;
    if (settling) {
        if (mixing) {
            double turn = ikd__multi_step_turn(w), r = prev_moved > 0 ? fmin(turn / prev_moved, 0.95) : 0.95;
            if (r < MULTI_MIX_BELOW && turn * r / (1 - r) >= MULTI_SETTLED && ikd__multi_mix(w)) {
                leap = fmax(r, 0.3);
                memset(w->dqp, 0, w->cols * sizeof(double)); /* a mixed step starts no series */
            }
        }
        if (!(leap > 0)) leap = extrapolate(w);
    } else {
        memcpy(w->dqp, w->dq, w->cols * sizeof(double));
    }
    if (met && mixing) ikd__multi_mix_took(w);
    return leap;
}

/* 1 (and *timed_out set) when the problem's cancel flag is up or its
 * deadline has passed now. */
static int out_of_time(const ikd_multi_problem *p, int *timed_out)
{
    int out = multi_out_of_time(p);
    if (out) *timed_out = 1;
    return out;
}

/* One damped least-squares descent from `local` and *root: iterations
 * until the goals are met and the pose settles, the error stalls, or the
 * budget, deadline or cancel flag ends it. The best pose of the descent is
 * left in w->best and *root; *fresh is 1 when pose and gr are still that
 * pose's (its evaluation was the last). Returns the iterations taken.
 *
 * A settling step (not a leap) that loses the goals: where their Jacobian
 * is nearly singular the pull's compromise with them (about mu^2 / sigma^2
 * of the deviation) is beyond the tolerance, and the pull and the goals
 * can cycle to the settling's cap. The met pose the first such step left
 * is held; the second time (MULTI_LOSSES) the settling ends there. Fed
 * back, that pose loses the goals the same way and comes back: a fixed
 * point. Once a plain step has lost them, a leap's loss counts too: the
 * pull letting go, the goals met, a leap along that and the pull again
 * cycled to the cap (67 iterations a frame in a tracked boxing clip under
 * the range metric; now 17 at most). */
static int descend(multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose, ikd_vec3 *root,
                   ikd_goal_result *gr, int budget, int *timed_out, int *fresh)
{
    const ikd_skeleton *s = p->skeleton;
    double best = INFINITY, progress = INFINITY, L = s->size;
    ikd_vec3 best_root = *root;
    int it = 0, stall = 0, nudged = 0, settle = 0, leapt = 0, was_met = 0, lost = 0, last = 0, cycled = 0;
    double prev_moved = 0, leap_rate = 0;
    w->mixn = -1;
    ikd_vec3 held_root = *root;
    /* options.pull_max_deg: the turn the pull's steps may still take */
    double pull_left = multi_pull_bound(p);
    ikd__multi_mark_far(w, p);
    int far = 0; /* a goal out of reach (mark_far): far_refine after a settle that cycles */
    for (size_t i = 0; i < w->g; i++) far |= w->far[i] >= 0;
    /* settles mixed (ikd__multi_mix) only with every goal within reach and
     * the pull unbounded: a limb reaching for a far goal cycles out of its
     * settle by extrapolate's leaps, and mixed, the chain-ball clips'
     * second loop ended 0.41 degrees from the first (0.12 unmixed) */
    int mixing = !far && !(p->pull_max_deg > 0);
    for (;;) {
        ikd__skeleton_fk_some(s, *root, local, pose, w->need, 0); /* the joints the iteration reads */
        if (!last) ikd__multi_joint_frames(w, s, local, pose);
        int met = ikd__multi_build_rows(w, p, pose, gr, !last);
        double en = w->raw; /* unclamped: a goal far off still shows progress */
        if (last) { /* the settle's last step, evaluated (its errors: no step follows): kept when it meets the goals */
            if (met) best_root = *root, *fresh = 1, memcpy(w->best, local, s->count * sizeof *local);
            else *fresh = 0;
            break;
        }
        /* a settling step that loses the goals: the met pose it left is held (see above) */
        if (was_met && !met && (!leapt || lost) && lost++ == 0) held_root = best_root, memcpy(w->held, w->best, s->count * sizeof *local);
        was_met = met;
        *fresh = 0;
        if (lost >= MULTI_LOSSES && met) {
            memcpy(w->best, w->held, s->count * sizeof *local);
            best_root = held_root;
            cycled = 1;
            break;
        }
        if (met || en < best - 1e-12 * L) { /* once met, the pull toward rest goes on */
            best = fmin(best, en), best_root = *root, *fresh = 1;
            memcpy(w->best, local, s->count * sizeof *local);
        }
        if (met && !(pull_left > 0)) break; /* the pull spent (options.pull_max_deg) and the goals met: kept */
        if (met || en < progress * (1 - MULTI_PROGRESS) - 1e-12 * L) {
            progress = en, stall = 0;
        } else if (++stall >= MULTI_STALL) {
            if (lost) { /* the goals lost by a settling step and not met again: the met pose it left */
                memcpy(w->best, w->held, s->count * sizeof *local);
                best_root = held_root, *fresh = 0;
            }
            break; /* no progress: held by limits, reach or the pull (a restart may do better) */
        } else if (stall == 4 && !nudged && nudge_hinges(w, p, gr, local)) {
            nudged = 1;
            continue;
        }
        if (it >= budget || out_of_time(p, timed_out)) break;
        double lambda = ikd__multi_damping_for(p, ikd__multi_task_norm(w));
        /* a pull that holds unmet goals off (their error stalls) lets go */
        double mu = stall >= 3 || !(pull_left > 0) ? 0 : p->rest_pull * MULTI_PULL * L;
        int pulling = mu > 0 && en < MULTI_NEAR * L; /* near the goals: the step is mostly the pull's */
        /* locks guessed while the steps are long (the pose a cold solve
         * converges to is left to the unguessed steps: MULTI_GUESS_MOVED) */
        int guess = !far && prev_moved > MULTI_GUESS_MOVED;
        if (ikd__multi_primary_step(w, p, local, pose, lambda, mu, en < MULTI_NEAR * L ? MULTI_NEAR_PULL : 0, guess) != 0) break;
        it++;
        double leap = settle_leap(w, met, met && settle > 0 && !leapt, mixing, prev_moved);
        leapt = leap > 0;
        double most = en > MULTI_FAR * L ? MULTI_FAR_STEP : MULTI_MAX_STEP;
        if (pulling && pull_left < most) most = pull_left; /* the whole step shortened: the goals' part is small */
        double moved = ikd__multi_apply(w, p, local, pose, root, most);
        if (pulling && (pull_left -= moved) <= 1e-12) pull_left = 0; /* spent: no pull from here */
        settle += met || settle > 0; /* iterations since the goals were first met */
        /* goals met and the pose has stopped changing: the settle converges
         * linearly, so what is left is about moved x rate / (1 - rate); the
         * step after a leap shrinks at the rate the leap summed */
        double rate = prev_moved > 0 ? fmin(moved / prev_moved, 0.95) : leap_rate > 0 ? fmin(leap_rate, 0.95) : 0.95;
        prev_moved = leap > 0 ? 0 : moved;
        leap_rate = leap;
        if (met && !(leap > 0) && moved * rate / (1 - rate) < MULTI_SETTLED) {
            if (moved / (1 - rate) < MULTI_SETTLED) break; /* the pose before the step is as near */
            last = 1; /* evaluated at the top; fed back, it is within MULTI_SETTLED of where it converges */
            continue;
        }
        if (settle >= MULTI_SETTLE_ITERATIONS) { cycled = 1; break; } /* the best (met) pose so far is kept */
    }
    *root = best_root;
    if (cycled && far && !*timed_out) {
        it += far_refine(w, p, local, pose, best_root, gr, budget - it);
        *fresh = 0;
    }
    return it;
}

/* How far w->best (at `root`) is from meeting the reachable goals: the
 * weighted squares of the unmet ones' errors (what the descents minimise,
 * so goals that cannot all be met keep the best compromise; a goal inside
 * its bones by its distance from where it is aimed), 0 when every one is
 * met (goals out of reach left out); gr gets the goals' errors (and pose
 * the best pose's), evaluated anew unless `fresh` says they already are. */
static double score_best(multi_ws *w, const ikd_multi_problem *p, ikd_vec3 root, ikd_pose_joint *pose,
                         ikd_goal_result *gr, int fresh)
{
    const ikd_skeleton *s = p->skeleton;
    if (!fresh) {
        ikd__skeleton_fk_some(s, root, w->best, pose, w->need, 0);
        ikd__multi_build_rows(w, p, pose, gr, 0);
    }
    double sc = 0;
    for (size_t i = 0; i < w->g; i++) {
        if (ikd__multi_out_of_reach(w, p, i)) continue;
        /* weights as the rows weigh them (over the largest: a weight near
         * the largest double squared would be infinite, and no descent's
         * score would then beat the first's INFINITY) */
        double wt = w->gw[i], e = gr[i].error, r = gr[i].rotation_error_deg * IKD_DEG2RAD * MULTI_ROTATION_WEIGHT * s->size;
        if (w->want[i] & 32) /* inside its bones: how far from where it is aimed */
            e = ikd_vec3_dist(ikd__multi_limb_target(w, p, pose, i), pose[p->goals[i].joint].position);
        if (e > p->tolerance) sc += wt * wt * e * e;
        if (gr[i].rotation_error_deg > p->rotation_tolerance_deg) sc += wt * wt * r * r;
    }
    return sc;
}

/* Restart r's start pose: every joint that moves a goal somewhere inside
 * its limits (deterministic: a fixed sequence of pseudo-random numbers);
 * the others stay (snap_idle). With `near` (a clip frame's or a drag's
 * start: options.pull_max_deg set), part of the way from it to there, the
 * first restart a quarter (MULTI_RESTART_NEAR_FIRST), the others halfway:
 * a frame's job is the nearest good pose to the last one, restarts spread
 * over the whole joint space landed on other branches, and the nearer
 * first restart met stalled frames on their own branch more often
 * (docs/solvers.md, "Restarts in a clip"). */
static void restart_pose(const ikd_skeleton *s, const int *idle, int r, const ikd_quat *near, ikd_quat *local)
{
    unsigned long long x = multi_restart_seed(r);
    for (size_t k = 0; k < s->count; k++) {
        double u[4];
        for (int t = 0; t < 4; t++) u[t] = multi_restart_unit(&x);
        const ikd_limit *l = &s->joints[k].limit;
        ikd_quat d;
        if (l->type == IKD_LIMIT_HINGE) {
            d = ikd_quat_axis_angle(l->local_axis, (l->min_deg + u[0] * (l->max_deg - l->min_deg)) * IKD_DEG2RAD);
        } else {
            ikd_vec3 axis = ikd_vec3_norm_or(ikd_vec3_make(u[0] - 0.5, u[1] - 0.5, u[2] - 0.5), ikd_vec3_make(1, 0, 0));
            d = ikd_limit_project(l, ikd_quat_axis_angle(axis, u[3] * 1.5));
        }
        if (idle[k]) continue;
        local[k] = ikd_quat_norm(ikd_quat_mul(s->joints[k].rest_local, d));
        if (near) { /* (1 - t) near + t there, normalised, the shorter way */
            ikd_quat a = near[k], b = local[k];
            double t = r == 1 ? MULTI_RESTART_NEAR_FIRST : 0.5;
            double sg = (a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w < 0 ? -1 : 1) * t / (1 - t);
            ikd_quat m = ikd_quat_make(a.x + sg * b.x, a.y + sg * b.y, a.z + sg * b.z, a.w + sg * b.w);
            local[k] = ikd__multi_within_limit(s, k, ikd_quat_norm(m));
        }
    }
}

/* options.soften with a free root: the first descent asks for the targets
 * themselves with the limbs' extension penalised (soft_penalty), which
 * places the root; where the goals pull the root different ways its least
 * squares converge slowly, and such a descent that ends unmet hands over
 * here: the root held where it stands, each softened limb eased from its
 * upper joint (the fixed root's rows). Returns 1 when it did. */
static int hand_off_soft(multi_ws *w)
{
    int any = 0;
    for (size_t i = 0; i < w->g; i++) any |= w->want[i] & 16, w->want[i] &= (unsigned char)~16;
    if (!any) return 0;
    ikd__multi_layout_rows(w);
    w->hold_root = 1;
    return 1;
}

/* options.stretch without soften: marks (want bit 8) the limb goals that
 * `pose` leaves unmet (gr: its errors) beyond their limb's reach; returns
 * how many. */
static int mark_stretch(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, const ikd_goal_result *gr)
{
    int marked = 0;
    for (size_t i = 0; i < w->g; i++) {
        long m, u;
        if (gr[i].error <= p->tolerance || !ikd__multi_limb_of(w, p, i, &m, &u)) continue;
        double reach = ikd__multi_limb_reach(p->skeleton, p->goals[i].joint, m);
        if (ikd_vec3_dist(w->tpos[i], pose[u].position) > MULTI_STRETCH_AIM * reach) w->want[i] |= 8, marked++;
    }
    return marked;
}

/* options.stretch: each limb goal aimed short of its target (stretching, or
 * softened) has both bones of its limb scaled alike about the upper joint,
 * by up to p->stretch, toward the target: the limb's joints below move with
 * them (pose positions; the local rotations stay). A goal met where it was
 * aimed is reached when the scaling reaches its target, else it is out of
 * reach. Goals on moved joints get their errors anew; returns 1 when every
 * goal is met. */
static int stretch_limbs(multi_ws *w, const ikd_multi_problem *p, ikd_pose_joint *pose, ikd_goal_result *gr)
{
    const ikd_skeleton *s = p->skeleton;
    /* scratch: moved[x] bit 1 when joint x moved, bit 2 when its goal's
     * status is settled here; tag[x]: 1 below the knee, 2 below the foot */
    unsigned char *moved = w->locked, *tag = w->locked + s->count;
    memset(moved, 0, s->count);
    for (size_t i = 0; i < w->g; i++) {
        long m, u;
        if (!ikd__multi_limb_of(w, p, i, &m, &u) || !((w->want[i] & 8) || p->soften < 1)) continue;
        size_t j = p->goals[i].joint;
        ikd_vec3 pu = pose[u].position, aimed = ikd__multi_limb_target(w, p, pose, i);
        ikd_vec3 ue = ikd_vec3_sub(pose[j].position, pu), ut = ikd_vec3_sub(w->tpos[i], pu);
        double d = ikd_vec3_len(ut), a = ikd_vec3_dist(aimed, pu), ee = ikd_vec3_dot(ue, ue);
        if (!(a > 0) || !(d > a) || !(ee > 0)) continue; /* aimed at the target itself */
        /* the factor that brings the end closest to the target along the limb */
        double k = fmin(fmax(ikd_vec3_dot(ut, ue) / ee, 1), p->stretch);
        int met = gr[i].status == IKD_GOAL_REACHED;
        ikd_vec3 dm = ikd_vec3_scale(ikd_vec3_sub(pose[m].position, pu), k - 1);
        ikd_vec3 de = ikd_vec3_scale(ue, k - 1);
        for (size_t x = (size_t)m; x < s->count; x++) { /* children follow their parents in the joint list */
            long px = s->joints[x].parent;
            tag[x] = x == (size_t)m ? 1 : x == j ? 2 : px >= m ? tag[px] : 0;
            if (!tag[x]) continue;
            pose[x].position = ikd_vec3_add(pose[x].position, tag[x] == 2 ? de : dm);
            moved[x] |= 1;
        }
        gr[i].stretch = k;
        gr[i].error = ikd_vec3_dist(pose[j].position, w->tpos[i]);
        moved[j] |= 2; /* this goal's status is settled here */
        if (!met || d > p->stretch * a * (1 + 1e-12)) /* not met where aimed, or aimed beyond the stretched reach */
            gr[i].status = ikd__multi_unreachable(w, p, i) ? IKD_GOAL_UNREACHABLE : IKD_GOAL_NOT_REACHED;
    }
    int all = 1;
    for (size_t i = 0; i < w->g; i++) {
        size_t j = p->goals[i].joint;
        if ((moved[j] & 3) == 1 && (w->want[i] & 1) && !(p->soften < 1)) { /* moved by another goal's limb */
            gr[i].error = ikd_vec3_dist(pose[j].position, w->tpos[i]);
            if (gr[i].status == IKD_GOAL_REACHED && gr[i].error > p->tolerance) gr[i].status = IKD_GOAL_NOT_REACHED;
        }
        if (gr[i].status != IKD_GOAL_REACHED) all = 0;
    }
    return all;
}

/* The descents leave goals of the highest priority unmet within reach:
 * goals.priority's weighted descents (goal_weights) left them a share of a
 * conflict with the lower ones, or the rest pull held them off (a compromise
 * the pull settles in where the goals' Jacobian is nearly singular: every
 * limb straight). One more descent from the pose (local, *root) asks for
 * them alone (the lower goals' rows empty: w->off), without a pull: its
 * minimal-norm steps are the least move that meets them, the lower goals
 * kept as near as that allows. Its pose replaces the first when it meets
 * every highest goal within reach. Returns the iterations. */
static int polish_top(multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose, ikd_vec3 *root,
                      ikd_goal_result *gr, int budget, int *timed_out)
{
    const ikd_skeleton *s = p->skeleton;
    int top = p->goals[0].priority, unmet = 0;
    for (size_t i = 1; i < w->g; i++) top = p->goals[i].priority > top ? p->goals[i].priority : top;
    ikd__skeleton_fk_some(s, *root, local, pose, w->need, 0);
    ikd__multi_build_rows(w, p, pose, gr, 0);
    for (size_t i = 0; i < w->g; i++) {
        w->off[i] = p->goals[i].priority < top;
        unmet |= !w->off[i] && !multi_met(p, &gr[i]) && !ikd__multi_out_of_reach(w, p, i);
    }
    int it = 0;
    if (unmet && budget > 0) {
        ikd_multi_problem q = *p;
        memcpy(w->pol, local, s->count * sizeof *local);
        /* no pull: the damped least-squares steps are the least move already, and a
         * pull back to the start near the goals took most of each step (MULTI_NEAR_PULL):
         * on a centimetre rig the pinned goals stalled 1e-3 short (tests/browser) */
        q.preferred = w->pol, q.pull_max_deg = 0, q.rest_pull = 0;
        q.has_preferred_root = p->root_free, q.preferred_root = *root;
        ikd__multi_setup_preferred(w, &q);
        ikd_vec3 rt = *root;
        int fresh = 0, met = 1;
        it = descend(w, &q, local, pose, &rt, gr, budget, timed_out, &fresh);
        ikd__skeleton_fk_some(s, rt, w->best, pose, w->need, 0);
        ikd__multi_build_rows(w, p, pose, gr, 0);
        for (size_t i = 0; i < w->g; i++)
            if (!w->off[i] && !ikd__multi_out_of_reach(w, p, i))
                met &= multi_met(p, &gr[i]);
        if (met) memcpy(local, w->best, s->count * sizeof *local), *root = rt;
        else memcpy(local, w->pol, s->count * sizeof *local);
    }
    memset(w->off, 0, w->g);
    return it;
}

/* Layered on an animation (options.preferred): the goals the start pose
 * already meets keep every joint on their paths as it starts (and a free
 * root where it stands), and their rows ask nothing (w->off); the others
 * are solved with the joints no met goal depends on. Returns 0, holding
 * nothing, when no goal or every goal is met at the start, or an unmet
 * goal has no joint of its own. */
static int hold_met(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, ikd_pose_joint *pose,
                    ikd_goal_result *gr)
{
    const ikd_skeleton *s = p->skeleton;
    unsigned char *held = w->locked; /* scratch: [n] */
    int met_any = 0, unmet_any = 0;
    ikd_skeleton_fk(s, p->root, local, pose);
    ikd__multi_mark_far(w, p); /* (build_rows reads it) */
    ikd__multi_build_rows(w, p, pose, gr, 0);
    memset(held, 0, s->count);
    for (size_t i = 0; i < w->g; i++) { /* a met goal's path (setup_paths: the joints that turn) held */
        int met = multi_met(p, &gr[i]);
        w->off[i] = (unsigned char)met;
        met_any |= met, unmet_any |= !met;
        for (int t = 0; met && t < w->gdepth[i]; t++) held[w->gpath[i * w->n + (size_t)t]] = 1;
    }
    for (size_t i = 0; i < w->g && met_any && unmet_any; i++) {
        int own = 0;
        for (int t = 0; !w->off[i] && t < w->gdepth[i]; t++) own |= !held[w->gpath[i * w->n + (size_t)t]];
        if (!w->off[i] && !own) unmet_any = 0; /* a goal only the held joints move */
    }
    if (!met_any || !unmet_any) {
        memset(w->off, 0, w->g);
        return 0;
    }
    for (size_t k = 0; k < s->count; k++)
        if (held[k]) w->dof[k] = 0;
    ikd__multi_layout_columns(w, s, NULL); /* (the range metric's scales move with the columns) */
    w->hold_root = p->root_free;
    ikd__multi_setup_paths(w, p);
    memset(w->locked, 0, w->cols);
    return 1;
}

static int solve_core(const ikd_multi_problem *p, void *work, ikd_quat *local, ikd_pose_joint *pose,
                      ikd_goal_result *gr, ikd_multi_result *res, int hold);

ikd_code ikd_multi_solve(const ikd_multi_problem *p, void *work, size_t work_size, ikd_quat *local,
                         ikd_pose_joint *pose, ikd_goal_result *gr, ikd_multi_result *res, ikd_error *err)
{
    const ikd_skeleton *s = p->skeleton;
    memset(res, 0, sizeof *res);
    ikd_error_clear(err);
    if (!s || !p->goals || p->goal_count < 1 || p->goal_count > s->count)
        return ikd_error_set(err, IKD_E_INVALID, "goals", "not validated (see ikd_multi_validate)");
    if (!work || work_size < ikd_multi_workspace_size(s->count, p->goal_count))
        return ikd_error_set(err, IKD_E_INTERNAL, "", "workspace too small (see ikd_multi_workspace_size)");
    ikd_multi_problem moved;
    if (ikd__multi_root_at_goal(p, &moved)) p = &moved;
    /* layered (options.preferred): first with the met goals' joints held
     * (hold_met); where that meets every goal it is the answer, else the
     * whole skeleton solves with the iterations left */
    if (p->preferred && solve_core(p, work, local, pose, gr, res, 1)) {
        if (res->status != IKD_MULTI_PARTIAL || res->iterations >= p->max_iterations) return IKD_E_OK;
        ikd_multi_problem q = *p;
        int used = res->iterations;
        q.max_iterations = p->max_iterations - used;
        solve_core(&q, work, local, pose, gr, res, 0);
        res->iterations += used;
        return IKD_E_OK;
    }
    /* one goal on a chain of hinges (a robot arm): serial.c's own descent;
     * where that does not meet it, the general one with what is left */
    int used = 0;
    if (ikd__serial_solve(p, local, pose, gr, res, &used)) return IKD_E_OK;
    ikd_multi_problem q = *p;
    q.max_iterations = p->max_iterations - used;
    solve_core(&q, work, local, pose, gr, res, 0);
    res->iterations += used;
    return IKD_E_OK;
}

/* The workspace carved from `work` and set up for p, and the start pose
 * in local (within the limits); with `hold`, hold_met's layered pass:
 * returns 0 when it holds nothing. */
static int start_solve(multi_ws *w, const ikd_multi_problem *p, void *work, ikd_quat *local, ikd_pose_joint *pose,
                       ikd_goal_result *gr, int hold)
{
    const ikd_skeleton *s = p->skeleton;
    ikd__multi_ws_carve(w, work, s->count, p->goal_count);
    ikd__multi_setup_columns(w, s, p->stiffness == IKD_STIFFNESS_RANGE);
    memset(w->locked, 0, w->cols);
    if (p->start) memcpy(local, p->start, s->count * sizeof *local);
    else /* no start: rest, or where a limit excludes it the pull's aim (neutral_local), not the bound nearest rest */
        ikd_skeleton_neutral_pose(s, local);
    for (size_t k = 0; k < s->count; k++) local[k] = ikd__multi_within_limit(s, k, ikd_quat_norm(local[k])); /* the start pose */
    for (size_t k = 0; k < s->count; k++) w->eq[k] = ikd_quat_make(NAN, NAN, NAN, NAN); /* no angles kept yet */
    int ground = 0; /* ground goals' targets are set from the start pose ... */
    for (size_t i = 0; i < p->goal_count; i++) ground |= p->goals[i].has_ground;
    int heading = ground && p->heading; /* ... or p->heading's, when given */
    if (ground) ikd_skeleton_fk(s, p->root, heading ? p->heading : local, pose);
    ikd__multi_setup_targets(w, p, pose);
    if (heading) ikd_skeleton_fk(s, p->root, local, pose);
    ikd__multi_swivels_from_start(w, p, local, pose, !ground); /* (with ground goals pose holds the start) */
    ikd__multi_setup_paths(w, p);
    if (hold && !hold_met(w, p, local, pose, gr)) return 0;
    ikd__multi_snap_idle(w, p, local);
    ikd__multi_drop_idle(w, p);
    ikd__multi_prebend(w, p, local, pose); /* a straight knee that must bend, toward its toes */
    return 1;
}

/* ikd_multi_solve's work on a checked problem; with `hold`, hold_met's
 * layered pass (returns 0 without solving when it holds nothing). */
static int solve_core(const ikd_multi_problem *p, void *work, ikd_quat *local, ikd_pose_joint *pose,
                      ikd_goal_result *gr, ikd_multi_result *res, int hold)
{
    const ikd_skeleton *s = p->skeleton;
    memset(res, 0, sizeof *res);
    multi_ws w;
    ikd_vec3 root = p->root;
    if (!start_solve(&w, p, work, local, pose, gr, hold)) return 0;
    /* A descent from the start pose, then (while reachable goals stay unmet
     * and iterations are left) from poses spread over the limits: a local
     * minimum of one start (an arm's elbow on the wrong side, against its
     * limit) is rarely one of another. The best pose wins. */
    int it = 0, timed_out = 0;
    double keep_score = INFINITY;
    ikd_vec3 keep_root = root;
    int stretching = 0; /* options.stretch: 1 in the descent after limb goals were marked, 2 after it */
    int kept = 0;       /* 1 while pose and gr are the kept pose's */
    int levels = 0; /* goals of more than one priority: polish_top's iterations kept back from the restarts */
    for (size_t i = 1; i < w.g; i++) levels |= p->goals[i].priority != p->goals[0].priority;
    int reserve = levels ? (p->max_iterations < 4 * MULTI_POLISH_ITERATIONS ? p->max_iterations / 4 : MULTI_POLISH_ITERATIONS) : 0;
    int restarts = p->max_iterations / (2 * MULTI_RESTART_ITERATIONS); /* a larger budget: more of them, */
    if (restarts < MULTI_RESTARTS) restarts = MULTI_RESTARTS;              /* half of it at most */
    for (int r = 0; r <= restarts; r++) {
        ikd_vec3 rt = w.hold_root ? keep_root : p->root;
        if (stretching == 1) rt = keep_root, memcpy(local, w.keep, s->count * sizeof *local); /* on from the best */
        else if (r && !(r == 1 && ikd__multi_preaim(&w, p, local, pose)))
            restart_pose(s, w.idle, r, p->pull_max_deg > 0 ? p->start : NULL, local);
        int budget = p->max_iterations - it - (r ? reserve : 0);
        if (budget <= 0) break;
        /* a restart converges fast or not at all; so does a cold solve's
         * first descent when the aimed restart follows (ikd__multi_preaim) */
        if ((r || (restarts && ikd__multi_preaim(&w, p, NULL, NULL))) && stretching != 1 && budget > MULTI_RESTART_ITERATIONS)
            budget = MULTI_RESTART_ITERATIONS;
        int fresh = 0;
        it += descend(&w, p, local, pose, &rt, gr, budget, &timed_out, &fresh);
        double sc = score_best(&w, p, rt, pose, gr, fresh);
        kept = 0; /* pose and gr: this descent's best */
        if (stretching == 1) keep_score = INFINITY; /* the scores before measured other targets */
        /* with the pull bounded (options.pull_max_deg: a clip's frames after the first, an
         * editor's drags) or a preferred pose (layered on an animation) a restart's pose is
         * kept only when it meets every reachable goal: one that merely comes closer is
         * another compromise far from the start, and frames whose goals could not all be met
         * jumped between such poses (docs/solvers.md) */
        int continuous = (p->pull_max_deg > 0 || p->preferred) && r > 0 && stretching != 1;
        if (r == 0 || (sc < keep_score && (!continuous || sc == 0))) { /* the first descent's pose at least */
            keep_score = sc, keep_root = rt, kept = 1;
            memcpy(w.keep, w.best, s->count * sizeof *local);
        }
        if (stretching == 1) stretching = 2;
        /* goals of several priorities that the first descent (every goal
         * weighed alike: where all can be met, priorities change nothing)
         * leaves unmet: weighed by priority from here (goal_weights), on
         * from its pose */
        int reweighed = r == 0 && levels && keep_score > 0 && !timed_out;
        if (reweighed) ikd__multi_goal_weights(&w, p, 1);
        /* after the first descent, limb goals left beyond their limb's reach
         * (counted out of reach or not) are aimed into it; the bones
         * lengthen at the end (stretch_limbs) */
        if (r == 0 && p->stretch > 1 && p->soften >= 1 && !timed_out && mark_stretch(&w, p, pose, gr)) {
            stretching = 1;
            continue;
        }
        if (r == 0 && keep_score > 0 && !timed_out && hand_off_soft(&w)) {
            stretching = 1;
            continue;
        }
        if (reweighed) {
            stretching = 1;
            continue;
        }
        if (keep_score == 0 || timed_out || it >= p->max_iterations) break;
    }
    memcpy(local, w.keep, s->count * sizeof *local);
    root = keep_root;
    if (keep_score > 0 && !timed_out && it < p->max_iterations) {
        int before = it;
        it += polish_top(&w, p, local, pose, &root, gr, p->max_iterations - it, &timed_out);
        kept &= it == before;
    }
    if (!kept) { /* pose and gr are another descent's */
        ikd__skeleton_fk_some(s, root, local, pose, w.need, 0);
        ikd__multi_build_rows(&w, p, pose, gr, 0);
    }
    size_t needed = 0;
    for (size_t k = 0; k < s->count; k++) needed += (size_t)w.need[k];
    if (needed < s->count) ikd__skeleton_fk_some(s, root, local, pose, w.need, 1); /* the joints the iterations did not read */
    int all;
    finish_goals(&w, p, gr, &all);
    for (size_t i = 0; i < w.g; i++) gr[i].stretch = 1;
    if (p->stretch > 1) all = stretch_limbs(&w, p, pose, gr);
    for (size_t i = 0; p->soften < 1 && i < w.g; i++) /* met where softening aims it; the distance to the goal itself */
        if ((w.want[i] & 1) && gr[i].stretch == 1) gr[i].error = ikd_vec3_dist(pose[p->goals[i].joint].position, w.tpos[i]);
    res->iterations = it;
    res->root = root;
    res->status = timed_out && !all ? IKD_MULTI_DEADLINE : all ? IKD_MULTI_REACHED : IKD_MULTI_PARTIAL;
    return 1;
}
