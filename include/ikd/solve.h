/* ikd/solve.h - IK problems, options, results and the solver dispatcher (validate, then run). */
#ifndef IKD_SOLVE_H
#define IKD_SOLVE_H

#include <stdatomic.h>
#include <stddef.h>

#include "ikd/chain.h"
#include "ikd/error.h"
#include "ikd/math.h"

typedef enum ikd_solver {
    IKD_SOLVER_AUTO = 0, /* pick one from the problem (see ikd_solver_pick) */
    IKD_SOLVER_TWO_BONE, /* analytic, exactly 3 joints, no constraints */
    IKD_SOLVER_CCD,      /* cyclic coordinate descent; hinge and ball limits */
    IKD_SOLVER_FABRIK,   /* forward and backward reaching; hinge and ball limits; a
                            constrained chain stalled short of a target in reach
                            starts again from up to five other start poses
                            (within max_iterations) and keeps the closest end */
    IKD_SOLVER_JACOBIAN, /* damped least squares or transpose; limits; orientation goal */
    IKD_SOLVER__COUNT
} ikd_solver;

/* "auto", "two_bone", ...; NULL for an out-of-range value. */
const char *ikd_solver_name(ikd_solver s);
/* Parse a solver name; returns 0 and sets *out, or -1 when unknown. */
int ikd_solver_from_name(const char *name, ikd_solver *out);

typedef enum ikd_status {
    IKD_STATUS_REACHED = 0,     /* effector within `tolerance` of the target */
    IKD_STATUS_UNREACHABLE,     /* target outside the chain's reach: the closest pose is returned */
    IKD_STATUS_MAX_ITERATIONS,  /* iterative solvers: stopped at max_iterations, not within tolerance */
    IKD_STATUS_DEADLINE         /* iterative solvers: stopped at problem.deadline_ns (or cancelled) */
} ikd_status;

/* "reached", "unreachable", "max_iterations", "deadline". */
const char *ikd_status_name(ikd_status s);

typedef enum ikd_jacobian_method {
    IKD_JACOBIAN_DLS = 0,  /* damped least squares (default) */
    IKD_JACOBIAN_TRANSPOSE /* Jacobian transpose with the optimal step length */
} ikd_jacobian_method;

/* "dls", "transpose"; parse returns 0 or -1. */
const char *ikd_jacobian_method_name(ikd_jacobian_method m);
int ikd_jacobian_method_from_name(const char *name, ikd_jacobian_method *out);

/* Solver options. Start from ikd_options_default(); each bound is checked by
 * ikd_validate (error field "options.<name>"). */
typedef struct ikd_options {
    int max_iterations;    /* iterative solvers' iteration cap (a CCD sweep, a FABRIK
                              backward+forward pass, a Jacobian step); default 256;
                              range [1, 100000]; two_bone ignores it */
    double tolerance;      /* effector-target distance counted as reached; unit: the
                              chain's length unit; default 1e-4; range [0, 1e300] */
    double max_step_deg;   /* ccd and jacobian: most a joint turns in one iteration,
                              degrees; default 180 (ccd: no cap) for ccd, used as given for
                              jacobian; range (0, 180] */
    double damping;        /* jacobian dls: damping factor; lambda = damping x the task
                              error (so it fades as the goal nears); default 0.1;
                              range [0, 100] */
    int jacobian_method;   /* an ikd_jacobian_method; jacobian only; default IKD_JACOBIAN_DLS */
    double rotation_weight; /* jacobian with target rotation: weight of 1 radian of
                              orientation error against one chain length of position
                              error; default 1; range (0, 1e6] */
    double rotation_tolerance_deg; /* jacobian with target rotation: orientation error
                              counted as reached, degrees; default 0.1; range [0, 180] */
    double soften;         /* two_bone: soft IK near full extension (DESIGN.md): with
                              reach L, a target farther than soften x L is aimed at
                              da + ds (1 - exp(-(d - da) / ds)), da = soften L,
                              ds = L - da, so the knee neither pops nor jitters;
                              default 1 (off); range (0, 1] */
    double stretch;        /* two_bone: most both bones may scale alike (by request)
                              to reach a target beyond reach; default 1 (off);
                              range [1, 100] */
} ikd_options;

#define IKD_DEFAULT_MAX_ITERATIONS 256
#define IKD_MAX_ITERATIONS_LIMIT 100000
#define IKD_DEFAULT_TOLERANCE 1e-4
#define IKD_DEFAULT_MAX_STEP_DEG 180.0
#define IKD_DEFAULT_DAMPING 0.1
#define IKD_DEFAULT_ROTATION_WEIGHT 1.0
#define IKD_DEFAULT_ROTATION_TOLERANCE_DEG 0.1
#define IKD_DEFAULT_SOFTEN 1.0
#define IKD_DEFAULT_STRETCH 1.0

void ikd_options_default(ikd_options *opt);

/* One row of the options table: the single description of every option that
 * validation, the JSON codec and GET /v1/solvers all read. */
typedef enum { IKD_OPT_INT, IKD_OPT_NUMBER, IKD_OPT_ENUM } ikd_option_type;

typedef struct ikd_option_info {
    const char *name;           /* JSON name in "options" */
    ikd_option_type type;       /* INT: int field; NUMBER: double field; ENUM: int field
                                   holding the index into `choices` */
    size_t offset;              /* offsetof(ikd_options, field) */
    double def, min, max;       /* default and bounds (ENUM: index bounds) */
    int min_open, max_open;     /* 1 = the bound itself is excluded */
    const char *const *choices; /* ENUM: NULL-terminated names */
    unsigned solvers;           /* bit (1u << ikd_solver) for each solver that reads it */
    const char *doc;            /* one line: meaning and unit */
} ikd_option_info;

/* The options table and its length. */
const ikd_option_info *ikd_options_table(size_t *count);

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
    /* Stop iterating once CLOCK_MONOTONIC passes this time (nanoseconds, as
     * ikd_clock_ns returns); the closest pose so far is returned with status
     * IKD_STATUS_DEADLINE. 0 = no deadline (default). */
    unsigned long long deadline_ns;
    /* When not NULL and *cancel becomes non-zero (from any thread), the
     * iterative solvers stop at their next iteration as at the deadline
     * (status IKD_STATUS_DEADLINE, the closest pose so far). Default NULL. */
    const atomic_int *cancel;
} ikd_problem;

/* CLOCK_MONOTONIC in nanoseconds, the clock of deadline_ns. */
unsigned long long ikd_clock_ns(void);

/* Initialise `p` with defaults: auto solver, no joints, target at origin,
 * no rotation goal, no pole, default options. */
void ikd_problem_init(ikd_problem *p);

typedef struct ikd_result {
    ikd_solver solver;  /* the solver that ran (never AUTO) */
    ikd_status status;
    int reached;        /* status == IKD_STATUS_REACHED */
    double error;       /* final effector-target distance; unit: the chain's length unit */
    int iterations;     /* iterations used (analytic solvers: 1) */
    double rotation_error_deg; /* jacobian with a target rotation: angle between the last
                                  bone's direction and the one the goal asks for, degrees;
                                  0 otherwise */
} ikd_result;

/* The first solver `auto` runs for this problem (never IKD_SOLVER_AUTO).
 * auto's rules, measured by `make bench`:
 *   3 joints, no constraints  -> two_bone (exact, one step)
 *   a target rotation         -> jacobian (dls)
 *   no constraints            -> ccd (free joints solved in pairs; reaches in
 *                                about one sweep)
 *   constraints               -> fabrik then jacobian (hinges only and 12
 *                                joints or more) or jacobian then fabrik
 *                                (otherwise), then ccd: each
 *                                runs from the start pose only when the one
 *                                before did not reach; the closest pose is
 *                                returned and `iterations` sums them all.
 * An out-of-reach target stops the sequence (no solver can reach it). */
ikd_solver ikd_solver_pick(const ikd_problem *p);

/* Bytes of scratch memory ikd_solve needs for a chain of `joint_count`
 * joints (the caller allocates it once, e.g. per thread, and reuses it). */
size_t ikd_workspace_size(size_t joint_count);

/* Validate a problem: chain (ikd_chain_validate), target, pole, options and
 * the solver's own needs. On success it has also normalised, in place,
 * the joint rotations and the target rotation (accepted within 1e-3 of unit
 * length) and the constraint axes and reference directions (any non-zero
 * length), so call it
 * on memory you may write, once per problem: solving a validated problem
 * again needs no new validation. Field paths in `err` follow the HTTP API's
 * JSON names ("target.position"); `err` may be NULL. */
ikd_code ikd_validate(ikd_problem *p, ikd_error *err);

/* Solve a validated problem. `pose` receives joint_count joints; `work` is
 * scratch of at least ikd_workspace_size(joint_count) bytes (may be NULL
 * when that is 0, as for two_bone). Never allocates, deterministic.
 * It checks what it is given, without writing to it: every rule of
 * ikd_validate, with rotations and axes required to be unit already
 * (within 1e-12, as ikd_validate leaves them), and the workspace size.
 * Returns IKD_E_OK; IKD_E_INVALID with `err` filled when the problem is
 * not valid (or not normalised: call ikd_validate first); IKD_E_INTERNAL
 * when the workspace is too small. `err` may be NULL. */
ikd_code ikd_solve(const ikd_problem *p, void *work, size_t work_size, ikd_pose_joint *pose,
                   ikd_result *res, ikd_error *err);

#endif
