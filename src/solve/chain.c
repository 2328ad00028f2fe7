/* chain.c - chain validation, forward kinematics and shortest-arc pose rotations. */
#include "ikd/chain.h"

#include "solvers.h"

#include <stdio.h>

#define IKD_UNIT_QUAT_SLACK 1e-3
/* What ikd_solve accepts as unit (validation leaves every unit value within
 * 4e-16 of 1). */
#define IKD_UNIT_CHECKED 1e-12

static void ikd_joint_field(char *buf, size_t size, size_t i, const char *leaf)
{
    snprintf(buf, size, "chain.joints[%zu]%s%s", i, leaf[0] ? "." : "", leaf);
}

static ikd_code ikd_joint_error(ikd_error *err, size_t i, const char *leaf, const char *msg)
{
    char field[IKD_ERROR_FIELD_MAX];
    ikd_joint_field(field, sizeof field, i, leaf);
    return ikd_error_set(err, IKD_E_INVALID, field, "%s", msg);
}

/* v / |v| computed after scaling by the largest component, so that tiny
 * vectors (1e-161, whose squared length underflows) normalise exactly.
 * 0 when v is zero or not finite. Without `fix`, v is left alone and must
 * be unit already. */
static int unit_robust(ikd_vec3 *v, int fix)
{
    if (!fix) return ikd_vec3_isfinite(*v) && fabs(ikd_vec3_len(*v) - 1.0) <= IKD_UNIT_CHECKED;
    double m = fmax(fabs(v->x), fmax(fabs(v->y), fabs(v->z)));
    if (!(m > 0.0) || !isfinite(m)) return 0;
    ikd_vec3 w = ikd_vec3_make(v->x / m, v->y / m, v->z / m); /* divide: 1/m overflows for denormal m */
    double l = ikd_vec3_len(w);
    if (fabs(l * m - 1.0) > 4e-16) *v = ikd_vec3_scale(w, 1.0 / l); /* unit input is left as it is */
    return 1;
}

static ikd_code ikd_constraint_validate(ikd_constraint *c, size_t i, size_t count, int fix, ikd_error *err)
{
    if (c->type == IKD_CONSTRAINT_NONE) {
        if (c->has_reference) return ikd_joint_error(err, i, "constraint.reference", "a reference needs a hinge or ball constraint");
        return IKD_E_OK;
    }
    if (c->type != IKD_CONSTRAINT_HINGE && c->type != IKD_CONSTRAINT_BALL)
        return ikd_joint_error(err, i, "constraint.type", "must be \"hinge\" or \"ball\"");
    if (i == count - 1)
        return ikd_joint_error(err, i, "constraint", "the effector (last joint) has no bone to constrain");
    if (c->has_reference) {
        if (i != 0) return ikd_joint_error(err, i, "constraint.reference", "only the root joint takes a reference direction");
        if (!ikd_vec3_isfinite(c->reference) || !unit_robust(&c->reference, fix))
            return ikd_joint_error(err, i, "constraint.reference", "must be a finite, non-zero direction");
    }
    if (c->type == IKD_CONSTRAINT_HINGE) {
        if (!ikd_vec3_isfinite(c->axis) || !unit_robust(&c->axis, fix))
            return ikd_joint_error(err, i, "constraint.axis", "must be a finite, non-zero direction");
        if (!isfinite(c->min_deg) || c->min_deg < -180.0 || c->min_deg > 180.0)
            return ikd_joint_error(err, i, "constraint.min_deg", "must be a number in [-180, 180]");
        if (!isfinite(c->max_deg) || c->max_deg < -180.0 || c->max_deg > 180.0)
            return ikd_joint_error(err, i, "constraint.max_deg", "must be a number in [-180, 180]");
        if (c->min_deg > c->max_deg)
            return ikd_joint_error(err, i, "constraint.min_deg", "must not be greater than max_deg");
    } else {
        if (!isfinite(c->max_deg) || c->max_deg < 0.0 || c->max_deg > 180.0)
            return ikd_joint_error(err, i, "constraint.max_deg", "must be a number in [0, 180]");
    }
    return IKD_E_OK;
}

ikd_code ikd_chain_validate(ikd_joint *joints, size_t count, size_t min_joints, ikd_error *err)
{
    return ikd__chain_check(joints, count, min_joints, 1, NULL, err);
}

/* The joint rotation rule: unit within the slack (validation normalises it)
 * or, checking only, within IKD_UNIT_CHECKED. 0 when it fails. */
static int rotation_ok(ikd_joint *j, int fix)
{
    if (!ikd_quat_isfinite(j->rotation)) return 0;
    if (!fix) { /* |q|^2 - 1 is about 2 (|q| - 1) near 1: no sqrt on the solve path */
        ikd_quat q = j->rotation;
        return fabs(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w - 1.0) <= 2 * IKD_UNIT_CHECKED;
    }
    double ql = ikd_quat_len(j->rotation);
    if (!(fabs(ql - 1.0) <= IKD_UNIT_QUAT_SLACK)) return 0;
    if (fabs(ql - 1.0) > 4e-16) j->rotation = ikd_quat_norm(j->rotation); /* idempotent on re-validation */
    return 1;
}

static double max_abs(ikd_vec3 q, double m)
{
    double a = fabs(q.x), b = fabs(q.y), c = fabs(q.z);
    if (a > m) m = a;
    if (b > m) m = b;
    return c > m ? c : m;
}

/* The first bone too short against the longest bone or against the size of
 * the coordinates (its direction would drown in rounding: a 1e-12 bone at
 * x = 1), as an error. */
static ikd_code short_bone_error(const ikd_joint *joints, size_t count, double longest, double extent, ikd_error *err)
{
    for (size_t i = 1; i < count; i++) {
        double l = ikd_vec3_dist(joints[i - 1].position, joints[i].position);
        if (!(l > IKD_MIN_BONE_RATIO * longest))
            return ikd_joint_error(err, i, "position", "coincides with the previous joint (zero-length bone)");
        if (!(l > IKD_MIN_BONE_PRECISION * extent))
            return ikd_joint_error(err, i, "position",
                                   "is too close to the previous joint for the size of the coordinates (bone below 1e-7 of them)");
    }
    return ikd_error_set(err, IKD_E_INTERNAL, "chain.joints", "inconsistent bone length check");
}

ikd_code ikd__chain_check(ikd_joint *joints, size_t count, size_t min_joints, int fix, double *length,
                          ikd_error *err)
{
    if (min_joints < 2) min_joints = 2;
    if (count < min_joints) {
        return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "needs at least %zu joints, got %zu", min_joints,
                             count);
    }
    if (count > IKD_MAX_JOINTS)
        return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "at most %d joints are allowed", IKD_MAX_JOINTS);
    /* one pass: each joint's own fields, each bone's length once */
    double longest = 0.0, shortest = INFINITY, extent = 0.0, total = 0.0;
    for (size_t i = 0; i < count; i++) {
        ikd_joint *j = &joints[i];
        if (!ikd_vec3_isfinite(j->position)) return ikd_joint_error(err, i, "position", "must be finite numbers");
        if (!rotation_ok(j, fix)) return ikd_joint_error(err, i, "rotation", "must be a unit quaternion [x, y, z, w]");
        ikd_code rc = ikd_constraint_validate(&j->constraint, i, count, fix, err);
        if (rc != IKD_E_OK) return rc;
        extent = max_abs(j->position, extent);
        if (i > 0) {
            double l = ikd_vec3_dist(joints[i - 1].position, j->position);
            if (!isfinite(l)) return ikd_joint_error(err, i, "position", "is too far from the previous joint");
            if (l > longest) longest = l;
            if (l < shortest) shortest = l;
            total += l;
        }
    }
    if (!(shortest > IKD_MIN_BONE_RATIO * longest) || !(shortest > IKD_MIN_BONE_PRECISION * extent))
        return short_bone_error(joints, count, longest, extent, err);
    if (!(total < IKD_MAX_EXTENT))
        return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "the chain is too long (bone lengths must add up to below 1e150)");
    if (!(total >= IKD_MIN_EXTENT))
        return ikd_error_set(err, IKD_E_INVALID, "chain.joints",
                             "the chain is too short (bone lengths must add up to at least 1e-150: shorter distances do not square)");
    if (length) *length = total;
    return IKD_E_OK;
}

double ikd_chain_length(const ikd_joint *joints, size_t count)
{
    double total = 0.0;
    for (size_t i = 0; i + 1 < count; i++) total += ikd_chain_bone_length(joints, i);
    return total;
}

static void ikd_chain_local_rotations(ikd_pose_joint *pose, size_t count)
{
    pose[0].local_rotation = pose[0].rotation;
    for (size_t i = 1; i < count; i++)
        pose[i].local_rotation = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(pose[i - 1].rotation), pose[i].rotation));
}

void ikd_chain_pose_rotations(const ikd_joint *joints, size_t count, const ikd_quat *effector_rotation,
                              ikd_pose_joint *pose)
{
    for (size_t i = 0; i + 1 < count; i++) {
        ikd_vec3 from = ikd_vec3_sub(joints[i + 1].position, joints[i].position);
        ikd_vec3 to = ikd_vec3_sub(pose[i + 1].position, pose[i].position);
        pose[i].rotation = ikd_quat_norm(ikd_quat_mul(ikd_quat_arc(from, to), joints[i].rotation));
    }
    pose[count - 1].rotation = effector_rotation ? *effector_rotation : joints[count - 1].rotation;
    ikd_chain_local_rotations(pose, count);
}

void ikd_chain_fk_world(const ikd_joint *joints, size_t count, const ikd_quat *world, ikd_pose_joint *pose)
{
    pose[0].position = joints[0].position;
    for (size_t i = 0; i < count; i++) {
        pose[i].rotation = ikd_quat_norm(world[i]);
        if (i + 1 < count) {
            ikd_quat delta = ikd_quat_mul(pose[i].rotation, ikd_quat_conj(joints[i].rotation));
            ikd_vec3 bone = ikd_vec3_sub(joints[i + 1].position, joints[i].position);
            pose[i + 1].position = ikd_vec3_add(pose[i].position, ikd_quat_rotate(delta, bone));
        }
    }
    ikd_chain_local_rotations(pose, count);
}

void ikd_chain_fk_local(const ikd_joint *joints, size_t count, const ikd_quat *local, ikd_quat *scratch,
                        ikd_pose_joint *pose)
{
    scratch[0] = ikd_quat_norm(local[0]);
    for (size_t i = 1; i < count; i++) scratch[i] = ikd_quat_norm(ikd_quat_mul(scratch[i - 1], local[i]));
    ikd_chain_fk_world(joints, count, scratch, pose);
}
