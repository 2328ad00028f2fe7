/* emit.c - the JSON and MessagePack writers behind ikd_emitter. */
#include "emit.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* msgpack-c's packer writes through this into the reply buffer. */
static int mp_write(void *data, const char *buf, size_t len)
{
    ikd_buf *b = data;
    ikd_buf_append(b, buf, len);
    return b->failed ? -1 : 0;
}

void ikd_emit_init(ikd_emitter *e, ikd_encoding enc, ikd_buf *out)
{
    memset(e, 0, sizeof *e);
    e->enc = enc;
    e->out = out;
    e->first[0] = 1;
    msgpack_packer_init(&e->mp, out, mp_write);
}

void ikd_emit_reply(ikd_emitter *e, ikd_encoding enc, ikd_buf *out)
{
    ikd_buf_reset(out);
    ikd_emit_init(e, enc, out);
}

const char *ikd_encoding_media_type(ikd_encoding enc)
{
    return enc == IKD_ENC_MSGPACK ? "application/msgpack" : "application/json";
}

static void mp_str(ikd_emitter *e, const char *s)
{
    size_t n = strlen(s);
    if (n < 32) { /* a fixstr, written as a key is */
        ikd_emit_keyn(e, s, n);
        return;
    }
    msgpack_pack_str(&e->mp, n);
    msgpack_pack_str_body(&e->mp, s, n);
}

/* ---- JSON comma bookkeeping ---- */

static void json_value_start(ikd_emitter *e)
{
    if (e->after_key) {
        e->after_key = 0;
        return;
    }
    if (e->depth > 0) {
        if (!e->first[e->depth]) ikd_buf_putc(e->out, ',');
        e->first[e->depth] = 0;
    }
}

static void open_level(ikd_emitter *e, int is_map)
{
    if (e->depth + 1 < IKD_EMIT_DEPTH) e->depth++;
    e->first[e->depth] = 1;
    e->is_map[e->depth] = (unsigned char)is_map;
}

/* The general case behind the inline ikd_emit_map and ikd_emit_array (JSON,
 * or 16 entries and more). MessagePack keeps no nesting state: sizes are
 * announced, nothing is closed. */
void ikd_emit_open_any(ikd_emitter *e, size_t n, int is_map)
{
    if (e->enc == IKD_ENC_MSGPACK) {
        if (is_map) msgpack_pack_map(&e->mp, n);
        else msgpack_pack_array(&e->mp, n);
        return;
    }
    json_value_start(e);
    ikd_buf_putc(e->out, is_map ? '{' : '[');
    open_level(e, is_map);
}

void ikd_emit_end_json(ikd_emitter *e)
{
    ikd_buf_putc(e->out, e->is_map[e->depth] ? '}' : ']');
    if (e->depth > 0) e->depth--;
}

/* JSON's side of ikd_emit_keyn: the comma, the quoted key and the colon in
 * one reservation. */
void ikd_emit_keyn_json(ikd_emitter *e, const char *key, size_t n)
{
    ikd_buf *b = e->out;
    int comma = !e->first[e->depth];
    e->first[e->depth] = 0;
    e->after_key = 1;
    if (b->len + n + 5 > b->cap && ikd_buf_reserve(b, n + 4) != 0) return;
    char *d = b->data + b->len;
    if (comma) *d++ = ',';
    *d++ = '"';
    memcpy(d, key, n);
    d += n;
    *d++ = '"';
    *d++ = ':';
    *d = '\0';
    b->len = (size_t)(d - b->data);
}

void ikd_emit_key(ikd_emitter *e, const char *key)
{
    size_t n = 0;
    while (key[n] >= 0x20 && (unsigned char)key[n] < 0x80 && key[n] != '"' && key[n] != '\\') n++;
    if (key[n] == '\0' && n < 32) {
        ikd_emit_keyn(e, key, n);
        return;
    }
    if (e->enc == IKD_ENC_MSGPACK) {
        mp_str(e, key);
        return;
    }
    if (!e->first[e->depth]) ikd_buf_putc(e->out, ',');
    e->first[e->depth] = 0;
    ikd_buf_json_string(e->out, key);
    ikd_buf_putc(e->out, ':');
    e->after_key = 1;
}

void ikd_emit_str(ikd_emitter *e, const char *s)
{
    if (e->enc == IKD_ENC_MSGPACK) {
        mp_str(e, s);
        return;
    }
    json_value_start(e);
    ikd_buf_json_string(e->out, s);
}

/* MessagePack float 64 into d[0..9): 0xcb and the IEEE bits big-endian, byte
 * for byte what msgpack_pack_double writes (tested), without its write
 * callback per value. -0 is written as 0 (as in JSON); a non-finite value as
 * 0, and the buffer is marked failed. */
static void mp_put_double(char *d, double x, ikd_buf *b)
{
    if (x == 0.0) x = 0.0;
    if (!isfinite(x)) {
        x = 0;
        b->failed = 1;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    bits = __builtin_bswap64(bits);
#endif
    d[0] = (char)0xcb;
    memcpy(d + 1, &bits, 8);
}

/* n float 64s, with one reservation for all of them. */
void ikd_emit_mp_doubles(ikd_buf *b, const double *v, size_t n)
{
    if (b->len + 9 * n + 1 > b->cap && ikd_buf_reserve(b, 9 * n) != 0) return;
    char *d = b->data + b->len;
    for (size_t i = 0; i < n; i++) mp_put_double(d + 9 * i, v[i], b);
    b->len += 9 * n;
    b->data[b->len] = '\0';
}

void ikd_emit_num(ikd_emitter *e, double v)
{
    if (e->enc == IKD_ENC_MSGPACK) {
        ikd_emit_mp_doubles(e->out, &v, 1);
        return;
    }
    json_value_start(e);
    ikd_buf_json_number(e->out, v);
}

void ikd_emit_int(ikd_emitter *e, long long v)
{
    if (e->enc == IKD_ENC_MSGPACK) {
        if (v >= 0 && v < 128) ikd_emit_mp_head(e->out, (unsigned char)v);
        else msgpack_pack_int64(&e->mp, v);
        return;
    }
    json_value_start(e);
    ikd_buf_json_int(e->out, v);
}

void ikd_emit_bool(ikd_emitter *e, int b)
{
    if (e->enc == IKD_ENC_MSGPACK) {
        ikd_emit_mp_head(e->out, b ? 0xc3 : 0xc2);
        return;
    }
    json_value_start(e);
    ikd_buf_puts(e->out, b ? "true" : "false");
}

void ikd_emit_null(ikd_emitter *e)
{
    if (e->enc == IKD_ENC_MSGPACK) {
        ikd_emit_mp_head(e->out, 0xc0);
        return;
    }
    json_value_start(e);
    ikd_buf_puts(e->out, "null");
}

void ikd_emit_again(ikd_emitter *e, size_t at, size_t n)
{
    json_value_start(e);
    ikd_buf *b = e->out;
    if (ikd_buf_reserve(b, n + 1) != 0) return;
    memcpy(b->data + b->len, b->data + at, n); /* (at + n <= len: the copy lies before its source's end) */
    b->len += n;
    b->data[b->len] = '\0';
}

void ikd_emit_nums_any(ikd_emitter *e, const double *v, size_t n)
{
    ikd_emit_open_any(e, n, 0);
    if (e->enc == IKD_ENC_MSGPACK) {
        ikd_emit_mp_doubles(e->out, v, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (i) ikd_buf_putc(e->out, ',');
        ikd_buf_json_number(e->out, v[i]);
    }
    e->first[e->depth] = n == 0;
    ikd_emit_end_json(e);
}
