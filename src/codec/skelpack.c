/* skelpack.c - a clip's goals packed: only the parts each goal has, so that long clips hold little memory. */
#include "skelpack.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- packed goals ------------------------------------------------------
 * A goal as its joint (u32), which parts it has (u32), its weight, then
 * the doubles of each part it has, in the order of the flags. */
enum { PACK_POSITION = 1, PACK_ROTATION = 2, PACK_AIM = 4, PACK_GROUND = 8, PACK_HEIGHT = 16, PACK_POLE = 32,
       PACK_PRIORITY = 64 };

static size_t pack_size(const ikd_goal *g)
{
    return 16 + 8 * (size_t)(3 * !!g->has_position + 4 * !!g->has_rotation + 6 * !!g->has_aim + 6 * !!g->has_ground +
                             !!g->has_ground_height + 3 * !!g->has_pole + !!g->priority);
}

static unsigned char *put(unsigned char *p, const void *src, size_t n)
{
    memcpy(p, src, n);
    return p + n;
}

static unsigned char *pack_goal(unsigned char *p, const ikd_goal *g)
{
    uint32_t joint = (uint32_t)g->joint;
    uint32_t flags = (g->has_position ? PACK_POSITION : 0) | (g->has_rotation ? PACK_ROTATION : 0) |
                     (g->has_aim ? PACK_AIM : 0) | (g->has_ground ? PACK_GROUND : 0) |
                     (g->has_ground_height ? PACK_HEIGHT : 0) | (g->has_pole ? PACK_POLE : 0) |
                     (g->priority ? PACK_PRIORITY : 0);
    p = put(p, &joint, 4);
    p = put(p, &flags, 4);
    p = put(p, &g->weight, 8);
    if (flags & PACK_POSITION) p = put(p, &g->position, 24);
    if (flags & PACK_ROTATION) p = put(p, &g->rotation, 32);
    if (flags & PACK_AIM) p = put(put(p, &g->aim_axis, 24), &g->aim_at, 24);
    if (flags & PACK_GROUND) p = put(put(p, &g->ground_point, 24), &g->ground_normal, 24);
    if (flags & PACK_HEIGHT) p = put(p, &g->ground_height, 8);
    if (flags & PACK_POLE) p = put(p, &g->pole, 24);
    if (flags & PACK_PRIORITY) { /* 8 bytes: the doubles after it stay aligned in size */
        int64_t pr = g->priority;
        p = put(p, &pr, 8);
    }
    return p;
}

static const unsigned char *get(const unsigned char *p, void *dst, size_t n)
{
    memcpy(dst, p, n);
    return p + n;
}

static const unsigned char *unpack_goal(const unsigned char *p, ikd_goal *g)
{
    uint32_t joint, flags;
    p = get(p, &joint, 4);
    p = get(p, &flags, 4);
    ikd_goal_init(g, joint);
    p = get(p, &g->weight, 8);
    if ((g->has_position = !!(flags & PACK_POSITION))) p = get(p, &g->position, 24);
    if ((g->has_rotation = !!(flags & PACK_ROTATION))) p = get(p, &g->rotation, 32);
    if ((g->has_aim = !!(flags & PACK_AIM))) p = get(get(p, &g->aim_axis, 24), &g->aim_at, 24);
    if ((g->has_ground = !!(flags & PACK_GROUND))) p = get(get(p, &g->ground_point, 24), &g->ground_normal, 24);
    if ((g->has_ground_height = !!(flags & PACK_HEIGHT))) p = get(p, &g->ground_height, 8);
    if ((g->has_pole = !!(flags & PACK_POLE))) p = get(p, &g->pole, 24);
    if (flags & PACK_PRIORITY) {
        int64_t pr;
        p = get(p, &pr, 8);
        g->priority = (int)pr;
    }
    return p;
}

/* Room for one more frame and `bytes` more packed bytes. */
static int pack_room(ikd_skel_request *r, size_t bytes)
{
    if (r->frame_count + 2 > r->frames_cap) {
        size_t cap = r->frames_cap ? 2 * r->frames_cap : 64;
        size_t *ff = realloc(r->frame_first, cap * sizeof *ff);
        if (!ff) return -1;
        r->frame_first = ff;
        size_t *pa = realloc(r->pack_at, cap * sizeof *pa);
        if (!pa) return -1;
        r->pack_at = pa;
        r->frames_cap = cap;
    }
    if (r->pack_len + bytes > r->pack_cap) {
        size_t cap = r->pack_cap ? 2 * r->pack_cap : 4096;
        while (cap < r->pack_len + bytes) cap *= 2;
        unsigned char *p = realloc(r->pack, cap);
        if (!p) return -1;
        r->pack = p;
        r->pack_cap = cap;
    }
    return 0;
}

/* A frame's preferred pose follows its goals: a u64 tag (bit 1: rotations,
 * bit 2: a root, bit 4: translations), the root's 24 bytes when it has one,
 * a rotation per joint, then with translations a vector per joint (x NaN:
 * null). A frame without one ends at its last goal (pack_at). */
int ikd_skelpack_frame(ikd_skel_request *r, const ikd_goal *goals, size_t n, const ikd_frame_pref *pref)
{
    size_t bytes = 0, nj = r->skeleton.count;
    for (size_t i = 0; i < n; i++) bytes += pack_size(&goals[i]);
    int has = pref && pref->has;
    if (has) bytes += 8 + (pref->has_root ? 24 : 0) + nj * sizeof(ikd_quat) + (pref->has_trans ? nj * sizeof(ikd_vec3) : 0);
    if (pack_room(r, bytes) != 0) return -1;
    size_t k = r->frame_count;
    if (k == 0) r->frame_first[0] = 0, r->pack_at[0] = 0;
    unsigned char *p = r->pack + r->pack_len;
    for (size_t i = 0; i < n; i++) p = pack_goal(p, &goals[i]);
    if (has) {
        uint64_t tag = 1u | (pref->has_root ? 2u : 0) | (pref->has_trans ? 4u : 0);
        p = put(p, &tag, 8);
        if (pref->has_root) p = put(p, &pref->root, 24);
        p = put(p, pref->rot, nj * sizeof(ikd_quat));
        if (pref->has_trans) p = put(p, pref->trans, nj * sizeof(ikd_vec3));
    }
    r->pack_len = (size_t)(p - r->pack);
    r->frame_first[k + 1] = r->frame_first[k] + n;
    r->pack_at[k + 1] = r->pack_len;
    r->frame_count = k + 1;
    return 0;
}

int ikd_skelpack_all(ikd_skel_request *r)
{
    size_t nf = r->frame_count, *first = r->frame_first, nj = r->skeleton.count;
    ikd_goal *goals = r->goals;
    r->frame_first = NULL;
    r->frame_count = 0;
    r->frames_cap = 0;
    int rc = 0;
    for (size_t k = 0; k < nf && rc == 0; k++) {
        ikd_frame_pref fp = {0};
        if (r->fpref && (r->fpref_has[k] & 1))
            fp = (ikd_frame_pref){1, (r->fpref_has[k] & 2) != 0, (r->fpref_has[k] & 4) != 0, r->fpref_root[k],
                                  r->fpref + k * nj, r->fpref_trans + k * nj};
        rc = ikd_skelpack_frame(r, goals + first[k], first[k + 1] - first[k], &fp);
    }
    free(first);
    free(goals);
    free(r->fpref), free(r->fpref_has), free(r->fpref_root), free(r->fpref_trans);
    r->fpref = NULL, r->fpref_has = NULL, r->fpref_root = NULL, r->fpref_trans = NULL;
    r->goals = NULL;
    r->problem.goals = NULL;
    return rc;
}

void ikd_skelpack_trim(ikd_skel_request *r)
{
    unsigned char *p = r->pack_len ? realloc(r->pack, r->pack_len) : NULL;
    if (p) r->pack = p, r->pack_cap = r->pack_len;
    size_t n = r->frame_count + 1;
    size_t *ff = realloc(r->frame_first, n * sizeof *ff), *pa;
    if (ff) r->frame_first = ff;
    pa = realloc(r->pack_at, n * sizeof *pa);
    if (pa) r->pack_at = pa;
    if (ff && pa) r->frames_cap = n;
}

void ikd_skelpack_unpack(const ikd_skel_request *r, size_t k, ikd_goal *out, ikd_frame_pref *pref)
{
    const unsigned char *p = r->pack + r->pack_at[k];
    for (size_t i = 0, n = r->frame_first[k + 1] - r->frame_first[k]; i < n; i++) p = unpack_goal(p, &out[i]);
    if (!pref) return;
    pref->has = p < r->pack + r->pack_at[k + 1];
    if (!pref->has) return;
    uint64_t tag;
    p = get(p, &tag, 8);
    pref->has_root = (tag & 2) != 0, pref->has_trans = (tag & 4) != 0;
    if (pref->has_root) p = get(p, &pref->root, 24);
    p = get(p, pref->rot, r->skeleton.count * sizeof(ikd_quat));
    if (pref->has_trans) get(p, pref->trans, r->skeleton.count * sizeof(ikd_vec3));
}
