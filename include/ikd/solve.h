/* ikd/solve.h - IK problems, options, results and the solver dispatcher (validate, then run). */
#ifndef IKD_SOLVE_H
#define IKD_SOLVE_H

#include <stddef.h>

#include "ikd/chain.h"
#include "ikd/error.h"
#include "ikd/math.h"

typedef enum ikd_solver {
    IKD_SOLVER_AUTO = 0, /* pick one from the problem (see ikd_solver_pick) */
    IKD_SOLVER_TWO_BONE, /* analytic, exactly 3 joints */
    IKD_SOLVER__COUNT
} ikd_solver;

/* "auto", "two_bone", ...; NULL for an out-of-range value. */
const char *ikd_solver_name(ikd_solver s);
/* Parse a solver name; returns 0 and sets *out, or -1 when unknown. */
int ikd_solver_from_name(const char *name, ikd_solver *out);

typedef enum ikd_status {
    IKD_STATUS_REACHED = 0,     /* effector within `tolerance` of the target */
    IKD_STATUS_UNREACHABLE,     /* target outside the chain's reach: the closest pose is returned */
    IKD_STATUS_MAX_ITERATIONS   /* iterative solvers: stopped at max_iterations, not within tolerance */
} ikd_status;

/* "reached", "unreachable", "max_iterations". */
const char *ikd_status_name(ikd_status s);

/* Solver options. Start from ikd_options_default(). */
typedef struct ikd_options {
    int max_iterations; /* iterative solvers' iteration cap; default 64; range [1, 100000] */
    double tolerance;   /* distance effector-target counted as reached; unit: the chain's
                           length unit; default 1e-4; range [0, 1e300] */
} ikd_options;

#define IKD_DEFAULT_MAX_ITERATIONS 64
#define IKD_MAX_ITERATIONS_LIMIT 100000
#define IKD_DEFAULT_TOLERANCE 1e-4

void ikd_options_default(ikd_options *opt);

/* One IK problem. All pointers are caller-owned and must outlive the solve. */
typedef struct ikd_problem {
    ikd_solver solver;             /* default IKD_SOLVER_AUTO */
    ikd_joint *joints;             /* the chain, root first, effector last (start pose) */
    size_t joint_count;            /* >= 2 (two_bone: exactly 3) */
    ikd_vec3 target;               /* effector goal; frame: world; finite */
    int has_target_rotation;       /* 0 = no orientation goal (default) */
    ikd_quat target_rotation;      /* effector world rotation goal; unit quaternion */
    int has_pole;                  /* 0 = no pole (default) */
    ikd_vec3 pole;                 /* world-space point the middle joint bends toward */
    ikd_options options;
} ikd_problem;

/* Initialise `p` with defaults: auto solver, no joints, target at origin,
 * no rotation goal, no pole, default options. */
void ikd_problem_init(ikd_problem *p);

typedef struct ikd_result {
    ikd_solver solver;  /* the solver that ran (never AUTO) */
    ikd_status status;
    int reached;        /* status == IKD_STATUS_REACHED */
    double error;       /* final effector-target distance; unit: the chain's length unit */
    int iterations;     /* iterations used (analytic solvers: 1) */
} ikd_result;

/* Which solver `auto` runs for this problem (never IKD_SOLVER_AUTO):
 * two_bone for 3 joints. Returns IKD_SOLVER_AUTO when no solver fits. */
ikd_solver ikd_solver_pick(const ikd_problem *p);

/* Bytes of scratch memory ikd_solve needs for a chain of `joint_count`
 * joints (the caller allocates it once, e.g. per thread, and reuses it). */
size_t ikd_workspace_size(size_t joint_count);

/* Validate a problem: chain (ikd_chain_validate), target, pole, options and
 * the solver's own needs. Normalises rotations and axes in place. Field
 * paths in `err` follow the HTTP API's JSON names ("target.position"). */
ikd_code ikd_validate(ikd_problem *p, ikd_error *err);

/* Solve a validated problem. `pose` receives joint_count joints; `work` is
 * scratch of at least ikd_workspace_size(joint_count) bytes (may be NULL
 * when that is 0). Never allocates, deterministic. Returns IKD_E_OK, or an
 * error code (with `err` filled) when the problem is not valid. */
ikd_code ikd_solve(const ikd_problem *p, void *work, size_t work_size, ikd_pose_joint *pose,
                   ikd_result *res, ikd_error *err);

#endif
