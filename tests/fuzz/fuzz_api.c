/* fuzz_api.c - libFuzzer harness over the HTTP API's request handling as pure functions (no sockets).
 *
 * Input: one selector byte, then the body. The selector picks the endpoint
 * (solve, batch, skeleton or clip), the body's encoding and the reply's
 * encoding. Every input must give a known status and a well-formed reply
 * (JSON replies parse with jansson; no NaN or Infinity anywhere), without
 * crashing, hanging or leaking. */
#include <jansson.h>
#include <math.h>
#include <msgpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/api.h"
#include "service/clip.h"
#include "service/reply.h"
#include "service/route.h"

/* The statuses an API call may answer; 409: a skeleton by id (`"skeleton":
 * "..."`), which these calls, given no skeleton store, refuse as
 * unknown_skeleton. */
static int known_status(int s)
{
    return s == 200 || s == 400 || s == 409 || s == 413 || s == 500 || s == 503;
}

static int all_finite(const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return isfinite(o->via.f64);
    case MSGPACK_OBJECT_ARRAY:
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if (!all_finite(&o->via.array.ptr[i])) return 0;
        return 1;
    case MSGPACK_OBJECT_MAP:
        for (uint32_t i = 0; i < o->via.map.size; i++)
            if (!all_finite(&o->via.map.ptr[i].val)) return 0;
        return 1;
    default: return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ikd_api_scratch scratch;
    static int ready;
    if (!ready) {
        if (ikd_api_scratch_init(&scratch, 64) != 0) abort();
        ready = 1;
    }
    if (size < 1) return 0;
    unsigned sel = data[0];
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    /* small limits keep every input fast: 64 joints, 200 iterations, 16
     * problems, 8 frames */
    ikd_api_limits lim = {64, 200, 16, NULL, 8, 0, NULL, NULL};
    lim.clip_whole_max = (sel & 32) ? 1 : 0; /* bit 5: a clip parsed a frame at a time */
    ikd_encoding in = (sel & 1) ? IKD_ENC_MSGPACK : IKD_ENC_JSON;
    ikd_encoding out = (sel & 2) ? IKD_ENC_MSGPACK : IKD_ENC_JSON;
    ikd_buf reply;
    ikd_buf_init(&reply);
    /* bit 2: a batch; bit 3: a skeleton solve (POST /v1/solve/skeleton);
     * bit 4: a clip (POST /v1/solve/clip, the whole reply at once), bit 5
     * parsed a frame at a time */
    int status = (sel & 16)  ? ikd_api_clip(&lim, 0, in, out, body, len, &reply, NULL)
                 : (sel & 8) ? ikd_api_skeleton(&lim, 0, in, out, body, len, &reply, NULL)
                 : (sel & 4) ? ikd_api_batch(&scratch, &lim, in, out, body, len, &reply)
                             : ikd_api_solve(&scratch, &lim, 0, in, out, body, len, &reply, NULL);
    if (!known_status(status) || reply.len == 0) abort();
    if (out == IKD_ENC_JSON) {
        /* every reply is valid JSON (so it holds no NaN or Infinity: JSON has none) */
        json_error_t e;
        json_t *doc = json_loadb(reply.data, reply.len, 0, &e);
        if (!doc) abort();
        json_decref(doc);
    } else {
        /* one whole MessagePack document whose numbers are all finite */
        msgpack_unpacked up;
        msgpack_unpacked_init(&up);
        size_t off = 0;
        if (msgpack_unpack_next(&up, reply.data, reply.len, &off) != MSGPACK_UNPACK_SUCCESS || off != reply.len) abort();
        if (!all_finite(&up.data)) abort();
        msgpack_unpacked_destroy(&up);
    }
    ikd_buf_destroy(&reply);
    return 0;
}
