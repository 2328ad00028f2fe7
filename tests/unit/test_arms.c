/* test_arms.c - libcheck suite: one goal on a chain of hinges (robot arms, serial.c's path) over the generated arm family. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "humanoid.h"
#include "testutil.h"

typedef struct solved {
    ikd_quat local[HUMANOID_JOINTS];
    ikd_pose_joint pose[HUMANOID_JOINTS];
    ikd_goal_result gr[1];
    ikd_multi_result res;
} solved;

static double work_mem[1 << 14];

/* hp's problem from `start` (NULL: rest) with `rest_pull`. */
static void solve(const humanoid_problem *hp, const ikd_quat *start, double rest_pull, solved *o)
{
    ikd_multi_problem p;
    ikd_error err;
    ikd_goal goals[HUMANOID_MAX_GOALS];
    memcpy(goals, hp->goals, sizeof goals);
    ck_assert_int_eq(humanoid_setup(&p, hp, goals, hp->goal_count, start, hp->root, &err), IKD_E_OK);
    p.rest_pull = rest_pull;
    ck_assert_uint_le(ikd_multi_workspace_size(hp->skeleton.count, 1), sizeof work_mem);
    ck_assert_int_eq(ikd_multi_solve(&p, work_mem, sizeof work_mem, o->local, o->pose, o->gr, &o->res, &err), IKD_E_OK);
}

/* Joint k's hinge angle in a pose (radians): the twist of its deviation about its axis. */
static double angle_of(const ikd_skeleton_joint *j, ikd_quat local)
{
    ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), local);
    if (d.w < 0) d = ikd_quat_make(-d.x, -d.y, -d.z, -d.w);
    return 2 * atan2(ikd_vec3_dot(ikd_vec3_make(d.x, d.y, d.z), j->limit.local_axis), d.w);
}

/* Every limit kept (the deviation a turn about the axis, inside the range),
 * bones rigid (by this file's own composition of the offsets), the root in
 * place, the reported errors the real ones and `reached` exactly when both
 * are within the tolerances. */
static void check_solution(const humanoid_problem *hp, const solved *o)
{
    const ikd_skeleton *s = &hp->skeleton;
    ikd_vec3 P[HUMANOID_JOINTS];
    ikd_quat W[HUMANOID_JOINTS];
    for (size_t i = 0; i < s->count; i++) {
        const ikd_skeleton_joint *j = &s->joints[i];
        ikd_quat d = ikd_quat_mul(ikd_quat_conj(j->rest_local), o->local[i]);
        if (j->limit.type == IKD_LIMIT_FIXED) {
            ck_assert_double_le(ikd_quat_angle_between(d, ikd_quat_identity()), 1e-9);
        } else {
            double a = angle_of(j, o->local[i]) * IKD_RAD2DEG;
            ikd_vec3 off_axis = ikd_vec3_reject(ikd_vec3_make(d.x, d.y, d.z), j->limit.local_axis);
            ck_assert_double_le(ikd_vec3_len(off_axis), 1e-9);
            int inside = 0; /* a range past +-180 holds the angle a whole turn on */
            for (int t = -1; t <= 1; t++) inside |= a + 360 * t >= j->limit.min_deg - 1e-6 && a + 360 * t <= j->limit.max_deg + 1e-6;
            ck_assert_msg(inside, "joint %zu at %g, range [%g, %g]", i, a, j->limit.min_deg, j->limit.max_deg);
        }
        W[i] = i ? ikd_quat_mul(W[j->parent], o->local[i]) : o->local[0];
        P[i] = i ? ikd_vec3_add(P[j->parent], ikd_quat_rotate(W[j->parent], j->offset)) : hp->root;
        ck_assert_double_le(ikd_vec3_dist(P[i], o->pose[i].position), 1e-9);
    }
    const ikd_goal *g = &hp->goals[0];
    double e = ikd_vec3_dist(P[g->joint], g->position);
    double r = g->has_rotation ? ikd_quat_angle_between(W[g->joint], g->rotation) * IKD_RAD2DEG : 0;
    ck_assert_double_le(fabs(o->gr[0].error - e), 1e-9);
    ck_assert_double_le(fabs(o->gr[0].rotation_error_deg - r), 1e-5);
    int met = e <= 1e-4 && r <= 0.1;
    ck_assert_int_eq(o->gr[0].status == IKD_GOAL_REACHED, met);
    ck_assert_int_eq(o->res.status == IKD_MULTI_REACHED, met);
}

/* The arm family's 6R and 7R arms, 300 each (arm_family_make: arms drawn
 * as URDFs draw them, ranges that exclude rest, continuous joints, fixed
 * joints between): every solution checked; the goal met in at least 99%
 * (make bench: 99.8-99.9% over 1,000, where the general solver met
 * 97.0-97.6%); a met pose fed back as the start is met again, every hinge
 * within 1e-3 rad of where it was in 99% of them and within 0.05 rad in
 * all (where the pull's minimum lies in a flat valley or against a bound
 * the settle can end before it: 1 of 300 of each, 0.019 and 0.008 rad). */
START_TEST(arm_family_meets_its_goals_within_its_limits)
{
    static humanoid_problem hp;
    static solved o, back;
    for (int dof = 6; dof <= 7; dof++) {
        tu_rng r;
        tu_seed(&r, 7100 + (uint64_t)dof);
        int met = 0, still = 0;
        double worst_back = 0;
        for (int k = 0; k < 300; k++) {
            arm_family_make(&r, dof, &hp);
            solve(&hp, hp.has_start ? hp.start : NULL, 0.1, &o);
            check_solution(&hp, &o);
            if (o.gr[0].status != IKD_GOAL_REACHED) continue;
            met++;
            solve(&hp, o.local, 0.1, &back);
            check_solution(&hp, &back);
            ck_assert_int_eq(back.gr[0].status, IKD_GOAL_REACHED);
            double most = 0;
            for (size_t i = 0; i < hp.skeleton.count; i++) most = fmax(most, ikd_quat_angle_between(o.local[i], back.local[i]));
            still += most <= 1e-3, worst_back = fmax(worst_back, most);
            if (getenv("IKD_DEBUG") && most > 1e-3) fprintf(stderr, "k %d fed back %g, iterations %d then %d\n", k, most, o.res.iterations, back.res.iterations);
        }
        if (getenv("IKD_DEBUG"))
            fprintf(stderr, "%dR family: %d of 300 met; fed back, %d within 1e-3 rad, worst %g rad\n", dof, met, still, worst_back);
        ck_assert_msg(met >= 297, "%dR family: %d of 300 met", dof, met);
        ck_assert_msg(still >= 0.99 * met, "%dR family: fed back, %d of %d within 1e-3 rad", dof, still, met);
        ck_assert_msg(worst_back <= 0.05, "%dR family: fed back, a hinge moved %g rad", dof, worst_back);
    }
}
END_TEST

/* Solves (a) x = b by Gaussian elimination with partial pivoting, n <= 8. */
static void gauss(double a[8][8], double *b, int n, double *x)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int i = c + 1; i < n; i++)
            if (fabs(a[i][c]) > fabs(a[piv][c])) piv = i;
        for (int t = 0; t < n; t++) { double v = a[c][t]; a[c][t] = a[piv][t], a[piv][t] = v; }
        double v = b[c]; b[c] = b[piv], b[piv] = v;
        for (int i = c + 1; i < n; i++) {
            double f = a[i][c] / a[c][c];
            for (int t = c; t < n; t++) a[i][t] -= f * a[c][t];
            b[i] -= f * b[c];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = b[i];
        for (int t = i + 1; t < n; t++) v -= a[i][t] * x[t];
        x[i] = v / a[i][i];
    }
}

/* The freedom a 6-DoF goal leaves a 7R arm goes to rest (a hinge whose
 * range excludes rest: to its middle): at a met pose, with every hinge more
 * than 0.06 degrees inside its range (nearer, the settle may have stopped
 * against the bound, 1e-4 rad off it), the pose's angles (their offset from
 * where the pull takes them) have no part in the goal's null space, as
 * a finite-difference Jacobian of this file's forward kinematics gives it:
 * that part is under 2e-3 rad (the settle stops when a step turns under
 * 2e-4), over 300 arms; without the pull the angles are the descent's and
 * the same part is larger somewhere (so the check can fail). */
START_TEST(a_seven_joint_arm_settles_its_freedom_toward_rest)
{
    static humanoid_problem hp;
    static solved o;
    double worst[2] = {0, 0};
    for (int pull = 0; pull < 2; pull++) {
        tu_rng r;
        tu_seed(&r, 7200);
        int checked = 0;
        for (int k = 0; k < 300; k++) {
            arm_family_make(&r, 7, &hp);
            if (!hp.goals[0].has_rotation) continue;
            solve(&hp, NULL, pull ? 0.1 : 0, &o);
            if (o.gr[0].status != IKD_GOAL_REACHED) continue;
            const ikd_skeleton *s = &hp.skeleton;
            size_t hj[8];
            int n = 0, inside = 1;
            double th[8];
            for (size_t i = 0; i < s->count; i++) {
                if (s->joints[i].limit.type != IKD_LIMIT_HINGE) continue;
                double a = angle_of(&s->joints[i], o.local[i]) * IKD_RAD2DEG;
                inside &= a > s->joints[i].limit.min_deg + 0.06 && a < s->joints[i].limit.max_deg - 0.06; /* degrees */
                const ikd_limit *l = &s->joints[i].limit; /* the pull's aim: rest, or the middle of a range without it */
                double mid = l->min_deg <= 0 && 0 <= l->max_deg ? 0 : 0.5 * (l->min_deg + l->max_deg);
                th[n] = (a - mid) * IKD_DEG2RAD, hj[n++] = i;
            }
            if (!inside || n != 7) continue;
            double J[6][8];
            ikd_pose_joint at[HUMANOID_JOINTS];
            ikd_quat moved[HUMANOID_JOINTS];
            size_t e = hp.goals[0].joint;
            for (int c = 0; c < n; c++) {
                const double h = 1e-6;
                memcpy(moved, o.local, sizeof moved);
                moved[hj[c]] = ikd_quat_mul(o.local[hj[c]], ikd_quat_axis_angle(s->joints[hj[c]].limit.local_axis, h));
                ikd_skeleton_fk(s, hp.root, moved, at);
                ikd_vec3 dp = ikd_vec3_scale(ikd_vec3_sub(at[e].position, o.pose[e].position), 1 / h);
                ikd_quat dq = ikd_quat_mul(at[e].rotation, ikd_quat_conj(o.pose[e].rotation));
                if (dq.w < 0) dq = ikd_quat_make(-dq.x, -dq.y, -dq.z, -dq.w);
                double v[6] = {dp.x, dp.y, dp.z, 2 * dq.x / h, 2 * dq.y / h, 2 * dq.z / h};
                for (int row = 0; row < 6; row++) J[row][c] = v[row];
            }
            double A[8][8], b[8], y[8], part = 0; /* th less its part in J's row space */
            for (int i = 0; i < 6; i++) {
                b[i] = 0;
                for (int c = 0; c < n; c++) b[i] += J[i][c] * th[c];
                for (int t = 0; t < 6; t++) {
                    A[i][t] = 0;
                    for (int c = 0; c < n; c++) A[i][t] += J[i][c] * J[t][c];
                }
            }
            gauss(A, b, 6, y);
            for (int c = 0; c < n; c++) {
                double v = th[c];
                for (int i = 0; i < 6; i++) v -= J[i][c] * y[i];
                part += v * v;
            }
            if (getenv("IKD_DEBUG") && pull && sqrt(part) > 2e-3) fprintf(stderr, "k %d part %g iterations %d\n", k, sqrt(part), o.res.iterations);
            worst[pull] = fmax(worst[pull], sqrt(part));
            checked++;
        }
        ck_assert_int_ge(checked, 100);
    }
    if (getenv("IKD_DEBUG")) fprintf(stderr, "null-space part of the angles: %g without the pull, %g with\n", worst[0], worst[1]);
    ck_assert_double_le(worst[1], 2e-3);
    ck_assert_double_gt(worst[0], 1e-2);
}
END_TEST

/* A hinge whose rest lies outside its range (the Panda's joint4, [-176, -4]
 * degrees, straight at its bound): from the rest pose the first descent
 * starts it mid-range, and goals met by a bent elbow are met (all 200). */
START_TEST(a_range_that_excludes_rest_is_met_from_rest)
{
    static humanoid_problem hp;
    static solved o;
    tu_rng r;
    tu_seed(&r, 7300);
    int met = 0, tried = 0;
    while (tried < 200) {
        arm_family_make(&r, 7, &hp);
        int excludes = 0;
        for (size_t i = 0; i < hp.skeleton.count; i++) {
            const ikd_limit *l = &hp.skeleton.joints[i].limit;
            excludes |= l->type == IKD_LIMIT_HINGE && (l->min_deg > 0 || l->max_deg < 0);
        }
        if (!excludes) continue;
        tried++;
        solve(&hp, NULL, 0.1, &o);
        check_solution(&hp, &o);
        met += o.gr[0].status == IKD_GOAL_REACHED;
    }
    ck_assert_msg(met >= 198, "%d of 200 met", met);
}
END_TEST

/* hp's hinges with a range (not a whole turn) moved to pass +-180 degrees
 * (a random point of the range put at 180; bounds within [-360, 360]),
 * as Kinova JACO's joint 2, [47, 313]; then its goal anew from angles
 * anywhere inside the new ranges (hp->target). */
static void goal_inside_ranges(tu_rng *r, humanoid_problem *hp);

static void ranges_past_180(tu_rng *r, humanoid_problem *hp)
{
    ikd_skeleton *s = &hp->skeleton;
    for (size_t i = 0; i < s->count; i++) {
        ikd_limit *l = &hp->joints[i].limit;
        if (l->type != IKD_LIMIT_HINGE || l->max_deg - l->min_deg >= 360) continue;
        double sh = 180 - tu_uniform(r, l->min_deg + 1, l->max_deg - 1);
        if (0.5 * (l->min_deg + l->max_deg) + sh > 180) sh -= 360;
        l->min_deg += sh, l->max_deg += sh;
    }
    goal_inside_ranges(r, hp);
}

/* hp validated anew, and its goal anew from angles anywhere inside its
 * ranges (hp->target), without a start pose. */
static void goal_inside_ranges(tu_rng *r, humanoid_problem *hp)
{
    ikd_skeleton *s = &hp->skeleton;
    ikd_error err;
    ck_assert_int_eq(ikd_skeleton_validate(s, &err), IKD_E_OK);
    ikd_pose_joint tp[HUMANOID_JOINTS];
    for (size_t i = 0; i < s->count; i++) {
        const ikd_limit *l = &hp->joints[i].limit;
        double a = l->type == IKD_LIMIT_HINGE ? tu_uniform(r, l->min_deg, l->max_deg) * IKD_DEG2RAD : 0;
        hp->target[i] = ikd_quat_mul(hp->joints[i].rest_local, ikd_quat_axis_angle(l->local_axis, a));
    }
    ikd_skeleton_fk(s, hp->root, hp->target, tp);
    hp->goals[0].position = tp[s->count - 1].position;
    if (hp->goals[0].has_rotation) hp->goals[0].rotation = tp[s->count - 1].rotation;
    hp->has_start = 0;
}

/* Arm k of a loop over the arm family (6R when k is even, else 7R), its
 * ranges changed by `shape`, solved from rest with rest_pull `pull` and
 * its solution checked; 1 when its goal is met. */
static int family_arm_met(tu_rng *r, int k, void (*shape)(tu_rng *, humanoid_problem *), double pull, humanoid_problem *hp,
                          solved *o)
{
    arm_family_make(r, 6 + k % 2, hp);
    shape(r, hp);
    solve(hp, NULL, pull, o);
    check_solution(hp, o);
    return o->gr[0].status == IKD_GOAL_REACHED;
}

/* Ranges past +-180 degrees are continuous across 180 (a URDF's [47, 313]
 * degrees was cut at 180 on import before): on 300 arms of the family
 * with such ranges, from rest, the goal is met in 99% (every solution
 * checked against the ranges); the pose its angles came from, as the start,
 * is met, and on the 6R arms under 6-DoF goals returned as it is (no
 * freedom to settle; were the angles read within +-180, it would be
 * projected across 180). */
START_TEST(a_range_past_180_is_continuous_across_it)
{
    static humanoid_problem hp;
    static solved o;
    tu_rng r;
    tu_seed(&r, 7500);
    int met = 0;
    for (int k = 0; k < 300; k++) {
        met += family_arm_met(&r, k, ranges_past_180, 0.1, &hp, &o);
        solve(&hp, hp.target, 0.1, &o);
        check_solution(&hp, &o);
        ck_assert_int_eq(o.gr[0].status, IKD_GOAL_REACHED);
        if (k % 2 == 0 && hp.goals[0].has_rotation) { /* 6R, 6-DoF: no freedom to settle */
            if (getenv("IKD_DEBUG")) fprintf(stderr, "k %d: %d iterations\n", k, o.res.iterations);
            ck_assert_int_eq(o.res.iterations, 0);
            for (size_t i = 0; i < hp.skeleton.count; i++) ck_assert_double_le(ikd_quat_angle_between(o.local[i], hp.target[i]), 1e-12);
        }
    }
    ck_assert_msg(met >= 297, "%d of 300 met", met);
}
END_TEST

/* Every bounded hinge's range moved so that rest lies 1-5 degrees inside
 * one of its bounds, as a URDF's often does (Baxter's elbow e1 rests 3
 * degrees from its bound, its arm straight; the Panda's joint 4 excludes
 * rest), keeping its width; then a goal anew from angles inside the new
 * ranges (hp->target). */
static void rests_at_a_bound(tu_rng *r, humanoid_problem *hp)
{
    ikd_skeleton *s = &hp->skeleton;
    for (size_t i = 0; i < s->count; i++) {
        ikd_limit *l = &hp->joints[i].limit;
        if (l->type != IKD_LIMIT_HINGE || l->max_deg - l->min_deg >= 360) continue;
        double w = l->max_deg - l->min_deg, in = tu_uniform(r, 1, 5);
        if (tu_next(r) % 2) l->min_deg = -in, l->max_deg = w - in;
        else l->max_deg = in, l->min_deg = in - w;
    }
    goal_inside_ranges(r, hp);
}

/* Solved without a start pose (rest pull off: the descent alone), such
 * arms meet their goals as often, and in fewer iterations since a hinge
 * resting near a bound starts at its range's middle (serial.c,
 * SERIAL_NEAR_BOUND): a limb straight at rest is a singular Jacobian, and
 * the descents from rest took 26.2 iterations on average over these arms,
 * against 18.8 now. */
START_TEST(rests_at_a_bound_start_from_the_middle)
{
    static humanoid_problem hp;
    static solved o;
    tu_rng r;
    tu_seed(&r, 7600);
    int met = 0;
    long iterations = 0;
    for (int k = 0; k < 300; k++) {
        met += family_arm_met(&r, k, rests_at_a_bound, 0, &hp, &o);
        iterations += o.res.iterations;
    }
    if (getenv("IKD_DEBUG")) fprintf(stderr, "rests at a bound: %d of 300 met, %.1f iterations\n", met, iterations / 300.0);
    ck_assert_msg(met >= 297, "%d of 300 met", met);
    ck_assert_double_le(iterations / 300.0, 21);
}
END_TEST

/* A goal beyond the arm's reach (1.5 x its bones' length from the base)
 * still goes the general way: `unreachable`, the solve partial, every
 * limit kept (test_skeleton checks where such an arm points). */
START_TEST(a_goal_beyond_reach_is_unreachable)
{
    static humanoid_problem hp;
    static solved o;
    tu_rng r;
    tu_seed(&r, 7400);
    for (int k = 0; k < 100; k++) {
        arm_family_make(&r, 6 + k % 2, &hp);
        ikd_goal *g = &hp.goals[0];
        double reach = 0;
        for (size_t i = 1; i < hp.skeleton.count; i++) reach += ikd_vec3_len(hp.skeleton.joints[i].offset);
        ikd_vec3 dir = ikd_vec3_norm_or(ikd_vec3_sub(g->position, hp.root), ikd_vec3_make(1, 0, 0));
        g->position = ikd_vec3_mad(hp.root, dir, 1.5 * reach);
        g->has_rotation = 0;
        solve(&hp, NULL, 0.1, &o);
        check_solution(&hp, &o);
        ck_assert_int_eq(o.gr[0].status, IKD_GOAL_UNREACHABLE);
        ck_assert_int_eq(o.res.status, IKD_MULTI_PARTIAL);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arms");
    TCase *tc = tcase_create("arms");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, arm_family_meets_its_goals_within_its_limits);
    tcase_add_test(tc, a_seven_joint_arm_settles_its_freedom_toward_rest);
    tcase_add_test(tc, a_range_that_excludes_rest_is_met_from_rest);
    tcase_add_test(tc, a_range_past_180_is_continuous_across_it);
    tcase_add_test(tc, a_goal_beyond_reach_is_unreachable);
    tcase_add_test(tc, rests_at_a_bound_start_from_the_middle);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
