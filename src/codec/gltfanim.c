/* gltfanim.c - a glTF file's animations sampled (LINEAR, STEP, CUBICSPLINE) through its node hierarchy into poses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf.h"
#include "gltf_model.h"

/* ---- animations ------------------------------------------------------------ */

typedef struct gchan {
    double *times, *values;
    size_t keys;
    int ncomp, interp; /* 0 LINEAR, 1 STEP, 2 CUBICSPLINE */
    long node;
    int path;          /* 0 translation, 1 rotation, 2 scale */
} gchan;

static ikd_quat slerp(ikd_quat a, ikd_quat b, double t)
{
    double d = ikd_quat_dot(a, b);
    if (d < 0) b = ikd_quat_make(-b.x, -b.y, -b.z, -b.w), d = -d;
    if (d > 0.9995)
        return ikd_quat_norm(ikd_quat_make(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z), a.w + t * (b.w - a.w)));
    double th = acos(d), sn = sin(th), wa = sin((1 - t) * th) / sn, wb = sin(t * th) / sn;
    return ikd_quat_make(wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z, wa * a.w + wb * b.w);
}

/* The channel's value at time t into v[0..ncomp). */
static void sample(const gchan *c, double t, double *v)
{
    int nc = c->ncomp, cubic = c->interp == 2;
    size_t stride = (size_t)nc * (cubic ? 3 : 1), off = cubic ? (size_t)nc : 0; /* CUBICSPLINE: in, value, out */
    size_t k = 0, lo = 0, hi = c->keys - 1;
    if (t <= c->times[0] || c->keys == 1) {
        memcpy(v, c->values + off, (size_t)nc * sizeof *v);
        return;
    }
    if (t >= c->times[hi]) {
        memcpy(v, c->values + hi * stride + off, (size_t)nc * sizeof *v);
        return;
    }
    while (hi - lo > 1) { /* times[lo] <= t < times[hi] */
        size_t mid = (lo + hi) / 2;
        if (c->times[mid] <= t) lo = mid;
        else hi = mid;
    }
    k = lo;
    double dt = c->times[k + 1] - c->times[k], s = dt > 0 ? (t - c->times[k]) / dt : 0;
    const double *a = c->values + k * stride, *b = c->values + (k + 1) * stride;
    if (c->interp == 1 || dt <= 0) {
        memcpy(v, a + off, (size_t)nc * sizeof *v);
    } else if (cubic) {
        double s2 = s * s, s3 = s2 * s;
        for (int i = 0; i < nc; i++)
            v[i] = (2 * s3 - 3 * s2 + 1) * a[nc + i] + (s3 - 2 * s2 + s) * dt * a[2 * nc + i] + (-2 * s3 + 3 * s2) * b[nc + i] +
                   (s3 - s2) * dt * b[i];
    } else if (c->path == 1) {
        ikd_quat q = slerp(ikd_quat_make(a[0], a[1], a[2], a[3]), ikd_quat_make(b[0], b[1], b[2], b[3]), s);
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
        for (int i = 0; i < nc; i++) v[i] = a[i] + s * (b[i] - a[i]);
    }
}

/* Animation a's channels (those on nodes, translation, rotation, scale). */
static int load_channels(ikd_gltf *g, const ikd_gltf_opts *o, size_t a, gchan **out, size_t *n, ikd_error *err)
{
    gltf_model *m = g->m;
    json_t *an = json_array_get(json_object_get(m->root, "animations"), a);
    json_t *chs = json_object_get(an, "channels"), *sms = json_object_get(an, "samplers");
    size_t nch = json_is_array(chs) ? json_array_size(chs) : 0;
    gchan *c = calloc(nch ? nch : 1, sizeof *c);
    if (!c) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    *out = c, *n = 0;
    for (size_t i = 0; i < nch; i++) {
        json_t *ch = json_array_get(chs, i), *tg = json_object_get(ch, "target");
        char f[64];
        snprintf(f, sizeof f, "animations[%zu].channels[%zu]", a, i);
        const char *path = json_string_value(json_object_get(tg, "path"));
        json_t *node = json_object_get(tg, "node");
        if (!path) return ikd__gltf_fail(err, IKD_E_INVALID, f, "needs a target path");
        int p = !strcmp(path, "translation") ? 0 : !strcmp(path, "rotation") ? 1 : !strcmp(path, "scale") ? 2 : -1;
        /* morph target weights, and a channel without a node (the spec: to
         * be ignored, or an extension's such as KHR_animation_pointer): not
         * a pose's */
        if (p < 0 || !node) continue;
        if (!json_is_integer(node) || json_integer_value(node) < 0 || (size_t)json_integer_value(node) >= m->nnodes)
            return ikd__gltf_fail(err, IKD_E_INVALID, f, "needs a target node");
        json_t *sm = json_array_get(sms, (size_t)json_integer_value(json_object_get(ch, "sampler")));
        if (!json_is_object(sm)) return ikd__gltf_fail(err, IKD_E_INVALID, f, "names a sampler that does not exist");
        const char *ip = json_string_value(json_object_get(sm, "interpolation"));
        gchan *x = &c[(*n)++];
        x->node = (long)json_integer_value(node), x->path = p;
        x->interp = !ip || !strcmp(ip, "LINEAR") ? 0 : !strcmp(ip, "STEP") ? 1 : !strcmp(ip, "CUBICSPLINE") ? 2 : -1;
        if (x->interp < 0) return ikd__gltf_fail(err, IKD_E_INVALID, f, "its sampler's interpolation must be LINEAR, STEP or CUBICSPLINE");
        size_t kt, kv;
        int nct, ncv;
        int rc = ikd__gltf_read_accessor(m, (long)json_integer_value(json_object_get(sm, "input")), &x->times, &kt, &nct, err);
        if (rc == IKD_E_OK) rc = ikd__gltf_read_accessor(m, (long)json_integer_value(json_object_get(sm, "output")), &x->values, &kv, &ncv, err);
        if (rc) return rc;
        int want = p == 1 ? 4 : 3;
        if (nct != 1 || ncv != want || kv != kt * (x->interp == 2 ? 3 : 1))
            return ikd__gltf_fail(err, IKD_E_INVALID, f, "its sampler's input and output do not match (count or type)");
        x->keys = kt, x->ncomp = ncv;
        for (size_t k = 1; k < kt; k++)
            if (x->times[k] < x->times[k - 1]) return ikd__gltf_fail(err, IKD_E_INVALID, f, "its sampler's times go backwards");
        if (p == 0)
            for (size_t k = 0; k < kv * 3; k++) x->values[k] *= o->scale > 0 ? o->scale : 1;
        int scales = 0; /* a joint whose scale moves (Blender writes constant scale channels too) */
        for (size_t k = 0; p == 2 && k < kv; k++) {
            const double *v = x->values + k * 3;
            ikd_vec3 rs = m->nodes[x->node].s;
            scales |= fabs(v[0] - rs.x) > 1e-6 || fabs(v[1] - rs.y) > 1e-6 || fabs(v[2] - rs.z) > 1e-6;
        }
        if (scales) { /* not represented in poses */
            long q = x->node;
            while (q >= 0 && m->nodes[q].joint < 0) q = m->nodes[q].parent;
            if (q >= 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "the scale of %.60s is animated: poses carry no scale (joints below it will not match)",
                         g->joints[m->nodes[q].joint].name);
                ikd_file_warn(&g->warnings, "scale_animated", f, msg);
            }
        }
    }
    return IKD_E_OK;
}

static void free_channels(gchan *c, size_t n)
{
    for (size_t i = 0; i < n; i++) free(c[i].times), free(c[i].values);
    free(c);
}

/* Every joint's world position p and rotation r from the nodes' world
 * matrices w (a made root's: the origin). */
static void joints_at(const ikd_gltf *g, const double *w, ikd_vec3 *p, ikd_quat *r)
{
    for (size_t j = 0; j < g->count; j++) {
        long node = g->joints[j].node;
        if (node >= 0) ikd__gltf_decompose(w + (size_t)node * 16, &p[j], &r[j]);
        else p[j] = ikd_vec3_make(0, 0, 0), r[j] = ikd_quat_identity();
    }
}

/* Joint j's local rotation from the world rotations r (the root's: its world one). */
static ikd_quat local_of(const ikd_gltf *g, const ikd_quat *r, size_t j)
{
    return j ? ikd_quat_norm(ikd_quat_mul(ikd_quat_conj(r[g->joints[j].parent]), r[j])) : r[0];
}

/* One frame's pose from the world matrices. */
static void emit_pose(ikd_gltf *g, const double *w, ikd_emitter *e, ikd_vec3 *p, ikd_quat *r, ikd_vec3 *tr, char *moved)
{
    gltf_model *m = g->m;
    size_t n = g->count;
    int any = 0;
    joints_at(g, w, p, r);
    for (size_t j = 1; j < n; j++) {
        long q = g->joints[j].parent;
        ikd_quat inv = ikd_quat_conj(r[q]), rinv = ikd_quat_conj(g->joints[q].rotation);
        tr[j] = ikd_quat_rotate(inv, ikd_vec3_sub(p[j], p[q]));
        ikd_vec3 rest = ikd_quat_rotate(rinv, ikd_vec3_sub(g->joints[j].position, g->joints[q].position));
        moved[j] = ikd_vec3_dist(tr[j], rest) > 1e-9 * fmax(m->size, 1e-9);
        any |= moved[j];
    }
    ikd_emit_map(e, any ? 3 : 2);
    IKD_EMIT_KEY(e, "root");
    ikd_emit_nums(e, &p[0].x, 3);
    IKD_EMIT_KEY(e, "rotations");
    ikd_emit_array(e, n);
    for (size_t j = 0; j < n; j++) {
        ikd_quat l = local_of(g, r, j);
        ikd_emit_nums(e, &l.x, 4);
    }
    ikd_emit_end(e);
    if (any) {
        IKD_EMIT_KEY(e, "translations");
        ikd_emit_array(e, n);
        for (size_t j = 0; j < n; j++) {
            if (j && moved[j]) ikd_emit_nums(e, &tr[j].x, 3);
            else ikd_emit_null(e);
        }
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
}

/* Animation a's channels and its frames at the sampling rate (its first
 * key's time in *t0); a count over o->max_frames is an error naming it. */
static int anim_frames(ikd_gltf *g, const ikd_gltf_opts *o, size_t a, gchan **c, size_t *nc, double *t0, size_t *frames,
                       ikd_error *err)
{
    double fps = o->fps > 0 ? o->fps : 30;
    *c = NULL, *nc = 0, *frames = 0;
    int rc = load_channels(g, o, a, c, nc, err);
    double t1 = -INFINITY;
    *t0 = INFINITY;
    for (size_t i = 0; rc == IKD_E_OK && i < *nc; i++)
        *t0 = fmin(*t0, (*c)[i].times[0]), t1 = fmax(t1, (*c)[i].times[(*c)[i].keys - 1]);
    if (!*nc || rc != IKD_E_OK) *t0 = t1 = 0;
    double span = (t1 - *t0) * fps;
    if (rc == IKD_E_OK && span + 1 > (double)o->max_frames) {
        g->too_large = 1;
        char f[48];
        snprintf(f, sizeof f, "animations[%zu]", a);
        rc = ikd__gltf_fail(err, IKD_E_INVALID, f, "sampled at the fps asked for, the animation has more frames than --max-frames");
    }
    if (rc == IKD_E_OK) *frames = (size_t)floor(span + 1e-9) + 1;
    return rc;
}

/* Every node's world matrix into w at `time` of the animation whose
 * channels are c[0..nc) (t, r, s: scratch per node). */
static void world_at(gltf_model *m, const gchan *c, size_t nc, double time, ikd_vec3 *t, ikd_quat *r, ikd_vec3 *s, double *w)
{
    for (size_t i = 0; i < m->nnodes; i++) t[i] = m->nodes[i].t, r[i] = m->nodes[i].r, s[i] = m->nodes[i].s;
    for (size_t i = 0; i < nc; i++) {
        double v[4];
        sample(&c[i], time, v);
        if (c[i].path == 0) t[c[i].node] = ikd_vec3_make(v[0], v[1], v[2]);
        else if (c[i].path == 1) r[c[i].node] = ikd_quat_norm(ikd_quat_make(v[0], v[1], v[2], v[3]));
        else s[c[i].node] = ikd_vec3_make(v[0], v[1], v[2]);
    }
    ikd__gltf_world_all(m, t, r, s, w);
}

int ikd_gltf_emit_clips(ikd_gltf *g, const ikd_gltf_opts *o, ikd_emitter *e, ikd_error *err)
{
    gltf_model *m = g->m;
    double fps = o->fps > 0 ? o->fps : 30;
    size_t nn = m->nnodes, n = g->count;
    ikd_vec3 *t = malloc(nn * sizeof *t), *s = malloc(nn * sizeof *s), *p = malloc(n * sizeof *p), *tr = malloc(n * sizeof *tr);
    ikd_quat *r = malloc(nn * sizeof *r), *wr = malloc(n * sizeof *wr);
    double *w = malloc(nn * 16 * sizeof *w);
    char *moved = calloc(n, 1);
    int rc = IKD_E_OK;
    if (!t || !s || !p || !tr || !r || !wr || !w || !moved) rc = ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    for (size_t a = 0; rc == IKD_E_OK && a < g->animations; a++) {
        gchan *c = NULL;
        size_t nc = 0, frames = 0;
        double t0 = 0;
        rc = anim_frames(g, o, a, &c, &nc, &t0, &frames, err);
        if (rc == IKD_E_OK) {
            const char *name = json_string_value(json_object_get(json_array_get(json_object_get(m->root, "animations"), a), "name"));
            char fallback[32];
            snprintf(fallback, sizeof fallback, "animation%zu", a);
            ikd_emit_map(e, 4);
            IKD_EMIT_KEY(e, "name");
            ikd_emit_str(e, name && *name ? name : fallback);
            IKD_EMIT_KEY(e, "fps");
            ikd_emit_num(e, fps);
            IKD_EMIT_KEY(e, "frame_time");
            ikd_emit_num(e, 1 / fps);
            IKD_EMIT_KEY(e, "poses");
            ikd_emit_array(e, frames);
            for (size_t k = 0; k < frames; k++) {
                world_at(m, c, nc, t0 + (double)k / fps, t, r, s, w);
                emit_pose(g, w, e, p, wr, tr, moved);
            }
            ikd_emit_end(e);
            ikd_emit_end(e);
        }
        free_channels(c, nc);
    }
    free(t), free(s), free(p), free(tr), free(r), free(wr), free(w), free(moved);
    return rc;
}

int ikd_gltf_sample_rotations(ikd_gltf *g, const ikd_gltf_opts *o, ikd_quat **out, size_t *frames, ikd_error *err)
{
    gltf_model *m = g->m;
    double fps = o->fps > 0 ? o->fps : 30;
    size_t nn = m->nnodes, n = g->count, total = 0;
    ikd_vec3 *t = malloc(nn * sizeof *t), *s = malloc(nn * sizeof *s), *p = malloc(n * sizeof *p);
    ikd_quat *r = malloc(nn * sizeof *r), *wr = malloc(n * sizeof *wr), *all = NULL;
    double *w = malloc(nn * 16 * sizeof *w);
    int rc = IKD_E_OK;
    if (!t || !s || !p || !r || !wr || !w) rc = ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    for (size_t a = 0; rc == IKD_E_OK && a < g->animations; a++) {
        gchan *c = NULL;
        size_t nc = 0, fr = 0;
        double t0 = 0;
        rc = anim_frames(g, o, a, &c, &nc, &t0, &fr, err);
        ikd_quat *grown = rc == IKD_E_OK && fr ? realloc(all, (total + fr) * n * sizeof *all) : all;
        if (rc == IKD_E_OK && fr && !grown) rc = ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
        else all = grown;
        for (size_t k = 0; rc == IKD_E_OK && k < fr; k++, total++) {
            world_at(m, c, nc, t0 + (double)k / fps, t, r, s, w);
            joints_at(g, w, p, wr);
            for (size_t j = 0; j < n; j++) all[total * n + j] = local_of(g, wr, j);
        }
        free_channels(c, nc);
    }
    free(t), free(s), free(p), free(r), free(wr), free(w);
    if (rc != IKD_E_OK) free(all), all = NULL, total = 0;
    *out = all, *frames = total;
    return rc;
}
