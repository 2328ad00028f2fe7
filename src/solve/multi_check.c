/* multi_check.c - the skeleton solver's options, goal statuses and validation (ikd_multi_init, ikd_multi_validate). */
#include <stdio.h>
#include <string.h>

#include "bone.h"
#include "multi.h"

static const char *const goal_names[] = {"reached", "unreachable", "not_reached"};
static const char *const multi_names[] = {"reached", "partial", "deadline"};

const char *ikd_goal_status_name(ikd_goal_status s) { return (unsigned)s < 3 ? goal_names[s] : "not_reached"; }
const char *ikd_multi_status_name(ikd_multi_status s) { return (unsigned)s < 3 ? multi_names[s] : "partial"; }

void ikd_goal_init(ikd_goal *g, size_t joint)
{
    memset(g, 0, sizeof *g);
    g->joint = joint;
    g->rotation = ikd_quat_identity();
    g->weight = 1;
}

static const char *const stiffness_names[] = {"equal", "range", NULL};

/* The skeleton solver's options: defaults (ikd_multi_init), bounds
 * (ikd_multi_validate), names (the request decoder) and GET /v1/solvers. */
static const ikd_option_info multi_options[] = {
    {"max_iterations", IKD_OPT_INT, offsetof(ikd_multi_problem, max_iterations), 1000, 1, IKD_MAX_ITERATIONS_LIMIT, 0, 0,
     NULL, 0, "most iterations (one damped least-squares step over every goal each); capped by --max-iterations"},
    {"tolerance", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, tolerance), 1e-4, 0, 1e300, 0, 0, NULL, 0,
     "position error counted as met, skeleton units"},
    {"rotation_tolerance_deg", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, rotation_tolerance_deg), 0.1, 0, 180, 0, 0,
     NULL, 0, "rotation and aim error counted as met, degrees"},
    {"rest_pull", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, rest_pull), 0.1, 0, 1, 0, 0, NULL, 0,
     "how strongly the joints the goals leave free turn back toward the rest pose; 0 = they stay where they start"},
    {"damping", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, damping), 0.25, 0, 100, 0, 0, NULL, 0,
     "damping of each least-squares step, times the goals' error (higher: shorter, steadier steps)"},
    {"soften", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, soften), 1, 0, 1, 1, 0, NULL, 0,
     "soft IK for two-bone limbs: a position goal on a limb's end beyond soften x its reach is eased in "
     "(no knee pop or jitter near full extension); 1 = off"},
    {"stretch", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, stretch), 1, 1, 100, 0, 0, NULL, 0,
     "two-bone limbs: a position goal on a limb's end that the solve leaves beyond the limb's reach is met by "
     "lengthening both bones alike, up to this factor (lengths change, by request); 1 = off"},
    {"pull_max_deg", IKD_OPT_NUMBER, offsetof(ikd_multi_problem, pull_max_deg), 0, 0, 180, 0, 0, NULL, 0,
     "the most degrees the rest pull turns any joint in one solve; once spent the goals are met without it "
     "and the solve stops (a clip's frames: a jump of the pull's pose spread over frames); when set, a restart "
     "replaces the first descent only if it meets every reachable goal; 0 = no bound"},
    {"stiffness", IKD_OPT_ENUM, offsetof(ikd_multi_problem, stiffness), IKD_STIFFNESS_EQUAL, 0, 1, 0, 0, stiffness_names, 0,
     "how each joint's turns are weighed: equal (every radian alike) or range (in inverse proportion to the square "
     "of the joint's range, so joints with narrow limits move least: motion capture tracked with limits derived "
     "from the recording)"},
};

_Static_assert(sizeof multi_options / sizeof multi_options[0] == IKD_MULTI_OPTION_COUNT,
               "IKD_MULTI_OPTION_COUNT is the options table's length");

const ikd_option_info *ikd_multi_options_table(size_t *count)
{
    *count = sizeof multi_options / sizeof multi_options[0];
    return multi_options;
}

void ikd_multi_init(ikd_multi_problem *p)
{
    memset(p, 0, sizeof *p);
    p->up = ikd_vec3_make(0, 1, 0);
    for (size_t i = 0; i < sizeof multi_options / sizeof multi_options[0]; i++) {
        const ikd_option_info *o = &multi_options[i];
        char *field = (char *)p + o->offset;
        if (o->type == IKD_OPT_NUMBER) *(double *)field = o->def;
        else *(int *)field = (int)o->def;
    }
}

static ikd_code goal_error(ikd_error *err, size_t g, const char *leaf, const char *msg)
{
    char field[IKD_ERROR_FIELD_MAX];
    snprintf(field, sizeof field, "goals[%zu]%s%s", g, leaf[0] ? "." : "", leaf);
    return ikd_error_set(err, IKD_E_INVALID, field, "%s", msg);
}

/* Finite, and every coordinate below IKD_MAX_EXTENT in size (as the
 * skeleton's joints are: squared distances stay finite). */
static int within_extent(ikd_vec3 v)
{
    return fabs(v.x) < IKD_MAX_EXTENT && fabs(v.y) < IKD_MAX_EXTENT && fabs(v.z) < IKD_MAX_EXTENT;
}

static ikd_code check_goal(const ikd_multi_problem *p, ikd_goal *g, size_t i, ikd_error *err)
{
    if (g->joint >= p->skeleton->count) return goal_error(err, i, "joint", "names no joint of the skeleton");
    if (!g->has_position && !g->has_rotation && !g->has_aim && !g->has_ground)
        return goal_error(err, i, "", "needs position, rotation, aim or ground");
    if (g->has_ground && (g->has_position || g->has_rotation))
        return goal_error(err, i, "ground", "sets position and rotation itself: give ground alone");
    if (g->has_aim && (g->has_rotation || g->has_ground)) /* a full rotation already points every axis */
        return goal_error(err, i, "aim", g->has_ground ? "with ground (which sets the rotation): give one of them"
                                                        : "with rotation (which points the axis too): give one of them");
    if (g->has_position && !within_extent(g->position))
        return goal_error(err, i, "position", "must be finite numbers below 1e150");
    if (g->has_rotation) {
        double ql = ikd_quat_len(g->rotation);
        if (!ikd_quat_isfinite(g->rotation) || !(fabs(ql - 1) <= 1e-3))
            return goal_error(err, i, "rotation", "must be a unit quaternion [x, y, z, w]");
        g->rotation = ikd_quat_norm(g->rotation);
    }
    if (g->has_aim) {
        if (!ikd__unit_dir(&g->aim_axis)) return goal_error(err, i, "aim.axis", "must be a finite, non-zero direction");
        if (!within_extent(g->aim_at)) return goal_error(err, i, "aim.at", "must be finite numbers below 1e150");
    }
    if (g->has_ground) {
        if (!within_extent(g->ground_point))
            return goal_error(err, i, "ground.point", "must be finite numbers below 1e150");
        if (!ikd__unit_dir(&g->ground_normal))
            return goal_error(err, i, "ground.normal", "must be a finite, non-zero direction");
        if (g->has_ground_height && !(fabs(g->ground_height) < IKD_MAX_EXTENT))
            return goal_error(err, i, "ground.height", "must be a finite number below 1e150 in size");
    }
    if (g->has_pole && !within_extent(g->pole)) return goal_error(err, i, "pole", "must be finite numbers below 1e150");
    if (!(g->weight > 0) || !isfinite(g->weight)) return goal_error(err, i, "weight", "must be a number > 0");
    if (g->priority < -IKD_GOAL_PRIORITY_MAX || g->priority > IKD_GOAL_PRIORITY_MAX)
        return goal_error(err, i, "priority", "must be an integer in [-1000000, 1000000]");
    return IKD_E_OK;
}

ikd_code ikd_multi_validate(ikd_multi_problem *p, ikd_goal *goals, ikd_error *err)
{
    ikd_error_clear(err);
    if (!p->skeleton || !p->skeleton->joints) return ikd_error_set(err, IKD_E_INVALID, "skeleton", "missing");
    size_t n = p->skeleton->count;
    if (p->goal_count < 1 || !goals) return ikd_error_set(err, IKD_E_INVALID, "goals", "needs at least 1 goal");
    if (p->goal_count > n)
        return ikd_error_set(err, IKD_E_INVALID, "goals", "more goals (%zu) than joints (%zu)", p->goal_count, n);
    if (!within_extent(p->root)) return ikd_error_set(err, IKD_E_INVALID, "pose.root", "must be finite numbers below 1e150");
    if (!ikd__unit_dir(&p->up)) return ikd_error_set(err, IKD_E_INVALID, "up", "must be a finite, non-zero direction");
    if (p->has_preferred_root && !within_extent(p->preferred_root))
        return ikd_error_set(err, IKD_E_INVALID, "options.preferred.root", "must be finite numbers below 1e150");
    for (size_t k = 0; p->preferred && k < n; k++)
        if (!(fabs(ikd_quat_len(p->preferred[k]) - 1) <= 1e-9))
            return ikd_error_set(err, IKD_E_INVALID, "options.preferred.rotations", "must be unit quaternions [x, y, z, w]");
    for (size_t i = 0; i < sizeof multi_options / sizeof multi_options[0]; i++) {
        const ikd_option_info *o = &multi_options[i];
        const char *field = (const char *)p + o->offset;
        double v = o->type == IKD_OPT_NUMBER ? *(const double *)field : *(const int *)field;
        int low = o->min_open ? !(v > o->min) : !(v >= o->min), high = o->max_open ? !(v < o->max) : !(v <= o->max);
        if (low || high) {
            char name[64];
            snprintf(name, sizeof name, "options.%s", o->name);
            return ikd_error_set(err, IKD_E_INVALID, name, "must be %s in %s%g, %g%s",
                                 o->type == IKD_OPT_INT ? "an integer" : "a number", o->min_open ? "(" : "[", o->min, o->max,
                                 o->max_open ? ")" : "]");
        }
    }
    for (size_t i = 0; i < p->goal_count; i++) {
        ikd_code rc = check_goal(p, &goals[i], i, err);
        if (rc) return rc;
    }
    p->goals = goals;
    return IKD_E_OK;
}
