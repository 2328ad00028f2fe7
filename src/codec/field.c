/* field.c - reading request fields over the document view, with the JSON path of every error. */
#include "field.h"

#include <stdio.h>
#include <string.h>

ikd_path ikd_field_key(const ikd_path *parent, const char *key) { return (ikd_path){parent, key, strlen(key), 0}; }
ikd_path ikd_field_keyn(const ikd_path *parent, const char *key, size_t n) { return (ikd_path){parent, key, n, 0}; }
ikd_path ikd_field_index(const ikd_path *parent, size_t i) { return (ikd_path){parent, NULL, 0, i}; }

size_t ikd_field_render(const ikd_path *p, char *out, size_t size)
{
    if (!p) return 0;
    size_t n = ikd_field_render(p->parent, out, size);
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

int ikd_field_fail(ikd_error *err, int code, const ikd_path *p, const char *msg)
{
    char f[IKD_ERROR_FIELD_MAX] = "";
    ikd_field_render(p, f, sizeof f);
    return ikd_error_set(err, code, f, "%s", msg);
}

int ikd_field_bad(ikd_error *err, const ikd_path *p, const char *msg) { return ikd_field_fail(err, IKD_E_INVALID, p, msg); }

/* One pass over an object's members: every key must be one of the `n`
 * allowed (at most 8), none twice (MessagePack maps can carry duplicates);
 * out[a] is the value of allowed[a] (v = NULL when absent or null). */
ikd_val ikd_field_member(ikd_val obj, const char *key)
{
    ikd_val none = {obj.ops, NULL};
    if (ikd_val_type(obj) != IKD_DOC_OBJECT) return none;
    size_t klen = strlen(key);
    for (size_t i = 0, n = obj.ops->size(obj.v); i < n; i++) {
        const char *k;
        size_t len;
        const void *v = obj.ops->member(obj.v, i, &k, &len);
        if (len == klen && memcmp(k, key, len) == 0) return (ikd_val){obj.ops, v};
    }
    return none;
}

int ikd_field_gather(ikd_val obj, const ikd_path *parent, const ikd_field *allowed, int na, ikd_val *out, ikd_error *err)
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
            ikd_path f = ikd_field_keyn(parent, k, len);
            return idx < 0 ? ikd_field_bad(err, &f, "unknown field") : ikd_field_fail(err, IKD_E_MALFORMED, &f, "duplicate key");
        }
        seen |= 1u << idx;
        if (obj.ops->type(v) != IKD_DOC_NULL) out[idx].v = v;
    }
    return IKD_E_OK;
}

int ikd_field_number(ikd_val x, const ikd_path *f, double *out, ikd_error *err)
{
    if (!ikd_val_is_number(x)) return ikd_field_bad(err, f, "must be a number");
    *out = x.ops->real(x.v);
    if (!isfinite(*out)) return ikd_field_bad(err, f, "must be a finite number");
    return IKD_E_OK;
}

int ikd_field_numbers(ikd_val x, const ikd_path *f, double *out, size_t n, ikd_error *err)
{
    const char *msg = n == 3 ? "must be an array of 3 numbers" : "must be an array of 4 numbers";
    if (x.v && x.ops->reals(x.v, out, n)) { /* the usual case, in one call */
        for (size_t i = 0; i < n; i++)
            if (!isfinite(out[i])) return ikd_field_bad(err, f, "must be finite numbers");
        return IKD_E_OK;
    }
    if (ikd_val_type(x) != IKD_DOC_ARRAY || x.ops->size(x.v) != n) return ikd_field_bad(err, f, msg);
    for (size_t i = 0; i < n; i++) {
        ikd_val e = ikd_val_at(x, i);
        if (!ikd_val_is_number(e)) return ikd_field_bad(err, f, msg);
        out[i] = e.ops->real(e.v);
        if (!isfinite(out[i])) return ikd_field_bad(err, f, "must be finite numbers");
    }
    return IKD_E_OK;
}

int ikd_field_vec3(ikd_val x, const ikd_path *f, ikd_vec3 *out, ikd_error *err)
{
    double a[3];
    int rc = ikd_field_numbers(x, f, a, 3, err);
    if (rc == IKD_E_OK) *out = ikd_vec3_make(a[0], a[1], a[2]);
    return rc;
}

int ikd_field_quat(ikd_val x, const ikd_path *f, ikd_quat *out, ikd_error *err)
{
    double a[4];
    int rc = ikd_field_numbers(x, f, a, 4, err);
    if (rc == IKD_E_OK) *out = ikd_quat_make(a[0], a[1], a[2], a[3]);
    return rc;
}

/* A string equal to `s`. */
int ikd_field_str_is(ikd_val x, const char *s)
{
    size_t len;
    const char *v = x.ops->string(x.v, &len);
    return len == strlen(s) && memcmp(v, s, len) == 0;
}

int ikd_field_options(ikd_val v, const ikd_path *fo, const ikd_option_info *table, size_t n, void *base, ikd_error *err)
{
    return ikd_field_options_but(v, fo, table, n, base, NULL, err);
}

int ikd_field_options_but(ikd_val v, const ikd_path *fo, const ikd_option_info *table, size_t n, void *base,
                          const char *own, ikd_error *err)
{
    if (!v.v) return IKD_E_OK;
    if (ikd_val_type(v) != IKD_DOC_OBJECT) return ikd_field_bad(err, fo, "must be an object");
    size_t count = v.ops->size(v.v);
    unsigned seen = 0;
    for (size_t m = 0; m < count; m++) {
        const char *key;
        size_t klen;
        ikd_val x = {v.ops, v.ops->member(v.v, m, &key, &klen)};
        ikd_path f = ikd_field_keyn(fo, key, klen);
        const ikd_option_info *row = NULL;
        size_t idx = 0;
        if (own && strlen(own) == klen && memcmp(own, key, klen) == 0) continue; /* the caller's own */
        for (size_t i = 0; i < n && !row; i++)
            if (strlen(table[i].name) == klen && memcmp(table[i].name, key, klen) == 0) row = &table[idx = i];
        if (!row) return ikd_field_bad(err, &f, "unknown option (see GET /v1/solvers)");
        if (seen & (1u << idx)) return ikd_field_fail(err, IKD_E_MALFORMED, &f, "duplicate key");
        seen |= 1u << idx;
        if (ikd_val_type(x) == IKD_DOC_NULL) continue;
        char *dst = (char *)base + row->offset;
        switch (row->type) {
        case IKD_OPT_INT: {
            if (ikd_val_type(x) != IKD_DOC_INT) return ikd_field_bad(err, &f, "must be an integer");
            long long iv = x.ops->integer(x.v);
            if (iv < (long long)row->min || iv > (long long)row->max) {
                char msg[96];
                snprintf(msg, sizeof msg, "must be an integer in [%g, %g]", row->min, row->max);
                return ikd_field_bad(err, &f, msg);
            }
            *(int *)dst = (int)iv;
            break;
        }
        case IKD_OPT_NUMBER: {
            int rc = ikd_field_number(x, &f, (double *)dst, err);
            if (rc) return rc;
            break;
        }
        case IKD_OPT_ENUM: {
            int found = -1;
            for (int c = 0; ikd_val_type(x) == IKD_DOC_STRING && row->choices[c]; c++)
                if (ikd_field_str_is(x, row->choices[c])) found = c;
            if (found < 0) {
                char msg[128] = "must be one of:";
                for (int c = 0; row->choices[c]; c++) {
                    strncat(msg, c ? ", \"" : " \"", sizeof msg - strlen(msg) - 1);
                    strncat(msg, row->choices[c], sizeof msg - strlen(msg) - 1);
                    strncat(msg, "\"", sizeof msg - strlen(msg) - 1);
                }
                return ikd_field_bad(err, &f, msg);
            }
            *(int *)dst = found;
            break;
        }
        }
    }
    return IKD_E_OK;
}
