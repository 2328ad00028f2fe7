/* decode.c - solve request decoding over the document view, with JSON field paths in every error. */
#include "decode.h"

#include "buf.h"
#include "field.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_constraint(ikd_val v, const ikd_path *f, ikd_constraint *c, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("type"), FIELD("axis"), FIELD("min_deg"), FIELD("max_deg"), FIELD("reference")};
    enum { TYPE, AXIS, MIN, MAX, REF };
    ikd_val m[5];
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be an object");
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    ikd_path ft = ikd_field_key(f, "type");
    ikd_val type = m[TYPE];
    if (!type.v) return ikd_field_bad(err, &ft, "is required (\"hinge\", \"ball\" or \"none\")");
    if (ikd_val_type(type) != IKD_DOC_STRING) return ikd_field_bad(err, &ft, "must be a string: \"hinge\", \"ball\" or \"none\"");
    if (ikd_field_str_is(type, "hinge")) c->type = IKD_CONSTRAINT_HINGE;
    else if (ikd_field_str_is(type, "ball")) c->type = IKD_CONSTRAINT_BALL;
    else if (ikd_field_str_is(type, "none")) c->type = IKD_CONSTRAINT_NONE;
    else return ikd_field_bad(err, &ft, "unknown constraint type (use \"hinge\", \"ball\" or \"none\")");

    ikd_path fa = ikd_field_key(f, "axis");
    ikd_val x = m[AXIS];
    if (x.v) {
        if (c->type != IKD_CONSTRAINT_HINGE) return ikd_field_bad(err, &fa, "only a hinge takes an axis");
        if ((rc = ikd_field_vec3(x, &fa, &c->axis, err))) return rc;
    } else if (c->type == IKD_CONSTRAINT_HINGE) {
        return ikd_field_bad(err, &fa, "is required for a hinge");
    }
    if ((x = m[MIN]).v) {
        ikd_path fm = ikd_field_key(f, "min_deg");
        if (c->type != IKD_CONSTRAINT_HINGE) return ikd_field_bad(err, &fm, "only a hinge takes min_deg");
        if ((rc = ikd_field_number(x, &fm, &c->min_deg, err))) return rc;
    }
    if ((x = m[MAX]).v) {
        ikd_path fm = ikd_field_key(f, "max_deg");
        if (c->type == IKD_CONSTRAINT_NONE) return ikd_field_bad(err, &fm, "a \"none\" constraint takes no limits");
        if ((rc = ikd_field_number(x, &fm, &c->max_deg, err))) return rc;
    }
    if ((x = m[REF]).v) {
        ikd_path fr = ikd_field_key(f, "reference");
        if ((rc = ikd_field_vec3(x, &fr, &c->reference, err))) return rc;
        c->has_reference = 1;
    }
    return IKD_E_OK;
}

static int parse_joint(ikd_val v, const ikd_path *f, ikd_request *req, size_t index, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("name"), FIELD("position"), FIELD("rotation"), FIELD("constraint")};
    enum { NAME, POS, ROT, CONS };
    ikd_val m[4];
    ikd_joint *j = &req->joints[index];
    ikd_doc_type t = ikd_val_type(v);
    if (t == IKD_DOC_ARRAY) return ikd_field_vec3(v, f, &j->position, err);
    if (t != IKD_DOC_OBJECT) return ikd_field_bad(err, f, "must be an object or an array of 3 numbers");
    int rc = GATHER(v, f, keys, m, err);
    if (rc) return rc;
    ikd_val x;
    if ((x = m[NAME]).v) {
        ikd_path fn = ikd_field_key(f, "name");
        if (ikd_val_type(x) != IKD_DOC_STRING) return ikd_field_bad(err, &fn, "must be a string");
        size_t len;
        const char *s = x.ops->string(x.v, &len);
        if (len > IKD_NAME_MAX) return ikd_field_bad(err, &fn, "is longer than 256 bytes");
        if (memchr(s, '\0', len)) return ikd_field_bad(err, &fn, "must not contain NUL");
        if (!ikd_utf8_valid(s, len)) return ikd_field_bad(err, &fn, "must be valid UTF-8");
        if (ikd_request_set_name(req, index, s, len) != 0) return ikd_field_fail(err, IKD_E_NOMEM, &fn, "out of memory");
    }
    ikd_path fp = ikd_field_key(f, "position");
    if (!(x = m[POS]).v) return ikd_field_bad(err, &fp, "is required");
    if ((rc = ikd_field_vec3(x, &fp, &j->position, err))) return rc;
    if ((x = m[ROT]).v) {
        ikd_path fr = ikd_field_key(f, "rotation");
        if ((rc = ikd_field_quat(x, &fr, &j->rotation, err))) return rc;
    }
    if ((x = m[CONS]).v) {
        ikd_path fc = ikd_field_key(f, "constraint");
        if ((rc = parse_constraint(x, &fc, &j->constraint, err))) return rc;
    }
    return IKD_E_OK;
}

static int parse_chain(ikd_val v, const ikd_path *pre, ikd_request *req, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("joints")};
    ikd_path fc = ikd_field_key(pre, "chain"), fj = ikd_field_key(&fc, "joints");
    if (!v.v) return ikd_field_bad(err, &fc, "is required");
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, &fc, "must be an object with \"joints\"");
    ikd_val joints;
    int rc = GATHER(v, &fc, keys, &joints, err);
    if (rc) return rc;
    if (!joints.v) return ikd_field_bad(err, &fj, "is required");
    if (ikd_val_type(joints) != IKD_DOC_ARRAY) return ikd_field_bad(err, &fj, "must be an array of joints");
    size_t n = joints.ops->size(joints.v);
    if (n > IKD_MAX_JOINTS) return ikd_field_bad(err, &fj, "at most 4096 joints are allowed");
    if (ikd_request_alloc_joints(req, n) != 0) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    for (size_t i = 0; i < n; i++) {
        ikd_path fi = ikd_field_index(&fj, i);
        if ((rc = parse_joint(ikd_val_at(joints, i), &fi, req, i, err))) return rc;
    }
    return IKD_E_OK;
}

static int parse_target(ikd_val v, const ikd_path *pre, ikd_problem *p, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("position"), FIELD("rotation")};
    ikd_path ft = ikd_field_key(pre, "target");
    if (!v.v) return ikd_field_bad(err, &ft, "is required");
    ikd_doc_type t = ikd_val_type(v);
    if (t == IKD_DOC_ARRAY) return ikd_field_vec3(v, &ft, &p->target, err);
    if (t != IKD_DOC_OBJECT) return ikd_field_bad(err, &ft, "must be an object or an array of 3 numbers");
    ikd_val m[2];
    int rc = GATHER(v, &ft, keys, m, err);
    if (rc) return rc;
    ikd_path fp = ikd_field_key(&ft, "position"), fr = ikd_field_key(&ft, "rotation");
    ikd_val x = m[0];
    if (!x.v) return ikd_field_bad(err, &fp, "is required");
    if ((rc = ikd_field_vec3(x, &fp, &p->target, err))) return rc;
    if ((x = m[1]).v) {
        if ((rc = ikd_field_quat(x, &fr, &p->target_rotation, err))) return rc;
        p->has_target_rotation = 1;
    }
    return IKD_E_OK;
}

int ikd_decode_solve(ikd_val root, long item, ikd_request *req, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("solver"), FIELD("chain"), FIELD("target"), FIELD("pole"), FIELD("options")};
    ikd_path body = ikd_field_key(NULL, ""), batch = ikd_field_key(NULL, "problems"), in_batch = ikd_field_index(&batch, (size_t)item);
    const ikd_path *pre = item < 0 ? &body : &in_batch;
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return ikd_field_bad(err, pre, item >= 0 ? "must be an object" : "the body must be an object");
    enum { SOLVER, CHAIN, TARGET, POLE, OPTIONS };
    ikd_val m[5];
    int rc = GATHER(root, pre, keys, m, err);
    if (rc) return rc;
    ikd_problem *p = &req->problem;
    ikd_val x;
    if ((x = m[SOLVER]).v) {
        ikd_path fs = ikd_field_key(pre, "solver");
        if (ikd_val_type(x) != IKD_DOC_STRING) return ikd_field_bad(err, &fs, "must be a string");
        int found = 0;
        for (int s = 0; s < IKD_SOLVER__COUNT && !found; s++)
            if (ikd_field_str_is(x, ikd_solver_name((ikd_solver)s))) {
                p->solver = (ikd_solver)s;
                found = 1;
            }
        if (!found) return ikd_field_bad(err, &fs, "unknown solver (see GET /v1/solvers)");
    }
    if ((rc = parse_chain(m[CHAIN], pre, req, err))) return rc;
    if ((rc = parse_target(m[TARGET], pre, p, err))) return rc;
    if ((x = m[POLE]).v) {
        ikd_path fp = ikd_field_key(pre, "pole");
        if ((rc = ikd_field_vec3(x, &fp, &p->pole, err))) return rc;
        p->has_pole = 1;
    }
    size_t n;
    const ikd_option_info *table = ikd_options_table(&n);
    ikd_path fo = ikd_field_key(pre, "options");
    return ikd_field_options(m[OPTIONS], &fo, table, n, &p->options, err);
}

int ikd_decode_batch(ikd_val root, ikd_val *items, ikd_error *err)
{
    static const ikd_field keys[] = {FIELD("problems")};
    ikd_path fp = ikd_field_key(NULL, "problems");
    if (ikd_val_type(root) != IKD_DOC_OBJECT) return ikd_field_bad(err, NULL, "the body must be an object with \"problems\"");
    int rc = GATHER(root, NULL, keys, items, err);
    if (rc) return rc;
    if (!items->v) return ikd_field_bad(err, &fp, "is required");
    if (ikd_val_type(*items) != IKD_DOC_ARRAY) return ikd_field_bad(err, &fp, "must be an array of solve requests");
    return IKD_E_OK;
}
