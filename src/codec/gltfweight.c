/* gltfweight.c - the bytes of a GLB its import decodes: the JSON chunk and the data its skins and animations read. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gltf_model.h"

static size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* A bufferView's decoded bytes (EXT_meshopt_compression's count times
 * byteStride when larger), 0 for a view that is not an object. */
static size_t view_bytes(json_t *views, json_t *index)
{
    json_t *v = json_is_integer(index) ? json_array_get(views, (size_t)json_integer_value(index)) : NULL;
    if (!json_is_object(v)) return 0;
    json_int_t n = json_integer_value(json_object_get(v, "byteLength"));
    json_t *mx = json_object_get(json_object_get(v, "extensions"), "EXT_meshopt_compression");
    json_int_t c = json_integer_value(json_object_get(mx, "count")), s = json_integer_value(json_object_get(mx, "byteStride"));
    size_t bytes = n > 0 ? (size_t)n : 0;
    if (c > 0 && s > 0 && (uint64_t)c <= SIZE_MAX / (uint64_t)s && (size_t)c * (size_t)s > bytes) bytes = (size_t)c * (size_t)s;
    return bytes;
}

/* Accessor `a`'s views (its own and its sparse parts'), each counted once. */
static size_t accessor_bytes(json_t *doc, json_t *a, unsigned char *seen, size_t nviews)
{
    json_t *acc = json_is_integer(a) ? json_array_get(json_object_get(doc, "accessors"), (size_t)json_integer_value(a)) : NULL;
    if (!json_is_object(acc)) return 0;
    json_t *sparse = json_object_get(acc, "sparse");
    json_t *idx[3] = {json_object_get(acc, "bufferView"), json_object_get(json_object_get(sparse, "indices"), "bufferView"),
                      json_object_get(json_object_get(sparse, "values"), "bufferView")};
    size_t sum = 0;
    for (int k = 0; k < 3; k++) {
        if (!json_is_integer(idx[k]) || json_integer_value(idx[k]) < 0 || (size_t)json_integer_value(idx[k]) >= nviews) continue;
        size_t vi = (size_t)json_integer_value(idx[k]);
        if (seen[vi]) continue;
        seen[vi] = 1;
        sum = add_sat(sum, view_bytes(json_object_get(doc, "bufferViews"), idx[k]));
    }
    return sum;
}

size_t ikd_gltf_glb_weight(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    if (len < 20 || memcmp(data, "glTF", 4) != 0 || ikd__gltf_le32(p + 8) != len || ikd__gltf_le32(p + 16) != 0x4E4F534A) return 0;
    size_t json_len = ikd__gltf_le32(p + 12);
    if (json_len > len - 20) return 0;
    json_t *doc = json_loadb(data + 20, json_len, 0, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return 0;
    }
    size_t nviews = json_array_size(json_object_get(doc, "bufferViews"));
    unsigned char *seen = calloc(nviews ? nviews : 1, 1);
    if (!seen) {
        json_decref(doc);
        return 0;
    }
    size_t sum = json_len, k, i;
    json_t *x, *y;
    json_array_foreach(json_object_get(doc, "skins"), k, x)
        sum = add_sat(sum, accessor_bytes(doc, json_object_get(x, "inverseBindMatrices"), seen, nviews));
    json_array_foreach(json_object_get(doc, "animations"), k, x) {
        json_array_foreach(json_object_get(x, "samplers"), i, y) {
            sum = add_sat(sum, accessor_bytes(doc, json_object_get(y, "input"), seen, nviews));
            sum = add_sat(sum, accessor_bytes(doc, json_object_get(y, "output"), seen, nviews));
        }
    }
    free(seen);
    json_decref(doc);
    /* a view's bytes lie in the binary chunk, a compressed view decodes to
     * at most 4 times the buffers' bytes (gltfmeshopt.c): a file that says
     * more is refused by the importer naming its field */
    size_t rest = len - 20 - json_len, most = add_sat(json_len, rest > SIZE_MAX / 5 ? SIZE_MAX : 5 * rest);
    return sum < most ? sum : most;
}
