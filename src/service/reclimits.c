/* reclimits.c - limits=recording: the euler limits every frame of a BVH take keeps, in each joint's own channel order. */
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

size_t ikd_reclimits_bvh(const ikd_bvh *b, ikd_skeleton_joint *js)
{
    size_t limited = 0;
    if (!b->frames) return 0;
    for (size_t j = 1; j < b->count; j++) {
        const ikd_bvh_joint *bj = &b->joints[j];
        if (bj->end_site) continue;
        ikd_limit *l = &js[j].limit;
        ikd_euler_order order;
        int rotations = channel_order(bj, &order);
        if (rotations < 0) continue;
        if (rotations == 0) { /* the take never turns it */
            ikd_limit_init(l, IKD_LIMIT_FIXED);
            limited++;
            continue;
        }
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        double sn[3] = {0, 0, 0}, cs[3] = {0, 0, 0};
        for (size_t k = 0; k < b->frames; k++) {
            ikd_quat q;
            ikd_vec3 t;
            int moved;
            double a[3];
            ikd_bvh_joint_at(b, j, k, &q, &t, &moved);
            ikd_limit_euler_angles(order, q, a);
            for (int x = 0; x < 3; x++) {
                double d = a[x] * IKD_RAD2DEG;
                lo[x] = fmin(lo[x], d), hi[x] = fmax(hi[x], d), sn[x] += sin(a[x]), cs[x] += cos(a[x]);
            }
        }
        ikd_limit_init(l, IKD_LIMIT_EULER);
        l->order = order;
        for (int x = 0; x < 3; x++) {
            double bound = x == 1 ? IKD_RECLIMITS_MIDDLE_DEG : 180, mid = 0.5 * (lo[x] + hi[x]);
            if (x != 1 && hi[x] - lo[x] > 300) /* it wraps across +-180: the whole turn, aimed at its mean */
                lo[x] = -INFINITY, hi[x] = INFINITY, mid = atan2(sn[x], cs[x]) * IKD_RAD2DEG;
            l->euler_min_deg[x] = fmax(lo[x] - IKD_RECLIMITS_MARGIN_DEG, -bound);
            l->euler_max_deg[x] = fmin(hi[x] + IKD_RECLIMITS_MARGIN_DEG, bound);
            l->euler_neutral_deg[x] = fmin(fmax(mid, l->euler_min_deg[x]), l->euler_max_deg[x]);
        }
        l->has_neutral = 1;
        limited++;
    }
    return limited;
}
