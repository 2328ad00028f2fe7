/* jacobian.c - Jacobian IK: damped least squares (adaptive damping) or transpose; hinge limits saturate the step. */
#include "iter.h"
#include "solvers.h"

#define JAC_MAX_ROWS 6

/* Solve the m x m symmetric positive definite system a x = b (Cholesky);
 * returns -1 when it is not positive definite. */
static int chol_solve(double a[JAC_MAX_ROWS][JAC_MAX_ROWS], int m, const double *b, double *x)
{
    double l[JAC_MAX_ROWS][JAC_MAX_ROWS] = {{0}};
    for (int i = 0; i < m; i++) {
        for (int k = 0; k <= i; k++) {
            double s = a[i][k];
            for (int t = 0; t < k; t++) s -= l[i][t] * l[k][t];
            if (i == k) {
                if (!(s > 0)) return -1;
                l[i][i] = sqrt(s);
            } else {
                l[i][k] = s / l[k][k];
            }
        }
    }
    double y[JAC_MAX_ROWS];
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int t = 0; t < i; t++) s -= l[i][t] * y[t];
        y[i] = s / l[i][i];
    }
    for (int i = m; i-- > 0;) {
        double s = y[i];
        for (int t = i + 1; t < m; t++) s -= l[t][i] * x[t];
        x[i] = s / l[i][i];
    }
    return 0;
}

/* dq = J^T y over the active columns, where (J J^T + lambda^2 I) y = e (DLS)
 * or dq = alpha J^T e with the optimal alpha (transpose). */
static void jac_solve(const ikd_ws *ws, int ncols, int m, const unsigned char *active, const double *e, double lambda,
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
        if (chol_solve(a, m, e, y) != 0)
            for (int r = 0; r < m; r++) y[r] = 0;
    }
    for (int c = 0; c < ncols; c++) {
        double s = 0;
        if (active[c])
            for (int r = 0; r < m; r++) s += J[c * 6 + r] * y[r];
        dq[c] = s;
    }
}

void ikd_jacobian_run(const ikd_problem *p, ikd_ws *ws, ikd_pose_joint *pose, ikd_result *res)
{
    const ikd_joint *j = p->joints;
    size_t n = ws->n;
    ikd_vec3 root = j[0].position, target = p->target;
    double tol = p->options.tolerance, L = ws->total;
    double rot_tol = p->options.rotation_tolerance_deg * IKD_DEG2RAD;
    int orient = p->has_target_rotation;
    int m = orient ? 6 : 3;
    int transpose = p->options.jacobian_method == IKD_JACOBIAN_TRANSPOSE;
    double max_step = p->options.max_step_deg * IKD_DEG2RAD;
    double dist = ikd_vec3_dist(root, target);

    if (!ws->constrained && !orient && dist >= L) {
        ikd_ws_straighten(ws, root, target, pose);
        ikd_ws_finish(ws, p, IKD_SOLVER_JACOBIAN, 1, pose, res);
        return;
    }
    /* With an orientation goal the last bone should point where the goal
     * rotation carries it (the effector rides rigidly on the last bone). */
    ikd_vec3 want_last = ikd_vec3_make(0, 0, 0);
    if (orient) {
        ikd_quat delta = ikd_quat_mul(p->target_rotation, ikd_quat_conj(j[n - 1].rotation));
        want_last = ikd_quat_rotate(delta, ws->d0[n - 2]);
    }
    double wrot = p->options.rotation_weight * L;

    ikd_ws_unstraighten(ws, p, pose);
    ikd_ws_enforce(ws, j, pose);

    /* columns: one per hinge, three (world x, y, z) per other joint */
    int ncols = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        ws->dof[i] = j[i].constraint.type == IKD_CONSTRAINT_HINGE ? 1 : 3;
        ncols += ws->dof[i];
    }
    unsigned char *active = ws->active;

    double err = ikd_vec3_dist(pose[n - 1].position, target), rerr = 0;
    double best = INFINITY;
    int it = 0, stall = 0, timed_out = 0;
    for (;;) {
        ikd_vec3 eff = pose[n - 1].position;
        ikd_vec3 dp = ikd_vec3_sub(target, eff);
        err = ikd_vec3_len(dp);
        ikd_vec3 last = ikd_ws_bone_dir(ws, pose, n - 2);
        ikd_vec3 rv = ikd_vec3_make(0, 0, 0);
        if (orient) {
            ikd_vec3 ax = ikd_vec3_cross(last, want_last);
            rerr = atan2(ikd_vec3_len(ax), ikd_vec3_dot(last, want_last));
            rv = ikd_vec3_scale(ikd_vec3_norm_or(ax, ikd_vec3_any_perp(last)), rerr);
        }
        if (err <= tol && (!orient || rerr <= rot_tol)) break;
        if (it >= p->options.max_iterations) break;
        if ((timed_out = ikd_ws_out_of_time(p))) break;
        double score = err + (orient ? wrot * rerr : 0);
        if (score < best - 1e-12 * L) {
            best = score;
            stall = 0;
        } else if (++stall >= 8) {
            break; /* no progress for a while: held by limits or reach */
        }
        it++;

        /* task vector, clamped so one step never aims past a fraction of the chain */
        double e[JAC_MAX_ROWS] = {dp.x, dp.y, dp.z, wrot * rv.x, wrot * rv.y, wrot * rv.z};
        double emag = 0;
        for (int r = 0; r < m; r++) emag += e[r] * e[r];
        emag = sqrt(emag);
        double cap = 0.5 * L;
        if (emag > cap)
            for (int r = 0; r < m; r++) e[r] *= cap / emag;

        /* bone directions, hinge axes and angles at the current pose, once */
        for (size_t i = 0; i + 1 < n; i++) {
            ws->dir[i] = ikd_ws_bone_dir(ws, pose, i);
            if (ws->dof[i] != 1) continue;
            size_t parent = i ? i - 1 : 0;
            ikd_limit_frame f = ikd_constraint_frame_of(&j[i].constraint, i, ws->d0[parent], ws->dir[parent]);
            ws->axis[i] = ikd_constraint_axis(&j[i].constraint, f);
            ws->theta[i] = ikd_constraint_hinge_angle(&j[i].constraint, f, ws->dir[i]);
        }

        /* Jacobian at the current pose */
        int c = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            ikd_vec3 arm = ikd_vec3_sub(eff, pose[i].position);
            ikd_vec3 axes[3];
            int k = ws->dof[i];
            if (k == 1) {
                axes[0] = ws->axis[i];
            } else {
                axes[0] = ikd_vec3_make(1, 0, 0);
                axes[1] = ikd_vec3_make(0, 1, 0);
                axes[2] = ikd_vec3_make(0, 0, 1);
            }
            for (int a = 0; a < k; a++, c++) {
                ikd_vec3 v = ikd_vec3_cross(axes[a], arm);
                double *col = &ws->jac[c * 6];
                col[0] = v.x;
                col[1] = v.y;
                col[2] = v.z;
                if (orient) {
                    ikd_vec3 w = ikd_vec3_scale(ikd_vec3_reject(axes[a], last), wrot);
                    col[3] = w.x;
                    col[4] = w.y;
                    col[5] = w.z;
                }
                active[c] = 1;
            }
        }
        double lambda = transpose ? 0 : p->options.damping * fmin(emag, cap) + 1e-12 * L;
        jac_solve(ws, ncols, m, active, e, lambda, transpose, ws->dq);

        /* hinge limits: a hinge whose step would cross a limit is stopped at
         * the limit and taken out; the others are solved again for the rest */
        for (int pass = 0; pass < 4; pass++) {
            int clamped = 0;
            double rest[JAC_MAX_ROWS];
            for (int r = 0; r < m; r++) rest[r] = e[r];
            c = 0;
            for (size_t i = 0; i + 1 < n; i++) {
                if (ws->dof[i] != 1) {
                    c += 3;
                    continue;
                }
                if (active[c]) {
                    const ikd_constraint *hc = &j[i].constraint;
                    double th = ws->theta[i];
                    double lo = hc->min_deg * IKD_DEG2RAD, hi = hc->max_deg * IKD_DEG2RAD;
                    double nt = th + ws->dq[c];
                    if (nt < lo || nt > hi) {
                        double fixed = (nt < lo ? lo : hi) - th;
                        if ((nt < lo && th < lo) || (nt > hi && th > hi)) fixed = 0; /* already outside: do not push further */
                        ws->dq[c] = fixed;
                        active[c] = 0;
                        for (int r = 0; r < m; r++) rest[r] -= ws->jac[c * 6 + r] * fixed;
                        clamped = 1;
                    }
                }
                c++;
            }
            if (!clamped) break;
            /* re-solve the free columns for what the clamped ones could not do */
            double *tmp = ws->tmp;
            jac_solve(ws, ncols, m, active, rest, lambda, transpose, tmp);
            for (int cc = 0; cc < ncols; cc++)
                if (active[cc]) ws->dq[cc] = tmp[cc];
        }

        /* step cap: no joint turns more than max_step this iteration */
        double worst = 0;
        c = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            double s = 0;
            for (int a = 0; a < ws->dof[i]; a++) s += ws->dq[c + a] * ws->dq[c + a];
            s = sqrt(s);
            if (s > worst) worst = s;
            c += ws->dof[i];
        }
        double scale = worst > max_step ? max_step / worst : 1.0;

        /* apply root to effector: joint i's world-axis rotation composes after its parents' */
        ikd_quat acc = ikd_quat_identity();
        c = 0;
        for (size_t i = 0; i + 1 < n; i++) {
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
        for (size_t i = 0; i + 1 < n; i++) pose[i + 1].position = ikd_vec3_mad(pose[i].position, ws->dir[i], ws->len[i]);
        ikd_ws_enforce(ws, j, pose);
    }
    ikd_ws_finish_timed(ws, p, IKD_SOLVER_JACOBIAN, it, timed_out, pose, res);
    if (orient) {
        res->rotation_error_deg = rerr * IKD_RAD2DEG;
        if (res->reached && rerr > rot_tol) {
            res->reached = 0;
            res->status = timed_out ? IKD_STATUS_DEADLINE : IKD_STATUS_MAX_ITERATIONS;
        }
    }
}
