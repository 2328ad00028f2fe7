/* test_frame.c - libcheck suite: euler limits in a frame of their own (constraint.frame): the boxes of joints turned to that frame, in the limit's rules and the skeleton solver; limits=recording's principal frames. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "humanoid.h"
#include "service/reclimits.h"
#include "solve/limit.h"
#include "testutil.h"

/* A random euler box: any order, outer ranges of 10-340 degrees about a
 * random middle within [-180, 180], the middle angle's within (-85, 85). */
static void random_box(tu_rng *r, ikd_limit *l)
{
    ikd_limit_init(l, IKD_LIMIT_EULER);
    l->order = (ikd_euler_order)(tu_next(r) % 6);
    for (int i = 0; i < 3; i++) {
        double lim = i == 1 ? 85 : 180, a = tu_uniform(r, -lim, lim), b = tu_uniform(r, -lim, lim);
        l->euler_min_deg[i] = fmin(a, b), l->euler_max_deg[i] = fmax(a, b);
    }
}

/* A one-joint skeleton of rest rotation `rest` with limit l. */
static void one_joint(ikd_skeleton_joint *j, ikd_skeleton *s, ikd_quat rest, const ikd_limit *l)
{
    memset(j, 0, sizeof *j);
    j->parent = -1, j->rotation = rest, j->limit = *l;
    s->joints = j, s->count = 1;
    ikd_error err;
    ck_assert_int_eq(ikd_skeleton_validate(s, &err), IKD_E_OK);
}

/* q turned into frame f's terms: f q f^-1. */
static ikd_quat conjugated(ikd_quat f, ikd_quat q) { return ikd_quat_mul(f, ikd_quat_mul(q, ikd_quat_conj(f))); }

/* Joint A rests at R with a box in frame W; joint B rests at W with the same
 * box and no frame (the box about its own axes). A world turn G of each from
 * its rest (deviations R^-1 G R and W^-1 G W) is inside A's box exactly when
 * it is inside B's, by the exact test and by the bounds' test; both project
 * it onto the same world turn, by the same violation; both pull to the same
 * neutral turn. Half the turns come from inside the box (G = W E W^-1, E
 * the box's own angles): those are inside both. */
START_TEST(a_framed_box_is_the_box_of_a_joint_turned_to_its_frame)
{
    tu_rng r;
    tu_seed(&r, 7101);
    int inside = 0, outside = 0;
    for (int k = 0; k < 5000; k++) {
        ikd_limit box;
        random_box(&r, &box);
        ikd_quat R = tu_unit_quat(&r), W = tu_unit_quat(&r);
        ikd_skeleton_joint ja, jb;
        ikd_skeleton sa, sb;
        ikd_limit la = box;
        la.has_frame = 1, la.frame = W;
        one_joint(&ja, &sa, R, &la);
        one_joint(&jb, &sb, W, &box);
        ikd_quat G;
        int from_box = k % 2;
        if (from_box) {
            double a[3];
            for (int i = 0; i < 3; i++) a[i] = tu_uniform(&r, box.euler_min_deg[i], box.euler_max_deg[i]) * IKD_DEG2RAD;
            G = conjugated(W, ikd_limit_euler_quat(box.order, a));
        } else {
            G = tu_unit_quat(&r);
        }
        ikd_quat da = ikd_quat_mul(ikd_quat_conj(R), ikd_quat_mul(G, R)), db = ikd_quat_mul(ikd_quat_conj(W), ikd_quat_mul(G, W));
        int ina = ikd__limit_inside(&ja.limit, da), inb = ikd__limit_inside(&jb.limit, db);
        ck_assert_msg(ina == inb, "case %d: inside %d in its frame, %d turned", k, ina, inb);
        ck_assert_int_eq(ikd__limit_inside_by(&ja.limit, ja.limit.bounds, da), ina);
        if (from_box) ck_assert_msg(ina, "case %d: a turn from the box's own angles is outside", k);
        inside += ina, outside += !ina;
        ikd_quat pa = conjugated(R, ikd_limit_project(&ja.limit, da)), pb = conjugated(W, ikd_limit_project(&jb.limit, db));
        ck_assert_msg(ikd_quat_angle_between(pa, pb) < 1e-9, "case %d: projections %g rad apart", k, ikd_quat_angle_between(pa, pb));
        ck_assert_double_le(fabs(ikd_limit_violation(&ja.limit, da) - ikd_limit_violation(&jb.limit, db)), 1e-9);
        ikd_quat na = conjugated(R, ikd__limit_neutral(&ja.limit)), nb = conjugated(W, ikd__limit_neutral(&jb.limit));
        ck_assert_double_le(ikd_quat_angle_between(na, nb), 1e-9);
    }
    ck_assert_int_ge(inside, 2500);
    ck_assert_int_ge(outside, 500);
}
END_TEST

/* Validation of a frame: a unit quaternion (within 1e-3), on euler limits. */
START_TEST(a_frame_must_be_a_unit_quaternion)
{
    ikd_limit l;
    ikd_limit_init(&l, IKD_LIMIT_EULER);
    l.has_frame = 1;
    ikd_skeleton_joint j;
    memset(&j, 0, sizeof j);
    j.parent = -1, j.rotation = ikd_quat_identity();
    ikd_skeleton s = {.joints = &j, .count = 1};
    ikd_error err;
    const ikd_quat bad[] = {ikd_quat_make(0, 0, 0, 0), ikd_quat_make(0, 0, 0, 1.01), ikd_quat_make(NAN, 0, 0, 1)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j.limit = l, j.limit.frame = bad[i];
        ck_assert_int_eq(ikd_skeleton_validate(&s, &err), IKD_E_INVALID);
        ck_assert_str_eq(err.field, "skeleton.joints[0].constraint.frame");
    }
    j.limit = l, j.limit.frame = ikd_quat_make(0, 0.7071, 0, 0.7071); /* within 1e-3 of unit: normalised */
    ck_assert_int_eq(ikd_skeleton_validate(&s, &err), IKD_E_OK);
    ck_assert_double_le(fabs(ikd_quat_len(j.limit.frame) - 1), 1e-15);
}
END_TEST

static double work_a[1 << 16], work_b[1 << 16];

typedef struct solved {
    ikd_quat local[HUMANOID_JOINTS];
    ikd_pose_joint pose[HUMANOID_JOINTS];
    ikd_goal_result gr[HUMANOID_MAX_GOALS];
    ikd_multi_result res;
} solved;

static void solve_into(const humanoid_problem *hp, ikd_goal *goals, double *work, size_t bytes, solved *o)
{
    ikd_multi_problem p;
    ikd_error err;
    ck_assert_int_eq(humanoid_setup(&p, hp, goals, hp->goal_count, NULL, hp->root, &err), IKD_E_OK);
    ck_assert_int_eq(ikd_multi_solve(&p, work, bytes, o->local, o->pose, o->gr, &o->res, &err), IKD_E_OK);
}

/* The humanoid family's problems with every euler box in a random frame of
 * its own (skeleton A), against the same rig with each such joint's rest
 * rotation turned to that frame and its box about its own axes (B): the
 * same problem in other coordinates. Goals from a pose inside A's boxes
 * (positions, and on the 6-DoF set rotations, said for B's turned joints
 * and aims). Solved from rest, both end with the same joint positions and
 * the same goals met; A keeps its boxes (read in their frames). */
START_TEST(framed_boxes_solve_as_joints_turned_to_their_frames)
{
    static humanoid_problem a, b;
    static solved oa, ob;
    tu_rng r;
    tu_seed(&r, 7102);
    int same = 0, met = 0, n = 300;
    double worst = 0;
    for (int k = 0; k < n; k++) {
        humanoid_family_make(&r, k % 2 ? HSET_FULL : HSET_POSITIONS, &a);
        b = a;
        b.skeleton.joints = b.joints;
        ikd_quat turn[HUMANOID_JOINTS]; /* R^-1 W of each joint: A's rest frame to B's */
        for (size_t i = 0; i < a.skeleton.count; i++) {
            turn[i] = ikd_quat_identity();
            if (a.joints[i].limit.type != IKD_LIMIT_EULER) continue;
            ikd_quat W = tu_unit_quat(&r);
            a.joints[i].limit.has_frame = 1, a.joints[i].limit.frame = W;
            turn[i] = ikd_quat_mul(ikd_quat_conj(a.joints[i].rotation), W);
            b.joints[i].rotation = W;
        }
        ikd_error err;
        ck_assert_int_eq(ikd_skeleton_validate(&a.skeleton, &err), IKD_E_OK);
        ck_assert_int_eq(ikd_skeleton_validate(&b.skeleton, &err), IKD_E_OK);
        ikd_quat witness[HUMANOID_JOINTS];
        ikd_pose_joint wp[HUMANOID_JOINTS];
        for (size_t i = 0; i < a.skeleton.count; i++) {
            const ikd_skeleton_joint *j = &a.skeleton.joints[i];
            ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), a.target[i]); /* inside the other limits */
            if (j->limit.type == IKD_LIMIT_EULER) {
                double e[3];
                for (int t = 0; t < 3; t++) {
                    double lo = j->limit.euler_min_deg[t], hi = j->limit.euler_max_deg[t], m = 0.5 * (lo + hi);
                    e[t] = (m + 0.8 * tu_uniform(&r, lo - m, hi - m)) * IKD_DEG2RAD;
                }
                d = conjugated(j->limit.local_frame, ikd_limit_euler_quat(j->limit.order, e));
            }
            witness[i] = ikd_quat_norm(ikd_quat_mul(j->rest_local, d));
        }
        ikd_skeleton_fk(&a.skeleton, a.root, witness, wp);
        ikd_goal ga[HUMANOID_MAX_GOALS], gb[HUMANOID_MAX_GOALS];
        for (size_t g = 0; g < a.goal_count; g++) {
            ga[g] = a.goals[g];
            size_t j = ga[g].joint;
            if (ga[g].has_position) ga[g].position = wp[j].position;
            if (ga[g].has_rotation) ga[g].rotation = wp[j].rotation;
            gb[g] = ga[g];
            if (gb[g].has_rotation) gb[g].rotation = ikd_quat_norm(ikd_quat_mul(ga[g].rotation, turn[j]));
        }
        solve_into(&a, ga, work_a, sizeof work_a, &oa);
        solve_into(&b, gb, work_b, sizeof work_b, &ob);
        ck_assert_double_le(ikd_skeleton_max_violation(&a.skeleton, oa.local), 1e-9);
        double apart = 0;
        for (size_t i = 0; i < a.skeleton.count; i++)
            apart = fmax(apart, ikd_vec3_len(ikd_vec3_sub(oa.pose[i].position, ob.pose[i].position)) / a.skeleton.size);
        int agree = oa.res.status == ob.res.status;
        for (size_t g = 0; g < a.goal_count; g++) agree &= oa.gr[g].status == ob.gr[g].status;
        same += agree && apart < 1e-6;
        met += oa.res.status == IKD_MULTI_REACHED;
        if (agree) worst = fmax(worst, apart);
    }
    if (getenv("IKD_DEBUG")) fprintf(stderr, "framed boxes: %d of %d the same, %d met, worst %g\n", same, n, met, worst);
    ck_assert_int_ge(same, n * 97 / 100);
    ck_assert_int_ge(met, n * 97 / 100);
}
END_TEST

/* limits=recording on takes where a joint turns about one tilted axis
 * (a hinge the rig's axes do not line up with: 150 degrees about it, up
 * to 1.5 off it either way), on rigs at rest and turned: its box is in the
 * principal axes of the motion (a frame whose widest angle's axis is the
 * hinge's, within 3 degrees), keeps every frame, and spans at most 30
 * degrees on its other two angles (the 10 either side, the motion's 3
 * and the estimate's tilt: 22-28 here); in the rig's own axes a box that
 * held it would span the hinge's 150 on two or three angles. */
START_TEST(a_take_turning_about_a_tilted_axis_gets_its_box_in_that_axis)
{
    tu_rng r;
    tu_seed(&r, 7103);
    enum { N = 3, FRAMES = 120 };
    for (int k = 0; k < 200; k++) {
        ikd_skeleton_joint js[N];
        memset(js, 0, sizeof js);
        for (int i = 0; i < N; i++) {
            js[i].parent = i - 1, js[i].position = ikd_vec3_make(0, i, 0);
            js[i].rotation = k % 2 ? tu_unit_quat(&r) : ikd_quat_identity();
        }
        ikd_vec3 u = tu_unit_vec(&r);
        static ikd_quat rot[FRAMES * N];
        double from = tu_uniform(&r, -150, 0);
        for (int f = 0; f < FRAMES; f++) {
            double a = (from + 150.0 * f / (FRAMES - 1)) * IKD_DEG2RAD;
            ikd_quat d = ikd_quat_mul(ikd_quat_axis_angle(u, a), tu_small_quat(&r, 1.5 * IKD_DEG2RAD));
            for (int i = 0; i < N; i++) {
                ikd_quat rest = i ? ikd_quat_mul(ikd_quat_conj(js[i - 1].rotation), js[i].rotation) : js[0].rotation;
                rot[f * N + i] = i == 1 ? ikd_quat_norm(ikd_quat_mul(rest, d)) : rest;
            }
        }
        ck_assert_uint_eq(ikd_reclimits_poses(rot, FRAMES, js, N), N - 1);
        ikd_skeleton s = {.joints = js, .count = N};
        ikd_error err;
        ck_assert_int_eq(ikd_skeleton_validate(&s, &err), IKD_E_OK);
        const ikd_limit *l = &js[1].limit;
        ck_assert_int_eq(l->type, IKD_LIMIT_EULER);
        ck_assert_msg(l->has_frame, "case %d: no frame", k);
        int wide = 0;
        for (int t = 1; t < 3; t++)
            if (l->euler_max_deg[t] - l->euler_min_deg[t] > l->euler_max_deg[wide] - l->euler_min_deg[wide]) wide = t;
        static const char axis_of[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        int ax = axis_of[l->order][wide];
        ikd_vec3 e = ikd_quat_rotate(l->local_frame, ikd_vec3_make(ax == 0, ax == 1, ax == 2));
        ck_assert_msg(fabs(ikd_vec3_dot(e, u)) > cos(3 * IKD_DEG2RAD), "case %d: widest axis %g deg off the hinge", k,
                      acos(fmin(1, fabs(ikd_vec3_dot(e, u)))) * IKD_RAD2DEG);
        for (int t = 0; t < 3; t++)
            if (t != wide) ck_assert_double_le(l->euler_max_deg[t] - l->euler_min_deg[t], 30);
        for (int f = 0; f < FRAMES; f++) {
            ikd_quat rest = ikd_quat_mul(ikd_quat_conj(js[0].rotation), js[1].rotation);
            ck_assert(ikd__limit_inside(l, ikd_quat_mul(ikd_quat_conj(rest), rot[f * N + 1])));
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("frame");
    TCase *tc = tcase_create("frame");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_framed_box_is_the_box_of_a_joint_turned_to_its_frame);
    tcase_add_test(tc, a_frame_must_be_a_unit_quaternion);
    tcase_add_test(tc, framed_boxes_solve_as_joints_turned_to_their_frames);
    tcase_add_test(tc, a_take_turning_about_a_tilted_axis_gets_its_box_in_that_axis);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
