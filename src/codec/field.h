/* field.h - reading request fields over the document view, with the JSON path of every error (shared by the decoders). */
#ifndef IKD_FIELD_H
#define IKD_FIELD_H

#include <stddef.h>

#include "doc.h"
#include "ikd/error.h"
#include "ikd/math.h"
#include "ikd/solve.h"

/* The JSON path of a value, as a chain of segments on the callers' stacks;
 * it is turned into text ("chain.joints[2].position") only for an error. */
typedef struct ikd_path {
    const struct ikd_path *parent;
    const char *key; /* NULL: an array index */
    size_t key_len;
    size_t index;
} ikd_path;

ikd_path ikd_field_key(const ikd_path *parent, const char *key);
ikd_path ikd_field_keyn(const ikd_path *parent, const char *key, size_t n);
ikd_path ikd_field_index(const ikd_path *parent, size_t i);
/* The path as text ("chain.joints[2].position"); returns its length. */
size_t ikd_field_render(const ikd_path *p, char *out, size_t size);
/* Fill `err` with `code` (IKD_E_INVALID for ikd_field_bad), the path and
 * `msg`; returns the code. */
int ikd_field_fail(ikd_error *err, int code, const ikd_path *p, const char *msg);
int ikd_field_bad(ikd_error *err, const ikd_path *p, const char *msg);

/* The member `key` of object `obj` (v NULL when absent, or when obj is not
 * an object): one field looked at before a request is decoded. */
ikd_val ikd_field_member(ikd_val obj, const char *key);

/* A field name and its length, for ikd_field_gather. */
typedef struct ikd_field {
    const char *name;
    size_t len;
} ikd_field;
#define FIELD(s) {s, sizeof(s) - 1}

/* One pass over an object's members: every key must be one of the `na`
 * allowed (at most 32), none twice (MessagePack maps can carry duplicates);
 * out[a] is the value of allowed[a] (v = NULL when absent or null). */
int ikd_field_gather(ikd_val obj, const ikd_path *parent, const ikd_field *allowed, int na, ikd_val *out, ikd_error *err);
#define GATHER(obj, parent, keys, out, err) ikd_field_gather(obj, parent, keys, (int)(sizeof keys / sizeof keys[0]), out, err)

/* A finite number; an array of n finite numbers; 3 or 4 of them. */
int ikd_field_number(ikd_val x, const ikd_path *f, double *out, ikd_error *err);
int ikd_field_numbers(ikd_val x, const ikd_path *f, double *out, size_t n, ikd_error *err);
int ikd_field_vec3(ikd_val x, const ikd_path *f, ikd_vec3 *out, ikd_error *err);
int ikd_field_quat(ikd_val x, const ikd_path *f, ikd_quat *out, ikd_error *err);
/* 1 when x is the string s. */
int ikd_field_str_is(ikd_val x, const char *s);

/* An options object at path f (absent: nothing to read) read by an options
 * table of n rows (at most 32; ikd_options_table, ikd_multi_options_table):
 * every key is a row's name ("unknown option" otherwise; a duplicate is
 * malformed); null keeps the row's default; an int row takes an integer in
 * its [min, max]; a number row any finite number (its bounds are the
 * library validation's); an enum row one of its choices, stored as the
 * choice's index. Each value is written at base + the row's offset. */
int ikd_field_options(ikd_val v, const ikd_path *f, const ikd_option_info *table, size_t n, void *base, ikd_error *err);
/* The same, with the member named `own` left to the caller (not refused). */
int ikd_field_options_but(ikd_val v, const ikd_path *fo, const ikd_option_info *table, size_t n, void *base,
                          const char *own, ikd_error *err);

#endif
