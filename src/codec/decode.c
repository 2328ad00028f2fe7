/* decode.c - solve request decoding over the document view, with JSON field paths in every error. */
#include "decode.h"

#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JSON path of a value, as a chain of segments on the callers' stacks;
 * it is turned into text ("chain.joints[2].position") only for an error. */
typedef struct path {
    const struct path *parent;
    const char *key; /* NULL: an array index */
    size_t key_len;
    size_t index;
} path;

static path key_path(const path *parent, const char *key) { return (path){parent, key, strlen(key), 0}; }
static path keyn_path(const path *parent, const char *key, size_t n) { return (path){parent, key, n, 0}; }
static path index_path(const path *parent, size_t i) { return (path){parent, NULL, 0, i}; }

static size_t path_render(const path *p, char *out, size_t size)
{
    if (!p) return 0;
    size_t n = path_render(p->parent, out, size);
    char tmp[32];
    const char *piece = p->key;
    size_t len = p->key_len;
    int dot = 0;
    if (!piece) {
        len = (size_t)snprintf(tmp, sizeof tmp, "[%zu]", p->index);
        piece = tmp;
    } else if (len == 0) {
        return n; /* the root's empty prefix */
    } else {
        dot = n > 0;
    }
    if (dot && n + 1 < size) out[n++] = '.';
    if (len > size - 1 - n) len = size - 1 - n;
    memcpy(out + n, piece, len);
    n += len;
    out[n] = '\0';
    return n;
}

static int fail(ikd_error *err, int code, const path *p, const char *msg)
{
    char f[IKD_ERROR_FIELD_MAX] = "";
    path_render(p, f, sizeof f);
    return ikd_error_set(err, code, f, "%s", msg);
}

static int bad(ikd_error *err, const path *p, const char *msg) { return fail(err, IKD_E_INVALID, p, msg); }

/* A field name and its length, for gather. */
typedef struct field {
    const char *name;
    size_t len;
} field;
#define FIELD(s) {s, sizeof(s) - 1}

/* One pass over an object's members: every key must be one of the `n`
 * allowed (at most 8), none twice (MessagePack maps can carry duplicates);
 * out[a] is the value of allowed[a] (v = NULL when absent or null). */
static int gather(ikd_val obj, const path *parent, const field *allowed, int na, ikd_val *out, ikd_error *err)
{
    size_t n = obj.ops->size(obj.v);
    for (int a = 0; a < na; a++) out[a] = (ikd_val){obj.ops, NULL};
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k;
        size_t len;
        const void *v = obj.ops->member(obj.v, i, &k, &len);
        int idx = -1;
        for (int a = 0; a < na && idx < 0; a++)
            if (allowed[a].len == len && (len == 0 || (k[0] == allowed[a].name[0] && memcmp(allowed[a].name, k, len) == 0)))
                idx = a;
        if (idx < 0 || (seen & (1u << idx))) {
            path f = keyn_path(parent, k, len);
            return idx < 0 ? bad(err, &f, "unknown field") : fail(err, IKD_E_MALFORMED, &f, "duplicate key");
        }
        seen |= 1u << idx;
        if (obj.ops->type(v) != IKD_DOC_NULL) out[idx].v = v;
    }
    return IKD_E_OK;
}
#define GATHER(obj, parent, keys, out, err) gather(obj, parent, keys, (int)(sizeof keys / sizeof keys[0]), out, err)

static int get_number(ikd_val x, const path *f, double *out, ikd_error *err)
{
    if (!ikd_val_is_number(x)) return bad(err, f, "must be a number");
    *out = x.ops->real(x.v);
    if (!isfinite(*out)) return bad(err, f, "must be a finite number");
    return IKD_E_OK;
}

static int get_numbers(ikd_val x, const path *f, double *out, size_t n, ikd_error *err)
{
    const char *msg = n == 3 ? "must be an array of 3 numbers" : "must be an array of 4 numbers";
    if (x.v && x.ops->reals(x.v, out, n)) { /* the usual case, in one call */
        for (size_t i = 0; i < n; i++)
            if (!isfinite(out[i])) return bad(err, f, "must be finite numbers");
        return IKD_E_OK;
    }
    if (ikd_val_type(x) != IKD_DOC_ARRAY || x.ops->size(x.v) != n) return bad(err, f, msg);
    for (size_t i = 0; i < n; i++) {
        ikd_val e = ikd_val_at(x, i);
        if (!ikd_val_is_number(e)) return bad(err, f, msg);
        out[i] = e.ops->real(e.v);
        if (!isfinite(out[i])) return bad(err, f, "must be finite numbers");
    }
    return IKD_E_OK;
}

static int get_vec3(ikd_val x, const path *f, ikd_vec3 *out, ikd_error *err)
{
    double a[3];
    int rc = get_numbers(x, f, a, 3, err);
    if (rc == IKD_E_OK) *out = ikd_vec3_make(a[0], a[1], a[2]);
    return rc;
}

static int get_quat(ikd_val x, const path *f, ikd_quat *out, ikd_error *err)
{
    double a[4];
    int rc = get_numbers(x, f, a, 4, err);
    if (rc == IKD_E_OK) *out = ikd_quat_make(a[0], a[1], a[2], a[3]);
    return rc;
}

/* A string equal to `s`. */
static int str_is(ikd_val x, const char *s)
{
    size_t len;
    const char *v = x.ops->string(x.v, &len);
    return len == strlen(s) && memcmp(v, s, len) == 0;
}

static int parse_constraint(ikd_val v, const path *f, ikd_constraint *c, ikd_error *err)
{
    static const field keys[] = {FIELD("type"), FIELD("axis"), FIELD("min_deg"), FIELD("max_deg"), FIELD("reference")};
    enum { TYPE, AXIS, MIN, MAX, REF };
    ikd_val m[5];
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return bad(err, f, "must be an object");
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    path ft = key_path(f, "type");
    ikd_val type = m[TYPE];
    if (!type.v) return bad(err, &ft, "is required (\"hinge\", \"ball\" or \"none\")");
    if (ikd_val_type(type) != IKD_DOC_STRING) return bad(err, &ft, "must be a string: \"hinge\", \"ball\" or \"none\"");
    if (str_is(type, "hinge")) c->type = IKD_CONSTRAINT_HINGE;
    else if (str_is(type, "ball")) c->type = IKD_CONSTRAINT_BALL;
    else if (str_is(type, "none")) c->type = IKD_CONSTRAINT_NONE;
    else return bad(err, &ft, "unknown constraint type (use \"hinge\", \"ball\" or \"none\")");

    path fa = key_path(f, "axis");
    ikd_val x = m[AXIS];
    if (x.v) {
        if (c->type != IKD_CONSTRAINT_HINGE) return bad(err, &fa, "only a hinge takes an axis");
        if ((rc = get_vec3(x, &fa, &c->axis, err))) return rc;
    } else if (c->type == IKD_CONSTRAINT_HINGE) {
        return bad(err, &fa, "is required for a hinge");
    }
    if ((x = m[MIN]).v) {
        path fm = key_path(f, "min_deg");
        if (c->type != IKD_CONSTRAINT_HINGE) return bad(err, &fm, "only a hinge takes min_deg");
        if ((rc = get_number(x, &fm, &c->min_deg, err))) return rc;
    }
    if ((x = m[MAX]).v) {
        path fm = key_path(f, "max_deg");
        if (c->type == IKD_CONSTRAINT_NONE) return bad(err, &fm, "a \"none\" constraint takes no limits");
        if ((rc = get_number(x, &fm, &c->max_deg, err))) return rc;
    }
    if ((x = m[REF]).v) {
        path fr = key_path(f, "reference");
        if ((rc = get_vec3(x, &fr, &c->reference, err))) return rc;
        c->has_reference = 1;
    }
    return IKD_E_OK;
}

static int parse_joint(ikd_val v, const path *f, ikd_request *req, size_t index, ikd_error *err)
{
    static const field keys[] = {FIELD("name"), FIELD("position"), FIELD("rotation"), FIELD("constraint")};
    enum { NAME, POS, ROT, CONS };
    ikd_val m[4];
    ikd_joint *j = &req->joints[index];
    ikd_doc_type t = ikd_val_type(v);
    if (t == IKD_DOC_ARRAY) return get_vec3(v, f, &j->position, err);
    if (t != IKD_DOC_OBJECT) return bad(err, f, "must be an object or an array of 3 numbers");
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    ikd_val x;
    if ((x = m[NAME]).v) {
        path fn = key_path(f, "name");
        if (ikd_val_type(x) != IKD_DOC_STRING) return bad(err, &fn, "must be a string");
        size_t len;
        const char *s = x.ops->string(x.v, &len);
        if (len > IKD_NAME_MAX) return bad(err, &fn, "is longer than 256 bytes");
        if (memchr(s, '\0', len)) return bad(err, &fn, "must not contain NUL");
        if (!ikd_utf8_valid(s, len)) return bad(err, &fn, "must be valid UTF-8");
        if (ikd_request_set_name(req, index, s, len) != 0) return fail(err, IKD_E_NOMEM, &fn, "out of memory");
    }
    path fp = key_path(f, "position");
    if (!(x = m[POS]).v) return bad(err, &fp, "is required");
    if ((rc = get_vec3(x, &fp, &j->position, err))) return rc;
    if ((x = m[ROT]).v) {
        path fr = key_path(f, "rotation");
        if ((rc = get_quat(x, &fr, &j->rotation, err))) return rc;
    }
    if ((x = m[CONS]).v) {
        path fc = key_path(f, "constraint");
        if ((rc = parse_constraint(x, &fc, &j->constraint, err))) return rc;
    }
    return IKD_E_OK;
}

static int parse_chain(ikd_val v, const path *pre, ikd_request *req, ikd_error *err)
{
    static const field keys[] = {FIELD("joints")};
    path fc = key_path(pre, "chain"), fj = key_path(&fc, "joints");
    if (!v.v) return bad(err, &fc, "is required");
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return bad(err, &fc, "must be an object with \"joints\"");
    ikd_val joints;
    int rc = GATHER(v, &fc, keys, &joints, err);
    if (rc) return rc;
    if (!joints.v) return bad(err, &fj, "is required");
    if (ikd_val_type(joints) != IKD_DOC_ARRAY) return bad(err, &fj, "must be an array of joints");
    size_t n = joints.ops->size(joints.v);
    if (n > IKD_MAX_JOINTS) return bad(err, &fj, "at most 4096 joints are allowed");
    if (ikd_request_alloc_joints(req, n) != 0) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    for (size_t i = 0; i < n; i++) {
        path fi = index_path(&fj, i);
        if ((rc = parse_joint(ikd_val_at(joints, i), &fi, req, i, err))) return rc;
    }
    return IKD_E_OK;
}

static int parse_target(ikd_val v, const path *pre, ikd_problem *p, ikd_error *err)
{
    static const field keys[] = {FIELD("position"), FIELD("rotation")};
    path ft = key_path(pre, "target");
    if (!v.v) return bad(err, &ft, "is required");
    ikd_doc_type t = ikd_val_type(v);
    if (t == IKD_DOC_ARRAY) return get_vec3(v, &ft, &p->target, err);
    if (t != IKD_DOC_OBJECT) return bad(err, &ft, "must be an object or an array of 3 numbers");
    ikd_val m[2];
    int rc = GATHER(v, &ft, keys, m, err);
    if (rc) return rc;
    path fp = key_path(&ft, "position"), fr = key_path(&ft, "rotation");
    ikd_val x = m[0];
    if (!x.v) return bad(err, &fp, "is required");
    if ((rc = get_vec3(x, &fp, &p->target, err))) return rc;
    if ((x = m[1]).v) {
        if ((rc = get_quat(x, &fr, &p->target_rotation, err))) return rc;
        p->has_target_rotation = 1;
    }
    return IKD_E_OK;
}

/* "options": every key must be a row of the library's options table. */
static int parse_options(ikd_val v, const path *pre, ikd_options *o, ikd_error *err)
{
    size_t n;
    const ikd_option_info *table = ikd_options_table(&n);
    path fo = key_path(pre, "options");
    if (!v.v) return IKD_E_OK;
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return bad(err, &fo, "must be an object");
    size_t count = v.ops->size(v.v);
    unsigned seen = 0;
    for (size_t m = 0; m < count; m++) {
        const char *key;
        size_t klen;
        ikd_val x = {v.ops, v.ops->member(v.v, m, &key, &klen)};
        path f = keyn_path(&fo, key, klen);
        const ikd_option_info *row = NULL;
        size_t idx = 0;
        for (size_t i = 0; i < n && !row; i++)
            if (strlen(table[i].name) == klen && memcmp(table[i].name, key, klen) == 0) row = &table[idx = i];
        if (!row) return bad(err, &f, "unknown option (see GET /v1/solvers)");
        if (seen & (1u << idx)) return fail(err, IKD_E_MALFORMED, &f, "duplicate key");
        seen |= 1u << idx;
        if (ikd_val_type(x) == IKD_DOC_NULL) continue;
        char *dst = (char *)o + row->offset;
        switch (row->type) {
        case IKD_OPT_INT: {
            if (ikd_val_type(x) != IKD_DOC_INT) return bad(err, &f, "must be an integer");
            long long iv = x.ops->integer(x.v);
            if (iv < (long long)row->min || iv > (long long)row->max) {
                char msg[96];
                snprintf(msg, sizeof msg, "must be an integer in [%g, %g]", row->min, row->max);
                return bad(err, &f, msg);
            }
            *(int *)dst = (int)iv;
            break;
        }
        case IKD_OPT_NUMBER: {
            int rc = get_number(x, &f, (double *)dst, err);
            if (rc) return rc;
            break;
        }
        case IKD_OPT_ENUM: {
            int found = -1;
            for (int c = 0; ikd_val_type(x) == IKD_DOC_STRING && row->choices[c]; c++)
                if (str_is(x, row->choices[c])) found = c;
            if (found < 0) {
                char msg[128] = "must be one of:";
                for (int c = 0; row->choices[c]; c++) {
                    strncat(msg, c ? ", \"" : " \"", sizeof msg - strlen(msg) - 1);
                    strncat(msg, row->choices[c], sizeof msg - strlen(msg) - 1);
                    strncat(msg, "\"", sizeof msg - strlen(msg) - 1);
                }
                return bad(err, &f, msg);
            }
            *(int *)dst = found;
            break;
        }
        }
    }
    return IKD_E_OK;
}

int ikd_decode_solve(ikd_val root, long item, ikd_request *req, ikd_error *err)
{
    static const field keys[] = {FIELD("solver"), FIELD("chain"), FIELD("target"), FIELD("pole"), FIELD("options")};
    path body = key_path(NULL, ""), batch = key_path(NULL, "problems"), in_batch = index_path(&batch, (size_t)item);
    const path *pre = item < 0 ? &body : &in_batch;
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return bad(err, pre, item >= 0 ? "must be an object" : "the body must be an object");
    enum { SOLVER, CHAIN, TARGET, POLE, OPTIONS };
    ikd_val m[5];
    int rc = GATHER(root, pre, keys, m, err);
    if (rc) return rc;
    ikd_problem *p = &req->problem;
    ikd_val x;
    if ((x = m[SOLVER]).v) {
        path fs = key_path(pre, "solver");
        if (ikd_val_type(x) != IKD_DOC_STRING) return bad(err, &fs, "must be a string");
        int found = 0;
        for (int s = 0; s < IKD_SOLVER__COUNT && !found; s++)
            if (str_is(x, ikd_solver_name((ikd_solver)s))) {
                p->solver = (ikd_solver)s;
                found = 1;
            }
        if (!found) return bad(err, &fs, "unknown solver (see GET /v1/solvers)");
    }
    if ((rc = parse_chain(m[CHAIN], pre, req, err))) return rc;
    if ((rc = parse_target(m[TARGET], pre, p, err))) return rc;
    if ((x = m[POLE]).v) {
        path fp = key_path(pre, "pole");
        if ((rc = get_vec3(x, &fp, &p->pole, err))) return rc;
        p->has_pole = 1;
    }
    return parse_options(m[OPTIONS], pre, &p->options, err);
}

int ikd_decode_batch(ikd_val root, ikd_val *items, ikd_error *err)
{
    static const field keys[] = {FIELD("problems")};
    path fp = key_path(NULL, "problems");
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return bad(err, NULL, "the body must be an object with \"problems\"");
    int rc = GATHER(root, NULL, keys, items, err);
    if (rc) return rc;
    if (!items->v) return bad(err, &fp, "is required");
    if (ikd_val_type(*items) != IKD_DOC_ARRAY) return bad(err, &fp, "must be an array of solve requests");
    return IKD_E_OK;
}
