/* humanoid.c - a 25-joint humanoid (euler spine, wrists and ankles; ball shoulders and hips with twist; hinge elbows,
 * knees and toes), 6R/7R robot arms, and goals from forward kinematics of random poses inside their limits. */
#include "humanoid.h"

#include <stdlib.h>
#include <string.h>

const char *const humanoid_names[HUMANOID_JOINTS] = {
    "pelvis",     "spine1",    "spine2",     "chest",      "neck",    "head",      "head_end",
    "clavicle_l", "upperarm_l", "lowerarm_l", "hand_l",    "hand_end_l", "clavicle_r", "upperarm_r",
    "lowerarm_r", "hand_r",    "hand_end_r", "thigh_l",    "calf_l",  "foot_l",    "toe_l",
    "thigh_r",    "calf_r",    "foot_r",     "toe_r"};

static const struct {
    int parent;
    double x, y, z;
} layout[HUMANOID_JOINTS] = {
    {-1, 0, 1.0, 0},      {0, 0, 1.1, 0},       {1, 0, 1.25, 0},     {2, 0, 1.4, 0},     {3, 0, 1.55, 0},
    {4, 0, 1.65, 0.02},   {5, 0, 1.82, 0.02},   {3, 0.04, 1.5, 0},   {7, 0.18, 1.5, 0},  {8, 0.45, 1.5, 0},
    {9, 0.7, 1.5, 0},     {10, 0.8, 1.5, 0},    {3, -0.04, 1.5, 0},  {12, -0.18, 1.5, 0}, {13, -0.45, 1.5, 0},
    {14, -0.7, 1.5, 0},   {15, -0.8, 1.5, 0},   {0, 0.1, 0.95, 0},   {17, 0.1, 0.52, 0.01}, {18, 0.1, 0.09, 0},
    {19, 0.1, 0.02, 0.13}, {0, -0.1, 0.95, 0},  {21, -0.1, 0.52, 0.01}, {22, -0.1, 0.09, 0}, {23, -0.1, 0.02, 0.13}};

const char *hset_name(hset_kind k)
{
    static const char *const names[] = {"positions", "full 6dof+aim", "free root", "ground", "no limits"};
    return (unsigned)k < HSET__COUNT ? names[k] : "?";
}

static void euler(ikd_limit *l, ikd_euler_order o, double a, double b, double c)
{
    ikd_limit_init(l, IKD_LIMIT_EULER);
    l->order = o;
    double r[3] = {a, b, c};
    for (int i = 0; i < 3; i++) l->euler_min_deg[i] = -r[i], l->euler_max_deg[i] = r[i];
}

static void ball(ikd_limit *l, double swing, double twist)
{
    ikd_limit_init(l, IKD_LIMIT_BALL);
    l->max_deg = swing, l->twist_min_deg = -twist, l->twist_max_deg = twist;
}

static void hinge(ikd_limit *l, ikd_quat turn, ikd_vec3 axis, double lo, double hi)
{
    ikd_limit_init(l, IKD_LIMIT_HINGE);
    l->has_axis = 1, l->axis = ikd_quat_rotate(turn, axis), l->min_deg = lo, l->max_deg = hi;
}

/* A rig of the humanoid family (humanoid_family_make): the bench rig is
 * {1, 1, 1, 1, 1, HUMANOID_REST_T}. */
typedef struct rig_shape {
    double height;          /* every length times this */
    double spine, arm, leg; /* each part's bones times this (proportions) */
    double tight;           /* every range times this (clamped to what a limit allows) */
    int rest;               /* HUMANOID_REST_* */
} rig_shape;

/* A rest offset of joint i from its parent, shaped: scaled by its part,
 * and for an A-pose the arms turned 45 degrees down (about forward), for a
 * sitting rest the thighs turned 90 degrees forward (about left). *arm_turn
 * gets the arm's turn (for its elbow's axis). */
static ikd_vec3 shaped_offset(int i, const rig_shape *sh, ikd_quat *arm_turn)
{
    int p = layout[i].parent;
    ikd_vec3 off = ikd_vec3_make(layout[i].x - layout[p].x, layout[i].y - layout[p].y, layout[i].z - layout[p].z);
    int arm = (i >= 8 && i <= 11) || (i >= 13 && i <= 16), leg = (i >= 18 && i <= 20) || (i >= 22 && i <= 24);
    double k = arm ? sh->arm : leg ? sh->leg : i >= 1 && i <= 6 ? sh->spine : 1;
    off = ikd_vec3_scale(off, k * sh->height);
    *arm_turn = ikd_quat_identity();
    if (arm && sh->rest == HUMANOID_REST_A) {
        *arm_turn = ikd_quat_axis_angle(ikd_vec3_make(0, 0, 1), (i <= 11 ? -45 : 45) * IKD_DEG2RAD);
        off = ikd_quat_rotate(*arm_turn, off);
    }
    if ((i == 18 || i == 22) && sh->rest == HUMANOID_REST_SITTING)
        off = ikd_quat_rotate(ikd_quat_axis_angle(ikd_vec3_make(1, 0, 0), -90 * IKD_DEG2RAD), off);
    return off;
}

static void euler_t(ikd_limit *l, double t, double a, double b, double c)
{
    euler(l, IKD_EULER_XYZ, fmin(a * t, 180), fmin(b * t, 85), fmin(c * t, 180));
}

/* The skeleton shaped by `sh`, its rest pose turned by `turn` about the origin. */
static void build_shaped(humanoid_problem *hp, ikd_quat turn, int limits, const rig_shape *sh)
{
    ikd_skeleton_joint *j = hp->joints;
    ikd_vec3 at[HUMANOID_JOINTS];
    ikd_quat arm_turn[HUMANOID_JOINTS];
    int same = sh->height == 1 && sh->spine == 1 && sh->arm == 1 && sh->leg == 1 && sh->rest == HUMANOID_REST_T;
    for (int i = 0; i < HUMANOID_JOINTS; i++) {
        arm_turn[i] = ikd_quat_identity();
        ikd_vec3 off = i ? shaped_offset(i, sh, &arm_turn[i]) : ikd_vec3_make(0, 0, 0);
        at[i] = ikd_vec3_scale(ikd_vec3_make(layout[i].x, layout[i].y, layout[i].z), sh->height);
        if (i && !same) at[i] = ikd_vec3_add(at[layout[i].parent], off); /* (the bench's rig: its layout exactly) */
        memset(&j[i], 0, sizeof j[i]);
        j[i].parent = layout[i].parent;
        j[i].position = ikd_quat_rotate(turn, at[i]);
        j[i].rotation = turn;
        ikd_limit_init(&j[i].limit, IKD_LIMIT_NONE);
    }
    if (limits) {
        double t = sh->tight;
        int sit = sh->rest == HUMANOID_REST_SITTING;
        for (int i = 1; i <= 3; i++) euler_t(&j[i].limit, t, 20, 15, 20);           /* spine */
        euler_t(&j[4].limit, t, 40, 50, 30);                                        /* neck */
        euler_t(&j[5].limit, t, 30, 40, 20);                                        /* head */
        for (int s = 0; s < 2; s++) {
            int b = s ? 12 : 7;
            euler_t(&j[b].limit, t, 10, 15, 20);                                    /* clavicle */
            ball(&j[b + 1].limit, fmin(100 * t, 180), fmin(80 * t, 180));           /* shoulder */
            ikd_quat elbow = ikd_quat_mul(turn, arm_turn[b + 2]);
            hinge(&j[b + 2].limit, elbow, ikd_vec3_make(0, s ? -1 : 1, 0), 0, fmin(145 * t, 180)); /* elbow */
            euler_t(&j[b + 3].limit, t, 70, 30, 80);                                /* wrist */
            int h = s ? 21 : 17;
            ball(&j[h].limit, fmin(90 * t, 180), fmin(45 * t, 180));                /* hip */
            hinge(&j[h + 1].limit, turn, ikd_vec3_make(1, 0, 0), sit ? -90 : 0,    /* knee (sitting: bent 90 at rest) */
                  fmin((sit ? 60 : 150) * t, 180));
            euler_t(&j[h + 2].limit, t, 40, 20, 25);                                /* ankle */
            hinge(&j[h + 3].limit, turn, ikd_vec3_make(1, 0, 0), -30 * t, 60 * t); /* toes */
        }
    }
    hp->skeleton = (ikd_skeleton){j, HUMANOID_JOINTS, 0};
    ikd_error err;
    if (ikd_skeleton_validate(&hp->skeleton, &err) != IKD_E_OK) abort();
}

/* The bench's humanoid, its rest pose turned by `turn` about the origin. */
static void build(humanoid_problem *hp, ikd_quat turn, int limits)
{
    static const rig_shape bench = {1, 1, 1, 1, 1, HUMANOID_REST_T};
    build_shaped(hp, turn, limits, &bench);
}

/* A random pose inside the limits: each joint's deviation a random rotation
 * of up to `max_rad`, projected onto its limit. */
static void random_pose(tu_rng *r, const ikd_skeleton *s, double max_rad, ikd_quat *local)
{
    for (size_t i = 0; i < s->count; i++) {
        ikd_quat d = ikd_limit_project(&s->joints[i].limit, tu_small_quat(r, max_rad));
        local[i] = ikd_quat_norm(ikd_quat_mul(s->joints[i].rest_local, d));
    }
}

static void make_on(tu_rng *r, hset_kind kind, int far, humanoid_problem *hp, const rig_shape *sh);

void humanoid_make(tu_rng *r, hset_kind kind, int far, humanoid_problem *hp)
{
    static const rig_shape bench = {1, 1, 1, 1, 1, HUMANOID_REST_T};
    make_on(r, kind, far, hp, &bench);
}

const char *humanoid_family_make(tu_rng *r, hset_kind kind, humanoid_problem *hp)
{
    static const char *const rests[] = {"T", "A", "sitting"};
    rig_shape sh = {tu_uniform(r, 0.5, 2), tu_uniform(r, 0.8, 1.25), tu_uniform(r, 0.8, 1.25), tu_uniform(r, 0.8, 1.25),
                    tu_uniform(r, 0.6, 1.3), (int)(tu_next(r) % 3)};
    make_on(r, kind, 0, hp, &sh);
    return rests[sh.rest];
}

static void make_on(tu_rng *r, hset_kind kind, int far, humanoid_problem *hp, const rig_shape *sh)
{
    ikd_quat turn = tu_next(r) % 2 ? tu_unit_quat(r) : ikd_quat_identity();
    build_shaped(hp, turn, kind != HSET_NO_LIMITS, sh);
    const ikd_skeleton *s = &hp->skeleton;
    ikd_quat target[HUMANOID_JOINTS];
    ikd_pose_joint tp[HUMANOID_JOINTS];
    random_pose(r, s, 1.0, target);
    target[0] = s->joints[0].rest_local;
    memcpy(hp->target, target, sizeof target);
    hp->root = s->joints[0].position;
    hp->root_free = kind == HSET_FREE_ROOT || kind == HSET_GROUND;
    hp->up = ikd_quat_rotate(turn, ikd_vec3_make(0, 1, 0));
    ikd_vec3 troot = hp->root;
    if (hp->root_free)
        troot = ikd_vec3_add(troot, ikd_quat_rotate(turn, ikd_vec3_scale(ikd_vec3_make(tu_uniform(r, -0.1, 0.1),
                                                                                      tu_uniform(r, -0.15, 0.05),
                                                                                      tu_uniform(r, -0.1, 0.1)),
                                                                       sh->height)));
    ikd_skeleton_fk(s, troot, target, tp);
    hp->has_start = tu_next(r) % 4 == 0;
    if (hp->has_start) random_pose(r, s, 0.5, hp->start);
    static const size_t ends[4] = {10, 15, 19, 23}; /* hands, feet */
    hp->goal_count = 0;
    for (int e = kind == HSET_GROUND ? 2 : 0; e < 4; e++) { /* ground: the feet alone */
        ikd_goal *g = &hp->goals[hp->goal_count++];
        ikd_goal_init(g, ends[e]);
        if (kind == HSET_GROUND && e >= 2) { /* a plane tilted up to 15 degrees, 0.15 below to above the rest floor */
            ikd_vec3 up = ikd_quat_rotate(turn, ikd_vec3_make(0, 1, 0));
            ikd_vec3 n = ikd_quat_rotate(tu_small_quat(r, 15 * IKD_DEG2RAD), up);
            g->has_ground = 1;
            g->ground_normal = n;
            g->ground_point = ikd_vec3_add(s->joints[ends[e]].position,
                                           ikd_vec3_scale(ikd_vec3_add(ikd_vec3_scale(up, tu_uniform(r, -0.15, 0.15) - 0.09),
                                                                       ikd_quat_rotate(turn, ikd_vec3_make(0, 0, tu_uniform(r, -0.1, 0.1)))),
                                                          sh->height));
            continue;
        }
        g->has_position = 1;
        g->position = tp[ends[e]].position;
        if (kind == HSET_FULL) g->has_rotation = 1, g->rotation = tp[ends[e]].rotation;
    }
    if (kind == HSET_FULL) { /* the head looks where its target pose looks */
        ikd_goal *g = &hp->goals[hp->goal_count++];
        ikd_goal_init(g, 5);
        g->has_aim = 1;
        g->aim_axis = ikd_quat_rotate(turn, ikd_vec3_make(0, 0, 1));
        ikd_vec3 look = ikd_quat_rotate(ikd_quat_mul(tp[5].rotation, ikd_quat_conj(s->joints[5].rotation)), g->aim_axis);
        g->aim_at = ikd_vec3_mad(tp[5].position, look, 2.0);
    }
    hp->far_goal = -1;
    if (far && !hp->root_free) { /* a hand goal beyond the arm's reach from the fixed root */
        hp->far_goal = 0;
        ikd_goal *g = &hp->goals[0];
        ikd_vec3 dir = ikd_vec3_norm_or(ikd_vec3_sub(g->position, hp->root), ikd_vec3_make(1, 0, 0));
        g->position = ikd_vec3_mad(hp->root, dir, 3.0); /* the skeleton reaches about 1.4 */
        g->has_rotation = 0;
    }
}

/* The arms: each joint a hinge about a rest-pose axis (yaw and roll about
 * the arm's length, pitch across it), then the flange (fixed). */
static const struct {
    double y, lo, hi;
    char axis; /* 'y': yaw or roll, 'x': pitch */
} arm6[] = {{0, -170, 170, 'y'},   {0.2, -110, 110, 'x'}, {0.6, -140, 140, 'x'}, {0.9, -170, 170, 'y'},
            {1.0, -120, 120, 'x'}, {1.1, -170, 170, 'y'}, {1.2, 0, 0, 0}},
  arm7[] = {{0, -170, 170, 'y'},   {0.2, -120, 120, 'x'}, {0.4, -170, 170, 'y'}, {0.6, -120, 120, 'x'},
            {0.8, -170, 170, 'y'}, {1.0, -120, 120, 'x'}, {1.1, -175, 175, 'y'}, {1.2, 0, 0, 0}};

void arm_make(tu_rng *r, int dof, humanoid_problem *hp)
{
    ikd_quat turn = tu_next(r) % 2 ? tu_unit_quat(r) : ikd_quat_identity();
    size_t n = (size_t)dof + 1;
    ikd_skeleton_joint *j = hp->joints;
    for (size_t i = 0; i < n; i++) {
        double y = dof == 7 ? arm7[i].y : arm6[i].y, lo = dof == 7 ? arm7[i].lo : arm6[i].lo;
        double hi = dof == 7 ? arm7[i].hi : arm6[i].hi;
        char ax = dof == 7 ? arm7[i].axis : arm6[i].axis;
        memset(&j[i], 0, sizeof j[i]);
        j[i].parent = (long)i - 1;
        j[i].position = ikd_quat_rotate(turn, ikd_vec3_make(0, y, 0));
        j[i].rotation = turn;
        if (ax) hinge(&j[i].limit, turn, ax == 'y' ? ikd_vec3_make(0, 1, 0) : ikd_vec3_make(1, 0, 0), lo, hi);
        else ikd_limit_init(&j[i].limit, IKD_LIMIT_FIXED);
    }
    hp->skeleton = (ikd_skeleton){j, n, 0};
    ikd_error err;
    if (ikd_skeleton_validate(&hp->skeleton, &err) != IKD_E_OK) abort();
    ikd_quat target[HUMANOID_JOINTS];
    ikd_pose_joint tp[HUMANOID_JOINTS];
    for (size_t i = 0; i < n; i++) { /* each hinge anywhere in its range */
        const ikd_limit *l = &j[i].limit;
        double a = l->type == IKD_LIMIT_HINGE ? tu_uniform(r, l->min_deg, l->max_deg) * IKD_DEG2RAD : 0;
        target[i] = ikd_quat_mul(j[i].rest_local, ikd_quat_axis_angle(l->local_axis, a));
    }
    hp->root = j[0].position;
    hp->up = ikd_quat_rotate(turn, ikd_vec3_make(0, 1, 0));
    hp->root_free = 0;
    ikd_skeleton_fk(&hp->skeleton, hp->root, target, tp);
    hp->has_start = tu_next(r) % 4 == 0;
    if (hp->has_start) random_pose(r, &hp->skeleton, 1.0, hp->start);
    hp->goal_count = 1;
    ikd_goal_init(&hp->goals[0], n - 1);
    hp->goals[0].has_position = 1, hp->goals[0].position = tp[n - 1].position;
    hp->goals[0].has_rotation = 1, hp->goals[0].rotation = tp[n - 1].rotation;
    hp->far_goal = -1;
}

/* A turn of a URDF joint's origin: mostly quarter turns about its frame's
 * axes (as real arms are drawn), 1 in 6 any rotation. */
static ikd_quat urdf_turn(tu_rng *r)
{
    if (tu_next(r) % 6 == 0) return tu_unit_quat(r);
    ikd_quat q = ikd_quat_identity();
    for (int t = (int)(tu_next(r) % 3); t > 0; t--) {
        ikd_vec3 ax = ikd_vec3_make(0, 0, 0);
        (&ax.x)[tu_next(r) % 3] = 1;
        q = ikd_quat_mul(q, ikd_quat_axis_angle(ax, (double)(1 + tu_next(r) % 3) * IKD_PI / 2));
    }
    return q;
}

/* Joint n of an arm-family arm on joint n - 1: a link and an origin turn
 * as above; a hinge about one of its own axes when `hinge_joint`. */
static void arm_joint(tu_rng *r, ikd_skeleton_joint *j, ikd_quat *W, size_t n, int hinge_joint)
{
    size_t p = n - 1;
    ikd_vec3 off = ikd_vec3_make(0, 0, 0);
    (&off.x)[tu_next(r) % 3] = (tu_next(r) % 2 ? 1 : -1) * tu_uniform(r, 0.05, 0.4);
    if (tu_next(r) % 4 == 0) (&off.x)[tu_next(r) % 3] += tu_uniform(r, -0.1, 0.1);
    W[n] = ikd_quat_norm(ikd_quat_mul(W[p], urdf_turn(r)));
    j[n].parent = (long)p;
    j[n].position = ikd_vec3_add(j[p].position, ikd_quat_rotate(W[p], off));
    j[n].rotation = W[n];
    if (!hinge_joint) {
        ikd_limit_init(&j[n].limit, IKD_LIMIT_FIXED);
        return;
    }
    ikd_vec3 ax = ikd_vec3_make(0, 0, 0);
    (&ax.x)[tu_next(r) % 3] = tu_next(r) % 2 ? 1 : -1;
    double lo = -180, hi = 180;
    if (tu_next(r) % 4) {
        double width = tu_uniform(r, 90, 350);
        lo = tu_uniform(r, -180, 180 - width), hi = lo + width;
    }
    hinge(&j[n].limit, W[n], ax, lo, hi);
}

void arm_family_make(tu_rng *r, int dof, humanoid_problem *hp)
{
    ikd_skeleton_joint *j = hp->joints;
    ikd_quat W[HUMANOID_JOINTS];
    memset(j, 0, sizeof hp->joints);
    W[0] = tu_next(r) % 2 ? tu_unit_quat(r) : ikd_quat_identity();
    j[0].parent = -1, j[0].position = ikd_vec3_make(0, 0.5, 0), j[0].rotation = W[0]; /* the base */
    ikd_limit_init(&j[0].limit, IKD_LIMIT_FIXED);
    size_t n = 1;
    for (int h = 0; h < dof; h++) {
        if (tu_next(r) % 3 == 0) arm_joint(r, j, W, n++, 0);
        arm_joint(r, j, W, n++, 1);
    }
    arm_joint(r, j, W, n++, 0); /* the flange */
    arm_joint(r, j, W, n++, 0); /* a tool */
    hp->skeleton = (ikd_skeleton){j, n, 0};
    ikd_error err;
    if (ikd_skeleton_validate(&hp->skeleton, &err) != IKD_E_OK) abort();
    ikd_pose_joint tp[HUMANOID_JOINTS];
    for (size_t i = 0; i < n; i++) { /* each hinge anywhere in its range */
        const ikd_limit *l = &j[i].limit;
        double a = l->type == IKD_LIMIT_HINGE ? tu_uniform(r, l->min_deg, l->max_deg) * IKD_DEG2RAD : 0;
        hp->target[i] = ikd_quat_mul(j[i].rest_local, ikd_quat_axis_angle(l->local_axis, a));
    }
    hp->root = j[0].position;
    hp->up = ikd_quat_rotate(W[0], ikd_vec3_make(0, 1, 0));
    hp->root_free = 0;
    ikd_skeleton_fk(&hp->skeleton, hp->root, hp->target, tp);
    hp->has_start = tu_next(r) % 4 == 0;
    if (hp->has_start) random_pose(r, &hp->skeleton, 1.0, hp->start);
    hp->goal_count = 1;
    ikd_goal_init(&hp->goals[0], n - 1);
    hp->goals[0].has_position = 1, hp->goals[0].position = tp[n - 1].position;
    if (tu_next(r) % 4) hp->goals[0].has_rotation = 1, hp->goals[0].rotation = tp[n - 1].rotation;
    hp->far_goal = -1;
}

ikd_code humanoid_setup(ikd_multi_problem *p, const humanoid_problem *hp, ikd_goal *goals, size_t n,
                        const ikd_quat *start, ikd_vec3 root, ikd_error *err)
{
    ikd_multi_init(p);
    p->skeleton = &hp->skeleton;
    p->root = root;
    p->root_free = hp->root_free;
    p->up = hp->up;
    p->start = start;
    p->goal_count = n;
    return ikd_multi_validate(p, goals, err);
}

const char *clip_kind_name(clip_kind k)
{
    static const char *const names[] = {"humanoid 6dof", "humanoid pos", "chain free", "chain hinge", "chain ball"};
    return (unsigned)k < CLIP__COUNT ? names[k] : "?";
}

/* An 8-joint chain up the y axis (bones of 1/7): free, knee-like hinges
 * (about x, [0, 150] degrees) or 45-degree balls; the end fixed. */
static void chain8(humanoid_problem *hp, clip_kind kind)
{
    ikd_skeleton_joint *j = hp->joints;
    for (int i = 0; i < 8; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].parent = i - 1;
        j[i].position = ikd_vec3_make(0, i / 7.0, 0);
        j[i].rotation = ikd_quat_identity();
        ikd_limit_init(&j[i].limit, IKD_LIMIT_NONE);
        if (i == 7) ikd_limit_init(&j[i].limit, IKD_LIMIT_FIXED);
        else if (kind == CLIP_CHAIN_HINGE) hinge(&j[i].limit, ikd_quat_identity(), ikd_vec3_make(1, 0, 0), 0, 150);
        else if (kind == CLIP_CHAIN_BALL) ball(&j[i].limit, 45, 180);
    }
    hp->skeleton = (ikd_skeleton){j, 8, 0};
    ikd_error err;
    if (ikd_skeleton_validate(&hp->skeleton, &err) != IKD_E_OK) abort();
}

/* Joint i's deviation at phase t (radians of the period): a hinge sweeps
 * 90% of its range (about its middle); other joints turn about a fixed
 * axis by amp sin(t + phase), projected onto the limit. */
static ikd_quat trajectory(const ikd_limit *l, ikd_vec3 axis, double amp, double phase, double t)
{
    if (l->type == IKD_LIMIT_FIXED) return ikd_quat_identity();
    if (l->type == IKD_LIMIT_HINGE) {
        double mid = 0.5 * (l->min_deg + l->max_deg), half = 0.45 * (l->max_deg - l->min_deg) * (amp / 1.2);
        return ikd_quat_axis_angle(l->local_axis, (mid + half * sin(t + phase)) * IKD_DEG2RAD);
    }
    return ikd_limit_project(l, ikd_quat_axis_angle(axis, amp * sin(t + phase)));
}

void clip_make(tu_rng *r, clip_kind kind, size_t frames, size_t period, clip_problem *cp)
{
    humanoid_problem *hp = &cp->hp;
    int human = kind == CLIP_HUMANOID_FULL || kind == CLIP_HUMANOID_POS;
    if (human) build(hp, ikd_quat_identity(), 1);
    else chain8(hp, kind);
    const ikd_skeleton *s = &hp->skeleton;
    size_t n = s->count;
    static const size_t ends[4] = {10, 15, 19, 23};
    cp->goal_count = human ? 4 : 1;
    cp->frames = frames;
    cp->goals = calloc(frames * cp->goal_count, sizeof *cp->goals);
    cp->truth = calloc(frames * n, sizeof *cp->truth);
    ikd_vec3 axis[HUMANOID_JOINTS];
    double amp[HUMANOID_JOINTS], phase[HUMANOID_JOINTS];
    for (size_t i = 0; i < n; i++)
        axis[i] = tu_unit_vec(r), amp[i] = tu_uniform(r, 0.3, 1.2), phase[i] = tu_uniform(r, 0, 2 * IKD_PI);
    hp->root = s->joints[0].position;
    hp->up = ikd_vec3_make(0, 1, 0);
    hp->root_free = 0;
    hp->has_start = 0;
    hp->far_goal = -1;
    hp->goal_count = cp->goal_count;
    for (size_t k = 0; k < frames; k++) {
        double t = 2 * IKD_PI * (double)k / (double)period;
        ikd_quat *local = &cp->truth[k * n];
        ikd_pose_joint pose[HUMANOID_JOINTS];
        for (size_t i = 0; i < n; i++)
            local[i] = ikd_quat_mul(s->joints[i].rest_local, trajectory(&s->joints[i].limit, axis[i], amp[i], phase[i], t));
        local[0] = s->joints[0].rest_local; /* the root joint turns too little to matter: held */
        ikd_skeleton_fk(s, hp->root, local, pose);
        for (size_t g = 0; g < cp->goal_count; g++) {
            ikd_goal *goal = &cp->goals[k * cp->goal_count + g];
            size_t j = human ? ends[g] : n - 1;
            ikd_goal_init(goal, j);
            goal->has_position = 1, goal->position = pose[j].position;
            if (kind == CLIP_HUMANOID_FULL) goal->has_rotation = 1, goal->rotation = pose[j].rotation;
        }
    }
    memcpy(hp->goals, cp->goals, cp->goal_count * sizeof *cp->goals);
}

void clip_free(clip_problem *cp)
{
    free(cp->goals);
    free(cp->truth);
    cp->goals = NULL, cp->truth = NULL;
}

double clip_positions_apart(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *a, const ikd_quat *b)
{
    ikd_pose_joint pa[HUMANOID_JOINTS], pb[HUMANOID_JOINTS];
    ikd_skeleton_fk(s, root, a, pa);
    ikd_skeleton_fk(s, root, b, pb);
    double most = 0;
    for (size_t j = 0; j < s->count; j++) most = fmax(most, ikd_vec3_dist(pa[j].position, pb[j].position) / s->size);
    return most;
}

/* hp said as a rig whose zero pose is a straight line (LaFAN1's and Maya's
 * joint frames baked into the offsets): each joint's frame turned by c[j],
 * the turn from x to its first child's bone, so its offsets become
 * c[j]^-1 o and every rest rotation identity; a pose's local rotations map
 * as c[parent]^-1 q c[j] (every joint where hp's pose puts it) and goals'
 * rotations as r c[j]. Into *lr, with hp's rest pose said this way in
 * stand (a standing start). */
ikd_code humanoid_straight_line(const humanoid_problem *hp, humanoid_problem *lr, ikd_quat *stand)
{
    const ikd_skeleton *s = &hp->skeleton;
    ikd_quat c[HUMANOID_JOINTS];
    *lr = *hp;
    lr->skeleton.joints = lr->joints;
    for (size_t j = 0; j < s->count; j++) {
        long f = s->joints[j].first_child;
        c[j] = f < 0 ? ikd_quat_identity() : ikd_quat_arc(ikd_vec3_make(1, 0, 0), s->joints[f].offset);
    }
    for (size_t j = 0; j < s->count; j++) {
        long pa = s->joints[j].parent;
        ikd_skeleton_joint *l = &lr->joints[j];
        l->rotation = ikd_quat_identity();
        if (pa >= 0)
            l->position = ikd_vec3_add(lr->joints[pa].position, ikd_quat_rotate(ikd_quat_conj(c[pa]), s->joints[j].offset));
        ikd_quat cp = pa >= 0 ? ikd_quat_conj(c[pa]) : ikd_quat_identity();
        lr->target[j] = ikd_quat_norm(ikd_quat_mul(ikd_quat_mul(cp, hp->target[j]), c[j]));
        stand[j] = ikd_quat_norm(ikd_quat_mul(ikd_quat_mul(cp, s->joints[j].rest_local), c[j]));
    }
    for (size_t g = 0; g < hp->goal_count; g++) {
        ikd_goal *q = &lr->goals[g];
        size_t j = q->joint;
        if (q->has_rotation) q->rotation = ikd_quat_norm(ikd_quat_mul(q->rotation, c[j]));
        if (q->has_aim) /* the same axis in the joint's frame */
            q->aim_axis = ikd_quat_rotate(ikd_quat_conj(ikd_quat_mul(s->joints[j].rotation, c[j])), q->aim_axis);
        if (q->has_ground) return IKD_E_INVALID;
    }
    ikd_error err;
    return ikd_skeleton_validate(&lr->skeleton, &err);
}
