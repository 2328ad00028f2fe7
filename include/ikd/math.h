/* ikd/math.h - double-precision 3D vectors and unit quaternions for the solvers. */
#ifndef IKD_MATH_H
#define IKD_MATH_H

#include <math.h>

/* A point or direction. Frame: whatever the caller's chain uses (world space
 * in every public struct). Unit: the caller's length unit. */
typedef struct ikd_vec3 {
    double x, y, z;
} ikd_vec3;

/* A rotation as a quaternion [x, y, z, w] (w is the scalar part). Every
 * rotation ikd returns is unit length to within 1e-12. Identity: {0,0,0,1}. */
typedef struct ikd_quat {
    double x, y, z, w;
} ikd_quat;

#define IKD_PI 3.14159265358979323846
#define IKD_DEG2RAD (IKD_PI / 180.0)
#define IKD_RAD2DEG (180.0 / IKD_PI)

static inline ikd_vec3 ikd_vec3_make(double x, double y, double z) { ikd_vec3 r = {x, y, z}; return r; }
static inline ikd_vec3 ikd_vec3_add(ikd_vec3 a, ikd_vec3 b) { return ikd_vec3_make(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline ikd_vec3 ikd_vec3_sub(ikd_vec3 a, ikd_vec3 b) { return ikd_vec3_make(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline ikd_vec3 ikd_vec3_scale(ikd_vec3 a, double s) { return ikd_vec3_make(a.x * s, a.y * s, a.z * s); }
/* a + b * s */
static inline ikd_vec3 ikd_vec3_mad(ikd_vec3 a, ikd_vec3 b, double s) { return ikd_vec3_make(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s); }
static inline double ikd_vec3_dot(ikd_vec3 a, ikd_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline ikd_vec3 ikd_vec3_cross(ikd_vec3 a, ikd_vec3 b)
{
    return ikd_vec3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double ikd_vec3_len(ikd_vec3 a) { return sqrt(ikd_vec3_dot(a, a)); }
static inline double ikd_vec3_dist(ikd_vec3 a, ikd_vec3 b) { return ikd_vec3_len(ikd_vec3_sub(a, b)); }
static inline int ikd_vec3_isfinite(ikd_vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

/* a / |a|; returns `fallback` when |a| is zero or not finite. */
static inline ikd_vec3 ikd_vec3_norm_or(ikd_vec3 a, ikd_vec3 fallback)
{
    double l = ikd_vec3_len(a);
    if (!(l > 0.0) || !isfinite(l)) return fallback;
    /* shorter than 2^-500: its squares fall below the normal doubles and the
     * length loses digits (a 2e-159 bone direction came out 1.8e-7 short of
     * unit); scaled by 2^600 first, exactly */
    if (l < 0x1p-500) a = ikd_vec3_scale(a, 0x1p600), l = ikd_vec3_len(a);
    return ikd_vec3_scale(a, 1.0 / l);
}

/* The component of `a` perpendicular to the unit vector `u`. */
static inline ikd_vec3 ikd_vec3_reject(ikd_vec3 a, ikd_vec3 u) { return ikd_vec3_mad(a, u, -ikd_vec3_dot(a, u)); }

/* A unit vector perpendicular to the unit vector `u`, chosen deterministically
 * (crossed with the world axis least aligned with `u`). */
ikd_vec3 ikd_vec3_any_perp(ikd_vec3 u);

/* Unsigned angle between two non-zero vectors, radians in [0, pi]; robust
 * near 0 and pi (atan2 of |a x b| and a.b). */
double ikd_vec3_angle(ikd_vec3 a, ikd_vec3 b);

/* Signed angle from `a` to `b` about the unit `axis` (right-hand rule),
 * radians in (-pi, pi], measured in the plane perpendicular to `axis`. */
double ikd_vec3_signed_angle(ikd_vec3 a, ikd_vec3 b, ikd_vec3 axis);

static inline ikd_quat ikd_quat_make(double x, double y, double z, double w) { ikd_quat q = {x, y, z, w}; return q; }
static inline ikd_quat ikd_quat_identity(void) { return ikd_quat_make(0, 0, 0, 1); }
static inline ikd_quat ikd_quat_conj(ikd_quat q) { return ikd_quat_make(-q.x, -q.y, -q.z, q.w); }
static inline double ikd_quat_dot(ikd_quat a, ikd_quat b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline double ikd_quat_len(ikd_quat q) { return sqrt(ikd_quat_dot(q, q)); }
static inline int ikd_quat_isfinite(ikd_quat q) { return isfinite(q.x) && isfinite(q.y) && isfinite(q.z) && isfinite(q.w); }

/* Hamilton product a * b: rotate by b first, then by a. */
static inline ikd_quat ikd_quat_mul(ikd_quat a, ikd_quat b)
{
    return ikd_quat_make(a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                         a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                         a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                         a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}

/* q / |q|; identity when |q| is zero or not finite. */
static inline ikd_quat ikd_quat_norm(ikd_quat q)
{
    double l = ikd_quat_len(q);
    if (!(l > 0.0) || !isfinite(l)) return ikd_quat_identity();
    double inv = 1.0 / l; /* one division, four products */
    return ikd_quat_make(q.x * inv, q.y * inv, q.z * inv, q.w * inv);
}

/* Rotate v by the unit quaternion q. */
static inline ikd_vec3 ikd_quat_rotate(ikd_quat q, ikd_vec3 v)
{
    ikd_vec3 u = ikd_vec3_make(q.x, q.y, q.z);
    ikd_vec3 t = ikd_vec3_scale(ikd_vec3_cross(u, v), 2.0);
    return ikd_vec3_add(ikd_vec3_mad(v, t, q.w), ikd_vec3_cross(u, t));
}

/* Rotation by `angle` radians about the unit `axis` (right-hand rule). */
ikd_quat ikd_quat_axis_angle(ikd_vec3 axis, double angle);

/* The shortest-arc rotation taking direction `from` to direction `to` (both
 * non-zero, any length). Opposite directions: a half turn about
 * ikd_vec3_any_perp(from). */
ikd_quat ikd_quat_arc(ikd_vec3 from, ikd_vec3 to);

/* The rotation whose x and y axes are the unit directions `x` and `y`
 * (normal to each other; its z axis is x cross y): x onto `x` by the
 * shortest arc, then about `x` until y lies on `y`. */
ikd_quat ikd_quat_from_axes(ikd_vec3 x, ikd_vec3 y);

/* Angle of the rotation between two unit quaternions, radians in [0, pi]
 * (q and -q are the same rotation). */
double ikd_quat_angle_between(ikd_quat a, ikd_quat b);

#endif
