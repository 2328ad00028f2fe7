/* doc.h - a read-only view of a decoded document (JSON or MessagePack), so that requests are decoded once for both. */
#ifndef IKD_DOC_H
#define IKD_DOC_H

#include <stddef.h>

#include "ikd/error.h"

/* The codec's error code, numbered after the library's (the service's
 * table, src/service/wire.c, gives it its wire name and HTTP status). */
enum ikd_codec_code {
    IKD_E_MALFORMED = IKD_E__COUNT, /* the body is not a well-formed document */
    IKD_E_UNKNOWN_SKELETON,         /* "skeleton": "sk_..." names a skeleton this instance does not hold */
    IKD_E__CODEC_END
};

typedef enum {
    IKD_DOC_NULL,
    IKD_DOC_BOOL,
    IKD_DOC_INT,
    IKD_DOC_REAL,
    IKD_DOC_STRING,
    IKD_DOC_ARRAY,
    IKD_DOC_OBJECT,
    IKD_DOC_OTHER /* binary, extension types */
} ikd_doc_type;

/* How one encoding's values are read. Values are opaque pointers into that
 * encoding's own tree (jansson json_t, msgpack_object). */
typedef struct ikd_doc_ops {
    ikd_doc_type (*type)(const void *v);
    size_t (*size)(const void *v);                       /* array length or number of members */
    const void *(*at)(const void *v, size_t i);          /* array element i */
    /* member i of an object: its value, and its key (not NUL-terminated) */
    const void *(*member)(const void *v, size_t i, const char **key, size_t *key_len);
    double (*real)(const void *v);                      /* INT or REAL as a double */
    long long (*integer)(const void *v);                 /* INT */
    const char *(*string)(const void *v, size_t *len);   /* STRING, not NUL-terminated */
    /* An ARRAY of exactly n numbers (INT or REAL) as doubles: 1; else 0
     * (out then undefined). One call for a position or a rotation. */
    int (*reals)(const void *v, double *out, size_t n);
} ikd_doc_ops;

typedef struct ikd_val {
    const ikd_doc_ops *ops;
    const void *v; /* NULL: absent */
} ikd_val;

static inline ikd_doc_type ikd_val_type(ikd_val x) { return x.v ? x.ops->type(x.v) : IKD_DOC_NULL; }
static inline int ikd_val_is_number(ikd_val x)
{
    ikd_doc_type t = ikd_val_type(x);
    return t == IKD_DOC_INT || t == IKD_DOC_REAL;
}
static inline ikd_val ikd_val_at(ikd_val x, size_t i) { ikd_val r = {x.ops, x.ops->at(x.v, i)}; return r; }

#endif
