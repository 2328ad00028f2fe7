/* import.c - POST /v1/import: a file (BVH today) read into a skeleton and its clips, as the other endpoints take them. */
#include "import.h"

#include "humanoid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../codec/bvh.h"
#include "../codec/gltf.h"
#include "reclimits.h"
#include "robot.h"
#include "reply.h"
#include "wire.h"

const char *const ikd_import_arg_names[IKD_IMPORT__ARGS] = {"format", "scale", "fps", "skin", "humanoid", "limits"};

static int bad_arg(ikd_error *err, int which, const char *what)
{
    char field[32];
    snprintf(field, sizeof field, "query.%s", ikd_import_arg_names[which]);
    return ikd_error_set(err, IKD_E_INVALID, field, "%s", what);
}

static int one_of(const char *v, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(v, *list) == 0) return 1;
    return 0;
}

static int positive(const char *v, double *out)
{
    char *e;
    double d = strtod(v, &e);
    if (e == v || *e || !isfinite(d) || d <= 0) return 0;
    *out = d;
    return 1;
}

int ikd_import_opts_parse(ikd_import_opts *o, const char *const args[IKD_IMPORT__ARGS], ikd_error *err)
{
    static const char *const formats[] = {"bvh", "glb", "gltf", "urdf", NULL};
    static const char *const humanoid[] = {"auto", "off", NULL};
    static const char *const limits[] = {"file", "humanoid", "none", "recording", NULL};
    memset(o, 0, sizeof *o);
    o->scale = 1;
    o->skin = -1;
    snprintf(o->humanoid, sizeof o->humanoid, "auto");
    ikd_error_clear(err);
    const char *v;
    if ((v = args[IKD_IMPORT_FORMAT])) {
        if (!one_of(v, formats)) return bad_arg(err, IKD_IMPORT_FORMAT, "must be bvh, glb, gltf or urdf");
        snprintf(o->format, sizeof o->format, "%s", v);
    }
    if ((v = args[IKD_IMPORT_SCALE]) && !positive(v, &o->scale))
        return bad_arg(err, IKD_IMPORT_SCALE, "must be a finite number above 0");
    if ((v = args[IKD_IMPORT_FPS]) && (!positive(v, &o->fps) || o->fps > 1000))
        return bad_arg(err, IKD_IMPORT_FPS, "must be a number in (0, 1000]");
    if ((v = args[IKD_IMPORT_SKIN])) {
        char *e;
        o->skin = strtol(v, &e, 10);
        if (e == v || *e || o->skin < 0 || o->skin > 100000) return bad_arg(err, IKD_IMPORT_SKIN, "must be an integer >= 0");
    }
    if ((v = args[IKD_IMPORT_HUMANOID])) {
        if (!one_of(v, humanoid)) return bad_arg(err, IKD_IMPORT_HUMANOID, "must be auto or off");
        snprintf(o->humanoid, sizeof o->humanoid, "%s", v);
    }
    if ((v = args[IKD_IMPORT_LIMITS])) {
        if (!one_of(v, limits)) return bad_arg(err, IKD_IMPORT_LIMITS, "must be file, humanoid, none or recording");
        snprintf(o->limits, sizeof o->limits, "%s", v);
    }
    return IKD_E_OK;
}

/* The media type of a Content-Type (up to ';'), compared without case. */
static int media_is(const char *ct, const char *type)
{
    if (!ct) return 0;
    ct += strspn(ct, " \t");
    size_t n = strcspn(ct, "; \t");
    return n == strlen(type) && strncasecmp(ct, type, n) == 0;
}

static const char *format_from_type(const char *ct)
{
    if (media_is(ct, "model/gltf-binary")) return "glb";
    if (media_is(ct, "model/gltf+json")) return "gltf";
    if (media_is(ct, "application/x-bvh") || media_is(ct, "text/x-bvh")) return "bvh";
    if (media_is(ct, "application/xml") || media_is(ct, "text/xml")) return "urdf";
    return NULL;
}

int ikd_import_media_ok(const char *ct)
{
    return !ct || format_from_type(ct) || media_is(ct, "application/octet-stream") || media_is(ct, "text/plain") ||
           media_is(ct, "application/json") || media_is(ct, "application/x-www-form-urlencoded"); /* curl -d's */
}

const char *ikd_import_format(const ikd_import_opts *o, const char *ct, const char *body, size_t len)
{
    if (o->format[0]) return o->format;
    const char *t = format_from_type(ct);
    if (t) return t;
    if (len >= 4 && memcmp(body, "glTF", 4) == 0) return "glb";
    size_t i = 0;
    if (len >= 3 && (unsigned char)body[0] == 0xef && (unsigned char)body[1] == 0xbb && (unsigned char)body[2] == 0xbf) i = 3;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n')) i++;
    if (len - i >= 9 && strncasecmp(body + i, "HIERARCHY", 9) == 0) return "bvh";
    /* a glTF's "asset" may come last, after megabytes of data: URIs
     * (Khronos' simple_skin.gltf: the first 4096 bytes were searched, 415) */
    if (i < len && body[i] == '{' && memmem(body + i, len - i, "\"asset\"", 7)) return "gltf";
    if (i < len && body[i] == '<') {
        size_t head = len - i < 65536 ? len - i : 65536;
        for (size_t k = i; k + 6 <= i + head; k++)
            if (memcmp(body + k, "<robot", 6) == 0) return "urdf";
    }
    return NULL;
}

/* ---- BVH ---------------------------------------------------------------- */

/* a unless it is closer to -b: the shortest way from a to b */
static ikd_quat slerp(ikd_quat a, ikd_quat b, double t)
{
    double d = ikd_quat_dot(a, b);
    if (d < 0) b = ikd_quat_make(-b.x, -b.y, -b.z, -b.w), d = -d;
    if (d > 0.9995) {
        return ikd_quat_norm(ikd_quat_make(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z),
                                           a.w + t * (b.w - a.w)));
    }
    double th = acos(d), s = sin(th), wa = sin((1 - t) * th) / s, wb = sin(t * th) / s;
    return ikd_quat_make(wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z, wa * a.w + wb * b.w);
}

/* Joint j at time `s` in frames (between two frames: slerp and lerp). */
static void joint_at(const ikd_bvh *b, size_t j, double s, ikd_quat *q, ikd_vec3 *t, int *moved)
{
    size_t k = (size_t)floor(s);
    if (k + 1 >= b->frames) k = b->frames - 1;
    double a = s - (double)k;
    ikd_bvh_joint_at(b, j, k, q, t, moved);
    if (a <= 1e-12 || k + 1 >= b->frames) return;
    ikd_quat q1;
    ikd_vec3 t1;
    ikd_bvh_joint_at(b, j, k + 1, &q1, &t1, moved);
    *q = slerp(*q, q1, a);
    *t = ikd_vec3_add(*t, ikd_vec3_scale(ikd_vec3_sub(t1, *t), a));
}

/* Unique names: a later joint whose name was taken gets "_2", "_3"... */
static void unique_names(ikd_bvh *b)
{
    for (size_t j = 1; j < b->count; j++)
        for (int n = 2; n < 1000; n++) {
            size_t i = 0;
            while (i < j && strcmp(b->joints[i].name, b->joints[j].name) != 0) i++;
            if (i == j) break;
            const char *base = b->joints[i].name; /* cut to leave room for the suffix */
            snprintf(b->joints[j].name, sizeof b->joints[j].name, "%.*s_%d", (int)ikd_utf8_prefix(base, IKD_BVH_NAME_MAX - 8), base, n);
        }
}

static void emit_vec(ikd_emitter *e, ikd_vec3 v) { ikd_emit_nums(e, &v.x, 3); }

/* "poses": one a frame at `fps` (the file's own when 0). */
static void emit_poses(ikd_emitter *e, const ikd_bvh *b, double fps, int translations)
{
    double own = 1.0 / b->frame_time, rate = fps > 0 ? fps : own;
    size_t n = b->frames ? (size_t)floor((double)(b->frames - 1) * b->frame_time * rate + 1e-9) + 1 : 0;
    IKD_EMIT_KEY(e, "poses");
    ikd_emit_array(e, n);
    for (size_t k = 0; k < n; k++) {
        double s = fps > 0 ? (double)k / rate * own : (double)k;
        ikd_quat q;
        ikd_vec3 t;
        int moved;
        ikd_emit_map(e, 2 + translations);
        joint_at(b, 0, s, &q, &t, &moved);
        IKD_EMIT_KEY(e, "root");
        emit_vec(e, t);
        IKD_EMIT_KEY(e, "rotations");
        ikd_emit_array(e, b->count);
        for (size_t j = 0; j < b->count; j++) {
            joint_at(b, j, s, &q, &t, &moved);
            ikd_emit_nums(e, &q.x, 4);
        }
        ikd_emit_end(e);
        if (translations) {
            IKD_EMIT_KEY(e, "translations");
            ikd_emit_array(e, b->count);
            for (size_t j = 0; j < b->count; j++) {
                joint_at(b, j, s, &q, &t, &moved);
                if (j > 0 && moved) emit_vec(e, t);
                else ikd_emit_null(e);
            }
            ikd_emit_end(e);
        }
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
}

void ikd_import_warnings(ikd_emitter *e, const ikd_file_warnings *ws)
{
    size_t kept = ikd_file_warnings_kept(ws);
    IKD_EMIT_KEY(e, "warnings");
    ikd_emit_array(e, kept);
    for (size_t i = 0; i < kept; i++) {
        ikd_emit_map(e, 3);
        IKD_EMIT_KEY(e, "code");
        ikd_emit_str(e, ws->w[i].code);
        IKD_EMIT_KEY(e, "message");
        ikd_emit_str(e, ws->w[i].message);
        IKD_EMIT_KEY(e, "field");
        ikd_emit_str(e, ws->w[i].field);
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
}

static void emit_constraint(ikd_emitter *e, const ikd_limit *l)
{
    IKD_EMIT_KEY(e, "constraint");
    if (l->type == IKD_LIMIT_HINGE) {
        ikd_emit_map(e, 4);
        IKD_EMIT_KEY(e, "type");
        ikd_emit_str(e, "hinge");
        IKD_EMIT_KEY(e, "axis");
        ikd_emit_nums(e, &l->axis.x, 3);
        IKD_EMIT_KEY(e, "min_deg");
        ikd_emit_num(e, l->min_deg);
        IKD_EMIT_KEY(e, "max_deg");
        ikd_emit_num(e, l->max_deg);
    } else if (l->type == IKD_LIMIT_BALL) {
        ikd_emit_map(e, 5);
        IKD_EMIT_KEY(e, "type");
        ikd_emit_str(e, "ball");
        IKD_EMIT_KEY(e, "axis");
        ikd_emit_nums(e, &l->axis.x, 3);
        IKD_EMIT_KEY(e, "max_deg");
        ikd_emit_num(e, l->max_deg);
        IKD_EMIT_KEY(e, "twist_min_deg");
        ikd_emit_num(e, l->twist_min_deg);
        IKD_EMIT_KEY(e, "twist_max_deg");
        ikd_emit_num(e, l->twist_max_deg);
    } else if (l->type == IKD_LIMIT_EULER) {
        ikd_emit_map(e, 4 + l->has_neutral + l->has_frame);
        IKD_EMIT_KEY(e, "type");
        ikd_emit_str(e, "euler");
        IKD_EMIT_KEY(e, "order");
        ikd_emit_str(e, ikd_limit_order_name(l->order));
        IKD_EMIT_KEY(e, "min_deg");
        ikd_emit_nums(e, l->euler_min_deg, 3);
        IKD_EMIT_KEY(e, "max_deg");
        ikd_emit_nums(e, l->euler_max_deg, 3);
        if (l->has_neutral) {
            IKD_EMIT_KEY(e, "neutral_deg");
            ikd_emit_nums(e, l->euler_neutral_deg, 3);
        }
        if (l->has_frame) {
            IKD_EMIT_KEY(e, "frame");
            ikd_emit_nums(e, &l->frame.x, 4);
        }
    } else {
        ikd_emit_map(e, 1);
        IKD_EMIT_KEY(e, "type");
        ikd_emit_str(e, ikd_limit_type_name(l->type));
    }
    ikd_emit_end(e);
}

/* "humanoid": {"hips": name, ...} (the roles found) or null; "effectors":
 * a humanoid's hands, feet and head, else the leaves. */
static void emit_roles(ikd_emitter *e, const ikd_skeleton_joint *js, char **names, size_t n, int found,
                       const long role[IKD_ROLE__COUNT])
{
    IKD_EMIT_KEY(e, "humanoid");
    if (found) {
        size_t count = 0;
        for (int r = 0; r < IKD_ROLE__COUNT; r++) count += role[r] >= 0;
        ikd_emit_map(e, count);
        for (int r = 0; r < IKD_ROLE__COUNT; r++)
            if (role[r] >= 0) {
                ikd_emit_key(e, ikd_role_names[r]);
                ikd_emit_str(e, names[role[r]]);
            }
        ikd_emit_end(e);
        static const ikd_role ends[] = {IKD_ROLE_HAND_L, IKD_ROLE_HAND_R, IKD_ROLE_FOOT_L, IKD_ROLE_FOOT_R, IKD_ROLE_HEAD};
        IKD_EMIT_KEY(e, "effectors");
        ikd_emit_array(e, 5);
        for (int k = 0; k < 5; k++) /* an arm without a hand: its forearm */
            ikd_emit_str(e, names[role[ends[k]] >= 0 ? role[ends[k]] : role[ends[k] - 1]]);
        ikd_emit_end(e);
        return;
    }
    ikd_emit_null(e);
    size_t leaves = 0; /* the joints that are no joint's parent (children come after parents) */
    for (size_t j = 0; j < n; j++) {
        size_t c = j + 1;
        while (c < n && js[c].parent != (long)j) c++;
        leaves += c == n;
    }
    IKD_EMIT_KEY(e, "effectors");
    ikd_emit_array(e, leaves);
    for (size_t j = 0; j < n; j++) {
        size_t c = j + 1;
        while (c < n && js[c].parent != (long)j) c++;
        if (c == n) ikd_emit_str(e, names[j]);
    }
    ikd_emit_end(e);
}

/* limits=recording that found nothing to read (no frames, or no joint
 * below the root): said in a warning; returns 0 (no limits set). */
static int recording_none(ikd_file_warnings *ws)
{
    ikd_file_warn(ws, "limits_none", "query.limits", "limits=recording: no frame or no joint below the root to read, no limits set");
    return 0;
}

int ikd_import_humanoid_flags(const ikd_import_opts *o)
{
    int flags = strcmp(o->humanoid, "off") != 0 ? IKD_IMPORT_ROLES : 0;
    if (!strcmp(o->limits, "humanoid")) flags |= IKD_IMPORT_LIMITS_ASKED;
    if (!o->limits[0] || !strcmp(o->limits, "humanoid")) flags |= IKD_IMPORT_HUMANOID_LIMITS;
    return flags;
}

void ikd_import_skeleton(ikd_emitter *e, const ikd_api_limits *lim, ikd_skeleton_joint *js, char **names, size_t n,
                         int constraints, int humanoid, const char *const *vrm, ikd_file_warnings *ws)
{
    long role[IKD_ROLE__COUNT];
    int found = 0;
    if ((humanoid & IKD_IMPORT_ROLES) && vrm) {
        found = ikd_humanoid_from_vrm(js, vrm, n, role);
        if (!found)
            ikd_file_warn(ws, "vrm_humanoid", "extensions", "the VRM humanoid bones do not make a humanoid (head, arms, legs "
                                                            "below the hips): roles from the joints' names");
    }
    if (!found) found = (humanoid & IKD_IMPORT_ROLES) && ikd_humanoid_find(js, names, n, role);
    if (found && (humanoid & IKD_IMPORT_HUMANOID_LIMITS))
        constraints |= ikd_humanoid_limits(js, n, role, ws) > 0;
    else if (humanoid & IKD_IMPORT_LIMITS_ASKED)
        ikd_file_warn(ws, "limits_none", "query.limits", "limits=humanoid: no humanoid recognised, no limits set");
    char id[IKD_SKEL_ID_LEN + 1];
    ikd_skeleton s = {js, n, 0};
    ikd_error err;
    if (ikd_api_keep_skeleton(lim, &s, names, id, &err) != IKD_E_OK) {
        char msg[160];
        snprintf(msg, sizeof msg, "the skeleton does not validate (%.100s): no id", err.message);
        ikd_file_warn(ws, "skeleton_invalid", err.field, msg);
        id[0] = '\0';
    }
    IKD_EMIT_KEY(e, "skeleton");
    ikd_emit_map(e, 1);
    IKD_EMIT_KEY(e, "joints");
    ikd_emit_array(e, n);
    for (size_t j = 0; j < n; j++) {
        ikd_emit_map(e, (js[j].parent < 0 ? 3 : 4) + !!constraints);
        IKD_EMIT_KEY(e, "name");
        ikd_emit_str(e, names[j]);
        if (js[j].parent >= 0) {
            IKD_EMIT_KEY(e, "parent");
            ikd_emit_str(e, names[js[j].parent]);
        }
        IKD_EMIT_KEY(e, "position");
        ikd_emit_nums(e, &js[j].position.x, 3);
        IKD_EMIT_KEY(e, "rotation");
        ikd_emit_nums(e, &js[j].rotation.x, 4);
        if (constraints) emit_constraint(e, &js[j].limit);
        ikd_emit_end(e);
    }
    ikd_emit_end(e);
    ikd_emit_end(e);
    IKD_EMIT_KEY(e, "id");
    if (id[0]) ikd_emit_str(e, id);
    else ikd_emit_null(e);
    emit_roles(e, js, names, n, found, role);
}

static int bvh_reply(const ikd_api_limits *lim, ikd_bvh *b, const ikd_import_opts *o, ikd_encoding enc, ikd_buf *out)
{
    ikd_skeleton_joint *js = calloc(b->count, sizeof *js);
    char **names = calloc(b->count, sizeof *names);
    if (!js || !names) {
        free(js);
        free(names);
        return -1;
    }
    int translations = 0;
    for (size_t j = 0; j < b->count; j++) { /* the rest pose: the OFFSET hierarchy, identity rotations */
        const ikd_bvh_joint *bj = &b->joints[j];
        js[j].parent = bj->parent;
        js[j].position = bj->parent < 0 ? bj->offset : ikd_vec3_add(js[bj->parent].position, bj->offset);
        js[j].rotation = ikd_quat_identity();
        ikd_limit_init(&js[j].limit, IKD_LIMIT_NONE);
        names[j] = b->joints[j].name;
        for (int c = 0; j > 0 && c < bj->nchan; c++) translations |= bj->chan[c] <= IKD_BVH_ZPOS;
    }
    /* the reply's size up front (a rotation's four numbers take about 80 bytes): growing a
     * buffer of megabytes by doubling cost a fifth of an import in copies and page faults */
    double rate = o->fps > 0 ? o->fps * b->frame_time : 1;
    size_t frames = b->frames ? (size_t)((double)(b->frames - 1) * rate) + 1 : 0;
    ikd_buf_reserve(out, 4096 + b->count * 160 + frames * (64 + b->count * (translations ? 140 : 84)));
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_emit_map(&e, 7);
    IKD_EMIT_KEY(&e, "format");
    ikd_emit_str(&e, "bvh");
    int recording = !strcmp(o->limits, "recording"); /* the take's own limits */
    if (recording && ikd_reclimits_bvh(b, js) == 0) recording = recording_none(&b->warnings);
    ikd_import_skeleton(&e, lim, js, names, b->count, recording, ikd_import_humanoid_flags(o), NULL, &b->warnings);
    IKD_EMIT_KEY(&e, "clips");
    ikd_emit_array(&e, b->frames ? 1 : 0);
    if (b->frames) {
        ikd_emit_map(&e, 4);
        IKD_EMIT_KEY(&e, "name");
        ikd_emit_str(&e, "motion");
        IKD_EMIT_KEY(&e, "fps");
        ikd_emit_num(&e, o->fps > 0 ? o->fps : 1.0 / b->frame_time);
        IKD_EMIT_KEY(&e, "frame_time");
        ikd_emit_num(&e, o->fps > 0 ? 1.0 / o->fps : b->frame_time);
        emit_poses(&e, b, o->fps, translations);
        ikd_emit_end(&e);
    }
    ikd_emit_end(&e);
    ikd_import_warnings(&e, &b->warnings);
    ikd_emit_end(&e);
    free(js);
    free(names);
    return out->failed ? -1 : 0;
}

/* ---- glTF --------------------------------------------------------------- */

static int import_gltf(const ikd_api_limits *lim, const ikd_import_opts *o, ikd_encoding out_enc, const char *body,
                       size_t len, ikd_buf *out, int *error)
{
    ikd_gltf g;
    ikd_error err;
    ikd_gltf_opts go = {o->scale, o->fps, o->skin, lim->max_joints, lim->max_frames ? lim->max_frames : 10000};
    int rc = ikd_gltf_read(body, len, &go, &g, &err);
    ikd_skeleton_joint *js = NULL;
    char **names = NULL;
    const char **vrm = NULL; /* the joints' VRM bone names */
    int recording = 0;       /* limits=recording: the limits every frame of every animation keeps */
    if (rc == IKD_E_OK) {
        js = calloc(g.count, sizeof *js);
        names = calloc(g.count, sizeof *names);
        vrm = calloc(g.count, sizeof *vrm);
        if (!js || !names || !vrm) rc = ikd_error_set(&err, IKD_E_NOMEM, "", "out of memory");
    }
    if (rc == IKD_E_OK) {
        for (size_t j = 0; j < g.count; j++) {
            js[j].parent = g.joints[j].parent;
            js[j].position = g.joints[j].position;
            js[j].rotation = g.joints[j].rotation;
            ikd_limit_init(&js[j].limit, IKD_LIMIT_NONE);
            names[j] = g.joints[j].name;
        }
        if (!strcmp(o->limits, "recording")) {
            ikd_quat *rot = NULL;
            size_t frames = 0;
            rc = ikd_gltf_sample_rotations(&g, &go, &rot, &frames, &err);
            if (rc == IKD_E_OK && !(recording = ikd_reclimits_poses(rot, frames, js, g.count) > 0)) recording_none(&g.warnings);
            free(rot);
        }
    }
    if (rc == IKD_E_OK) {
        ikd_emitter e;
        ikd_emit_reply(&e, out_enc, out);
        ikd_emit_map(&e, 7);
        IKD_EMIT_KEY(&e, "format");
        ikd_emit_str(&e, g.binary ? "glb" : "gltf");
        ikd_import_skeleton(&e, lim, js, names, g.count, recording, ikd_import_humanoid_flags(o),
                            ikd_gltf_vrm_bones(&g, vrm) ? vrm : NULL, &g.warnings);
        IKD_EMIT_KEY(&e, "clips");
        ikd_emit_array(&e, g.animations);
        rc = ikd_gltf_emit_clips(&g, &go, &e, &err);
        ikd_emit_end(&e);
        ikd_import_warnings(&e, &g.warnings);
        ikd_emit_end(&e);
        if (rc == IKD_E_OK && out->failed) rc = ikd_error_set(&err, IKD_E_NOMEM, "", "out of memory for the import's reply");
    }
    if (rc != IKD_E_OK && g.too_large) err.code = IKD_E_TOO_LARGE;
    free(js);
    free(names);
    free(vrm);
    ikd_gltf_free(&g);
    if (rc == IKD_E_OK) return 200;
    *error = err.code;
    return ikd_reply_error_body(out, out_enc, &err);
}

/* ---- URDF --------------------------------------------------------------- */

static int import_urdf(const ikd_api_limits *lim, const ikd_import_opts *o, ikd_encoding out_enc, const char *body,
                       size_t len, ikd_buf *out, int *error)
{
    ikd_urdf u;
    ikd_error err;
    int rc = ikd_urdf_read(body, len, o->scale, lim->max_joints, &u, &err);
    if (rc != IKD_E_OK && u.too_large) err.code = IKD_E_TOO_LARGE;
    if (rc == IKD_E_OK) rc = ikd_robot_reply(lim, &u, strcmp(o->limits, "none") != 0, out_enc, out, &err);
    ikd_urdf_free(&u);
    if (rc == IKD_E_OK) return 200;
    *error = err.code;
    return ikd_reply_error_body(out, out_enc, &err);
}

int ikd_api_import(const ikd_api_limits *lim, const ikd_import_opts *o, const char *content_type, ikd_encoding out_enc,
                   const char *body, size_t len, ikd_buf *out, int *error)
{
    const char *format = ikd_import_format(o, content_type, body, len);
    *error = IKD_E_OK;
    if (!format) {
        *error = IKD_E_MEDIA_TYPE;
        return ikd_reply_errorf(out, out_enc, IKD_E_MEDIA_TYPE, "format",
                                "the file's format is not known: send ?format=bvh|glb|gltf|urdf, a Content-Type "
                                "(application/x-bvh, model/gltf-binary, model/gltf+json, application/xml), or a "
                                "BVH, glTF or URDF file");
    }
    if (!strcmp(o->limits, "recording") && !strcmp(format, "urdf")) {
        *error = IKD_E_INVALID;
        return ikd_reply_errorf(out, out_enc, IKD_E_INVALID, "query.limits",
                                "limits=recording reads a take's motion (BVH, glTF animations): a URDF has none");
    }
    if (strcmp(format, "urdf") == 0) return import_urdf(lim, o, out_enc, body, len, out, error);
    if (strcmp(format, "glb") == 0 || strcmp(format, "gltf") == 0) return import_gltf(lim, o, out_enc, body, len, out, error);
    if (strcmp(format, "bvh") != 0) {
        *error = IKD_E_NOT_IMPLEMENTED;
        return ikd_reply_errorf(out, out_enc, IKD_E_NOT_IMPLEMENTED, "format",
                                "%s import is not in this build", format);
    }
    ikd_bvh b;
    ikd_error err;
    size_t max_frames = lim->max_frames ? lim->max_frames : 10000;
    int rc = ikd_bvh_read(body, len, o->scale, lim->max_joints, max_frames, &b, &err);
    if (rc == IKD_E_OK && o->fps > 0 && b.frames && (double)(b.frames - 1) * b.frame_time * o->fps + 1 > (double)max_frames) {
        b.too_large = 1;
        rc = ikd_error_set(&err, IKD_E_INVALID, "query.fps", "sampled at %g fps the clip has more frames than --max-frames (%zu)",
                           o->fps, max_frames);
    }
    if (rc != IKD_E_OK) {
        if (b.too_large) err.code = IKD_E_TOO_LARGE;
        *error = err.code;
        ikd_bvh_free(&b);
        return ikd_reply_error_body(out, out_enc, &err);
    }
    unique_names(&b);
    rc = bvh_reply(lim, &b, o, out_enc, out);
    ikd_bvh_free(&b);
    if (rc != 0) {
        *error = IKD_E_NOMEM;
        return ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", "out of memory for the import's reply");
    }
    return 200;
}
