/* decode.c - solve request decoding over the document view, with JSON field paths in every error. */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct field {
    char s[IKD_ERROR_FIELD_MAX];
} field;

/* Append `s` to f->s, truncating at the buffer's end. */
static void field_cat(field *f, size_t *len, const char *s, size_t n)
{
    if (n > sizeof f->s - 1 - *len) n = sizeof f->s - 1 - *len;
    memcpy(f->s + *len, s, n);
    *len += n;
    f->s[*len] = '\0';
}

/* parent + "." + key (or just key when parent is empty) */
static field field_key(const char *parent, const char *key, size_t key_len)
{
    field f;
    size_t len = 0;
    f.s[0] = '\0';
    field_cat(&f, &len, parent, strlen(parent));
    if (parent[0]) field_cat(&f, &len, ".", 1);
    field_cat(&f, &len, key, key_len);
    return f;
}

static field field_sub(const char *parent, const char *key) { return field_key(parent, key, strlen(key)); }

static field field_index(const char *parent, size_t i)
{
    field f;
    char idx[32];
    size_t len = 0;
    f.s[0] = '\0';
    field_cat(&f, &len, parent, strlen(parent));
    int n = snprintf(idx, sizeof idx, "[%zu]", i);
    field_cat(&f, &len, idx, (size_t)n);
    return f;
}

static ikd_code bad(ikd_error *err, const char *f, const char *msg)
{
    return ikd_error_set(err, IKD_E_INVALID, f, "%s", msg);
}

ikd_val ikd_val_get(ikd_val obj, const char *key)
{
    ikd_val r = {obj.ops, NULL};
    if (ikd_val_type(obj) != IKD_DOC_OBJECT) return r;
    size_t n = obj.ops->size(obj.v), kl = strlen(key);
    for (size_t i = 0; i < n; i++) {
        const char *k;
        size_t len;
        const void *v = obj.ops->member(obj.v, i, &k, &len);
        if (len == kl && memcmp(k, key, kl) == 0) {
            r.v = obj.ops->type(v) == IKD_DOC_NULL ? NULL : v;
            return r;
        }
    }
    return r;
}

/* Every key of `obj` must be one of the NULL-terminated `allowed`; duplicate
 * keys are refused too (MessagePack maps can carry them). */
static ikd_code check_keys(ikd_val obj, const char *parent, const char *const *allowed, ikd_error *err)
{
    size_t n = obj.ops->size(obj.v);
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k;
        size_t len;
        obj.ops->member(obj.v, i, &k, &len);
        int idx = -1;
        for (int a = 0; allowed[a]; a++)
            if (strlen(allowed[a]) == len && memcmp(allowed[a], k, len) == 0) idx = a;
        field f = field_key(parent, k, len);
        if (idx < 0) return bad(err, f.s, "unknown field");
        if (seen & (1u << idx)) return ikd_error_set(err, IKD_E_MALFORMED, f.s, "duplicate key");
        seen |= 1u << idx;
    }
    return IKD_E_OK;
}

static ikd_code get_number(ikd_val x, const char *f, double *out, ikd_error *err)
{
    if (!ikd_val_is_number(x)) return bad(err, f, "must be a number");
    *out = x.ops->real(x.v);
    if (!isfinite(*out)) return bad(err, f, "must be a finite number");
    return IKD_E_OK;
}

static ikd_code get_numbers(ikd_val x, const char *f, double *out, size_t n, ikd_error *err)
{
    char msg[64];
    snprintf(msg, sizeof msg, "must be an array of %zu numbers", n);
    if (ikd_val_type(x) != IKD_DOC_ARRAY || x.ops->size(x.v) != n) return bad(err, f, msg);
    for (size_t i = 0; i < n; i++) {
        ikd_val e = ikd_val_at(x, i);
        if (!ikd_val_is_number(e)) return bad(err, f, msg);
        out[i] = e.ops->real(e.v);
        if (!isfinite(out[i])) return bad(err, f, "must be finite numbers");
    }
    return IKD_E_OK;
}

static ikd_code get_vec3(ikd_val x, const char *f, ikd_vec3 *out, ikd_error *err)
{
    double a[3];
    ikd_code rc = get_numbers(x, f, a, 3, err);
    if (rc == IKD_E_OK) *out = ikd_vec3_make(a[0], a[1], a[2]);
    return rc;
}

static ikd_code get_quat(ikd_val x, const char *f, ikd_quat *out, ikd_error *err)
{
    double a[4];
    ikd_code rc = get_numbers(x, f, a, 4, err);
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

static ikd_code parse_constraint(ikd_val v, const char *f, ikd_constraint *c, ikd_error *err)
{
    static const char *const keys[] = {"type", "axis", "min_deg", "max_deg", "reference", NULL};
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return bad(err, f, "must be an object");
    ikd_code rc = check_keys(v, f, keys, err);
    if (rc) return rc;
    field ft = field_sub(f, "type");
    ikd_val type = ikd_val_get(v, "type");
    if (!type.v) return bad(err, ft.s, "is required (\"hinge\", \"ball\" or \"none\")");
    if (ikd_val_type(type) != IKD_DOC_STRING) return bad(err, ft.s, "must be a string: \"hinge\", \"ball\" or \"none\"");
    if (str_is(type, "hinge")) c->type = IKD_CONSTRAINT_HINGE;
    else if (str_is(type, "ball")) c->type = IKD_CONSTRAINT_BALL;
    else if (str_is(type, "none")) c->type = IKD_CONSTRAINT_NONE;
    else return bad(err, ft.s, "unknown constraint type (use \"hinge\", \"ball\" or \"none\")");

    field fa = field_sub(f, "axis");
    ikd_val x = ikd_val_get(v, "axis");
    if (x.v) {
        if (c->type != IKD_CONSTRAINT_HINGE) return bad(err, fa.s, "only a hinge takes an axis");
        if ((rc = get_vec3(x, fa.s, &c->axis, err))) return rc;
    } else if (c->type == IKD_CONSTRAINT_HINGE) {
        return bad(err, fa.s, "is required for a hinge");
    }
    if ((x = ikd_val_get(v, "min_deg")).v) {
        field fm = field_sub(f, "min_deg");
        if (c->type != IKD_CONSTRAINT_HINGE) return bad(err, fm.s, "only a hinge takes min_deg");
        if ((rc = get_number(x, fm.s, &c->min_deg, err))) return rc;
    }
    if ((x = ikd_val_get(v, "max_deg")).v) {
        field fm = field_sub(f, "max_deg");
        if (c->type == IKD_CONSTRAINT_NONE) return bad(err, fm.s, "a \"none\" constraint takes no limits");
        if ((rc = get_number(x, fm.s, &c->max_deg, err))) return rc;
    }
    if ((x = ikd_val_get(v, "reference")).v) {
        field fr = field_sub(f, "reference");
        if ((rc = get_vec3(x, fr.s, &c->reference, err))) return rc;
        c->has_reference = 1;
    }
    return IKD_E_OK;
}

static ikd_code parse_joint(ikd_val v, const char *f, ikd_joint *j, char **name, ikd_error *err)
{
    static const char *const keys[] = {"name", "position", "rotation", "constraint", NULL};
    ikd_doc_type t = ikd_val_type(v);
    if (t == IKD_DOC_ARRAY) return get_vec3(v, f, &j->position, err);
    if (t != IKD_DOC_OBJECT) return bad(err, f, "must be an object or an array of 3 numbers");
    ikd_code rc = check_keys(v, f, keys, err);
    if (rc) return rc;
    ikd_val x;
    if ((x = ikd_val_get(v, "name")).v) {
        field fn = field_sub(f, "name");
        if (ikd_val_type(x) != IKD_DOC_STRING) return bad(err, fn.s, "must be a string");
        size_t len;
        const char *s = x.ops->string(x.v, &len);
        if (len > IKD_NAME_MAX) return bad(err, fn.s, "is longer than 256 bytes");
        if (memchr(s, '\0', len)) return bad(err, fn.s, "must not contain NUL");
        *name = malloc(len + 1);
        if (!*name) return ikd_error_set(err, IKD_E_NOMEM, fn.s, NULL);
        memcpy(*name, s, len);
        (*name)[len] = '\0';
    }
    field fp = field_sub(f, "position");
    if (!(x = ikd_val_get(v, "position")).v) return bad(err, fp.s, "is required");
    if ((rc = get_vec3(x, fp.s, &j->position, err))) return rc;
    if ((x = ikd_val_get(v, "rotation")).v) {
        field fr = field_sub(f, "rotation");
        if ((rc = get_quat(x, fr.s, &j->rotation, err))) return rc;
    }
    if ((x = ikd_val_get(v, "constraint")).v) {
        field fc = field_sub(f, "constraint");
        if ((rc = parse_constraint(x, fc.s, &j->constraint, err))) return rc;
    }
    return IKD_E_OK;
}

static ikd_code parse_chain(ikd_val v, const char *pre, ikd_request *req, ikd_error *err)
{
    static const char *const keys[] = {"joints", NULL};
    field fc = field_sub(pre, "chain"), fj = field_sub(fc.s, "joints");
    if (!v.v) return bad(err, fc.s, "is required");
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return bad(err, fc.s, "must be an object with \"joints\"");
    ikd_code rc = check_keys(v, fc.s, keys, err);
    if (rc) return rc;
    ikd_val joints = ikd_val_get(v, "joints");
    if (!joints.v) return bad(err, fj.s, "is required");
    if (ikd_val_type(joints) != IKD_DOC_ARRAY) return bad(err, fj.s, "must be an array of joints");
    size_t n = joints.ops->size(joints.v);
    if (n > IKD_MAX_JOINTS)
        return ikd_error_set(err, IKD_E_INVALID, fj.s, "at most %d joints are allowed", IKD_MAX_JOINTS);
    if (ikd_request_alloc_joints(req, n) != 0) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    for (size_t i = 0; i < n; i++) {
        field fi = field_index(fj.s, i);
        if ((rc = parse_joint(ikd_val_at(joints, i), fi.s, &req->joints[i], &req->names[i], err))) return rc;
    }
    return IKD_E_OK;
}

static ikd_code parse_target(ikd_val v, const char *pre, ikd_problem *p, ikd_error *err)
{
    static const char *const keys[] = {"position", "rotation", NULL};
    field ft = field_sub(pre, "target");
    if (!v.v) return bad(err, ft.s, "is required");
    ikd_doc_type t = ikd_val_type(v);
    if (t == IKD_DOC_ARRAY) return get_vec3(v, ft.s, &p->target, err);
    if (t != IKD_DOC_OBJECT) return bad(err, ft.s, "must be an object or an array of 3 numbers");
    ikd_code rc = check_keys(v, ft.s, keys, err);
    if (rc) return rc;
    field fp = field_sub(ft.s, "position"), fr = field_sub(ft.s, "rotation");
    ikd_val x = ikd_val_get(v, "position");
    if (!x.v) return bad(err, fp.s, "is required");
    if ((rc = get_vec3(x, fp.s, &p->target, err))) return rc;
    if ((x = ikd_val_get(v, "rotation")).v) {
        if ((rc = get_quat(x, fr.s, &p->target_rotation, err))) return rc;
        p->has_target_rotation = 1;
    }
    return IKD_E_OK;
}

/* "options": every key must be a row of the library's options table. */
static ikd_code parse_options(ikd_val v, const char *pre, ikd_options *o, ikd_error *err)
{
    size_t n;
    const ikd_option_info *table = ikd_options_table(&n);
    field fo = field_sub(pre, "options");
    if (!v.v) return IKD_E_OK;
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return bad(err, fo.s, "must be an object");
    size_t count = v.ops->size(v.v);
    unsigned seen = 0;
    for (size_t m = 0; m < count; m++) {
        const char *key;
        size_t klen;
        ikd_val x = {v.ops, v.ops->member(v.v, m, &key, &klen)};
        field f = field_key(fo.s, key, klen);
        const ikd_option_info *row = NULL;
        size_t idx = 0;
        for (size_t i = 0; i < n && !row; i++)
            if (strlen(table[i].name) == klen && memcmp(table[i].name, key, klen) == 0) row = &table[idx = i];
        if (!row) return bad(err, f.s, "unknown option (see GET /v1/solvers)");
        if (seen & (1u << idx)) return ikd_error_set(err, IKD_E_MALFORMED, f.s, "duplicate key");
        seen |= 1u << idx;
        if (ikd_val_type(x) == IKD_DOC_NULL) continue;
        char *dst = (char *)o + row->offset;
        switch (row->type) {
        case IKD_OPT_INT: {
            if (ikd_val_type(x) != IKD_DOC_INT) return bad(err, f.s, "must be an integer");
            long long iv = x.ops->integer(x.v);
            if (iv < (long long)row->min || iv > (long long)row->max)
                return ikd_error_set(err, IKD_E_INVALID, f.s, "must be an integer in [%g, %g]", row->min, row->max);
            *(int *)dst = (int)iv;
            break;
        }
        case IKD_OPT_NUMBER: {
            ikd_code rc = get_number(x, f.s, (double *)dst, err);
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
                return bad(err, f.s, msg);
            }
            *(int *)dst = found;
            break;
        }
        }
    }
    return IKD_E_OK;
}

ikd_code ikd_decode_solve(ikd_val root, const char *pre, ikd_request *req, ikd_error *err)
{
    static const char *const keys[] = {"solver", "chain", "target", "pole", "options", NULL};
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return bad(err, pre, pre[0] ? "must be an object" : "the body must be an object");
    ikd_code rc = check_keys(root, pre, keys, err);
    if (rc) return rc;
    ikd_problem *p = &req->problem;
    ikd_val x;
    if ((x = ikd_val_get(root, "solver")).v) {
        field fs = field_sub(pre, "solver");
        if (ikd_val_type(x) != IKD_DOC_STRING) return bad(err, fs.s, "must be a string");
        int found = 0;
        for (int s = 0; s < IKD_SOLVER__COUNT && !found; s++)
            if (str_is(x, ikd_solver_name((ikd_solver)s))) {
                p->solver = (ikd_solver)s;
                found = 1;
            }
        if (!found) return bad(err, fs.s, "unknown solver (see GET /v1/solvers)");
    }
    if ((rc = parse_chain(ikd_val_get(root, "chain"), pre, req, err))) return rc;
    if ((rc = parse_target(ikd_val_get(root, "target"), pre, p, err))) return rc;
    if ((x = ikd_val_get(root, "pole")).v) {
        field fp = field_sub(pre, "pole");
        if ((rc = get_vec3(x, fp.s, &p->pole, err))) return rc;
        p->has_pole = 1;
    }
    return parse_options(ikd_val_get(root, "options"), pre, &p->options, err);
}

ikd_code ikd_decode_batch(ikd_val root, ikd_val *items, ikd_error *err)
{
    static const char *const keys[] = {"problems", NULL};
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return bad(err, "", "the body must be an object with \"problems\"");
    ikd_code rc = check_keys(root, "", keys, err);
    if (rc) return rc;
    *items = ikd_val_get(root, "problems");
    if (!items->v) return bad(err, "problems", "is required");
    if (ikd_val_type(*items) != IKD_DOC_ARRAY) return bad(err, "problems", "must be an array of solve requests");
    return IKD_E_OK;
}
