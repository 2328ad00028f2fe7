/* buf.c - growable byte buffer with JSON string and number writers. */
#include "buf.h"
#include "pow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ikd_buf_init(ikd_buf *b) { memset(b, 0, sizeof *b); }

void ikd_buf_init_fixed(ikd_buf *b, char *storage, size_t cap)
{
    ikd_buf_init(b);
    b->data = storage;
    b->cap = cap;
    b->fixed = 1;
    if (cap) storage[0] = '\0';
}

void ikd_buf_destroy(ikd_buf *b)
{
    if (b->fixed) {
        ikd_buf_reset(b);
        return;
    }
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
    if (b->fixed) {
        b->failed = 1;
        return -1;
    }
    size_t cap = b->cap ? b->cap : 1024;
    if (!b->cap && cap < b->len + extra + 1) cap = b->len + extra + 1; /* a first reservation (a declared body): exact */
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

int ikd_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t k = (size_t)(end - p) >= 4 ? utf8_seq_len(p) : 0;
        if (!k && (size_t)(end - p) < 4) { /* near the end: check on a padded copy */
            unsigned char tmp[4] = {0, 0, 0, 0};
            memcpy(tmp, p, (size_t)(end - p));
            k = utf8_seq_len(tmp);
            if (k > (size_t)(end - p)) k = 0;
        }
        if (!k) return 0;
        p += k;
    }
    return 1;
}

size_t ikd_utf8_prefix(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    if (s[n] == '\0') return n;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--; /* s[n] continues a character: cut before it */
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

static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* Eight digits of x < 10^8, zero-padded, at out[0..8), without division:
 * t = x * ceil(2^48 / 10^6) holds x / 10^6 in its top 16 bits and the rest as
 * a 48-bit fraction; each "fraction * 100" brings the next two digits up. The
 * rounding up adds less than 1.1e-7 to the fraction, which the three
 * multiplications grow to under 0.11 of the last digit: never a carry. */
static inline __attribute__((always_inline)) void put8(char *out, unsigned x)
{
    const unsigned long long mask = (1ull << 48) - 1;
    unsigned long long t = (unsigned long long)x * 281474977ull;
    memcpy(out, digit_pairs + 2 * (t >> 48), 2);
    t = (t & mask) * 100;
    memcpy(out + 2, digit_pairs + 2 * (t >> 48), 2);
    t = (t & mask) * 100;
    memcpy(out + 4, digit_pairs + 2 * (t >> 48), 2);
    t = (t & mask) * 100;
    memcpy(out + 6, digit_pairs + 2 * (t >> 48), 2);
}

/* q < 10^18 as exactly 18 digits, zero-padded, at out[0..18). */
static void put18(char *out, unsigned long long q)
{
    unsigned long long top = q / 100000000ull; /* < 10^10 */
    unsigned hi = (unsigned)(top / 100000000ull);  /* < 100 */
    memcpy(out, digit_pairs + 2 * hi, 2);
    put8(out + 2, (unsigned)(top % 100000000ull));
    put8(out + 10, (unsigned)(q % 100000000ull));
}

/* Copy n <= 32 bytes with fixed-size moves (no call to memcpy for a
 * variable length); src and dst have 32 readable/writable bytes. */
static void copy32(char *dst, const char *src, size_t n)
{
    if (n >= 16) {
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = src[i];
    }
}

/* The decimal digits of q < 10^18 (no leading zeros, "0" for 0) into out;
 * returns how many. */
static size_t put_u64(unsigned long long q, char *out)
{
    char d[18 + 32];
    put18(d, q);
    size_t n = 1;
    while (n < 18 && q >= ikd_pow10[n]) n++;
    copy32(out, d + 18 - n, n);
    return n;
}

typedef unsigned __int128 u128;

/* floor(x / 2^s) for 1 <= s <= 63, when it fits in 64 bits (two word shifts, no 128-bit shift) */
static inline unsigned long long shr64(u128 x, int s)
{
    return ((unsigned long long)x >> s) | ((unsigned long long)(x >> 64) << (64 - s));
}

/* The shortest decimal that reads back as a finite v, without printf.
 * v = m / 2^s exactly, and so are the midpoints to its neighbours,
 * (2m -+ 1) / 2^(s+1). Scaled by 10^k = 5^k 2^k so that v 10^k has 17 digits
 * before the point (m 5^k is an exact integer), every integer strictly
 * between the scaled midpoints reads back as v. The midpoints themselves,
 * (4m -+ 2) 5^k / 2^(s+2) (4m - 1 for the lower one when m is a power of
 * two), are never integers here: their numerators hold at most one factor 2
 * and s + 2 >= 3; so which neighbour a tie would go to never matters. The
 * most trailing digits that can be dropped while some integer stays in that
 * range give the length; the one nearest v is written. Two front ends compute the scaled values: 128-bit arithmetic for
 * |v| in [1e-10, 1e15) (k <= 27), 192-bit for [1e-37, 1e-10) (k <= 54: the
 * rounding noise like 1e-17 that rotations and positions carry); one back end
 * picks the digits. Outside both ranges the caller uses printf. */

/* What the front ends hand over: v 10^k = t + frac, with frac classified
 * (0: zero, 1: below one half, 2: one half, 3: above); [lo, hi] the integers
 * that read back as v. */
typedef struct scaled {
    unsigned long long t, lo, hi;
    int frac, k;
} scaled;

/* 64 * 3 bits, least significant word first. */
typedef struct u192 {
    unsigned long long w[3];
} u192;

static u192 u192_mul(unsigned long long m, u128 q)
{
    u128 p0 = (u128)m * (unsigned long long)q;
    u128 p1 = (u128)m * (unsigned long long)(q >> 64) + (p0 >> 64);
    u192 r = {{(unsigned long long)p0, (unsigned long long)p1, (unsigned long long)(p1 >> 64)}};
    return r;
}

static u192 u192_shl(u192 a, int s) /* 0 < s < 64 */
{
    u192 r = {{a.w[0] << s, (a.w[1] << s) | (a.w[0] >> (64 - s)), (a.w[2] << s) | (a.w[1] >> (64 - s))}};
    return r;
}

static u192 u192_add(u192 a, u192 b)
{
    u192 r;
    unsigned long long c = 0;
    for (int i = 0; i < 3; i++) {
        u128 x = (u128)a.w[i] + b.w[i] + c;
        r.w[i] = (unsigned long long)x;
        c = (unsigned long long)(x >> 64);
    }
    return r;
}

static u192 u192_sub(u192 a, u192 b) /* a >= b */
{
    u192 r;
    unsigned long long borrow = 0;
    for (int i = 0; i < 3; i++) {
        u128 x = (u128)a.w[i] - b.w[i] - borrow; /* wraps to 2^128 - d when below */
        r.w[i] = (unsigned long long)x;
        borrow = (unsigned long long)(x >> 64) != 0;
    }
    return r;
}

/* The low 64 bits of floor(a / 2^s), 0 < s < 192. */
static unsigned long long u192_shr64(u192 a, int s)
{
    int q = s / 64, r = s % 64;
    unsigned long long lo = a.w[q], up = q + 1 < 3 ? a.w[q + 1] : 0;
    return r ? (lo >> r) | (up << (64 - r)) : lo;
}

/* 1 when a's bits below bit s (0 < s < 192) are all zero. */
static int u192_low_zero(u192 a, int s)
{
    for (int i = 0; i < 3 && s > 0; i++, s -= 64) {
        unsigned long long mask = s >= 64 ? ~0ull : (1ull << s) - 1;
        if (a.w[i] & mask) return 0;
    }
    return 1;
}

/* Bit s of a. */
static int u192_bit(u192 a, int s) { return (int)((a.w[s / 64] >> (s % 64)) & 1); }

/* a = m 2^(ex-53), m in [2^52, 2^53): the first guess of k (v 10^k in [10^16, 10^18)). */
static int first_k(int ex) { return 16 - (((ex - 1) * 78913) >> 18); /* 16 - floor((ex - 1) log10 2) */ }

/* Front end for |v| in [1e-10, 1e15): k in [2, 27], s in [1, 60]. */
static inline __attribute__((always_inline)) void scale128(unsigned long long m, int ex, scaled *o)
{
    int k = first_k(ex);
    int s = 53 - ex - k; /* v 10^k = m 5^k / 2^s */
    u128 P = (u128)m * ikd_pow5[k];
    unsigned long long t = shr64(P, s);
    if (t >= ikd_pow10[17]) { /* the guess was one high */
        k--;
        s++;
        P = (u128)m * ikd_pow5[k];
        t = shr64(P, s);
    }
    unsigned long long f = P & ((1ull << s) - 1), half = 1ull << (s - 1);
    /* the scaled midpoints' numerators over 2^(s+2) (the lower one 4m - 1
     * when m is a power of two: the gap below is half as wide); neither is a
     * multiple of 2^(s+2), so hi is its floor and lo the lower one's ceiling */
    u128 step = (u128)ikd_pow5[k] << 1;
    u128 hi_n = (P << 2) + step, lo_n = (P << 2) - (m == (1ull << 52) ? step >> 1 : step);
    o->hi = shr64(hi_n, s + 2);
    o->lo = shr64(lo_n, s + 2) + 1;
    o->t = t;
    o->frac = (f != 0) + (f >= half) + (f > half);
    o->k = k;
}

/* Front end for |v| in [1e-37, 1e-10): k in [26, 54] (5^k < 2^126, m 5^k
 * 4 < 2^181), s up to about 125: the same steps in 192 bits. */
static __attribute__((noinline)) void scale192(unsigned long long m, int ex, scaled *o)
{
    int k = first_k(ex), s;
    u128 p5; /* 5^k */
    u192 P;
    unsigned long long t;
    for (;;) {
        s = 53 - ex - k;
        p5 = k <= 27 ? (u128)ikd_pow5[k] : (u128)ikd_pow5[27] * ikd_pow5[k - 27];
        P = u192_mul(m, p5);
        t = u192_shr64(P, s);
        if (t < ikd_pow10[17]) break;
        k--; /* the guess was one high */
    }
    u192 five = u192_mul(1, p5), step = u192_shl(five, 1), P4 = u192_shl(P, 2);
    u192 hi_n = u192_add(P4, step), lo_n = u192_sub(P4, m == (1ull << 52) ? five : step);
    o->hi = u192_shr64(hi_n, s + 2);
    o->lo = u192_shr64(lo_n, s + 2) + 1;
    o->t = t;
    int above = u192_bit(P, s - 1), rest = !u192_low_zero(P, s - 1);
    o->frac = !above ? (rest ? 1 : 0) : (rest ? 3 : 2);
    o->k = k;
}

/* Back end: the digits and the decimal point. */
static inline __attribute__((always_inline)) size_t write_shortest(int negative, const scaled *sc, char *out)
{
    unsigned long long t = sc->t, lo = sc->lo, hi = sc->hi;
    int k = sc->k;
    /* drop digits while a multiple of 10^(j+1) stays within [lo, hi]:
     * h = floor(hi / 10^j), l = floor((lo - 1) / 10^j) */
    int j = 0;
    unsigned long long h = hi, l = lo - 1;
    while (h / 10 > l / 10) {
        h /= 10;
        l /= 10;
        j++;
    }
    /* the candidate nearest v at that length, kept within [l + 1, h]: c and
     * the remainder r + frac against half of 10^j (all 64-bit) */
    unsigned long long c = t;
    for (int i = 0; i < j; i++) c /= 10;
    unsigned long long r2 = 2 * (t - c * ikd_pow10[j]);
    int up;
    if (j == 0)
        up = sc->frac == 3 || (sc->frac == 2 && (c & 1));
    else /* 10^j even: 2r below it is at least 2 below, so frac cannot tip it */
        up = r2 > ikd_pow10[j] || (r2 == ikd_pow10[j] && (sc->frac != 0 || (c & 1)));
    c += (unsigned long long)up;
    if (c < l + 1) c = l + 1;
    if (c > h) c = h;
    while (c % 10 == 0) { /* a rounding carry (999 -> 1000) leaves zeros */
        c /= 10;
        j++;
    }
    int nd = 16 - j > 1 ? 16 - j : 1; /* c has 16 - j to 18 - j digits */
    while (nd < 18 && c >= ikd_pow10[nd]) nd++;
    char dig[18 + 32];
    put18(dig, c);
    const char *digits = dig + 18 - nd;
    int point = nd + j - k; /* digits before the decimal point */
    size_t n = 0;
    if (negative) out[n++] = '-';
    if (point >= -9 && point <= 0) { /* 0.000ddd: |v| in [1e-10, 1) */
        out[n++] = '0';
        out[n++] = '.';
        for (int i = 0; i < -point; i++) out[n++] = '0';
        copy32(out + n, digits, (size_t)nd);
        n += (size_t)nd;
    } else if (point < 0) { /* |v| below 1e-10: d.ddde-NN, as printf's %g writes it */
        out[n++] = digits[0];
        if (nd > 1) {
            out[n++] = '.';
            copy32(out + n, digits + 1, (size_t)(nd - 1));
            n += (size_t)(nd - 1);
        }
        int e = 1 - point; /* 11 to 38 */
        out[n++] = 'e';
        out[n++] = '-';
        out[n++] = (char)('0' + e / 10);
        out[n++] = (char)('0' + e % 10);
    } else if (point < nd) {
        copy32(out + n, digits, (size_t)point);
        n += (size_t)point;
        out[n++] = '.';
        copy32(out + n, digits + point, (size_t)(nd - point));
        n += (size_t)(nd - point);
    } else {
        copy32(out + n, digits, (size_t)nd);
        n += (size_t)nd;
        for (int i = nd; i < point; i++) out[n++] = '0';
    }
    return n;
}

/* Returns the length, or 0 when v is outside both ranges (the caller then
 * uses printf). */
static size_t fmt_shortest(double v, char *out)
{
    double a = fabs(v);
    if (!(a >= 1e-37 && a < 1e15)) return 0; /* normal numbers, so the mantissa has its hidden bit */
    unsigned long long bits;
    memcpy(&bits, &a, sizeof bits);
    int ex = (int)(bits >> 52) - 1022;                                 /* a = f 2^ex, f in [0.5, 1) */
    unsigned long long m = (bits & ((1ull << 52) - 1)) | (1ull << 52); /* [2^52, 2^53) */
    scaled sc;
    if (a >= 1e-10) scale128(m, ex, &sc);
    else scale192(m, ex, &sc);
    return write_shortest(v < 0, &sc, out);
}

void ikd_buf_json_int(ikd_buf *b, long long v)
{
    if (b->len + 65 > b->cap && ikd_buf_reserve(b, 64) != 0) return; /* room for copy32's whole moves */
    char *out = b->data + b->len;
    size_t n = 0;
    unsigned long long q = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    if (v < 0) out[n++] = '-';
    if (q >= ikd_pow10[18]) { /* 19 or 20 digits: the leading one or two, then 18 */
        n += put_u64(q / ikd_pow10[18], out + n);
        put18(out + n, q % ikd_pow10[18]);
        n += 18;
    } else {
        n += put_u64(q, out + n);
    }
    b->len += n;
    out[n] = '\0';
}

void ikd_buf_json_number(ikd_buf *b, double v)
{
    if (b->len + 65 > b->cap && ikd_buf_reserve(b, 64) != 0) return; /* room for copy32's whole moves */
    char *out = b->data + b->len;
    size_t n;
    if (!isfinite(v)) {
        out[0] = '0';
        n = 1;
        b->failed = 1;
    } else if (v == 0.0) {
        out[0] = '0'; /* -0 too */
        n = 1;
    } else if (fabs(v) < 1e15 && v == (double)(long long)v) { /* integral: no fraction digits (range checked first) */
        ikd_buf_json_int(b, (long long)v);
        return;
    } else if (!(n = fmt_shortest(v, out))) {
        /* below 1e-37 or from 1e15 up (neither is met in a pose of sensible
         * units): the fewest printf digits that read back. The nearest
         * 16-digit decimal decides: if it does not read back, no shorter one
         * does (a shorter decimal is a 16-digit one with zeros appended), so
         * 17; if it does, 15 digits may too (%.15g drops trailing zeros, so it
         * is the shortest then). */
        n = (size_t)snprintf(out, 40, "%.16g", v);
        if (strtod(out, NULL) != v) {
            n = (size_t)snprintf(out, 40, "%.17g", v);
        } else {
            char t15[40];
            size_t n15 = (size_t)snprintf(t15, sizeof t15, "%.15g", v);
            if (strtod(t15, NULL) == v) {
                memcpy(out, t15, n15 + 1);
                n = n15;
            }
        }
    }
    b->len += n;
    out[n] = '\0';
}

char *ikd_buf_release(ikd_buf *b, size_t *len)
{
    char *d = b->data;
    if (len) *len = b->len;
    ikd_buf_init(b);
    return d;
}
