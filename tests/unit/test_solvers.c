/* test_solvers.c - libcheck suite: ccd, fabrik, jacobian and auto over generated chains (fixed seeds). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ikd/constraint.h"
#include "ikd/skeleton.h"
#include "problems.h"
#include "testutil.h"

#define MAXJ 256

typedef struct runner {
    ikd_solver solver;
    ikd_jacobian_method method;
    const char *label;
} runner;

static const runner runners[] = {
    {IKD_SOLVER_CCD, IKD_JACOBIAN_DLS, "ccd"},
    {IKD_SOLVER_FABRIK, IKD_JACOBIAN_DLS, "fabrik"},
    {IKD_SOLVER_JACOBIAN, IKD_JACOBIAN_DLS, "jacobian-dls"},
    {IKD_SOLVER_JACOBIAN, IKD_JACOBIAN_TRANSPOSE, "jacobian-transpose"},
    {IKD_SOLVER_AUTO, IKD_JACOBIAN_DLS, "auto"},
};
#define NRUNNERS (sizeof runners / sizeof runners[0])

static double work[MAXJ * 64];

/* Solve and check the invariants every solver keeps on every input: finite
 * pose, root fixed exactly, bone lengths to 1e-9, no limit violated,
 * rotations consistent with positions, error and status consistent. */
static ikd_result solve_checked(const runner *r, ikd_joint *j, size_t n, ikd_vec3 target, ikd_pose_joint *pose,
                                const char *what)
{
    ikd_problem p;
    ikd_error err;
    ikd_result res;
    ikd_problem_init(&p);
    p.solver = r->solver;
    p.options.jacobian_method = r->method;
    p.joints = j;
    p.joint_count = n;
    p.target = target;
    ck_assert_msg(ikd_validate(&p, &err) == IKD_E_OK, "%s: %s %s", what, err.field, err.message);
    ck_assert_uint_ge(sizeof work, ikd_workspace_size(n));
    ck_assert_int_eq(ikd_solve(&p, work, sizeof work, pose, &res, &err), IKD_E_OK);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(ikd_vec3_isfinite(pose[i].position), "%s %s: non-finite joint %zu", r->label, what, i);
        ck_assert(ikd_quat_isfinite(pose[i].rotation) && ikd_quat_isfinite(pose[i].local_rotation));
    }
    ck_assert_msg(memcmp(&pose[0].position, &j[0].position, sizeof(ikd_vec3)) == 0, "%s %s: root moved", r->label,
                  what);
    ck_assert_msg(tu_max_length_error(j, pose, n) <= 1e-9, "%s %s: length error %g", r->label, what,
                  tu_max_length_error(j, pose, n));
    ck_assert_msg(tu_limit_violation(j, pose, n) <= 1e-9, "%s %s: limit violated by %g rad", r->label, what,
                  tu_limit_violation(j, pose, n));
    ck_assert_double_le(ikd_chain_max_violation(j, n, pose), 1e-9); /* the library agrees */
    ck_assert_double_le(tu_max_rotation_error(j, pose, n), 1e-9);
    ck_assert_double_le(fabs(res.error - ikd_vec3_dist(pose[n - 1].position, target)), 1e-12 * (1 + res.error));
    ck_assert_int_eq(res.reached, res.status == IKD_STATUS_REACHED);
    ck_assert_int_eq(res.reached, res.error <= p.options.tolerance);
    ck_assert(res.solver != IKD_SOLVER_AUTO);
    if (r->solver != IKD_SOLVER_AUTO) ck_assert_int_eq(res.solver, r->solver);
    return res;
}

/* Success rate (percent) of reachable problems, checking every invariant. */
static double run_set(const runner *r, pset_kind kind, size_t n, int count, uint64_t seed, int *far_ok, int *far_n)
{
    tu_rng rng;
    tu_seed(&rng, seed);
    ikd_joint j[MAXJ];
    ikd_pose_joint pose[MAXJ];
    int ok = 0, reach = 0;
    *far_ok = *far_n = 0;
    for (int k = 0; k < count; k++) {
        int far = k % 10 == 9;
        ikd_vec3 t;
        pset_make(&rng, kind, n, far, j, &t);
        char what[64];
        snprintf(what, sizeof what, "%s n=%zu #%d", pset_name(kind), n, k);
        ikd_result res = solve_checked(r, j, n, t, pose, what);
        double L = ikd_chain_length(j, n);
        if (far) {
            (*far_n)++;
            ck_assert_int_ne(res.status, IKD_STATUS_REACHED);
            double ideal = ikd_vec3_dist(t, j[0].position) - L;
            *far_ok += kind != PSET_FREE || res.error - ideal <= 1e-4 * L;
        } else {
            reach++;
            ok += res.error <= 1e-3 * L;
        }
    }
    return 100.0 * ok / reach;
}

/* Free chains: every solver reaches every reachable target and ends
 * straight at every unreachable one (ccd: at least 99%). */
START_TEST(free_chains)
{
    const runner *r = &runners[_i];
    static const size_t sizes[] = {2, 4, 8, 16, 32};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int far_ok, far_n;
        double pct = run_set(r, PSET_FREE, sizes[s], 500, 77 + sizes[s], &far_ok, &far_n);
        double need = r->solver == IKD_SOLVER_CCD ? 99.0 : 100.0;
        /* the transpose creeps (measured on these sets: 100 / 84.2 / 92.7 / 95.6 / 95.6%) */
        static const double transpose_need[] = {95, 80, 88, 90, 90};
        if (r->method == IKD_JACOBIAN_TRANSPOSE) need = transpose_need[s];
        if (getenv("IKD_TEST_PRINT_REACH")) fprintf(stderr, "%s free %zu %.1f\n", r->label, sizes[s], pct);
        ck_assert_msg(pct >= need, "%s free n=%zu: %.1f%% reached", r->label, sizes[s], pct);
        ck_assert_msg(far_ok == far_n, "%s free n=%zu: %d of %d far targets straight", r->label, sizes[s], far_ok, far_n);
    }
}
END_TEST

/* Constrained chains: no limit is ever violated (checked inside run_set);
 * reach rates are at least what `make bench` measured, less a margin. */
START_TEST(constrained_chains)
{
    const runner *r = &runners[_i];
    static const size_t sizes[] = {4, 8, 16};
    for (int kind = PSET_HINGE; kind <= PSET_BALL; kind++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int far_ok, far_n;
            double pct = run_set(r, (pset_kind)kind, sizes[s], 200, 900 + (uint64_t)kind * 31 + sizes[s], &far_ok, &far_n);
            double need = 100.0; /* every runner has its floor below */
            if (r->solver == IKD_SOLVER_AUTO) need = 95.0;
            if (r->solver == IKD_SOLVER_JACOBIAN) need = 90.0;
            /* FABRIK with its restarts: 75.6 / 96.1 / 99.4% on hinge chains and
             * 99.4-100% on ball chains in these sets (66.7 / 88.9 / 97.8% and
             * 98.9-100% without restarts) */
            if (r->solver == IKD_SOLVER_FABRIK) need = sizes[s] == 4 ? 72.0 : 93.0;
            /* CCD: 91.1 / 96.7 / 100% on hinge and 82.8 / 98.3 / 99.4% on ball
             * chains in these sets; the transpose 92.2 / 98.9 / 100% and 71.1 /
             * 93.3 / 96.1%: the floors are the lower of each, less about 5 */
            static const double ccd_need[] = {78, 92, 95}, transpose_need[] = {66, 88, 91};
            if (r->solver == IKD_SOLVER_CCD) need = ccd_need[s];
            if (r->method == IKD_JACOBIAN_TRANSPOSE) need = transpose_need[s];
            if (getenv("IKD_TEST_PRINT_REACH"))
                fprintf(stderr, "%s %s %zu %.1f\n", r->label, pset_name((pset_kind)kind), sizes[s], pct);
            ck_assert_msg(pct >= need, "%s %s n=%zu: %.1f%% reached", r->label, pset_name((pset_kind)kind), sizes[s],
                          pct);
        }
    }
}
END_TEST

START_TEST(deterministic)
{
    const runner *r = &runners[_i];
    tu_rng rng;
    tu_seed(&rng, 5);
    ikd_joint j[16];
    ikd_pose_joint a[16], b[16];
    for (int k = 0; k < 300; k++) {
        ikd_vec3 t;
        pset_make(&rng, (pset_kind)(k % 3), 8, k % 7 == 0, j, &t);
        solve_checked(r, j, 8, t, a, "determinism a");
        memset(work, 0x5a, sizeof work); /* stale scratch must not matter */
        solve_checked(r, j, 8, t, b, "determinism b");
        ck_assert(memcmp(a, b, sizeof(ikd_pose_joint) * 8) == 0);
    }
}
END_TEST

static void straight_chain(ikd_joint *j, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        j[i] = (ikd_joint){0};
        j[i].position = ikd_vec3_make(0, (double)i, 0);
        j[i].rotation = ikd_quat_identity();
    }
}

/* A straight chain and a target on its line: CCD and FABRIK would never
 * start bending without the nudge. */
START_TEST(collinear_chain_and_target)
{
    const runner *r = &runners[_i];
    ikd_joint j[6];
    ikd_pose_joint pose[6];
    straight_chain(j, 6);
    ikd_result res = solve_checked(r, j, 6, ikd_vec3_make(0, 2.5, 0), pose, "collinear pull-in");
    ck_assert_msg(res.reached, "%s: error %g", r->label, res.error);
    res = solve_checked(r, j, 6, ikd_vec3_make(0, -2, 0), pose, "collinear behind the root");
    ck_assert_msg(res.reached, "%s: error %g", r->label, res.error);
    res = solve_checked(r, j, 6, ikd_vec3_make(0, 9, 0), pose, "collinear beyond reach");
    ck_assert_int_eq(res.status, IKD_STATUS_UNREACHABLE);
    ck_assert_double_le(fabs(res.error - 4.0), 1e-9);
}
END_TEST

START_TEST(target_at_the_root)
{
    const runner *r = &runners[_i];
    ikd_joint j[5];
    ikd_pose_joint pose[5];
    straight_chain(j, 5);
    ikd_result res = solve_checked(r, j, 5, j[0].position, pose, "target at root");
    ck_assert_msg(res.reached, "%s: error %g", r->label, res.error);
}
END_TEST

START_TEST(two_joint_chain)
{
    const runner *r = &runners[_i];
    ikd_joint j[2];
    ikd_pose_joint pose[2];
    straight_chain(j, 2);
    ikd_result res = solve_checked(r, j, 2, ikd_vec3_make(3, 4, 0), pose, "one bone, far");
    ck_assert_int_eq(res.status, IKD_STATUS_UNREACHABLE);
    ck_assert_double_le(ikd_vec3_dist(pose[1].position, ikd_vec3_make(0.6, 0.8, 0)), 1e-9);
    res = solve_checked(r, j, 2, ikd_vec3_make(0, 0, 1), pose, "one bone, on the sphere");
    ck_assert(res.reached);
}
END_TEST

START_TEST(long_chain_256)
{
    const runner *r = &runners[_i];
    tu_rng rng;
    tu_seed(&rng, 256);
    ikd_joint j[256];
    ikd_pose_joint pose[256];
    for (int k = 0; k < 5; k++) {
        ikd_vec3 t;
        pset_make(&rng, PSET_FREE, 256, 0, j, &t);
        ikd_result res = solve_checked(r, j, 256, t, pose, "256 joints");
        ck_assert_msg(res.error <= 1e-3 * ikd_chain_length(j, 256), "%s: error %g", r->label, res.error);
    }
}
END_TEST

/* A knee allowed [0, 150] degrees asked to bend the other way must stop at
 * 0, not flip to the positive side by losing the angle's sign. */
START_TEST(hinge_keeps_the_sign)
{
    const runner *r = &runners[_i];
    ikd_joint j[3];
    ikd_pose_joint pose[3];
    straight_chain(j, 3);
    j[0].constraint = (ikd_constraint){IKD_CONSTRAINT_HINGE, {0, 0, 1}, -5, 5, 0, {0, 0, 0}};
    j[1].constraint = (ikd_constraint){IKD_CONSTRAINT_HINGE, {0, 0, 1}, 0, 150, 0, {0, 0, 0}};
    /* bending the knee clockwise (negative about +z) would reach (0.7, 1.5);
     * the knee may not, so the best pose is straight, tilted toward +x by
     * the root's 5 degrees. A solver that loses the angle's sign bends the
     * knee the other way, toward -x. */
    ikd_vec3 t = ikd_vec3_make(0.7, 1.5, 0);
    solve_checked(r, j, 3, t, pose, "knee sign");
    ikd_limit_frame f = ikd_constraint_frame(j, pose, 1);
    double a = ikd_constraint_hinge_angle(&j[1].constraint, f,
                                          ikd_vec3_norm_or(ikd_vec3_sub(pose[2].position, pose[1].position),
                                                           ikd_vec3_make(0, 0, 0)));
    ck_assert_msg(a >= -1e-9 && a <= 1e-3, "%s: knee at %g deg", r->label, a * IKD_RAD2DEG);
    /* FABRIK's passes can settle with the root tilted the far way (a local
     * stall, documented in README); the others find the closest pose */
    if (r->solver != IKD_SOLVER_FABRIK)
        ck_assert_msg(pose[2].position.x > 0.17, "%s: effector at x=%g", r->label, pose[2].position.x);
}
END_TEST

START_TEST(orientation_goal)
{
    /* targets and rotations from forward kinematics: reachable exactly */
    tu_rng rng;
    tu_seed(&rng, 61);
    ikd_joint j[6];
    ikd_pose_joint pose[6], goal[6];
    int ok = 0, total = 300;
    for (int k = 0; k < total; k++) {
        tu_random_chain(&rng, j, 6, 0.5, 1.5);
        ikd_quat world[6];
        for (int i = 0; i < 6; i++) world[i] = ikd_quat_mul(tu_small_quat(&rng, 1.0), j[i].rotation);
        world[5] = ikd_quat_mul(world[4], ikd_quat_mul(ikd_quat_conj(j[4].rotation), j[5].rotation));
        ikd_chain_fk_world(j, 6, world, goal);
        ikd_problem p;
        ikd_error err;
        ikd_result res;
        ikd_problem_init(&p);
        p.joints = j;
        p.joint_count = 6;
        p.target = goal[5].position;
        p.has_target_rotation = 1;
        p.target_rotation = goal[5].rotation;
        ck_assert_int_eq(ikd_validate(&p, &err), IKD_E_OK);
        ck_assert_int_eq(ikd_solve(&p, work, sizeof work, pose, &res, &err), IKD_E_OK);
        ck_assert_int_eq(res.solver, IKD_SOLVER_JACOBIAN);
        ck_assert_double_le(tu_max_length_error(j, pose, 6), 1e-9);
        ck_assert_double_le(ikd_quat_angle_between(pose[5].rotation, goal[5].rotation), 1e-9);
        if (res.reached) {
            ck_assert_double_le(res.rotation_error_deg, p.options.rotation_tolerance_deg);
            ok++;
        }
    }
    ck_assert_msg(ok >= total * 95 / 100, "orientation goals reached: %d of %d", ok, total);
}
END_TEST

/* GET /v1/solvers lists both options tables as they are: each option's
 * one-line doc is prose for a user (no C identifier left in it by a
 * rename), its default lies within its bounds, and names are unique. */
static void check_options(const ikd_option_info *t, size_t n)
{
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(t[i].doc && strlen(t[i].doc) > 10, "%s: no doc", t[i].name);
        ck_assert_msg(!strstr(t[i].doc, "ikd_") && !strstr(t[i].doc, "__") && !strstr(t[i].doc, "->"),
                      "%s: doc names code: %s", t[i].name, t[i].doc);
        if (t[i].type != IKD_OPT_ENUM) {
            ck_assert_msg(t[i].def >= t[i].min && t[i].def <= t[i].max, "%s: default out of bounds", t[i].name);
            ck_assert_msg(!(t[i].min_open && t[i].def == t[i].min) && !(t[i].max_open && t[i].def == t[i].max),
                          "%s: default on an open bound", t[i].name);
        }
        for (size_t k = 0; k < i; k++) ck_assert_str_ne(t[i].name, t[k].name);
    }
}

START_TEST(options_tables)
{
    size_t n;
    const ikd_option_info *t = ikd_options_table(&n);
    check_options(t, n);
    t = ikd_multi_options_table(&n);
    check_options(t, n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("solvers");
    TCase *tc = tcase_create("properties");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, free_chains, 0, NRUNNERS);
    tcase_add_loop_test(tc, constrained_chains, 0, NRUNNERS);
    tcase_add_loop_test(tc, deterministic, 0, NRUNNERS);
    tcase_add_loop_test(tc, collinear_chain_and_target, 0, NRUNNERS);
    tcase_add_loop_test(tc, target_at_the_root, 0, NRUNNERS);
    tcase_add_loop_test(tc, two_joint_chain, 0, NRUNNERS);
    tcase_add_loop_test(tc, long_chain_256, 0, NRUNNERS);
    tcase_add_loop_test(tc, hinge_keeps_the_sign, 0, NRUNNERS);
    tcase_add_test(tc, orientation_goal);
    tcase_add_test(tc, options_tables);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
