/* fuzz_skeleton.c - libFuzzer harness over the skeleton solver (ikd_multi_solve) and clip frames (ikd_motion).
 *
 * The bytes become a skeleton (1 to 12 joints, a tree, each constraint type
 * with fuzzed ranges and axes; coordinates from raw doubles, so NaN,
 * Infinity, 1e300 and denormals all occur), goals of every kind, options
 * and a start pose. What validation refuses must be refused with a code,
 * a field path and a message; what it accepts must solve, and then again as
 * two more frames of a clip, to finite unit poses that keep every limit,
 * the root where it started unless free, bones rigid unless stretched,
 * finite goal errors and statuses that agree with them and with the
 * solve's, within the iteration budget, without allocating or crashing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ikd/ikd.h"
#include "ikd/motion.h"
#include "reader.h"

enum { MAX_N = 12 };

static ikd_vec3 vec(reader *r) { return ikd_vec3_make(num(r), num(r), num(r)); }

/* Degrees: small multiples of 5 mostly (ranges that make sense), raw at times. */
static double deg(reader *r)
{
    uint8_t b = byte(r);
    return b < 240 ? ((double)(int8_t)byte(r)) * 1.5 : num(r);
}

/* A refusal names its field and says why. */
static void refused(const ikd_error *err)
{
    if (err->code != IKD_E_INVALID || !err->message[0] || !err->field[0]) abort();
}

static void limit(reader *r, ikd_limit *l)
{
    ikd_limit_init(l, (ikd_limit_type)(byte(r) % 5));
    if (byte(r) & 1) l->has_axis = 1, l->axis = vec(r);
    if (l->type == IKD_LIMIT_HINGE) l->min_deg = deg(r), l->max_deg = deg(r);
    if (l->type == IKD_LIMIT_BALL) {
        if (byte(r) & 1) l->max_deg = fabs(deg(r));
        if (byte(r) & 1) l->twist_min_deg = deg(r), l->twist_max_deg = deg(r);
    }
    if (l->type == IKD_LIMIT_EULER) {
        l->order = (ikd_euler_order)(byte(r) % 6);
        for (int a = 0; a < 3; a++) l->euler_min_deg[a] = deg(r), l->euler_max_deg[a] = deg(r);
        uint8_t f = byte(r); /* a frame: made unit (bit 2), or raw for validation */
        if (f & 1) l->has_frame = 1, l->frame = ikd_quat_make(num(r), num(r), num(r), num(r));
        if ((f & 3) == 3) l->frame = ikd_quat_norm(l->frame);
    }
}

static void goal(reader *r, size_t n, ikd_goal *g)
{
    ikd_goal_init(g, byte(r) % (n + 1)); /* n: an unknown joint, refused */
    uint8_t k = byte(r);
    if (k & 1) g->has_position = 1, g->position = vec(r);
    if (k & 2) g->has_rotation = 1, g->rotation = ikd_quat_norm(ikd_quat_make(num(r), num(r), num(r), num(r)));
    if (k & 4) g->has_aim = 1, g->aim_axis = vec(r), g->aim_at = vec(r);
    if (k & 8) {
        g->has_ground = 1, g->ground_point = vec(r), g->ground_normal = vec(r);
        if (byte(r) & 1) g->has_ground_height = 1, g->ground_height = num(r);
    }
    if (k & 16) g->has_pole = 1, g->pole = vec(r);
    if (k & 32) g->weight = fabs(num(r));
}

/* Every invariant of a solved pose (see the top of the file). */
static void check(const ikd_multi_problem *p, const ikd_quat *local, const ikd_pose_joint *pose, const ikd_goal_result *gr,
                  const ikd_multi_result *res)
{
    const ikd_skeleton *s = p->skeleton;
    if (res->iterations < 0 || res->iterations > p->max_iterations) abort();
    if (!ikd_vec3_isfinite(res->root)) abort();
    if (!p->root_free && memcmp(&res->root, &p->root, sizeof res->root) != 0) abort(); /* root fixed */
    for (size_t i = 0; i < s->count; i++) {
        if (!ikd_quat_isfinite(local[i]) || fabs(ikd_quat_len(local[i]) - 1) > 1e-9) abort();
        if (!ikd_vec3_isfinite(pose[i].position) || !ikd_quat_isfinite(pose[i].rotation)) abort();
        if (fabs(ikd_quat_len(pose[i].rotation) - 1) > 1e-9) abort();
        long pa = s->joints[i].parent;
        if (pa < 0 || p->stretch > 1) continue;
        /* rigid bones, relative to the coordinates' magnitude */
        double want = ikd_vec3_len(s->joints[i].offset), have = ikd_vec3_dist(pose[i].position, pose[pa].position);
        double scale = s->size + ikd_vec3_len(pose[i].position) + ikd_vec3_len(p->root);
        if (fabs(have - want) > 1e-9 * scale) abort();
    }
    if (ikd_skeleton_max_violation(s, local) > 1e-6) abort();
    int all = 1;
    for (size_t g = 0; g < p->goal_count; g++) {
        if (!isfinite(gr[g].error) || gr[g].error < 0) abort();
        if (!isfinite(gr[g].rotation_error_deg) || gr[g].rotation_error_deg < 0) abort();
        if ((unsigned)gr[g].status > IKD_GOAL_NOT_REACHED) abort();
        if (!(gr[g].stretch >= 1) || gr[g].stretch > p->stretch * (1 + 1e-12)) abort();
        /* reached means within the tolerances (softened and stretched goals
         * are met where they are aimed, not at the target) */
        if (gr[g].status == IKD_GOAL_REACHED && p->soften >= 1 && p->stretch <= 1 &&
            (gr[g].error > p->tolerance || gr[g].rotation_error_deg > p->rotation_tolerance_deg))
            abort();
        all &= gr[g].status == IKD_GOAL_REACHED;
    }
    if (res->status != (all ? IKD_MULTI_REACHED : IKD_MULTI_PARTIAL)) abort(); /* no deadline here */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static double work[1 << 15]; /* ikd_multi_workspace_size(MAX_N, MAX_N): 168,344 bytes */
    static _Alignas(double) unsigned char mem[IKD_MOTION_MEMORY(MAX_N)];
    static ikd_skeleton_joint j[MAX_N];
    static ikd_goal goals[MAX_N];
    static ikd_quat start[MAX_N], local[MAX_N];
    static ikd_pose_joint pose[MAX_N];
    static ikd_goal_result gr[MAX_N];
    reader r = {data, size};
    size_t n = 1 + byte(&r) % MAX_N;
    for (size_t i = 0; i < n; i++) {
        memset(&j[i], 0, sizeof j[i]);
        uint8_t b = byte(&r);
        j[i].parent = b < 200 ? (i ? (long)(b % i) : -1) : (long)(b % (i + 2)) - 1; /* at times a bad parent */
        j[i].position = vec(&r);
        j[i].rotation = (byte(&r) & 1) ? ikd_quat_make(num(&r), num(&r), num(&r), num(&r)) : ikd_quat_identity();
        limit(&r, &j[i].limit);
    }
    ikd_skeleton s = {j, n, 0};
    ikd_error err;
    if (ikd_skeleton_validate(&s, &err) != IKD_E_OK) {
        refused(&err);
        return 0;
    }
    size_t ng = 1 + byte(&r) % n;
    for (size_t g = 0; g < ng; g++) goal(&r, n, &goals[g]);
    ikd_multi_problem p;
    ikd_multi_init(&p);
    p.skeleton = &s;
    p.goal_count = ng;
    uint8_t f = byte(&r);
    p.root_free = f & 1;
    p.root = (f & 2) ? vec(&r) : j[0].position;
    if (f & 4) p.up = vec(&r);
    if (f & 8) {
        for (size_t i = 0; i < n; i++) start[i] = ikd_quat_norm(ikd_quat_make(num(&r), num(&r), num(&r), num(&r)));
        p.start = start;
    }
    p.max_iterations = 1 + byte(&r) % 200;
    if (f & 16) p.tolerance = fabs(num(&r)) / 100, p.rotation_tolerance_deg = byte(&r) % 10;
    if (f & 32) p.rest_pull = (byte(&r) % 5) / 4.0, p.damping = fabs(num(&r));
    if (f & 64) p.soften = byte(&r) / 255.0, p.stretch = 1 + byte(&r) / 64.0;
    if (f & 128) p.pull_max_deg = byte(&r) % 90;
    if (ikd_multi_validate(&p, goals, &err) != IKD_E_OK) {
        refused(&err);
        return 0;
    }
    if (ikd_multi_workspace_size(n, ng) > sizeof work) abort();
    ikd_multi_result res;
    if (ikd_multi_solve(&p, work, sizeof work, local, pose, gr, &res, &err) != IKD_E_OK) abort();
    check(&p, local, pose, gr, &res);
    /* two more frames of a clip toward the same goals, each from the last */
    ikd_motion m;
    if (ikd_motion_memory_size(n) > sizeof mem) abort();
    ikd_motion_init(&m, &s, local, res.root, mem);
    for (int k = 0; k < 2; k++) {
        ikd_motion_push(&m, local, res.root);
        ikd_motion_frame(&m, &p);
        if (ikd_multi_solve(&p, work, sizeof work, local, pose, gr, &res, &err) != IKD_E_OK) abort();
        check(&p, local, pose, gr, &res);
    }
    return 0;
}
