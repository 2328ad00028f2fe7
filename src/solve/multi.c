/* multi.c - a skeleton toward several goals at once: damped least squares over every goal, limits kept, a rest-pose pull. */
#include <stdio.h>
#include <string.h>

#include "ikd/skeleton.h"

#include "bone.h"
#include "ikd/solve.h"

#define MULTI_ROWS_PER_GOAL 6 /* position 3 + rotation (or aim) 3 */
#define MULTI_MAX_STEP 0.5    /* radians a joint turns at most in one iteration */
#define MULTI_PULL 0.0003       /* mu = rest_pull x this x the skeleton's size (see primary_step) */
#define MULTI_MAX_ROWS (6 * IKD_MAX_JOINTS)

static const char *const goal_names[] = {"reached", "unreachable", "not_reached"};
static const char *const multi_names[] = {"reached", "partial", "deadline"};

const char *ikd_goal_status_name(ikd_goal_status s) { return (unsigned)s < 3 ? goal_names[s] : "not_reached"; }
const char *ikd_multi_status_name(ikd_multi_status s) { return (unsigned)s < 3 ? multi_names[s] : "partial"; }

void ikd_goal_init(ikd_goal *g, size_t joint)
{
    memset(g, 0, sizeof *g);
    g->joint = joint;
    g->rotation = ikd_quat_identity();
    g->weight = 1;
}

void ikd_multi_init(ikd_multi_problem *p)
{
    memset(p, 0, sizeof *p);
    p->up = ikd_vec3_make(0, 1, 0);
    p->max_iterations = 100;
    p->tolerance = 1e-4;
    p->rotation_tolerance_deg = 0.1;
    p->rest_pull = 0.1;
    p->damping = 0.1;
}

static ikd_code goal_error(ikd_error *err, size_t g, const char *leaf, const char *msg)
{
    char field[IKD_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "goals[%zu]%s%s", g, leaf[0] ? "." : "", leaf);
    return ikd_error_set(err, IKD_E_INVALID, field, "%s", msg);
}

static ikd_code check_goal(const ikd_multi_problem *p, ikd_goal *g, size_t i, ikd_error *err)
{
    if (g->joint >= p->skeleton->count) return goal_error(err, i, "joint", "names no joint of the skeleton");
    if (!g->has_position && !g->has_rotation && !g->has_aim && !g->has_ground)
        return goal_error(err, i, "", "needs position, rotation, aim or ground");
    if (g->has_ground && (g->has_position || g->has_rotation))
        return goal_error(err, i, "ground", "sets position and rotation itself: give ground alone");
    if (g->has_position && !ikd_vec3_isfinite(g->position))
        return goal_error(err, i, "position", "must be finite numbers");
    if (g->has_rotation) {
        double ql = ikd_quat_len(g->rotation);
        if (!ikd_quat_isfinite(g->rotation) || !(fabs(ql - 1) <= 1e-3))
            return goal_error(err, i, "rotation", "must be a unit quaternion [x, y, z, w]");
        g->rotation = ikd_quat_norm(g->rotation);
    }
    if (g->has_aim) {
        if (!ikd__unit_dir(&g->aim_axis)) return goal_error(err, i, "aim.axis", "must be a finite, non-zero direction");
        if (!ikd_vec3_isfinite(g->aim_at)) return goal_error(err, i, "aim.at", "must be finite numbers");
    }
    if (g->has_ground) {
        if (!ikd_vec3_isfinite(g->ground_point)) return goal_error(err, i, "ground.point", "must be finite numbers");
        if (!ikd__unit_dir(&g->ground_normal))
            return goal_error(err, i, "ground.normal", "must be a finite, non-zero direction");
        if (g->has_ground_height && !isfinite(g->ground_height))
            return goal_error(err, i, "ground.height", "must be a finite number");
    }
    if (g->has_pole && !ikd_vec3_isfinite(g->pole)) return goal_error(err, i, "pole", "must be finite numbers");
    if (!(g->weight > 0) || !isfinite(g->weight)) return goal_error(err, i, "weight", "must be a number > 0");
    return IKD_E_OK;
}

ikd_code ikd_multi_validate(ikd_multi_problem *p, ikd_goal *goals, ikd_error *err)
{
    ikd_error_clear(err);
    if (!p->skeleton || !p->skeleton->joints) return ikd_error_set(err, IKD_E_INVALID, "skeleton", "missing");
    size_t n = p->skeleton->count;
    if (p->goal_count < 1 || !goals) return ikd_error_set(err, IKD_E_INVALID, "goals", "needs at least 1 goal");
    if (p->goal_count > n)
        return ikd_error_set(err, IKD_E_INVALID, "goals", "more goals (%zu) than joints (%zu)", p->goal_count, n);
    if (!ikd_vec3_isfinite(p->root)) return ikd_error_set(err, IKD_E_INVALID, "pose.root", "must be finite numbers");
    if (!ikd__unit_dir(&p->up)) return ikd_error_set(err, IKD_E_INVALID, "up", "must be a finite, non-zero direction");
    if (p->max_iterations < 1 || p->max_iterations > IKD_MAX_ITERATIONS_LIMIT)
        return ikd_error_set(err, IKD_E_INVALID, "options.max_iterations", "must be an integer in [1, 100000]");
    if (!(p->tolerance >= 0) || !(p->tolerance <= 1e300))
        return ikd_error_set(err, IKD_E_INVALID, "options.tolerance", "must be a number in [0, 1e300]");
    if (!(p->rotation_tolerance_deg >= 0 && p->rotation_tolerance_deg <= 180))
        return ikd_error_set(err, IKD_E_INVALID, "options.rotation_tolerance_deg", "must be a number in [0, 180]");
    if (!(p->rest_pull >= 0 && p->rest_pull <= 1))
        return ikd_error_set(err, IKD_E_INVALID, "options.rest_pull", "must be a number in [0, 1]");
    if (!(p->damping >= 0 && p->damping <= 100))
        return ikd_error_set(err, IKD_E_INVALID, "options.damping", "must be a number in [0, 100]");
    for (size_t i = 0; i < p->goal_count; i++) {
        ikd_code rc = check_goal(p, &goals[i], i, err);
        if (rc) return rc;
    }
    p->goals = goals;
    return IKD_E_OK;
}

/* ---- workspace ---------------------------------------------------------- */

typedef struct multi_ws {
    size_t n, g, cols, rows;
    int *col;           /* [n] first column of each joint, -1 when fixed */
    int *dof;           /* [n] 0, 1 or 3 */
    double *reach;      /* [n] path length from the root */
    ikd_vec3 *tpos;     /* [g] position targets (ground goals resolved) */
    ikd_quat *trot;     /* [g] rotation targets */
    ikd_vec3 *aim_local;/* [g] aim axes in the joint's rest frame */
    unsigned char *want;/* [g] bit 1 position, 2 rotation, 4 aim */
    int *row0;          /* [g] first row of each goal's position rows (its rotation rows follow) */
    unsigned char *locked; /* [cols] columns taken out this iteration (a step that would leave a limit) */
    double *J;          /* [rows x cols], row-major */
    double *A;          /* [rows x rows] */
    double *e, *y, *t;  /* [rows] */
    double *dq, *z;     /* [cols] */
    ikd_quat *best;     /* [n] the best pose so far */
} multi_ws;

static size_t align8(size_t b) { return (b + 7) & ~(size_t)7; }

size_t ikd_multi_workspace_size(size_t joints, size_t goals)
{
    size_t cols = 3 * joints + 3, rows = MULTI_ROWS_PER_GOAL * goals;
    return align8(2 * joints * sizeof(int)) + align8(goals * sizeof(int)) + align8(3 * joints + 3) + joints * sizeof(double) + goals * (2 * sizeof(ikd_vec3) + sizeof(ikd_quat)) +
           align8(goals) + (rows * cols + rows * rows + 3 * rows + 2 * cols) * sizeof(double) + joints * sizeof(ikd_quat) +
           64;
}

static void ws_carve(multi_ws *w, void *mem, size_t n, size_t g)
{
    char *m = mem;
    w->n = n, w->g = g, w->cols = 3 * n + 3, w->rows = MULTI_ROWS_PER_GOAL * g;
    w->reach = (double *)m, m += n * sizeof(double);
    w->tpos = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->aim_local = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->trot = (ikd_quat *)m, m += g * sizeof(ikd_quat);
    w->best = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->J = (double *)m, m += w->rows * w->cols * sizeof(double);
    w->A = (double *)m, m += w->rows * w->rows * sizeof(double);
    w->e = (double *)m, m += w->rows * sizeof(double);
    w->y = (double *)m, m += w->rows * sizeof(double);
    w->t = (double *)m, m += w->rows * sizeof(double);
    w->dq = (double *)m, m += w->cols * sizeof(double);
    w->z = (double *)m, m += w->cols * sizeof(double);
    w->col = (int *)m, m += n * sizeof(int);
    w->dof = (int *)m, m += n * sizeof(int);
    w->row0 = (int *)m, m += g * sizeof(int);
    w->locked = (unsigned char *)m, m += 3 * n + 3;
    w->want = (unsigned char *)m;
}

/* ---- set-up: columns, reach, targets ------------------------------------ */

static void setup_columns(multi_ws *w, const ikd_skeleton *s)
{
    int c = 0;
    for (size_t k = 0; k < s->count; k++) {
        ikd_limit_type t = s->joints[k].limit.type;
        w->dof[k] = t == IKD_LIMIT_FIXED ? 0 : t == IKD_LIMIT_HINGE ? 1 : 3;
        w->col[k] = w->dof[k] ? c : -1;
        c += w->dof[k];
        w->reach[k] = k ? w->reach[s->joints[k].parent] + ikd_vec3_len(s->joints[k].offset) : 0;
    }
    w->cols = (size_t)c + 3; /* root translation last */
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

static void setup_targets(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *start)
{
    int rows = 0;
    for (size_t i = 0; i < w->g; i++) {
        const ikd_goal *g = &p->goals[i];
        w->want[i] = (unsigned char)((g->has_position || g->has_ground ? 1 : 0) | (g->has_rotation || g->has_ground ? 2 : 0) |
                                     (g->has_aim && !g->has_rotation && !g->has_ground ? 4 : 0));
        w->row0[i] = rows; /* only the rows a goal uses: 3 for a position, 3 for a rotation or aim */
        rows += (w->want[i] & 1 ? 3 : 0) + (w->want[i] & 6 ? 3 : 0);
        w->tpos[i] = g->position;
        w->trot[i] = g->rotation;
        if (g->has_ground) ground_targets(p, g, start, &w->tpos[i], &w->trot[i]);
        if (g->has_aim)
            w->aim_local[i] = ikd_quat_rotate(ikd_quat_conj(p->skeleton->joints[g->joint].rotation), g->aim_axis);
    }
    w->rows = (size_t)rows;
}

/* ---- one iteration -------------------------------------------------------- */

/* The rotation vector (axis * angle, radians, angle in [0, pi]) of q. */
static ikd_vec3 rot_vec(ikd_quat q)
{
    if (q.w < 0) q = ikd_quat_make(-q.x, -q.y, -q.z, -q.w);
    ikd_vec3 v = ikd_vec3_make(q.x, q.y, q.z);
    double s = ikd_vec3_len(v);
    if (s < 1e-15) return ikd_vec3_scale(v, 2.0);
    return ikd_vec3_scale(v, 2 * atan2(s, q.w) / s);
}

/* The world axes of joint k's columns. */
static int joint_axes(const multi_ws *w, const ikd_skeleton *s, const ikd_pose_joint *pose, size_t k, ikd_vec3 ax[3])
{
    if (w->dof[k] == 1) {
        ax[0] = ikd_quat_rotate(pose[k].rotation, s->joints[k].limit.local_axis);
        return 1;
    }
    ax[0] = ikd_vec3_make(1, 0, 0), ax[1] = ikd_vec3_make(0, 1, 0), ax[2] = ikd_vec3_make(0, 0, 1);
    return w->dof[k];
}

/* 1 when goal i is a position farther from a fixed root than the bones
 * between them reach: no pose meets it. */
static int out_of_reach(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    return !p->root_free && (w->want[i] & 1) &&
           ikd_vec3_dist(w->tpos[i], p->root) > w->reach[p->goals[i].joint] + p->tolerance;
}

/* Joint k's local rotation after turning it by its step in dq times
 * `scale` (about world axes at the current pose); *angle gets the turn. */
static ikd_quat turned(const multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                       size_t k, double scale, double *angle)
{
    ikd_vec3 ax[3], v = ikd_vec3_make(0, 0, 0);
    int na = joint_axes(w, p->skeleton, pose, k, ax);
    for (int a = 0; a < na; a++) v = ikd_vec3_mad(v, ax[a], w->dq[w->col[k] + a] * scale);
    double ang = *angle = ikd_vec3_len(v);
    if (!(ang > 0)) return local[k];
    ikd_quat dw = ikd_quat_axis_angle(ikd_vec3_scale(v, 1 / ang), ang);
    ikd_quat pr = k ? pose[p->skeleton->joints[k].parent].rotation : ikd_quat_identity();
    return ikd_quat_norm(ikd_quat_mul(ikd_quat_mul(ikd_quat_conj(pr), ikd_quat_mul(dw, pr)), local[k]));
}

/* The task error and Jacobian rows of every goal; returns 1 when every goal
 * is met. Rotation rows are scaled by the skeleton's size (one radian
 * weighs one skeleton size). */
static int build_rows(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, ikd_goal_result *gr)
{
    const ikd_skeleton *s = p->skeleton;
    double L = s->size, rot_tol = p->rotation_tolerance_deg * IKD_DEG2RAD;
    int all = 1;
    memset(w->J, 0, w->rows * w->cols * sizeof(double));
    memset(w->e, 0, w->rows * sizeof(double));
    for (size_t i = 0; i < w->g; i++) {
        const ikd_goal *g = &p->goals[i];
        size_t j = g->joint, r0 = (size_t)w->row0[i], r1 = r0 + (w->want[i] & 1 ? 3 : 0);
        double wt = g->weight;
        /* a goal out of reach of a fixed root yields to the others ("the other
         * goals are still met"): it only turns what they leave free */
        if (out_of_reach(w, p, i)) wt *= 1e-5;
        ikd_vec3 pj = pose[j].position, rv = ikd_vec3_make(0, 0, 0), aim = rv;
        gr[i].error = 0, gr[i].rotation_error_deg = 0;
        if (w->want[i] & 1) {
            ikd_vec3 d = ikd_vec3_sub(w->tpos[i], pj);
            gr[i].error = ikd_vec3_len(d);
            if (gr[i].error > 0.2 * L) d = ikd_vec3_scale(d, 0.2 * L / gr[i].error); /* one step aims this far at most */
            w->e[r0] = wt * d.x, w->e[r0 + 1] = wt * d.y, w->e[r0 + 2] = wt * d.z;
            if (gr[i].error > p->tolerance) all = 0;
        }
        if (w->want[i] & 2) rv = rot_vec(ikd_quat_mul(w->trot[i], ikd_quat_conj(pose[j].rotation)));
        if (w->want[i] & 4) {
            aim = ikd_quat_rotate(pose[j].rotation, w->aim_local[i]);
            ikd_vec3 to = ikd_vec3_norm_or(ikd_vec3_sub(g->aim_at, pj), aim), c = ikd_vec3_cross(aim, to);
            rv = ikd_vec3_scale(ikd_vec3_norm_or(c, ikd_vec3_any_perp(aim)), atan2(ikd_vec3_len(c), ikd_vec3_dot(aim, to)));
        }
        if (w->want[i] & 6) {
            gr[i].rotation_error_deg = ikd_vec3_len(rv) * IKD_RAD2DEG;
            if (ikd_vec3_len(rv) > 0.5) rv = ikd_vec3_scale(rv, 0.5 / ikd_vec3_len(rv));
            w->e[r1] = wt * L * rv.x, w->e[r1 + 1] = wt * L * rv.y, w->e[r1 + 2] = wt * L * rv.z;
            if (ikd_vec3_len(rv) > rot_tol) all = 0;
        }
        /* columns: every joint from the goal's joint up to the root (the
         * goal joint itself turns only its rotation) */
        for (long k = (long)j; k >= 0; k = s->joints[k].parent) {
            ikd_vec3 ax[3];
            int na = w->dof[k] ? joint_axes(w, s, pose, (size_t)k, ax) : 0;
            ikd_vec3 arm = ikd_vec3_sub(pj, pose[k].position);
            for (int a = 0; a < na; a++) {
                size_t c = (size_t)w->col[k] + (size_t)a;
                if ((w->want[i] & 1) && k != (long)j) {
                    ikd_vec3 v = ikd_vec3_cross(ax[a], arm);
                    w->J[r0 * w->cols + c] = wt * v.x;
                    w->J[(r0 + 1) * w->cols + c] = wt * v.y;
                    w->J[(r0 + 2) * w->cols + c] = wt * v.z;
                }
                if (w->want[i] & 6) {
                    ikd_vec3 v = (w->want[i] & 4) ? ikd_vec3_reject(ax[a], aim) : ax[a];
                    w->J[r1 * w->cols + c] = wt * L * v.x;
                    w->J[(r1 + 1) * w->cols + c] = wt * L * v.y;
                    w->J[(r1 + 2) * w->cols + c] = wt * L * v.z;
                }
            }
        }
        if (p->root_free && (w->want[i] & 1))
            for (int a = 0; a < 3; a++) w->J[(r0 + (size_t)a) * w->cols + w->cols - 3 + (size_t)a] = wt;
    }
    return all;
}

/* A = J J^T + lambda^2 I, factored in place (Cholesky, lower); 0, or -1
 * when not positive definite. */
static int factor(multi_ws *w, double lambda)
{
    size_t m = w->rows, n = w->cols;
    for (size_t r = 0; r < m; r++)
        for (size_t c = 0; c <= r; c++) {
            const double *a = &w->J[r * n], *b = &w->J[c * n];
            double s = 0;
            for (size_t k = 0; k < n; k++) s += a[k] * b[k];
            w->A[r * m + c] = s + (r == c ? lambda * lambda : 0);
        }
    for (size_t i = 0; i < m; i++) {
        for (size_t k = 0; k <= i; k++) {
            double s = w->A[i * m + k];
            for (size_t t = 0; t < k; t++) s -= w->A[i * m + t] * w->A[k * m + t];
            if (i == k) {
                if (!(s > 0)) return -1;
                w->A[i * m + i] = sqrt(s);
            } else {
                w->A[i * m + k] = s / w->A[k * m + k];
            }
        }
    }
    return 0;
}

/* x = A^-1 b with the factor; b and x may be the same. */
static void solve_factored(const multi_ws *w, const double *b, double *x)
{
    size_t m = w->rows;
    for (size_t i = 0; i < m; i++) {
        double s = b[i];
        for (size_t t = 0; t < i; t++) s -= w->A[i * m + t] * x[t];
        x[i] = s / w->A[i * m + i];
    }
    for (size_t i = m; i-- > 0;) {
        double s = x[i];
        for (size_t t = i + 1; t < m; t++) s -= w->A[t * m + i] * x[t];
        x[i] = s / w->A[i * m + i];
    }
}

/* out = J^T v over all columns. */
static void jt(const multi_ws *w, const double *v, double *out)
{
    memset(out, 0, w->cols * sizeof(double));
    for (size_t r = 0; r < w->rows; r++) {
        if (v[r] == 0) continue;
        const double *row = &w->J[r * w->cols];
        for (size_t c = 0; c < w->cols; c++) out[c] += row[c] * v[r];
    }
}

/* The secondary task, in column space: each joint's deviation from rest
 * pulled back by rest_pull, and a limb's middle joint toward its pole. */
static void secondary(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose)
{
    const ikd_skeleton *s = p->skeleton;
    memset(w->z, 0, w->cols * sizeof(double));
    for (size_t k = 0; k < s->count; k++) {
        if (!w->dof[k]) continue;
        const ikd_skeleton_joint *j = &s->joints[k];
        ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), local[k]);
        ikd_vec3 back = rot_vec(ikd_quat_conj(d)); /* in the joint's rest frame */
        ikd_quat frame = ikd_quat_mul(k ? pose[j->parent].rotation : ikd_quat_identity(), j->rest_local);
        ikd_vec3 world = ikd_quat_rotate(frame, back); /* the whole way back to rest */
        if (w->dof[k] == 1) {
            w->z[w->col[k]] = ikd_vec3_dot(world, ikd_quat_rotate(pose[k].rotation, j->limit.local_axis));
        } else {
            w->z[w->col[k]] = world.x, w->z[w->col[k] + 1] = world.y, w->z[w->col[k] + 2] = world.z;
        }
    }
    for (size_t i = 0; i < w->g; i++) { /* poles: turn the limb's upper joint so the middle joint moves toward it */
        const ikd_goal *g = &p->goals[i];
        long mid = s->joints[g->joint].parent, up = mid > 0 ? s->joints[mid].parent : -1;
        if (!g->has_pole || up < 0 || w->dof[up] != 3) continue;
        ikd_vec3 axis = ikd_vec3_norm_or(ikd_vec3_sub(pose[g->joint].position, pose[up].position), ikd_vec3_make(0, 1, 0));
        ikd_vec3 have = ikd_vec3_reject(ikd_vec3_sub(pose[mid].position, pose[up].position), axis);
        ikd_vec3 want = ikd_vec3_reject(ikd_vec3_sub(g->pole, pose[up].position), axis);
        if (ikd_vec3_len(have) < 1e-9 * s->size || ikd_vec3_len(want) < 1e-9 * s->size) continue;
        ikd_vec3 turn = ikd_vec3_scale(axis, ikd_vec3_signed_angle(have, want, axis) * 0.5);
        w->z[w->col[up]] += turn.x, w->z[w->col[up] + 1] += turn.y, w->z[w->col[up] + 2] += turn.z;
    }
}

/* Turn every joint by its step (world rotation vectors, scaled so none
 * turns more than MULTI_MAX_STEP), move a free root, then put every joint
 * back within its limits. Returns the largest turn. */
static double apply(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, const ikd_pose_joint *pose,
                    ikd_vec3 *root)
{
    const ikd_skeleton *s = p->skeleton;
    double worst = 0;
    for (size_t k = 0; k < s->count; k++)
        if (w->dof[k]) {
            double q = 0;
            for (int a = 0; a < w->dof[k]; a++) q += w->dq[w->col[k] + a] * w->dq[w->col[k] + a];
            worst = fmax(worst, sqrt(q));
        }
    double scale = worst > MULTI_MAX_STEP ? MULTI_MAX_STEP / worst : 1;
    for (size_t k = 0; k < s->count; k++) {
        const ikd_skeleton_joint *j = &s->joints[k];
        double ang;
        if (w->dof[k]) local[k] = turned(w, p, local, pose, k, scale, &ang);
        ikd_quat d = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(j->rest_local), local[k]));
        local[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_limit_project(&j->limit, d)));
    }
    if (p->root_free)
        *root = ikd_vec3_add(*root, ikd_vec3_make(w->dq[w->cols - 3], w->dq[w->cols - 2], w->dq[w->cols - 1]));
    return worst * scale;
}

/* The task error's norm; with `reachable`, over the goals not known to be
 * out of reach only (those would keep the damping high and slow the rest). */
static double task_norm(const multi_ws *w, const ikd_multi_problem *p, int reachable)
{
    double s = 0;
    for (size_t i = 0; i < w->g; i++) {
        if (reachable && out_of_reach(w, p, i)) continue;
        size_t r0 = (size_t)w->row0[i], nr = (w->want[i] & 1 ? 3 : 0) + (w->want[i] & 6 ? 3 : 0);
        for (size_t r = r0; r < r0 + nr; r++) s += w->e[r] * w->e[r];
    }
    return sqrt(s);
}

/* 1 when turning joint k by its step in dq would leave its limits (by more
 * than a hair): the limit would undo the step. */
static int step_leaves_limits(const multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local,
                              const ikd_pose_joint *pose, size_t k)
{
    const ikd_skeleton_joint *j = &p->skeleton->joints[k];
    if (j->limit.type == IKD_LIMIT_NONE || !w->dof[k]) return 0;
    double ang;
    ikd_quat nl = turned(w, p, local, pose, k, 1, &ang);
    if (ang < 1e-12) return 0;
    ikd_quat d = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(j->rest_local), nl));
    return ikd_limit_violation(&j->limit, d) > 0.25 * ang + 1e-9;
}

/* The step in dq: damped least squares toward the goals, regularised
 * toward the rest pose (and the poles). With z the whole way back to rest,
 * it minimises |J dq - e|^2 + lambda^2 |dq|^2 + mu^2 |dq - z|^2:
 * dq = x0 + J^T (J J^T + c I)^-1 (e - J x0), c = lambda^2 + mu^2,
 * x0 = (mu^2 / c) z. Far from the goals lambda dominates and the pull is
 * faint; once they are met the pull takes whole steps in their null space,
 * so the pose settles in a few iterations, and it costs the goals about
 * mu^2 / sigma^2 of the deviation. A joint whose step would leave its
 * limits is taken out (its columns zeroed) and the rest solved again, up to
 * four rounds. 0, or -1 when the system cannot be solved. */
static int primary_step(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                        double lambda, double mu)
{
    int pull = mu > 0;
    for (size_t i = 0; i < w->g; i++) pull |= p->goals[i].has_pole;
    if (pull) secondary(w, p, local, pose);
    else memset(w->z, 0, w->cols * sizeof(double));
    double c = lambda * lambda + mu * mu, k = c > 0 ? mu * mu / c : 0;
    memset(w->locked, 0, w->cols);
    for (int round = 0; round < 4; round++) {
        if (factor(w, sqrt(c)) != 0) return -1;
        for (size_t r = 0; r < w->rows; r++) { /* e - J x0 */
            const double *row = &w->J[r * w->cols];
            double v = 0;
            for (size_t col = 0; col < w->cols; col++) v += row[col] * w->z[col];
            w->y[r] = w->e[r] - k * v;
        }
        solve_factored(w, w->y, w->y);
        jt(w, w->y, w->dq);
        for (size_t col = 0; col < w->cols; col++) w->dq[col] += w->locked[col] ? 0 : k * w->z[col];
        int locked = 0;
        for (size_t j = 0; j < w->n; j++) {
            if (!step_leaves_limits(w, p, local, pose, j)) continue;
            for (int a = 0; a < w->dof[j]; a++) {
                size_t col = (size_t)w->col[j] + (size_t)a;
                for (size_t r = 0; r < w->rows; r++) w->J[r * w->cols + col] = 0;
                w->dq[col] = 0;
                w->z[col] = 0;
                w->locked[col] = 1;
            }
            locked = 1;
        }
        if (!locked) break;
    }
    return 0;
}

/* ---- the solve ------------------------------------------------------------ */

static void finish_goals(const multi_ws *w, const ikd_multi_problem *p, ikd_goal_result *gr, int *all)
{
    *all = 1;
    for (size_t i = 0; i < w->g; i++) {
        int met = gr[i].error <= p->tolerance && gr[i].rotation_error_deg <= p->rotation_tolerance_deg;
        gr[i].status = met ? IKD_GOAL_REACHED : IKD_GOAL_NOT_REACHED;
        if (!met && out_of_reach(w, p, i)) gr[i].status = IKD_GOAL_UNREACHABLE;
        if (!met) *all = 0;
    }
}

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
    multi_ws w;
    ws_carve(&w, work, s->count, p->goal_count);
    setup_columns(&w, s);
    ikd_vec3 root = p->root;
    if (p->start) memcpy(local, p->start, s->count * sizeof *local);
    else ikd_skeleton_rest_pose(s, local);
    for (size_t k = 0; k < s->count; k++) { /* the start pose within the limits */
        const ikd_skeleton_joint *j = &s->joints[k];
        ikd_quat d = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(j->rest_local), ikd_quat_norm(local[k])));
        local[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_limit_project(&j->limit, d)));
    }
    ikd_skeleton_fk(s, root, local, pose);
    setup_targets(&w, p, pose);
    double best = INFINITY, L = s->size;
    ikd_vec3 best_root = root;
    int it = 0, stall = 0, timed_out = 0;
    for (;;) {
        ikd_skeleton_fk(s, root, local, pose);
        int met = build_rows(&w, p, pose, gr);
        double en = task_norm(&w, p, 0);
        if (met || en < best - 1e-12 * L) { /* once met, the pull toward rest goes on */
            best = fmin(best, en), best_root = root, stall = 0;
            memcpy(w.best, local, s->count * sizeof *local);
        } else if (++stall >= 12) {
            break; /* no progress: held by limits, reach or the pull */
        }
        if (it >= p->max_iterations) break;
        if (p->cancel && atomic_load_explicit(p->cancel, memory_order_relaxed)) { timed_out = 1; break; }
        if (p->deadline_ns && ikd_clock_ns() > p->deadline_ns) { timed_out = 1; break; }
        double lambda = p->damping * fmin(task_norm(&w, p, 1), 0.5 * L) + 1e-9 * L;
        if (primary_step(&w, p, local, pose, lambda, p->rest_pull * MULTI_PULL * L) != 0) break;
        it++;
        double moved = apply(&w, p, local, pose, &root);
        if (met && moved < 1e-6) break; /* goals met and the pose has stopped changing */
    }
    /* keep the best pose found */
    memcpy(local, w.best, s->count * sizeof *local);
    root = best_root;
    ikd_skeleton_fk(s, root, local, pose);
    build_rows(&w, p, pose, gr);
    int all;
    finish_goals(&w, p, gr, &all);
    res->iterations = it;
    res->root = root;
    res->status = timed_out && !all ? IKD_MULTI_DEADLINE : all ? IKD_MULTI_REACHED : IKD_MULTI_PARTIAL;
    return IKD_E_OK;
}
