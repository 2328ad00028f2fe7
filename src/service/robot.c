/* robot.c - a URDF robot as a skeleton: one joint per URDF joint at its frame's origin, hinges with the file's limits. */
#include "robot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "reply.h"
#include "wire.h"

/* The tree as ikd lists it: the root link, then the URDF joints depth first. */
typedef struct robot_tree {
    size_t *order;       /* URDF joint indices, depth first */
    long *parent;        /* per URDF joint: its ikd parent (0 = the root link's joint) */
    size_t count;
    const char *root;    /* the root link's name */
    ikd_vec3 *pos;       /* per ikd joint: world position, rotation */
    ikd_quat *rot;
} robot_tree;

static int robot_error(ikd_error *err, const char *field, const char *fmt, const char *arg)
{
    return ikd_error_set(err, IKD_E_INVALID, field, fmt, arg ? arg : "");
}

static int child_of_joint(const ikd_urdf *u, const char *link)
{
    for (size_t i = 0; i < u->joint_count; i++)
        if (strcmp(u->joints[i].child, link) == 0) return 1;
    return 0;
}

/* The root link: the one link no joint has as its child. */
static int find_root(const ikd_urdf *u, const char **root, ikd_error *err)
{
    char field[IKD_URDF_NAME_MAX + 32];
    *root = NULL;
    for (size_t i = 0; i < u->joint_count; i++) { /* every joint names its links; a link is a child once */
        const ikd_urdf_joint *j = &u->joints[i];
        snprintf(field, sizeof field, "robot.joint[%s]", j->name);
        if (!j->parent[0]) return robot_error(err, field, "needs <parent link=...>%s", NULL);
        if (!j->child[0]) return robot_error(err, field, "needs <child link=...>%s", NULL);
        for (size_t k = 0; k < i; k++)
            if (strcmp(u->joints[k].child, j->child) == 0) {
                snprintf(field, sizeof field, "robot.joint[%s].child", j->name);
                return robot_error(err, field, "link %s is the child of two joints (a URDF is a tree)", j->child);
            }
    }
    size_t roots = 0;
    for (size_t i = 0; i < u->link_count; i++)
        if (!child_of_joint(u, u->links[i])) roots++, *root = *root ? *root : u->links[i];
    for (size_t i = 0; i < u->joint_count && u->link_count == 0; i++) /* no <link> elements: the joints' links */
        if (!child_of_joint(u, u->joints[i].parent)) roots++, *root = *root ? *root : u->joints[i].parent;
    if (!*root) return robot_error(err, "robot", "no link is the tree's root: the joints form a cycle%s", NULL);
    if (roots > 1 && u->link_count)
        return robot_error(err, "robot", "more than one link is no joint's child (a URDF is one tree; the first is %s)", *root);
    return IKD_E_OK;
}

/* R = Rz(yaw) Ry(pitch) Rx(roll): URDF's fixed-axis roll, pitch, yaw. */
static ikd_quat rpy_quat(ikd_vec3 rpy)
{
    ikd_quat qx = ikd_quat_axis_angle(ikd_vec3_make(1, 0, 0), rpy.x);
    ikd_quat qy = ikd_quat_axis_angle(ikd_vec3_make(0, 1, 0), rpy.y);
    ikd_quat qz = ikd_quat_axis_angle(ikd_vec3_make(0, 0, 1), rpy.z);
    return ikd_quat_norm(ikd_quat_mul(qz, ikd_quat_mul(qy, qx)));
}

/* Depth first from the root link: each joint's ikd parent and world frame. */
static int build_tree(const ikd_urdf *u, robot_tree *t, ikd_error *err)
{
    size_t n = u->joint_count;
    t->order = malloc((n ? n : 1) * sizeof *t->order);
    t->parent = malloc((n ? n : 1) * sizeof *t->parent);
    t->pos = malloc((n + 1) * sizeof *t->pos);
    t->rot = malloc((n + 1) * sizeof *t->rot);
    size_t *stack = malloc((n + 1) * sizeof *stack); /* ikd indices whose children are still to list */
    if (!t->order || !t->parent || !t->pos || !t->rot || !stack) {
        free(stack);
        return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory");
    }
    t->pos[0] = ikd_vec3_make(0, 0, 0);
    t->rot[0] = ikd_quat_identity();
    t->count = 0;
    size_t top = 0;
    stack[top++] = 0;
    while (top) {
        size_t at = stack[--top];
        const char *link = at == 0 ? t->root : u->joints[t->order[at - 1]].child;
        size_t first = t->count;
        for (size_t i = 0; i < n; i++) {
            const ikd_urdf_joint *j = &u->joints[i];
            if (strcmp(j->parent, link) != 0) continue;
            size_t k = ++t->count; /* its ikd index */
            t->order[k - 1] = i;
            t->parent[i] = (long)at;
            ikd_quat r = t->rot[at];
            t->pos[k] = ikd_vec3_add(t->pos[at], ikd_quat_rotate(r, j->xyz));
            t->rot[k] = ikd_quat_norm(ikd_quat_mul(r, rpy_quat(j->rpy)));
        }
        for (size_t k = t->count; k > first; k--) stack[top++] = k; /* the first child is listed first */
    }
    free(stack);
    if (t->count < n) { /* joints hanging from links the root does not reach */
        for (size_t i = 0; i < n; i++) {
            size_t k = 0;
            while (k < t->count && t->order[k] != i) k++;
            if (k == t->count) {
                char field[IKD_URDF_NAME_MAX + 32];
                snprintf(field, sizeof field, "robot.joint[%s].parent", u->joints[i].name);
                return robot_error(err, field, "link %s is not reached from the root link", u->joints[i].parent);
            }
        }
    }
    return IKD_E_OK;
}

/* A revolute joint's <limit> as its hinge's range (l->has_axis and axis
 * set already): a side left out is 0, the URDF spec's default and
 * urdfdom's (warning limit_missing); neither, unlimited (a joint locked at
 * 0 would surprise more than a free one; warning limit_missing); lower
 * above upper swapped (warning limit_swapped); lower equal to upper kept,
 * the joint locked (warning limit_empty: SolidWorks' exporter writes
 * lower="0" upper="0" where it has no limits); a whole turn or more,
 * unlimited; a range past +-180 degrees (Kinova JACO's joint 2,
 * [47, 313]; the Panda's joint 6, [-1, 215]) kept as it is, moved by whole
 * turns where its middle lies past +-180 (a hinge's range lies within
 * [-360, 360]). */
static void revolute_range(const ikd_urdf_joint *j, ikd_limit *l, ikd_urdf *warn_to)
{
    char field[IKD_URDF_NAME_MAX + 40], msg[160];
    snprintf(field, sizeof field, "robot.joint[%s].limit", j->name);
    if (!j->has_lower && !j->has_upper) {
        snprintf(msg, sizeof msg, "revolute joint %.60s has neither a lower nor an upper limit: unlimited", j->name);
        ikd_file_warn(&warn_to->warnings, "limit_missing", field, msg);
        return;
    }
    if (!j->has_lower || !j->has_upper) {
        snprintf(msg, sizeof msg, "joint %.60s has no %s limit: 0, the URDF default", j->name, j->has_lower ? "upper" : "lower");
        ikd_file_warn(&warn_to->warnings, "limit_missing", field, msg);
    }
    double lower = j->has_lower ? j->lower : 0, upper = j->has_upper ? j->upper : 0;
    if (lower > upper) { /* urdfdom keeps them so: no angle fits */
        double t = lower;
        lower = upper, upper = t;
        snprintf(msg, sizeof msg, "joint %.60s has lower above upper: swapped to [%g, %g] rad", j->name, lower, upper);
        ikd_file_warn(&warn_to->warnings, "limit_swapped", field, msg);
    }
    if (lower == upper) { /* kept (the URDF says so), but said: exporters write it for "no limits" */
        snprintf(msg, sizeof msg, "joint %.60s's range is [%g, %g] rad: it cannot move (?limits=none frees every joint)",
                 j->name, lower, upper);
        ikd_file_warn(&warn_to->warnings, "limit_empty", field, msg);
    }
    if (upper - lower >= 2 * IKD_PI) return; /* a whole turn or more: free */
    double turns = 2 * IKD_PI * round(0.5 * (lower + upper) / (2 * IKD_PI)); /* the middle within +-180 */
    l->min_deg = (lower - turns) * 180 / IKD_PI, l->max_deg = (upper - turns) * 180 / IKD_PI;
}

/* ikd joint k + 1 is URDF joint order[k] (depth first: its parent is listed
 * before it), at its frame's origin, with its limit. */
static void fill_joints(const ikd_urdf *u, const robot_tree *t, int limits, ikd_skeleton_joint *js, char **names,
                        ikd_urdf *warn_to)
{
    char field[IKD_URDF_NAME_MAX + 32], msg[160];
    js[0].parent = -1;
    js[0].position = t->pos[0];
    js[0].rotation = t->rot[0];
    /* the root link is the robot's base, bolted to the world: fixed (with
     * limits=none every joint is free, the base too) */
    ikd_limit_init(&js[0].limit, limits ? IKD_LIMIT_FIXED : IKD_LIMIT_NONE);
    names[0] = (char *)t->root;
    for (size_t k = 0; k < t->count; k++) {
        const ikd_urdf_joint *j = &u->joints[t->order[k]];
        ikd_skeleton_joint *o = &js[k + 1];
        o->parent = t->parent[t->order[k]]; /* an ikd index, listed before k + 1 */
        o->position = t->pos[k + 1];
        o->rotation = t->rot[k + 1];
        names[k + 1] = (char *)j->name;
        ikd_limit_init(&o->limit, IKD_LIMIT_NONE);
        snprintf(field, sizeof field, "robot.joint[%s]", j->name);
        if (j->mimic) {
            snprintf(msg, sizeof msg, "joint %.60s mimics another: imported as a joint of its own", j->name);
            ikd_file_warn(&warn_to->warnings, "mimic", field, msg);
        }
        if (!limits) continue;
        if (j->type == IKD_URDF_FIXED) {
            ikd_limit_init(&o->limit, IKD_LIMIT_FIXED);
        } else if (j->type == IKD_URDF_PRISMATIC || j->type == IKD_URDF_PLANAR || j->type == IKD_URDF_FLOATING) {
            ikd_limit_init(&o->limit, IKD_LIMIT_FIXED);
            snprintf(msg, sizeof msg, "joint %.60s is %s: fixed at its zero position", j->name,
                     j->type == IKD_URDF_PRISMATIC ? "prismatic" : j->type == IKD_URDF_PLANAR ? "planar" : "floating");
            ikd_file_warn(&warn_to->warnings, "joint_fixed", field, msg);
        } else {
            ikd_limit_init(&o->limit, IKD_LIMIT_HINGE);
            o->limit.has_axis = 1;
            o->limit.axis = ikd_quat_rotate(o->rotation, ikd_vec3_norm_or(j->axis, ikd_vec3_make(1, 0, 0)));
            if (j->type == IKD_URDF_REVOLUTE) revolute_range(j, &o->limit, warn_to);
        }
    }
}

int ikd_robot_reply(const ikd_api_limits *lim, ikd_urdf *u, int limits, ikd_encoding enc, ikd_buf *out, ikd_error *err)
{
    robot_tree t = {0};
    ikd_skeleton_joint *js = NULL;
    char **names = NULL;
    int rc = find_root(u, &t.root, err);
    if (rc == IKD_E_OK) rc = build_tree(u, &t, err);
    size_t n = t.count + 1;
    if (rc == IKD_E_OK && n > lim->max_joints)
        rc = ikd_error_set(err, IKD_E_TOO_LARGE, "robot", "more joints than --max-joints allows");
    if (rc == IKD_E_OK) {
        js = calloc(n, sizeof *js);
        names = calloc(n, sizeof *names);
        if (!js || !names) rc = ikd_error_set(err, IKD_E_NOMEM, "", "out of memory");
    }
    if (rc == IKD_E_OK) fill_joints(u, &t, limits, js, names, u);
    for (size_t k = 1; rc == IKD_E_OK && k < n; k++)
        if (strcmp(names[k], names[0]) == 0) names[0] = "base"; /* a joint named as the root link */
    if (rc == IKD_E_OK) {
        ikd_emitter e;
        ikd_emit_reply(&e, enc, out);
        ikd_emit_map(&e, 9);
        IKD_EMIT_KEY(&e, "format");
        ikd_emit_str(&e, "urdf");
        IKD_EMIT_KEY(&e, "name");
        ikd_emit_str(&e, u->name);
        ikd_import_skeleton(&e, lim, js, names, n, 1, 0, NULL, &u->warnings); /* no humanoid roles from URDF */
        /* "links": each link's joint (whose frame is the link's: the joint
         * it is the child of; the root link's, joint 0), for goals on a
         * link (tool0, panda_link8) */
        IKD_EMIT_KEY(&e, "links");
        ikd_emit_map(&e, n);
        ikd_emit_key(&e, t.root);
        ikd_emit_str(&e, names[0]);
        for (size_t k = 0; k < t.count; k++) {
            ikd_emit_key(&e, u->joints[t.order[k]].child);
            ikd_emit_str(&e, names[k + 1]);
        }
        ikd_emit_end(&e);
        IKD_EMIT_KEY(&e, "clips");
        ikd_emit_array(&e, 0);
        ikd_emit_end(&e);
        ikd_import_warnings(&e, &u->warnings);
        ikd_emit_end(&e);
        if (out->failed) rc = ikd_error_set(err, IKD_E_NOMEM, "", "out of memory for the import's reply");
    }
    free(js);
    free(names);
    free(t.order);
    free(t.parent);
    free(t.pos);
    free(t.rot);
    return rc;
}
