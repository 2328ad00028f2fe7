/* gltf.c - glTF 2.0 (.glb, and .gltf with data: buffers) read into a skin's joint tree and its animations sampled as poses. */
#include "gltf.h"
#include "gltf_model.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ikd__gltf_fail(ikd_error *err, int code, const char *field, const char *msg)
{
    return ikd_error_set(err, code, field, "%s", msg);
}

static int failf(ikd_error *err, const char *fieldfmt, long idx, const char *msg)
{
    char field[64];
    snprintf(field, sizeof field, fieldfmt, idx);
    return ikd_error_set(err, IKD_E_INVALID, field, "%s", msg);
}

/* ---- buffers ------------------------------------------------------------ */

static int b64v(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* base64 text into a new buffer; NULL when it is not base64 (or out of memory). */
static unsigned char *base64(const char *s, size_t n, size_t *out_len)
{
    unsigned char *o = malloc(n / 4 * 3 + 3);
    size_t k = 0;
    unsigned acc = 0;
    int bits = 0;
    if (!o) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '=') break;
        int v = b64v((unsigned char)s[i]);
        if (v < 0) {
            free(o);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (unsigned char)(acc >> bits);
        }
    }
    *out_len = k;
    return o;
}

static int load_buffers(gltf_model *m, const unsigned char *bin, size_t bin_len, ikd_error *err)
{
    json_t *bs = json_object_get(m->root, "buffers");
    m->nbuf = json_is_array(bs) ? json_array_size(bs) : 0;
    m->buf = calloc(m->nbuf + 1, sizeof *m->buf);
    m->buf_len = calloc(m->nbuf + 1, sizeof *m->buf_len);
    m->buf_owned = calloc(m->nbuf + 1, 1);
    int meshopt = 0; /* EXT_meshopt_compression used: a buffer after the first may be a fallback without data */
    json_t *used = json_object_get(m->root, "extensionsUsed"), *name;
    size_t k;
    json_array_foreach(used, k, name) meshopt |= json_is_string(name) && !strcmp(json_string_value(name), "EXT_meshopt_compression");
    if (!m->buf || !m->buf_len || !m->buf_owned) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    for (size_t i = 0; i < m->nbuf; i++) {
        json_t *b = json_array_get(bs, i), *uri = json_object_get(b, "uri");
        json_t *bl = json_object_get(b, "byteLength");
        if (!json_is_integer(bl) || json_integer_value(bl) < 0) return failf(err, "buffers[%ld].byteLength", (long)i, "must be an integer >= 0");
        size_t want = (size_t)json_integer_value(bl);
        json_t *fb = json_object_get(json_object_get(json_object_get(b, "extensions"), "EXT_meshopt_compression"), "fallback");
        if (!uri && (json_is_true(fb) || (i > 0 && meshopt))) {
            continue; /* a meshopt fallback holds no data (only views compressed point at it: view_span) */
        } else if (!uri) {
            if (i != 0 || !bin) return failf(err, "buffers[%ld].uri", (long)i, "is required (only a .glb's first buffer has none)");
            m->buf[i] = (unsigned char *)bin, m->buf_len[i] = bin_len;
        } else {
            const char *u = json_string_value(uri);
            const char *comma = u ? strchr(u, ',') : NULL;
            if (!u || strncmp(u, "data:", 5) != 0 || !comma || !strstr(u, ";base64"))
                return failf(err, "buffers[%ld].uri", (long)i,
                             "only data: URIs (base64) in the file itself are read; nothing is fetched");
            m->buf[i] = base64(comma + 1, strlen(comma + 1), &m->buf_len[i]);
            if (!m->buf[i]) return failf(err, "buffers[%ld].uri", (long)i, "is not valid base64");
            m->buf_owned[i] = 1;
        }
        if (m->buf_len[i] < want) return failf(err, "buffers[%ld].byteLength", (long)i, "is more than the buffer holds");
    }
    return IKD_E_OK;
}

size_t ikd__gltf_buffer_bytes(const gltf_model *m)
{
    size_t bytes = 0;
    for (size_t i = 0; i < m->nbuf; i++) bytes += m->buf_len[i];
    return bytes;
}

/* One component at p as a double: floats, and normalized or plain integers. */
static double component(const unsigned char *p, long ct, int norm)
{
    if (ct == 5126) {
        float f;
        uint32_t u = ikd__gltf_le32(p);
        memcpy(&f, &u, 4);
        return f;
    }
    if (ct == 5125) return ikd__gltf_le32(p);
    if (ct == 5123 || ct == 5122) {
        unsigned u = p[0] | (unsigned)p[1] << 8;
        double v = ct == 5122 ? (double)(int16_t)u : (double)u;
        return !norm ? v : ct == 5122 ? fmax(v / 32767.0, -1.0) : v / 65535.0;
    }
    double v = ct == 5120 ? (double)(int8_t)p[0] : (double)p[0];
    return !norm ? v : ct == 5120 ? fmax(v / 127.0, -1.0) : v / 255.0;
}

/* Where n elements of elem bytes start in bufferView `view` at byte off
 * (*stride apart: the view's byteStride, or elem; packed: elem always),
 * or NULL with err set on `field`, the view's member (`run`, the elements'
 * object, when they run past the view); both formats take accessor a. */
static const unsigned char *view_span(gltf_model *m, json_t *view, json_int_t off, size_t n, size_t elem, int packed,
                                      size_t *stride, const char *field, const char *run, long a, ikd_error *err)
{
    if (!json_is_integer(view)) return failf(err, field, a, "is required"), NULL;
    json_int_t vi = json_integer_value(view);
    json_t *bv = json_array_get(json_object_get(m->root, "bufferViews"), (size_t)vi);
    if (!json_is_object(bv)) return failf(err, field, a, "there is no such bufferView"), NULL;
    json_t *mx = json_object_get(json_object_get(bv, "extensions"), "EXT_meshopt_compression");
    size_t buffer = (size_t)json_integer_value(json_object_get(bv, "buffer"));
    json_int_t voff = json_integer_value(json_object_get(bv, "byteOffset")), vlen = json_integer_value(json_object_get(bv, "byteLength"));
    json_int_t st = packed ? 0 : json_integer_value(json_object_get(bv, "byteStride"));
    if (st == 0) st = (json_int_t)elem;
    const unsigned char *data = NULL;
    if (mx) { /* the decoded bytes stand for the view's own (its buffer is a fallback, often without data) */
        if (ikd__gltf_meshopt_view(m, (size_t)vi, bv, mx, &data, err) != IKD_E_OK) return NULL;
        voff = 0;
    } else if (buffer < m->nbuf && voff >= 0 && vlen >= 0 && (size_t)voff + (size_t)vlen <= m->buf_len[buffer]) {
        data = m->buf[buffer];
    }
    if (!data || off < 0 || st < (json_int_t)elem || st > 252)
        return failf(err, field, a, "its bufferView lies outside its buffer"), NULL;
    if ((size_t)off + (n - 1) * (size_t)st + elem > (size_t)vlen || n > (size_t)vlen)
        return failf(err, run, a, "runs past the end of its bufferView"), NULL;
    *stride = (size_t)st;
    return data + voff + off;
}

/* The sparse part of accessor `a` (sp) written over o (n elements of nc
 * components of csize bytes): strictly increasing indices below n, and
 * their values. */
static int read_sparse(gltf_model *m, long a, json_t *sp, long ct, int csize, int norm, double *o, size_t n, int nc, ikd_error *err)
{
    json_t *c = json_object_get(sp, "count"), *ix = json_object_get(sp, "indices"), *vals = json_object_get(sp, "values");
    if (!json_is_integer(c) || json_integer_value(c) < 1 || (size_t)json_integer_value(c) > n)
        return failf(err, "accessors[%ld].sparse.count", a, "must be an integer from 1 to the accessor's count");
    size_t k = (size_t)json_integer_value(c), ist, vst;
    long ict = (long)json_integer_value(json_object_get(ix, "componentType"));
    int isize = ict == 5125 ? 4 : ict == 5123 ? 2 : ict == 5121 ? 1 : 0;
    if (!isize) return failf(err, "accessors[%ld].sparse.indices.componentType", a, "must be 5121, 5123 or 5125");
    const unsigned char *ip = view_span(m, json_object_get(ix, "bufferView"), json_integer_value(json_object_get(ix, "byteOffset")), k,
                                        (size_t)isize, 1, &ist, "accessors[%ld].sparse.indices.bufferView", "accessors[%ld].sparse.indices", a, err);
    if (!ip) return err->code;
    const unsigned char *vp = view_span(m, json_object_get(vals, "bufferView"), json_integer_value(json_object_get(vals, "byteOffset")),
                                        k, (size_t)csize * (size_t)nc, 1, &vst, "accessors[%ld].sparse.values.bufferView", "accessors[%ld].sparse.values", a, err);
    if (!vp) return err->code;
    size_t prev = 0;
    for (size_t i = 0; i < k; i++) {
        const unsigned char *q = ip + i * (size_t)isize;
        size_t at = isize == 4 ? ikd__gltf_le32(q) : isize == 2 ? (size_t)(q[0] | q[1] << 8) : q[0];
        if (at >= n || (i && at <= prev))
            return failf(err, "accessors[%ld].sparse.indices", a, "must be strictly increasing and below the accessor's count");
        prev = at;
        for (int j = 0; j < nc; j++) o[at * (size_t)nc + (size_t)j] = component(vp + i * vst + (size_t)j * (size_t)csize, ct, norm);
    }
    return IKD_E_OK;
}

/* Accessor `a` as doubles: *count elements of *ncomp components (a malloc'd
 * array in *out). Floats, and normalized or plain integers; with no
 * bufferView, zeros; a sparse part written over either (glTF 2.0, 3.6.2). */
int ikd__gltf_read_accessor(gltf_model *m, long a, double **out, size_t *count, int *ncomp, ikd_error *err)
{
    json_t *acc = json_array_get(json_object_get(m->root, "accessors"), (size_t)a);
    if (!json_is_object(acc)) return failf(err, "accessors[%ld]", a, "there is no such accessor");
    const char *type = json_string_value(json_object_get(acc, "type"));
    static const struct { const char *name; int n; } types[] = {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT4", 16}};
    int nc = 0;
    for (size_t i = 0; type && i < 5; i++)
        if (!strcmp(type, types[i].name)) nc = types[i].n;
    if (!nc) return failf(err, "accessors[%ld].type", a, "must be SCALAR, VEC2, VEC3, VEC4 or MAT4");
    long ct = (long)json_integer_value(json_object_get(acc, "componentType"));
    int csize = ct == 5126 || ct == 5125 ? 4 : ct == 5122 || ct == 5123 ? 2 : ct == 5120 || ct == 5121 ? 1 : 0;
    if (!csize) return failf(err, "accessors[%ld].componentType", a, "must be 5120-5123, 5125 or 5126");
    json_t *c = json_object_get(acc, "count"), *bvi = json_object_get(acc, "bufferView"), *sp = json_object_get(acc, "sparse");
    if (!json_is_integer(c) || json_integer_value(c) < 1) return failf(err, "accessors[%ld].count", a, "must be an integer >= 1");
    size_t n = (size_t)json_integer_value(c), stride = 0;
    if (sp && !json_is_object(sp)) return failf(err, "accessors[%ld].sparse", a, "must be an object");
    const unsigned char *base = NULL;
    if (bvi || !sp) { /* only a sparse accessor may leave out its bufferView (then it starts as zeros) */
        base = view_span(m, bvi, json_integer_value(json_object_get(acc, "byteOffset")), n, (size_t)csize * (size_t)nc, 0, &stride,
                         "accessors[%ld].bufferView", "accessors[%ld]", a, err);
        if (!base) return err->code;
    } else if (n > ikd__gltf_buffer_bytes(m)) { /* the buffers' bytes bound an accessor of zeros as they bound one of data */
        return failf(err, "accessors[%ld].count", a, "is more elements than the file's buffers hold bytes");
    }
    int norm = json_is_true(json_object_get(acc, "normalized"));
    double *o = calloc(n * (size_t)nc, sizeof *o);
    if (!o) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    for (size_t i = 0; base && i < n; i++)
        for (int k = 0; k < nc; k++) o[i * (size_t)nc + (size_t)k] = component(base + i * stride + (size_t)k * (size_t)csize, ct, norm);
    if (sp && read_sparse(m, a, sp, ct, csize, norm, o, n, nc, err) != IKD_E_OK) {
        free(o);
        return err->code;
    }
    for (size_t i = 0; i < n * (size_t)nc; i++)
        if (!isfinite(o[i])) {
            free(o);
            return failf(err, "accessors[%ld]", a, "holds a number that is not finite");
        }
    *out = o, *count = n, *ncomp = nc;
    return IKD_E_OK;
}

/* ---- nodes -------------------------------------------------------------- */

static int read_numbers(json_t *v, double *out, size_t n)
{
    if (!json_is_array(v) || json_array_size(v) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_number(x)) return 0;
        out[i] = json_number_value(x);
        if (!isfinite(out[i])) return 0;
    }
    return 1;
}

static int load_nodes(gltf_model *m, double scale, ikd_error *err)
{
    json_t *ns = json_object_get(m->root, "nodes");
    m->nnodes = json_is_array(ns) ? json_array_size(ns) : 0;
    if (!m->nnodes) return ikd__gltf_fail(err, IKD_E_INVALID, "nodes", "the file has no nodes");
    m->nodes = calloc(m->nnodes, sizeof *m->nodes);
    if (!m->nodes) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    for (size_t i = 0; i < m->nnodes; i++) m->nodes[i].parent = -1, m->nodes[i].joint = -1;
    for (size_t i = 0; i < m->nnodes; i++) {
        json_t *n = json_array_get(ns, i), *v;
        gnode *g = &m->nodes[i];
        double d[16];
        g->t = ikd_vec3_make(0, 0, 0), g->s = ikd_vec3_make(1, 1, 1), g->r = ikd_quat_identity();
        if (!json_is_object(n)) return failf(err, "nodes[%ld]", (long)i, "must be an object");
        if ((v = json_object_get(n, "translation"))) {
            if (!read_numbers(v, d, 3)) return failf(err, "nodes[%ld].translation", (long)i, "must be three numbers");
            g->t = ikd_vec3_scale(ikd_vec3_make(d[0], d[1], d[2]), scale);
        }
        if ((v = json_object_get(n, "rotation"))) {
            if (!read_numbers(v, d, 4) || fabs(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) - 1) > 1e-3)
                return failf(err, "nodes[%ld].rotation", (long)i, "must be a unit quaternion [x, y, z, w]");
            g->r = ikd_quat_norm(ikd_quat_make(d[0], d[1], d[2], d[3]));
        }
        if ((v = json_object_get(n, "scale"))) {
            if (!read_numbers(v, d, 3)) return failf(err, "nodes[%ld].scale", (long)i, "must be three numbers");
            g->s = ikd_vec3_make(d[0], d[1], d[2]);
        }
        if ((v = json_object_get(n, "matrix"))) {
            if (!read_numbers(v, g->m, 16)) return failf(err, "nodes[%ld].matrix", (long)i, "must be 16 numbers");
            g->m[12] *= scale, g->m[13] *= scale, g->m[14] *= scale;
            g->has_matrix = 1;
        }
        json_t *ch = json_object_get(n, "children");
        for (size_t k = 0; json_is_array(ch) && k < json_array_size(ch); k++) {
            json_t *c = json_array_get(ch, k);
            json_int_t ci = json_integer_value(c);
            if (!json_is_integer(c) || ci < 0 || (size_t)ci >= m->nnodes)
                return failf(err, "nodes[%ld].children", (long)i, "names a node that does not exist");
            if (m->nodes[ci].parent >= 0 || (size_t)ci == i)
                return failf(err, "nodes[%ld].children", (long)i, "a node is a child twice (the nodes must form trees)");
            m->nodes[ci].parent = (long)i;
        }
    }
    /* parents before children: roots first, then each listed node's children (a node left
     * out is on a cycle: it has a parent but no root above it) */
    m->order = malloc(m->nnodes * sizeof *m->order);
    if (!m->order) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    long *first = malloc(m->nnodes * sizeof *first), *next = malloc(m->nnodes * sizeof *next);
    if (!first || !next) {
        free(first), free(next);
        return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < m->nnodes; i++) first[i] = next[i] = -1;
    for (size_t i = m->nnodes; i-- > 0;) /* children lists, in index order */
        if (m->nodes[i].parent >= 0) next[i] = first[m->nodes[i].parent], first[m->nodes[i].parent] = (long)i;
    size_t n = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].parent < 0) m->order[n++] = i;
    for (size_t head = 0; head < n; head++)
        for (long c = first[m->order[head]]; c >= 0; c = next[c]) m->order[n++] = (size_t)c;
    free(first), free(next);
    if (n < m->nnodes)
        for (size_t i = 0; i < m->nnodes; i++) {
            size_t k = 0;
            while (k < n && m->order[k] != i) k++;
            if (k == n) return failf(err, "nodes[%ld].children", (long)i, "the nodes form a cycle");
        }
    return IKD_E_OK;
}

/* 4x4 column-major products and a node's local matrix. */
static void mat_mul(const double *a, const double *b, double *o)
{
    double r[16];
    for (int c = 0; c < 4; c++)
        for (int rr = 0; rr < 4; rr++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a[k * 4 + rr] * b[c * 4 + k];
            r[c * 4 + rr] = s;
        }
    memcpy(o, r, sizeof r);
}

static void trs_matrix(ikd_vec3 t, ikd_quat q, ikd_vec3 s, double *m)
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                   2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                   2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)};
    double sc[3] = {s.x, s.y, s.z};
    for (int c = 0; c < 3; c++) {
        for (int rr = 0; rr < 3; rr++) m[c * 4 + rr] = r[c * 3 + rr] * sc[c];
        m[c * 4 + 3] = 0;
    }
    m[12] = t.x, m[13] = t.y, m[14] = t.z, m[15] = 1;
}

/* A world matrix's position and its rotation with scale left out. */
void ikd__gltf_decompose(const double *m, ikd_vec3 *p, ikd_quat *q)
{
    *p = ikd_vec3_make(m[12], m[13], m[14]);
    double c[3][3];
    for (int k = 0; k < 3; k++) {
        double l = sqrt(m[k * 4] * m[k * 4] + m[k * 4 + 1] * m[k * 4 + 1] + m[k * 4 + 2] * m[k * 4 + 2]);
        if (l == 0) l = 1;
        for (int rr = 0; rr < 3; rr++) c[k][rr] = m[k * 4 + rr] / l;
    }
    /* rotation matrix R[row][col] = c[col][row] to a quaternion */
    double r00 = c[0][0], r11 = c[1][1], r22 = c[2][2], tr = r00 + r11 + r22, x, y, z, w;
    if (tr > 0) {
        double s = sqrt(tr + 1) * 2;
        w = s / 4, x = (c[1][2] - c[2][1]) / s, y = (c[2][0] - c[0][2]) / s, z = (c[0][1] - c[1][0]) / s;
    } else if (r00 > r11 && r00 > r22) {
        double s = sqrt(1 + r00 - r11 - r22) * 2;
        w = (c[1][2] - c[2][1]) / s, x = s / 4, y = (c[1][0] + c[0][1]) / s, z = (c[2][0] + c[0][2]) / s;
    } else if (r11 > r22) {
        double s = sqrt(1 + r11 - r00 - r22) * 2;
        w = (c[2][0] - c[0][2]) / s, x = (c[1][0] + c[0][1]) / s, y = s / 4, z = (c[2][1] + c[1][2]) / s;
    } else {
        double s = sqrt(1 + r22 - r00 - r11) * 2;
        w = (c[0][1] - c[1][0]) / s, x = (c[2][0] + c[0][2]) / s, y = (c[2][1] + c[1][2]) / s, z = s / 4;
    }
    *q = ikd_quat_norm(ikd_quat_make(x, y, z, w));
}

/* World matrices of every node for local TRS `t, r, s` (matrix nodes: theirs). */
void ikd__gltf_world_all(const gltf_model *m, const ikd_vec3 *t, const ikd_quat *r, const ikd_vec3 *s, double *world)
{
    for (size_t o = 0; o < m->nnodes; o++) {
        size_t k = m->order[o];
        double local[16];
        if (m->nodes[k].has_matrix) memcpy(local, m->nodes[k].m, sizeof local);
        else trs_matrix(t[k], r[k], s[k], local);
        long p = m->nodes[k].parent;
        if (p >= 0) mat_mul(world + (size_t)p * 16, local, world + k * 16);
        else memcpy(world + k * 16, local, sizeof local);
    }
}

/* ---- the skeleton --------------------------------------------------------- */

static void node_name(const gltf_model *m, long node, char *out, size_t n)
{
    const char *name = json_string_value(json_object_get(json_array_get(json_object_get(m->root, "nodes"), (size_t)node), "name"));
    if (name && *name) snprintf(out, n, "%.*s", (int)ikd_utf8_prefix(name, n - 1), name);
    else snprintf(out, n, "node%ld", node);
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '_';
}

/* The rest world matrices of every node (malloc'd, 16 doubles a node). */
static double *rest_world(const gltf_model *m)
{
    double *w = malloc(m->nnodes * 16 * sizeof *w);
    ikd_vec3 *t = malloc(m->nnodes * sizeof *t), *sc = malloc(m->nnodes * sizeof *sc);
    ikd_quat *r = malloc(m->nnodes * sizeof *r);
    if (w && t && sc && r) {
        for (size_t i = 0; i < m->nnodes; i++) t[i] = m->nodes[i].t, r[i] = m->nodes[i].r, sc[i] = m->nodes[i].s;
        ikd__gltf_world_all(m, t, r, sc, w);
    } else {
        free(w);
        w = NULL;
    }
    free(t), free(sc), free(r);
    return w;
}

static int build_skeleton(ikd_gltf *g, const ikd_gltf_opts *o, ikd_error *err)
{
    gltf_model *m = g->m;
    size_t nj = 0;
    int rc = ikd__gltf_mark_joints(g, o, &nj, err);
    if (rc != IKD_E_OK) return rc;
    /* the tops: joints with no joint above them */
    size_t tops = 0;
    long top = -1;
    for (size_t i = 0; i < m->nnodes; i++) {
        if (m->nodes[i].joint != -2) continue;
        long p = m->nodes[i].parent;
        while (p >= 0 && m->nodes[p].joint != -2) p = m->nodes[p].parent;
        if (p < 0) tops++, top = top < 0 ? (long)i : top;
    }
    size_t n = nj + (tops > 1);
    if (n > o->max_joints) {
        g->too_large = 1;
        return ikd__gltf_fail(err, IKD_E_INVALID, "skins", "the skin has more joints than --max-joints allows");
    }
    g->joints = calloc(n, sizeof *g->joints);
    double *w = rest_world(m);
    if (!g->joints || !w) {
        free(w);
        return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    }
    m->made_root_node = -1;
    size_t count = 0;
    if (tops > 1) { /* several trees: one root made for them, at their nearest common ancestor */
        long anc = m->nodes[top].parent;
        for (; anc >= 0; anc = m->nodes[anc].parent) {
            size_t under = 0;
            for (size_t i = 0; i < m->nnodes; i++) {
                if (m->nodes[i].joint != -2) continue;
                long p = m->nodes[i].parent;
                while (p >= 0 && p != anc) p = m->nodes[p].parent;
                under += p == anc;
            }
            if (under == nj) break;
        }
        m->made_root_node = anc;
        ikd_gltf_joint *r = &g->joints[count++];
        if (anc >= 0) {
            node_name(m, anc, r->name, sizeof r->name);
            ikd__gltf_decompose(w + (size_t)anc * 16, &r->position, &r->rotation);
        } else {
            snprintf(r->name, sizeof r->name, "root");
            r->position = ikd_vec3_make(0, 0, 0), r->rotation = ikd_quat_identity();
        }
        r->parent = -1, r->node = anc >= 0 ? anc : -1;
        char msg[160];
        snprintf(msg, sizeof msg, "the skin's joints form %zu trees: joined under %.60s", tops, r->name);
        ikd_file_warn(&g->warnings, "skin_trees", "skins", msg);
    }
    for (size_t oi = 0; oi < m->nnodes; oi++) { /* parents before children */
        size_t i = m->order[oi];
        if (m->nodes[i].joint != -2) continue;
        long p = m->nodes[i].parent;
        while (p >= 0 && m->nodes[p].joint < 0) p = m->nodes[p].parent;
        ikd_gltf_joint *j = &g->joints[count];
        m->nodes[i].joint = (long)count;
        j->parent = p >= 0 ? m->nodes[p].joint : (tops > 1 ? 0 : -1);
        j->node = (long)i;
        node_name(m, (long)i, j->name, sizeof j->name);
        ikd__gltf_decompose(w + i * 16, &j->position, &j->rotation);
        count++;
    }
    g->count = count;
    for (size_t a = 1; a < count; a++) /* unique names: later ones get _2, _3 */
        for (int k = 2; k < 1000; k++) {
            size_t b = 0;
            while (b < a && strcmp(g->joints[b].name, g->joints[a].name)) b++;
            if (b == a) break;
            const char *base = g->joints[b].name; /* cut to leave room for the suffix */
            snprintf(g->joints[a].name, sizeof g->joints[a].name, "%.*s_%d", (int)ikd_utf8_prefix(base, IKD_GLTF_NAME_MAX - 8), base, k);
        }
    m->size = 0;
    for (size_t k = 0; k < count; k++) m->size = fmax(m->size, ikd_vec3_dist(g->joints[k].position, g->joints[0].position));
    free(w);
    return IKD_E_OK;
}

/* ---- reading -------------------------------------------------------------- */

int ikd_gltf_read(const char *data, size_t len, const ikd_gltf_opts *o, ikd_gltf *g, ikd_error *err)
{
    memset(g, 0, sizeof *g);
    ikd_error_clear(err);
    g->m = calloc(1, sizeof *g->m);
    if (!g->m) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    gltf_model *m = g->m;
    const char *json = data;
    size_t json_len = len;
    const unsigned char *bin = NULL;
    size_t bin_len = 0;
    if (len >= 4 && memcmp(data, "glTF", 4) == 0) { /* the GLB container */
        const unsigned char *p = (const unsigned char *)data;
        g->binary = 1;
        if (len < 20) return ikd__gltf_fail(err, IKD_E_INVALID, "glb", "a GLB is at least 20 bytes (its header and a chunk's)");
        if (ikd__gltf_le32(p + 4) != 2) return ikd__gltf_fail(err, IKD_E_INVALID, "glb.version", "only glTF 2 is read");
        if (ikd__gltf_le32(p + 8) != len) return ikd__gltf_fail(err, IKD_E_INVALID, "glb.length", "the header's length is not the body's: cut short?");
        size_t at = 12;
        for (int c = 0; at < len; c++) {
            char f[32];
            snprintf(f, sizeof f, "glb.chunks[%d]", c);
            if (len - at < 8) return ikd__gltf_fail(err, IKD_E_INVALID, f, "a chunk header runs past the end");
            size_t cl = ikd__gltf_le32(p + at);
            uint32_t type = ikd__gltf_le32(p + at + 4);
            if (cl > len - at - 8) return ikd__gltf_fail(err, IKD_E_INVALID, f, "the chunk's length runs past the end");
            if (c == 0 && type != 0x4E4F534A) return ikd__gltf_fail(err, IKD_E_INVALID, f, "the first chunk must be JSON");
            if (c == 0) json = data + at + 8, json_len = cl;
            if (c == 1 && type == 0x004E4942) bin = p + at + 8, bin_len = cl;
            at += 8 + cl;
        }
    }
    json_error_t jerr;
    m->root = json_loadb(json, json_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!m->root)
        return ikd_error_set(err, IKD_E_INVALID, g->binary ? "glb.chunks[0]" : "", "malformed glTF JSON at line %d column %d: %s",
                             jerr.line, jerr.column, jerr.text);
    if (!json_is_object(m->root)) return ikd__gltf_fail(err, IKD_E_INVALID, "", "a glTF document is a JSON object");
    const char *ver = json_string_value(json_object_get(json_object_get(m->root, "asset"), "version"));
    if (!ver || strncmp(ver, "2.", 2) != 0) return ikd__gltf_fail(err, IKD_E_INVALID, "asset.version", "only glTF 2.x is read");
    int rc = load_buffers(m, bin, bin_len, err);
    if (rc == IKD_E_OK) rc = load_nodes(m, o->scale > 0 ? o->scale : 1, err);
    if (rc == IKD_E_OK) rc = build_skeleton(g, o, err);
    json_t *anims = json_object_get(m->root, "animations");
    g->animations = json_is_array(anims) ? json_array_size(anims) : 0;
    return rc;
}

/* The joint of node `node`, or -1. */
static long joint_of_node(const ikd_gltf *g, json_t *node)
{
    if (!json_is_integer(node)) return -1;
    for (size_t j = 0; j < g->count; j++)
        if (g->joints[j].node == json_integer_value(node)) return (long)j;
    return -1;
}

size_t ikd_gltf_vrm_bones(const ikd_gltf *g, const char **bones)
{
    for (size_t j = 0; j < g->count; j++) bones[j] = NULL;
    if (!g->m || !g->m->root) return 0;
    json_t *ext = json_object_get(g->m->root, "extensions"), *hb, *v;
    size_t found = 0, i;
    const char *key;
    hb = json_object_get(json_object_get(json_object_get(ext, "VRMC_vrm"), "humanoid"), "humanBones");
    if (json_is_object(hb)) { /* VRM 1.0: {"hips": {"node": 3}, ...} */
        json_object_foreach(hb, key, v) {
            long j = joint_of_node(g, json_object_get(v, "node"));
            if (j >= 0 && !bones[j]) bones[j] = key, found++;
        }
        return found;
    }
    hb = json_object_get(json_object_get(json_object_get(ext, "VRM"), "humanoid"), "humanBones");
    json_array_foreach(hb, i, v) { /* VRM 0.x: [{"bone": "hips", "node": 3}, ...] */
        const char *bone = json_string_value(json_object_get(v, "bone"));
        long j = joint_of_node(g, json_object_get(v, "node"));
        if (bone && j >= 0 && !bones[j]) bones[j] = bone, found++;
    }
    return found;
}

void ikd_gltf_free(ikd_gltf *g)
{
    gltf_model *m = g->m;
    if (m) {
        for (size_t i = 0; i < m->nbuf; i++)
            if (m->buf_owned && m->buf_owned[i]) free(m->buf[i]);
        free(m->buf), free(m->buf_len), free(m->buf_owned);
        free(m->nodes), free(m->order);
        size_t nviews = json_array_size(json_object_get(m->root, "bufferViews"));
        for (size_t i = 0; m->decoded && i < nviews; i++) free(m->decoded[i]);
        free(m->decoded);
        if (m->root) json_decref(m->root);
        free(m);
    }
    free(g->joints);
    memset(g, 0, sizeof *g);
}

