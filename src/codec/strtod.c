/* strtod.c - a correctly rounded strtod for plain decimals, interposed on libc's for the whole process. */

/* Why: jansson converts every JSON number with strtod, and glibc's takes its
 * multi-precision path for the 17-digit numbers clients send (a full-precision
 * double printed shortest): in a JSON batch that conversion was the largest
 * single cost after jansson's own lexer (perf, make bench's batch). jansson
 * stays the JSON library; defining strtod in the executable makes the dynamic
 * linker bind jansson's call to this one.
 *
 * The fast path takes only strings that are wholly (up to the NUL, as jansson
 * passes them) of the form  -?digits(.digits)?([eE][+-]?digits)?  with at most
 * 19 significant digits and a value w 10^e, |e| <= 27, with the locale's
 * decimal point '.'. The result is exact: w 5^e in 128 bits for e >= 0, and for
 * e < 0 the 64-bit quotient (w 2^s) / 5^-e with its remainder as a sticky bit,
 * rounded once to 53 bits, ties to even. Everything else (more digits, other
 * exponents, leading space, '+', hex, inf/nan, a trailing character) goes to
 * libc's strtod unchanged, so the end pointer, errno and every result are
 * libc's. Like every conversion in ikd it assumes the default rounding mode
 * (ikd never changes it). tests/unit/test_emit.c compares the two over
 * millions of generated strings. */
#include "strtod.h"
#include "pow.h"

#include <dlfcn.h>
#include <langinfo.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

typedef double (*strtod_fn)(const char *, char **);

static strtod_fn libc_fn; /* resolved once; a race stores the same value */

/* libc's strtod: the next definition after this one (RTLD_NEXT); in a static
 * link, where there is none, strtod_l in the C locale. */
static double libc_strtod(const char *s, char **end)
{
    strtod_fn f = __atomic_load_n(&libc_fn, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (strtod_fn)dlsym(RTLD_NEXT, "strtod");
        if (!f) {
            static locale_t c_locale;
            locale_t l = __atomic_load_n(&c_locale, __ATOMIC_ACQUIRE);
            if (!l) {
                l = newlocale(LC_ALL_MASK, "C", (locale_t)0);
                __atomic_store_n(&c_locale, l, __ATOMIC_RELEASE); /* a lost race leaks one locale object */
            }
            return strtod_l(s, end, l);
        }
        __atomic_store_n(&libc_fn, f, __ATOMIC_RELEASE);
    }
    return f(s, end);
}

/* 10^k for k in [0, 22]: exact doubles. */
static const double pow10d[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int bitlen128(u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)x);
}

/* q 2^e2 (plus less than one unit when sticky), q > 0, rounded to the nearest
 * double, ties to even; 0 when the result would not be a normal double. */
static int round_to_double(u128 q, int sticky, int e2, double *out)
{
    int len = bitlen128(q);
    uint64_t m;
    if (len <= 53) { /* exact: no bits dropped (sticky is only set by division, which leaves >= 62 bits) */
        m = (uint64_t)q << (53 - len);
        e2 -= 53 - len;
    } else {
        int sh = len - 53;
        m = (uint64_t)(q >> sh);
        u128 rest = q & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
        if (rest > half || (rest == half && (sticky || (m & 1)))) m++;
        if (m == 1ull << 53) {
            m >>= 1;
            sh++;
        }
        e2 += sh;
    }
    int biased = e2 + 52 + 1023; /* m in [2^52, 2^53): value = 1.f 2^(e2 + 52) */
    if (biased < 1 || biased > 2046) return 0;
    uint64_t bits = ((uint64_t)biased << 52) | (m & ((1ull << 52) - 1));
    memcpy(out, &bits, sizeof bits);
    return 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The value of the eight digits at p (8 readable bytes), or -1 if any is not
 * a digit. Bytes are '0'..'9' when each has high nibble 3, and still has after
 * adding 6; the digits then combine in lanes of 2, 4 and 8: each step adds
 * ten (a hundred, ten thousand) times a lane to its right neighbour, and no
 * lane overflows (99, 9999, 99999999). */
static int64_t eight_digits(const char *p)
{
    uint64_t x;
    memcpy(&x, p, 8); /* little-endian: byte 0, the first digit, lowest */
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ull, threes = 0x3030303030303030ull;
    if ((x & hi) != threes || ((x + 0x0606060606060606ull) & hi) != threes) return -1;
    x -= threes;
    x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
    x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
    return (int64_t)((x * 10000 + (x >> 32)) & 0xFFFFFFFFull);
}

/* Appends the digits at p to w (eight at a time while they fit), counting them
 * in *nd; returns where they end, or NULL past 19 significant digits. */
static inline __attribute__((always_inline)) const char *scan_digits(const char *p, const char *end, uint64_t *w, int *nd)
{
    int64_t eight;
    for (; *nd <= 11 && end - p >= 8 && (eight = eight_digits(p)) >= 0; p += 8, *nd += 8)
        *w = *w * 100000000ull + (uint64_t)eight;
    for (; is_digit(*p); p++, ++*nd) {
        if (*nd == 19) return NULL;
        *w = *w * 10 + (uint64_t)(*p - '0');
    }
    return p;
}

size_t ikd_strtod_fast(const char *s, double *out)
{
    const char *p = s, *end = s + strlen(s);
    int neg = *p == '-';
    p += neg;
    uint64_t w = 0;
    int nd = 0, e10 = 0;
    const char *start = p;
    while (*p == '0') p++; /* leading zeros are not significant */
    if (!(p = scan_digits(p, end, &w, &nd))) return 0;
    int any = p > start;
    if (*p == '.') {
        const char *radix = nl_langinfo(RADIXCHAR);
        if (radix[0] != '.' || radix[1] != '\0') return 0;
        const char *frac = ++p;
        if (nd == 0)
            for (; *p == '0'; p++)
                if (--e10 < -1000) return 0; /* far below the fast path's range anyway */
        int before = nd;
        if (!(p = scan_digits(p, end, &w, &nd))) return 0;
        e10 -= nd - before; /* each fraction digit divides by ten */
        any |= p > frac;
    }
    if (!any) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = *p == '-';
        if (*p == '-' || *p == '+') p++;
        if (!is_digit(*p)) return 0;
        int x = 0;
        for (; is_digit(*p); p++)
            if (x < 100000) x = x * 10 + (*p - '0');
        e10 += eneg ? -x : x;
    }
    if (*p != '\0') return 0;
    double v;
    if (w == 0) {
        v = 0.0;
    } else if (w <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
        /* both exact doubles: one correctly rounded operation */
        v = e10 < 0 ? (double)w / pow10d[-e10] : (double)w * pow10d[e10];
    } else if (e10 >= 0 && e10 <= 27) {
        if (!round_to_double((u128)w * ikd_pow5[e10], 0, e10, &v)) return 0;
    } else if (e10 < 0 && e10 >= -27) {
        int k = -e10;
        /* w 2^sh below 2^(63 + bits of 5^k): a quotient in [2^62, 2^64), one 128-by-64 division */
        int sh = 63 + (64 - __builtin_clzll(ikd_pow5[k])) - (64 - __builtin_clzll(w));
        u128 n = (u128)w << sh;
        uint64_t q = (uint64_t)(n / ikd_pow5[k]);
        int sticky = n - (u128)q * ikd_pow5[k] != 0;
        if (!round_to_double(q, sticky, -sh - k, &v)) return 0;
    } else {
        return 0;
    }
    *out = neg ? -v : v;
    return (size_t)(p - s);
}

double ikd_strtod(const char *s, char **end)
{
    double v;
    size_t n = ikd_strtod_fast(s, &v);
    if (n > 0) {
        if (end) *end = (char *)s + n;
        return v;
    }
    return libc_strtod(s, end);
}

/* The interposer: jansson's (and every other) call to strtod lands here. */
double strtod(const char *restrict s, char **restrict end) { return ikd_strtod(s, end); }
