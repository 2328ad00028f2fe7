/* fuzz_solvers.c - libFuzzer harness over the solver library with fuzzed chains, constraints and options.
 *
 * The bytes become a chain (2 to 12 joints; coordinates from raw doubles, so
 * NaN, Infinity, 1e300 and denormals all occur), constraints, a target, a pole
 * and options. Whatever ikd_validate accepts must solve to a finite pose with
 * the root in place, unit quaternions and no limit violated, without
 * allocating or crashing, and every bone keeps its length. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ikd/constraint.h"
#include "ikd/ikd.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static double work[16 * 64];
    reader r = {data, size};
    ikd_joint j[12];
    ikd_pose_joint pose[12];
    size_t n = 2 + byte(&r) % 11;
    for (size_t i = 0; i < n; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].position = ikd_vec3_make(num(&r), num(&r), num(&r));
        j[i].rotation = (byte(&r) & 1) ? ikd_quat_make(num(&r), num(&r), num(&r), num(&r)) : ikd_quat_identity();
        uint8_t c = byte(&r) % 4;
        j[i].constraint.type = c == 1 ? IKD_CONSTRAINT_HINGE : c == 2 ? IKD_CONSTRAINT_BALL : IKD_CONSTRAINT_NONE;
        j[i].constraint.axis = ikd_vec3_make(num(&r), num(&r), num(&r));
        j[i].constraint.min_deg = num(&r) * 20;
        j[i].constraint.max_deg = num(&r) * 20;
        if (byte(&r) & 1) {
            j[i].constraint.has_reference = 1;
            j[i].constraint.reference = ikd_vec3_make(num(&r), num(&r), num(&r));
        }
    }
    ikd_problem p;
    ikd_problem_init(&p);
    p.solver = (ikd_solver)(byte(&r) % IKD_SOLVER__COUNT);
    p.joints = j;
    p.joint_count = n;
    p.target = ikd_vec3_make(num(&r), num(&r), num(&r));
    if (byte(&r) & 1) {
        p.has_pole = 1;
        p.pole = ikd_vec3_make(num(&r), num(&r), num(&r));
    }
    if (byte(&r) & 1) {
        p.has_target_rotation = 1;
        p.target_rotation = ikd_quat_make(num(&r), num(&r), num(&r), num(&r));
    }
    p.options.max_iterations = 1 + byte(&r) % 64;
    p.options.tolerance = fabs(num(&r)) / 100;
    p.options.max_step_deg = 1 + byte(&r) % 180;
    p.options.damping = fabs(num(&r));
    p.options.jacobian_method = byte(&r) & 1;
    ikd_error err;
    if (ikd_validate(&p, &err) != IKD_E_OK) {
        if (err.code != IKD_E_INVALID || !err.message[0]) abort(); /* refused clearly */
        return 0;
    }
    ikd_result res;
    if (ikd_solve(&p, work, sizeof work, pose, &res, &err) != IKD_E_OK) abort();
    if (memcmp(&pose[0].position, &j[0].position, sizeof pose[0].position) != 0) abort(); /* root fixed */
    for (size_t i = 0; i < n; i++) {
        if (!ikd_vec3_isfinite(pose[i].position) || !ikd_quat_isfinite(pose[i].rotation) ||
            !ikd_quat_isfinite(pose[i].local_rotation))
            abort();
        if (fabs(ikd_quat_len(pose[i].rotation) - 1) > 1e-9) abort();
    }
    if (!isfinite(res.error) || res.error < 0) abort();
    /* rigid bones, relative to the chain's length and its coordinates' size */
    double total = 0, extent = 0;
    for (size_t i = 0; i < n; i++) {
        extent = fmax(extent, ikd_vec3_len(j[i].position));
        if (i) total += ikd_vec3_dist(j[i - 1].position, j[i].position);
    }
    for (size_t i = 1; i < n; i++) {
        double want = ikd_vec3_dist(j[i - 1].position, j[i].position), have = ikd_vec3_dist(pose[i - 1].position, pose[i].position);
        if (fabs(have - want) > 1e-9 * (total + extent)) abort();
    }
    if (ikd_chain_max_violation(j, n, pose) > 1e-6) abort();
    return 0;
}
