/* jacobian.c - Jacobian IK: damped least squares (adaptive damping) or transpose; hinge limits saturate the step. */
#include "iter.h"
#include "solvers.h"
#include "spd.h"

#define JAC_MAX_ROWS 6

/* dq = J^T y over the active columns, where (J J^T + lambda^2 I) y = e (DLS)
 * or dq = alpha J^T e with the optimal alpha (transpose). */
static void jac_solve(const ikd__ws *ws, int ncols, int m, const unsigned char *active, const double *e, double lambda,
                      int transpose, double *dq)
{
    const double *J = ws->jac;
    double y[JAC_MAX_ROWS] = {0};
    if (transpose) {
        double jte[JAC_MAX_ROWS] = {0}; /* J J^T e */
        for (int c = 0; c < ncols; c++) {
            if (!active[c]) continue;
            double s = 0;
            for (int r = 0; r < m; r++) s += J[c * 6 + r] * e[r];
            for (int r = 0; r < m; r++) jte[r] += J[c * 6 + r] * s;
        }
        double num = 0, den = 0;
        for (int r = 0; r < m; r++) {
            num += e[r] * jte[r];
            den += jte[r] * jte[r];
        }
        double alpha = den > 0 ? num / den : 0;
        for (int r = 0; r < m; r++) y[r] = alpha * e[r];
    } else {
        double a[JAC_MAX_ROWS][JAC_MAX_ROWS] = {{0}};
        for (int c = 0; c < ncols; c++) {
            if (!active[c]) continue;
            const double *col = &J[c * 6];
            for (int r = 0; r < m; r++)
                for (int k = 0; k <= r; k++) a[r][k] += col[r] * col[k];
        }
        for (int r = 0; r < m; r++) {
            a[r][r] += lambda * lambda;
            for (int k = 0; k < r; k++) a[k][r] = a[r][k];
        }
        if (ikd__spd_solve(&a[0][0], m, JAC_MAX_ROWS, e, y) != 0)
            for (int r = 0; r < m; r++) y[r] = 0;
    }
    for (int c = 0; c < ncols; c++) {
        double s = 0;
        if (active[c])
            for (int r = 0; r < m; r++) s += J[c * 6 + r] * y[r];
        dq[c] = s;
    }
}

/* One solve's settings and state, shared by the phases of an iteration. */
typedef struct jac_state {
    const ikd_problem *p;
    ikd__ws *ws;
    size_t n;
    int m;             /* task rows: 3 (position) or 6 (with orientation) */
    int orient;        /* a target rotation is asked for */
    int transpose;     /* Jacobian transpose instead of DLS */
    int ncols;         /* one column per hinge, three per other joint */
    double L;          /* chain length */
    double wrot;       /* weight of one radian of orientation error, in lengths */
    double max_step;   /* radians a joint may turn in one iteration */
    ikd_vec3 want_last; /* with orientation: the direction the last bone should take */
} jac_state;

static void jac_init(jac_state *st, const ikd_problem *p, ikd__ws *ws)
{
    const ikd_joint *j = p->joints;
    size_t n = ws->n;
    *st = (jac_state){p, ws, n, p->has_target_rotation ? 6 : 3, p->has_target_rotation,
                      p->options.jacobian_method == IKD_JACOBIAN_TRANSPOSE, 0, ws->total,
                      p->options.rotation_weight * ws->total, p->options.max_step_deg * IKD_DEG2RAD,
                      ikd_vec3_make(0, 0, 0)};
    /* With an orientation goal the last bone should point where the goal
     * rotation carries it (the effector rides rigidly on the last bone). */
    if (st->orient) {
        ikd_quat delta = ikd_quat_mul(p->target_rotation, ikd_quat_conj(j[n - 1].rotation));
        st->want_last = ikd_quat_rotate(delta, ws->d0[n - 2]);
    }
    for (size_t i = 0; i + 1 < n; i++) {
        ws->dof[i] = j[i].constraint.type == IKD_CONSTRAINT_HINGE ? 1 : 3;
        st->ncols += ws->dof[i];
    }
}

/* The orientation error of the last bone `last`: its angle (radians, the
 * return value) and the rotation vector that would remove it. */
static double jac_rotation_error(const jac_state *st, ikd_vec3 last, ikd_vec3 *rv)
{
    ikd_vec3 ax = ikd_vec3_cross(last, st->want_last);
    double rerr = atan2(ikd_vec3_len(ax), ikd_vec3_dot(last, st->want_last));
    *rv = ikd_vec3_scale(ikd_vec3_norm_or(ax, ikd_vec3_any_perp(last)), rerr);
    return rerr;
}

/* The task vector, clamped so that one step never aims past half the chain;
 * returns its length before clamping (capped at that half). */
static double jac_task(const jac_state *st, ikd_vec3 dp, ikd_vec3 rv, double e[JAC_MAX_ROWS])
{
    double v[JAC_MAX_ROWS] = {dp.x, dp.y, dp.z, st->wrot * rv.x, st->wrot * rv.y, st->wrot * rv.z};
    double emag = 0, cap = 0.5 * st->L;
    for (int r = 0; r < st->m; r++) emag += v[r] * v[r];
    emag = sqrt(emag);
    for (int r = 0; r < JAC_MAX_ROWS; r++) e[r] = emag > cap ? v[r] * cap / emag : v[r];
    return fmin(emag, cap);
}

/* Bone directions, hinge axes and hinge angles at the current pose, and the
 * Jacobian's columns (every one active). */
static void jac_build(const jac_state *st, const ikd_pose_joint *pose, ikd_vec3 last)
{
    ikd__ws *ws = st->ws;
    const ikd_joint *j = st->p->joints;
    ikd_vec3 eff = pose[st->n - 1].position;
    for (size_t i = 0; i + 1 < st->n; i++) {
        ws->dir[i] = ikd__ws_bone_dir(ws, pose, i);
        if (ws->dof[i] != 1) continue;
        ikd_limit_frame f = ikd__ws_frame_at(ws, j, i, ws->dir[i ? i - 1 : 0]);
        ws->axis[i] = ikd_constraint_axis(&j[i].constraint, f);
        ws->theta[i] = ikd_constraint_hinge_angle(&j[i].constraint, f, ws->dir[i]);
    }
    static const ikd_vec3 world[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int c = 0;
    for (size_t i = 0; i + 1 < st->n; i++) {
        ikd_vec3 arm = ikd_vec3_sub(eff, pose[i].position);
        const ikd_vec3 *axes = ws->dof[i] == 1 ? &ws->axis[i] : world;
        for (int a = 0; a < ws->dof[i]; a++, c++) {
            ikd_vec3 v = ikd_vec3_cross(axes[a], arm);
            double *col = &ws->jac[c * 6];
            col[0] = v.x;
            col[1] = v.y;
            col[2] = v.z;
            if (st->orient) {
                ikd_vec3 w = ikd_vec3_scale(ikd_vec3_reject(axes[a], last), st->wrot);
                col[3] = w.x;
                col[4] = w.y;
                col[5] = w.z;
            }
            ws->active[c] = 1;
        }
    }
}

/* Hinge limits: a hinge whose step would cross a limit is stopped at the
 * limit and taken out, and the others are solved again for the rest (up to
 * four rounds). */
static void jac_limit_hinges(const jac_state *st, const double *e, double lambda)
{
    ikd__ws *ws = st->ws;
    const ikd_joint *j = st->p->joints;
    for (int pass = 0; pass < 4; pass++) {
        int clamped = 0, c = 0;
        double rest[JAC_MAX_ROWS];
        for (int r = 0; r < st->m; r++) rest[r] = e[r];
        for (size_t i = 0; i + 1 < st->n; c += ws->dof[i], i++) {
            if (ws->dof[i] != 1 || !ws->active[c]) continue;
            const ikd_constraint *hc = &j[i].constraint;
            double th = ws->theta[i], nt = th + ws->dq[c];
            double lo = hc->min_deg * IKD_DEG2RAD, hi = hc->max_deg * IKD_DEG2RAD;
            if (nt >= lo && nt <= hi) continue;
            double fixed = (nt < lo ? lo : hi) - th;
            if ((nt < lo && th < lo) || (nt > hi && th > hi)) fixed = 0; /* already outside: do not push further */
            ws->dq[c] = fixed;
            ws->active[c] = 0;
            for (int r = 0; r < st->m; r++) rest[r] -= ws->jac[c * 6 + r] * fixed;
            clamped = 1;
        }
        if (!clamped) break;
        /* re-solve the free columns for what the clamped ones could not do */
        jac_solve(ws, st->ncols, st->m, ws->active, rest, lambda, st->transpose, ws->tmp);
        for (int cc = 0; cc < st->ncols; cc++)
            if (ws->active[cc]) ws->dq[cc] = ws->tmp[cc];
    }
}

/* Apply the step, scaled so that no joint turns more than max_step, root to
 * effector (joint i's world-axis rotation composes after its parents'), then
 * put the bones back within their limits. */
static void jac_apply(const jac_state *st, ikd_pose_joint *pose)
{
    ikd__ws *ws = st->ws;
    double worst = 0;
    for (size_t i = 0, c = 0; i + 1 < st->n; c += (size_t)ws->dof[i], i++) {
        double s = 0;
        for (int a = 0; a < ws->dof[i]; a++) s += ws->dq[c + (size_t)a] * ws->dq[c + (size_t)a];
        worst = fmax(worst, sqrt(s));
    }
    double scale = worst > st->max_step ? st->max_step / worst : 1.0;
    ikd_quat acc = ikd_quat_identity();
    for (size_t i = 0, c = 0; i + 1 < st->n; i++) {
        ikd_quat r;
        if (ws->dof[i] == 1) {
            r = ikd_quat_axis_angle(ws->axis[i], ws->dq[c] * scale);
            c += 1;
        } else {
            ikd_vec3 v = ikd_vec3_make(ws->dq[c] * scale, ws->dq[c + 1] * scale, ws->dq[c + 2] * scale);
            double a = ikd_vec3_len(v);
            r = a > 0 ? ikd_quat_axis_angle(ikd_vec3_scale(v, 1.0 / a), a) : ikd_quat_identity();
            c += 3;
        }
        /* r is about a world axis at the current pose; the subtree of i
         * turns by r first, then by every parent's: bone i by r0 r1 .. ri */
        acc = ikd_quat_norm(ikd_quat_mul(acc, r));
        ws->dir[i] = ikd_quat_rotate(acc, ws->dir[i]);
    }
    for (size_t i = 0; i + 1 < st->n; i++) pose[i + 1].position = ikd_vec3_mad(pose[i].position, ws->dir[i], ws->len[i]);
    ikd__ws_enforce(ws, st->p->joints, pose);
}

void ikd__jacobian_run(const ikd_problem *p, ikd__ws *ws, ikd_pose_joint *pose, ikd_result *res)
{
    size_t n = ws->n;
    ikd_vec3 root = p->joints[0].position, target = p->target;
    double tol = p->options.tolerance, rot_tol = p->options.rotation_tolerance_deg * IKD_DEG2RAD;
    jac_state st;
    jac_init(&st, p, ws);
    if (!ws->constrained && !st.orient && ikd_vec3_dist(root, target) >= st.L) {
        ikd__ws_straighten(ws, root, target, pose);
        ikd__ws_finish(ws, p, IKD_SOLVER_JACOBIAN, 1, pose, res);
        return;
    }
    ikd__ws_unstraighten(ws, p, pose);
    ikd__ws_enforce(ws, p->joints, pose);
    double rerr = 0, best = INFINITY;
    int it = 0, stall = 0, timed_out = 0;
    for (;;) {
        ikd_vec3 dp = ikd_vec3_sub(target, pose[n - 1].position);
        double err = ikd_vec3_len(dp);
        ikd_vec3 last = ikd__ws_bone_dir(ws, pose, n - 2), rv = ikd_vec3_make(0, 0, 0);
        if (st.orient) rerr = jac_rotation_error(&st, last, &rv);
        if (err <= tol && (!st.orient || rerr <= rot_tol)) break;
        if (it >= p->options.max_iterations) break;
        if ((timed_out = ikd__ws_out_of_time(p))) break;
        double score = err + (st.orient ? st.wrot * rerr : 0);
        if (score < best - 1e-12 * st.L) {
            best = score;
            stall = 0;
        } else if (++stall >= 8) {
            break; /* no progress for a while: held by limits or reach */
        }
        it++;
        double e[JAC_MAX_ROWS];
        double emag = jac_task(&st, dp, rv, e);
        jac_build(&st, pose, last);
        double lambda = st.transpose ? 0 : p->options.damping * emag + 1e-12 * st.L;
        jac_solve(ws, st.ncols, st.m, ws->active, e, lambda, st.transpose, ws->dq);
        jac_limit_hinges(&st, e, lambda);
        jac_apply(&st, pose);
    }
    ikd__ws_finish_timed(ws, p, IKD_SOLVER_JACOBIAN, it, timed_out, pose, res);
    if (st.orient) {
        res->rotation_error_deg = rerr * IKD_RAD2DEG;
        if (res->reached && rerr > rot_tol) {
            res->reached = 0;
            res->status = timed_out ? IKD_STATUS_DEADLINE : IKD_STATUS_MAX_ITERATIONS;
        }
    }
}
