/* reclimits.c - limits=recording: the euler limits every frame of a BVH take keeps, in the order that fits each joint tightest. */
#include "reclimits.h"

#include <math.h>
#include <string.h>

/* The order of joint bj's rotation channels as an euler order ("zyx"), the
 * axes it lacks appended; its rotation channel count. */
static int channel_order(const ikd_bvh_joint *bj, ikd_euler_order *order)
{
    char name[4] = {0};
    int n = 0, used = 0;
    for (int c = 0; c < bj->nchan; c++) {
        if (bj->chan[c] < IKD_BVH_XROT) continue;
        int a = bj->chan[c] - IKD_BVH_XROT;
        if (used & (1 << a) || n == 3) continue; /* a repeated axis: the first one names it */
        used |= 1 << a, name[n++] = "xyz"[a];
    }
    int rotations = n;
    for (int a = 0; a < 3; a++)
        if (!(used & (1 << a))) name[n++] = "xyz"[a];
    return ikd_limit_order_from_name(name, order) == 0 ? rotations : -1;
}

/* What the take's frames do with joint j in each of the six euler orders:
 * lo[o][x], hi[o][x], each angle's least and greatest (degrees). */
static void take_ranges(const ikd_bvh *b, size_t j, double lo[6][3], double hi[6][3])
{
    for (int o = 0; o < 6; o++)
        for (int x = 0; x < 3; x++) lo[o][x] = INFINITY, hi[o][x] = -INFINITY;
    for (size_t k = 0; k < b->frames; k++) {
        ikd_quat q;
        ikd_vec3 t;
        int moved;
        ikd_bvh_joint_at(b, j, k, &q, &t, &moved);
        for (int o = 0; o < 6; o++) {
            double a[3];
            ikd_limit_euler_angles((ikd_euler_order)o, q, a);
            for (int x = 0; x < 3; x++) {
                double d = a[x] * IKD_RAD2DEG;
                lo[o][x] = fmin(lo[o][x], d), hi[o][x] = fmax(hi[o][x], d);
            }
        }
    }
}

/* The box of one order's ranges (lo, hi: in; out: the box, degrees): each
 * range widened by IKD_RECLIMITS_MARGIN_DEG, within [-180, 180], the middle
 * one within +-IKD_RECLIMITS_MIDDLE_DEG, an angle that wraps across +-180
 * (its values span over 300 degrees) the whole turn. Returns the box's
 * measure in the rotation group (the Haar measure of Tait-Bryan angles,
 * cos(middle) d1 d2 d3, radians), or INFINITY where the middle angle passes
 * IKD_RECLIMITS_MIDDLE_DEG (the box would not keep every frame). */
static double take_box(double lo[3], double hi[3])
{
    int kept = fmax(-lo[1], hi[1]) <= IKD_RECLIMITS_MIDDLE_DEG;
    for (int x = 0; x < 3; x++) {
        double bound = x == 1 ? IKD_RECLIMITS_MIDDLE_DEG : 180;
        if (x != 1 && hi[x] - lo[x] > 300) lo[x] = -INFINITY, hi[x] = INFINITY;
        lo[x] = fmax(lo[x] - IKD_RECLIMITS_MARGIN_DEG, -bound);
        hi[x] = fmin(hi[x] + IKD_RECLIMITS_MARGIN_DEG, bound);
    }
    if (!kept) return INFINITY;
    return (hi[0] - lo[0]) * (hi[2] - lo[2]) * IKD_DEG2RAD * IKD_DEG2RAD * (sin(hi[1] * IKD_DEG2RAD) - sin(lo[1] * IKD_DEG2RAD));
}

/* neutral_deg of joint j's box: the take's frame nearest its mean rotation
 * (the chordal mean: the frames' quaternions summed on one hemisphere), a
 * pose the performer held and so inside the box, in the box's angles. */
static void take_neutral(const ikd_bvh *b, size_t j, const ikd_limit *l, double mid[3])
{
    ikd_quat sum = {0, 0, 0, 0}, q, near = ikd_quat_identity();
    ikd_vec3 t;
    int moved;
    for (size_t k = 0; k < b->frames; k++) {
        ikd_bvh_joint_at(b, j, k, &q, &t, &moved);
        double c = q.x * sum.x + q.y * sum.y + q.z * sum.z + q.w * sum.w, s = c < 0 ? -1 : 1;
        sum = ikd_quat_make(sum.x + s * q.x, sum.y + s * q.y, sum.z + s * q.z, sum.w + s * q.w);
    }
    double best = -1;
    for (size_t k = 0; k < b->frames; k++) {
        ikd_bvh_joint_at(b, j, k, &q, &t, &moved);
        double c = fabs(q.x * sum.x + q.y * sum.y + q.z * sum.z + q.w * sum.w);
        if (c > best) best = c, near = q;
    }
    double a[3];
    ikd_limit_euler_angles(l->order, near, a);
    for (int x = 0; x < 3; x++) mid[x] = fmin(fmax(a[x] * IKD_RAD2DEG, l->euler_min_deg[x]), l->euler_max_deg[x]);
}

size_t ikd_reclimits_bvh(const ikd_bvh *b, ikd_skeleton_joint *js)
{
    size_t limited = 0;
    if (!b->frames) return 0;
    for (size_t j = 1; j < b->count; j++) {
        const ikd_bvh_joint *bj = &b->joints[j];
        if (bj->end_site) continue;
        ikd_limit *l = &js[j].limit;
        ikd_euler_order own;
        int rotations = channel_order(bj, &own);
        if (rotations < 0) continue;
        if (rotations == 0) { /* the take never turns it */
            ikd_limit_init(l, IKD_LIMIT_FIXED);
            limited++;
            continue;
        }
        /* the channel order's box, or another order's that covers less */
        double lo[6][3], hi[6][3], mid[3], least = INFINITY;
        take_ranges(b, j, lo, hi);
        int order = own;
        for (int x = 0; x < 3; x++) mid[x] = 0.5 * (lo[own][x] + hi[own][x]);
        least = take_box(lo[own], hi[own]);
        for (int o = 0; o < 6; o++) {
            double range_mid[3];
            for (int x = 0; x < 3; x++) range_mid[x] = 0.5 * (lo[o][x] + hi[o][x]);
            double m = o == (int)own ? INFINITY : take_box(lo[o], hi[o]);
            if (m < least) least = m, order = o, memcpy(mid, range_mid, sizeof mid);
        }
        ikd_limit_init(l, IKD_LIMIT_EULER);
        l->order = (ikd_euler_order)order;
        memcpy(l->euler_min_deg, lo[order], sizeof l->euler_min_deg);
        memcpy(l->euler_max_deg, hi[order], sizeof l->euler_max_deg);
        take_neutral(b, j, l, l->euler_neutral_deg);
        l->has_neutral = 1;
        limited++;
    }
    return limited;
}
