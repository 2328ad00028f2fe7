/* math.c - the non-inline vector and quaternion helpers of ikd/math.h. */
#include "ikd/math.h"

ikd_vec3 ikd_vec3_any_perp(ikd_vec3 u)
{
    double ax = fabs(u.x), ay = fabs(u.y), az = fabs(u.z);
    ikd_vec3 axis;
    if (ax <= ay && ax <= az)
        axis = ikd_vec3_make(1, 0, 0);
    else if (ay <= az)
        axis = ikd_vec3_make(0, 1, 0);
    else
        axis = ikd_vec3_make(0, 0, 1);
    return ikd_vec3_norm_or(ikd_vec3_cross(u, axis), ikd_vec3_make(0, 0, 1));
}

double ikd_vec3_angle(ikd_vec3 a, ikd_vec3 b)
{
    return atan2(ikd_vec3_len(ikd_vec3_cross(a, b)), ikd_vec3_dot(a, b));
}

double ikd_vec3_signed_angle(ikd_vec3 a, ikd_vec3 b, ikd_vec3 axis)
{
    ikd_vec3 pa = ikd_vec3_reject(a, axis), pb = ikd_vec3_reject(b, axis);
    return atan2(ikd_vec3_dot(ikd_vec3_cross(pa, pb), axis), ikd_vec3_dot(pa, pb));
}

ikd_quat ikd_quat_axis_angle(ikd_vec3 axis, double angle)
{
    double s = sin(0.5 * angle);
    return ikd_quat_make(axis.x * s, axis.y * s, axis.z * s, cos(0.5 * angle));
}

ikd_quat ikd_quat_arc(ikd_vec3 from, ikd_vec3 to)
{
    ikd_vec3 a = ikd_vec3_norm_or(from, ikd_vec3_make(1, 0, 0));
    ikd_vec3 b = ikd_vec3_norm_or(to, a);
    double d = ikd_vec3_dot(a, b);
    if (d < -1.0 + 1e-12) {
        ikd_vec3 p = ikd_vec3_any_perp(a);
        return ikd_quat_make(p.x, p.y, p.z, 0.0);
    }
    /* Half-way quaternion: (a x b, 1 + a.b) normalised; exact for small angles. */
    ikd_vec3 c = ikd_vec3_cross(a, b);
    return ikd_quat_norm(ikd_quat_make(c.x, c.y, c.z, 1.0 + d));
}

ikd_quat ikd_quat_from_axes(ikd_vec3 x, ikd_vec3 y)
{
    ikd_quat q = ikd_quat_arc(ikd_vec3_make(1, 0, 0), x);
    double t = ikd_vec3_signed_angle(ikd_quat_rotate(q, ikd_vec3_make(0, 1, 0)), y, x);
    return ikd_quat_norm(ikd_quat_mul(ikd_quat_axis_angle(x, t), q));
}

double ikd_quat_angle_between(ikd_quat a, ikd_quat b)
{
    ikd_quat d = ikd_quat_mul(ikd_quat_conj(a), b);
    double v = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    return 2.0 * atan2(v, fabs(d.w));
}
