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
    size_t cap = b->cap ? b->cap : 1024;
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

void ikd_buf_append_slow(ikd_buf *b, const char *s, size_t n)
{
    if (ikd_buf_reserve(b, n) != 0) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ikd_buf_puts(ikd_buf *b, const char *s) { ikd_buf_append(b, s, strlen(s)); }
void ikd_buf_putc(ikd_buf *b, char c)
{
    if (b->len + 2 > b->cap && ikd_buf_reserve(b, 1) != 0) return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

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
    const unsigned char *p = (const unsigned char *)s;
    for (;;) {
        /* copy the run of bytes that need no escaping in one go */
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p > run) ikd_buf_append(b, (const char *)run, (size_t)(p - run));
        if (!*p) break;
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
        p++;
    }
    ikd_buf_putc(b, '"');
}

/* 17 correctly rounded significant digits of a finite |v| in [1e-5, 1e15)
 * (enough to read back the same double), trailing zeros trimmed, with
 * 128-bit integer arithmetic: v = m 2^e exactly, so v 10^k = m 10^k / 2^-e
 * is rounded to an integer once. Returns the length, or 0 when v is outside
 * that range (the caller falls back to printf). ~10x faster than "%.17g". */
static size_t fmt17(double v, char *out)
{
    static const unsigned long long p10[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                             10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                             100000000000ull, 1000000000000ull, 10000000000000ull,
                                             100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                             100000000000000000ull, 1000000000000000000ull,
                                             10000000000000000000ull};
    double a = fabs(v);
    if (!(a >= 1e-5 && a < 1e15)) return 0;
    int ex;
    double f = frexp(a, &ex);
    unsigned long long m = (unsigned long long)ldexp(f, 53);
    int shift = 53 - ex; /* a = m / 2^shift, shift in (0, 70] here */
    int d = (int)floor((ex - 1) * 0.30102999566398120); /* log10(a), maybe one too low: fixed below */
    unsigned long long q = 0;
    int k = 0;
    for (int tries = 0; tries < 3; tries++) {
        k = 16 - d; /* a 10^k in [1e16, 1e17) */
        if (k < 0 || k > 22) return 0;
        unsigned __int128 pk = k <= 19 ? (unsigned __int128)p10[k] : (unsigned __int128)p10[19] * p10[k - 19];
        unsigned __int128 P = (unsigned __int128)m * pk;
        unsigned __int128 half = (unsigned __int128)1 << (shift - 1), mask = ((unsigned __int128)1 << shift) - 1;
        unsigned __int128 r = P & mask;
        unsigned __int128 qq = P >> shift;
        if (r > half || (r == half && (qq & 1))) qq++;
        q = (unsigned long long)qq;
        if (q >= p10[17]) d++;
        else if (q < p10[16]) d--;
        else break;
    }
    if (q < p10[16] || q >= p10[17]) return 0;
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char digits[18];
    for (int i = 15; i >= 1; i -= 2) { /* two digits per division */
        unsigned r = (unsigned)(q % 100);
        q /= 100;
        digits[i] = pairs[2 * r];
        digits[i + 1] = pairs[2 * r + 1];
    }
    digits[0] = (char)('0' + q);
    int nd = 17;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    size_t n = 0;
    if (v < 0) out[n++] = '-';
    /* value = 0.digits x 10^(17-k): point after (17 - k) digits */
    int point = 17 - k;
    if (point <= 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int i = 0; i < -point; i++) out[n++] = '0';
        memcpy(out + n, digits, (size_t)nd);
        n += (size_t)nd;
    } else {
        for (int i = 0; i < point; i++) out[n++] = i < nd ? digits[i] : '0';
        if (nd > point) {
            out[n++] = '.';
            memcpy(out + n, digits + point, (size_t)(nd - point));
            n += (size_t)(nd - point);
        }
    }
    return n;
}

void ikd_buf_json_number(ikd_buf *b, double v)
{
    char tmp[40];
    if (!isfinite(v)) {
        ikd_buf_putc(b, '0');
        b->failed = 1;
        return;
    }
    if (v == 0.0) {
        ikd_buf_putc(b, '0'); /* -0 too */
        return;
    }
    if (fabs(v) < 1e15 && v == (double)(long long)v) { /* integral: no fraction digits (range checked first) */
        int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
        ikd_buf_append(b, tmp, (size_t)n);
        return;
    }
    size_t n = fmt17(v, tmp);
    if (!n) n = (size_t)snprintf(tmp, sizeof tmp, "%.17g", v);
    ikd_buf_append(b, tmp, n);
}

char *ikd_buf_release(ikd_buf *b, size_t *len)
{
    char *d = b->data;
    if (len) *len = b->len;
    ikd_buf_init(b);
    return d;
}
