/* skel.c - decoding POST /v1/solve/skeleton: skeleton joints and limits, start pose, goals, options, with field paths. */
#include "skel.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "field.h"
#include "request.h"

void ikd_skel_request_init(ikd_skel_request *r)
{
    memset(r, 0, sizeof *r);
    ikd_multi_init(&r->problem);
}

int ikd_skel_request_validate(ikd_skel_request *r, ikd_error *err)
{
    if (r->by_reference && !r->translations) return IKD_E_OK;
    return ikd_skeleton_validate(&r->skeleton, err);
}

void ikd_skel_request_destroy(ikd_skel_request *r)
{
    if (r->names)
        for (size_t i = 0; i < r->skeleton.count; i++) free(r->names[i]);
    free(r->names);
    free(r->joints);
    free(r->start);
    free(r->translations);
    free(r->has_translation);
    free(r->goals);
    free(r->frame_first);
    free(r->pack);
    free(r->pack_at);
    free(r->preferred);
    free(r->fpref);
    free(r->fpref_has);
    free(r->fpref_root);
    free(r->fpref_trans);
    ikd_skel_request_init(r);
}

static int nomem(ikd_error *err, const ikd_path *p) { return ikd_field_fail(err, IKD_E_NOMEM, p, "out of memory"); }

static int parse_range3(ikd_val x, const ikd_path *f, double out[3], ikd_error *err)
{
    return ikd_field_numbers(x, f, out, 3, err) ? ikd_field_bad(err, f, "must be an array of 3 numbers (one per euler angle)")
                                                : IKD_E_OK;
}

static int parse_limit(ikd_val v, const ikd_path *f, ikd_limit *l, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("type"),          FIELD("axis"),          FIELD("min_deg"), FIELD("max_deg"),
                                     FIELD("twist_min_deg"), FIELD("twist_max_deg"), FIELD("order"),   FIELD("neutral_deg"),
                                     FIELD("frame")};
    enum { TYPE, AXIS, MIN, MAX, TMIN, TMAX, ORDER, NEUTRAL, FRAME };
    ikd_val m[9];
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be an object");
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    ikd_path ft = ikd_field_key(f, "type");
    int type = -1;
    for (int t = 0; t < 5 && type < 0 && m[TYPE].v && ikd_val_type(m[TYPE]) == IKD_DOC_STRING; t++)
        if (ikd_field_str_is(m[TYPE], ikd_limit_type_name((ikd_limit_type)t))) type = t;
    if (type < 0) return ikd_field_bad(err, &ft, "must be \"none\", \"fixed\", \"hinge\", \"ball\" or \"euler\"");
    ikd_limit_init(l, (ikd_limit_type)type);
    ikd_path fa = ikd_field_key(f, "axis"), fmin = ikd_field_key(f, "min_deg"), fmax = ikd_field_key(f, "max_deg");
    ikd_path fo = ikd_field_key(f, "order");
    int hinge = type == IKD_LIMIT_HINGE, ball = type == IKD_LIMIT_BALL, euler = type == IKD_LIMIT_EULER;
    if (m[AXIS].v) {
        if (!hinge && !ball) return ikd_field_bad(err, &fa, "only a hinge or a ball takes an axis");
        if ((rc = ikd_field_vec3(m[AXIS], &fa, &l->axis, err))) return rc;
        l->has_axis = 1;
    }
    if (m[MIN].v) {
        if (!hinge && !euler) return ikd_field_bad(err, &fmin, "only a hinge or euler limit takes min_deg");
        if ((rc = euler ? parse_range3(m[MIN], &fmin, l->euler_min_deg, err) : ikd_field_number(m[MIN], &fmin, &l->min_deg, err)))
            return rc;
    }
    if (m[MAX].v) {
        if (!hinge && !ball && !euler) return ikd_field_bad(err, &fmax, "this constraint takes no limits");
        if ((rc = euler ? parse_range3(m[MAX], &fmax, l->euler_max_deg, err) : ikd_field_number(m[MAX], &fmax, &l->max_deg, err)))
            return rc;
    }
    for (int k = TMIN; k <= TMAX; k++) {
        if (!m[k].v) continue;
        ikd_path ftw = ikd_field_key(f, keys[k].name);
        if (!ball) return ikd_field_bad(err, &ftw, "only a ball takes a twist range");
        if ((rc = ikd_field_number(m[k], &ftw, k == TMIN ? &l->twist_min_deg : &l->twist_max_deg, err))) return rc;
    }
    if (m[NEUTRAL].v) {
        ikd_path fn = ikd_field_key(f, "neutral_deg");
        if (!euler) return ikd_field_bad(err, &fn, "only an euler limit takes neutral_deg");
        if ((rc = parse_range3(m[NEUTRAL], &fn, l->euler_neutral_deg, err))) return rc;
        l->has_neutral = 1;
    }
    ikd_path ff = ikd_field_key(f, "frame");
    if (m[FRAME].v && !euler) return ikd_field_bad(err, &ff, "only an euler limit takes a frame");
    if (m[FRAME].v && (rc = ikd_field_quat(m[FRAME], &ff, &l->frame, err))) return rc;
    l->has_frame = m[FRAME].v != NULL;
    if (m[ORDER].v || euler) {
        if (!euler) return ikd_field_bad(err, &fo, "only an euler limit takes an order");
        size_t len;
        const char *s = ikd_val_type(m[ORDER]) == IKD_DOC_STRING ? m[ORDER].ops->string(m[ORDER].v, &len) : NULL;
        char name[8] = "";
        if (s && len < sizeof name) memcpy(name, s, len), name[len] = '\0';
        if (!s || ikd_limit_order_from_name(name, &l->order) != 0)
            return ikd_field_bad(err, &fo, "must be \"xyz\", \"xzy\", \"yxz\", \"yzx\", \"zxy\" or \"zyx\"");
    }
    return IKD_E_OK;
}

/* The index of the joint named `s` among the first `before` joints; -1. */
static long find_name(const ikd_skel_request *r, const char *s, size_t len, size_t before)
{
    for (size_t k = 0; r->names && k < before; k++)
        if (r->names[k] && strlen(r->names[k]) == len && memcmp(r->names[k], s, len) == 0) return (long)k;
    return -1;
}

static int parse_name(ikd_val x, const ikd_path *fn, ikd_skel_request *r, size_t i, ikd_error *err)
{
    if (ikd_val_type(x) != IKD_DOC_STRING) return ikd_field_bad(err, fn, "must be a string");
    size_t len;
    const char *s = x.ops->string(x.v, &len);
    if (len == 0 || len > IKD_NAME_MAX) return ikd_field_bad(err, fn, "must be 1 to 256 bytes");
    if (memchr(s, '\0', len) || !ikd_utf8_valid(s, len)) return ikd_field_bad(err, fn, "must be valid UTF-8 without NUL");
    if (find_name(r, s, len, i) >= 0) return ikd_field_bad(err, fn, "is the name of an earlier joint (names are unique)");
    if (!r->names && !(r->names = calloc(r->skeleton.count, sizeof *r->names))) return nomem(err, fn);
    if (!(r->names[i] = malloc(len + 1))) return nomem(err, fn);
    memcpy(r->names[i], s, len);
    r->names[i][len] = '\0';
    return IKD_E_OK;
}

static int parse_parent(ikd_val x, const ikd_path *fp, ikd_skel_request *r, size_t i, ikd_error *err)
{
    ikd_skeleton_joint *j = &r->joints[i];
    if (ikd_val_type(x) == IKD_DOC_STRING) {
        size_t len;
        const char *s = x.ops->string(x.v, &len);
        if ((j->parent = find_name(r, s, len, i)) < 0)
            return ikd_field_bad(err, fp, "names no joint listed earlier (a parent comes before its children)");
        return IKD_E_OK;
    }
    if (ikd_val_type(x) != IKD_DOC_INT) return ikd_field_bad(err, fp, "must be a joint's index or name");
    long long v = x.ops->integer(x.v);
    j->parent = v < -1 ? -2 : v > (long long)IKD_MAX_JOINTS ? (long)IKD_MAX_JOINTS : (long)v; /* checked by validation */
    return IKD_E_OK;
}

static int parse_joint(ikd_val v, const ikd_path *f, ikd_skel_request *r, size_t i, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("name"), FIELD("parent"), FIELD("position"), FIELD("rotation"),
                                     FIELD("constraint")};
    enum { NAME, PARENT, POS, ROT, CONS };
    ikd_skeleton_joint *j = &r->joints[i];
    memset(j, 0, sizeof *j);
    j->parent = (long)i - 1;
    j->rotation = ikd_quat_identity();
    ikd_limit_init(&j->limit, IKD_LIMIT_NONE);
    if (ikd_val_type(v) == IKD_DOC_ARRAY) return ikd_field_vec3(v, f, &j->position, err);
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be an object or an array of 3 numbers");
    ikd_val m[5];
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    ikd_path fn = ikd_field_key(f, "name"), fp = ikd_field_key(f, "parent"), fpos = ikd_field_key(f, "position");
    ikd_path fr = ikd_field_key(f, "rotation"), fc = ikd_field_key(f, "constraint");
    if (m[NAME].v && (rc = parse_name(m[NAME], &fn, r, i, err))) return rc;
    if (m[PARENT].v) {
        if (i == 0) return ikd_field_bad(err, &fp, "the first joint is the root and has no parent");
        if ((rc = parse_parent(m[PARENT], &fp, r, i, err))) return rc;
    }
    if (!m[POS].v) return ikd_field_bad(err, &fpos, "is required");
    if ((rc = ikd_field_vec3(m[POS], &fpos, &j->position, err))) return rc;
    if (m[ROT].v && (rc = ikd_field_quat(m[ROT], &fr, &j->rotation, err))) return rc;
    if (m[CONS].v && (rc = parse_limit(m[CONS], &fc, &j->limit, err))) return rc;
    return IKD_E_OK;
}

/* "skeleton": "sk_...": the lookup's copy, or 409 unknown_skeleton. */
static int skeleton_by_id(ikd_val v, const ikd_path *fs, ikd_skel_request *r, ikd_error *err)
{
    size_t len;
    const char *id = v.ops->string(v.v, &len);
    int found = 0, oom = 0;
    if (r->lookup) r->lookup->get(r->lookup->ctx, id, len, r, &found, &oom);
    if (oom) return nomem(err, fs);
    if (!found)
        return ikd_field_fail(err, IKD_E_UNKNOWN_SKELETON, fs,
                              r->lookup ? "this instance does not hold this skeleton: send it again (POST /v1/skeletons, "
                                          "or the skeleton itself in its place)"
                                        : "skeleton ids are not taken here: send the skeleton itself");
    r->by_reference = 1;
    return IKD_E_OK;
}

static int parse_skeleton(ikd_val v, const ikd_path *pre, size_t max_joints, ikd_skel_request *r, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("joints")};
    ikd_path fs = ikd_field_key(pre, "skeleton"), fj = ikd_field_key(&fs, "joints");
    if (!v.v) return ikd_field_bad(err, &fs, "is required");
    if (ikd_val_type(v) == IKD_DOC_STRING) return skeleton_by_id(v, &fs, r, err);
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, &fs, "must be an object or a skeleton id (sk_...)");
    ikd_val m[1];
    int rc = GATHER(v, &fs, keys, m, err);
    if (rc) return rc;
    if (ikd_val_type(m[0]) != IKD_DOC_ARRAY || m[0].ops->size(m[0].v) < 1)
        return ikd_field_bad(err, &fj, "must be a non-empty array of joints");
    size_t n = m[0].ops->size(m[0].v);
    if (n > max_joints) return ikd_field_bad(err, &fj, "has more joints than --max-joints allows");
    if (!(r->joints = calloc(n, sizeof *r->joints))) return nomem(err, &fj);
    r->skeleton.joints = r->joints;
    r->skeleton.count = n;
    for (size_t i = 0; i < n; i++) {
        ikd_path fi = ikd_field_index(&fj, i);
        if ((rc = parse_joint(ikd_val_at(m[0], i), &fi, r, i, err))) return rc;
    }
    return IKD_E_OK;
}

/* pose.translations: one entry per joint, null (the rest offset) or
 * [x, y, z] (the offset from the parent, in the parent's frame; the root
 * has none: its place is pose.root). The skeleton's rest positions are
 * moved to them, each subtree with its joint. */
static int parse_translations(ikd_val v, const ikd_path *fp, ikd_skel_request *r, ikd_error *err)
{
    ikd_path ft = ikd_field_key(fp, "translations");
    size_t n = r->skeleton.count;
    if (ikd_val_type(v) != IKD_DOC_ARRAY || v.ops->size(v.v) != n)
        return ikd_field_bad(err, &ft, "must hold one entry per joint (null, or [x, y, z] from the parent)");
    r->translations = calloc(n, sizeof *r->translations);
    r->has_translation = calloc(n, 1);
    ikd_vec3 *rest = malloc(n * sizeof *rest);
    if (!r->translations || !r->has_translation || !rest) {
        free(rest);
        return nomem(err, &ft);
    }
    for (size_t i = 0; i < n; i++) {
        ikd_path fi = ikd_field_index(&ft, i);
        ikd_val x = ikd_val_at(v, i);
        rest[i] = r->joints[i].position;
        if (ikd_val_type(x) == IKD_DOC_NULL) continue;
        if (i == 0) {
            free(rest);
            return ikd_field_bad(err, &fi, "must be null: the root's place is pose.root");
        }
        int rc = ikd_field_vec3(x, &fi, &r->translations[i], err);
        if (rc) {
            free(rest);
            return rc;
        }
        r->has_translation[i] = 1;
    }
    for (size_t i = 1; i < n; i++) { /* parents come first */
        long p = r->joints[i].parent;
        if (p < 0 || (size_t)p >= i) continue; /* validation says what is wrong */
        ikd_vec3 off = ikd_vec3_sub(rest[i], rest[p]);
        if (r->has_translation[i]) off = ikd_quat_rotate(ikd_quat_norm(r->joints[p].rotation), r->translations[i]);
        r->joints[i].position = ikd_vec3_add(r->joints[p].position, off);
    }
    free(rest);
    return IKD_E_OK;
}

/* A pose's `rotations` at f: one unit quaternion per joint (within 1e-3
 * of unit length), normalised into out[0..n). */
static int parse_rotations(ikd_val v, const ikd_path *f, size_t n, ikd_quat *out, ikd_error *err)
{
    if (ikd_val_type(v) != IKD_DOC_ARRAY || v.ops->size(v.v) != n) return ikd_field_bad(err, f, "must hold one rotation per joint");
    for (size_t i = 0; i < n; i++) {
        ikd_path fi = ikd_field_index(f, i);
        int rc = ikd_field_quat(ikd_val_at(v, i), &fi, &out[i], err);
        if (rc) return rc;
        if (!(fabs(ikd_quat_len(out[i]) - 1) <= 1e-3)) return ikd_field_bad(err, &fi, "must be a unit quaternion [x, y, z, w]");
        out[i] = ikd_quat_norm(out[i]);
    }
    return IKD_E_OK;
}

static int parse_pose(ikd_val v, const ikd_path *pre, ikd_skel_request *r, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("root"), FIELD("rotations"), FIELD("translations")};
    ikd_path fp = ikd_field_key(pre, "pose"), froot = ikd_field_key(&fp, "root"), frot = ikd_field_key(&fp, "rotations");
    r->problem.root = r->joints[0].position;
    if (!v.v) return IKD_E_OK;
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, &fp, "must be an object");
    ikd_val m[3];
    int rc = GATHER(v, &fp, keys, m, err);
    if (rc) return rc;
    if (m[2].v && (rc = parse_translations(m[2], &fp, r, err))) return rc;
    if (m[2].v) r->problem.root = r->joints[0].position;
    if (m[0].v && (rc = ikd_field_vec3(m[0], &froot, &r->problem.root, err))) return rc;
    if (!m[1].v) return IKD_E_OK;
    if (!(r->start = malloc(r->skeleton.count * sizeof *r->start))) return nomem(err, &frot);
    if ((rc = parse_rotations(m[1], &frot, r->skeleton.count, r->start, err))) return rc;
    r->problem.start = r->start;
    return IKD_E_OK;
}

/* A preferred pose at f: {"rotations": [one unit quaternion per joint],
 * "root": [x, y, z], "translations": [null or [x, y, z] per joint]} (root
 * and translations optional) into out. Translations are taken where
 * out->trans is given (a clip frame's); elsewhere only null ones (the
 * request pose's translations hold). */
static int parse_preferred(ikd_val v, const ikd_path *f, const ikd_skel_request *r, ikd_frame_pref *out, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("root"), FIELD("rotations"), FIELD("translations")};
    ikd_path froot = ikd_field_key(f, "root"), frot = ikd_field_key(f, "rotations"), ft = ikd_field_key(f, "translations");
    size_t n = r->skeleton.count;
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be a pose object with \"rotations\"");
    ikd_val m[3];
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    out->has_trans = 0;
    if (m[2].v && ikd_val_type(m[2]) != IKD_DOC_NULL) {
        if (ikd_val_type(m[2]) != IKD_DOC_ARRAY || m[2].ops->size(m[2].v) != n)
            return ikd_field_bad(err, &ft, "must hold one entry per joint (null, or [x, y, z] from the parent)");
        for (size_t i = 0; i < n; i++) {
            ikd_path fi = ikd_field_index(&ft, i);
            ikd_val x = ikd_val_at(m[2], i);
            ikd_vec3 t = ikd_vec3_make(NAN, 0, 0);
            if (ikd_val_type(x) != IKD_DOC_NULL) {
                if (!out->trans) return ikd_field_bad(err, &fi, "must be null: a preferred pose keeps pose.translations");
                if (i == 0) return ikd_field_bad(err, &fi, "must be null: the root's place is the preferred root");
                if ((rc = ikd_field_vec3(x, &fi, &t, err))) return rc;
                out->has_trans = 1;
            }
            if (out->trans) out->trans[i] = t;
        }
    }
    if (!m[1].v) return ikd_field_bad(err, &frot, "is required");
    if ((rc = parse_rotations(m[1], &frot, n, out->rot, err))) return rc;
    out->has_root = 0;
    if (m[0].v && ikd_val_type(m[0]) != IKD_DOC_NULL) {
        if ((rc = ikd_field_vec3(m[0], &froot, &out->root, err))) return rc;
        out->has_root = 1;
    }
    return IKD_E_OK;
}

/* options.preferred (the options object's member `v`, at `fo`.preferred). */
static int parse_options_preferred(ikd_val v, const ikd_path *fo, ikd_skel_request *r, ikd_error *err)
{
    ikd_path f = ikd_field_key(fo, "preferred");
    if (!v.v || ikd_val_type(v) == IKD_DOC_NULL) return IKD_E_OK;
    size_t n = r->skeleton.count;
    if (!(r->preferred = malloc(n * sizeof *r->preferred))) return nomem(err, &f);
    ikd_frame_pref fp = {.rot = r->preferred};
    int rc = parse_preferred(v, &f, r, &fp, err);
    if (rc) return rc;
    r->problem.has_preferred_root = fp.has_root, r->problem.preferred_root = fp.root;
    r->problem.preferred = r->preferred;
    if (!r->problem.start) r->problem.start = r->preferred; /* no start rotations given: from the preferred pose */
    return IKD_E_OK;
}

static int parse_goal_joint(ikd_val x, const ikd_path *f, const ikd_skel_request *r, ikd_goal *g, ikd_error *err)
{
    if (!x.v) return ikd_field_bad(err, f, "is required (a joint's name or index)");
    if (ikd_val_type(x) == IKD_DOC_STRING) {
        size_t len;
        const char *s = x.ops->string(x.v, &len);
        long k = find_name(r, s, len, r->skeleton.count);
        if (k < 0) return ikd_field_bad(err, f, "names no joint of the skeleton");
        g->joint = (size_t)k;
        return IKD_E_OK;
    }
    if (ikd_val_type(x) != IKD_DOC_INT) return ikd_field_bad(err, f, "must be a joint's name or index");
    long long v = x.ops->integer(x.v);
    if (v < 0 || (unsigned long long)v >= r->skeleton.count) return ikd_field_bad(err, f, "names no joint of the skeleton");
    g->joint = (size_t)v;
    return IKD_E_OK;
}

static int parse_pair(ikd_val v, const ikd_path *f, const char *a, const char *b, ikd_val out[3], const char *c,
                      ikd_error *err)
{
    ikd_field keys[3] = {{a, strlen(a)}, {b, strlen(b)}, {c ? c : "", c ? strlen(c) : 0}};
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be an object");
    return ikd_field_gather(v, f, keys, c ? 3 : 2, out, err);
}

static int parse_goal(ikd_val v, const ikd_path *f, const ikd_skel_request *r, ikd_goal *g, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("joint"), FIELD("position"), FIELD("rotation"), FIELD("aim"),
                                     FIELD("ground"), FIELD("pole"),     FIELD("weight"), FIELD("priority")};
    enum { JOINT, POS, ROT, AIM, GROUND, POLE, WEIGHT, PRIORITY };
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be an object");
    ikd_val m[8], sub[3];
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    ikd_goal_init(g, 0);
    ikd_path fj = ikd_field_key(f, "joint");
    if ((rc = parse_goal_joint(m[JOINT], &fj, r, g, err))) return rc;
    ikd_path fp = ikd_field_key(f, "position"), fr = ikd_field_key(f, "rotation"), fa = ikd_field_key(f, "aim");
    ikd_path fg = ikd_field_key(f, "ground"), fpo = ikd_field_key(f, "pole"), fw = ikd_field_key(f, "weight");
    if (m[POS].v && !(rc = ikd_field_vec3(m[POS], &fp, &g->position, err))) g->has_position = 1;
    if (rc) return rc;
    if (m[ROT].v && !(rc = ikd_field_quat(m[ROT], &fr, &g->rotation, err))) g->has_rotation = 1;
    if (rc) return rc;
    if (m[AIM].v) {
        if ((rc = parse_pair(m[AIM], &fa, "axis", "at", sub, NULL, err))) return rc;
        ikd_path fx = ikd_field_key(&fa, "axis"), ft = ikd_field_key(&fa, "at");
        if (!sub[0].v) return ikd_field_bad(err, &fx, "is required");
        if (!sub[1].v) return ikd_field_bad(err, &ft, "is required");
        if ((rc = ikd_field_vec3(sub[0], &fx, &g->aim_axis, err)) || (rc = ikd_field_vec3(sub[1], &ft, &g->aim_at, err)))
            return rc;
        g->has_aim = 1;
    }
    if (m[GROUND].v) {
        if ((rc = parse_pair(m[GROUND], &fg, "point", "normal", sub, "height", err))) return rc;
        ikd_path fpt = ikd_field_key(&fg, "point"), fn = ikd_field_key(&fg, "normal"), fh = ikd_field_key(&fg, "height");
        if (!sub[0].v) return ikd_field_bad(err, &fpt, "is required");
        if ((rc = ikd_field_vec3(sub[0], &fpt, &g->ground_point, err))) return rc;
        g->ground_normal = ikd_vec3_make(0, 0, 0); /* default: up (filled in once up is known) */
        if (sub[1].v && (rc = ikd_field_vec3(sub[1], &fn, &g->ground_normal, err))) return rc;
        if (sub[1].v && !(ikd_vec3_len(g->ground_normal) > 0)) /* zero stands for "not given" below */
            return ikd_field_bad(err, &fn, "must be a finite, non-zero direction");
        if (sub[2].v && !(rc = ikd_field_number(sub[2], &fh, &g->ground_height, err))) g->has_ground_height = 1;
        if (rc) return rc;
        g->has_ground = 1;
    }
    if (m[POLE].v && !(rc = ikd_field_vec3(m[POLE], &fpo, &g->pole, err))) g->has_pole = 1;
    if (rc) return rc;
    if (m[WEIGHT].v && (rc = ikd_field_number(m[WEIGHT], &fw, &g->weight, err))) return rc;
    if (m[PRIORITY].v && ikd_val_type(m[PRIORITY]) != IKD_DOC_NULL) {
        ikd_path fpr = ikd_field_key(f, "priority");
        long long pr = ikd_val_type(m[PRIORITY]) == IKD_DOC_INT ? m[PRIORITY].ops->integer(m[PRIORITY].v) : LLONG_MAX;
        if (pr < -IKD_GOAL_PRIORITY_MAX || pr > IKD_GOAL_PRIORITY_MAX)
            return ikd_field_bad(err, &fpr, "must be an integer in [-1000000, 1000000]");
        g->priority = (int)pr;
    }
    return IKD_E_OK;
}

/* The size of a goals array `v` at `pre`.goals: 1..min(joints, 64); 0 and
 * err set when it is not such an array. */
static size_t goals_size(ikd_val v, const ikd_path *pre, const ikd_skel_request *r, ikd_error *err)
{
    ikd_path fg = ikd_field_key(pre, "goals");
    if (ikd_val_type(v) != IKD_DOC_ARRAY || v.ops->size(v.v) < 1) return ikd_field_bad(err, &fg, "must be a non-empty array"), 0;
    size_t n = v.ops->size(v.v);
    if (n > IKD_SKEL_MAX_GOALS || n > r->skeleton.count)
        return ikd_field_bad(err, &fg, "has more goals than joints (or than 64)"), 0;
    return n;
}

/* The n goals of `v` (at `pre`.goals) into out[0..n). */
static int parse_goal_list(ikd_val v, const ikd_path *pre, ikd_skel_request *r, ikd_goal *out, size_t n, ikd_error *err)
{
    ikd_path fg = ikd_field_key(pre, "goals");
    for (size_t i = 0; i < n; i++) {
        ikd_path fi = ikd_field_index(&fg, i);
        int rc = parse_goal(ikd_val_at(v, i), &fi, r, &out[i], err);
        if (rc) return rc;
        if (out[i].has_ground && ikd_vec3_len(out[i].ground_normal) == 0) out[i].ground_normal = r->problem.up;
    }
    return IKD_E_OK;
}

static int parse_goals(ikd_val v, const ikd_path *pre, ikd_skel_request *r, ikd_error *err)
{
    size_t n = goals_size(v, pre, r, err);
    if (!n) return err->code;
    ikd_path fg = ikd_field_key(pre, "goals");
    if (!(r->goals = calloc(n, sizeof *r->goals))) return nomem(err, &fg);
    r->goal_count = n;
    return parse_goal_list(v, pre, r, r->goals, n, err);
}

/* frames[k].preferred, `v` at `fk` (absent or null: none) into pref. */
static int parse_frame_pref(ikd_val v, const ikd_path *fk, const ikd_skel_request *r, ikd_frame_pref *pref, ikd_error *err)
{
    pref->has = 0;
    if (!v.v || ikd_val_type(v) == IKD_DOC_NULL) return IKD_E_OK;
    ikd_path f = ikd_field_key(fk, "preferred");
    int rc = parse_preferred(v, &f, r, pref, err);
    pref->has = rc == IKD_E_OK;
    return rc;
}

static const ikd_field frame_keys[] = {FIELD("goals"), FIELD("preferred")};

/* frames[k]'s members (goals, preferred) into m: its goal count, or 0
 * with err set when it is not such an object. */
static size_t frame_members(ikd_val fr, size_t k, const ikd_skel_request *r, ikd_val m[2], ikd_error *err)
{
    ikd_path ff = ikd_field_key(NULL, "frames"), fk = ikd_field_index(&ff, k), fg = ikd_field_key(&fk, "goals");
    if (ikd_val_type(fr) != IKD_DOC_OBJECT) return ikd_field_bad(err, &fk, "must be an object with \"goals\""), 0;
    if (GATHER(fr, &fk, frame_keys, m, err)) return 0;
    if (!m[0].v) return ikd_field_bad(err, &fg, "is required"), 0;
    return goals_size(m[0], &fk, r, err);
}

/* A clip's frames: [{"goals": [...], "preferred": {...}}, ...], every
 * frame's goals in one array, and their preferred poses in r->fpref. */
static int parse_frames(ikd_val v, ikd_skel_request *r, ikd_error *err)
{
    ikd_path ff = ikd_field_key(NULL, "frames");
    if (!v.v) return ikd_field_bad(err, &ff, "is required");
    if (ikd_val_type(v) != IKD_DOC_ARRAY || v.ops->size(v.v) < 1) return ikd_field_bad(err, &ff, "must be a non-empty array");
    size_t nf = v.ops->size(v.v), total = 0, nj = r->skeleton.count;
    int prefs = 0;
    if (!(r->frame_first = calloc(nf + 1, sizeof *r->frame_first))) return nomem(err, &ff);
    ikd_val m[2];
    for (size_t k = 0; k < nf; k++) { /* shapes and sizes first: one allocation for every goal */
        size_t n = frame_members(ikd_val_at(v, k), k, r, m, err);
        if (!n) return err->code;
        prefs |= m[1].v && ikd_val_type(m[1]) != IKD_DOC_NULL;
        r->frame_first[k] = total;
        total += n;
    }
    r->frame_first[nf] = total;
    r->frame_count = nf;
    if (!(r->goals = calloc(total, sizeof *r->goals))) return nomem(err, &ff);
    r->goal_count = total;
    if (prefs && (!(r->fpref = malloc(nf * nj * sizeof *r->fpref)) || !(r->fpref_has = calloc(nf, 1)) ||
                  !(r->fpref_root = calloc(nf, sizeof *r->fpref_root)) ||
                  !(r->fpref_trans = malloc(nf * nj * sizeof *r->fpref_trans))))
        return nomem(err, &ff);
    for (size_t k = 0; k < nf; k++) {
        ikd_path fk = ikd_field_index(&ff, k);
        GATHER(ikd_val_at(v, k), &fk, frame_keys, m, err);
        int rc = parse_goal_list(m[0], &fk, r, r->goals + r->frame_first[k], r->frame_first[k + 1] - r->frame_first[k], err);
        if (rc) return rc;
        if (!prefs) continue;
        ikd_frame_pref fp = {.rot = r->fpref + k * nj, .trans = r->fpref_trans + k * nj};
        if ((rc = parse_frame_pref(m[1], &fk, r, &fp, err))) return rc;
        r->fpref_has[k] = (unsigned char)(fp.has | (fp.has_root << 1) | (fp.has_trans << 2));
        r->fpref_root[k] = fp.root;
    }
    return IKD_E_OK;
}

/* One frame of a clip decoded on its own: {"goals": [...]} at frames[k]. */
int ikd_clip_decode_frame(ikd_val frame, size_t k, ikd_skel_request *req, ikd_goal *goals, size_t *count,
                          ikd_frame_pref *pref, ikd_error *err)
{
    ikd_path ff = ikd_field_key(NULL, "frames"), fk = ikd_field_index(&ff, k);
    ikd_val m[2];
    size_t n = frame_members(frame, k, req, m, err);
    if (!n) return err->code;
    *count = n;
    int rc = parse_goal_list(m[0], &fk, req, goals, n, err);
    if (rc) return rc;
    return parse_frame_pref(m[1], &fk, req, pref, err);
}

/* `options`: the solver's table, and `preferred` (a pose). */
static int parse_options(ikd_val v, const ikd_path *pre, ikd_skel_request *r, ikd_error *err)
{
    size_t n;
    const ikd_option_info *table = ikd_multi_options_table(&n);
    ikd_path fo = ikd_field_key(pre, "options");
    int rc = ikd_field_options_but(v, &fo, table, n, &r->problem, "preferred", err);
    if (rc || !v.v || ikd_val_type(v) != IKD_DOC_OBJECT) return rc;
    return parse_options_preferred(ikd_field_member(v, "preferred"), &fo, r, err);
}

/* A skeleton or clip request: the shared fields, then `goals` (a skeleton)
 * or `frames` (a clip, clip = 1). */
static int decode(ikd_val root, const ikd_path *pre, int item, int clip, size_t max_joints, ikd_skel_request *req,
                  ikd_error *err)
{
    static const ikd_field skel_keys[] = {FIELD("skeleton"), FIELD("pose"), FIELD("root"),   FIELD("up"),
                                          FIELD("goals"),    FIELD("solver"), FIELD("options")};
    static const ikd_field clip_keys[] = {FIELD("skeleton"), FIELD("pose"),    FIELD("root"), FIELD("up"),
                                          FIELD("frames"),   FIELD("solver"),  FIELD("options"), FIELD("fps")};
    enum { SKELETON, POSE, ROOT, UP, GOALS, SOLVER, OPTIONS, FPS };
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return ikd_field_bad(err, pre, item ? "must be an object" : "the body must be an object");
    ikd_val m[8] = {{0}};
    int rc = clip ? GATHER(root, pre, clip_keys, m, err) : GATHER(root, pre, skel_keys, m, err);
    if (rc) return rc;
    ikd_multi_problem *p = &req->problem;
    if ((rc = parse_skeleton(m[SKELETON], pre, max_joints, req, err))) return rc;
    p->skeleton = &req->skeleton;
    if ((rc = parse_pose(m[POSE], pre, req, err))) return rc;
    if (m[ROOT].v) {
        ikd_path fr = ikd_field_key(pre, "root");
        if (ikd_field_str_is(m[ROOT], "free")) p->root_free = 1;
        else if (!ikd_field_str_is(m[ROOT], "fixed")) return ikd_field_bad(err, &fr, "must be \"fixed\" or \"free\"");
    }
    if (m[UP].v) {
        ikd_path fu = ikd_field_key(pre, "up");
        if ((rc = ikd_field_vec3(m[UP], &fu, &p->up, err))) return rc;
    }
    if (m[SOLVER].v) {
        ikd_path fs = ikd_field_key(pre, "solver");
        if (!ikd_field_str_is(m[SOLVER], "auto") && !ikd_field_str_is(m[SOLVER], "dls"))
            return ikd_field_bad(err, &fs, "must be \"auto\" or \"dls\" for a skeleton");
    }
    if (clip && m[FPS].v) {
        ikd_path ff = ikd_field_key(pre, "fps");
        if ((rc = ikd_field_number(m[FPS], &ff, &req->fps, err))) return rc;
        if (!(req->fps > 0 && req->fps <= 1000)) return ikd_field_bad(err, &ff, "must be a number in (0, 1000]");
    }
    if (clip == 2) { /* the head of a clip decoded a frame at a time: no frames here */
        p->goals = NULL;
        p->goal_count = 0;
        return parse_options(m[OPTIONS], pre, req, err);
    }
    if (clip) {
        if ((rc = parse_frames(m[GOALS], req, err))) return rc;
    } else {
        ikd_path fgoals = ikd_field_key(pre, "goals");
        if (!m[GOALS].v) return ikd_field_bad(err, &fgoals, "is required");
        if ((rc = parse_goals(m[GOALS], pre, req, err))) return rc;
    }
    p->goals = req->goals;
    p->goal_count = clip ? req->frame_first[1] : req->goal_count;
    return parse_options(m[OPTIONS], pre, req, err);
}

int ikd_skel_decode_register(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("skeleton")};
    ikd_path body = ikd_field_key(NULL, "");
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return ikd_field_bad(err, &body, "the body must be an object");
    ikd_val m[1];
    int rc = GATHER(root, &body, keys, m, err);
    if (rc) return rc;
    if (ikd_val_type(m[0]) == IKD_DOC_STRING) {
        ikd_path fs = ikd_field_key(&body, "skeleton");
        return ikd_field_bad(err, &fs, "must be a skeleton object (it is being registered)");
    }
    return parse_skeleton(m[0], &body, max_joints, req, err);
}

int ikd_skel_decode(ikd_val root, long item, size_t max_joints, ikd_skel_request *req, ikd_error *err)
{
    ikd_path body = ikd_field_key(NULL, ""), batch = ikd_field_key(NULL, "problems");
    ikd_path in_batch = ikd_field_index(&batch, (size_t)item);
    return decode(root, item < 0 ? &body : &in_batch, item >= 0, 0, max_joints, req, err);
}

int ikd_clip_decode(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err)
{
    ikd_path body = ikd_field_key(NULL, "");
    return decode(root, &body, 0, 1, max_joints, req, err);
}

int ikd_clip_decode_head(ikd_val root, size_t max_joints, ikd_skel_request *req, ikd_error *err)
{
    ikd_path body = ikd_field_key(NULL, "");
    return decode(root, &body, 0, 2, max_joints, req, err);
}
