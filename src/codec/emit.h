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
/* The general paths; the inline functions below take MessagePack's common
 * cases themselves (a reply is a hundred calls per solve). */
void ikd_emit_open_any(ikd_emitter *e, size_t n, int is_map);
void ikd_emit_end_json(ikd_emitter *e);
void ikd_emit_keyn_json(ikd_emitter *e, const char *key, size_t n);
void ikd_emit_nums_any(ikd_emitter *e, const double *v, size_t n);
void ikd_emit_mp_doubles(ikd_buf *b, const double *v, size_t n);

/* One byte of MessagePack header (fixmap, fixarray, fixint, bool). */
static inline void ikd_emit_mp_head(ikd_buf *b, unsigned char c) { ikd_buf_putc(b, (char)c); }

static inline void ikd_emit_map(ikd_emitter *e, size_t n)
{
    if (e->enc == IKD_ENC_MSGPACK && n < 16) ikd_emit_mp_head(e->out, (unsigned char)(0x80 | n));
    else ikd_emit_open_any(e, n, 1);
}

static inline void ikd_emit_array(ikd_emitter *e, size_t n)
{
    if (e->enc == IKD_ENC_MSGPACK && n < 16) ikd_emit_mp_head(e->out, (unsigned char)(0x90 | n));
    else ikd_emit_open_any(e, n, 0);
}

/* Close the innermost map or array (MessagePack: nothing to write). */
static inline void ikd_emit_end(ikd_emitter *e)
{
    if (e->enc == IKD_ENC_JSON) ikd_emit_end_json(e);
}

void ikd_emit_key(ikd_emitter *e, const char *key);
/* A key known to need no escaping and shorter than 32 bytes, n = strlen(key):
 * written in one piece (MessagePack: a fixstr, as msgpack-c's packer writes
 * it; the emitter's one fixstr writer, strings use it too). IKD_EMIT_KEY
 * takes a literal. */
static inline void ikd_emit_keyn(ikd_emitter *e, const char *key, size_t n)
{
    ikd_buf *b = e->out;
    if (e->enc != IKD_ENC_MSGPACK) {
        ikd_emit_keyn_json(e, key, n);
        return;
    }
    if (b->len + n + 2 > b->cap && ikd_buf_reserve(b, n + 1) != 0) return;
    char *d = b->data + b->len;
    d[0] = (char)(0xa0 | n);
    __builtin_memcpy(d + 1, key, n); /* n is a constant at IKD_EMIT_KEY sites: a few moves */
    b->len += n + 1;
    d[n + 1] = '\0';
}
#define IKD_EMIT_KEY(e, lit) ikd_emit_keyn((e), "" lit, sizeof(lit) - 1)
void ikd_emit_str(ikd_emitter *e, const char *s);
void ikd_emit_num(ikd_emitter *e, double v);     /* JSON: shortest exact form; MessagePack: float 64 */
void ikd_emit_int(ikd_emitter *e, long long v);
void ikd_emit_bool(ikd_emitter *e, int b);
void ikd_emit_null(ikd_emitter *e);
/* JSON only: a value again whose text this body already holds at
 * out->data[at, at + n) (an earlier value's, recorded from out->len around
 * it), copied rather than written anew. */
void ikd_emit_again(ikd_emitter *e, size_t at, size_t n);
/* Numbers v[0..n) as an array. */
static inline void ikd_emit_nums(ikd_emitter *e, const double *v, size_t n)
{
    if (e->enc == IKD_ENC_MSGPACK && n < 16) {
        ikd_emit_mp_head(e->out, (unsigned char)(0x90 | n));
        ikd_emit_mp_doubles(e->out, v, n);
    } else {
        ikd_emit_nums_any(e, v, n);
    }
}

/* "application/json" or "application/msgpack". */
const char *ikd_encoding_media_type(ikd_encoding enc);

#endif
