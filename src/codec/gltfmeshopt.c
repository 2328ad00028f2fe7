/* gltfmeshopt.c - glTF bufferViews compressed with EXT_meshopt_compression, decoded by Debian's libmeshoptimizer. */
#include "gltf_model.h"

#include <jansson.h>
#include <meshoptimizer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decoded bytes of all views at most this many times the file's buffers'
 * bytes: the attribute codec can store 16 equal bytes in 2 bits (64x), but
 * gltfpack's animation views shrink 1.45-2.65x (-c and -cc on both shared
 * samples; it keeps one key of a constant track), and the decoded floats
 * are read again as doubles: a file is refused before its animations take
 * 4 + 8 times its size where the import is charged 6 (budget.c). */
#define MESHOPT_EXPANSION 4

static int fail_view(ikd_error *err, size_t vi, const char *member, const char *msg)
{
    char field[128];
    snprintf(field, sizeof field, "bufferViews[%zu].extensions.EXT_meshopt_compression%s%s", vi, *member ? "." : "", member);
    return ikd__gltf_fail(err, IKD_E_INVALID, field, msg);
}

static const char *const modes[] = {"ATTRIBUTES", "TRIANGLES", "INDICES"};
static const char *const filters[] = {"NONE", "OCTAHEDRAL", "QUATERNION", "EXPONENTIAL"};

/* The index of s in names (n of them), -1 if none; NULL s is def. */
static int name_index(const char *s, const char *const *names, int n, int def)
{
    if (!s) return def;
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* The extension's rules (its README, "JSON schema updates") for mode,
 * filter, count and byteStride against the view's byteLength; 0 or -1. */
static int check_layout(size_t vi, int mode, int filter, json_int_t count, json_int_t stride, json_t *bv, ikd_error *err)
{
    if (mode < 0) return fail_view(err, vi, "mode", "must be ATTRIBUTES, TRIANGLES or INDICES"), -1;
    if (filter < 0) return fail_view(err, vi, "filter", "must be NONE, OCTAHEDRAL, QUATERNION or EXPONENTIAL"), -1;
    if (mode && filter) return fail_view(err, vi, "filter", "must be NONE in TRIANGLES and INDICES modes"), -1;
    int ok = mode ? stride == 2 || stride == 4 : stride > 0 && stride <= 256 && stride % 4 == 0;
    if (filter == 1) ok = ok && (stride == 4 || stride == 8);
    if (filter == 2) ok = ok && stride == 8;
    if (!ok) return fail_view(err, vi, "byteStride", "does not suit the mode and filter (ATTRIBUTES: a multiple of 4 up to 256; "
                                                    "TRIANGLES, INDICES: 2 or 4; OCTAHEDRAL: 4 or 8; QUATERNION: 8)"), -1;
    json_t *own = json_object_get(bv, "byteStride");
    if (own && json_integer_value(own) != stride) return fail_view(err, vi, "byteStride", "differs from the bufferView's"), -1;
    if (count < 1 || (mode == 1 && count % 3) || count > json_integer_value(json_object_get(bv, "byteLength")) / stride ||
        count * stride != json_integer_value(json_object_get(bv, "byteLength")))
        return fail_view(err, vi, "count", "times byteStride must be the bufferView's byteLength (TRIANGLES: a multiple of 3)"), -1;
    return 0;
}

int ikd__gltf_meshopt_view(gltf_model *m, size_t vi, json_t *bv, json_t *ext, const unsigned char **out, ikd_error *err)
{
    size_t nviews = json_array_size(json_object_get(m->root, "bufferViews"));
    if (!m->decoded) {
        m->decoded = calloc(nviews + 1, sizeof *m->decoded);
        if (!m->decoded) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    }
    if (m->decoded[vi]) {
        *out = m->decoded[vi];
        return IKD_E_OK;
    }
    if (!json_is_object(ext)) return fail_view(err, vi, "", "must be an object");
    json_t *b = json_object_get(ext, "buffer"), *c = json_object_get(ext, "count"), *st = json_object_get(ext, "byteStride");
    json_t *bl = json_object_get(ext, "byteLength");
    json_int_t off = json_integer_value(json_object_get(ext, "byteOffset")), len = json_integer_value(bl);
    int mode = name_index(json_string_value(json_object_get(ext, "mode")), modes, 3, -1);
    int filter = name_index(json_string_value(json_object_get(ext, "filter")), filters, 4, 0);
    if (json_object_get(ext, "filter") && !json_is_string(json_object_get(ext, "filter"))) filter = -1;
    if (!json_is_integer(c) || !json_is_integer(st)) return fail_view(err, vi, json_is_integer(c) ? "byteStride" : "count", "is required (an integer)");
    if (check_layout(vi, mode, filter, json_integer_value(c), json_integer_value(st), bv, err)) return err->code;
    size_t count = (size_t)json_integer_value(c), stride = (size_t)json_integer_value(st);
    if (!json_is_integer(b) || json_integer_value(b) < 0 || (size_t)json_integer_value(b) >= m->nbuf ||
        !m->buf[json_integer_value(b)])
        return fail_view(err, vi, "buffer", "there is no such buffer with data");
    size_t bi = (size_t)json_integer_value(b);
    if (!json_is_integer(bl) || len < 1 || off < 0 || (size_t)off > m->buf_len[bi] || (size_t)len > m->buf_len[bi] - (size_t)off)
        return fail_view(err, vi, "byteLength", "its bytes (byteOffset, byteLength) lie outside its buffer");
    /* what the views decoded so far left of the bound (they never pass it, so no wrap) */
    if (count * stride > MESHOPT_EXPANSION * ikd__gltf_buffer_bytes(m) - m->decoded_bytes)
        return fail_view(err, vi, "count", "decodes to more than 4 times the bytes of the file's buffers (all views together)");
    unsigned char *d = malloc(count * stride);
    if (!d) return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    const unsigned char *src = m->buf[bi] + off;
    int rc = mode == 0   ? meshopt_decodeVertexBuffer(d, count, stride, src, (size_t)len)
             : mode == 1 ? meshopt_decodeIndexBuffer(d, count, stride, src, (size_t)len)
                         : meshopt_decodeIndexSequence(d, count, stride, src, (size_t)len);
    if (rc != 0) {
        free(d);
        return fail_view(err, vi, "", "the compressed data does not decode (EXT_meshopt_compression's bitstream 0)");
    }
    if (filter == 1) meshopt_decodeFilterOct(d, count, stride);
    if (filter == 2) meshopt_decodeFilterQuat(d, count, stride);
    if (filter == 3) meshopt_decodeFilterExp(d, count, stride);
    m->decoded[vi] = d, m->decoded_bytes += count * stride;
    *out = d;
    return IKD_E_OK;
}
