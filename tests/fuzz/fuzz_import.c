/* fuzz_import.c - libFuzzer harness over POST /v1/import (BVH, URDF and glTF readers, format detection, options).
 *
 * The first byte picks the format option (none: detected from the bytes,
 * bvh, urdf, gltf), a scale, an fps and the limits (default, none, or
 * recording: the take's own); the rest is the file. Every input must
 * give 200 with a JSON reply whose skeleton, clips and warnings are there,
 * or a known error status with a JSON error body; never a crash, a leak or
 * a hang (the limits keep every input small: 64 joints, 64 frames). A GLB's
 * weight (what the memory budget charges its import by) stays within five
 * times the file. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/gltf.h"
#include "service/import.h"
#include "service/skelstore.h"
#include "service/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ikd_skelstore store;
    static int ready;
    if (!ready) {
        if (ikd_skelstore_init(&store, 1 << 20, NULL) != 0) abort();
        ready = 1;
    }
    if (size < 1) return 0;
    unsigned sel = data[0];
    static const char *formats[4] = {NULL, "bvh", "urdf", "gltf"};
    static const char *scales[4] = {NULL, "0.01", "2.5", NULL};
    static const char *fpss[4] = {NULL, "60", "7.5", NULL};
    const char *args[IKD_IMPORT__ARGS] = {formats[sel & 3], scales[(sel >> 2) & 3], fpss[(sel >> 4) & 3], NULL, NULL,
                                          (sel & 64) ? (sel & 8) ? "recording" : "none" : NULL};
    ikd_import_opts o;
    ikd_error err;
    if (ikd_import_opts_parse(&o, args, &err) != IKD_E_OK) abort();
    ikd_api_limits lim = {64, 200, 16, NULL, 64, 0, &store.lookup, &store};
    ikd_buf reply;
    ikd_buf_init(&reply);
    int error = 0;
    int status = ikd_api_import(&lim, &o, (sel & 128) ? "application/octet-stream" : NULL, IKD_ENC_JSON,
                                (const char *)data + 1, size - 1, &reply, &error);
    if (reply.len == 0) abort();
    /* what the memory budget charges a GLB by: never more than the file can decode to */
    size_t w = ikd_gltf_glb_weight((const char *)data + 1, size - 1);
    if (w > 5 * (size - 1)) abort();
    json_error_t e;
    json_t *doc = json_loadb(reply.data, reply.len, 0, &e);
    if (!doc) abort();
    if (status == 200) {
        if (!json_is_object(json_object_get(doc, "skeleton")) || !json_is_array(json_object_get(doc, "clips")) ||
            !json_is_array(json_object_get(doc, "warnings")))
            abort();
    } else {
        json_t *er = json_object_get(doc, "error");
        if (!er || status != ikd_wire_status(error) || status < 400) abort();
    }
    json_decref(doc);
    ikd_buf_destroy(&reply);
    return 0;
}
