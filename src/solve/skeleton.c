/* skeleton.c - the skeleton model: validation (with field paths), derived offsets and rest rotations, forward kinematics, a motion's predicted next pose. */
#include "ikd/skeleton.h"

#include "bone.h"
#include "fk.h"
#include "limit.h"

#include <float.h>
#include <stdio.h>


static ikd_code joint_error(ikd_error *err, size_t i, const char *leaf, const char *fmt, double a, double b)
{
    char field[IKD_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "skeleton.joints[%zu]%s%s", i, leaf[0] ? "." : "", leaf);
    return ikd_error_set(err, IKD_E_INVALID, field, fmt, a, b);
}

static int in_range(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

/* 1 when *q is a unit quaternion within 1e-3, then normalised unless unit
 * to rounding already: a skeleton validated and written out (an import's
 * reply) comes back with the same bits, so registering it gives the
 * import's id (normalising a unit quaternion again can move its last bit). */
static int unit_quat(ikd_quat *q)
{
    double ql = ikd_quat_len(*q);
    if (!ikd_quat_isfinite(*q) || !(fabs(ql - 1) <= 1e-3)) return 0;
    if (fabs(ql - 1) > 4 * DBL_EPSILON) *q = ikd_quat_norm(*q);
    return 1;
}

/* The limit's own numbers (the axis needs the skeleton: see resolve_axis). */
static ikd_code check_limit(ikd_limit *l, size_t i, ikd_error *err)
{
    switch (l->type) {
    case IKD_LIMIT_NONE:
    case IKD_LIMIT_FIXED: return IKD_E_OK;
    case IKD_LIMIT_HINGE:
        if (!l->has_axis) return joint_error(err, i, "constraint.axis", "is required for a hinge", 0, 0);
        if (!in_range(l->min_deg, -360, 360))
            return joint_error(err, i, "constraint.min_deg", "must be a number in [-360, 360]", 0, 0);
        if (!in_range(l->max_deg, -360, 360))
            return joint_error(err, i, "constraint.max_deg", "must be a number in [-360, 360]", 0, 0);
        if (l->min_deg > l->max_deg)
            return joint_error(err, i, "constraint.min_deg", "must not be greater than max_deg", 0, 0);
        if (l->max_deg - l->min_deg > 360)
            return joint_error(err, i, "constraint.max_deg", "must be at most 360 above min_deg (a whole turn)", 0, 0);
        return IKD_E_OK;
    case IKD_LIMIT_BALL:
        if (!in_range(l->max_deg, 0, 180))
            return joint_error(err, i, "constraint.max_deg", "must be a number in [0, 180]", 0, 0);
        if (!in_range(l->twist_min_deg, -180, 180))
            return joint_error(err, i, "constraint.twist_min_deg", "must be a number in [-180, 180]", 0, 0);
        if (!in_range(l->twist_max_deg, -180, 180))
            return joint_error(err, i, "constraint.twist_max_deg", "must be a number in [-180, 180]", 0, 0);
        if (l->twist_min_deg > l->twist_max_deg)
            return joint_error(err, i, "constraint.twist_min_deg", "must not be greater than twist_max_deg", 0, 0);
        return IKD_E_OK;
    case IKD_LIMIT_EULER:
        if ((int)l->order < 0 || (int)l->order > IKD_EULER_ZYX)
            return joint_error(err, i, "constraint.order", "must be xyz, xzy, yxz, yzx, zxy or zyx", 0, 0);
        for (int k = 0; k < 3; k++) {
            double lo = k == 1 ? -90 : -180, hi = k == 1 ? 90 : 180;
            int open = k == 1; /* the middle angle's range lies inside (-90, 90) */
            if (!in_range(l->euler_min_deg[k], lo, hi) || (open && l->euler_min_deg[k] <= lo))
                return joint_error(err, i, "constraint.min_deg",
                                   open ? "the middle angle's bounds must lie inside (-90, 90)"
                                        : "must be numbers in [-180, 180]",
                                   0, 0);
            if (!in_range(l->euler_max_deg[k], lo, hi) || (open && l->euler_max_deg[k] >= hi))
                return joint_error(err, i, "constraint.max_deg",
                                   open ? "the middle angle's bounds must lie inside (-90, 90)"
                                        : "must be numbers in [-180, 180]",
                                   0, 0);
            if (l->euler_min_deg[k] > l->euler_max_deg[k])
                return joint_error(err, i, "constraint.min_deg", "each min must not be greater than its max", 0, 0);
            if (l->has_neutral && !(l->euler_neutral_deg[k] >= l->euler_min_deg[k] && l->euler_neutral_deg[k] <= l->euler_max_deg[k]))
                return joint_error(err, i, "constraint.neutral_deg", "each angle must lie within its range (min_deg to max_deg)", 0, 0);
        }
        if (l->has_frame && !unit_quat(&l->frame))
            return joint_error(err, i, "constraint.frame", "must be a unit quaternion [x, y, z, w]", 0, 0);
        return IKD_E_OK;
    default: return joint_error(err, i, "constraint.type", "must be none, fixed, hinge, ball or euler", 0, 0);
    }
}

/* The limit's axis in the joint's rest frame: the given world axis, or for
 * a ball the rest direction to the first child; an euler box's frame there. */
static ikd_code resolve_axis(ikd_skeleton *s, size_t i, ikd_error *err)
{
    ikd_skeleton_joint *j = &s->joints[i];
    ikd_limit *l = &j->limit;
    l->local_frame = ikd_quat_identity();
    if (l->type == IKD_LIMIT_EULER && l->has_frame) /* an euler box's axes in the joint's rest frame */
        l->local_frame = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(j->rotation), l->frame));
    if (l->type != IKD_LIMIT_HINGE && l->type != IKD_LIMIT_BALL) return IKD_E_OK;
    ikd_vec3 w = l->axis;
    if (!l->has_axis) {
        if (j->first_child < 0)
            return joint_error(err, i, "constraint.axis", "is required for a ball joint without children", 0, 0);
        w = ikd_vec3_sub(s->joints[j->first_child].position, j->position);
        if (!ikd__unit_dir(&w))
            return joint_error(err, i, "constraint.axis", "is required: the first child sits on the joint", 0, 0);
    } else if (!ikd__unit_dir(&w)) {
        return joint_error(err, i, "constraint.axis", "must be a finite, non-zero direction", 0, 0);
    } else if (fabs(ikd_vec3_len(l->axis) - 1) > 4 * DBL_EPSILON) {
        l->axis = w; /* normalised unless unit to rounding already (as a joint's rotation) */
    }
    l->local_axis = ikd_vec3_norm_or(ikd_quat_rotate(ikd_quat_conj(j->rotation), w), ikd_vec3_make(1, 0, 0));
    return IKD_E_OK;
}

/* Where the rest pull takes joint j (rest_local set): rest_local itself,
 * to the bit, where its limit's neutral is rest (a start of "rest" is then
 * the rest pose exactly), else rest_local turned to it. */
static ikd_quat neutral_of(const ikd_skeleton_joint *j)
{
    ikd_quat d = ikd__limit_neutral(&j->limit);
    return d.w == 1 ? j->rest_local : ikd_quat_norm(ikd_quat_mul(j->rest_local, d));
}

ikd_code ikd_skeleton_validate(ikd_skeleton *s, ikd_error *err)
{
    ikd_error_clear(err);
    if (!s->joints || s->count < 1)
        return ikd_error_set(err, IKD_E_INVALID, "skeleton.joints", "needs at least 1 joint");
    if (s->count > IKD_MAX_JOINTS)
        return ikd_error_set(err, IKD_E_INVALID, "skeleton.joints", "at most %d joints are allowed", IKD_MAX_JOINTS);
    double extent = 0;
    for (size_t i = 0; i < s->count; i++) {
        ikd_skeleton_joint *j = &s->joints[i];
        j->first_child = -1;
        if (i == 0 && j->parent != -1)
            return joint_error(err, 0, "parent", "the first joint is the root and has no parent", 0, 0);
        if (i > 0 && (j->parent < 0 || (size_t)j->parent >= i))
            return joint_error(err, i, "parent",
                               j->parent < 0 ? "only the first joint is a root: name a joint listed earlier"
                                             : "must name a joint listed earlier",
                               0, 0);
        if (!ikd_vec3_isfinite(j->position)) return joint_error(err, i, "position", "must be finite numbers", 0, 0);
        if (!unit_quat(&j->rotation)) return joint_error(err, i, "rotation", "must be a unit quaternion [x, y, z, w]", 0, 0);
        ikd_code rc = check_limit(&j->limit, i, err);
        if (rc) return rc;
        extent = fmax(extent, fmax(fabs(j->position.x), fmax(fabs(j->position.y), fabs(j->position.z))));
    }
    if (!(extent < IKD_MAX_EXTENT))
        return ikd_error_set(err, IKD_E_INVALID, "skeleton.joints", "coordinates must stay below 1e150");
    for (size_t i = s->count; i-- > 1;) s->joints[s->joints[i].parent].first_child = (long)i;
    s->size = 0;
    for (size_t i = 0; i < s->count; i++) {
        ikd_skeleton_joint *j = &s->joints[i];
        ikd_code rc = resolve_axis(s, i, err);
        if (rc) return rc;
        ikd__limit_bounds(&j->limit, j->limit.bounds);
        if (i == 0) {
            j->offset = ikd_vec3_make(0, 0, 0);
            j->rest_local = j->rotation;
            j->neutral_local = neutral_of(j);
            continue;
        }
        const ikd_skeleton_joint *p = &s->joints[j->parent];
        ikd_quat pinv = ikd_quat_conj(p->rotation);
        j->offset = ikd_quat_rotate(pinv, ikd_vec3_sub(j->position, p->position));
        j->rest_local = ikd_quat_norm(ikd_quat_mul(pinv, j->rotation));
        j->neutral_local = neutral_of(j);
    }
    /* the skeleton's size: the longest path from the root through the bones */
    for (size_t i = 1; i < s->count; i++) {
        double len = 0;
        for (long k = (long)i; k > 0; k = s->joints[k].parent) len += ikd_vec3_len(s->joints[k].offset);
        if (len > s->size) s->size = len;
    }
    if (s->size > 0 && s->size < IKD_MIN_EXTENT)
        return ikd_error_set(err, IKD_E_INVALID, "skeleton.joints",
                             "the bones must reach at least 1e-150 from the root (shorter distances do not square)");
    if (s->size == 0) s->size = 1; /* a single joint, or all at one point: a unit scale */
    return IKD_E_OK;
}

void ikd_skeleton_rest_pose(const ikd_skeleton *s, ikd_quat *local)
{
    for (size_t i = 0; i < s->count; i++) local[i] = s->joints[i].rest_local;
}

void ikd_skeleton_neutral_pose(const ikd_skeleton *s, ikd_quat *local)
{
    for (size_t k = 0; k < s->count; k++) local[k] = s->joints[k].neutral_local;
}

void ikd_skeleton_predict(const ikd_skeleton *s, const ikd_quat *before, const ikd_quat *last, ikd_vec3 root_before,
                          ikd_vec3 root_last, double max_deg, ikd_quat *out, ikd_vec3 *root_out)
{
    double cap = max_deg * IKD_DEG2RAD;
    for (size_t i = 0; i < s->count; i++) {
        ikd_quat d = ikd_quat_mul(last[i], ikd_quat_conj(before[i])); /* the last frame's turn, on the left */
        if (d.w < 0) d = ikd_quat_make(-d.x, -d.y, -d.z, -d.w);
        ikd_vec3 v = ikd_vec3_make(d.x, d.y, d.z);
        double sv = ikd_vec3_len(v), angle = 2 * atan2(sv, d.w);
        if (!(sv > 0)) {
            out[i] = last[i];
            continue;
        }
        if (angle > cap) d = ikd_quat_axis_angle(ikd_vec3_scale(v, 1 / sv), cap);
        out[i] = ikd_quat_norm(ikd_quat_mul(d, last[i]));
    }
    ikd_vec3 step = ikd_vec3_sub(root_last, root_before);
    double len = ikd_vec3_len(step), most = cap * s->size;
    if (len > most) step = ikd_vec3_scale(step, most / len);
    *root_out = ikd_vec3_add(root_last, step);
}

void ikd__skeleton_fk_some(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *local, ikd_pose_joint *out,
                           const int *need, int others)
{
    if (!others) {
        out[0].position = root;
        out[0].rotation = local[0];
        out[0].local_rotation = local[0];
    }
    for (size_t i = 1; i < s->count; i++) {
        if (need && (need[i] != 0) == others) continue;
        const ikd_pose_joint *p = &out[s->joints[i].parent];
        out[i].position = ikd_vec3_add(p->position, ikd_quat_rotate(p->rotation, s->joints[i].offset));
        /* |q|^2 = |parent|^2 |local|^2: formed beside the product, not
         * after it (the chain down the skeleton waits on the product only) */
        ikd_quat q = ikd_quat_mul(p->rotation, local[i]);
        double n2 = ikd_quat_dot(p->rotation, p->rotation) * ikd_quat_dot(local[i], local[i]), f = 1.5 - 0.5 * n2;
        out[i].rotation = fabs(n2 - 1) < 1e-8 ? ikd_quat_make(q.x * f, q.y * f, q.z * f, q.w * f) : ikd_quat_norm(q);
        out[i].local_rotation = local[i];
    }
}

void ikd_skeleton_fk(const ikd_skeleton *s, ikd_vec3 root, const ikd_quat *local, ikd_pose_joint *out)
{
    ikd__skeleton_fk_some(s, root, local, out, NULL, 0);
}

double ikd_skeleton_max_violation(const ikd_skeleton *s, const ikd_quat *local)
{
    double worst = 0;
    for (size_t i = 0; i < s->count; i++) {
        const ikd_skeleton_joint *j = &s->joints[i];
        ikd_quat d = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(j->rest_local), local[i]));
        double v = ikd_limit_violation(&j->limit, d);
        if (!(v <= worst)) worst = v;
    }
    return worst;
}
