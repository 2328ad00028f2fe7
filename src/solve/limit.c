/* limit.c - limits on a skeleton joint's deviation from rest: hinge, ball (swing-twist), euler, fixed; projection and violation. */
#include "limit.h"

#include <string.h>

static const char *const type_names[] = {"none", "fixed", "hinge", "ball", "euler"};
static const char *const order_names[] = {"xyz", "xzy", "yxz", "yzx", "zxy", "zyx"};
/* the axes (0 = x, 1 = y, 2 = z) of each order, first to last */
static const int order_axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

const char *ikd_limit_type_name(ikd_limit_type t)
{
    return (int)t >= 0 && (int)t < 5 ? type_names[t] : NULL;
}

const char *ikd_limit_order_name(ikd_euler_order o)
{
    return (int)o >= 0 && (int)o < 6 ? order_names[o] : NULL;
}

int ikd_limit_order_from_name(const char *name, ikd_euler_order *out)
{
    for (int i = 0; i < 6; i++)
        if (strcmp(name, order_names[i]) == 0) {
            *out = (ikd_euler_order)i;
            return 0;
        }
    return -1;
}

void ikd_limit_init(ikd_limit *l, ikd_limit_type type)
{
    memset(l, 0, sizeof *l);
    l->type = type;
    l->min_deg = -180;
    l->max_deg = 180;
    l->twist_min_deg = -180;
    l->twist_max_deg = 180;
    for (int i = 0; i < 3; i++) l->euler_min_deg[i] = -180, l->euler_max_deg[i] = 180;
    l->euler_min_deg[1] = -89, l->euler_max_deg[1] = 89;
    l->local_axis = ikd_vec3_make(1, 0, 0);
    l->frame = l->local_frame = ikd_quat_identity();
}

/* The rotation matrix of a unit quaternion, row-major. */
static void quat_matrix(ikd_quat q, double m[3][3])
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    m[0][0] = 1 - 2 * (y * y + z * z), m[0][1] = 2 * (x * y - z * w), m[0][2] = 2 * (x * z + y * w);
    m[1][0] = 2 * (x * y + z * w), m[1][1] = 1 - 2 * (x * x + z * z), m[1][2] = 2 * (y * z - x * w);
    m[2][0] = 2 * (x * z - y * w), m[2][1] = 2 * (y * z + x * w), m[2][2] = 1 - 2 * (x * x + y * y);
}

int ikd__euler_banded(const ikd_limit *l)
{
    return l->type == IKD_LIMIT_EULER && l->euler_max_deg[0] - l->euler_min_deg[0] >= 360 - 1e-9 &&
           l->euler_max_deg[2] - l->euler_min_deg[2] >= 360 - 1e-9;
}

static ikd_vec3 unit_axis(int i) { return ikd_vec3_make(i == 0, i == 1, i == 2); }

int ikd__euler_even(ikd_euler_order order)
{
    return order == IKD_EULER_XYZ || order == IKD_EULER_YZX || order == IKD_EULER_ZXY;
}

void ikd_limit_euler_angles(ikd_euler_order order, ikd_quat d, double a[3])
{
    const int *ax = order_axes[order];
    int i = ax[0], j = ax[1], k = ax[2];
    /* an even permutation of (x, y, z) has sign +1 */
    double s = ikd__euler_even(order) ? 1.0 : -1.0;
    double m[3][3];
    quat_matrix(d, m);
    double sb = s * m[i][k];
    if (sb > 1) sb = 1;
    if (sb < -1) sb = -1;
    a[1] = asin(sb);
    if (fabs(sb) < 1 - 1e-12) {
        a[0] = atan2(-s * m[j][k], m[k][k]);
        a[2] = atan2(-s * m[i][j], m[i][i]);
    } else { /* gimbal lock: the first and third axes coincide; put it all on the first */
        a[2] = 0;
        a[0] = atan2(s * m[k][j], m[j][j]);
    }
}

ikd_quat ikd_limit_euler_quat(ikd_euler_order order, const double a[3])
{
    return ikd_quat_norm(ikd__euler_quat_product(order, a));
}

ikd_quat ikd__euler_quat_product(ikd_euler_order order, const double a[3])
{
    const int *ax = order_axes[order];
    ikd_quat q = ikd_quat_identity();
    for (int t = 0; t < 3; t++) q = ikd_quat_mul(q, ikd_quat_axis_angle(unit_axis(ax[t]), a[t]));
    return q;
}

void ikd_limit_swing_twist(ikd_quat d, ikd_vec3 axis, ikd_quat *swing, ikd_quat *twist)
{
    double p = d.x * axis.x + d.y * axis.y + d.z * axis.z;
    ikd_quat t = ikd_quat_make(axis.x * p, axis.y * p, axis.z * p, d.w);
    double n = ikd_quat_len(t);
    /* a half-turn swing about an axis normal to the twist axis leaves no twist */
    *twist = n > 1e-12 ? ikd_quat_make(t.x / n, t.y / n, t.z / n, t.w / n) : ikd_quat_identity();
    *swing = ikd_quat_norm(ikd_quat_mul(d, ikd_quat_conj(*twist)));
}

double ikd__twist_angle(ikd_quat twist, ikd_vec3 axis)
{
    double s = twist.x * axis.x + twist.y * axis.y + twist.z * axis.z;
    return ikd__wrap_pi(2 * atan2(s, twist.w));
}

double ikd__wrap_pi(double a)
{
    if (a > IKD_PI) a -= 2 * IKD_PI;
    if (a <= -IKD_PI) a += 2 * IKD_PI;
    return a;
}

double ikd__hinge_angle(const ikd_limit *l, double a)
{
    if (l->min_deg >= -180 && l->max_deg <= 180) return a;
    double c = 0.5 * (l->min_deg + l->max_deg) * IKD_DEG2RAD;
    return c + remainder(a - c, 2 * IKD_PI);
}

/* Distance from angle a to b along the circle, in [0, pi]. */
static double circ(double a, double b)
{
    double d = fmod(fabs(a - b), 2 * IKD_PI);
    return d > IKD_PI ? 2 * IKD_PI - d : d;
}

/* `a` clamped into [lo, hi] (radians): the nearer end along the circle. */
static double clamp_angle(double a, double lo, double hi)
{
    if (a >= lo && a <= hi) return a;
    return circ(a, lo) <= circ(a, hi) ? lo : hi;
}

static ikd_quat positive(ikd_quat q) { return q.w < 0 ? ikd_quat_make(-q.x, -q.y, -q.z, -q.w) : q; }

double ikd__limit_neutral_angle(double min_deg, double max_deg)
{
    return min_deg <= 0 && 0 <= max_deg ? 0 : 0.5 * (min_deg + max_deg) * IKD_DEG2RAD;
}

void ikd__limit_euler_neutral(const ikd_limit *l, double a[3])
{
    for (int i = 0; i < 3; i++)
        a[i] = (l->has_neutral ? l->euler_neutral_deg[i] : 0.5 * (l->euler_min_deg[i] + l->euler_max_deg[i])) * IKD_DEG2RAD;
}

ikd_quat ikd__limit_neutral(const ikd_limit *l)
{
    switch (l->type) {
    case IKD_LIMIT_HINGE: return positive(ikd_quat_axis_angle(l->local_axis, ikd__limit_neutral_angle(l->min_deg, l->max_deg)));
    case IKD_LIMIT_BALL: return positive(ikd_quat_axis_angle(l->local_axis, ikd__limit_neutral_angle(l->twist_min_deg, l->twist_max_deg)));
    case IKD_LIMIT_EULER: {
        double a[3];
        ikd__limit_euler_neutral(l, a);
        return positive(ikd__euler_out(l, ikd_limit_euler_quat(l->order, a)));
    }
    default: return ikd_quat_identity();
    }
}

ikd_quat ikd_limit_project(const ikd_limit *l, ikd_quat d)
{
    switch (l->type) {
    case IKD_LIMIT_FIXED: return ikd_quat_identity();
    case IKD_LIMIT_HINGE: {
        ikd_quat sw, tw;
        ikd_limit_swing_twist(d, l->local_axis, &sw, &tw);
        double a = clamp_angle(ikd__hinge_angle(l, ikd__twist_angle(tw, l->local_axis)), l->min_deg * IKD_DEG2RAD,
                               l->max_deg * IKD_DEG2RAD);
        return positive(ikd_quat_axis_angle(l->local_axis, a));
    }
    case IKD_LIMIT_BALL: {
        ikd_quat sw, tw;
        ikd_limit_swing_twist(d, l->local_axis, &sw, &tw);
        double t = clamp_angle(ikd__twist_angle(tw, l->local_axis), l->twist_min_deg * IKD_DEG2RAD,
                               l->twist_max_deg * IKD_DEG2RAD);
        sw = positive(sw);
        double sa = 2 * atan2(sqrt(sw.x * sw.x + sw.y * sw.y + sw.z * sw.z), sw.w), max = l->max_deg * IKD_DEG2RAD;
        /* a half-turn swing has no twist to read (swing_twist's identity),
         * so where the twist range excludes 0 a swing is kept 1e-6 short of
         * it: the twist stays readable and the projection projects onto
         * itself (a fuzzed start at a half-turn swing ended 3 degrees out
         * of a [3, 12] twist range) */
        if (!(l->twist_min_deg <= 0 && 0 <= l->twist_max_deg) && max > IKD_PI - 1e-6) max = IKD_PI - 1e-6;
        if (sa > max) {
            ikd_vec3 sx = ikd_vec3_norm_or(ikd_vec3_make(sw.x, sw.y, sw.z), ikd_vec3_any_perp(l->local_axis));
            sw = ikd_quat_axis_angle(sx, max);
        }
        return positive(ikd_quat_norm(ikd_quat_mul(sw, ikd_quat_axis_angle(l->local_axis, t))));
    }
    case IKD_LIMIT_EULER: {
        double a[3];
        ikd_limit_euler_angles(l->order, ikd__euler_in(l, d), a);
        for (int i = 0; i < 3; i++) a[i] = clamp_angle(a[i], l->euler_min_deg[i] * IKD_DEG2RAD, l->euler_max_deg[i] * IKD_DEG2RAD);
        return positive(ikd__euler_out(l, ikd_limit_euler_quat(l->order, a)));
    }
    default: return d;
    }
}

int ikd__limit_inside(const ikd_limit *l, ikd_quat d)
{
    if (l->type == IKD_LIMIT_EULER) {
        double a[3];
        ikd_limit_euler_angles(l->order, ikd__euler_in(l, d), a);
        for (int i = 0; i < 3; i++)
            if (!(a[i] >= l->euler_min_deg[i] * IKD_DEG2RAD && a[i] <= l->euler_max_deg[i] * IKD_DEG2RAD)) return 0;
        return 1;
    }
    if (l->type != IKD_LIMIT_BALL) return 0;
    ikd_quat sw, tw;
    ikd_limit_swing_twist(d, l->local_axis, &sw, &tw);
    double sa = 2 * atan2(sqrt(sw.x * sw.x + sw.y * sw.y + sw.z * sw.z), fabs(sw.w));
    double t = ikd__twist_angle(tw, l->local_axis);
    return sa <= l->max_deg * IKD_DEG2RAD && t >= l->twist_min_deg * IKD_DEG2RAD && t <= l->twist_max_deg * IKD_DEG2RAD;
}

/* An angle range [lo, hi] (radians, within [-pi, pi]) as the sines and
 * cosines arc_inside tests against: b[0..5] cos and sin of lo, hi and the
 * middle, b[6] 1 when the range is wider than a half turn, 2 when it is
 * the whole circle. */
static void arc_bounds(double lo, double hi, double *b)
{
    double c = 0.5 * (lo + hi);
    b[0] = cos(lo), b[1] = sin(lo), b[2] = cos(hi), b[3] = sin(hi), b[4] = cos(c), b[5] = sin(c);
    b[6] = hi - lo >= 2 * IKD_PI - 1e-12 ? 2 : hi - lo > IKD_PI ? 1 : 0;
}

/* 1 when atan2(y, x) lies in the range of arc_bounds b, without the
 * arctangent: signs of sines of the distances to either end (exact near
 * them), the middle's cosine ruling out the opposite side. */
static int arc_inside(const double *b, double y, double x)
{
    if (b[6] == 2) return 1;
    if (b[6] == 0) /* a <= half turn: from lo ahead, from hi back, the middle's side */
        return y * b[0] - x * b[1] >= 0 && x * b[3] - y * b[2] >= 0 && x * b[4] + y * b[5] >= 0;
    /* wider: outside when strictly inside the complement (hi, lo + 2 pi) */
    return !(y * b[2] - x * b[3] > 0 && x * b[1] - y * b[0] > 0 && x * b[4] + y * b[5] < 0);
}

void ikd__limit_bounds(const ikd_limit *l, double b[IKD_LIMIT_BOUNDS])
{
    memset(b, 0, IKD_LIMIT_BOUNDS * sizeof(double));
    if (l->type == IKD_LIMIT_BALL) { /* cos of half the largest swing, sin of half each twist bound */
        b[0] = cos(0.5 * l->max_deg * IKD_DEG2RAD);
        b[1] = sin(0.5 * l->twist_min_deg * IKD_DEG2RAD), b[2] = sin(0.5 * l->twist_max_deg * IKD_DEG2RAD);
    } else if (l->type == IKD_LIMIT_EULER) { /* the outer angles' arcs, the middle's sines */
        arc_bounds(l->euler_min_deg[0] * IKD_DEG2RAD, l->euler_max_deg[0] * IKD_DEG2RAD, b);
        arc_bounds(l->euler_min_deg[2] * IKD_DEG2RAD, l->euler_max_deg[2] * IKD_DEG2RAD, b + 7);
        b[14] = sin(l->euler_min_deg[1] * IKD_DEG2RAD), b[15] = sin(l->euler_max_deg[1] * IKD_DEG2RAD);
    }
}

int ikd__limit_inside_by(const ikd_limit *l, const double b[IKD_LIMIT_BOUNDS], ikd_quat d)
{
    if (l->type == IKD_LIMIT_BALL) {
        /* d = swing twist: the twist's (unnormalised) parts are (p along
         * the axis, d.w); the swing's w is their length tn, so the swing is
         * 2 acos(tn), and the twist's half angle has sine p / tn (w >= 0) */
        ikd_vec3 a = l->local_axis;
        double p = d.x * a.x + d.y * a.y + d.z * a.z, tn = sqrt(p * p + d.w * d.w);
        if (!(tn > 1e-9) || d.w == 0) return ikd__limit_inside(l, d);
        double st = (d.w < 0 ? -p : p) / tn;
        return tn >= b[0] && st >= b[1] && st <= b[2];
    }
    if (l->type == IKD_LIMIT_EULER) {
        const int *ax = order_axes[l->order];
        int i = ax[0], j = ax[1], q = ax[2];
        double sg = ikd__euler_even(l->order) ? 1.0 : -1.0;
        double m[3][3]; /* as ikd_limit_euler_angles reads it */
        quat_matrix(ikd__euler_in(l, d), m);
        double sb = sg * m[i][q];
        if (!(fabs(sb) < 1 - 1e-9)) return ikd__limit_inside(l, d);
        return sb >= b[14] && sb <= b[15] && arc_inside(b, -sg * m[j][q], m[q][q]) &&
               arc_inside(b + 7, -sg * m[i][j], m[i][i]);
    }
    return ikd__limit_inside(l, d);
}

double ikd_limit_violation(const ikd_limit *l, ikd_quat d)
{
    if (l->type == IKD_LIMIT_NONE) return 0.0;
    return ikd_quat_angle_between(d, ikd_limit_project(l, d));
}
