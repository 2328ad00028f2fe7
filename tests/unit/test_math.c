/* test_math.c - libcheck suite for vectors and quaternions (ikd/math.h), random cases from a fixed seed. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define N 10000

static void assert_vec_near(ikd_vec3 a, ikd_vec3 b, double tol)
{
    ck_assert_msg(ikd_vec3_dist(a, b) <= tol, "(%g %g %g) vs (%g %g %g)", a.x, a.y, a.z, b.x, b.y, b.z);
}

START_TEST(cross_dot_basics)
{
    ikd_vec3 x = ikd_vec3_make(1, 0, 0), y = ikd_vec3_make(0, 1, 0), z = ikd_vec3_make(0, 0, 1);
    assert_vec_near(ikd_vec3_cross(x, y), z, 0);
    assert_vec_near(ikd_vec3_cross(y, z), x, 0);
    ck_assert_double_eq(ikd_vec3_dot(ikd_vec3_make(1, 2, 3), ikd_vec3_make(4, 5, 6)), 32);
    ck_assert_double_eq(ikd_vec3_len(ikd_vec3_make(3, 4, 12)), 13);
    ikd_vec3 fb = ikd_vec3_make(7, 7, 7);
    assert_vec_near(ikd_vec3_norm_or(ikd_vec3_make(0, 0, 0), fb), fb, 0);
    assert_vec_near(ikd_vec3_norm_or(ikd_vec3_make(0, 0, NAN), fb), fb, 0);
}
END_TEST

START_TEST(any_perp_is_unit_and_perpendicular)
{
    tu_rng r;
    tu_seed(&r, 1);
    for (int i = 0; i < N; i++) {
        ikd_vec3 u = i < 3 ? ikd_vec3_make(i == 0, i == 1, i == 2) : tu_unit_vec(&r);
        ikd_vec3 p = ikd_vec3_any_perp(u);
        ck_assert_double_le(fabs(ikd_vec3_len(p) - 1), 1e-14);
        ck_assert_double_le(fabs(ikd_vec3_dot(p, u)), 1e-14);
    }
}
END_TEST

START_TEST(rotation_preserves_length_and_composes)
{
    tu_rng r;
    tu_seed(&r, 2);
    for (int i = 0; i < N; i++) {
        ikd_quat a = tu_unit_quat(&r), b = tu_unit_quat(&r);
        ikd_vec3 v = ikd_vec3_scale(tu_unit_vec(&r), tu_uniform(&r, 0.1, 10));
        ikd_vec3 rv = ikd_quat_rotate(a, v);
        ck_assert_double_le(fabs(ikd_vec3_len(rv) - ikd_vec3_len(v)), 1e-12);
        /* (a*b) v == a (b v) */
        assert_vec_near(ikd_quat_rotate(ikd_quat_mul(a, b), v), ikd_quat_rotate(a, ikd_quat_rotate(b, v)), 1e-12);
        /* conj undoes */
        assert_vec_near(ikd_quat_rotate(ikd_quat_conj(a), rv), v, 1e-12);
    }
}
END_TEST

START_TEST(axis_angle_right_hand_rule)
{
    ikd_quat q = ikd_quat_axis_angle(ikd_vec3_make(0, 0, 1), IKD_PI / 2);
    assert_vec_near(ikd_quat_rotate(q, ikd_vec3_make(1, 0, 0)), ikd_vec3_make(0, 1, 0), 1e-15);
    tu_rng r;
    tu_seed(&r, 3);
    for (int i = 0; i < N; i++) {
        ikd_vec3 axis = tu_unit_vec(&r);
        double ang = tu_uniform(&r, -3.1, 3.1);
        ikd_vec3 v = ikd_vec3_any_perp(axis);
        ikd_vec3 w = ikd_quat_rotate(ikd_quat_axis_angle(axis, ang), v);
        ck_assert_double_le(fabs(ikd_vec3_signed_angle(v, w, axis) - ang), 1e-12);
        ck_assert_double_le(fabs(ikd_vec3_angle(v, w) - fabs(ang)), 1e-12);
    }
}
END_TEST

START_TEST(arc_maps_from_onto_to)
{
    tu_rng r;
    tu_seed(&r, 4);
    for (int i = 0; i < N; i++) {
        ikd_vec3 a = tu_unit_vec(&r), b;
        switch (i % 4) {
        case 0: b = ikd_vec3_scale(a, -1); break;                               /* opposite */
        case 1: b = a; break;                                                    /* same */
        case 2: b = ikd_quat_rotate(tu_small_quat(&r, 1e-7), a); break;          /* nearly same */
        default: b = tu_unit_vec(&r);
        }
        ikd_quat q = ikd_quat_arc(ikd_vec3_scale(a, 3.0), b);
        ck_assert_double_le(fabs(ikd_quat_len(q) - 1), 1e-14);
        assert_vec_near(ikd_quat_rotate(q, a), b, 1e-12);
        /* shortest arc: the rotation angle equals the angle between the directions */
        ck_assert_double_le(fabs(ikd_quat_angle_between(ikd_quat_identity(), q) - ikd_vec3_angle(a, b)), 1e-7);
    }
}
END_TEST

/* ikd_quat_from_axes: the rotation of any frame (random, and x along -x
 * or along x: the shortest arc's half turn and identity) from its x and y
 * axes gives back those axes, and the frame itself (q or -q). */
START_TEST(from_axes_gives_back_the_frame)
{
    tu_rng r;
    tu_seed(&r, 5);
    for (int i = 0; i < N; i++) {
        ikd_quat f = i % 3 == 0 ? ikd_quat_axis_angle(tu_unit_vec(&r), i % 2 ? IKD_PI : 0) : tu_unit_quat(&r);
        if (i % 6 == 3) f = ikd_quat_mul(ikd_quat_axis_angle(ikd_vec3_make(0, 1, 0), IKD_PI), ikd_quat_axis_angle(ikd_vec3_make(1, 0, 0), tu_uniform(&r, -3, 3)));
        ikd_vec3 x = ikd_quat_rotate(f, ikd_vec3_make(1, 0, 0)), y = ikd_quat_rotate(f, ikd_vec3_make(0, 1, 0));
        ikd_quat q = ikd_quat_from_axes(x, y);
        assert_vec_near(ikd_quat_rotate(q, ikd_vec3_make(1, 0, 0)), x, 1e-12);
        assert_vec_near(ikd_quat_rotate(q, ikd_vec3_make(0, 1, 0)), y, 1e-12);
        ck_assert_double_le(ikd_quat_angle_between(q, f), 1e-9);
    }
}
END_TEST

START_TEST(quat_norm_falls_back_to_identity)
{
    ikd_quat q = ikd_quat_norm(ikd_quat_make(0, 0, 0, 0));
    ck_assert_double_eq(q.w, 1);
    q = ikd_quat_norm(ikd_quat_make(0, 2, 0, 0));
    ck_assert_double_eq(q.y, 1);
}
END_TEST

START_TEST(error_table_is_consistent)
{
    ikd_error e;
    ck_assert_str_eq(ikd_code_name(IKD_E_INVALID), "invalid");
    ck_assert_str_eq(ikd_code_name(IKD_E_NOMEM), "out_of_memory");
    ck_assert_str_eq(ikd_code_name(IKD_E__COUNT), "unknown");
    ck_assert_str_eq(ikd_code_name(-1), "unknown");
    ck_assert_str_eq(ikd_strerror(IKD_E__COUNT + 3), "");
    for (int c = 0; c < IKD_E__COUNT; c++) ck_assert(ikd_strerror(c)[0] != '\0');
    ikd_jacobian_method m;
    ck_assert_int_eq(ikd_jacobian_method_from_name("transpose", &m), 0);
    ck_assert_int_eq(m, IKD_JACOBIAN_TRANSPOSE);
    ck_assert_str_eq(ikd_jacobian_method_name(m), "transpose");
    ck_assert_int_eq(ikd_jacobian_method_from_name("newton", &m), -1);
    ikd_solver sv;
    ck_assert_int_eq(ikd_solver_from_name("fabrik", &sv), 0);
    ck_assert_int_eq(sv, IKD_SOLVER_FABRIK);
    ck_assert_int_eq(ikd_solver_from_name("magic", &sv), -1);
    ck_assert_int_eq(ikd_error_set(&e, IKD_E_INVALID, "a.b", "x=%d", 5), IKD_E_INVALID);
    ck_assert_str_eq(e.field, "a.b");
    ck_assert_str_eq(e.message, "x=5");
    char longf[400];
    memset(longf, 'f', sizeof longf - 1);
    longf[sizeof longf - 1] = 0;
    ikd_error_set(&e, IKD_E_INVALID, longf, NULL);
    ck_assert_uint_eq(strlen(e.field), IKD_ERROR_FIELD_MAX - 1);
    ck_assert_str_eq(e.message, ikd_strerror(IKD_E_INVALID));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("math");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, cross_dot_basics);
    tcase_add_test(tc, any_perp_is_unit_and_perpendicular);
    tcase_add_test(tc, rotation_preserves_length_and_composes);
    tcase_add_test(tc, axis_angle_right_hand_rule);
    tcase_add_test(tc, arc_maps_from_onto_to);
    tcase_add_test(tc, from_axes_gives_back_the_frame);
    tcase_add_test(tc, quat_norm_falls_back_to_identity);
    tcase_add_test(tc, error_table_is_consistent);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
