/* iter.h - what the iterative solvers share: the workspace layout, start-pose setup, status rules. */
#ifndef IKD_ITER_H
#define IKD_ITER_H

#include "ikd/constraint.h"
#include "ikd/solve.h"

#include "bone.h"

/* The workspace layout: X(field, element type, doubles of workspace per
 * joint). Every per-joint array is carved from the caller's memory in this
 * order; ikd_workspace_size and ikd__ws_setup both read this one list. */
#define IKD__WS_LAYOUT(X)                                                                     \
    X(len, double, 1)          /* [n-1] bone lengths */                                      \
    X(d0, ikd_vec3, 3)         /* [n-1] start unit bone directions */                        \
    X(dir, ikd_vec3, 3)        /* [n] scratch directions */                                  \
    X(jac, double, 18)         /* [6 * 3n] Jacobian, by column: jac[col * 6 + row] */         \
    X(dq, double, 3)           /* [3n] joint steps */                                        \
    X(tmp, double, 3)          /* [3n] scratch steps */                                      \
    X(dof, int, 1)             /* [n] degrees of freedom per joint (1 or 3) */               \
    X(active, unsigned char, 1) /* [3n] Jacobian columns in use (3n bytes in n doubles) */   \
    X(saved, ikd_vec3, 3)      /* [n] positions kept by auto between two solvers */          \
    X(axis, ikd_vec3, 3)       /* [n] current hinge axes (jacobian) */                       \
    X(theta, double, 1)        /* [n] current hinge angles (jacobian) */

/* Per-solve scratch carved out of the caller's workspace (never allocated). */
typedef struct ikd__ws {
    size_t n; /* joints */
#define IKD__WS_FIELD(name, type, per_joint) type *name;
    IKD__WS_LAYOUT(IKD__WS_FIELD)
#undef IKD__WS_FIELD
    double total;   /* chain length */
    double longest; /* longest bone */
    int constrained;
} ikd__ws;

/* Doubles of workspace per joint (see ikd_workspace_size). */
#define IKD__WS_SUM(name, type, per_joint) +(per_joint)
#define IKD__WS_DOUBLES_PER_JOINT (0 IKD__WS_LAYOUT(IKD__WS_SUM))

_Static_assert(sizeof(ikd_vec3) == 3 * sizeof(double), "ikd_vec3 is three packed doubles");
_Static_assert(sizeof(int) <= sizeof(double), "dof: one int per joint in one double");
_Static_assert(3 <= sizeof(double), "active: three flags per joint in one double");

/* Bind the workspace to a problem and fill len/d0/total; copy the start
 * positions into pose. */
void ikd__ws_setup(ikd__ws *ws, void *mem, const ikd_problem *p, ikd_pose_joint *pose);

/* Unit direction of bone i in pose (fallback: its start direction). */
static inline ikd_vec3 ikd__ws_bone_dir(const ikd__ws *ws, const ikd_pose_joint *pose, size_t i)
{
    return ikd__bone_dir(pose[i].position, pose[i + 1].position, ws->d0[i]);
}

/* Limit frame of joint i whose parent bone now points along `parent_now`
 * (ikd_constraint_frame_of with the cached start directions). */
static inline ikd_limit_frame ikd__ws_frame_at(const ikd__ws *ws, const ikd_joint *joints, size_t i,
                                               ikd_vec3 parent_now)
{
    return ikd_constraint_frame_of(&joints[i].constraint, i, ws->d0[i ? i - 1 : 0], parent_now);
}

/* Limit frame of joint i in `pose` (as ikd_constraint_frame). */
static inline ikd_limit_frame ikd__ws_frame(const ikd__ws *ws, const ikd_joint *joints, const ikd_pose_joint *pose,
                                            size_t i)
{
    return ikd__ws_frame_at(ws, joints, i, i ? ikd__ws_bone_dir(ws, pose, i - 1) : ws->d0[0]);
}

/* Root to effector: every bone to its closest allowed direction and its length. */
void ikd__ws_enforce(const ikd__ws *ws, const ikd_joint *joints, ikd_pose_joint *pose);

/* Point the whole chain straight from the root toward `target`. */
void ikd__ws_straighten(const ikd__ws *ws, ikd_vec3 root, ikd_vec3 target, ikd_pose_joint *pose);

/* If the chain is straight and the target lies on its line (where CCD and
 * FABRIK cannot start bending), bend the interior joints slightly off the
 * line: toward the pole when given, else a fixed perpendicular. */
void ikd__ws_unstraighten(const ikd__ws *ws, const ikd_problem *p, ikd_pose_joint *pose);

/* 1 when the problem's deadline has passed or it was cancelled (checked
 * once per iteration). */
static inline int ikd__ws_out_of_time(const ikd_problem *p)
{
    if (p->cancel && atomic_load_explicit(p->cancel, memory_order_relaxed)) return 1;
    return p->deadline_ns && ikd_clock_ns() > p->deadline_ns;
}

/* 1 when no pose reaches the target: farther from the root than the chain is
 * long, or nearer than its shortest reach (the longest bone folded back). */
int ikd__ws_out_of_reach(const ikd__ws *ws, const ikd_problem *p);

/* Fill res->status/reached/error/iterations and the pose rotations. */
void ikd__ws_finish(const ikd__ws *ws, const ikd_problem *p, ikd_solver solver, int iterations, ikd_pose_joint *pose,
                   ikd_result *res);

/* As ikd__ws_finish, and when the solver stopped for its deadline without
 * reaching, say so in the status. */
void ikd__ws_finish_timed(const ikd__ws *ws, const ikd_problem *p, ikd_solver solver, int iterations, int timed_out,
                         ikd_pose_joint *pose, ikd_result *res);

#endif
