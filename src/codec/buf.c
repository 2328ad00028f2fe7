/* buf.c - growable byte buffer with JSON string and number writers. */
#include "buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ikd_buf_init(ikd_buf *b) { memset(b, 0, sizeof *b); }

void ikd_buf_destroy(ikd_buf *b)
{
    free(b->data);
    ikd_buf_init(b);
}

void ikd_buf_reset(ikd_buf *b)
{
    b->len = 0;
    b->failed = 0;
    if (b->data) b->data[0] = '\0';
}

int ikd_buf_reserve(ikd_buf *b, size_t extra)
{
    if (b->failed) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) { b->failed = 1; return -1; }
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) { b->failed = 1; return -1; }
    b->data = d;
    b->cap = cap;
    return 0;
}

void ikd_buf_append(ikd_buf *b, const char *s, size_t n)
{
    if (ikd_buf_reserve(b, n) != 0) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ikd_buf_puts(ikd_buf *b, const char *s) { ikd_buf_append(b, s, strlen(s)); }
void ikd_buf_putc(ikd_buf *b, char c) { ikd_buf_append(b, &c, 1); }

/* Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80), 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *p)
{
    size_t n;
    unsigned int cp;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) { n = 2; cp = p[0] & 0x1f; }
    else if (p[0] >= 0xe0 && p[0] <= 0xef) { n = 3; cp = p[0] & 0x0f; }
    else if (p[0] >= 0xf0 && p[0] <= 0xf4) { n = 4; cp = p[0] & 0x07; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

void ikd_buf_json_string(ikd_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    ikd_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[7];
        switch (*p) {
        case '"': ikd_buf_append(b, "\\\"", 2); break;
        case '\\': ikd_buf_append(b, "\\\\", 2); break;
        case '\n': ikd_buf_append(b, "\\n", 2); break;
        case '\r': ikd_buf_append(b, "\\r", 2); break;
        case '\t': ikd_buf_append(b, "\\t", 2); break;
        default:
            if (*p < 0x20) {
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[*p >> 4];
                esc[5] = hex[*p & 15];
                ikd_buf_append(b, esc, 6);
            } else if (*p < 0x80) {
                ikd_buf_append(b, (const char *)p, 1);
            } else {
                size_t n = utf8_seq_len(p);
                if (n) {
                    ikd_buf_append(b, (const char *)p, n);
                    p += n - 1;
                } else {
                    ikd_buf_append(b, "\\ufffd", 6); /* invalid UTF-8 byte */
                }
            }
        }
    }
    ikd_buf_putc(b, '"');
}

void ikd_buf_json_number(ikd_buf *b, double v)
{
    char tmp[32];
    if (!isfinite(v)) {
        ikd_buf_putc(b, '0');
        b->failed = 1;
        return;
    }
    if (v == 0.0) v = 0.0; /* -0 -> 0 */
    int n = snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v) n = snprintf(tmp, sizeof tmp, "%.17g", v);
    ikd_buf_append(b, tmp, (size_t)n);
}

char *ikd_buf_release(ikd_buf *b, size_t *len)
{
    char *d = b->data;
    if (len) *len = b->len;
    ikd_buf_init(b);
    return d;
}
