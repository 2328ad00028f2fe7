/* iter.h - what the iterative solvers share: the workspace layout, start-pose setup, status rules. */
#ifndef IKD_ITER_H
#define IKD_ITER_H

#include "ikd/constraint.h"
#include "ikd/solve.h"

/* Per-solve scratch carved out of the caller's workspace (never allocated). */
typedef struct ikd_ws {
    size_t n;       /* joints */
    double *len;    /* [n-1] bone lengths */
    ikd_vec3 *d0;   /* [n-1] start unit bone directions */
    ikd_vec3 *dir;  /* [n] scratch directions */
    double *jac;    /* [6 * 3n] Jacobian, row-major by column: jac[col * 6 + row] */
    double *dq;     /* [3n] joint steps */
    double *tmp;    /* [3n] scratch steps */
    int *dof;       /* [n] degrees of freedom per joint (1 or 3) */
    unsigned char *active; /* [3n] Jacobian columns in use */
    ikd_vec3 *saved; /* [n] positions kept by auto between two solvers */
    ikd_vec3 *axis;  /* [n] current hinge axes (jacobian) */
    double *theta;   /* [n] current hinge angles (jacobian) */
    double total;   /* chain length */
    double longest; /* longest bone */
    int constrained;
} ikd_ws;

/* Doubles of workspace per joint (see ikd_workspace_size). */
#define IKD_WS_DOUBLES_PER_JOINT (1 + 3 + 3 + 18 + 3 + 3 + 1 + 1 + 3 + 3 + 1)

/* Bind the workspace to a problem and fill len/d0/total; copy the start
 * positions into pose. */
void ikd_ws_setup(ikd_ws *ws, void *mem, const ikd_problem *p, ikd_pose_joint *pose);

/* Unit direction of bone i in pose (fallback: its start direction). */
static inline ikd_vec3 ikd_ws_bone_dir(const ikd_ws *ws, const ikd_pose_joint *pose, size_t i)
{
    return ikd_vec3_norm_or(ikd_vec3_sub(pose[i + 1].position, pose[i].position), ws->d0[i]);
}

/* Limit frame of joint i (as ikd_constraint_frame, with the cached start directions). */
ikd_limit_frame ikd_ws_frame(const ikd_ws *ws, const ikd_joint *joints, const ikd_pose_joint *pose, size_t i);

/* Root to effector: every bone to its closest allowed direction and its length. */
void ikd_ws_enforce(const ikd_ws *ws, const ikd_joint *joints, ikd_pose_joint *pose);

/* Point the whole chain straight from the root toward `target`. */
void ikd_ws_straighten(const ikd_ws *ws, ikd_vec3 root, ikd_vec3 target, ikd_pose_joint *pose);

/* If the chain is straight and the target lies on its line (where CCD and
 * FABRIK cannot start bending), bend the interior joints slightly off the
 * line: toward the pole when given, else a fixed perpendicular. */
void ikd_ws_unstraighten(const ikd_ws *ws, const ikd_problem *p, ikd_pose_joint *pose);

/* 1 when the problem's deadline has passed (checked once per iteration). */
static inline int ikd_ws_out_of_time(const ikd_problem *p)
{
    return p->deadline_ns && ikd_clock_ns() > p->deadline_ns;
}

/* 1 when no pose reaches the target: farther from the root than the chain is
 * long, or nearer than its shortest reach (the longest bone folded back). */
int ikd_ws_out_of_reach(const ikd_ws *ws, const ikd_problem *p);

/* Fill res->status/reached/error/iterations and the pose rotations. */
void ikd_ws_finish(const ikd_ws *ws, const ikd_problem *p, ikd_solver solver, int iterations, ikd_pose_joint *pose,
                   ikd_result *res);

/* As ikd_ws_finish, and when the solver stopped for its deadline without
 * reaching, say so in the status. */
void ikd_ws_finish_timed(const ikd_ws *ws, const ikd_problem *p, ikd_solver solver, int iterations, int timed_out,
                         ikd_pose_joint *pose, ikd_result *res);

#endif
