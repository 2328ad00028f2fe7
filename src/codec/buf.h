/* buf.h - a growable byte buffer for encoding replies (caller-owned struct, heap storage). */
#ifndef IKD_BUF_H
#define IKD_BUF_H

#include <stddef.h>

typedef struct ikd_buf {
    char *data;   /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    int failed;   /* set once an allocation failed (or fixed storage ran out);
                     later appends are ignored */
    int fixed;    /* the storage is the caller's (ikd_buf_init_fixed): never grown or freed */
} ikd_buf;

void ikd_buf_init(ikd_buf *b);
/* A buffer on the caller's storage of `cap` bytes (e.g. on the stack): it
 * never allocates; what does not fit sets `failed`. */
void ikd_buf_init_fixed(ikd_buf *b, char *storage, size_t cap);
void ikd_buf_destroy(ikd_buf *b);
/* Forget the contents, keep the storage. */
void ikd_buf_reset(ikd_buf *b);
/* Make room for `extra` more bytes (plus a NUL); 0 on success, -1 on failure. */
int ikd_buf_reserve(ikd_buf *b, size_t extra);
/* The slow path of ikd_buf_append (growing the storage). */
void ikd_buf_append_slow(ikd_buf *b, const char *s, size_t n);
/* Append n bytes (inline: replies are built from many small pieces). */
static inline void ikd_buf_append(ikd_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        ikd_buf_append_slow(b, s, n);
        return;
    }
    char *d = b->data + b->len;
    if (n <= 16) {
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        __builtin_memcpy(d, s, n);
    }
    b->len += n;
    d[n] = '\0';
}
void ikd_buf_puts(ikd_buf *b, const char *s);
static inline void ikd_buf_putc(ikd_buf *b, char c)
{
    if (b->len + 2 > b->cap && ikd_buf_reserve(b, 1) != 0) return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}
/* 1 when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or code
 * points beyond U+10FFFF); NUL bytes count as valid. */
int ikd_utf8_valid(const char *s, size_t n);
/* The longest prefix of s, at most max bytes, that ends on a character's
 * boundary (a name cut there stays UTF-8). */
size_t ikd_utf8_prefix(const char *s, size_t max);
/* A JSON string literal, quotes included, escaping what JSON requires. */
void ikd_buf_json_string(ikd_buf *b, const char *s);
/* A finite double in the shortest decimal that reads back as the same double
 * ("0.1", "-3", "1e+15"); a non-finite value is written as 0 and marks the
 * buffer failed. */
void ikd_buf_json_number(ikd_buf *b, double v);
/* An integer in decimal, without printf (any long long, LLONG_MIN included). */
void ikd_buf_json_int(ikd_buf *b, long long v);
/* Hand the storage to the caller (free() it); the buffer becomes empty. */
char *ikd_buf_release(ikd_buf *b, size_t *len);

#endif
