/* multi.h - the skeleton solver's workspace, tuning constants and steps, shared by its files (src/solve/multi*.c). */
#ifndef IKD__MULTI_H
#define IKD__MULTI_H

#include <stddef.h>

#include "ikd/skeleton.h"

#define MULTI_ROWS_PER_GOAL 7 /* at most: position 3 (+ 1: soft_penalty) + rotation 3 (an aim: 2) */
#define MULTI_MAX_STEP 0.5    /* radians a joint turns at most in one iteration ... */
#define MULTI_FAR_STEP 1.0    /* ... and while the goals are far (error over MULTI_FAR x the skeleton's size) */
#define MULTI_FAR 0.2
#define MULTI_ANCHOR 10.0     /* a foot-placement root's moves along the ground weigh this / size per unit */
#define MULTI_INSIDE 0.01     /* a goal inside its bones is aimed this far (x size) past where they fold */
#define MULTI_PULL 0.003
#define MULTI_NEAR 0.3        /* goals this near (x the skeleton's size) ... */
#define MULTI_NEAR_PULL 0.9   /* ... let the pull take at least this share of its step (see primary_step) */
#define MULTI_WB 16           /* columns locked or put back in one step's rounds by Woodbury's identity, at most */
#define MULTI_GUESS_MOVED 1e-3 /* radians: a cold solve guesses locks while its last step turned this much */
#define MULTI_PRELOCK 8       /* columns at a bound locked before a step's product is formed, at most */
#define MULTI_RESTARTS 8      /* descents from spread-out poses after the first, while goals stay unmet:
                                 this many, or max_iterations / (2 x MULTI_RESTART_ITERATIONS) when more */
#define MULTI_RESTART_ITERATIONS 40 /* iterations of each restart at most */
#define MULTI_RESTART_NEAR_FIRST 0.25 /* with a near start (a clip frame's), how far the first restart goes toward its
                                         spread pose (the others: halfway). Over the 18-rig family in channel
                                         order, flips 15 at 0.5, 14 at 0.1, 13 at 0.2, 10 at 0.25, 12 at 0.3; with
                                         the take's own limits 26, 23, 17, 14, 13; frames reached unchanged */
#define MULTI_PROGRESS 0.01  /* an unmet descent progresses while its error falls by this share ... */
#define MULTI_STALL 8         /* ... in fewer iterations than these (a local minimum crawls: restart) */
#define MULTI_SETTLED 2e-4        /* radians a settling pose may still be from where it converges (the
                                      last step is evaluated and kept: fed back, a pose moves less) */
#define MULTI_SETTLE_ITERATIONS 60 /* iterations the rest pull goes on once the goals are met, at most */
#define MULTI_LOSSES 2        /* settling steps that lose the goals before the settle ends at the met pose held */
#define MULTI_MIX 3           /* settle steps Anderson mixing remembers (ikd__multi_mix) ... */
#define MULTI_MIX_FIT 0.1     /* ... the share of the step's square the fit of their changes must explain ... */
#define MULTI_MIX_BELOW 0.9   /* ... and the rate the plain steps must shrink at (crawls: extrapolate) */
#define MULTI_RANGE_FLOOR 0.05 /* the range metric's smallest column scale (a 9-degree range; a fixed
                                   axis would otherwise make its column's square 0 and the factor singular) */
#define MULTI_GIMBAL_CAP 1.0 /* degrees: a banded euler box's middle bound this near a pole is the projection's alone
                                 (multi_rows.c banded_frame) */
#define MULTI_POLE_BEND 0.05  /* a pole's pull is whole from this bend on (secondary) */
#define MULTI_FLIP_BEND 0.15  /* a knee under a natural swivel bent less than this (its distance from the
                                 hip-foot line over the thigh) to the other side is straightened and bent
                                 over the toes at a solve's start (ikd__multi_prebend) */
#define MULTI_SWIVEL_ACROSS 0.5 /* "across" for the natural swivels: a limb's end is a foot (over the toes)
                                    when at least this share of its children's mean offset lies across the limb
                                    (leg_swivel; feet of the real rigs at hand 0.74-0.98, hands 0-0.16); an arm
                                    hangs beside its chest when its shoulder lies this share of its distance
                                    across the trunk, and is no leg when its hand lies this share of its reach
                                    above the lowest joint (arm_swivel) */
#define MULTI_ROTATION_WEIGHT 0.35 /* what one radian of a rotation or aim row weighs, in skeleton sizes (1:
                                   full 6dof+aim 10.7 iterations, 6R arms 16.5; 0.35: 10.3 and 14.9) */
#define MULTI_FAR_REFINE 8    /* far_refine's iterations at most */
#define MULTI_FAR_ROTATION 0.03 /* a far goal's rotation rows against its pointing: the arm points
                                   first (weighed 1: up to 20 degrees off its target where the
                                   wrist's limits conflict; 0.03: 0.3) */
#define MULTI_PRIORITY 0.1   /* a lower priority's rows weigh this times the level above's (goal_weights) */
#define MULTI_PRIORITY_LEVELS 5 /* priorities weighed apart; lower ones share the fifth (1e-4: squares 1e-8) */
#define MULTI_POLISH_ITERATIONS 60 /* iterations the restarts leave polish_top (a quarter of max_iterations at most) */
#define MULTI_STRETCH_AIM 0.95 /* options.stretch: a limb is aimed this far into its reach (0.98: 94% of
                                   far hands met, not 99%: a straighter limb converges slowly), then scaled */

typedef struct multi_ws {
    size_t n, g, cols, rows, cmax;
    double wmax;        /* 1: rows weigh gw (only the ratios count) */
    double *gw;         /* [g] each goal's row weight: its weight over its priority's largest, times
                           MULTI_PRIORITY per priority above it (goal_weights) */
    unsigned char *off; /* [g] 1: the goal asks nothing this descent (polish_top: below the highest priority) */
    ikd_quat *pol;      /* [n] the pose polish_top starts from and pulls toward */
    double *pang;       /* [n] the angle the pull takes each hinge to: 0, or options.preferred's */
    double raw;         /* the weighted task error as build_rows found it (far goals' left out, unclamped) */
    double *cs;         /* [cols] each column's scale (the range metric, setup_columns): the step's
                           variable is the column's angle over it; 1 for every column outside a motion */
    int ranged;         /* 1: some cs is not 1 (options.stiffness "range"): build_rows scales J */
    int *col;           /* [n] first column of each joint, -1 when fixed */
    int *dof;           /* [n] 0, 1 or 3 */
    int *idle;          /* [n] 1: on no goal's path (no goal moves with it): left at rest, or where it starts
                           without a rest pull, and out of the iterations */
    int *need;          /* [n] 1: a goal's joint or an ancestor of one (the joints whose pose the iterations read) */
    int *act;           /* [n] the joints with columns (w->col >= 0), in order: nact of them (layout_columns;
                           in the descents, after drop_idle, the joints neither fixed, held nor idle) */
    size_t nact;
    double *reach;      /* [n] path length from the root */
    ikd_vec3 *tpos;     /* [g] position targets (ground goals resolved) */
    ikd_quat *trot;     /* [g] rotation targets */
    ikd_vec3 *aim_local;/* [g] aim axes in the joint's rest frame */
    ikd_vec3 *swivel;   /* [g] a limb's natural swivel (want bit 64; else none): the side of its line
                           its middle joint goes to, in the rest frame of joint swfrom (leg_swivel,
                           arm_swivel: ikd__multi_swivel_side) */
    int *swfrom;        /* [g] ... -1: the goal's own (a leg's toes, turned with the foot's target);
                           else an arm's trunk joint (turned with its pose) */
    unsigned char *want;/* [g] bit 1 position, 2 rotation, 4 aim, 8 stretching (aimed into the limb's reach),
                           16 softened with a free root (the target itself, and soft_penalty's row),
                           32 inside its bones (aimed at their fold: limb_target; unreachable),
                           64: a natural swivel (w->swivel), 128: its side alone, for prebend (a leg
                           layered on a pose: options.preferred decides its swivel) */
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
    int hold_root;      /* 1: a free root's translation columns stay empty (held where it is) */
    int anchored;       /* 1: a free root with ground goals, pulled along the ground toward `anchor` */
    ikd_vec3 anchor;    /* where the root stands over the ground goals' targets (setup_targets) */
    double anchor_w;    /* ... its columns along the ground are the root's moves times this (multi_root_move) */
    /* A goal's rows are stored compactly over the columns that move it: a
     * free root's translation, then the joints from the root down to the
     * goal's joint. Two goals share their paths' common prefix (the joints
     * above their lowest common ancestor), so a product of two rows is a
     * dot product over that prefix: J J^T costs the shared columns only. */
    int *glen;          /* [g] compact columns of each goal */
    int *gcol;          /* [g x cmax] the global column of each compact one */
    int *gidx;          /* [g x cols] ... and the compact column of each global one (-1: not the goal's) */
    int *gdepth;        /* [g] joints on the path */
    int *gpath;         /* [g x n] the path's joints, root first */
    int *pre;           /* [g x g] compact columns two goals share */
    unsigned char *locked; /* [cols] columns taken out this iteration (a step that would leave a limit) */
    int *pcol;          /* [MULTI_PRELOCK] columns locked at their bound before the step (primary_step) ... */
    double *psave;      /* [MULTI_PRELOCK x rows] ... and their entries over every row (move_column) */
    double *fix;        /* [cols] a locked column's step: to the bound it would leave (0: it stays) */
    double *zc;         /* [cols] scratch: one goal's compact entries of a column vector (residual, jt) */
    double *J;          /* [rows x cmax], compact rows */
    double *A0, *A;     /* [rows x rows]: J J^T (lower), its Cholesky factor */
    double *e, *y;      /* [rows] */
    double *t;          /* [MULTI_WB x rows] columns locked or guesses put back since the factor, over every row ... */
    double *tu;         /* [MULTI_WB x rows] ... each solved with the factor (A^-1 t) ... */
    double *tf;         /* [MULTI_WB] ... the residual's change per entry (fix - k z; a put-back guess: k z) ... */
    double *ts;         /* [MULTI_WB] ... and its sign (-1 locked, +1 put back) */
    double *tc;         /* [MULTI_WB x (MULTI_WB + 1)] the capacitance factor and a scratch vector */
    double *y0;         /* [rows] A^-1 r at the round the factor is of */
    int nt;             /* columns in t */
    double *dinv;       /* [rows] the reciprocals of the factor's diagonal */
    double *dq, *z;     /* [cols] */
    double *dqp;        /* [cols] the last step while settling (extrapolation) */
    /* Anderson mixing of the settle (ikd__multi_mix): the changes of the last
     * MULTI_MIX plain steps and the steps taken before them, a ring */
    double *mixg, *mixq; /* [MULTI_MIX x cols] */
    double *mixraw, *mixtook; /* [cols] the last step as primary_step gave it, and as it was taken */
    int mixn;           /* pairs in the ring (-1: no step of this settle yet) */
    int mixpos;         /* the ring's next slot */
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

/* A free root's move for its three columns' values: along the ground
 * (normal to up) an anchored root's columns are its moves times
 * w->anchor_w, so the step's metric and the rest pull weigh them that much
 * more (a foot-placement pelvis lowers rather than slides); else as is. */
static inline ikd_vec3 multi_root_move(const multi_ws *w, ikd_vec3 up, ikd_vec3 du)
{
    if (!w->anchored) return du;
    double v = ikd_vec3_dot(du, up);
    return ikd_vec3_add(ikd_vec3_scale(ikd_vec3_mad(du, up, -v), 1 / w->anchor_w), ikd_vec3_scale(up, v));
}

/* Where the pull takes joint k: options.preferred's rotation, else its
 * rest, or where its limit excludes rest the middle of those ranges
 * (neutral_local: docs/solvers.md, "Where the pull goes"). */
static inline ikd_quat multi_pull_to(const ikd_multi_problem *p, size_t k)
{
    return p->preferred ? p->preferred[k] : p->skeleton->joints[k].neutral_local;
}

/* Restarts' fixed pseudo-random sequence (xorshift64): restart r's state,
 * and the next number in [0, 1) from it. */
static inline unsigned long long multi_restart_seed(int r)
{
    return 0x9E3779B97F4A7C15ull * (unsigned long long)(r + 1);
}

static inline double multi_restart_unit(unsigned long long *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return (double)(*x >> 11) / 9007199254740992.0;
}

/* 1 when the problem's cancel flag is up or its deadline has passed now. */
static inline int multi_out_of_time(const ikd_multi_problem *p)
{
    return (p->cancel && atomic_load_explicit(p->cancel, memory_order_relaxed)) ||
           (p->deadline_ns && ikd_clock_ns() > p->deadline_ns);
}

/* A goal's result within the problem's tolerances. */
static inline int multi_met(const ikd_multi_problem *p, const ikd_goal_result *r)
{
    return r->error <= p->tolerance && r->rotation_error_deg <= p->rotation_tolerance_deg;
}

/* The rows of goal i: the first, and in *nr how many. */
static inline size_t multi_goal_rows(const multi_ws *w, size_t i, size_t *nr)
{
    *nr = (w->want[i] & 1 ? 3 : 0) + (w->want[i] & 16 ? 1 : 0) + (w->want[i] & 2 ? 3 : w->want[i] & 4 ? 2 : 0);
    return (size_t)w->row0[i];
}

/* options.pull_max_deg in radians; INFINITY when 0 (no bound). */
static inline double multi_pull_bound(const ikd_multi_problem *p)
{
    return p->pull_max_deg > 0 ? p->pull_max_deg * IKD_DEG2RAD : INFINITY;
}

/* The world axes of joint k's columns (joint_frames). */
static inline int multi_joint_axes(const multi_ws *w, size_t k, ikd_vec3 ax[3])
{
    for (int a = 0; a < w->dof[k]; a++) ax[a] = w->axw[3 * k + (size_t)a];
    return w->dof[k];
}

/* set-up (multi_setup.c); each is described where it is defined */
void ikd__multi_ws_carve(multi_ws *w, void *mem, size_t n, size_t g);
void ikd__multi_setup_columns(multi_ws *w, const ikd_skeleton *s, int ranged);
/* Each joint's first column (w->col; -1: a fixed joint, one with no
 * degrees of freedom left (w->dof 0), or one skip[k] leaves out), the
 * column count (a free root's translation last) and the columns' scales
 * (w->ranged: the range metric). */
void ikd__multi_layout_columns(multi_ws *w, const ikd_skeleton *s, const int *skip);
void ikd__multi_drop_idle(multi_ws *w, const ikd_multi_problem *p);
void ikd__multi_setup_targets(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *start);
/* The natural swivels (want bit 64, w->swivel) of the free limbs that have
 * none yet, read from the geometry of ref (NULL: the rest pose; else a
 * pose's forward kinematics). */
void ikd__multi_setup_swivels(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *ref);
/* A free root with a position goal of its own starts at that goal's
 * target: 1 with *q p so moved, 0 when p has none. (From a rest pose a
 * clip's hips goal can lie a body's height away: Boxing_Toes' frame 0 from
 * rest stopped 97 units short after 300 iterations.) */
int ikd__multi_root_at_goal(const ikd_multi_problem *p, ikd_multi_problem *q);
/* Where the rest pose gave a free limb (no pole, 3-DoF joints) no natural
 * swivel (a zero pose that is no standing pose: bones in one line, LaFAN1's
 * and Maya's joint frames baked into the offsets, frames turned), the start
 * pose's geometry (local; pose its forward kinematics, computed here when
 * `fk`) gives it; layered on a pose (options.preferred, the start) a leg's
 * side alone, for prebend (docs/solvers.md, "Natural swivel"). */
void ikd__multi_swivels_from_start(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, ikd_pose_joint *pose,
                                   int fk);
void ikd__multi_setup_paths(multi_ws *w, const ikd_multi_problem *p);
void ikd__multi_layout_rows(multi_ws *w);
void ikd__multi_setup_preferred(multi_ws *w, const ikd_multi_problem *p);
void ikd__multi_goal_weights(multi_ws *w, const ikd_multi_problem *p, int by_priority);
ikd_quat ikd__multi_within_limit(const ikd_skeleton *s, size_t k, ikd_quat q);
ikd_vec3 ikd__multi_rot_vec(ikd_quat q);
/* what ikd__multi_rot_vec scales a unit quaternion's vector part by, from
 * its length s and its w = c >= 0: the angle over the half angle's sine */
double ikd__multi_rot_scale(double s, double c);
void ikd__multi_snap_idle(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local);
void ikd__multi_prebend(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose);
/* A cold solve's first restart (no start pose, nothing preferred): the
 * joints the goals move at their rest (neutral_local) and each limb goal's
 * limb aimed at its target from there (aim_limb); 0 when no goal has
 * such a limb (local unchanged). With local NULL: whether it would aim. */
int ikd__multi_preaim(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, ikd_pose_joint *pose);
ikd_vec3 ikd__multi_swivel_side(const multi_ws *w, const ikd_pose_joint *pose, size_t i);

/* columns and rows (multi_rows.c); each is described where it is defined */
void ikd__multi_joint_frames(multi_ws *w, const ikd_skeleton *s, const ikd_quat *local, const ikd_pose_joint *pose);
int ikd__multi_limb_of(const multi_ws *w, const ikd_multi_problem *p, size_t i, long *m, long *u);
double ikd__multi_limb_reach(const ikd_skeleton *s, size_t j, long m);
int ikd__multi_out_of_reach(const multi_ws *w, const ikd_multi_problem *p, size_t i);
int ikd__multi_softened_beyond(const multi_ws *w, const ikd_multi_problem *p, size_t i);
int ikd__multi_inside_bones(const multi_ws *w, const ikd_multi_problem *p, size_t i);
int ikd__multi_unreachable(const multi_ws *w, const ikd_multi_problem *p, size_t i);
void ikd__multi_mark_far(multi_ws *w, const ikd_multi_problem *p);
ikd_vec3 ikd__multi_limb_target(const multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, size_t i);
int ikd__multi_build_rows(multi_ws *w, const ikd_multi_problem *p, const ikd_pose_joint *pose, ikd_goal_result *gr, int jac);

/* linear algebra (multi_la.c); each is described where it is defined */
void ikd__multi_form_product(multi_ws *w);
int ikd__multi_factor(multi_ws *w);
void ikd__multi_solve_factored(const multi_ws *w, const double *b, double *x);
void ikd__multi_jt(multi_ws *w, const double *v, double *out);
void ikd__multi_residual(multi_ws *w, double k);
int ikd__multi_lock_columns(multi_ws *w, double k);
int ikd__multi_unguess(multi_ws *w, int np, double k);
/* Anderson mixing of a settle's steps (multi_la.c): the pair a settling
 * step's w->dq makes with the last goes in (push); dq mixed with the
 * pairs, 1 when it was (mix); the step as taken kept (took). */
void ikd__multi_mix_push(multi_ws *w);
int ikd__multi_mix(multi_ws *w);
void ikd__multi_mix_took(multi_ws *w);
void ikd__multi_move_column(multi_ws *w, size_t col, double *t, int back);

/* one step (multi_step.c); each is described where it is defined */
double ikd__multi_step_turn(const multi_ws *w);
double ikd__multi_apply(const multi_ws *w, const ikd_multi_problem *p, ikd_quat *local, const ikd_pose_joint *pose,
                        ikd_vec3 *root, double max_step);
double ikd__multi_damping_for(const ikd_multi_problem *p, double en);
double ikd__multi_task_norm(const multi_ws *w);
int ikd__multi_primary_step(multi_ws *w, const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose,
                            double lambda, double mu, double kmin, int guess);

#endif
