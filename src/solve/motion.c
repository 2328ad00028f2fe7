/* motion.c - a motion solved frame by frame: each frame's start pose (the last solution, carried on) and rest-pull bound. */
#include <string.h>

#include "ikd/motion.h"

size_t ikd_motion_memory_size(size_t joints)
{
    return IKD_MOTION_MEMORY(joints);
}

void ikd_motion_init(ikd_motion *m, const ikd_skeleton *s, const ikd_quat *start, ikd_vec3 root, void *mem)
{
    size_t n = s->count;
    memset(m, 0, sizeof *m);
    m->skeleton = s;
    m->pull_max_deg = IKD_CLIP_PULL_MAX_DEG;
    m->predict_max_deg = IKD_CLIP_PREDICT_MAX_DEG;
    m->cut = IKD_CLIP_CUT;
    m->stiffness = IKD_CLIP_STIFFNESS;
    m->last = mem;
    m->before = m->last + n;
    m->start = m->before + n;
    m->target = (ikd_vec3 *)(void *)(m->start + n);
    m->target_frame = (size_t *)(void *)(m->target + n);
    memset(m->target_frame, 0, n * sizeof *m->target_frame);
    if (start) memcpy(m->last, start, n * sizeof *m->last);
    else /* rest, or where a limit excludes it the pull's aim, as a skeleton solve without a start */
        ikd_skeleton_neutral_pose(s, m->last);
    m->root_last = m->root_before = root;
}

/* 1 when a position goal of p moved its target more than m->cut skeleton
 * sizes since the last frame's goal on its joint (a cut: the rule in
 * motion.h); records p's targets for the next frame. */
static int is_cut(ikd_motion *m, const ikd_multi_problem *p)
{
    int cut = 0;
    double far = m->cut * m->skeleton->size;
    for (size_t i = 0; p->goals && i < p->goal_count; i++) {
        const ikd_goal *g = &p->goals[i];
        if (!g->has_position) continue;
        if (m->cut > 0 && m->frames && m->target_frame[g->joint] == m->frames && ikd_vec3_dist(m->target[g->joint], g->position) > far)
            cut = 1;
        m->target[g->joint] = g->position, m->target_frame[g->joint] = m->frames + 1;
    }
    return cut;
}

void ikd_motion_frame(ikd_motion *m, ikd_multi_problem *p)
{
    p->start = m->last;
    p->heading = m->frames ? m->last : NULL; /* ground goals: the frame before's headings, not a prediction's */
    p->root = m->root_last;
    int cut = is_cut(m, p);
    p->pull_max_deg = m->frames && !cut ? m->pull_max_deg : 0; /* frame 0 and a cut settle fully */
    p->stiffness = m->stiffness;
    if (m->frames < 2 || !(m->predict_max_deg > 0)) return;
    /* the motion so far, carried on: a start nearer the frame's solution */
    ikd_skeleton_predict(m->skeleton, m->before, m->last, m->root_before, m->root_last, m->predict_max_deg, m->start,
                         &p->root);
    for (size_t j = 0; j < m->skeleton->count; j++) m->start[j] = ikd_quat_norm(m->start[j]); /* as a request's `pose` reads */
    p->start = m->start;
}

void ikd_motion_push(ikd_motion *m, const ikd_quat *local, ikd_vec3 root)
{
    ikd_quat *t = m->before;
    m->before = m->last, m->last = t;
    for (size_t j = 0; j < m->skeleton->count; j++) m->last[j] = ikd_quat_norm(local[j]);
    m->root_before = m->root_last, m->root_last = root;
    m->frames++;
}
