/* test_chain.c - libcheck suite: chain validation (every field path), forward kinematics, pose rotations, ikd_solve's own check. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define N 6

/* A valid random chain with a hinge on joint 1 and a ball on joint 3. */
static void valid_chain(tu_rng *r, ikd_joint *j)
{
    tu_random_chain(r, j, N, 0.5, 1.5);
    j[1].constraint = (ikd_constraint){.type = IKD_CONSTRAINT_HINGE, .axis = tu_unit_vec(r), .min_deg = -30, .max_deg = 90};
    j[3].constraint = (ikd_constraint){.type = IKD_CONSTRAINT_BALL, .max_deg = 40};
}

typedef struct corruption {
    const char *field; /* the path the error must name */
    void (*apply)(ikd_joint *j);
} corruption;

static void c_nan_position(ikd_joint *j) { j[2].position.y = NAN; }
static void c_coincident(ikd_joint *j) { j[4].position = j[3].position; }
static void c_rotation(ikd_joint *j) { j[5].rotation = ikd_quat_make(0, 0, 0, 2); }
static void c_zero_axis(ikd_joint *j) { j[1].constraint.axis = ikd_vec3_make(0, 0, 0); }
static void c_min_over_max(ikd_joint *j) { j[1].constraint.min_deg = 100; }
static void c_max_range(ikd_joint *j) { j[1].constraint.max_deg = 181; }
static void c_ball_range(ikd_joint *j) { j[3].constraint.max_deg = -1; }
static void c_effector(ikd_joint *j) { j[N - 1].constraint.type = IKD_CONSTRAINT_BALL; }
static void c_reference(ikd_joint *j)
{
    j[3].constraint.has_reference = 1;
    j[3].constraint.reference = ikd_vec3_make(0, 1, 0);
}
static void c_type(ikd_joint *j) { j[2].constraint.type = (ikd_constraint_type)7; }

static const corruption corruptions[] = {
    {"chain.joints[2].position", c_nan_position},
    {"chain.joints[4].position", c_coincident},
    {"chain.joints[5].rotation", c_rotation},
    {"chain.joints[1].constraint.axis", c_zero_axis},
    {"chain.joints[1].constraint.min_deg", c_min_over_max},
    {"chain.joints[1].constraint.max_deg", c_max_range},
    {"chain.joints[3].constraint.max_deg", c_ball_range},
    {"chain.joints[5].constraint", c_effector},
    {"chain.joints[3].constraint.reference", c_reference},
    {"chain.joints[2].constraint.type", c_type},
};

/* Over a thousand random chains: the valid one passes and each corruption
 * is reported with its exact field, by validation and by ikd_solve alike. */
START_TEST(validation_names_every_field)
{
    tu_rng r;
    tu_seed(&r, 4242);
    static double work[N * 64];
    for (int k = 0; k < 1000; k++) {
        ikd_joint j[N];
        valid_chain(&r, j);
        ikd_error err;
        ck_assert_int_eq(ikd_chain_validate(j, N, 2, &err), IKD_E_OK);
        for (size_t c = 0; c < sizeof corruptions / sizeof corruptions[0]; c++) {
            ikd_joint bad[N];
            memcpy(bad, j, sizeof bad);
            corruptions[c].apply(bad);
            ck_assert_int_eq(ikd_chain_validate(bad, N, 2, &err), IKD_E_INVALID);
            ck_assert_str_eq(err.field, corruptions[c].field);
            ck_assert(err.message[0] != '\0');
            ikd_problem p;
            ikd_problem_init(&p);
            p.joints = bad;
            p.joint_count = N;
            ikd_pose_joint pose[N];
            ikd_result res;
            ck_assert_int_eq(ikd_solve(&p, work, sizeof work, pose, &res, &err), IKD_E_INVALID);
            ck_assert_str_eq(err.field, corruptions[c].field);
        }
    }
    ikd_joint j[N];
    valid_chain(&r, j);
    ikd_error err;
    ck_assert_int_eq(ikd_chain_validate(j, 1, 2, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints");
}
END_TEST

/* ikd_solve writes nothing and refuses what validation would have had to
 * normalise; after ikd_validate the same problem solves. */
START_TEST(solve_checks_without_writing)
{
    tu_rng r;
    tu_seed(&r, 7);
    static double work[N * 64];
    ikd_joint j[N];
    valid_chain(&r, j);
    j[2].rotation = ikd_quat_make(0, 0, 0, 1.0005);       /* accepted by validation, not yet normalised */
    j[1].constraint.axis = ikd_vec3_make(0, 0, 3);          /* any length: normalised by validation */
    ikd_joint copy[N];
    memcpy(copy, j, sizeof copy);
    ikd_problem p;
    ikd_problem_init(&p);
    p.joints = j;
    p.joint_count = N;
    p.target = ikd_vec3_add(j[0].position, ikd_vec3_make(1, 1, 0));
    ikd_pose_joint pose[N];
    ikd_result res;
    ikd_error err;
    ck_assert_int_eq(ikd_solve(&p, work, sizeof work, pose, &res, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "chain.joints[1].constraint.axis");
    ck_assert_int_eq(memcmp(copy, j, sizeof copy), 0);
    ck_assert_int_eq(ikd_validate(&p, &err), IKD_E_OK);
    ck_assert_double_eq_tol(ikd_quat_len(j[2].rotation), 1.0, 1e-15);
    ck_assert_int_eq(ikd_solve(&p, work, sizeof work, pose, &res, &err), IKD_E_OK);
    ck_assert_int_eq(ikd_solve(&p, work, 8, pose, &res, &err), IKD_E_INTERNAL); /* workspace too small */
    p.options.tolerance = -1;
    ck_assert_int_eq(ikd_solve(&p, work, sizeof work, pose, &res, &err), IKD_E_INVALID);
    ck_assert_str_eq(err.field, "options.tolerance");
}
END_TEST

/* Forward kinematics from random local rotations keeps every bone's length,
 * keeps the root, and world = parent world * local; identity world
 * rotations give back the start pose. */
START_TEST(forward_kinematics)
{
    tu_rng r;
    tu_seed(&r, 99);
    for (int k = 0; k < 2000; k++) {
        ikd_joint j[N];
        tu_random_chain(&r, j, N, 0.2, 2.0);
        ikd_quat local[N], scratch[N];
        for (int i = 0; i < N; i++) local[i] = tu_unit_quat(&r);
        ikd_pose_joint pose[N];
        ikd_chain_fk_local(j, N, local, scratch, pose);
        ck_assert(memcmp(&pose[0].position, &j[0].position, sizeof(ikd_vec3)) == 0);
        ck_assert_double_le(tu_max_length_error(j, pose, N), 1e-12);
        for (int i = 1; i < N; i++) {
            ikd_quat w = ikd_quat_mul(pose[i - 1].rotation, pose[i].local_rotation);
            ck_assert_double_le(ikd_quat_angle_between(w, pose[i].rotation), 1e-9);
        }
        ikd_quat world[N];
        for (int i = 0; i < N; i++) world[i] = j[i].rotation;
        ikd_chain_fk_world(j, N, world, pose);
        for (int i = 0; i < N; i++)
            ck_assert_double_le(ikd_vec3_dist(pose[i].position, j[i].position), 1e-12 * (1 + ikd_vec3_len(j[i].position)));
    }
}
END_TEST

/* Pose rotations: each bone turns by the shortest arc from its start
 * direction to its new one (tu_max_rotation_error checks DESIGN.md's rules
 * independently); the effector keeps its start rotation unless given one. */
START_TEST(pose_rotations_are_shortest_arcs)
{
    tu_rng r;
    tu_seed(&r, 5);
    for (int k = 0; k < 2000; k++) {
        ikd_joint j[N];
        tu_random_chain(&r, j, N, 0.5, 1.5);
        ikd_pose_joint pose[N];
        pose[0].position = j[0].position;
        for (int i = 1; i < N; i++)
            pose[i].position = ikd_vec3_mad(pose[i - 1].position, tu_unit_vec(&r), ikd_chain_bone_length(j, i - 1));
        ikd_quat eff = tu_unit_quat(&r);
        ikd_chain_pose_rotations(j, N, k % 2 ? &eff : NULL, pose);
        ck_assert_double_le(tu_max_rotation_error(j, pose, N), 1e-9);
        ck_assert_double_le(ikd_quat_angle_between(pose[N - 1].rotation, k % 2 ? eff : j[N - 1].rotation), 1e-9);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chain");
    TCase *tc = tcase_create("chain");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, validation_names_every_field);
    tcase_add_test(tc, solve_checks_without_writing);
    tcase_add_test(tc, forward_kinematics);
    tcase_add_test(tc, pose_rotations_are_shortest_arcs);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
