/* serial.c - one goal on a chain of hinges (a robot arm): bounded damped least squares over the hinge angles, restarts over the ranges, the freedom left settled toward rest. */
#include "serial.h"

#include <math.h>
#include <string.h>

#include "limit.h"
#include "multi.h"

/* The method, in a paragraph. The unknowns are the path's hinge angles,
 * each bounded by its range (a full circle wraps); the fixed joints
 * between hinges are folded into one offset and turn each (setup). A step
 * is the general solver's damped least squares, in these angles: it
 * minimises |J d - e|^2 + lambda^2 |d|^2, lambda = options.damping x
 * min(error, size), over the hinges not held (one at a bound that the
 * gradient pushes out), a hinge the step would carry past a bound stopped
 * there and the rest solved again (active set, up to four rounds), the
 * step at most MULTI_MAX_STEP (MULTI_FAR_STEP far off) radians a hinge.
 * The rows are the general solver's: position in skeleton units, rotation
 * vector times MULTI_ROTATION_WEIGHT x size. A descent that stalls
 * (MULTI_PROGRESS over SERIAL_STALL iterations) is followed by one from
 * angles spread uniformly over the ranges (MULTI_RESTART_ITERATIONS at
 * most each), within half of max_iterations; a hinge whose start lies
 * outside its range starts at its middle (its nearest bound is where a
 * limb lies straight: the Panda's joint4, [-176, -4] degrees, rests at 0,
 * and from its bound 38% of first descents stalled, 11% from the middle),
 * and so does one whose rest lies within SERIAL_NEAR_BOUND of a bound when
 * no start pose is given (a given start is where the caller wants to stay
 * near).
 * Once met, where hinges outnumber rows (a 7R arm under a 6-DoF goal, any
 * arm under a position goal) the settle moves the angles toward rest (a
 * hinge whose range excludes rest: toward its middle, m, as the general
 * solver's pull): steps along the goal's null space toward z = m - theta, d = z + J^T (J
 * J^T)^-1 (e - J z) with the same bounds, scaled by Barzilai and Borwein's
 * estimate of the curvature along the way (at most SERIAL_BB_MAX), each
 * followed by Gauss-Newton back onto the goal and kept when it lowers
 * |theta|^2, until a step turns no hinge MULTI_SETTLED: the pose ends
 * where the goal's freedom has no part pointing to rest (test_arms). Why
 * a path of its own: the general solver spends about 1 us an iteration on
 * a 6R arm's eleven joints (frames, rows and locks over every joint, the
 * Woodbury rounds); this one about 0.6 us, and its settle ends at
 * the nearest pose to rest, where the general one's pull, mixed with the
 * goals' rows, stopped up to 2 rad short (docs/solvers.md, "Robot arms"). */

#define SERIAL_HINGES 16  /* hinges on the goal's path at most (a 7R arm has 7) */
#define SERIAL_PATH 64    /* joints on the path at most, fixed ones included */
#define SERIAL_TIGHT 1e-3 /* a met descent goes on to this share of the tolerances: where Gauss-Newton
                             converges quadratically that is one more step, and a pose fed back is met
                             with room rather than on the edge */
#define SERIAL_STALL 3 /* a descent stalls after this many iterations without MULTI_PROGRESS (the
                         general solver waits MULTI_STALL, 8): at 3, 8 and 6 iterations fewer on
                         average over the arm family's 6R and 7R sets (34.7 -> 27.9, 43.8 -> 36.2)
                         and 1.3 and 1.9 on the UR5 and Panda, goals met as often or more */
#define SERIAL_NEAR_BOUND 0.1 /* radians: without a start pose, a hinge whose rest lies this near a bound starts
                                 at its range's middle, as one outside its range does (Baxter's elbow e1 rests
                                 0.05 rad from its bound, straight: 31.3 -> 21.3 iterations on average, the
                                 Panda 24.7 -> 23.9; docs/solvers.md, "Robot arms") */
#define SERIAL_BB_MAX 2 /* the settle's step at most this times the pull's: Barzilai-Borwein estimates
                          of 1.3-1.5 where the Panda's settle crept at 0.3 a step; uncapped, a
                          6R arm's settle under a position goal swung and ended 0.06 rad off */
#define SERIAL_SETTLE_ITERATIONS 120 /* the settle's iterations at most: MULTI_SETTLE_ITERATIONS' 60 pull steps
                                       counted as the general solver counts them, and each pull step here is
                                       followed by about two Gauss-Newton iterations back onto the goal; at
                                       60, 3 of 300 7R arms of the family ended their settle still moving */

typedef struct serial {
    const ikd_multi_problem *p;
    const ikd_goal *g;
    int depth, n, m;                  /* joints on the path (root first), hinges, rows (3 or 6) */
    size_t path[SERIAL_PATH];
    int hinge[SERIAL_PATH];           /* the path joint's hinge, -1 when it is fixed */
    double lo[SERIAL_HINGES], hi[SERIAL_HINGES]; /* ranges, radians */
    double mid[SERIAL_HINGES];        /* where the settle takes each hinge: 0 (rest), or the middle of a
                                         range that excludes rest (as neutral_local) */
    int wrap[SERIAL_HINGES];          /* 1: a full circle */
    double wr;                        /* a rotation row's weight: MULTI_ROTATION_WEIGHT x size */
    double tol, rtol;                 /* met: skeleton units, radians */
    /* the path folded between its hinges: hinge h's joint sits at off[h] in
     * the frame after hinge h - 1's turn (the root's before hinge 0), its
     * rest frame turned by rot[h] from there, turning about axis[h] (its
     * rest frame); the goal's joint at off[n], rot[n] after the last turn */
    ikd_vec3 off[SERIAL_HINGES + 1], axis[SERIAL_HINGES];
    ikd_quat rot[SERIAL_HINGES + 1];
} serial;

/* The goal's rows, their Jacobian and errors at angles th. */
typedef struct serial_at {
    double th[SERIAL_HINGES];
    double e[6];
    double J[6][SERIAL_HINGES];
    double cost, perr, rerr;          /* |e|^2; position error, rotation error (radians) */
} serial_at;

/* 1 when p is a problem for this path, with sv set up. */
static int serial_setup(serial *sv, const ikd_multi_problem *p)
{
    const ikd_skeleton *s = p->skeleton;
    if (p->goal_count != 1 || p->root_free || p->preferred || p->pull_max_deg > 0 ||
        p->stiffness != IKD_STIFFNESS_EQUAL || p->soften < 1 || p->stretch > 1)
        return 0;
    const ikd_goal *g = &p->goals[0];
    if (g->has_aim || g->has_ground || g->has_pole || !(g->has_position || g->has_rotation)) return 0;
    int depth = 0;
    for (long k = (long)g->joint; k >= 0; k = s->joints[k].parent) {
        if (depth == SERIAL_PATH) return 0;
        sv->path[depth++] = (size_t)k;
    }
    for (int t = 0; t < depth / 2; t++) {
        size_t x = sv->path[t];
        sv->path[t] = sv->path[depth - 1 - t], sv->path[depth - 1 - t] = x;
    }
    int n = 0;
    double reach = 0;
    ikd_vec3 at = ikd_vec3_make(0, 0, 0); /* the joint in the frame after the last hinge's turn */
    ikd_quat q = ikd_quat_identity();
    for (int t = 0; t < depth; t++) {
        const ikd_skeleton_joint *j = &s->joints[sv->path[t]];
        if (t) reach += ikd_vec3_len(j->offset), at = ikd_vec3_add(at, ikd_quat_rotate(q, j->offset));
        q = ikd_quat_norm(ikd_quat_mul(q, j->rest_local));
        sv->hinge[t] = -1;
        if (j->limit.type == IKD_LIMIT_FIXED) continue;
        if (j->limit.type != IKD_LIMIT_HINGE || n == SERIAL_HINGES) return 0;
        sv->lo[n] = j->limit.min_deg * IKD_DEG2RAD, sv->hi[n] = j->limit.max_deg * IKD_DEG2RAD;
        sv->wrap[n] = j->limit.max_deg - j->limit.min_deg >= 360 - 1e-9;
        sv->mid[n] = sv->wrap[n] ? 0 : ikd__limit_neutral_angle(j->limit.min_deg, j->limit.max_deg);
        sv->off[n] = at, sv->rot[n] = q, sv->axis[n] = j->limit.local_axis;
        at = ikd_vec3_make(0, 0, 0), q = ikd_quat_identity();
        sv->hinge[t] = n++;
    }
    sv->off[n] = at, sv->rot[n] = q;
    /* a goal beyond the bones' reach is the general solver's (its rows point the arm at it) */
    if (!n || (g->has_position && ikd_vec3_dist(g->position, p->root) > reach + p->tolerance)) return 0;
    sv->p = p, sv->g = g, sv->depth = depth, sv->n = n;
    sv->m = (g->has_position ? 3 : 0) + (g->has_rotation ? 3 : 0);
    sv->wr = MULTI_ROTATION_WEIGHT * s->size;
    sv->tol = p->tolerance, sv->rtol = p->rotation_tolerance_deg * IKD_DEG2RAD;
    return 1;
}

/* The path's forward kinematics at a->th; a's rows, errors and cost, and
 * its Jacobian (d position and weighted d rotation per radian). */
static void serial_eval(const serial *sv, serial_at *a)
{
    ikd_vec3 P = sv->p->root, ax[SERIAL_HINGES], at[SERIAL_HINGES];
    ikd_quat W = ikd_quat_identity();
    for (int h = 0; h < sv->n; h++) {
        P = ikd_vec3_add(P, ikd_quat_rotate(W, sv->off[h]));
        W = ikd_quat_mul(ikd_quat_mul(W, sv->rot[h]), ikd_quat_axis_angle(sv->axis[h], a->th[h]));
        ax[h] = ikd_quat_rotate(W, sv->axis[h]), at[h] = P;
    }
    P = ikd_vec3_add(P, ikd_quat_rotate(W, sv->off[sv->n]));
    W = ikd_quat_mul(W, sv->rot[sv->n]);
    W = ikd_quat_norm(W);
    int r = 0;
    a->perr = a->rerr = 0;
    if (sv->g->has_position) {
        ikd_vec3 d = ikd_vec3_sub(sv->g->position, P);
        a->e[0] = d.x, a->e[1] = d.y, a->e[2] = d.z, a->perr = ikd_vec3_len(d);
        for (int h = 0; h < sv->n; h++) {
            ikd_vec3 c = ikd_vec3_cross(ax[h], ikd_vec3_sub(P, at[h]));
            a->J[0][h] = c.x, a->J[1][h] = c.y, a->J[2][h] = c.z;
        }
        r = 3;
    }
    if (sv->g->has_rotation) {
        ikd_vec3 v = ikd__multi_rot_vec(ikd_quat_mul(sv->g->rotation, ikd_quat_conj(W)));
        a->e[r] = sv->wr * v.x, a->e[r + 1] = sv->wr * v.y, a->e[r + 2] = sv->wr * v.z, a->rerr = ikd_vec3_len(v);
        for (int h = 0; h < sv->n; h++)
            a->J[r][h] = sv->wr * ax[h].x, a->J[r + 1][h] = sv->wr * ax[h].y, a->J[r + 2][h] = sv->wr * ax[h].z;
    }
    a->cost = 0;
    for (int i = 0; i < sv->m; i++) a->cost += a->e[i] * a->e[i];
}

static int serial_met(const serial *sv, const serial_at *a, double share)
{
    return a->perr <= sv->tol * share && a->rerr <= sv->rtol * share;
}

/* v onto [-pi, pi) (libm's remainder() took 6% of a 6R arm's solve). */
static double serial_wrap(double v)
{
    return v - 2 * IKD_PI * floor((v + IKD_PI) / (2 * IKD_PI));
}

/* Hinge k's angle v put into its range (a full circle: onto [-pi, pi)). */
static double serial_clamp(const serial *sv, int k, double v)
{
    if (sv->wrap[k]) return serial_wrap(v);
    return v < sv->lo[k] ? sv->lo[k] : v > sv->hi[k] ? sv->hi[k] : v;
}

/* 1 when hinge k sits at a bound and v (a wanted change) points out of its range. */
static int serial_held(const serial *sv, const serial_at *a, int k, double v)
{
    if (sv->wrap[k]) return 0;
    return (v < 0 && a->th[k] <= sv->lo[k]) || (v > 0 && a->th[k] >= sv->hi[k]);
}

/* Solves (a) x = b for the n x n symmetric positive definite a (row-major,
 * lower triangle read and overwritten by L of a = L D L^T, L unit lower),
 * n <= SERIAL_HINGES; D's reciprocals kept (spd.c's Cholesky takes a
 * square root and a division a row: here every iteration factors one, and
 * those were a seventh of a 7R arm's solve). Returns 0, or -1 when a is
 * not positive definite. */
static int serial_chol(double *a, int n, const double *b, double *x)
{
    double inv[SERIAL_HINGES];
    for (int i = 0; i < n; i++) {
        double *ai = a + i * n, ld[SERIAL_HINGES]; /* ld[t]: L[i][t] D[t] */
        for (int k = 0; k < i; k++) {
            const double *ak = a + k * n;
            double v = ai[k];
            for (int t = 0; t < k; t++) v -= ld[t] * ak[t];
            ld[k] = v, ai[k] = v * inv[k];
        }
        double v = ai[i];
        for (int t = 0; t < i; t++) v -= ld[t] * ai[t];
        if (!(v > 0)) return -1;
        inv[i] = 1 / v;
    }
    for (int i = 0; i < n; i++) { /* L y = b */
        double v = b[i];
        for (int t = 0; t < i; t++) v -= a[i * n + t] * x[t];
        x[i] = v;
    }
    for (int i = n; i-- > 0;) { /* D L^T x = y */
        double v = x[i] * inv[i];
        for (int t = i + 1; t < n; t++) v -= a[t * n + i] * x[t];
        x[i] = v;
    }
    return 0;
}

/* a (m x m, lower triangle) = J J^T over the hinges fr[0..nf) plus c on the diagonal. */
static void serial_rows_product(const serial_at *x, int m, const int *fr, int nf, double c, double *a)
{
    for (int r = 0; r < m; r++)
        for (int q = 0; q <= r; q++) {
            double v = r == q ? c : 0;
            for (int i = 0; i < nf; i++) v += x->J[r][fr[i]] * x->J[q][fr[i]];
            a[r * m + q] = v;
        }
}

/* The damped step d minimising |J d - e|^2 + c |d|^2 over the hinges
 * within their ranges: a hinge at a bound that the gradient pushes out is
 * held, and one the step would carry past a bound is stopped there (its
 * move taken out of e) and the rest solved again, up to four rounds, as
 * the general solver locks columns. Returns 0, or -1 (no step). */
static int serial_step(const serial *sv, const serial_at *x, double c, double *d)
{
    int n = sv->n, m = sv->m, fr[SERIAL_HINGES], nf = 0;
    double e[6], H[SERIAL_HINGES * SERIAL_HINGES], rhs[SERIAL_HINGES], sol[SERIAL_HINGES];
    for (int r = 0; r < m; r++) e[r] = x->e[r];
    for (int k = 0; k < n; k++) {
        double gk = 0;
        for (int r = 0; r < m; r++) gk += x->J[r][k] * e[r];
        d[k] = 0;
        if (!serial_held(sv, x, k, gk)) fr[nf++] = k;
    }
    for (int round = 0; round < 4 && nf > 0; round++) {
        if (nf > m) { /* fewer rows than hinges: (J J^T + c) y = e, the step J^T y */
            double y[6];
            serial_rows_product(x, m, fr, nf, c, H);
            if (serial_chol(H, m, e, y) != 0) return -1;
            for (int i = 0; i < nf; i++) {
                double v = 0;
                for (int r = 0; r < m; r++) v += x->J[r][fr[i]] * y[r];
                sol[i] = v;
            }
        } else { /* (J^T J + c) d = J^T e */
            for (int i = 0; i < nf; i++) {
                double v = 0;
                for (int r = 0; r < m; r++) v += x->J[r][fr[i]] * e[r];
                rhs[i] = v;
                for (int j = 0; j <= i; j++) {
                    double h = i == j ? c : 0;
                    for (int r = 0; r < m; r++) h += x->J[r][fr[i]] * x->J[r][fr[j]];
                    H[i * nf + j] = h;
                }
            }
            if (serial_chol(H, nf, rhs, sol) != 0) return -1;
        }
        int kept = 0, stopped = 0;
        for (int i = 0; i < nf; i++) {
            int k = fr[i];
            double to = x->th[k] + sol[i];
            if (round < 3 && !sv->wrap[k] && (to < sv->lo[k] || to > sv->hi[k])) {
                d[k] = (to < sv->lo[k] ? sv->lo[k] : sv->hi[k]) - x->th[k], stopped = 1;
                for (int r = 0; r < m; r++) e[r] -= x->J[r][k] * d[k];
            } else {
                d[k] = sol[i], fr[kept++] = k;
            }
        }
        if (!stopped) break;
        nf = kept;
        for (int i = 0; i < nf; i++) d[fr[i]] = 0;
    }
    return 0;
}

/* One descent from (*a)->th, (*b) the trial slot; returns its iterations. */
static int serial_descend(const serial *sv, serial_at **a, serial_at **b, int budget, double share, int *timed_out)
{
    int n = sv->n, it = 0, stall = 0;
    double L = sv->p->skeleton->size, progress = sqrt((*a)->cost);
    while (it < budget && !serial_met(sv, *a, share)) {
        if (multi_out_of_time(sv->p)) { *timed_out = 1; break; }
        const serial_at *x = *a;
        double en = sqrt(x->cost), lambda = ikd__multi_damping_for(sv->p, en), d[SERIAL_HINGES];
        if (serial_step(sv, x, lambda * lambda, d) != 0) break;
        double most = 0, cap = en > MULTI_FAR * L ? MULTI_FAR_STEP : MULTI_MAX_STEP;
        for (int k = 0; k < n; k++) most = fmax(most, fabs(d[k]));
        double scale = most > cap ? cap / most : 1;
        serial_at *y = *b;
        for (int k = 0; k < n; k++) y->th[k] = serial_clamp(sv, k, x->th[k] + scale * d[k]);
        serial_eval(sv, y);
        it++;
        if (serial_met(sv, x, 1) && !(y->cost < x->cost)) break; /* met, and the step does not tighten it */
        *b = *a, *a = y;
        double now = sqrt(y->cost);
        if (now < progress * (1 - MULTI_PROGRESS)) progress = now, stall = 0;
        else if (++stall >= SERIAL_STALL) break;
    }
    return it;
}

/* Restart r's angles: uniform over each range (a fixed pseudo-random sequence). */
static void serial_seed(const serial *sv, int r, double *th)
{
    unsigned long long x = multi_restart_seed(r);
    for (int k = 0; k < sv->n; k++) th[k] = sv->lo[k] + multi_restart_unit(&x) * (sv->hi[k] - sv->lo[k]);
}

/* The pull's step d at x: the nearest to z (the whole way back to rest,
 * -theta) whose linearised goal error is x's own (J d = e: along the
 * goal's null space, and back onto it), d = z + J^T (J J^T)^-1 (e - J z)
 * over the hinges not held; a hinge at a bound that z pushes out is held,
 * and one d would carry past a bound stops there (its move taken out of e)
 * and the rest is solved again, up to four rounds, as serial_step. The
 * result keeps every hinge within its range. Returns 0, or -1. */
static int serial_pull_step(const serial *sv, const serial_at *x, double *d)
{
    int n = sv->n, m = sv->m, fr[SERIAL_HINGES], nf = 0;
    double z[SERIAL_HINGES], e[6], A[36], rhs[6], y[6], L = sv->p->skeleton->size;
    for (int r = 0; r < m; r++) e[r] = x->e[r];
    for (int k = 0; k < n; k++) {
        z[k] = sv->wrap[k] ? serial_wrap(-x->th[k]) : sv->mid[k] - x->th[k], d[k] = 0;
        if (!serial_held(sv, x, k, z[k])) fr[nf++] = k;
    }
    for (int round = 0; round < 4 && nf > 0; round++) {
        for (int r = 0; r < m; r++) {
            rhs[r] = e[r];
            for (int i = 0; i < nf; i++) rhs[r] -= x->J[r][fr[i]] * z[fr[i]];
        }
        serial_rows_product(x, m, fr, nf, 1e-9 * L * L, A); /* 1e-9: a goal the free hinges cannot turn */
        if (serial_chol(A, m, rhs, y) != 0) return -1;
        int kept = 0, stopped = 0;
        for (int i = 0; i < nf; i++) {
            int k = fr[i];
            double v = z[k];
            for (int r = 0; r < m; r++) v += x->J[r][k] * y[r];
            double to = x->th[k] + v;
            if (!sv->wrap[k] && (to < sv->lo[k] || to > sv->hi[k])) {
                v = (to < sv->lo[k] ? sv->lo[k] : sv->hi[k]) - x->th[k], stopped = 1;
                for (int r = 0; r < m; r++) e[r] -= x->J[r][k] * v;
            } else {
                fr[kept++] = k;
            }
            d[k] = v;
        }
        if (!stopped) break;
        nf = kept;
    }
    return 0;
}

/* What the pull minimises: the squared angles from rest (a full circle's the short way; a range that
 * excludes rest: from its middle). */
static double serial_rest_sq(const serial *sv, const serial_at *x)
{
    double v = 0;
    for (int k = 0; k < sv->n; k++) {
        double t = sv->wrap[k] ? serial_wrap(x->th[k]) : x->th[k] - sv->mid[k];
        v += t * t;
    }
    return v;
}

/* The met pose's freedom toward rest (see the top): pull steps, each
 * followed by Gauss-Newton back onto the goal (a step along the goal's
 * tangent leaves it by about the step's square times the curvature) and
 * halved while that does not meet it or brings it no nearer rest, until a step turns no hinge
 * MULTI_SETTLED; returns the iterations. */
static int serial_settle(const serial *sv, serial_at **a, serial_at **b, serial_at **c, int budget, int *timed_out)
{
    int n = sv->n, it = 0;
    double alpha = 1, last_th[SERIAL_HINGES], last_d[SERIAL_HINGES];
    int have_last = 0;
    while (it < budget && it < SERIAL_SETTLE_ITERATIONS) {
        if (multi_out_of_time(sv->p)) { *timed_out = 1; break; }
        const serial_at *x = *a;
        double d[SERIAL_HINGES], most = 0;
        if (serial_pull_step(sv, x, d) != 0) break;
        if (have_last) { /* Barzilai-Borwein: the step the last two poses' change of d says */
            double ss = 0, sy = 0;
            for (int k = 0; k < n; k++) {
                double sk = serial_wrap(x->th[k] - last_th[k]), yk = last_d[k] - d[k];
                ss += sk * sk, sy += sk * yk;
            }
            alpha = sy > 0 ? fmin(ss / sy, SERIAL_BB_MAX) : 1;
        }
        memcpy(last_th, x->th, sizeof last_th), memcpy(last_d, d, sizeof last_d), have_last = 1;
        for (int k = 0; k < n; k++) most = fmax(most, fabs(d[k]));
        if (most < MULTI_SETTLED) break; /* settled: rest is this near along the goal's freedom */
        most *= alpha; /* the step's longest turn */
        double scale = alpha * (most > MULTI_MAX_STEP ? MULTI_MAX_STEP / most : 1), moved = 0, before = serial_rest_sq(sv, x);
        int kept = 0;
        for (int half = 0; half < 4 && !kept && it < budget; half++, scale *= 0.5) {
            serial_at *t = *b;
            for (int k = 0; k < n; k++) t->th[k] = serial_clamp(sv, k, x->th[k] + scale * d[k]);
            serial_eval(sv, t);
            it++;
            it += serial_descend(sv, b, c, budget - it, SERIAL_TIGHT, timed_out);
            t = *b;
            if (!serial_met(sv, t, 1) || !(serial_rest_sq(sv, t) < before)) continue;
            moved = 0;
            for (int k = 0; k < n; k++) moved = fmax(moved, fabs(serial_wrap(t->th[k] - x->th[k])));
            serial_at *old = *a;
            *a = t, *b = old, kept = 1;
        }
        if (!kept || moved < MULTI_SETTLED) break;
    }
    return it;
}

/* Joint k's local rotation at the solved angles (off the path: as the
 * general solver leaves a joint no goal moves). */
static void serial_write(const serial *sv, const serial_at *a, ikd_quat *local)
{
    const ikd_multi_problem *p = sv->p;
    const ikd_skeleton *s = p->skeleton;
    int t = 0; /* the path's joints come in index order (a parent is listed before its children) */
    for (size_t k = 0; k < s->count; k++) {
        const ikd_skeleton_joint *j = &s->joints[k];
        if (t < sv->depth && sv->path[t] == k) {
            int h = sv->hinge[t++];
            local[k] = h < 0 ? j->rest_local
                             : ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_quat_axis_angle(j->limit.local_axis, a->th[h])));
        } else if (j->limit.type == IKD_LIMIT_FIXED) {
            local[k] = j->rest_local;
        } else { /* where the pull takes it (a rest outside its limits: the middle of those ranges) */
            local[k] = ikd__multi_within_limit(s, k, p->rest_pull > 0 || !p->start ? j->neutral_local : ikd_quat_norm(p->start[k]));
        }
    }
}

int ikd__serial_solve(const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose, ikd_goal_result *gr,
                      ikd_multi_result *res, int *used)
{
    *used = 0;
    serial sv;
    int budget = p->max_iterations / 2;
    if (budget < 1 || !serial_setup(&sv, p)) return 0;
    const ikd_skeleton *s = p->skeleton;
    serial_at slot[3], *a = &slot[0], *b = &slot[1], *c = &slot[2];
    for (int t = 0; t < sv.depth; t++) { /* the start pose's angles, within the ranges */
        int h = sv.hinge[t];
        if (h < 0) continue;
        const ikd_skeleton_joint *j = &s->joints[sv.path[t]];
        ikd_quat q = p->start ? ikd_quat_norm(p->start[sv.path[t]]) : j->rest_local;
        ikd_quat dev = ikd_quat_mul(ikd_quat_conj(j->rest_local), q), d = ikd_limit_project(&j->limit, dev);
        double along = d.x * j->limit.local_axis.x + d.y * j->limit.local_axis.y + d.z * j->limit.local_axis.z;
        a->th[h] = serial_clamp(&sv, h, ikd__hinge_angle(&j->limit, 2 * atan2(along, d.w)));
        int near_bound = !p->start && fmin(a->th[h] - sv.lo[h], sv.hi[h] - a->th[h]) < SERIAL_NEAR_BOUND;
        if (!sv.wrap[h] && (ikd_limit_violation(&j->limit, dev) > 1e-9 || near_bound))
            a->th[h] = 0.5 * (sv.lo[h] + sv.hi[h]); /* outside its range, or a rest at its edge: from the middle (see the top) */
    }
    int it = 0, timed_out = 0;
    for (int r = 0; it < budget && !timed_out; r++) {
        if (r) serial_seed(&sv, r, a->th);
        serial_eval(&sv, a);
        int room = budget - it;
        if (r && room > MULTI_RESTART_ITERATIONS) room = MULTI_RESTART_ITERATIONS;
        it += serial_descend(&sv, &a, &b, room, SERIAL_TIGHT, &timed_out);
        if (serial_met(&sv, a, 1)) break;
    }
    *used = it;
    if (!serial_met(&sv, a, 1)) return 0;
    if (p->rest_pull > 0 && sv.n > sv.m) {
        it += serial_settle(&sv, &a, &b, &c, p->max_iterations - it, &timed_out);
        it += serial_descend(&sv, &a, &b, p->max_iterations - it, SERIAL_TIGHT, &timed_out);
    }
    serial_write(&sv, a, local);
    ikd_skeleton_fk(s, p->root, local, pose);
    const ikd_pose_joint *e = &pose[sv.g->joint];
    gr[0].error = sv.g->has_position ? ikd_vec3_dist(e->position, sv.g->position) : 0;
    gr[0].rotation_error_deg =
        sv.g->has_rotation ? ikd_vec3_len(ikd__multi_rot_vec(ikd_quat_mul(sv.g->rotation, ikd_quat_conj(e->rotation)))) * IKD_RAD2DEG : 0;
    gr[0].stretch = 1;
    int met = multi_met(p, &gr[0]);
    gr[0].status = met ? IKD_GOAL_REACHED : IKD_GOAL_NOT_REACHED;
    res->iterations = it;
    res->root = p->root;
    res->status = met ? IKD_MULTI_REACHED : timed_out ? IKD_MULTI_DEADLINE : IKD_MULTI_PARTIAL;
    return 1;
}
