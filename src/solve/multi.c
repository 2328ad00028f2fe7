/* multi.c - a skeleton toward several goals at once: damped least squares over every goal, limits kept, a rest-pose pull. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ikd/skeleton.h"

#include "bone.h"
#include "fk.h"
#include "limit.h"
#include "solvers.h"
#include "ikd/solve.h"

#define MULTI_ROWS_PER_GOAL 6 /* at most: position 3 + rotation 3 (an aim: 2) */
#define MULTI_MAX_STEP 0.5    /* radians a joint turns at most in one iteration ... */
#define MULTI_FAR_STEP 1.0    /* ... and while the goals are far (error over MULTI_FAR x the skeleton's size) */
#define MULTI_FAR 0.2
#define MULTI_PULL 0.003
#define MULTI_NEAR 0.1        /* goals this near (x the skeleton's size) ... */
#define MULTI_NEAR_PULL 0.9   /* ... let the pull take at least this share of its step (see primary_step) */
#define MULTI_MAX_ROWS (6 * IKD_MAX_JOINTS)
#define MULTI_RESTARTS 8      /* descents from spread-out poses after the first, while goals stay unmet */
#define MULTI_RESTART_ITERATIONS 40 /* iterations of each restart at most */
#define MULTI_PROGRESS 0.01  /* an unmet descent progresses while its error falls by this share ... */
#define MULTI_STALL 8         /* ... in fewer iterations than these (a local minimum crawls: restart) */
#define MULTI_SETTLED 2e-4        /* radians a settling pose may still be from where it converges (the
                                      last step is evaluated and kept: fed back, a pose moves less) */
#define MULTI_SETTLE_ITERATIONS 60 /* iterations the rest pull goes on once the goals are met, at most */
#define MULTI_LOSSES 2        /* settling steps that lose the goals before the settle ends at the met pose held */
#define MULTI_POLE_BEND 0.05  /* a pole's pull is whole from this bend on (secondary) */
#define MULTI_FAR_REFINE 8    /* far_refine's iterations at most */
#define MULTI_FAR_ROTATION 0.03 /* a far goal's rotation rows against its pointing: the arm points
                                   first (weighed 1: up to 20 degrees off its target where the
                                   wrist's limits conflict; 0.03: 0.3) */
#define MULTI_STRETCH_AIM 0.95 /* options.stretch: a limb is aimed this far into its reach (0.98: 94% of
                                   far hands met, not 99%: a straighter limb converges slowly), then scaled */

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

/* The skeleton solver's options: defaults (ikd_multi_init), bounds
 * (ikd_multi_validate), names (the request decoder) and GET /v1/solvers. */
static const ikd_option_info multi_options[] = {
    {"max_iterations", IKD_OPT_INT, offsetof(ikd_multi_problem, max_iterations), 300, 1, IKD_MAX_ITERATIONS_LIMIT, 0, 0,
     NULL, 0, "most iterations (one damped least-squares step over every goal each); capped by --max-iterations"},
    {"tolerance", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, tolerance), 1e-4, 0, 1e300, 0, 0, NULL, 0,
     "position error counted as met, skeleton units"},
    {"rotation_tolerance_deg", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, rotation_tolerance_deg), 0.1, 0, 180, 0, 0,
     NULL, 0, "rotation and aim error counted as met, degrees"},
    {"rest_pull", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, rest_pull), 0.1, 0, 1, 0, 0, NULL, 0,
     "how strongly the joints the goals leave free turn back toward the rest pose; 0 = they stay where they start"},
    {"damping", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, damping), 0.25, 0, 100, 0, 0, NULL, 0,
     "damping of each least-squares step, times the goals' error (higher: shorter, steadier steps)"},
    {"soften", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, soften), 1, 0, 1, 1, 0, NULL, 0,
     "soft IK for two-bone limbs: a position goal on a limb's end beyond soften x its reach is eased in "
     "(no knee pop or jitter near full extension); 1 = off"},
    {"stretch", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, stretch), 1, 1, 100, 0, 0, NULL, 0,
     "two-bone limbs: a position goal on a limb's end that the solve leaves beyond the limb's reach is met by "
     "lengthening both bones alike, up to this factor (lengths change, by request); 1 = off"},
    {"pull_max_deg", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, pull_max_deg), 0, 0, 180, 0, 0, NULL, 0,
     "the most degrees the rest pull turns any joint in one solve; once spent the goals are met without it "
     "and the solve stops (a clip's frames: a jump of the pull's pose spread over frames); 0 = no bound"},
};

_Static_assert(sizeof multi_options / sizeof multi_options[0] == IKD_MULTI_OPTION_COUNT,
               "IKD_MULTI_OPTION_COUNT is the options table's length");

const ikd_option_info *ikd_multi_options_table(size_t *count)
{
    *count = sizeof multi_options / sizeof multi_options[0];
    return multi_options;
}

void ikd_multi_init(ikd_multi_problem *p)
{
    memset(p, 0, sizeof *p);
    p->up = ikd_vec3_make(0, 1, 0);
    for (size_t i = 0; i < sizeof multi_options / sizeof multi_options[0]; i++) {
        const ikd_option_info *o = &multi_options[i];
        char *field = (char *)p + o->offset;
        if (o->type == IKD_OPT_NUMBER) *(double *)field = o->def;
        else *(int *)field = (int)o->def;
    }
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
    for (size_t i = 0; i < sizeof multi_options / sizeof multi_options[0]; i++) {
        const ikd_option_info *o = &multi_options[i];
        const char *field = (const char *)p + o->offset;
        double v = o->type == IKD_OPT_NUMBER ? *(const double *)field : *(const int *)field;
        int low = o->min_open ? !(v > o->min) : !(v >= o->min), high = o->max_open ? !(v < o->max) : !(v <= o->max);
        if (low || high) {
            char name[64];
            snprintf(name, sizeof name, "options.%s", o->name);
            return ikd_error_set(err, IKD_E_INVALID, name, "must be %s in %s%g, %g%s",
                                 o->type == IKD_OPT_INT ? "an integer" : "a number", o->min_open ? "(" : "[", o->min, o->max,
                                 o->max_open ? ")" : "]");
        }
    }
    for (size_t i = 0; i < p->goal_count; i++) {
        ikd_code rc = check_goal(p, &goals[i], i, err);
        if (rc) return rc;
    }
    p->goals = goals;
    return IKD_E_OK;
}

/* ---- workspace ---------------------------------------------------------- */

typedef struct multi_ws {
    size_t n, g, cols, rows, cmax;
    double raw;         /* the weighted task error as build_rows found it, before the per-step clamps */
    int *col;           /* [n] first column of each joint, -1 when fixed */
    int *dof;           /* [n] 0, 1 or 3 */
    int *idle;          /* [n] 1: on no goal's path (no goal moves with it): left at rest, or where it starts
                           without a rest pull, and out of the iterations */
    int *need;          /* [n] 1: a goal's joint or an ancestor of one (the joints whose pose the iterations read) */
    double *reach;      /* [n] path length from the root */
    ikd_vec3 *tpos;     /* [g] position targets (ground goals resolved) */
    ikd_quat *trot;     /* [g] rotation targets */
    ikd_vec3 *aim_local;/* [g] aim axes in the joint's rest frame */
    unsigned char *want;/* [g] bit 1 position, 2 rotation, 4 aim, 8 stretching (aimed into the limb's reach) */
    int *row0;          /* [g] first row of each goal's position rows (its rotation rows follow) */
    int *row_goal;      /* [rows] the goal of each row */
    /* A goal out of reach of a fixed root (out_of_reach) turns only joints
     * no reachable goal's path has (mark_far), from the joint fbase[i]
     * down: its compact columns from far[i] on (the rest are left out of
     * its rows), so it never pulls a reachable goal off; -1 when it is
     * within reach. Its position rows point the chord from fbase[i] to the
     * goal's joint at the target (far_pointing); a hinged limb is also
     * straightened, any other chord stretches as far as the rest pull
     * leaves it. */
    int *far;           /* [g] */
    int *fbase;         /* [g] */
    int *fstraight;     /* [g] 1: a two-bone limb whose middle joint is a hinge, no rotation or
                           aim asked (far_pointing straightens it; against a rotation or an aim
                           the elbow cycled; a pole's pull fades as the limb straightens) */
    double *rdamp;      /* [rows] the damping each row's diagonal gets (primary_step) */
    int only_far;       /* 1: build_rows leaves the reachable goals' rows empty (far_refine) */
    int *nzr;           /* [rows] scratch: the rows a locked column moves (zero_locked) */
    /* A goal's rows are stored compactly over the columns that move it: a
     * free root's translation, then the joints from the root down to the
     * goal's joint. Two goals share their paths' common prefix (the joints
     * above their lowest common ancestor), so a product of two rows is a
     * dot product over that prefix: J J^T costs the shared columns only. */
    int *glen;          /* [g] compact columns of each goal */
    int *gcol;          /* [g x cmax] the global column of each compact one */
    int *gdepth;        /* [g] joints on the path */
    int *gpath;         /* [g x n] the path's joints, root first */
    int *pre;           /* [g x g] compact columns two goals share */
    unsigned char *locked; /* [cols] columns taken out this iteration (a step that would leave a limit) */
    double *fix;        /* [cols] a locked column's step: to the bound it would leave (0: it stays) */
    double *zc;         /* [cols] scratch: one goal's compact entries of a column vector (residual, jt) */
    double *J;          /* [rows x cmax], compact rows */
    double *A0, *A;     /* [rows x rows]: J J^T (lower), its Cholesky factor */
    double *e, *y, *t;  /* [rows] */
    double *dinv;       /* [rows] the reciprocals of the factor's diagonal */
    double *dq, *z;     /* [cols] */
    double *dqp;        /* [cols] the last step while settling (extrapolation) */
    /* Each joint's columns are its constraint's own axes at the current
     * pose (see joint_frames), so a limit binds single columns: */
    ikd_vec3 *axw;      /* [3n] the world axes of each joint's columns */
    double *cval, *clo, *chi; /* [cols] each column's angle now and its range, radians (+-inf: unbounded) */
    ikd_vec3 *zw;       /* [n] the secondary task per joint, a world rotation vector */
    double *zinv;       /* [9n] per euler joint: world vector -> its columns' rates */
    ikd_quat *eq;       /* [n] per euler or hinge joint: the local rotation its angles in ea are of (NaN: none) */
    double *ea;         /* [3n] ... and those angles, radians in (-pi, pi] (apply steps such a joint by its
                           angles; the next column frame reads them instead of decomposing the rotation) */
    ikd_quat *best;     /* [n] the best pose of this descent */
    ikd_quat *keep;     /* [n] the best pose of the descents so far (restarts) */
    ikd_quat *held;     /* [n] the met pose a settling step first lost the goals from (descend) */
} multi_ws;

static size_t align8(size_t b) { return (b + 7) & ~(size_t)7; }

size_t ikd_multi_workspace_size(size_t joints, size_t goals)
{
    size_t cols = 3 * joints + 3, rows = MULTI_ROWS_PER_GOAL * goals;
    size_t ints = 4 * joints + 7 * goals + 2 * rows + goals * cols + goals * joints + goals * goals;
    return align8(ints * sizeof(int)) + align8(3 * joints + 3) + joints * sizeof(double) +
           joints * 4 * sizeof(ikd_vec3) + (3 * cols + 12 * joints) * sizeof(double) + joints * sizeof(ikd_quat) +
           goals * (2 * sizeof(ikd_vec3) + sizeof(ikd_quat)) + align8(goals) +
           (rows * cols + 2 * rows * rows + 5 * rows + 5 * cols) * sizeof(double) + 3 * joints * sizeof(ikd_quat) + 64;
}

static void ws_carve(multi_ws *w, void *mem, size_t n, size_t g)
{
    char *m = mem;
    w->n = n, w->g = g, w->cmax = w->cols = 3 * n + 3, w->rows = MULTI_ROWS_PER_GOAL * g;
    w->only_far = 0;
    size_t rows = w->rows;
    w->reach = (double *)m, m += n * sizeof(double);
    w->tpos = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->aim_local = (ikd_vec3 *)m, m += g * sizeof(ikd_vec3);
    w->trot = (ikd_quat *)m, m += g * sizeof(ikd_quat);
    w->best = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->keep = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->held = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->J = (double *)m, m += rows * w->cmax * sizeof(double);
    w->A = (double *)m, m += rows * rows * sizeof(double);
    w->A0 = (double *)m, m += rows * rows * sizeof(double);
    w->e = (double *)m, m += rows * sizeof(double);
    w->y = (double *)m, m += rows * sizeof(double);
    w->t = (double *)m, m += rows * sizeof(double);
    w->dinv = (double *)m, m += rows * sizeof(double);
    w->rdamp = (double *)m, m += rows * sizeof(double);
    w->dq = (double *)m, m += w->cols * sizeof(double);
    w->z = (double *)m, m += w->cols * sizeof(double);
    w->dqp = (double *)m, m += w->cols * sizeof(double);
    w->fix = (double *)m, m += w->cols * sizeof(double);
    w->zc = (double *)m, m += w->cols * sizeof(double);
    w->axw = (ikd_vec3 *)m, m += 3 * n * sizeof(ikd_vec3);
    w->zw = (ikd_vec3 *)m, m += n * sizeof(ikd_vec3);
    w->cval = (double *)m, m += w->cols * sizeof(double);
    w->clo = (double *)m, m += w->cols * sizeof(double);
    w->chi = (double *)m, m += w->cols * sizeof(double);
    w->zinv = (double *)m, m += 9 * n * sizeof(double);
    w->ea = (double *)m, m += 3 * n * sizeof(double);
    w->eq = (ikd_quat *)m, m += n * sizeof(ikd_quat);
    w->col = (int *)m, m += n * sizeof(int);
    w->dof = (int *)m, m += n * sizeof(int);
    w->idle = (int *)m, m += n * sizeof(int);
    w->need = (int *)m, m += n * sizeof(int);
    w->row0 = (int *)m, m += g * sizeof(int);
    w->far = (int *)m, m += g * sizeof(int);
    w->fbase = (int *)m, m += g * sizeof(int);
    w->fstraight = (int *)m, m += g * sizeof(int);
    w->glen = (int *)m, m += g * sizeof(int);
    w->gdepth = (int *)m, m += g * sizeof(int);
    w->row_goal = (int *)m, m += rows * sizeof(int);
    w->nzr = (int *)m, m += rows * sizeof(int);
    w->gcol = (int *)m, m += g * w->cmax * sizeof(int);
    w->gpath = (int *)m, m += g * n * sizeof(int);
    w->pre = (int *)m, m += g * g * sizeof(int);
    m += g * sizeof(int); /* the spare int of the size's count */
    m = (char *)align8((size_t)m);
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

/* The rows of goal i: the first, and in *nr how many. */
static size_t goal_rows(const multi_ws *w, size_t i, size_t *nr)
{
    *nr = (w->want[i] & 1 ? 3 : 0) + (w->want[i] & 2 ? 3 : w->want[i] & 4 ? 2 : 0);
    return (size_t)w->row0[i];
}

static void setup_targets(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *start)
{
    int rows = 0;
    for (size_t i = 0; i < w->g; i++) {
        const ikd_goal *g = &p->goals[i];
        w->want[i] = (unsigned char)((g->has_position || g->has_ground ? 1 : 0) | (g->has_rotation || g->has_ground ? 2 : 0) |
                                     (g->has_aim && !g->has_rotation && !g->has_ground ? 4 : 0));
        w->row0[i] = rows; /* only the rows a goal uses: 3 for a position, 3 for a rotation, 2 for an aim */
        size_t nr;
        goal_rows(w, i, &nr);
        rows += (int)nr;
        w->tpos[i] = g->position;
        w->trot[i] = g->rotation;
        if (g->has_ground) ground_targets(p, g, start, &w->tpos[i], &w->trot[i]);
        if (g->has_aim)
            w->aim_local[i] = ikd_quat_rotate(ikd_quat_conj(p->skeleton->joints[g->joint].rotation), g->aim_axis);
    }
    w->rows = (size_t)rows;
}

/* Each goal's path (the joints that move it, root first), its compact
 * columns, its rows, and the columns each pair of goals shares. */
static void setup_paths(multi_ws *w, const ikd_multi_problem *p)
{
    const ikd_skeleton *s = p->skeleton;
    for (size_t k = 0; k < w->n; k++) w->idle[k] = w->dof[k] > 0, w->need[k] = k == 0;
    for (size_t i = 0; i < w->g; i++)
        for (long k = (long)p->goals[i].joint; k > 0 && !w->need[k]; k = s->joints[k].parent) w->need[k] = 1;
    for (size_t i = 0; i < w->g; i++) {
        int *path = &w->gpath[i * w->n], *gc = &w->gcol[i * w->cmax], d = 0, c = 0;
        for (long k = (long)p->goals[i].joint; k >= 0; k = s->joints[k].parent)
            if (w->dof[k]) path[d++] = (int)k;
        for (int a = 0, b = d - 1; a < b; a++, b--) {
            int t = path[a];
            path[a] = path[b], path[b] = t;
        }
        for (int t = 0; t < d; t++) w->idle[path[t]] = 0;
        if (p->root_free)
            for (int a = 0; a < 3; a++) gc[c++] = (int)w->cols - 3 + a;
        for (int t = 0; t < d; t++)
            for (int a = 0; a < w->dof[path[t]]; a++) gc[c++] = w->col[path[t]] + a;
        w->gdepth[i] = d, w->glen[i] = c;
        size_t nr, r0 = goal_rows(w, i, &nr);
        for (size_t r = r0; r < r0 + nr; r++) w->row_goal[r] = (int)i;
    }
    for (size_t a = 0; a < w->g; a++)
        for (size_t b = 0; b <= a; b++) {
            int m = 0, la = w->glen[a], lb = w->glen[b];
            const int *ca = &w->gcol[a * w->cmax], *cb = &w->gcol[b * w->cmax];
            while (m < la && m < lb && ca[m] == cb[m]) m++;
            w->pre[a * w->g + b] = w->pre[b * w->g + a] = m;
        }
}

/* Joint k's local rotation q (unit) kept within its limit: q itself when
 * its deviation from rest is allowed (tested without trigonometry, against
 * the bounds validation keeps in the limit), else
 * the rest rotation times the deviation's projection. */
static ikd_quat within_limit(const ikd_skeleton *s, size_t k, ikd_quat q)
{
    const ikd_skeleton_joint *j = &s->joints[k];
    if (j->limit.type == IKD_LIMIT_NONE) return q;
    ikd_quat d = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(j->rest_local), q));
    if (ikd__limit_inside_by(&j->limit, j->limit.bounds, d)) return q;
    return ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_limit_project(&j->limit, d)));
}

/* The rotation vector (axis * angle, radians, angle in [0, pi]) of q. */
static ikd_vec3 rot_vec(ikd_quat q)
{
    if (q.w < 0) q = ikd_quat_make(-q.x, -q.y, -q.z, -q.w);
    ikd_vec3 v = ikd_vec3_make(q.x, q.y, q.z);
    double s = ikd_vec3_len(v);
    if (s < 1e-15) return ikd_vec3_scale(v, 2.0);
    return ikd_vec3_scale(v, 2 * atan2(s, q.w) / s);
}

/* options.pull_max_deg in radians; INFINITY when 0 (no bound). */
static double pull_bound(const ikd_multi_problem *p)
{
    return p->pull_max_deg > 0 ? p->pull_max_deg * IKD_DEG2RAD : INFINITY;
}

/* Joints on no goal's path are left out of the iterations: with a rest
 * pull they go to their rest rotation (the nearest allowed one), where the
 * pull would take them, turning at most options.pull_max_deg when it is
 * set (a limb whose goal a clip drops between frames eases back); without
 * a pull they stay where they start. */
static void snap_idle(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local)
{
    if (!(p->rest_pull > 0)) return;
    double most = pull_bound(p);
    for (size_t k = 0; k < w->n; k++) {
        if (!w->idle[k]) continue;
        ikd_quat to = within_limit(p->skeleton, k, p->skeleton->joints[k].rest_local);
        /* the turn from local[k] to `to`, about an axis in the parent's frame */
        ikd_vec3 v = rot_vec(ikd_quat_mul(to, ikd_quat_conj(local[k])));
        double ang = ikd_vec3_len(v);
        if (!(ang > most)) local[k] = to;
        else local[k] = within_limit(p->skeleton, k,
                                     ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(ikd_vec3_scale(v, 1 / ang), most), local[k])));
    }
}

/* ---- one iteration -------------------------------------------------------- */

/* v made unit, or when it has no direction a unit vector normal to u (the
 * normal computed only then). */
static ikd_vec3 unit_or_perp(ikd_vec3 v, ikd_vec3 u)
{
    double l = ikd_vec3_len(v);
    return l > 0 && isfinite(l) ? ikd_vec3_scale(v, 1 / l) : ikd_vec3_any_perp(u);
}

/* The world axes of joint k's columns (joint_frames). */
static int joint_axes(const multi_ws *w, size_t k, ikd_vec3 ax[3])
{
    for (int a = 0; a < w->dof[k]; a++) ax[a] = w->axw[3 * k + (size_t)a];
    return w->dof[k];
}

/* 1 when w->ea holds joint k's angles at local[k] (apply set both). */
static int angles_kept(const multi_ws *w, const ikd_quat *local, size_t k)
{
    return !memcmp(&w->eq[k], &local[k], sizeof local[k]);
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
    ikd_quat F = ikd_quat_mul(k ? pose[j->parent].rotation : ikd_quat_identity(), j->rest_local);
    ikd_vec3 *ax = &w->axw[3 * k];
    int c = w->col[k];
    if (c < 0) return;
    for (int a = 0; a < w->dof[k]; a++) w->cval[c + a] = 0, w->clo[c + a] = -INFINITY, w->chi[c + a] = INFINITY;
    if (w->idle[k]) return;
    ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), local[k]);
    switch (l->type) {
    case IKD_LIMIT_HINGE: {
        ax[0] = ikd_quat_rotate(F, l->local_axis);
        w->cval[c] = angles_kept(w, local, k) ? w->ea[3 * k] : ikd__twist_angle(d, l->local_axis);
        w->clo[c] = l->min_deg * IKD_DEG2RAD, w->chi[c] = l->max_deg * IKD_DEG2RAD;
        break;
    }
    case IKD_LIMIT_BALL: {
        ikd_quat sw, tw;
        ikd_limit_swing_twist(d, l->local_axis, &sw, &tw);
        if (sw.w < 0) sw = ikd_quat_make(-sw.x, -sw.y, -sw.z, -sw.w);
        ikd_vec3 b = ikd_quat_rotate(sw, l->local_axis), sv = ikd_vec3_make(sw.x, sw.y, sw.z);
        ikd_vec3 n = unit_or_perp(sv, l->local_axis); /* the swing's own axis: radial */
        ax[0] = ikd_quat_rotate(F, b);
        ax[1] = ikd_quat_rotate(F, n);
        ax[2] = ikd_quat_rotate(F, ikd_vec3_cross(b, n));
        w->cval[c] = ikd__twist_angle(tw, l->local_axis);
        w->clo[c] = l->twist_min_deg * IKD_DEG2RAD, w->chi[c] = l->twist_max_deg * IKD_DEG2RAD;
        /* a swing past the twist axis is a swing the other way: the radial
         * range is symmetric */
        w->cval[c + 1] = 2 * atan2(ikd_vec3_len(sv), sw.w), w->chi[c + 1] = l->max_deg * IKD_DEG2RAD;
        w->clo[c + 1] = -w->chi[c + 1];
        break;
    }
    case IKD_LIMIT_EULER: {
        static const int order_axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        const int *oa = order_axes[l->order];
        double ang[3];
        if (angles_kept(w, local, k)) memcpy(ang, &w->ea[3 * k], sizeof ang);
        else ikd_limit_euler_angles(l->order, d, ang);
        /* D = R1(a) R2(b) R3(c): the gimbal axes are F e1, F R1 e2 and
         * F R1 R2 e3 = F D e3 (the joint's own e3); the middle one is normal
         * to both (sign: the order's parity) */
        ikd_vec3 e1 = ikd_vec3_make(oa[0] == 0, oa[0] == 1, oa[0] == 2), e3 = ikd_vec3_make(oa[2] == 0, oa[2] == 1, oa[2] == 2);
        ax[0] = ikd_quat_rotate(F, e1);
        ax[2] = ikd_quat_rotate(pose[k].rotation, e3);
        int even = ikd__euler_even(l->order);
        ax[1] = ikd_vec3_scale(unit_or_perp(ikd_vec3_cross(ax[0], ax[2]), ax[0]), even ? -1 : 1);
        for (int a = 0; a < 3; a++) {
            w->cval[c + a] = ang[a], w->clo[c + a] = l->euler_min_deg[a] * IKD_DEG2RAD;
            w->chi[c + a] = l->euler_max_deg[a] * IKD_DEG2RAD;
        }
        /* world vector -> rates: the inverse of [ax0 ax1 ax2] by cross products */
        ikd_vec3 r0 = ikd_vec3_cross(ax[1], ax[2]), r1 = ikd_vec3_cross(ax[2], ax[0]), r2 = ikd_vec3_cross(ax[0], ax[1]);
        double det = ikd_vec3_dot(ax[0], r0), inv = fabs(det) > 1e-3 ? 1 / det : 0;
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

static void joint_frames(multi_ws *w, const ikd_skeleton *s, const ikd_quat *local, const ikd_pose_joint *pose)
{
    for (size_t k = 0; k < s->count; k++) joint_frame(w, s, local, pose, k);
    for (size_t c = w->cols - 3; c < w->cols; c++) w->cval[c] = 0; /* a free root's translation */
    for (size_t c = 0; c < w->cols; c++)
        if (c >= w->cols - 3 || w->chi[c] - w->clo[c] >= 2 * IKD_PI - 1e-9) /* a whole turn: no bound */
            w->clo[c] = -INFINITY, w->chi[c] = INFINITY;
}

/* The two-bone limb of goal i: a position goal on a joint whose parent
 * (*m, the knee or elbow) is not the root; *u its grandparent (hip or
 * shoulder). 0 when the goal has none. */
static int limb_of(const multi_ws *w, const ikd_multi_problem *p, size_t i, long *m, long *u)
{
    const ikd_skeleton *s = p->skeleton;
    size_t j = p->goals[i].joint;
    *m = j ? s->joints[j].parent : -1;
    *u = *m > 0 ? s->joints[*m].parent : -1;
    return (w->want[i] & 1) && *u >= 0;
}

static double limb_reach(const ikd_skeleton *s, size_t j, long m)
{
    return ikd_vec3_len(s->joints[j].offset) + ikd_vec3_len(s->joints[m].offset);
}

/* 1 when goal i is a position farther from a fixed root than the bones
 * between them reach (a stretching limb's lengthened): no pose meets it. */
static int out_of_reach(const multi_ws *w, const ikd_multi_problem *p, size_t i)
{
    if (p->root_free || !(w->want[i] & 1)) return 0;
    size_t j = p->goals[i].joint;
    double extra = 0;
    long m, u;
    if (((w->want[i] & 8) || p->soften < 1) && limb_of(w, p, i, &m, &u)) {
        /* softened without stretching: aimed within the limb's reach from
         * wherever its upper joint is, so met there ("reached") */
        if (p->soften < 1 && !(p->stretch > 1)) return 0;
        extra = (p->stretch - 1) * limb_reach(p->skeleton, j, m); /* lengthened by stretch_limbs */
    }
    return ikd_vec3_dist(w->tpos[i], p->root) > w->reach[j] + extra + p->tolerance;
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
static void mark_far(multi_ws *w, const ikd_multi_problem *p)
{
    for (size_t i = 0; i < w->g; i++) w->far[i] = out_of_reach(w, p, i) ? 0 : -1;
    for (size_t i = 0; i < w->g; i++) {
        if (w->far[i] < 0) continue;
        size_t j = p->goals[i].joint;
        int own = 0;
        for (size_t b = 0; b < w->g; b++)
            if (w->far[b] < 0 && w->pre[i * w->g + b] > own) own = w->pre[i * w->g + b];
        w->far[i] = own;
        long m, u;
        int limb = limb_of(w, p, i, &m, &u);
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

/* Joint k's local rotation after turning it by its step in dq times
 * `scale` (about world axes at the current pose); *angle gets the turn. */
static ikd_quat turned(const multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                       size_t k, double scale, double *angle)
{
    ikd_vec3 ax[3], v = ikd_vec3_make(0, 0, 0);
    int na = joint_axes(w, k, ax);
    for (int a = 0; a < na; a++) v = ikd_vec3_mad(v, ax[a], w->dq[w->col[k] + a] * scale);
    double ang = *angle = ikd_vec3_len(v);
    if (!(ang > 0)) return local[k];
    /* the world turn in the parent's frame: pr^-1 R(v) pr = R(pr^-1 v) */
    ikd_vec3 vl = k ? ikd_quat_rotate(ikd_quat_conj(pose[p->skeleton->joints[k].parent].rotation), v) : v;
    return ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(ikd_vec3_scale(vl, 1 / ang), ang), local[k]));
}

/* Goal i's position target as the solve aims it on a two-bone limb (from
 * the limb's upper joint where it is now): soft IK (options.soften < 1)
 * eases it in near the limb's full extension; a goal being stretched (want
 * bit 8) is aimed MULTI_STRETCH_AIM of the limb's reach away, or 1/stretch
 * of the target's distance where that is farther, the rest left to the
 * bones' scaling (stretch_limbs). Else the goal's target. */
static ikd_vec3 limb_target(const multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i)
{
    ikd_vec3 t = w->tpos[i];
    long m, u;
    if (!(p->soften < 1 || (w->want[i] & 8)) || !limb_of(w, p, i, &m, &u)) return t;
    double reach = limb_reach(p->skeleton, p->goals[i].joint, m), k;
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

/* The task error and (with `jac`: joint_frames must be current) Jacobian
 * rows of every goal; returns 1 when every goal is met. Rotation rows are
 * scaled by the skeleton's size (one radian weighs one skeleton size). */
static int build_rows(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, ikd_goal_result *gr, int jac)
{
    const ikd_skeleton *s = p->skeleton;
    double L = s->size, rot_tol = p->rotation_tolerance_deg * IKD_DEG2RAD;
    int all = 1;
    double raw = 0;
    memset(w->e, 0, w->rows * sizeof(double));
    for (size_t i = 0; i < w->g; i++) {
        const ikd_goal *g = &p->goals[i];
        size_t j = g->joint, r0 = (size_t)w->row0[i], r1 = r0 + (w->want[i] & 1 ? 3 : 0);
        double wt = g->weight;
        /* a goal out of reach of a fixed root yields to the others ("the other
         * goals are still met"): it turns only joints of its own (mark_far),
         * and neither its error nor whether it is met counts */
        int far = w->far[i] >= 0;
        double Lr = far ? MULTI_FAR_ROTATION * L : L; /* what one radian of its rotation rows weighs */
        ikd_vec3 pj = pose[j].position, rv = ikd_vec3_make(0, 0, 0), aim = rv, b1 = rv, b2 = rv, along = rv;
        gr[i].error = 0, gr[i].rotation_error_deg = 0;
        if (w->want[i] & 1) {
            ikd_vec3 d = far && !(p->soften < 1 || (w->want[i] & 8)) /* softened or stretching: limb_target's aim */
                             ? far_pointing(w, pose, i, j, L, &along)
                             : ikd_vec3_sub(limb_target(w, p, pose, i), pj);
            double dl = ikd_vec3_len(d);
            gr[i].error = far ? ikd_vec3_dist(w->tpos[i], pj) : dl;
            if (!far) raw += wt * wt * dl * dl;
            if (dl > 0.4 * L) d = ikd_vec3_scale(d, 0.4 * L / dl); /* one step aims this far at most */
            w->e[r0] = wt * d.x, w->e[r0 + 1] = wt * d.y, w->e[r0 + 2] = wt * d.z;
            if (gr[i].error > p->tolerance && !far) all = 0;
        }
        if (w->want[i] & 2) rv = rot_vec(ikd_quat_mul(w->trot[i], ikd_quat_conj(pose[j].rotation)));
        if (w->want[i] & 4) {
            aim = ikd_quat_rotate(pose[j].rotation, w->aim_local[i]);
            ikd_vec3 to = ikd_vec3_norm_or(ikd_vec3_sub(g->aim_at, pj), aim), c = ikd_vec3_cross(aim, to);
            rv = ikd_vec3_scale(unit_or_perp(c, aim), atan2(ikd_vec3_len(c), ikd_vec3_dot(aim, to)));
            /* an aim is two rows: its error and rates normal to the axis (the
             * axis' own turn moves no aim), in a basis b1, b2 of that plane */
            b1 = ikd_vec3_any_perp(aim), b2 = ikd_vec3_cross(aim, b1);
        }
        if (w->want[i] & 6) {
            gr[i].rotation_error_deg = ikd_vec3_len(rv) * IKD_RAD2DEG;
            if (!far) raw += wt * wt * L * L * ikd_vec3_dot(rv, rv);
            if (ikd_vec3_len(rv) > 1.0) rv = ikd_vec3_scale(rv, 1.0 / ikd_vec3_len(rv));
            if (w->want[i] & 4) w->e[r1] = wt * Lr * ikd_vec3_dot(rv, b1), w->e[r1 + 1] = wt * Lr * ikd_vec3_dot(rv, b2);
            else w->e[r1] = wt * Lr * rv.x, w->e[r1 + 1] = wt * Lr * rv.y, w->e[r1 + 2] = wt * Lr * rv.z;
            if (ikd_vec3_len(rv) > rot_tol && !far) all = 0;
        }
        if (w->only_far && !far) { /* far_refine: this goal asks nothing */
            size_t nr;
            goal_rows(w, i, &nr);
            for (size_t r = r0; r < r0 + nr; r++) w->e[r] = 0;
            if (jac)
                for (size_t r = r0; r < r0 + nr; r++) memset(&w->J[r * w->cmax], 0, (size_t)w->glen[i] * sizeof(double));
            continue;
        }
        if (!jac) continue;
        /* compact columns: a free root's translation, then the path's joints
         * (the goal joint itself turns only its rotation) */
        size_t nr, cm = w->cmax, c = 0;
        goal_rows(w, i, &nr);
        for (size_t r = 0; r < nr; r++) memset(&w->J[(r0 + r) * cm], 0, (size_t)w->glen[i] * sizeof(double));
        double *Jp = &w->J[r0 * cm], *Jr = &w->J[r1 * cm];
        if (p->root_free) {
            if (w->want[i] & 1)
                for (size_t a = 0; a < 3; a++) Jp[a * cm + a] = wt;
            c = 3;
        }
        for (int t = 0; t < w->gdepth[i]; t++) {
            size_t k = (size_t)w->gpath[i * w->n + (size_t)t];
            ikd_vec3 ax[3];
            int na = joint_axes(w, k, ax);
            ikd_vec3 arm = ikd_vec3_sub(pj, pose[k].position);
            for (int a = 0; a < na; a++, c++) {
                if ((int)c < w->far[i]) continue; /* a far goal's shared prefix: not its to turn */
                if ((w->want[i] & 1) && k != j) {
                    ikd_vec3 v = ikd_vec3_cross(ax[a], arm);
                    if (far && !w->fstraight[i]) /* normal to its chord */
                        v = ikd_vec3_sub(v, ikd_vec3_scale(along, ikd_vec3_dot(v, along)));
                    else if (far && (long)k == s->joints[j].parent) /* the hinge straightens, the upper joint points */
                        v = ikd_vec3_scale(along, ikd_vec3_dot(v, along));
                    Jp[c] = wt * v.x, Jp[cm + c] = wt * v.y, Jp[2 * cm + c] = wt * v.z;
                }
                if (w->want[i] & 2) {
                    Jr[c] = wt * Lr * ax[a].x, Jr[cm + c] = wt * Lr * ax[a].y, Jr[2 * cm + c] = wt * Lr * ax[a].z;
                } else if (w->want[i] & 4) {
                    Jr[c] = wt * Lr * ikd_vec3_dot(ax[a], b1), Jr[cm + c] = wt * Lr * ikd_vec3_dot(ax[a], b2);
                }
            }
        }
    }
    w->raw = sqrt(raw);
    return all;
}

/* Two doubles as one value (the GCC/clang vector extension: SSE2 on
 * x86-64, NEON on aarch64, pairs of scalars elsewhere), loaded from any
 * address. Lane l of a sum stepping k by 2 is the scalar partial sum over
 * k = l (mod 2): the kernels below add in the order scalar code with those
 * partial sums does (the same bits) in about half the instructions. */
typedef double v2d __attribute__((vector_size(16), aligned(8), may_alias));

static inline v2d v2_load(const double *p) { return *(const v2d *)p; }

/* a . b over n entries, four partial sums (independent chains: the
 * products of short rows are latency-bound, not throughput-bound): the
 * lanes of s01 and s23. */
static double dot(const double *a, const double *b, size_t n)
{
    v2d s01 = {0, 0}, s23 = {0, 0};
    size_t k = 0;
    for (; k + 4 <= n; k += 4) s01 += v2_load(a + k) * v2_load(b + k), s23 += v2_load(a + k + 2) * v2_load(b + k + 2);
    double s0 = s01[0];
    for (; k < n; k++) s0 += a[k] * b[k];
    return (s0 + s01[1]) + (s23[0] + s23[1]);
}

/* a1 . b and a2 . b over n entries at once (b loaded once; two partial
 * sums each: the lanes of s and t). */
static void dot2(const double *a1, const double *a2, const double *b, size_t n, double *r1, double *r2)
{
    v2d s = {0, 0}, t = {0, 0};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) {
        v2d bk = v2_load(b + k);
        s += v2_load(a1 + k) * bk, t += v2_load(a2 + k) * bk;
    }
    double s0 = s[0], t0 = t[0];
    if (k < n) s0 += a1[k] * b[k], t0 += a2[k] * b[k];
    *r1 = s0 + s[1], *r2 = t0 + t[1];
}

/* x[0..n) += a * y[0..n) (each entry on its own: the same bits as the
 * scalar loop). */
static void axpy(double *x, double a, const double *y, size_t n)
{
    v2d av = {a, a};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) *(v2d *)(x + k) = v2_load(x + k) + v2_load(y + k) * av;
    if (k < n) x[k] += y[k] * a;
}

/* a1 . b1, a2 . b1, a1 . b2 and a2 . b2 over n entries at once (each as
 * dot2 adds it: the same bits), into r[0..3]. */
static void dot22(const double *a1, const double *a2, const double *b1, const double *b2, size_t n, double r[4])
{
    v2d s11 = {0, 0}, s21 = {0, 0}, s12 = {0, 0}, s22 = {0, 0};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) {
        v2d x1 = v2_load(a1 + k), x2 = v2_load(a2 + k), y1 = v2_load(b1 + k), y2 = v2_load(b2 + k);
        s11 += x1 * y1, s21 += x2 * y1, s12 += x1 * y2, s22 += x2 * y2;
    }
    double t11 = s11[0], t21 = s21[0], t12 = s12[0], t22 = s22[0];
    if (k < n) t11 += a1[k] * b1[k], t21 += a2[k] * b1[k], t12 += a1[k] * b2[k], t22 += a2[k] * b2[k];
    r[0] = t11 + s11[1], r[1] = t21 + s21[1], r[2] = t12 + s12[1], r[3] = t22 + s22[1];
}

/* A0 = J J^T (lower triangle): two rows' product over the columns their
 * goals share, two by two where the columns' rows are of one goal too. */
static void form_product(multi_ws *w)
{
    size_t m = w->rows, cm = w->cmax;
    for (size_t r = 0; r < m;) {
        const int *pr = &w->pre[(size_t)w->row_goal[r] * w->g];
        const double *Jr = &w->J[r * cm];
        if (r + 1 < m && w->row_goal[r + 1] == w->row_goal[r]) { /* two rows of one goal at once */
            const double *Js = Jr + cm;
            for (size_t c = 0; c <= r;) {
                const double *Jc = &w->J[c * cm];
                size_t n = (size_t)pr[w->row_goal[c]];
                if (c + 1 < r && w->row_goal[c + 1] == w->row_goal[c]) {
                    double q[4];
                    dot22(Jr, Js, Jc, Jc + cm, n, q);
                    w->A0[r * m + c] = q[0], w->A0[(r + 1) * m + c] = q[1];
                    w->A0[r * m + c + 1] = q[2], w->A0[(r + 1) * m + c + 1] = q[3];
                    c += 2;
                } else {
                    dot2(Jr, Js, Jc, n, &w->A0[r * m + c], &w->A0[(r + 1) * m + c]);
                    c++;
                }
            }
            w->A0[(r + 1) * m + r + 1] = dot(Js, Js, (size_t)pr[w->row_goal[r]]);
            r += 2;
        } else {
            for (size_t c = 0; c <= r; c++) w->A0[r * m + c] = dot(Jr, &w->J[c * cm], (size_t)pr[w->row_goal[c]]);
            r++;
        }
    }
}

/* A = A0 + diag(w->rdamp), factored in place (Cholesky, lower; w->dinv the
 * reciprocals of its diagonal); 0, or -1 when not positive definite. Rows
 * i and i + 1 against rows k and k + 1 at once (dot22 over the first k
 * entries, entry k of the second pair added after): each of the four rows
 * is read once for four entries. */
static int factor(multi_ws *w)
{
    size_t m = w->rows, i = 0;
    const double *l2 = w->rdamp;
    for (; i + 1 < m; i += 2) {
        double *Ai = &w->A[i * m], *Aj = Ai + m, s;
        const double *Bi = &w->A0[i * m], *Bj = Bi + m;
        for (size_t k = 0; k < i; k += 2) { /* i is even: k + 1 < i */
            const double *Ak = &w->A[k * m], *Al = Ak + m;
            double q[4];
            dot22(Ai, Aj, Ak, Al, k, q);
            Ai[k] = (Bi[k] - q[0]) * w->dinv[k];
            Aj[k] = (Bj[k] - q[1]) * w->dinv[k];
            Ai[k + 1] = (Bi[k + 1] - (q[2] + Ai[k] * Al[k])) * w->dinv[k + 1];
            Aj[k + 1] = (Bj[k + 1] - (q[3] + Aj[k] * Al[k])) * w->dinv[k + 1];
        }
        s = Bi[i] + l2[i] - dot(Ai, Ai, i);
        if (!(s > 0)) return -1;
        Ai[i] = sqrt(s), w->dinv[i] = 1 / Ai[i];
        Aj[i] = (Bj[i] - dot(Aj, Ai, i)) * w->dinv[i];
        s = Bj[i + 1] + l2[i + 1] - dot(Aj, Aj, i + 1);
        if (!(s > 0)) return -1;
        Aj[i + 1] = sqrt(s), w->dinv[i + 1] = 1 / Aj[i + 1];
    }
    if (i < m) {
        double *Ai = &w->A[i * m];
        for (size_t k = 0; k < i; k++) Ai[k] = (w->A0[i * m + k] - dot(Ai, &w->A[k * m], k)) * w->dinv[k];
        double s = w->A0[i * m + i] + l2[i] - dot(Ai, Ai, i);
        if (!(s > 0)) return -1;
        Ai[i] = sqrt(s), w->dinv[i] = 1 / Ai[i];
    }
    return 0;
}

/* The factor of A - v v^T from that of A (a rank-one downdate, O(m^2):
 * a locked column's contribution taken out); v is overwritten. 0, or -1
 * when the downdate loses definiteness (refactor then). */
static int downdate(multi_ws *w, double *v)
{
    size_t m = w->rows;
    for (size_t k = 0; k < m; k++) {
        if (v[k] == 0) continue; /* this row's column entry is zero: L's column k stays */
        double lkk = w->A[k * m + k], r2 = lkk * lkk - v[k] * v[k];
        if (!(r2 > 1e-12 * lkk * lkk)) return -1;
        double r = sqrt(r2), il = w->dinv[k], ir = 1 / r; /* one division: dinv holds 1 / lkk */
        double c = r * il, s = v[k] * il, ic = lkk * ir;
        w->A[k * m + k] = r, w->dinv[k] = ir;
        for (size_t i = k + 1; i < m; i++) {
            double *l = &w->A[i * m + k];
            *l = (*l - s * v[i]) * ic;
            v[i] = c * v[i] - s * *l;
        }
    }
    return 0;
}

/* x = A^-1 b with the factor; b and x may be the same. */
static void solve_factored(const multi_ws *w, const double *b, double *x)
{
    size_t m = w->rows;
    for (size_t i = 0; i < m; i++) x[i] = (b[i] - dot(&w->A[i * m], x, i)) * w->dinv[i];
    for (size_t t = m; t-- > 0;) { /* L^T x = y by rows of L: no chain of dependent sums */
        double xt = x[t] *= w->dinv[t];
        axpy(x, -xt, &w->A[t * m], t);
    }
}

/* out = J^T v over all columns (goal by goal: the goal's rows added into
 * its compact columns (w->zc) in row order, contiguous; then one scattered
 * add per compact column). */
static void jt(multi_ws *w, const double *v, double *out)
{
    memset(out, 0, w->cols * sizeof(double));
    for (size_t i = 0; i < w->g; i++) {
        size_t nr, r0 = goal_rows(w, i, &nr), cm = w->cmax, n = (size_t)w->glen[i];
        const int *gc = &w->gcol[i * cm];
        double *acc = w->zc;
        memset(acc, 0, n * sizeof(double));
        for (size_t r = 0; r < nr; r++) axpy(acc, v[r0 + r], &w->J[(r0 + r) * cm], n);
        for (size_t c = 0; c < n; c++) out[gc[c]] += acc[c];
    }
}

/* y = e - k J z (goal by goal: z gathered once into the goal's compact
 * columns). */
static void residual(multi_ws *w, double k)
{
    for (size_t i = 0; i < w->g; i++) {
        size_t nr, r0 = goal_rows(w, i, &nr), n = (size_t)w->glen[i];
        const int *gc = &w->gcol[i * w->cmax];
        for (size_t c = 0; c < n; c++) w->zc[c] = w->z[gc[c]];
        for (size_t r = r0; r < r0 + nr; r++) w->y[r] = w->e[r] - k * dot(&w->J[r * w->cmax], w->zc, n);
    }
}

/* Zero the compact entries of every newly locked column, move its fixed
 * step (w->fix) into the task error, and take its contribution out of A0
 * and of its factor; returns 0, or -1 when a downdate failed (the factor
 * must be formed anew from A0). */
static int zero_locked(multi_ws *w)
{
    size_t m = w->rows;
    int rc = 0;
    for (size_t col = 0; col < w->cols; col++) {
        if (w->locked[col] != 1) continue;
        w->locked[col] = 2;
        /* the column over every row, then A0 -= v v^T */
        memset(w->t, 0, m * sizeof(double));
        for (size_t i = 0; i < w->g; i++) {
            size_t nr, r0 = goal_rows(w, i, &nr);
            const int *gc = &w->gcol[i * w->cmax];
            for (int c = 0; c < w->glen[i]; c++)
                if ((size_t)gc[c] == col) { /* at most once per goal */
                    for (size_t r = r0; r < r0 + nr; r++) {
                        double *x = &w->J[r * w->cmax + (size_t)c];
                        w->t[r] = *x;
                        *x = 0;
                    }
                    break;
                }
        }
        size_t nz = 0;
        for (size_t r = 0; r < m; r++)
            if (w->t[r] != 0) { /* the rows the column moves: the error and A0 change there only */
                w->e[r] -= w->t[r] * w->fix[col]; /* what its step does is done */
                w->nzr[nz++] = (int)r;
            }
        for (size_t a = 0; a < nz; a++) {
            size_t r = (size_t)w->nzr[a];
            for (size_t b = 0; b <= a; b++) w->A0[r * m + (size_t)w->nzr[b]] -= w->t[r] * w->t[w->nzr[b]];
        }
        if (rc == 0) rc = downdate(w, w->t);
    }
    return rc;
}

/* The secondary task, in column space: each joint's deviation from rest
 * pulled back by rest_pull, and a limb's middle joint toward its pole. */
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

static void secondary(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose)
{
    const ikd_skeleton *s = p->skeleton;
    memset(w->z, 0, w->cols * sizeof(double));
    for (size_t k = 0; k < s->count; k++) {
        w->zw[k] = ikd_vec3_make(0, 0, 0);
        if (!w->dof[k] || w->idle[k] || p->rest_pull <= 0 || w->dof[k] == 1) continue; /* hinges: below */
        const ikd_skeleton_joint *j = &s->joints[k];
        ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), local[k]);
        ikd_vec3 back = rot_vec(ikd_quat_conj(d)); /* in the joint's rest frame */
        ikd_quat frame = ikd_quat_mul(k ? pose[j->parent].rotation : ikd_quat_identity(), j->rest_local);
        w->zw[k] = ikd_quat_rotate(frame, back); /* the whole way back to rest */
    }
    for (size_t i = 0; i < w->g; i++) { /* poles: turn the limb's upper joint so the middle joint moves toward it */
        const ikd_goal *g = &p->goals[i];
        long mid = s->joints[g->joint].parent, up = mid > 0 ? s->joints[mid].parent : -1;
        if (!g->has_pole || up < 0 || w->dof[up] != 3) continue;
        ikd_vec3 axis = ikd_vec3_norm_or(ikd_vec3_sub(pose[g->joint].position, pose[up].position), ikd_vec3_make(0, 1, 0));
        ikd_vec3 have = ikd_vec3_reject(ikd_vec3_sub(pose[mid].position, pose[up].position), axis);
        ikd_vec3 want = ikd_vec3_reject(ikd_vec3_sub(g->pole, pose[up].position), axis);
        if (ikd_vec3_len(have) < 1e-9 * s->size || ikd_vec3_len(want) < 1e-9 * s->size) continue;
        /* a straight limb has no bend to turn: the pull fades in over the
         * first MULTI_POLE_BEND of it (the middle joint's distance from the
         * limb's line, over the upper bone) */
        double bend = ikd_vec3_len(have) / ikd_vec3_len(s->joints[mid].offset);
        ikd_vec3 turn = ikd_vec3_scale(axis, ikd_vec3_signed_angle(have, want, axis) * 0.5 * fmin(1, bend / MULTI_POLE_BEND));
        w->zw[up] = ikd_vec3_add(w->zw[up], turn);
    }
    for (size_t k = 0; k < s->count; k++) {
        if (w->dof[k] == 3 && !w->idle[k]) to_columns(w, s, k, w->zw[k]); /* an idle joint has no column frame: its z stays 0 */
        if (w->dof[k] == 1 && !w->idle[k] && p->rest_pull > 0) w->z[w->col[k]] = -w->cval[w->col[k]]; /* a hinge: back by its angle */
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

/* Turn every joint by its step (world rotation vectors, scaled so none
 * turns more than MULTI_MAX_STEP), move a free root, then put every joint
 * back within its limits. Returns the largest turn. */
static double apply(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, const ikd_pose_joint *pose,
                    ikd_vec3 *root, double max_step)
{
    const ikd_skeleton *s = p->skeleton;
    double worst = 0;
    for (size_t k = 0; k < s->count; k++)
        if (w->dof[k]) {
            double q = 0;
            for (int a = 0; a < w->dof[k]; a++) q += w->dq[w->col[k] + a] * w->dq[w->col[k] + a];
            worst = fmax(worst, sqrt(q));
        }
    double scale = worst > max_step ? max_step / worst : 1;
    for (size_t k = 0; k < s->count; k++) {
        const ikd_skeleton_joint *j = &s->joints[k];
        double ang;
        if (!w->dof[k] || w->idle[k]) continue; /* fixed: at rest since the start; idle: see snap_idle */
        if (j->limit.type == IKD_LIMIT_EULER) { /* its columns are its angles' rates: the angles move by the step */
            size_t c = (size_t)w->col[k];
            double *a = &w->ea[3 * k];
            for (int t = 0; t < 3; t++) a[t] = stepped(w, c + (size_t)t, scale);
            local[k] = w->eq[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_limit_euler_quat(j->limit.order, a)));
            for (int t = 0; t < 3; t++) a[t] = ikd__wrap_pi(a[t]); /* a whole turn's range is unbounded */
            continue;
        }
        if (j->limit.type == IKD_LIMIT_HINGE) { /* a turn about its own axis: the angle moves by the step */
            double a = stepped(w, (size_t)w->col[k], scale);
            local[k] = w->eq[k] = ikd_quat_norm(ikd_quat_mul(j->rest_local, ikd_quat_axis_angle(j->limit.local_axis, a)));
            w->ea[3 * k] = ikd__wrap_pi(a);
            continue;
        }
        local[k] = turned(w, p, local, pose, k, scale, &ang);
        local[k] = within_limit(s, k, local[k]);
    }
    if (p->root_free)
        *root = ikd_vec3_add(*root, ikd_vec3_make(w->dq[w->cols - 3], w->dq[w->cols - 2], w->dq[w->cols - 1]));
    return worst * scale;
}

/* s plus the squares of goal i's task error rows. */
static double add_goal_sq(const multi_ws *w, size_t i, double s)
{
    size_t nr, r0 = goal_rows(w, i, &nr);
    for (size_t r = r0; r < r0 + nr; r++) s += w->e[r] * w->e[r];
    return s;
}

/* The damping for a task error of norm `en`: options.damping times it (at
 * most the skeleton's size), and never quite 0. */
static double damping_for(const ikd_multi_problem *p, double en)
{
    return p->damping * fmin(en, p->skeleton->size) + 1e-9 * p->skeleton->size;
}

/* The task error's norm over the goals within reach (the rows of a goal
 * out of reach are damped by their own: primary_step). */
static double task_norm(const multi_ws *w)
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
 * minima: loops that did not close.) 0, or -1 when the system cannot be
 * solved. */
static int primary_step(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                        double lambda, double mu, double kmin)
{
    int pull = mu > 0;
    for (size_t i = 0; i < w->g; i++) pull |= p->goals[i].has_pole;
    if (pull) secondary(w, p, local, pose);
    else memset(w->z, 0, w->cols * sizeof(double));
    double c = lambda * lambda + mu * mu, k = c > 0 ? mu * mu / c : 0;
    if (mu > 0 && k < kmin) k = kmin; /* near the goals: settle while meeting them */
    memset(w->locked, 0, w->cols);
    form_product(w);
    /* each row damped by c; a far goal's rows (a block of their own: no
     * column is both theirs and another goal's) by its own error instead */
    for (size_t r = 0; r < w->rows; r++) w->rdamp[r] = c;
    for (size_t i = 0; i < w->g; i++) {
        if (w->far[i] < 0) continue;
        size_t nr, r0 = goal_rows(w, i, &nr);
        double lf = damping_for(p, sqrt(add_goal_sq(w, i, 0)));
        for (size_t r = r0; r < r0 + nr; r++) w->rdamp[r] = lf * lf + mu * mu;
    }
    int fresh = 0; /* 1 while w->A is the factor of A0 + diag(rdamp) */
    for (int round = 0; round < 4; round++) {
        if (!fresh && factor(w) != 0) return -1;
        residual(w, k); /* e - J x0 */
        solve_factored(w, w->y, w->y);
        jt(w, w->y, w->dq);
        for (size_t col = 0; col < w->cols; col++) w->dq[col] = w->locked[col] ? w->fix[col] : w->dq[col] + k * w->z[col];
        int locked = 0;
        for (size_t col = 0; col < w->cols; col++) {
            if (w->locked[col] || !column_leaves(w, col)) continue;
            double bound = w->cval[col] + w->dq[col] > w->chi[col] ? w->chi[col] : w->clo[col];
            w->fix[col] = bound - w->cval[col];
            if (!(fabs(w->fix[col]) < fabs(w->dq[col]))) w->fix[col] = 0; /* at or past it already: stays */
            w->dq[col] = w->fix[col];
            w->z[col] = 0;
            w->locked[col] = 1;
            locked = 1;
        }
        if (!locked) break;
        fresh = zero_locked(w) == 0;
    }
    return 0;
}


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
        if (gr[i].error <= p->tolerance || out_of_reach(w, p, i)) continue;
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
        ikd__skeleton_fk_some(s, root, local, pose, w->need);
        joint_frames(w, s, local, pose);
        build_rows(w, p, pose, gr, 1);
        if (primary_step(w, p, local, pose, 1e-9 * s->size, 0, 0) != 0) break;
        it++;
        if (apply(w, p, local, pose, &root, MULTI_MAX_STEP) < MULTI_SETTLED) break;
    }
    w->only_far = 0;
    memcpy(w->best, local, s->count * sizeof *local);
    return it;
}

/* One damped least-squares descent from `local` and *root: iterations
 * until the goals are met and the pose settles, the error stalls, or the
 * budget, deadline or cancel flag ends it. The best pose of the descent is
 * left in w->best and *root; *fresh is 1 when pose and gr are still that
 * pose's (its evaluation was the last). Returns the iterations taken. */
static int descend(multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose, ikd_vec3 *root,
                   ikd_goal_result *gr, int budget, int *timed_out, int *fresh)
{
    const ikd_skeleton *s = p->skeleton;
    double best = INFINITY, progress = INFINITY, L = s->size;
    ikd_vec3 best_root = *root;
    int it = 0, stall = 0, nudged = 0, settle = 0, leapt = 0, was_met = 0, lost = 0, last = 0, cycled = 0;
    double prev_moved = 0, leap_rate = 0;
    ikd_vec3 held_root = *root;
    /* options.pull_max_deg: the turn the pull's steps may still take */
    double pull_left = pull_bound(p);
    mark_far(w, p);
    for (;;) {
        ikd__skeleton_fk_some(s, *root, local, pose, w->need); /* the joints the iteration reads */
        if (!last) joint_frames(w, s, local, pose);
        int met = build_rows(w, p, pose, gr, !last);
        double en = w->raw; /* unclamped: a goal far off still shows progress */
        if (last) { /* the settle's last step, evaluated (its errors: no step follows): kept when it meets the goals */
            if (met) best_root = *root, *fresh = 1, memcpy(w->best, local, s->count * sizeof *local);
            else *fresh = 0;
            break;
        }
        /* A settling step (not a leap) that loses the goals: where their
         * Jacobian is nearly singular the pull's compromise with them (about
         * mu^2 / sigma^2 of the deviation) is beyond the tolerance, and the
         * pull and the goals can cycle to the settling's cap. The met pose
         * the first such step left is held; the second time (MULTI_LOSSES)
         * the settling ends there. Fed back, that pose loses the goals the
         * same way and comes back: a fixed point. */
        if (was_met && !met && !leapt && lost++ == 0) held_root = best_root, memcpy(w->held, w->best, s->count * sizeof *local);
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
            break; /* no progress: held by limits, reach or the pull (a restart may do better) */
        } else if (stall == 4 && !nudged && nudge_hinges(w, p, gr, local)) {
            nudged = 1;
            continue;
        }
        if (it >= budget) break;
        if (p->cancel && atomic_load_explicit(p->cancel, memory_order_relaxed)) { *timed_out = 1; break; }
        if (p->deadline_ns && ikd_clock_ns() > p->deadline_ns) { *timed_out = 1; break; }
        double lambda = damping_for(p, task_norm(w));
        /* a pull that holds unmet goals off (their error stalls) lets go */
        double mu = stall >= 3 || !(pull_left > 0) ? 0 : p->rest_pull * MULTI_PULL * L;
        int pulling = mu > 0 && en < MULTI_NEAR * L; /* near the goals: the step is mostly the pull's */
        if (primary_step(w, p, local, pose, lambda, mu, en < MULTI_NEAR * L ? MULTI_NEAR_PULL : 0) != 0) break;
        it++;
        double leap = 0;
        if (met && settle > 0 && !leapt) leap = extrapolate(w);
        else memcpy(w->dqp, w->dq, w->cols * sizeof(double));
        leapt = leap > 0;
        double most = en > MULTI_FAR * L ? MULTI_FAR_STEP : MULTI_MAX_STEP;
        if (pulling && pull_left < most) most = pull_left; /* the whole step shortened: the goals' part is small */
        double moved = apply(w, p, local, pose, root, most);
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
    int far = 0;
    for (size_t i = 0; i < w->g; i++) far |= w->far[i] >= 0;
    if (cycled && far && !*timed_out) {
        it += far_refine(w, p, local, pose, best_root, gr, budget - it);
        *fresh = 0;
    }
    return it;
}

/* How far w->best (at `root`) is from meeting the reachable goals: 0 when
 * every one is met (goals known out of reach left out); gr gets the goals'
 * errors (and pose the best pose's), evaluated anew unless `fresh` says
 * they already are. */
static double score_best(multi_ws *w, const ikd_multi_problem *p, ikd_vec3 root, ikd_pose_joint *pose,
                         ikd_goal_result *gr, int fresh)
{
    const ikd_skeleton *s = p->skeleton;
    if (!fresh) {
        ikd__skeleton_fk_some(s, root, w->best, pose, w->need);
        build_rows(w, p, pose, gr, 0);
    }
    double sc = 0;
    for (size_t i = 0; i < w->g; i++) {
        if (out_of_reach(w, p, i)) continue;
        if (gr[i].error > p->tolerance) sc += gr[i].error;
        if (gr[i].rotation_error_deg > p->rotation_tolerance_deg) sc += gr[i].rotation_error_deg * IKD_DEG2RAD * s->size;
    }
    return sc;
}

/* Restart r's start pose: every joint that moves a goal somewhere inside
 * its limits (deterministic: a fixed sequence of pseudo-random numbers);
 * the others stay (snap_idle). */
static void restart_pose(const ikd_skeleton *s, const int *idle, int r, ikd_quat *local)
{
    unsigned long long x = 0x9E3779B97F4A7C15ull * (unsigned long long)(r + 1);
    for (size_t k = 0; k < s->count; k++) {
        double u[4];
        for (int t = 0; t < 4; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            u[t] = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
        }
        const ikd_limit *l = &s->joints[k].limit;
        ikd_quat d;
        if (l->type == IKD_LIMIT_HINGE) {
            d = ikd_quat_axis_angle(l->local_axis, (l->min_deg + u[0] * (l->max_deg - l->min_deg)) * IKD_DEG2RAD);
        } else {
            ikd_vec3 axis = ikd_vec3_norm_or(ikd_vec3_make(u[0] - 0.5, u[1] - 0.5, u[2] - 0.5), ikd_vec3_make(1, 0, 0));
            d = ikd_limit_project(l, ikd_quat_axis_angle(axis, u[3] * 1.5));
        }
        if (!idle[k]) local[k] = ikd_quat_norm(ikd_quat_mul(s->joints[k].rest_local, d));
    }
}

/* options.stretch without soften: marks (want bit 8) the limb goals that
 * `pose` leaves unmet (gr: its errors) beyond their limb's reach; returns
 * how many. */
static int mark_stretch(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, const ikd_goal_result *gr)
{
    int marked = 0;
    for (size_t i = 0; i < w->g; i++) {
        long m, u;
        if (gr[i].error <= p->tolerance || !limb_of(w, p, i, &m, &u)) continue;
        double reach = limb_reach(p->skeleton, p->goals[i].joint, m);
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
        if (!limb_of(w, p, i, &m, &u) || !((w->want[i] & 8) || p->soften < 1)) continue;
        size_t j = p->goals[i].joint;
        ikd_vec3 pu = pose[u].position, aimed = limb_target(w, p, pose, i);
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
            gr[i].status = out_of_reach(w, p, i) ? IKD_GOAL_UNREACHABLE : IKD_GOAL_NOT_REACHED;
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
    for (size_t k = 0; k < s->count; k++) local[k] = within_limit(s, k, ikd_quat_norm(local[k])); /* the start pose */
    for (size_t k = 0; k < s->count; k++) w.eq[k] = ikd_quat_make(NAN, NAN, NAN, NAN); /* no angles kept yet */
    ikd_skeleton_fk(s, root, local, pose);
    setup_targets(&w, p, pose);
    setup_paths(&w, p);
    snap_idle(&w, p, local);
    /* A descent from the start pose, then (while reachable goals stay unmet
     * and iterations are left) from poses spread over the limits: a local
     * minimum of one start (an arm's elbow on the wrong side, against its
     * limit) is rarely one of another. The best pose wins. */
    int it = 0, timed_out = 0;
    double keep_score = INFINITY;
    ikd_vec3 keep_root = root;
    int stretching = 0; /* options.stretch: 1 in the descent after limb goals were marked, 2 after it */
    int kept = 0;       /* 1 while pose and gr are the kept pose's */
    for (int r = 0; r <= MULTI_RESTARTS; r++) {
        ikd_vec3 rt = p->root;
        if (stretching == 1) rt = keep_root, memcpy(local, w.keep, s->count * sizeof *local); /* on from the best */
        else if (r) restart_pose(s, w.idle, r, local);
        int budget = p->max_iterations - it;
        if (r && stretching != 1 && budget > MULTI_RESTART_ITERATIONS)
            budget = MULTI_RESTART_ITERATIONS; /* a restart converges fast or not at all */
        int fresh = 0;
        it += descend(&w, p, local, pose, &rt, gr, budget, &timed_out, &fresh);
        double sc = score_best(&w, p, rt, pose, gr, fresh);
        kept = 0; /* pose and gr: this descent's best */
        if (stretching == 1) keep_score = INFINITY; /* the scores before measured other targets */
        if (sc < keep_score) {
            keep_score = sc, keep_root = rt, kept = 1;
            memcpy(w.keep, w.best, s->count * sizeof *local);
        }
        if (stretching == 1) stretching = 2;
        /* after the first descent, limb goals left beyond their limb's reach
         * (counted out of reach or not) are aimed into it; the bones
         * lengthen at the end (stretch_limbs) */
        if (r == 0 && p->stretch > 1 && p->soften >= 1 && !timed_out && mark_stretch(&w, p, pose, gr)) {
            stretching = 1;
            continue;
        }
        if (keep_score == 0 || timed_out || it >= p->max_iterations) break;
    }
    memcpy(local, w.keep, s->count * sizeof *local);
    root = keep_root;
    if (!kept) { /* pose and gr are another descent's */
        ikd__skeleton_fk_some(s, root, local, pose, w.need);
        build_rows(&w, p, pose, gr, 0);
    }
    size_t needed = 0;
    for (size_t k = 0; k < s->count; k++) needed += (size_t)w.need[k];
    if (needed < s->count) ikd_skeleton_fk(s, root, local, pose); /* the joints the iterations did not read too */
    int all;
    finish_goals(&w, p, gr, &all);
    for (size_t i = 0; i < w.g; i++) gr[i].stretch = 1;
    if (p->stretch > 1) all = stretch_limbs(&w, p, pose, gr);
    for (size_t i = 0; p->soften < 1 && i < w.g; i++) /* met where softening aims it; the distance to the goal itself */
        if ((w.want[i] & 1) && gr[i].stretch == 1) gr[i].error = ikd_vec3_dist(pose[p->goals[i].joint].position, w.tpos[i]);
    res->iterations = it;
    res->root = root;
    res->status = timed_out && !all ? IKD_MULTI_DEADLINE : all ? IKD_MULTI_REACHED : IKD_MULTI_PARTIAL;
    return IKD_E_OK;
}
