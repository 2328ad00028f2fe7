/* testutil.c - seeded RNG, random chains and pose invariant checks shared by the unit suites. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

void tu_seed(tu_rng *r, uint64_t seed) { r->s = seed ? seed : 0x9e3779b97f4a7c15ull; }

uint64_t tu_next(tu_rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double tu_uniform(tu_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(tu_next(r) >> 11) / 9007199254740992.0);
}

ikd_vec3 tu_unit_vec(tu_rng *r)
{
    for (;;) {
        ikd_vec3 v = ikd_vec3_make(tu_uniform(r, -1, 1), tu_uniform(r, -1, 1), tu_uniform(r, -1, 1));
        double l = ikd_vec3_len(v);
        if (l > 0.1 && l <= 1.0) return ikd_vec3_scale(v, 1.0 / l);
    }
}

ikd_quat tu_unit_quat(tu_rng *r)
{
    for (;;) {
        ikd_quat q = ikd_quat_make(tu_uniform(r, -1, 1), tu_uniform(r, -1, 1), tu_uniform(r, -1, 1),
                                   tu_uniform(r, -1, 1));
        double l = ikd_quat_len(q);
        if (l > 0.1 && l <= 1.0) return ikd_quat_norm(q);
    }
}

ikd_quat tu_small_quat(tu_rng *r, double max_rad)
{
    return ikd_quat_axis_angle(tu_unit_vec(r), tu_uniform(r, 0, max_rad));
}

void tu_random_chain(tu_rng *r, ikd_joint *joints, size_t n, double lmin, double lmax)
{
    for (size_t i = 0; i < n; i++) {
        joints[i] = (ikd_joint){0};
        joints[i].rotation = tu_unit_quat(r);
        joints[i].constraint.min_deg = -180;
        joints[i].constraint.max_deg = 180;
        if (i == 0)
            joints[i].position = ikd_vec3_make(tu_uniform(r, -5, 5), tu_uniform(r, -5, 5), tu_uniform(r, -5, 5));
        else
            joints[i].position = ikd_vec3_mad(joints[i - 1].position, tu_unit_vec(r), tu_uniform(r, lmin, lmax));
    }
}

double tu_max_length_error(const ikd_joint *joints, const ikd_pose_joint *pose, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double l0 = ikd_chain_bone_length(joints, i);
        double l1 = ikd_vec3_dist(pose[i].position, pose[i + 1].position);
        double e = fabs(l1 - l0) / l0;
        if (!(e <= worst)) worst = e; /* NaN propagates as a failure */
    }
    return worst;
}

static double quat_diff(ikd_quat a, ikd_quat b) /* distance up to sign */
{
    double d1 = ikd_quat_len(ikd_quat_make(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w));
    double d2 = ikd_quat_len(ikd_quat_make(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
    return d1 < d2 ? d1 : d2;
}

double tu_max_rotation_error(const ikd_joint *joints, const ikd_pose_joint *pose, size_t n)
{
    double worst = 0;
#define TU_WORST(e) do { double e_ = (e); if (!(e_ <= worst)) worst = e_; } while (0)
    for (size_t i = 0; i < n; i++) {
        TU_WORST(fabs(ikd_quat_len(pose[i].rotation) - 1.0));
        TU_WORST(fabs(ikd_quat_len(pose[i].local_rotation) - 1.0));
        ikd_quat parent = i ? pose[i - 1].rotation : ikd_quat_identity();
        TU_WORST(quat_diff(ikd_quat_mul(parent, pose[i].local_rotation), pose[i].rotation));
        if (i + 1 < n) {
            ikd_vec3 d0 = ikd_vec3_norm_or(ikd_vec3_sub(joints[i + 1].position, joints[i].position), ikd_vec3_make(0, 0, 0));
            ikd_vec3 d1 = ikd_vec3_norm_or(ikd_vec3_sub(pose[i + 1].position, pose[i].position), ikd_vec3_make(0, 0, 0));
            ikd_quat delta = ikd_quat_mul(pose[i].rotation, ikd_quat_conj(joints[i].rotation));
            TU_WORST(ikd_vec3_dist(ikd_quat_rotate(delta, d0), d1));
        }
    }
#undef TU_WORST
    return worst;
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len) *len = (size_t)n;
    }
    return buf;
}

const char *tu_fixtures_dir(void)
{
    const char *d = getenv("IKD_TEST_FIXTURES");
    return d && *d ? d : "tests/fixtures";
}

static ikd_vec3 tu_unit(ikd_vec3 v) { return ikd_vec3_scale(v, 1.0 / sqrt(ikd_vec3_dot(v, v))); }

double tu_limit_violation(const ikd_joint *joints, const ikd_pose_joint *pose, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        const ikd_constraint *c = &joints[i].constraint;
        if (c->type == IKD_CONSTRAINT_NONE) continue;
        ikd_vec3 dir = tu_unit(ikd_vec3_sub(pose[i + 1].position, pose[i].position));
        ikd_vec3 parent, axis = c->axis;
        if (i == 0) {
            parent = c->has_reference ? tu_unit(c->reference) : tu_unit(ikd_vec3_sub(joints[1].position, joints[0].position));
        } else {
            ikd_vec3 s0 = tu_unit(ikd_vec3_sub(joints[i].position, joints[i - 1].position));
            parent = tu_unit(ikd_vec3_sub(pose[i].position, pose[i - 1].position));
            /* carry the axis: rotation about s0 x parent by the angle between them (Rodrigues) */
            ikd_vec3 k = ikd_vec3_cross(s0, parent);
            double sn = sqrt(ikd_vec3_dot(k, k)), cs = ikd_vec3_dot(s0, parent);
            if (sn > 1e-15) {
                k = ikd_vec3_scale(k, 1.0 / sn);
                axis = ikd_vec3_add(ikd_vec3_add(ikd_vec3_scale(axis, cs), ikd_vec3_scale(ikd_vec3_cross(k, axis), sn)),
                                    ikd_vec3_scale(k, ikd_vec3_dot(k, axis) * (1 - cs)));
            } else if (cs < 0) {
                continue; /* a half turn: the carried axis is a convention; not judged here */
            }
        }
        double v = 0;
        if (c->type == IKD_CONSTRAINT_BALL) {
            double d = ikd_vec3_dot(parent, dir);
            double ang = acos(d > 1 ? 1 : (d < -1 ? -1 : d));
            v = ang - c->max_deg * IKD_DEG2RAD;
        } else {
            axis = tu_unit(axis);
            v = fabs(ikd_vec3_dot(dir, axis)); /* out of the hinge plane */
            ikd_vec3 z = ikd_vec3_sub(parent, ikd_vec3_scale(axis, ikd_vec3_dot(parent, axis)));
            if (ikd_vec3_dot(z, z) > 1e-18) {
                z = tu_unit(z);
                double a = atan2(ikd_vec3_dot(ikd_vec3_cross(z, dir), axis), ikd_vec3_dot(z, dir));
                double lo = c->min_deg * IKD_DEG2RAD, hi = c->max_deg * IKD_DEG2RAD;
                if (a < lo) v += lo - a;
                if (a > hi) v += a - hi;
            }
        }
        if (!(v <= worst)) worst = v;
    }
    return worst;
}
