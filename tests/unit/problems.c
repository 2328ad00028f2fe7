/* problems.c - random chains and targets like robotics IK benchmarks: FK of random poses within limits. */
#include "problems.h"

const char *pset_name(pset_kind k)
{
    switch (k) {
    case PSET_FREE: return "free";
    case PSET_HINGE: return "hinge";
    case PSET_BALL: return "ball";
    }
    return "?";
}

/* A direction within `max_rad` of `parent`. */
static ikd_vec3 cone_dir(tu_rng *r, ikd_vec3 parent, double max_rad)
{
    ikd_vec3 perp = ikd_vec3_norm_or(ikd_vec3_reject(tu_unit_vec(r), parent), ikd_vec3_any_perp(parent));
    double a = tu_uniform(r, 0, max_rad);
    return ikd_vec3_add(ikd_vec3_scale(parent, cos(a)), ikd_vec3_scale(perp, sin(a)));
}

#define HINGE_LO -10.0
#define HINGE_HI 150.0
#define BALL_MAX 45.0
#define FREE_MAX 60.0

/* Directions of one pose: dirs[i] for bone i, within the set's limits
 * relative to the parent bone (root: relative to `ref`). */
static void pose_dirs(tu_rng *r, pset_kind kind, size_t nb, ikd_vec3 ref, ikd_vec3 *dirs)
{
    ikd_vec3 parent = ref;
    for (size_t i = 0; i < nb; i++) {
        if (kind == PSET_HINGE) {
            /* all axes +z; the angle from the parent direction in the xy plane */
            double a = tu_uniform(r, HINGE_LO, HINGE_HI) * IKD_DEG2RAD * (i == 0 ? 0.3 : 0.6);
            double base = atan2(parent.y, parent.x);
            dirs[i] = ikd_vec3_make(cos(base + a), sin(base + a), 0);
        } else {
            dirs[i] = cone_dir(r, parent, (kind == PSET_BALL ? BALL_MAX : FREE_MAX) * IKD_DEG2RAD);
        }
        parent = dirs[i];
    }
}

void pset_make(tu_rng *r, pset_kind kind, size_t n, int unreachable, ikd_joint *joints, ikd_vec3 *target)
{
    ikd_vec3 dirs[4096];
    double len[4096];
    size_t nb = n - 1;
    ikd_vec3 ref = kind == PSET_HINGE ? ikd_vec3_make(1, 0, 0) : tu_unit_vec(r);
    for (size_t i = 0; i < nb; i++) len[i] = tu_uniform(r, 0.5, 1.5);
    /* start pose */
    pose_dirs(r, kind, nb, ref, dirs);
    ikd_vec3 root = ikd_vec3_make(tu_uniform(r, -1, 1), tu_uniform(r, -1, 1), kind == PSET_HINGE ? 0 : tu_uniform(r, -1, 1));
    for (size_t i = 0; i < n; i++) {
        joints[i] = (ikd_joint){0};
        joints[i].rotation = ikd_quat_identity();
        joints[i].position = i == 0 ? root : ikd_vec3_mad(joints[i - 1].position, dirs[i - 1], len[i - 1]);
        if (i + 1 < n && kind == PSET_HINGE) {
            joints[i].constraint.type = IKD_CONSTRAINT_HINGE;
            joints[i].constraint.axis = ikd_vec3_make(0, 0, 1);
            joints[i].constraint.min_deg = HINGE_LO;
            joints[i].constraint.max_deg = HINGE_HI;
            if (i == 0) {
                joints[i].constraint.has_reference = 1;
                joints[i].constraint.reference = ref;
            }
        } else if (i + 1 < n && kind == PSET_BALL) {
            joints[i].constraint.type = IKD_CONSTRAINT_BALL;
            joints[i].constraint.max_deg = BALL_MAX;
            if (i == 0) {
                joints[i].constraint.has_reference = 1;
                joints[i].constraint.reference = ref;
            }
        }
    }
    double total = 0;
    for (size_t i = 0; i < nb; i++) total += len[i];
    if (unreachable) {
        ikd_vec3 u = kind == PSET_HINGE ? ikd_vec3_norm_or(ikd_vec3_make(tu_uniform(r, -1, 1), tu_uniform(r, -1, 1), 0), ref)
                                        : tu_unit_vec(r);
        *target = ikd_vec3_mad(root, u, total * tu_uniform(r, 1.05, 2.0));
        return;
    }
    /* goal pose: another pose within the limits, same bones */
    pose_dirs(r, kind, nb, ref, dirs);
    ikd_vec3 p = root;
    for (size_t i = 0; i < nb; i++) p = ikd_vec3_mad(p, dirs[i], len[i]);
    *target = p;
}
