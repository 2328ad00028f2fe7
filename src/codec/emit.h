/* emit.h - a streaming writer with one interface for JSON and MessagePack, so that replies are written once. */
#ifndef IKD_EMIT_H
#define IKD_EMIT_H

#include <stddef.h>

#include <msgpack.h>

#include "buf.h"

typedef enum { IKD_ENC_JSON, IKD_ENC_MSGPACK } ikd_encoding;

#define IKD_EMIT_DEPTH 16

/* Maps and arrays announce their sizes (MessagePack needs them; JSON only
 * checks its commas); every map or array is closed with ikd_emit_end. */
typedef struct ikd_emitter {
    ikd_encoding enc;
    ikd_buf *out;
    int depth;
    unsigned char first[IKD_EMIT_DEPTH]; /* JSON: nothing written yet at this level */
    unsigned char is_map[IKD_EMIT_DEPTH];
    int after_key;
    msgpack_packer mp;  /* MessagePack: msgpack-c's packer writing into `out` */
} ikd_emitter;

void ikd_emit_init(ikd_emitter *e, ikd_encoding enc, ikd_buf *out);
/* Empty `out`, then ikd_emit_init: the start of every reply body. */
void ikd_emit_reply(ikd_emitter *e, ikd_encoding enc, ikd_buf *out);
void ikd_emit_map(ikd_emitter *e, size_t n);
void ikd_emit_array(ikd_emitter *e, size_t n);
void ikd_emit_end(ikd_emitter *e);
void ikd_emit_key(ikd_emitter *e, const char *key);
/* A key known to need no escaping and shorter than 32 bytes, n = strlen(key):
 * written in one piece (MessagePack: a fixstr). IKD_EMIT_KEY takes a literal. */
void ikd_emit_keyn(ikd_emitter *e, const char *key, size_t n);
#define IKD_EMIT_KEY(e, lit) ikd_emit_keyn((e), "" lit, sizeof(lit) - 1)
void ikd_emit_str(ikd_emitter *e, const char *s);
void ikd_emit_num(ikd_emitter *e, double v);     /* JSON: shortest exact form; MessagePack: float 64 */
void ikd_emit_int(ikd_emitter *e, long long v);
void ikd_emit_bool(ikd_emitter *e, int b);
/* Numbers v[0..n) as an array. */
void ikd_emit_nums(ikd_emitter *e, const double *v, size_t n);

/* "application/json" or "application/msgpack". */
const char *ikd_encoding_media_type(ikd_encoding enc);

#endif
