/* solve.c - problem defaults, validation and the dispatcher that runs one solver (including auto). */
#include "ikd/solve.h"

#include <string.h>

#include "solvers.h"

static const char *const ikd_solver_names[IKD_SOLVER__COUNT] = {
    [IKD_SOLVER_AUTO] = "auto",
    [IKD_SOLVER_TWO_BONE] = "two_bone",
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

const char *ikd_status_name(ikd_status s)
{
    switch (s) {
    case IKD_STATUS_REACHED: return "reached";
    case IKD_STATUS_UNREACHABLE: return "unreachable";
    case IKD_STATUS_MAX_ITERATIONS: return "max_iterations";
    }
    return "unknown";
}

void ikd_options_default(ikd_options *opt)
{
    opt->max_iterations = IKD_DEFAULT_MAX_ITERATIONS;
    opt->tolerance = IKD_DEFAULT_TOLERANCE;
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

ikd_solver ikd_solver_pick(const ikd_problem *p)
{
    if (p->joint_count == 3 && !ikd_has_constraints(p)) return IKD_SOLVER_TWO_BONE;
    return IKD_SOLVER_AUTO;
}

size_t ikd_workspace_size(size_t joint_count)
{
    (void)joint_count;
    return 0;
}

ikd_code ikd_validate(ikd_problem *p, ikd_error *err)
{
    ikd_error_clear(err);
    if ((int)p->solver < 0 || p->solver >= IKD_SOLVER__COUNT)
        return ikd_error_set(err, IKD_E_INVALID, "solver", "unknown solver");
    if (!p->joints && p->joint_count > 0) return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "missing");
    size_t min_joints = p->solver == IKD_SOLVER_TWO_BONE ? 3 : 2;
    ikd_code rc = ikd_chain_validate(p->joints, p->joint_count, min_joints, err);
    if (rc != IKD_E_OK) return rc;
    if (!ikd_vec3_isfinite(p->target))
        return ikd_error_set(err, IKD_E_INVALID, "target.position", "must be finite numbers");
    if (p->has_target_rotation) {
        double ql = ikd_quat_len(p->target_rotation);
        if (!ikd_quat_isfinite(p->target_rotation) || !(fabs(ql - 1.0) <= 1e-3))
            return ikd_error_set(err, IKD_E_INVALID, "target.rotation", "must be a unit quaternion [x, y, z, w]");
        p->target_rotation = ikd_quat_norm(p->target_rotation);
    }
    if (p->has_pole && !ikd_vec3_isfinite(p->pole))
        return ikd_error_set(err, IKD_E_INVALID, "pole", "must be finite numbers");
    if (p->options.max_iterations < 1 || p->options.max_iterations > IKD_MAX_ITERATIONS_LIMIT)
        return ikd_error_set(err, IKD_E_INVALID, "options.max_iterations", "must be an integer in [1, %d]",
                             IKD_MAX_ITERATIONS_LIMIT);
    if (!isfinite(p->options.tolerance) || p->options.tolerance < 0.0 || p->options.tolerance > 1e300)
        return ikd_error_set(err, IKD_E_INVALID, "options.tolerance", "must be a number in [0, 1e300]");

    ikd_solver s = p->solver == IKD_SOLVER_AUTO ? ikd_solver_pick(p) : p->solver;
    switch (s) {
    case IKD_SOLVER_TWO_BONE:
        if (p->joint_count != 3)
            return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "two_bone needs exactly 3 joints, got %zu",
                                 p->joint_count);
        if (ikd_has_constraints(p))
            return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "two_bone takes no joint constraints");
        break;
    default:
        return ikd_error_set(err, IKD_E_INVALID, "solver",
                             "no solver fits this chain (auto handles 3 unconstrained joints)");
    }
    return IKD_E_OK;
}

ikd_code ikd_solve(const ikd_problem *p, void *work, size_t work_size, ikd_pose_joint *pose, ikd_result *res,
                   ikd_error *err)
{
    (void)work;
    if (work_size < ikd_workspace_size(p->joint_count))
        return ikd_error_set(err, IKD_E_INTERNAL, "", "workspace too small");
    ikd_solver s = p->solver == IKD_SOLVER_AUTO ? ikd_solver_pick(p) : p->solver;
    switch (s) {
    case IKD_SOLVER_TWO_BONE:
        ikd_two_bone_run(p, pose, res);
        return IKD_E_OK;
    default:
        return ikd_error_set(err, IKD_E_INVALID, "solver", "no solver fits this problem");
    }
}
