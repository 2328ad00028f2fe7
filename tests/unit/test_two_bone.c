/* test_two_bone.c - libcheck suite: two-bone solver properties over generated problems and degenerate cases. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define N_PROBLEMS 20000

typedef struct solved {
    ikd_joint j[3];
    ikd_pose_joint pose[3];
    ikd_result res;
    ikd_problem p;
} solved;

/* A two_bone problem on the chain in s->j toward `target`, default options. */
static void problem3(solved *s, ikd_vec3 target)
{
    ikd_problem_init(&s->p);
    s->p.solver = IKD_SOLVER_TWO_BONE;
    s->p.joints = s->j;
    s->p.joint_count = 3;
    s->p.target = target;
}

static void solve3(solved *s, ikd_vec3 target, const ikd_vec3 *pole)
{
    ikd_error err;
    problem3(s, target);
    if (pole) {
        s->p.has_pole = 1;
        s->p.pole = *pole;
    }
    ck_assert_int_eq(ikd_validate(&s->p, &err), IKD_E_OK);
    ck_assert_int_eq(ikd_solve(&s->p, NULL, 0, s->pose, &s->res, &err), IKD_E_OK);
    ck_assert_int_eq(s->res.solver, IKD_SOLVER_TWO_BONE);
    for (int i = 0; i < 3; i++) {
        ck_assert(ikd_vec3_isfinite(s->pose[i].position));
        ck_assert(ikd_quat_isfinite(s->pose[i].rotation));
        ck_assert(ikd_quat_isfinite(s->pose[i].local_rotation));
    }
    /* root fixed exactly, lengths kept, rotations consistent, effector rotation kept */
    ck_assert(s->pose[0].position.x == s->j[0].position.x && s->pose[0].position.y == s->j[0].position.y &&
              s->pose[0].position.z == s->j[0].position.z);
    ck_assert_double_le(tu_max_length_error(s->j, s->pose, 3), 1e-9);
    ck_assert_double_le(tu_max_rotation_error(s->j, s->pose, 3), 1e-9);
    ck_assert_double_le(ikd_quat_angle_between(s->pose[2].rotation, s->j[2].rotation), 1e-9);
}

static double chain_len(const solved *s) { return ikd_chain_length(s->j, 3); }

static void set_chain(solved *s, ikd_vec3 a, ikd_vec3 b, ikd_vec3 c)
{
    ikd_vec3 pts[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        s->j[i] = (ikd_joint){0};
        s->j[i].position = pts[i];
        s->j[i].rotation = ikd_quat_identity();
    }
}

/* Targets made by forward kinematics of random poses: an exact solution exists. */
START_TEST(reachable_targets_are_hit)
{
    tu_rng r;
    tu_seed(&r, 20261122);
    solved s;
    for (int k = 0; k < N_PROBLEMS; k++) {
        tu_random_chain(&r, s.j, 3, 0.05, 3.0);
        ikd_quat world[3];
        ikd_pose_joint fk[3];
        for (int i = 0; i < 3; i++) world[i] = tu_unit_quat(&r);
        ikd_chain_fk_world(s.j, 3, world, fk);
        ikd_vec3 pole = ikd_vec3_make(tu_uniform(&r, -10, 10), tu_uniform(&r, -10, 10), tu_uniform(&r, -10, 10));
        int use_pole = k % 4 != 0;
        solve3(&s, fk[2].position, use_pole ? &pole : NULL);
        double L = chain_len(&s);
        ck_assert_msg(s.res.error <= 1e-9 * L, "problem %d: error %g", k, s.res.error);
        ck_assert_int_eq(s.res.status, IKD_STATUS_REACHED);
        ck_assert(s.res.reached);
        ck_assert_double_le(ikd_vec3_dist(s.pose[2].position, fk[2].position), 1e-9 * L);
        if (!use_pole) continue;
        /* the middle joint lies in the plane of root, target and pole, on the pole's side */
        ikd_vec3 root = s.j[0].position;
        ikd_vec3 u = ikd_vec3_norm_or(ikd_vec3_sub(fk[2].position, root), ikd_vec3_make(0, 0, 0));
        ikd_vec3 q = ikd_vec3_reject(ikd_vec3_sub(pole, root), u);
        ikd_vec3 m = ikd_vec3_reject(ikd_vec3_sub(s.pose[1].position, root), u);
        if (ikd_vec3_len(q) < 1e-6 * L || ikd_vec3_len(m) < 1e-6 * L) continue;
        ikd_vec3 n = ikd_vec3_norm_or(ikd_vec3_cross(u, q), ikd_vec3_make(0, 0, 0));
        ck_assert_double_le(fabs(ikd_vec3_dot(ikd_vec3_sub(s.pose[1].position, root), n)), 1e-9 * L);
        ck_assert_double_gt(ikd_vec3_dot(m, q), 0);
    }
}
END_TEST

/* Needle-like limbs: one bone 1e-6 to 1e-2 of the other (either one),
 * targets from forward kinematics of random poses. Each bone keeps its own
 * length within 1e-9 of it (solve3) and the target is hit. The middle joint
 * came from l1^2 - l2^2 + d^2, whose rounding at the long bone's scale is a
 * large share of the short bone's square: over these problems a bone 1e-6
 * to 1e-5 of the other ended up to 1.2e-4 of its length off (now 2.2e-10),
 * 1e-4 to 1e-3 up to 1.5e-8 (now 2e-12); found by fuzz_solvers' rigidity
 * check. */
START_TEST(needle_limbs_keep_their_short_bone)
{
    tu_rng r;
    tu_seed(&r, 20261125);
    solved s;
    for (int k = 0; k < N_PROBLEMS / 4; k++) {
        double shrt = pow(10, tu_uniform(&r, -6, -2)), l1 = k % 2 ? shrt : 1, l2 = k % 2 ? 1 : shrt;
        ikd_vec3 a = ikd_vec3_make(tu_uniform(&r, -1, 1), tu_uniform(&r, -1, 1), tu_uniform(&r, -1, 1));
        ikd_vec3 b = ikd_vec3_mad(a, tu_unit_vec(&r), l1);
        set_chain(&s, a, b, ikd_vec3_mad(b, tu_unit_vec(&r), l2));
        ikd_quat world[3];
        ikd_pose_joint fk[3];
        for (int i = 0; i < 3; i++) world[i] = tu_unit_quat(&r);
        ikd_chain_fk_world(s.j, 3, world, fk);
        solve3(&s, fk[2].position, NULL);
        ck_assert_msg(s.res.error <= 1e-9 * chain_len(&s), "problem %d: error %g", k, s.res.error);
    }
}
END_TEST

START_TEST(far_targets_get_a_straight_chain)
{
    tu_rng r;
    tu_seed(&r, 7);
    solved s;
    int unreached = 0;
    for (int k = 0; k < N_PROBLEMS / 2; k++) {
        tu_random_chain(&r, s.j, 3, 0.05, 3.0);
        double L = ikd_chain_length(s.j, 3), l1 = ikd_chain_bone_length(s.j, 0);
        ikd_vec3 u = tu_unit_vec(&r);
        ikd_vec3 target = ikd_vec3_mad(s.j[0].position, u, L * tu_uniform(&r, 1.0 + 1e-6, 5));
        ikd_vec3 pole = ikd_vec3_mad(s.j[0].position, tu_unit_vec(&r), 3);
        solve3(&s, target, k % 2 ? &pole : NULL);
        ck_assert_int_eq(s.res.status, s.res.error <= s.p.options.tolerance ? IKD_STATUS_REACHED : IKD_STATUS_UNREACHABLE);
        ck_assert_int_eq(s.res.reached, s.res.status == IKD_STATUS_REACHED);
        unreached += s.res.status == IKD_STATUS_UNREACHABLE;
        ck_assert_double_le(ikd_vec3_dist(s.pose[1].position, ikd_vec3_mad(s.j[0].position, u, l1)), 1e-9 * L);
        ck_assert_double_le(ikd_vec3_dist(s.pose[2].position, ikd_vec3_mad(s.j[0].position, u, L)), 1e-9 * L);
        ck_assert_double_le(fabs(s.res.error - ikd_vec3_dist(target, s.pose[2].position)), 1e-9 * L);
    }
    ck_assert_int_gt(unreached, N_PROBLEMS / 2 * 9 / 10);
}
END_TEST

START_TEST(near_targets_fold_to_the_shortest_reach)
{
    tu_rng r;
    tu_seed(&r, 8);
    solved s;
    int tested = 0, unreached = 0;
    for (int k = 0; k < N_PROBLEMS / 2; k++) {
        tu_random_chain(&r, s.j, 3, 0.05, 3.0);
        double l1 = ikd_chain_bone_length(s.j, 0), l2 = ikd_chain_bone_length(s.j, 1), L = l1 + l2;
        double dmin = fabs(l1 - l2);
        if (dmin < 1e-3 * L) continue;
        ikd_vec3 u = tu_unit_vec(&r);
        ikd_vec3 target = ikd_vec3_mad(s.j[0].position, u, dmin * tu_uniform(&r, 0.01, 0.99));
        solve3(&s, target, NULL);
        /* reached exactly when the clamped pose is within tolerance */
        ck_assert_int_eq(s.res.status, s.res.error <= s.p.options.tolerance ? IKD_STATUS_REACHED : IKD_STATUS_UNREACHABLE);
        ck_assert_double_le(ikd_vec3_dist(s.pose[2].position, ikd_vec3_mad(s.j[0].position, u, dmin)), 1e-9 * L);
        ck_assert_double_le(fabs(s.res.error - ikd_vec3_dist(target, s.pose[2].position)), 1e-12 * L);
        if (s.res.status == IKD_STATUS_UNREACHABLE) unreached++;
        tested++;
    }
    ck_assert_int_gt(tested, N_PROBLEMS / 4);
    ck_assert_int_gt(unreached, tested / 2);
}
END_TEST

START_TEST(deterministic)
{
    tu_rng r;
    tu_seed(&r, 9);
    solved a, b;
    for (int k = 0; k < 1000; k++) {
        tu_random_chain(&r, a.j, 3, 0.5, 1.5);
        b = a;
        ikd_vec3 t = ikd_vec3_make(tu_uniform(&r, -8, 8), tu_uniform(&r, -8, 8), tu_uniform(&r, -8, 8));
        solve3(&a, t, NULL);
        solve3(&b, t, NULL);
        ck_assert(memcmp(a.pose, b.pose, sizeof a.pose) == 0);
    }
}
END_TEST

START_TEST(straight_chain_pulled_in)
{
    solved s;
    set_chain(&s, ikd_vec3_make(0, 0, 0), ikd_vec3_make(0, 1, 0), ikd_vec3_make(0, 2, 0));
    solve3(&s, ikd_vec3_make(0, 1.5, 0), NULL);
    ck_assert(s.res.reached);
    ck_assert_double_le(s.res.error, 1e-12);
    /* it bends (the middle joint leaves the line) */
    ck_assert_double_gt(hypot(s.pose[1].position.x, s.pose[1].position.z), 0.5);
    /* and the same problem twice gives the same pose */
    solved t = s;
    solve3(&t, ikd_vec3_make(0, 1.5, 0), NULL);
    ck_assert(memcmp(s.pose, t.pose, sizeof s.pose) == 0);
}
END_TEST

START_TEST(straight_chain_with_pole)
{
    solved s;
    set_chain(&s, ikd_vec3_make(0, 0, 0), ikd_vec3_make(0, 1, 0), ikd_vec3_make(0, 2, 0));
    ikd_vec3 pole = ikd_vec3_make(0, 1, 3);
    solve3(&s, ikd_vec3_make(0, 1.2, 0), &pole);
    ck_assert(s.res.reached);
    ck_assert_double_gt(s.pose[1].position.z, 0.5);
    ck_assert_double_le(fabs(s.pose[1].position.x), 1e-12);
}
END_TEST

START_TEST(pole_on_the_root_target_line)
{
    solved a, b;
    set_chain(&a, ikd_vec3_make(0, 0, 0), ikd_vec3_make(1, 1, 0), ikd_vec3_make(2, 0, 0));
    b = a;
    ikd_vec3 target = ikd_vec3_make(1.5, 0, 0), pole = ikd_vec3_make(7, 0, 0);
    solve3(&a, target, &pole);
    solve3(&b, target, NULL);
    ck_assert(a.res.reached);
    /* a useless pole is ignored: same as no pole, keeping the start bend (+y) */
    ck_assert_double_le(ikd_vec3_dist(a.pose[1].position, b.pose[1].position), 1e-12);
    ck_assert_double_gt(a.pose[1].position.y, 0.5);
}
END_TEST

START_TEST(target_on_the_root_equal_bones)
{
    solved s;
    set_chain(&s, ikd_vec3_make(1, 2, 3), ikd_vec3_make(1, 3, 3), ikd_vec3_make(2, 3, 3));
    ikd_vec3 pole = ikd_vec3_make(1, 2, 10);
    solve3(&s, ikd_vec3_make(1, 2, 3), &pole);
    ck_assert(s.res.reached);
    ck_assert_double_le(s.res.error, 1e-12);
    ck_assert_double_gt(s.pose[1].position.z, 3.5); /* folded toward the pole */
}
END_TEST

START_TEST(target_on_the_root_unequal_bones)
{
    solved s;
    set_chain(&s, ikd_vec3_make(0, 0, 0), ikd_vec3_make(0, 2, 0), ikd_vec3_make(0, 3, 0));
    solve3(&s, ikd_vec3_make(0, 0, 0), NULL);
    ck_assert_int_eq(s.res.status, IKD_STATUS_UNREACHABLE);
    ck_assert_double_le(fabs(s.res.error - 1.0), 1e-12);
}
END_TEST

START_TEST(folded_start_chain)
{
    solved s; /* effector back on the root: the start effector direction is undefined */
    set_chain(&s, ikd_vec3_make(0, 0, 0), ikd_vec3_make(1, 0, 0), ikd_vec3_make(0, 0, 0));
    solve3(&s, ikd_vec3_make(0, 1, 0), NULL);
    ck_assert(s.res.reached);
    solve3(&s, ikd_vec3_make(0, 0, 0), NULL);
    ck_assert(s.res.reached);
}
END_TEST

START_TEST(target_rotation_sets_the_effector)
{
    solved s;
    set_chain(&s, ikd_vec3_make(0, 0, 0), ikd_vec3_make(0, 1, 0), ikd_vec3_make(0, 2, 0));
    ikd_error err;
    ikd_problem_init(&s.p);
    s.p.joints = s.j;
    s.p.joint_count = 3;
    s.p.target = ikd_vec3_make(1, 1, 0);
    s.p.has_target_rotation = 1;
    s.p.target_rotation = ikd_quat_make(0, 0, 0.7071068, 0.7071068);
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_OK);
    ck_assert_int_eq(ikd_solve(&s.p, NULL, 0, s.pose, &s.res, &err), IKD_E_OK);
    ck_assert_int_eq(s.res.solver, IKD_SOLVER_TWO_BONE); /* auto picked it */
    ck_assert_double_le(ikd_quat_angle_between(s.pose[2].rotation, s.p.target_rotation), 1e-12);
    ck_assert_double_le(tu_max_rotation_error(s.j, s.pose, 3), 1e-9);
}
END_TEST

START_TEST(invalid_problems_name_the_field)
{
    solved s;
    ikd_error err;
    set_chain(&s, ikd_vec3_make(0, 0, 0), ikd_vec3_make(0, 1, 0), ikd_vec3_make(0, 2, 0));
    ikd_problem_init(&s.p);
    s.p.solver = IKD_SOLVER_TWO_BONE;
    s.p.joints = s.j;
    s.p.joint_count = 2;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints");
    s.p.joint_count = 3;
    s.j[1].position = s.j[0].position;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints[1].position");
    s.j[1].position = ikd_vec3_make(0, 1, 0);
    s.j[2].position.y = NAN;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints[2].position");
    s.j[2].position.y = 2;
    s.j[1].rotation = ikd_quat_make(0, 0, 0, 0);
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints[1].rotation");
    s.j[1].rotation = ikd_quat_identity();
    s.p.target.x = INFINITY;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "target.position");
    s.p.target.x = 0;
    s.p.has_pole = 1;
    s.p.pole.z = NAN;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "pole");
    s.p.has_pole = 0;
    s.p.options.tolerance = -1;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "options.tolerance");
    s.p.options.tolerance = 1e-4;
    s.j[0].constraint.type = IKD_CONSTRAINT_BALL;
    s.j[0].constraint.max_deg = 30;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints");
    s.j[0].constraint.type = IKD_CONSTRAINT_NONE;
    ck_assert_int_eq(ikd_validate(&s.p, &err), IKD_E_OK);
}
END_TEST

/* A random two-bone chain (bones 0.3 to 1.3, any bend) and its reach. */
static double random_chain(tu_rng *r, solved *s)
{
    ikd_vec3 a = ikd_vec3_make(tu_uniform(r, -1, 1), tu_uniform(r, -1, 1), tu_uniform(r, -1, 1));
    ikd_vec3 b = ikd_vec3_mad(a, tu_unit_vec(r), tu_uniform(r, 0.3, 1.3));
    ikd_vec3 c = ikd_vec3_mad(b, tu_unit_vec(r), tu_uniform(r, 0.3, 1.3));
    set_chain(s, a, b, c);
    return chain_len(s);
}

static void solve_soft(solved *s, ikd_vec3 target, double soften, double stretch)
{
    ikd_error err;
    problem3(s, target);
    s->p.options.soften = soften;
    s->p.options.stretch = stretch;
    ck_assert_int_eq(ikd_validate(&s->p, &err), IKD_E_OK);
    ck_assert_int_eq(ikd_solve(&s->p, NULL, 0, s->pose, &s->res, &err), IKD_E_OK);
}

/* soften 1 and stretch 1 are exactly the plain solve, bit for bit, over
 * 5,000 targets in, at and beyond reach and on the root. */
START_TEST(soften_and_stretch_off_are_the_plain_solve)
{
    tu_rng r;
    tu_seed(&r, 61);
    for (int k = 0; k < 5000; k++) {
        solved a, b;
        double L = random_chain(&r, &a);
        b = a;
        ikd_vec3 t = k % 50 == 0 ? a.j[0].position : ikd_vec3_mad(a.j[0].position, tu_unit_vec(&r), tu_uniform(&r, 0, 1.5 * L));
        solve3(&a, t, NULL);
        solve_soft(&b, t, 1, 1);
        ck_assert(memcmp(a.pose, b.pose, sizeof a.pose) == 0);
        ck_assert(memcmp(&a.res, &b.res, sizeof a.res) == 0);
    }
}
END_TEST

/* Soft IK: below soften x reach nothing changes; beyond it the effector
 * stays short of the reach, on the root-target line, moving smoothly: as a
 * target near full extension moves by a small step, the knee moves at most
 * 3 times as far (soften 0.9; without softening it pops). A target on the
 * root is still handled. Stretch: beyond reach both bones lengthen alike,
 * at most `stretch` times, and the target is met while it is in the
 * stretched reach. */
START_TEST(soften_and_stretch)
{
    tu_rng r;
    tu_seed(&r, 62);
    double worst_soft = 0, worst_hard = 0;
    for (int k = 0; k < 3000; k++) {
        solved s, h;
        double L = random_chain(&r, &s);
        ikd_vec3 root = s.j[0].position, dir = tu_unit_vec(&r);
        h = s;
        double inner = fabs(ikd_chain_bone_length(s.j, 0) - ikd_chain_bone_length(s.j, 1));
        double d = tu_uniform(&r, inner + 0.01 * L, 0.89 * L); /* in reach, below soften x reach: the plain solve */
        solve_soft(&s, ikd_vec3_mad(root, dir, d), 0.9, 1);
        ck_assert_double_le(s.res.error, 1e-9 * L);
        /* near full extension: steps of 0.2% of the reach */
        double d0 = tu_uniform(&r, 0.95, 1.05) * L, step = 0.002 * L;
        solve_soft(&s, ikd_vec3_mad(root, dir, d0), 0.9, 1);
        ikd_vec3 k0 = s.pose[1].position;
        ck_assert_double_le(ikd_vec3_dist(s.pose[2].position, root), L);
        ck_assert_double_le(ikd_vec3_len(ikd_vec3_reject(ikd_vec3_sub(s.pose[2].position, root), dir)), 1e-9 * L);
        ck_assert_double_le(tu_max_length_error(s.j, s.pose, 3), 1e-9);
        ck_assert(s.res.reached == (d0 <= L));
        solve_soft(&s, ikd_vec3_mad(root, dir, d0 + step), 0.9, 1);
        worst_soft = fmax(worst_soft, ikd_vec3_dist(s.pose[1].position, k0) / step);
        solve3(&h, ikd_vec3_mad(root, dir, L - step / 2), NULL);
        ikd_vec3 h0 = h.pose[1].position;
        solve3(&h, ikd_vec3_mad(root, dir, L + step / 2), NULL);
        worst_hard = fmax(worst_hard, ikd_vec3_dist(h.pose[1].position, h0) / step);
        /* stretch 1.5: met up to 1.5 x the reach, bones lengthened alike */
        double ds = tu_uniform(&r, 1.0, 1.7) * L;
        solve_soft(&s, ikd_vec3_mad(root, dir, ds), 1, 1.5);
        double k1 = ikd_vec3_dist(s.pose[1].position, root) / ikd_chain_bone_length(s.j, 0);
        double k2 = ikd_vec3_dist(s.pose[2].position, s.pose[1].position) / ikd_chain_bone_length(s.j, 1);
        ck_assert_double_le(fabs(k1 - k2), 1e-9);
        ck_assert_double_le(k1, 1.5 + 1e-9);
        if (ds <= 1.5 * L) {
            ck_assert_double_le(s.res.error, 1e-9 * L);
            ck_assert(s.res.reached);
        } else {
            ck_assert(!s.res.reached && fabs(s.res.error - (ds - 1.5 * L)) <= 1e-9 * L);
        }
        /* a target on the root */
        solve_soft(&s, root, 0.5, 2);
        ck_assert(ikd_vec3_isfinite(s.pose[1].position) && ikd_vec3_isfinite(s.pose[2].position));
    }
    if (getenv("IKD_DEBUG")) fprintf(stderr, "knee per target step: soft %g, plain %g\n", worst_soft, worst_hard);
    ck_assert_msg(worst_soft <= 3, "soft knee moved %g x the target's step", worst_soft);
    ck_assert_msg(worst_hard > 3, "the plain solve should pop (%g)", worst_hard);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("two_bone");
    TCase *props = tcase_create("properties");
    tcase_set_timeout(props, 120);
    tcase_add_test(props, reachable_targets_are_hit);
    tcase_add_test(props, needle_limbs_keep_their_short_bone);
    tcase_add_test(props, far_targets_get_a_straight_chain);
    tcase_add_test(props, near_targets_fold_to_the_shortest_reach);
    tcase_add_test(props, deterministic);
    suite_add_tcase(s, props);
    TCase *deg = tcase_create("degenerate");
    tcase_add_test(deg, straight_chain_pulled_in);
    tcase_add_test(deg, straight_chain_with_pole);
    tcase_add_test(deg, pole_on_the_root_target_line);
    tcase_add_test(deg, target_on_the_root_equal_bones);
    tcase_add_test(deg, target_on_the_root_unequal_bones);
    tcase_add_test(deg, folded_start_chain);
    tcase_add_test(deg, target_rotation_sets_the_effector);
    tcase_add_test(deg, soften_and_stretch_off_are_the_plain_solve);
    tcase_add_test(deg, soften_and_stretch);
    tcase_add_test(deg, invalid_problems_name_the_field);
    suite_add_tcase(s, deg);
    return tu_run_suite(s);
}
