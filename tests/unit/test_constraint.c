/* test_constraint.c - libcheck suite: hinge and ball limits (projection, violation, frames) against DESIGN.md's rules. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define N 6

/* A random chain whose joints carry random hinge or ball limits (the root
 * sometimes with a reference direction). */
static void limited_chain(tu_rng *r, ikd_joint *j)
{
    tu_random_chain(r, j, N, 0.5, 1.5);
    for (int i = 0; i + 1 < N; i++) {
        ikd_constraint *c = &j[i].constraint;
        if (tu_next(r) % 3 == 0) continue;
        if (tu_next(r) % 2) {
            double a = tu_uniform(r, -180, 180), b = tu_uniform(r, -180, 180);
            *c = (ikd_constraint){.type = IKD_CONSTRAINT_HINGE, .axis = tu_unit_vec(r), .min_deg = fmin(a, b),
                                  .max_deg = fmax(a, b)};
        } else {
            *c = (ikd_constraint){.type = IKD_CONSTRAINT_BALL, .max_deg = tu_uniform(r, 0, 180)};
        }
        if (i == 0 && tu_next(r) % 2) {
            c->has_reference = 1;
            c->reference = tu_unit_vec(r);
        }
    }
}

/* Bones pointed anywhere, each put on its closest allowed direction from
 * the root out (as the solvers' last pass does): the pose keeps every limit
 * by the test's own reading of DESIGN.md (tu_limit_violation) and by the
 * library's (ikd_chain_max_violation); the projection is idempotent, leaves
 * allowed directions alone, and no allowed direction sampled at random is
 * closer to the wanted one. */
START_TEST(projection_keeps_the_limits_and_is_closest)
{
    tu_rng r;
    tu_seed(&r, 2024);
    for (int k = 0; k < 3000; k++) {
        ikd_joint j[N];
        limited_chain(&r, j);
        ikd_error err;
        ck_assert_int_eq(ikd_chain_validate(j, N, 2, &err), IKD_E_OK);
        ikd_pose_joint pose[N];
        pose[0].position = j[0].position;
        for (int i = 0; i + 1 < N; i++) {
            ikd_vec3 want = tu_unit_vec(&r);
            pose[i + 1].position = ikd_vec3_mad(pose[i].position, want, 1.0); /* a provisional bone */
            ikd_limit_frame f = ikd_constraint_frame(j, pose, i);
            ikd_vec3 got = ikd_constraint_apply(&j[i].constraint, f, want);
            ck_assert_double_le(fabs(ikd_vec3_len(got) - 1), 1e-12);
            ck_assert_double_le(ikd_constraint_violation(&j[i].constraint, f, got), 1e-9);
            ikd_vec3 again = ikd_constraint_apply(&j[i].constraint, f, got);
            ck_assert_double_le(ikd_vec3_dist(again, got), 1e-9);
            double v = ikd_constraint_violation(&j[i].constraint, f, want);
            if (v == 0) ck_assert_double_le(ikd_vec3_dist(got, want), 1e-9);
            else ck_assert_double_gt(ikd_vec3_dist(got, want), 0);
            for (int t = 0; t < 20; t++) { /* closest: no random allowed direction beats it */
                ikd_vec3 other = ikd_constraint_apply(&j[i].constraint, f, tu_unit_vec(&r));
                ck_assert_double_le(ikd_vec3_angle(got, want), ikd_vec3_angle(other, want) + 1e-9);
            }
            pose[i + 1].position = ikd_vec3_mad(pose[i].position, got, ikd_chain_bone_length(j, i));
        }
        ck_assert_double_le(tu_limit_violation(j, pose, N), 1e-9);
        ck_assert_double_le(ikd_chain_max_violation(j, N, pose), 1e-9);
    }
}
END_TEST

/* Edges of each type: a hinge at both ends of its range and just beyond
 * (the nearer end along the circle wins), a ball at the cone's edge. */
START_TEST(edges_of_each_type)
{
    ikd_joint j[3] = {{.position = {0, 0, 0}}, {.position = {0, 1, 0}}, {.position = {0, 2, 0}}};
    for (int i = 0; i < 3; i++) j[i].rotation = ikd_quat_identity();
    j[1].constraint = (ikd_constraint){.type = IKD_CONSTRAINT_HINGE, .axis = {1, 0, 0}, .min_deg = 0, .max_deg = 150};
    ikd_error err;
    ck_assert_int_eq(ikd_chain_validate(j, 3, 2, &err), IKD_E_OK);
    ikd_pose_joint pose[3] = {{.position = {0, 0, 0}}, {.position = {0, 1, 0}}, {.position = {0, 2, 0}}};
    ikd_limit_frame f = ikd_constraint_frame(j, pose, 1);
    const ikd_constraint *c = &j[1].constraint;
    for (double deg = -179; deg <= 180; deg += 0.5) {
        double a = deg * IKD_DEG2RAD; /* the bone turned by deg about +x from straight on (+y) */
        ikd_vec3 d = ikd_vec3_make(0, cos(a), sin(a));
        ck_assert_double_le(fabs(ikd_constraint_hinge_angle(c, f, d) - a), 1e-9);
        if (deg == -105) continue; /* as far from either end: either is right */
        double got = ikd_constraint_hinge_angle(c, f, ikd_constraint_apply(c, f, d)) * IKD_RAD2DEG;
        double expect = deg >= 0 && deg <= 150 ? deg : (deg < 0 && deg > -105 ? 0 : (deg > 150 ? 150 : 0));
        if (deg < -105) expect = 150; /* nearer to 150 going round the back */
        ck_assert_msg(fabs(got - expect) < 1e-7, "hinge at %g deg projects to %g, expected %g", deg, got, expect);
    }
    j[1].constraint = (ikd_constraint){.type = IKD_CONSTRAINT_BALL, .max_deg = 30};
    c = &j[1].constraint;
    f = ikd_constraint_frame(j, pose, 1);
    for (double deg = 0; deg <= 180; deg += 1) {
        double a = deg * IKD_DEG2RAD;
        ikd_vec3 d = ikd_vec3_make(sin(a) * 0.6, cos(a), sin(a) * 0.8);
        double got = ikd_vec3_angle(ikd_constraint_apply(c, f, d), ikd_vec3_make(0, 1, 0)) * IKD_RAD2DEG;
        ck_assert_double_le(fabs(got - fmin(deg, 30)), 1e-7);
        ck_assert_double_le(fabs(ikd_constraint_violation(c, f, d) * IKD_RAD2DEG - fmax(0, deg - 30)), 1e-7);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("constraint");
    TCase *tc = tcase_create("constraint");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, projection_keeps_the_limits_and_is_closest);
    tcase_add_test(tc, edges_of_each_type);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
