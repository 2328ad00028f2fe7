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

/* Deviation q read in frame f (in the joint's rest frame): f^-1 q f. */
static ikd_quat in_frame(ikd_quat f, ikd_quat q)
{
    return f.w == 1 ? q : ikd_quat_mul(ikd_quat_conj(f), ikd_quat_mul(q, f));
}

/* What the take's frames do with joint j in each of the six euler orders,
 * read in frame f (the deviation D as f^-1 D f; identity: the joint's own
 * axes): lo[o][x], hi[o][x], each angle's least and greatest (degrees);
 * *sum (when not NULL), the frames' quaternions summed on one hemisphere
 * (the chordal mean's direction, for take_neutral). */
static void take_ranges(const take *t, size_t j, ikd_quat f, double lo[6][3], double hi[6][3], ikd_quat *sum)
{
    if (sum) *sum = ikd_quat_make(0, 0, 0, 0);
    for (int o = 0; o < 6; o++)
        for (int x = 0; x < 3; x++) lo[o][x] = INFINITY, hi[o][x] = -INFINITY;
    for (size_t k = 0; k < t->frames; k++) {
        ikd_quat q = take_at(t, j, k);
        if (sum) {
            double c = q.x * sum->x + q.y * sum->y + q.z * sum->z + q.w * sum->w, sg = c < 0 ? -1 : 1;
            *sum = ikd_quat_make(sum->x + sg * q.x, sum->y + sg * q.y, sum->z + sg * q.z, sum->w + sg * q.w);
        }
        q = in_frame(f, q);
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

/* neutral_deg of joint j's box l (its angles read in frame f): the take's
 * frame nearest its mean rotation (the chordal mean, along `sum`:
 * take_ranges), a pose the performer held and so inside the box, in the
 * box's angles. */
static void take_neutral(const take *t, size_t j, const ikd_limit *l, ikd_quat f, ikd_quat sum, double mid[3])
{
    ikd_quat near = ikd_quat_identity();
    double best = -1;
    for (size_t k = 0; k < t->frames; k++) {
        ikd_quat q = take_at(t, j, k);
        double c = fabs(q.x * sum.x + q.y * sum.y + q.z * sum.z + q.w * sum.w);
        if (c > best) best = c, near = q;
    }
    double a[3];
    ikd_limit_euler_angles(l->order, in_frame(f, near), a);
    for (int x = 0; x < 3; x++) mid[x] = fmin(fmax(a[x] * IKD_RAD2DEG, l->euler_min_deg[x]), l->euler_max_deg[x]);
}

/* The unit eigenvectors of the symmetric 3 x 3 matrix a (destroyed), as
 * the columns of v, by cyclic Jacobi rotations; their eigenvalues on a's
 * diagonal. */
static void sym_eigen(double a[3][3], double v[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) v[i][k] = i == k;
    for (int sweep = 0; sweep < 32; sweep++) {
        double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        if (!(off > 1e-15 * (fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2])))) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                if (a[p][q] == 0) continue;
                double th = 0.5 * (a[q][q] - a[p][p]) / a[p][q];
                double tn = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1)), c = 1 / sqrt(tn * tn + 1), sn = tn * c;
                for (int k = 0; k < 3; k++) { /* a = G^T a G, v = v G */
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - sn * akq, a[k][q] = sn * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - sn * aqk, a[q][k] = sn * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - sn * vkq, v[k][q] = sn * vkp + c * vkq;
                }
            }
    }
}

/* The principal axes of joint j's motion over the take, as a rotation in
 * its rest frame: the eigenvectors of the covariance of the frames'
 * rotation vectors (on the hemisphere of their chordal mean), largest
 * variance first (the third their cross product). A hinge's motion is
 * one axis. */
static ikd_quat principal_frame(const take *t, size_t j, ikd_quat sum)
{
    double m[3] = {0, 0, 0}, c[3][3] = {{0}}, v[3][3];
    for (size_t k = 0; k < t->frames; k++) {
        ikd_quat q = take_at(t, j, k);
        if (q.x * sum.x + q.y * sum.y + q.z * sum.z + q.w * sum.w < 0) q = ikd_quat_make(-q.x, -q.y, -q.z, -q.w);
        double sl = sqrt(q.x * q.x + q.y * q.y + q.z * q.z), f = sl > 0 ? 2 * atan2(sl, q.w) / sl : 2;
        double r[3] = {q.x * f, q.y * f, q.z * f};
        for (int a = 0; a < 3; a++) {
            m[a] += r[a];
            for (int b = 0; b < 3; b++) c[a][b] += r[a] * r[b];
        }
    }
    double n = (double)t->frames;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) c[a][b] = c[a][b] / n - m[a] * m[b] / (n * n);
    sym_eigen(c, v);
    int o[3] = {0, 1, 2}; /* the eigenvalues, largest first */
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++)
            if (c[o[b]][o[b]] > c[o[a]][o[a]]) { int x = o[a]; o[a] = o[b], o[b] = x; }
    return ikd_quat_from_axes(ikd_vec3_make(v[0][o[0]], v[1][o[0]], v[2][o[0]]), ikd_vec3_make(v[0][o[1]], v[1][o[1]], v[2][o[1]]));
}

/* Joint j's limit from the take: the box in `own` order, or in another
 * that covers less (take_box), in the joint's own axes; or where the
 * principal axes of its motion (principal_frame) give one that covers
 * less still, the least box in them, with them as its `frame` (world:
 * rest, the joint's world rest rotation, times the axes); and its
 * neutral. Debian's Boxing_Toes: the boxes' measures sum to 7% less (5%
 * on its rig with joint frames turned up to 90 degrees); tracked with
 * them, mocap.py's 21 rigs end 11.4 mm off against 11.7 (docs/files.md). */
static void take_limit(const take *t, size_t j, ikd_euler_order own, ikd_quat rest, ikd_limit *l)
{
    double lo[6][3], hi[6][3], plo[6][3], phi[6][3];
    ikd_quat sum;
    take_ranges(t, j, ikd_quat_identity(), lo, hi, &sum);
    int order = own;
    double least = take_box(lo[own], hi[own]);
    for (int o = 0; o < 6; o++) {
        double m = o == (int)own ? INFINITY : take_box(lo[o], hi[o]);
        if (m < least) least = m, order = o;
    }
    ikd_quat pf = principal_frame(t, j, sum);
    take_ranges(t, j, pf, plo, phi, NULL);
    int porder = -1;
    double pleast = least;
    for (int o = 0; o < 6; o++) {
        double m = take_box(plo[o], phi[o]);
        if (m < pleast) pleast = m, porder = o;
    }
    ikd_limit_init(l, IKD_LIMIT_EULER);
    if (porder >= 0) {
        order = porder, memcpy(lo, plo, sizeof lo), memcpy(hi, phi, sizeof hi);
        l->has_frame = 1, l->frame = ikd_quat_norm(ikd_quat_mul(rest, pf));
    }
    l->order = (ikd_euler_order)order;
    memcpy(l->euler_min_deg, lo[order], sizeof l->euler_min_deg);
    memcpy(l->euler_max_deg, hi[order], sizeof l->euler_max_deg);
    take_neutral(t, j, l, porder >= 0 ? pf : ikd_quat_identity(), sum, l->euler_neutral_deg);
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
        else take_limit(&t, j, own, js[j].rotation, &js[j].limit);
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
        else take_limit(&t, j, IKD_EULER_XYZ, js[j].rotation, &js[j].limit);
        limited++;
    }
    return limited;
}
