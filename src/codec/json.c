/* json.c - JSON request decoding with field-path errors, and reply/error encoding. */
#include "json.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Parser flags: duplicate keys are an error, trailing data is an error. */
#define IKD_JSON_FLAGS JSON_REJECT_DUPLICATES

typedef struct field {
    char s[IKD_ERROR_FIELD_MAX];
} field;

/* Append `s` to f->s, truncating at the buffer's end. */
static void field_cat(field *f, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (n > sizeof f->s - 1 - *len) n = sizeof f->s - 1 - *len;
    memcpy(f->s + *len, s, n);
    *len += n;
    f->s[*len] = '\0';
}

/* parent + "." + key (or just key when parent is empty) */
static field field_key(const char *parent, const char *key)
{
    field f;
    size_t len = 0;
    f.s[0] = '\0';
    field_cat(&f, &len, parent);
    if (parent[0]) field_cat(&f, &len, ".");
    field_cat(&f, &len, key);
    return f;
}

static field field_index(const char *parent, size_t i)
{
    field f;
    char idx[32];
    size_t len = 0;
    f.s[0] = '\0';
    field_cat(&f, &len, parent);
    snprintf(idx, sizeof idx, "[%zu]", i);
    field_cat(&f, &len, idx);
    return f;
}

static ikd_code bad(ikd_error *err, const char *f, const char *msg)
{
    return ikd_error_set(err, IKD_E_INVALID, f, "%s", msg);
}

/* Every key of `obj` must be one of the NULL-terminated `allowed`. */
static ikd_code check_keys(json_t *obj, const char *parent, const char *const *allowed, ikd_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(key, *a) == 0) { ok = 1; break; }
        }
        if (!ok) {
            field f = field_key(parent, key);
            return bad(err, f.s, "unknown field");
        }
    }
    return IKD_E_OK;
}

static ikd_code get_number(json_t *v, const char *f, double *out, ikd_error *err)
{
    if (!json_is_number(v)) return bad(err, f, "must be a number");
    *out = json_number_value(v);
    return IKD_E_OK;
}

static ikd_code get_numbers(json_t *v, const char *f, double *out, size_t n, ikd_error *err)
{
    char msg[64];
    snprintf(msg, sizeof msg, "must be an array of %zu numbers", n);
    if (!json_is_array(v) || json_array_size(v) != n) return bad(err, f, msg);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_number(x)) return bad(err, f, msg);
        out[i] = json_number_value(x);
    }
    return IKD_E_OK;
}

static ikd_code get_vec3(json_t *v, const char *f, ikd_vec3 *out, ikd_error *err)
{
    double a[3];
    ikd_code rc = get_numbers(v, f, a, 3, err);
    if (rc == IKD_E_OK) *out = ikd_vec3_make(a[0], a[1], a[2]);
    return rc;
}

static ikd_code get_quat(json_t *v, const char *f, ikd_quat *out, ikd_error *err)
{
    double a[4];
    ikd_code rc = get_numbers(v, f, a, 4, err);
    if (rc == IKD_E_OK) *out = ikd_quat_make(a[0], a[1], a[2], a[3]);
    return rc;
}

/* Optional member: NULL when absent or JSON null. */
static json_t *member(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

static ikd_code parse_constraint(json_t *v, const char *f, ikd_constraint *c, ikd_error *err)
{
    static const char *const keys[] = {"type", "axis", "min_deg", "max_deg", "reference", NULL};
    if (!json_is_object(v)) return bad(err, f, "must be an object");
    ikd_code rc = check_keys(v, f, keys, err);
    if (rc) return rc;
    field ft = field_key(f, "type");
    json_t *type = member(v, "type");
    if (!type) return bad(err, ft.s, "is required (\"hinge\", \"ball\" or \"none\")");
    if (!json_is_string(type)) return bad(err, ft.s, "must be a string: \"hinge\", \"ball\" or \"none\"");
    const char *t = json_string_value(type);
    if (strcmp(t, "hinge") == 0) c->type = IKD_CONSTRAINT_HINGE;
    else if (strcmp(t, "ball") == 0) c->type = IKD_CONSTRAINT_BALL;
    else if (strcmp(t, "none") == 0) c->type = IKD_CONSTRAINT_NONE;
    else return bad(err, ft.s, "unknown constraint type (use \"hinge\", \"ball\" or \"none\")");

    json_t *x;
    if ((x = member(v, "axis"))) {
        field fa = field_key(f, "axis");
        if (c->type != IKD_CONSTRAINT_HINGE) return bad(err, fa.s, "only a hinge takes an axis");
        if ((rc = get_vec3(x, fa.s, &c->axis, err))) return rc;
    } else if (c->type == IKD_CONSTRAINT_HINGE) {
        field fa = field_key(f, "axis");
        return bad(err, fa.s, "is required for a hinge");
    }
    if ((x = member(v, "min_deg"))) {
        field fm = field_key(f, "min_deg");
        if (c->type != IKD_CONSTRAINT_HINGE) return bad(err, fm.s, "only a hinge takes min_deg");
        if ((rc = get_number(x, fm.s, &c->min_deg, err))) return rc;
    }
    if ((x = member(v, "max_deg"))) {
        field fm = field_key(f, "max_deg");
        if (c->type == IKD_CONSTRAINT_NONE) return bad(err, fm.s, "a \"none\" constraint takes no limits");
        if ((rc = get_number(x, fm.s, &c->max_deg, err))) return rc;
    }
    if ((x = member(v, "reference"))) {
        field fr = field_key(f, "reference");
        if ((rc = get_vec3(x, fr.s, &c->reference, err))) return rc;
        c->has_reference = 1;
    }
    return IKD_E_OK;
}

static ikd_code parse_joint(json_t *v, const char *f, ikd_joint *j, const char **name, ikd_error *err)
{
    static const char *const keys[] = {"name", "position", "rotation", "constraint", NULL};
    if (json_is_array(v)) return get_vec3(v, f, &j->position, err);
    if (!json_is_object(v)) return bad(err, f, "must be an object or an array of 3 numbers");
    ikd_code rc = check_keys(v, f, keys, err);
    if (rc) return rc;
    json_t *x;
    if ((x = member(v, "name"))) {
        field fn = field_key(f, "name");
        if (!json_is_string(x)) return bad(err, fn.s, "must be a string");
        if (json_string_length(x) > IKD_NAME_MAX) return bad(err, fn.s, "is longer than 256 bytes");
        if (strlen(json_string_value(x)) != json_string_length(x)) return bad(err, fn.s, "must not contain NUL");
        *name = json_string_value(x);
    }
    field fp = field_key(f, "position");
    if (!(x = member(v, "position"))) return bad(err, fp.s, "is required");
    if ((rc = get_vec3(x, fp.s, &j->position, err))) return rc;
    if ((x = member(v, "rotation"))) {
        field fr = field_key(f, "rotation");
        if ((rc = get_quat(x, fr.s, &j->rotation, err))) return rc;
    }
    if ((x = member(v, "constraint"))) {
        field fc = field_key(f, "constraint");
        if ((rc = parse_constraint(x, fc.s, &j->constraint, err))) return rc;
    }
    return IKD_E_OK;
}

static ikd_code parse_chain(json_t *v, ikd_request *req, ikd_error *err)
{
    static const char *const keys[] = {"joints", NULL};
    if (!v) return bad(err, "chain", "is required");
    if (!json_is_object(v)) return bad(err, "chain", "must be an object with \"joints\"");
    ikd_code rc = check_keys(v, "chain", keys, err);
    if (rc) return rc;
    json_t *joints = member(v, "joints");
    if (!joints) return bad(err, "chain.joints", "is required");
    if (!json_is_array(joints)) return bad(err, "chain.joints", "must be an array of joints");
    size_t n = json_array_size(joints);
    if (n > IKD_MAX_JOINTS) {
        return ikd_error_set(err, IKD_E_INVALID, "chain.joints", "at most %d joints are allowed",
                             IKD_MAX_JOINTS);
    }
    if (ikd_request_alloc_joints(req, n) != 0) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    for (size_t i = 0; i < n; i++) {
        field fj = field_index("chain.joints", i);
        if ((rc = parse_joint(json_array_get(joints, i), fj.s, &req->joints[i], &req->names[i], err))) return rc;
    }
    return IKD_E_OK;
}

static ikd_code parse_target(json_t *v, ikd_problem *p, ikd_error *err)
{
    static const char *const keys[] = {"position", "rotation", NULL};
    if (!v) return bad(err, "target", "is required");
    if (json_is_array(v)) return get_vec3(v, "target", &p->target, err);
    if (!json_is_object(v)) return bad(err, "target", "must be an object or an array of 3 numbers");
    ikd_code rc = check_keys(v, "target", keys, err);
    if (rc) return rc;
    json_t *x = member(v, "position");
    if (!x) return bad(err, "target.position", "is required");
    if ((rc = get_vec3(x, "target.position", &p->target, err))) return rc;
    if ((x = member(v, "rotation"))) {
        if ((rc = get_quat(x, "target.rotation", &p->target_rotation, err))) return rc;
        p->has_target_rotation = 1;
    }
    return IKD_E_OK;
}

/* "options": every key must be a row of the library's options table. */
static ikd_code parse_options(json_t *v, ikd_options *o, ikd_error *err)
{
    size_t n;
    const ikd_option_info *table = ikd_options_table(&n);
    if (!v) return IKD_E_OK;
    if (!json_is_object(v)) return bad(err, "options", "must be an object");
    const char *key;
    json_t *x;
    json_object_foreach(v, key, x) {
        field f = field_key("options", key);
        const ikd_option_info *row = NULL;
        for (size_t i = 0; i < n && !row; i++)
            if (strcmp(table[i].name, key) == 0) row = &table[i];
        if (!row) return bad(err, f.s, "unknown option (see GET /v1/solvers)");
        if (json_is_null(x)) continue;
        char *dst = (char *)o + row->offset;
        switch (row->type) {
        case IKD_OPT_INT: {
            if (!json_is_integer(x)) return bad(err, f.s, "must be an integer");
            json_int_t iv = json_integer_value(x);
            if (iv < (json_int_t)row->min || iv > (json_int_t)row->max)
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
            for (int c = 0; json_is_string(x) && row->choices[c]; c++)
                if (strcmp(row->choices[c], json_string_value(x)) == 0) found = c;
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

static void doc_free(void *doc) { json_decref((json_t *)doc); }

ikd_code ikd_json_parse_solve_value(void *value, ikd_request *req, ikd_error *err)
{
    static const char *const keys[] = {"solver", "chain", "target", "pole", "options", NULL};
    json_t *root = value;
    if (!json_is_object(root)) return bad(err, "", "must be a JSON object");
    ikd_code rc = check_keys(root, "", keys, err);
    if (rc) return rc;
    ikd_problem *p = &req->problem;
    json_t *x;
    if ((x = member(root, "solver"))) {
        if (!json_is_string(x)) return bad(err, "solver", "must be a string");
        if (ikd_solver_from_name(json_string_value(x), &p->solver) != 0)
            return bad(err, "solver", "unknown solver (see GET /v1/solvers)");
    }
    if ((rc = parse_chain(member(root, "chain"), req, err))) return rc;
    if ((rc = parse_target(member(root, "target"), p, err))) return rc;
    if ((x = member(root, "pole"))) {
        if ((rc = get_vec3(x, "pole", &p->pole, err))) return rc;
        p->has_pole = 1;
    }
    return parse_options(member(root, "options"), &p->options, err);
}

static json_t *load(const char *body, size_t len, ikd_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(body, len, IKD_JSON_FLAGS, &jerr);
    if (!root) {
        ikd_error_set(err, IKD_E_MALFORMED, "", "malformed JSON at line %d column %d: %s", jerr.line, jerr.column,
                      jerr.text);
    }
    return root;
}

ikd_code ikd_json_parse_solve(const char *body, size_t len, ikd_request *req, ikd_error *err)
{
    ikd_error_clear(err);
    json_t *root = load(body, len, err);
    if (!root) return err->code;
    req->doc = root;
    req->doc_free = doc_free;
    if (!json_is_object(root)) return bad(err, "", "the body must be a JSON object");
    return ikd_json_parse_solve_value(root, req, err);
}

ikd_code ikd_json_batch_open(const char *body, size_t len, ikd_json_batch *b, ikd_error *err)
{
    static const char *const keys[] = {"problems", NULL};
    memset(b, 0, sizeof *b);
    ikd_error_clear(err);
    json_t *root = load(body, len, err);
    if (!root) return err->code;
    ikd_code rc = IKD_E_OK;
    json_t *items = json_object_get(root, "problems");
    if (!json_is_object(root)) rc = bad(err, "", "the body must be a JSON object with \"problems\"");
    else if ((rc = check_keys(root, "", keys, err))) ;
    else if (!items) rc = bad(err, "problems", "is required");
    else if (!json_is_array(items)) rc = bad(err, "problems", "must be an array of solve requests");
    if (rc) {
        json_decref(root);
        return rc;
    }
    b->doc = root;
    b->items = items;
    b->count = json_array_size(items);
    return IKD_E_OK;
}

ikd_code ikd_json_batch_item(const ikd_json_batch *b, size_t i, ikd_request *req, ikd_error *err)
{
    ikd_error_clear(err);
    ikd_code rc = ikd_json_parse_solve_value(json_array_get((json_t *)b->items, i), req, err);
    if (rc) {
        field f = field_index("problems", i);
        char inner[IKD_ERROR_FIELD_MAX];
        memcpy(inner, err->field, sizeof inner);
        size_t len = strlen(f.s);
        if (inner[0]) field_cat(&f, &len, ".");
        field_cat(&f, &len, inner);
        memcpy(err->field, f.s, sizeof err->field);
    }
    return rc;
}

void ikd_json_batch_close(ikd_json_batch *b)
{
    if (b->doc) json_decref((json_t *)b->doc);
    memset(b, 0, sizeof *b);
}

static void write_vec(ikd_buf *out, const double *v, size_t n)
{
    ikd_buf_putc(out, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) ikd_buf_putc(out, ',');
        ikd_buf_json_number(out, v[i]);
    }
    ikd_buf_putc(out, ']');
}

void ikd_json_write_solve(ikd_buf *out, const ikd_request *req, const ikd_result *res, const ikd_pose_joint *pose,
                          double solve_us)
{
    ikd_buf_puts(out, "{\"solver\":");
    ikd_buf_json_string(out, ikd_solver_name(res->solver));
    ikd_buf_puts(out, ",\"status\":");
    ikd_buf_json_string(out, ikd_status_name(res->status));
    ikd_buf_puts(out, res->reached ? ",\"reached\":true,\"error\":" : ",\"reached\":false,\"error\":");
    ikd_buf_json_number(out, res->error);
    ikd_buf_puts(out, ",\"iterations\":");
    ikd_buf_json_number(out, res->iterations);
    if (res->solver == IKD_SOLVER_JACOBIAN && req->problem.has_target_rotation) {
        ikd_buf_puts(out, ",\"rotation_error_deg\":");
        ikd_buf_json_number(out, res->rotation_error_deg);
    }
    ikd_buf_puts(out, ",\"joints\":[");
    for (size_t i = 0; i < req->problem.joint_count; i++) {
        const ikd_pose_joint *j = &pose[i];
        ikd_buf_puts(out, i ? ",{" : "{");
        if (req->names && req->names[i]) {
            ikd_buf_puts(out, "\"name\":");
            ikd_buf_json_string(out, req->names[i]);
            ikd_buf_putc(out, ',');
        }
        ikd_buf_puts(out, "\"position\":");
        write_vec(out, &j->position.x, 3);
        ikd_buf_puts(out, ",\"rotation\":");
        write_vec(out, &j->rotation.x, 4);
        ikd_buf_puts(out, ",\"local_rotation\":");
        write_vec(out, &j->local_rotation.x, 4);
        ikd_buf_putc(out, '}');
    }
    ikd_buf_puts(out, "],\"solve_us\":");
    ikd_buf_json_number(out, solve_us);
    ikd_buf_putc(out, '}');
}

void ikd_json_write_error(ikd_buf *out, const ikd_error *err)
{
    ikd_buf_puts(out, "{\"error\":{\"code\":");
    ikd_buf_json_string(out, ikd_code_name(err->code));
    ikd_buf_puts(out, ",\"message\":");
    ikd_buf_json_string(out, err->message[0] ? err->message : ikd_strerror(err->code));
    ikd_buf_puts(out, ",\"field\":");
    ikd_buf_json_string(out, err->field);
    ikd_buf_puts(out, "}}");
}
