/* reclimits.c - limits=recording: the euler limits every frame of a take keeps (BVH, glTF), in the order that fits each joint tightest. */
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

/* Where a take's frames come from: joint j's rotation at frame k relative
 * to its rest (what its limit measures), from a BVH's channels or from
 * sampled local rotations (the joint being read's rest set in `rest`). */
typedef struct take {
    const ikd_bvh *bvh;           /* a BVH take, or NULL: */
    const ikd_quat *rot;          /* [frames x n] local rotations, frame k's joint j at k * n + j */
    ikd_quat rest;                /* with rot: the rest local rotation of the joint being read */
    size_t n, frames;
} take;

static ikd_quat take_at(const take *t, size_t j, size_t k)
{
    if (t->bvh) {
        ikd_quat q;
        ikd_vec3 v;
        int moved;
        ikd_bvh_joint_at(t->bvh, j, k, &q, &v, &moved);
        return q; /* a BVH joint's rest is the identity */
    }
    return ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(t->rest), t->rot[k * t->n + j]));
}

/* What the take's frames do with joint j in each of the six euler orders:
 * lo[o][x], hi[o][x], each angle's least and greatest (degrees); *sum, the
 * frames' quaternions summed on one hemisphere (the chordal mean's
 * direction, for take_neutral). */
static void take_ranges(const take *t, size_t j, double lo[6][3], double hi[6][3], ikd_quat *sum)
{
    *sum = ikd_quat_make(0, 0, 0, 0);
    for (int o = 0; o < 6; o++)
        for (int x = 0; x < 3; x++) lo[o][x] = INFINITY, hi[o][x] = -INFINITY;
    for (size_t k = 0; k < t->frames; k++) {
        ikd_quat q = take_at(t, j, k);
        double c = q.x * sum->x + q.y * sum->y + q.z * sum->z + q.w * sum->w, sg = c < 0 ? -1 : 1;
        *sum = ikd_quat_make(sum->x + sg * q.x, sum->y + sg * q.y, sum->z + sg * q.z, sum->w + sg * q.w);
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
 * (the chordal mean, along `sum`: take_ranges), a pose the performer held
 * and so inside the box, in the box's angles. */
static void take_neutral(const take *t, size_t j, const ikd_limit *l, ikd_quat sum, double mid[3])
{
    ikd_quat near = ikd_quat_identity();
    double best = -1;
    for (size_t k = 0; k < t->frames; k++) {
        ikd_quat q = take_at(t, j, k);
        double c = fabs(q.x * sum.x + q.y * sum.y + q.z * sum.z + q.w * sum.w);
        if (c > best) best = c, near = q;
    }
    double a[3];
    ikd_limit_euler_angles(l->order, near, a);
    for (int x = 0; x < 3; x++) mid[x] = fmin(fmax(a[x] * IKD_RAD2DEG, l->euler_min_deg[x]), l->euler_max_deg[x]);
}

/* Joint j's limit from the take: the box in `own` order, or in another
 * that covers less (take_box), and its neutral. */
static void take_limit(const take *t, size_t j, ikd_euler_order own, ikd_limit *l)
{
    double lo[6][3], hi[6][3];
    ikd_quat sum;
    take_ranges(t, j, lo, hi, &sum);
    int order = own;
    double least = take_box(lo[own], hi[own]);
    for (int o = 0; o < 6; o++) {
        double m = o == (int)own ? INFINITY : take_box(lo[o], hi[o]);
        if (m < least) least = m, order = o;
    }
    ikd_limit_init(l, IKD_LIMIT_EULER);
    l->order = (ikd_euler_order)order;
    memcpy(l->euler_min_deg, lo[order], sizeof l->euler_min_deg);
    memcpy(l->euler_max_deg, hi[order], sizeof l->euler_max_deg);
    take_neutral(t, j, l, sum, l->euler_neutral_deg);
    l->has_neutral = 1;
}

size_t ikd_reclimits_bvh(const ikd_bvh *b, ikd_skeleton_joint *js)
{
    size_t limited = 0;
    take t = {b, NULL, ikd_quat_identity(), b->count, b->frames};
    if (!b->frames) return 0;
    for (size_t j = 1; j < b->count; j++) {
        const ikd_bvh_joint *bj = &b->joints[j];
        if (bj->end_site) continue;
        ikd_euler_order own;
        int rotations = channel_order(bj, &own);
        if (rotations < 0) continue;
        if (rotations == 0) ikd_limit_init(&js[j].limit, IKD_LIMIT_FIXED); /* the take never turns it */
        else take_limit(&t, j, own, &js[j].limit);
        limited++;
    }
    return limited;
}

size_t ikd_reclimits_poses(const ikd_quat *rot, size_t frames, ikd_skeleton_joint *js, size_t n)
{
    size_t limited = 0;
    take t = {NULL, rot, ikd_quat_identity(), n, frames};
    if (!frames) return 0;
    for (size_t j = 1; j < n; j++) {
        t.rest = ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(js[js[j].parent].rotation), js[j].rotation));
        int turns = 0;
        for (size_t k = 0; k < frames && !turns; k++) {
            ikd_quat d = take_at(&t, j, k);
            turns = 1 - fabs(d.w) > 1e-12;
        }
        if (!turns) ikd_limit_init(&js[j].limit, IKD_LIMIT_FIXED); /* no frame turns it from its rest */
        else take_limit(&t, j, IKD_EULER_XYZ, &js[j].limit);
        limited++;
    }
    return limited;
}
