/* solve.c - problem defaults, validation and the dispatcher that runs one solver (auto picks). */
#include "ikd/solve.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "iter.h"
#include "solvers.h"

static const char *const ikd_solver_names[IKD_SOLVER__COUNT] = {
    [IKD_SOLVER_AUTO] = "auto",       [IKD_SOLVER_TWO_BONE] = "two_bone", [IKD_SOLVER_CCD] = "ccd",
    [IKD_SOLVER_FABRIK] = "fabrik",   [IKD_SOLVER_JACOBIAN] = "jacobian",
};

const char *ikd_solver_name(ikd_solver s)
{
    return ((int)s >= 0 && s < IKD_SOLVER__COUNT) ? ikd_solver_names[s] : NULL;
}

int ikd_solver_from_name(const char *name, ikd_solver *out)
{
    for (int i = 0; i < IKD_SOLVER__COUNT; i++) {
        if (strcmp(name, ikd_solver_names[i]) == 0) {
            *out = (ikd_solver)i;
            return 0;
        }
    }
    return -1;
}

/* The method names, indexed by ikd_jacobian_method; also the "method" option's choices. */
static const char *const jacobian_methods[] = {"dls", "transpose", NULL};

const char *ikd_jacobian_method_name(ikd_jacobian_method m)
{
    return m == IKD_JACOBIAN_TRANSPOSE ? jacobian_methods[1] : jacobian_methods[0];
}

#define SOLVER_BIT(s) (1u << (s))
#define ITERATIVE (SOLVER_BIT(IKD_SOLVER_CCD) | SOLVER_BIT(IKD_SOLVER_FABRIK) | SOLVER_BIT(IKD_SOLVER_JACOBIAN))
#define ALL_SOLVERS (ITERATIVE | SOLVER_BIT(IKD_SOLVER_TWO_BONE))
#define JAC SOLVER_BIT(IKD_SOLVER_JACOBIAN)

static const ikd_option_info option_table[] = {
    {"max_iterations", IKD_OPT_INT, offsetof(ikd_options, max_iterations), IKD_DEFAULT_MAX_ITERATIONS, 1,
     IKD_MAX_ITERATIONS_LIMIT, 0, 0, NULL, ITERATIVE,
     "iteration cap (ccd sweep, fabrik pass, jacobian step); solvers also stop when reached or stalled"},
    {"tolerance", IKD_OPT_NUMBER, offsetof(ikd_options, tolerance), IKD_DEFAULT_TOLERANCE, 0, 1e300, 0, 0, NULL,
     ALL_SOLVERS, "effector-target distance counted as reached, chain length unit"},
    {"max_step_deg", IKD_OPT_NUMBER, offsetof(ikd_options, max_step_deg), IKD_DEFAULT_MAX_STEP_DEG, 0, 180, 1, 0,
     NULL, SOLVER_BIT(IKD_SOLVER_CCD) | JAC, "most a joint turns in one iteration, degrees; 180 = no cap"},
    {"damping", IKD_OPT_NUMBER, offsetof(ikd_options, damping), IKD_DEFAULT_DAMPING, 0, 100, 0, 0, NULL, JAC,
     "dls damping factor: damping = this x the remaining task error"},
    {"method", IKD_OPT_ENUM, offsetof(ikd_options, jacobian_method), IKD_JACOBIAN_DLS, 0, 1, 0, 0, jacobian_methods,
     JAC, "dls (damped least squares) or transpose"},
    {"rotation_weight", IKD_OPT_NUMBER, offsetof(ikd_options, rotation_weight), IKD_DEFAULT_ROTATION_WEIGHT, 0, 1e6,
     1, 0, NULL, JAC, "with target.rotation: weight of 1 radian against one chain length of position error"},
    {"rotation_tolerance_deg", IKD_OPT_NUMBER, offsetof(ikd_options, rotation_tolerance_deg),
     IKD_DEFAULT_ROTATION_TOLERANCE_DEG, 0, 180, 0, 0, NULL, JAC,
     "with target.rotation: orientation error counted as reached, degrees"},
    {"soften", IKD_OPT_NUMBER, offsetof(ikd_options, soften), IKD_DEFAULT_SOFTEN, 0, 1, 1, 0, NULL,
     SOLVER_BIT(IKD_SOLVER_TWO_BONE),
     "soft IK: targets beyond soften x reach are eased in (no pop or jitter near full extension); 1 = off"},
    {"stretch", IKD_OPT_NUMBER, offsetof(ikd_options, stretch), IKD_DEFAULT_STRETCH, 1, 100, 0, 0, NULL,
     SOLVER_BIT(IKD_SOLVER_TWO_BONE),
     "most both bones may lengthen alike to reach a target beyond reach (bone lengths change); 1 = off"},
};

const ikd_option_info *ikd_options_table(size_t *count)
{
    *count = sizeof option_table / sizeof option_table[0];
    return option_table;
}

int ikd_jacobian_method_from_name(const char *name, ikd_jacobian_method *out)
{
    for (int i = 0; jacobian_methods[i]; i++) {
        if (strcmp(name, jacobian_methods[i]) == 0) {
            *out = (ikd_jacobian_method)i;
            return 0;
        }
    }
    return -1;
}

const char *ikd_status_name(ikd_status s)
{
    switch (s) {
    case IKD_STATUS_REACHED: return "reached";
    case IKD_STATUS_UNREACHABLE: return "unreachable";
    case IKD_STATUS_MAX_ITERATIONS: return "max_iterations";
    case IKD_STATUS_DEADLINE: return "deadline";
    }
    return "unknown";
}

void ikd_options_default(ikd_options *opt)
{
    memset(opt, 0, sizeof *opt);
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++) {
        const ikd_option_info *o = &option_table[i];
        char *field = (char *)opt + o->offset;
        if (o->type == IKD_OPT_NUMBER) *(double *)field = o->def;
        else *(int *)field = (int)o->def;
    }
}

unsigned long long ikd_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void ikd_problem_init(ikd_problem *p)
{
    memset(p, 0, sizeof *p);
    p->solver = IKD_SOLVER_AUTO;
    p->target_rotation = ikd_quat_identity();
    ikd_options_default(&p->options);
}

static int ikd_has_constraints(const ikd_problem *p)
{
    for (size_t i = 0; i < p->joint_count; i++)
        if (p->joints[i].constraint.type != IKD_CONSTRAINT_NONE) return 1;
    return 0;
}

/* The solvers auto tries, in order, until one reaches (the closest pose is
 * kept); the rules come from what `make bench` measured. */
static size_t auto_plan(const ikd_problem *p, ikd_solver plan[3])
{
    if (p->joint_count == 3 && !ikd_has_constraints(p)) {
        plan[0] = IKD_SOLVER_TWO_BONE;
        return 1;
    }
    if (p->has_target_rotation) {
        plan[0] = IKD_SOLVER_JACOBIAN;
        return 1;
    }
    if (!ikd_has_constraints(p)) {
        plan[0] = IKD_SOLVER_CCD;
        return 1;
    }
    /* constrained: FABRIK is fastest on long hinge chains, damped least
     * squares on short ones and with ball joints; CCD gets around the limits
     * where both settle short */
    int has_ball = 0;
    for (size_t i = 0; i < p->joint_count; i++) has_ball |= p->joints[i].constraint.type == IKD_CONSTRAINT_BALL;
    int long_chain = p->joint_count >= 12 && !has_ball;
    plan[0] = long_chain ? IKD_SOLVER_FABRIK : IKD_SOLVER_JACOBIAN;
    plan[1] = long_chain ? IKD_SOLVER_JACOBIAN : IKD_SOLVER_FABRIK;
    plan[2] = IKD_SOLVER_CCD;
    return 3;
}

ikd_solver ikd_solver_pick(const ikd_problem *p)
{
    ikd_solver plan[3];
    auto_plan(p, plan);
    return plan[0];
}

size_t ikd_workspace_size(size_t joint_count)
{
    return joint_count * IKD__WS_DOUBLES_PER_JOINT * sizeof(double);
}

/* Check every option against its row of the table. */
static ikd_code check_options(const ikd_options *opt, ikd_error *err)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++) {
        const ikd_option_info *o = &option_table[i];
        const char *field = (const char *)opt + o->offset;
        double v = o->type == IKD_OPT_NUMBER ? *(const double *)field : *(const int *)field;
        int low = o->min_open ? !(v > o->min) : !(v >= o->min);
        int high = o->max_open ? !(v < o->max) : !(v <= o->max);
        if (!isfinite(v) || low || high) {
            char name[64];
            snprintf(name, sizeof name, "options.%s", o->name);
            if (o->type == IKD_OPT_ENUM)
                return ikd_error_set(err, IKD_E_INVALID, name, "unknown value");
            return ikd_error_set(err, IKD_E_INVALID, name, "must be %s in %s%g, %g%s",
                                 o->type == IKD_OPT_INT ? "an integer" : "a number", o->min_open ? "(" : "[", o->min,
                                 o->max, o->max_open ? ")" : "]");
        }
    }
    return IKD_E_OK;
}

ikd_code ikd_validate(ikd_problem *p, ikd_error *err) { return ikd__problem_check(p, 1, err); }

ikd_code ikd__problem_check(ikd_problem *p, int fix, ikd_error *err)
{
    ikd_error_clear(err);
    if ((int)p->solver < 0 || p->solver >= IKD_SOLVER__COUNT)
        return ikd_error_set(err, IKD_E_INVALID, "solver", "unknown solver");
    if (!p->joints && p->joint_count > 0) return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "missing");
    size_t min_joints = p->solver == IKD_SOLVER_TWO_BONE ? 3 : 2;
    double length = 0;
    ikd_code rc = ikd__chain_check(p->joints, p->joint_count, min_joints, fix, &length, err);
    if (rc != IKD_E_OK) return rc;
    if (!ikd_vec3_isfinite(p->target))
        return ikd_error_set(err, IKD_E_INVALID, "target.position", "must be finite numbers");
    /* every distance the solvers compute (squared on the way) must stay a finite double */
    if (!(ikd_vec3_dist(p->target, p->joints[0].position) + length < IKD_MAX_EXTENT))
        return ikd_error_set(err, IKD_E_INVALID, "target.position",
                             "is too far from the root (distances must stay below 1e150)");
    if (p->has_target_rotation) {
        double ql = ikd_quat_len(p->target_rotation);
        if (!ikd_quat_isfinite(p->target_rotation) || !(fabs(ql - 1.0) <= (fix ? 1e-3 : 1e-12)))
            return ikd_error_set(err, IKD_E_INVALID, "target.rotation", "must be a unit quaternion [x, y, z, w]");
        if (fix && fabs(ql - 1.0) > 4e-16) p->target_rotation = ikd_quat_norm(p->target_rotation);
    }
    if (p->has_pole && (!ikd_vec3_isfinite(p->pole) || !(ikd_vec3_dist(p->pole, p->joints[0].position) < IKD_MAX_EXTENT)))
        return ikd_error_set(err, IKD_E_INVALID, "pole", "must be finite numbers within 1e150 of the root");
    if ((rc = check_options(&p->options, err))) return rc;

    ikd_solver s = p->solver == IKD_SOLVER_AUTO ? ikd_solver_pick(p) : p->solver;
    if (s == IKD_SOLVER_TWO_BONE) {
        if (p->joint_count != 3)
            return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "two_bone needs exactly 3 joints, got %zu",
                                 p->joint_count);
        if (ikd_has_constraints(p))
            return ikd_error_set(err, IKD_E_INVALID, "chain.joints",
                                 "two_bone takes no joint constraints (use ccd, fabrik, jacobian or auto)");
    }
    return IKD_E_OK;
}

/* Run one iterative solver from the start pose. */
static void run_iterative(ikd_solver s, const ikd_problem *p, void *work, ikd_pose_joint *pose, ikd_result *res,
                          ikd__ws *ws)
{
    ikd__ws_setup(ws, work, p, pose);
    switch (s) {
    case IKD_SOLVER_CCD: ikd__ccd_run(p, ws, pose, res); break;
    case IKD_SOLVER_JACOBIAN: ikd__jacobian_run(p, ws, pose, res); break;
    default: ikd__fabrik_run(p, ws, pose, res); break;
    }
}

ikd_code ikd_solve(const ikd_problem *p, void *work, size_t work_size, ikd_pose_joint *pose, ikd_result *res,
                   ikd_error *err)
{
    memset(res, 0, sizeof *res);
    /* check what we are given, writing nothing (the cast drops const for a
     * function that does not write with fix = 0) */
    ikd_code rc = ikd__problem_check((ikd_problem *)p, 0, err);
    if (rc != IKD_E_OK) return rc;
    if (work_size < ikd_workspace_size(p->joint_count) || (!work && ikd_workspace_size(p->joint_count) > 0)) {
        if (!(p->solver == IKD_SOLVER_TWO_BONE ||
              (p->solver == IKD_SOLVER_AUTO && ikd_solver_pick(p) == IKD_SOLVER_TWO_BONE)))
            return ikd_error_set(err, IKD_E_INTERNAL, "", "workspace too small (see ikd_workspace_size)");
    }
    ikd_solver s = p->solver == IKD_SOLVER_AUTO ? ikd_solver_pick(p) : p->solver;
    if (s == IKD_SOLVER_TWO_BONE) {
        ikd__two_bone_run(p, pose, res);
        return IKD_E_OK;
    }
    ikd__ws ws;
    if (p->solver != IKD_SOLVER_AUTO) {
        run_iterative(s, p, work, pose, res, &ws);
        return IKD_E_OK;
    }
    ikd_solver plan[3];
    size_t steps = auto_plan(p, plan);
    ikd_result best;
    int iterations = 0;
    for (size_t k = 0; k < steps; k++) {
        run_iterative(plan[k], p, work, pose, res, &ws);
        iterations += res->iterations;
        if (res->reached || res->status == IKD_STATUS_DEADLINE) break;
        if (k == 0 || res->error < best.error) {
            best = *res;
            for (size_t i = 0; i < p->joint_count; i++) ws.saved[i] = pose[i].position;
        }
        if (k + 1 == steps || res->status == IKD_STATUS_UNREACHABLE) {
            /* nothing reached: return the closest pose found */
            for (size_t i = 0; i < p->joint_count; i++) pose[i].position = ws.saved[i];
            ikd_chain_pose_rotations(p->joints, p->joint_count,
                                     p->has_target_rotation ? &p->target_rotation : NULL, pose);
            *res = best;
            break;
        }
    }
    res->iterations = iterations;
    return IKD_E_OK;
}
