/* test_emit.c - libcheck suite: the reply writers (JSON numbers and strings, MessagePack) and ikd's strtod. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "codec/buf.h"
#include "codec/emit.h"
#include "codec/strtod.h"
#include "testutil.h"


/* Significant digits of a JSON number as written (the exponent, leading
 * zeros and an integer's trailing zeros not counted). */
static int significant_digits(const char *s)
{
    int n = 0, lead = 1, trailing = 0, point = strchr(s, '.') != NULL;
    for (const char *p = s; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p < '0' || *p > '9') continue;
        if (lead && *p == '0') continue;
        lead = 0;
        n++;
        trailing = *p == '0' ? trailing + 1 : 0;
    }
    return point ? n : n - trailing;
}

/* The significant digits of a decimal number's text, without leading or
 * trailing zeros ("-0.001250" and "1.25e-3" both give "125"). */
static void digits_of(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = s; *p && *p != 'e' && *p != 'E' && n + 1 < size; p++) {
        if (*p < '0' || *p > '9') continue;
        if (n == 0 && *p == '0') continue;
        out[n++] = *p;
    }
    while (n > 0 && out[n - 1] == '0') n--;
    out[n] = '\0';
}

/* libc's own conversion, in the C locale: the oracle (strtod itself is ikd's in this process). */
static double oracle_strtod(const char *s, char **end)
{
    static locale_t c;
    if (!c) c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return strtod_l(s, end, c);
}

START_TEST(number_writer_shortest_and_exact)
{
    static const struct {
        double v;
        const char *text;
    } known[] = {{0.5, "0.5"}, {-3, "-3"}, {0.1, "0.1"}, {-0.0, "0"}, {0.3, "0.3"}, {0.1 + 0.2, "0.30000000000000004"},
                 {1e-5, "0.00001"}, {123456789012345.0, "123456789012345"}, {1.5e-7, "0.00000015"},
                 {0.712345678, "0.712345678"}, {2.220446049250313e-16, "2.220446049250313e-16"},
                 {1e15, "1e+15"}, {-1e-300, "-1e-300"}, {1.3877787807814457e-17, "1.3877787807814457e-17"},
                 {1e-20, "1e-20"}, {-2.5e-11, "-2.5e-11"}, {1e-10, "0.0000000001"}, {1e-37, "1e-37"}};
    ikd_buf b;
    ikd_buf_init(&b);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        ikd_buf_reset(&b);
        ikd_buf_json_number(&b, known[i].v);
        ck_assert_str_eq(b.data, known[i].text);
    }
    /* Every finite double reads back exactly, and no shorter decimal would
     * (denormals, written by printf, may take a digit more). Checking the
     * nearest decimal one digit shorter is enough: any shorter decimal is
     * also one of those, with zeros appended. */
    tu_rng r;
    tu_seed(&r, 11);
    for (int i = 0; i < 600000; i++) {
        /* the range of the 128-bit path, anything, the 192-bit path's
         * (1e-37..1e-10), short decimals, the ends of both ranges, and
         * rounding noise (small multiples of powers of two, like 2^-56) */
        double v = tu_uniform(&r, -1, 1) * pow(10, i % 4 == 0   ? tu_uniform(&r, -300, 300)
                                                    : i % 4 == 1 ? tu_uniform(&r, -39, -9)
                                                                 : tu_uniform(&r, -12, 16));
        if (i % 7 == 0) v = nextafter(v, 1e300);
        if (i % 5 == 0) v = round(v * 1e6) / pow(10, (double)(i % 11));
        if (i % 13 == 0) v = ldexp((double)(tu_next(&r) % 64 + 1) * (i % 2 ? 1 : -1), -(int)(tu_next(&r) % 140));
        if (i % 17 == 0) {
            static const double ends[] = {1e-37, 1e-10, 1e15};
            v = ends[tu_next(&r) % 3];
            for (int step = (int)(tu_next(&r) % 5); step > 0; step--) v = nextafter(v, i % 2 ? 0 : 1e300);
        }
        ikd_buf_reset(&b);
        ikd_buf_json_number(&b, v);
        ck_assert_msg(oracle_strtod(b.data, NULL) == v, "%.17g written as %s", v, b.data);
        ck_assert_msg(strspn(b.data, "-0123456789.e+") == b.len, "not a JSON number: %s", b.data);
        int sig = significant_digits(b.data);
        if (fabs(v) < 2.3e-308) continue;
        if (sig > 1) { /* a decimal with fewer digits is one with sig - 1 digits (zeros appended) */
            char shorter[40];
            snprintf(shorter, sizeof shorter, "%.*e", sig - 2, v);
            ck_assert_msg(oracle_strtod(shorter, NULL) != v, "%.17g written as %s, but %s reads back too", v, b.data,
                          shorter);
        }
        /* at that length, the decimal nearest v (printf's, correctly
         * rounded) whenever it reads back */
        char nearest[40], want[40], got[40];
        snprintf(nearest, sizeof nearest, "%.*e", sig - 1, v);
        if (oracle_strtod(nearest, NULL) == v) {
            digits_of(nearest, want, sizeof want);
            digits_of(b.data, got, sizeof got);
            ck_assert_msg(strcmp(want, got) == 0, "%.17g written as %s, nearest is %s", v, b.data, nearest);
        }
    }
    /* integers: what printf's %lld writes, over every length and both extremes */
    static const long long edge[] = {0, -1, 9, 10, -10, 999999999999999999LL, 1000000000000000000LL,
                                     -1000000000000000000LL, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
    char want[32];
    for (int i = 0; i < 100000 + (int)(sizeof edge / sizeof edge[0]); i++) {
        long long x = i < (int)(sizeof edge / sizeof edge[0])
                          ? edge[i]
                          : (long long)(tu_next(&r) >> (tu_next(&r) % 64)) * (i % 2 ? 1 : -1);
        ikd_buf_reset(&b);
        ikd_buf_json_int(&b, x);
        snprintf(want, sizeof want, "%lld", x);
        if (strcmp(b.data, want) != 0) ck_abort_msg("%s written as %s", want, b.data);
    }
    ikd_buf_reset(&b);
    ikd_buf_json_number(&b, NAN);
    ck_assert(b.failed);
    ikd_buf_destroy(&b);
}
END_TEST

/* s through strtod (ikd's) and through libc's: the same bits, end and errno. */
static void same_as_libc(const char *s)
{
    char *e1, *e2;
    errno = 0;
    double a = strtod(s, &e1);
    int err1 = errno;
    errno = 0;
    double b = oracle_strtod(s, &e2);
    int err2 = errno;
    /* ck_abort_msg only on a failure: libcheck logs every passing ck_assert, which would dominate 2M calls */
    if (memcmp(&a, &b, sizeof a) != 0 && !(isnan(a) && isnan(b))) ck_abort_msg("'%s': %.17g, libc %.17g", s, a, b);
    if (e1 != e2) ck_abort_msg("'%s': end at %td, libc at %td", s, e1 - s, e2 - s);
    if (err1 != err2) ck_abort_msg("'%s': errno %d, libc %d", s, err1, err2);
}

/* strtod is ikd's in this process (the dynamic linker gives jansson the same
 * one), and it is libc's for every input: grammar corners, random decimals of
 * every length and exponent, and decimals within a digit of the midpoint
 * between two doubles, where a conversion that is not exact rounds wrong. */
START_TEST(strtod_is_interposed_and_matches_libc)
{
    ck_assert_ptr_eq(dlsym(RTLD_DEFAULT, "strtod"), (void *)strtod);
    ck_assert_ptr_ne(dlsym(RTLD_NEXT, "strtod"), (void *)strtod);
    static const char *corners[] = {
        "", "-", ".", "-.", "0", "-0", "-0.0", "00", "007.50", "5.", ".5", "-.5e1", "1e", "1e+", "1e-", "1e5x", "1.5.2",
        "+1", " 1", "1 ", "\t2.5", "1,5", "0x1p3", "inf", "-Infinity", "nan", "1e400", "-1e-400", "4.9e-324",
        "2.2250738585072011e-308", "1.7976931348623157e308", "1.7976931348623159e308", "9007199254740993",
        "9007199254740992.5", "18446744073709551615", "18446744073709551616", "1234567890123456789",
        "12345678901234567890", "0.1234567890123456789", "0.00000000000000000000000000012345", "1e-27", "1e-28",
        "9999999999999999999e27", "1e27", "1e28", "0e999999999999", "1e-999999999999", "123456789e-27",
        "0.30000000000000004", "0.1", "0.2", "0.3", "2.718281828459045", "1E10", "1e+00010", "1e-0",
        /* a non-digit inside an eight-byte window: ':' and '/' border the digits */
        "1234567:", "12345678:1", "0.1234567:89", "1/34567890", "123456789012345678:", "9.87654321/"};
    for (size_t i = 0; i < sizeof corners / sizeof corners[0]; i++) same_as_libc(corners[i]);
    tu_rng r;
    tu_seed(&r, 23);
    char s[96];
    int fast = 0;
    for (int i = 0; i < 2000000; i++) {
        int kind = i % 4;
        if (kind == 0) { /* a double, printed to 1..19 significant digits */
            double v = tu_uniform(&r, -1, 1) * pow(10, tu_uniform(&r, -30, 30));
            snprintf(s, sizeof s, i % 3 ? "%.*g" : "%.*e", 1 + (int)(tu_next(&r) % 19), v);
        } else if (kind == 1) { /* random digits, a point somewhere, maybe an exponent */
            int nd = 1 + (int)(tu_next(&r) % 22), point = (int)(tu_next(&r) % (uint64_t)(nd + 2)), n = 0;
            if (tu_next(&r) & 1) s[n++] = '-';
            for (int d = 0; d < nd; d++) {
                if (d == point) s[n++] = '.';
                s[n++] = (char)('0' + (d == 0 && nd > 1 && (tu_next(&r) & 3) ? tu_next(&r) % 10 : tu_next(&r) % 10));
            }
            if (tu_next(&r) & 1) n += snprintf(s + n, sizeof s - (size_t)n, "e%d", (int)(tu_next(&r) % 71) - 35);
            s[n] = '\0';
        } else { /* within a digit of the midpoint of two neighbouring doubles (exact in long double) */
            double v = tu_uniform(&r, 0, 1) * pow(10, tu_uniform(&r, -28, 28));
            long double mid = ((long double)v + (long double)nextafter(v, INFINITY)) / 2;
            int digits = 16 + (int)(tu_next(&r) % 4);
            int n = snprintf(s, sizeof s, "%.*Le", digits - 1, mid);
            char *e = strchr(s, 'e');
            if (kind == 3 && e) { /* nudge the last digit down or up */
                char *last = e - 1;
                if (*last > '0' && *last < '9') *last = (char)(*last + (tu_next(&r) & 1 ? 1 : -1));
            }
            (void)n;
        }
        double tmp;
        fast += ikd_strtod_fast(s, &tmp) > 0;
        same_as_libc(s);
    }
    ck_assert_msg(fast > 1000000, "only %d of 2000000 took the fast path", fast); /* the test must exercise it */
}
END_TEST

/* The emitter writes small MessagePack headers, keys and floats itself: byte
 * for byte what msgpack-c's packer writes for the same values. */
START_TEST(msgpack_emitter_matches_msgpack_c)
{
    static const char *keys[] = {"solver", "joints", "local_rotation", "a", "", "k\"ey with \\ and 31 bytes_______",
                                 "a key longer than thirty-one bytes", NULL};
    tu_rng r;
    tu_seed(&r, 5);
    ikd_buf ours;
    ikd_buf_init(&ours);
    ikd_emitter e;
    ikd_emit_init(&e, IKD_ENC_MSGPACK, &ours);
    msgpack_sbuffer ref;
    msgpack_sbuffer_init(&ref);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &ref, msgpack_sbuffer_write);
    size_t nkeys = 0;
    while (keys[nkeys]) nkeys++;
    ikd_emit_map(&e, nkeys + 1000);
    msgpack_pack_map(&pk, nkeys + 1000);
    for (size_t i = 0; i < nkeys + 1000; i++) {
        const char *key = i < nkeys ? keys[i] : "n";
        if (i % 2) ikd_emit_key(&e, key);
        else ikd_emit_keyn(&e, key, strlen(key) < 32 ? strlen(key) : 0);
        size_t kl = i % 2 || strlen(key) < 32 ? strlen(key) : 0;
        msgpack_pack_str(&pk, kl);
        msgpack_pack_str_body(&pk, key, kl);
        double v = i % 3 ? tu_uniform(&r, -1e6, 1e6) * pow(10, tu_uniform(&r, -300, 300)) : (double)(i % 5) - 2;
        switch (i % 6) {
        case 0: /* a number */
        case 1:
            ikd_emit_num(&e, v);
            msgpack_pack_double(&pk, v);
            break;
        case 2: { /* an array of numbers, fixarray and array 16 */
            size_t n = i % 40;
            double vs[40];
            for (size_t k = 0; k < n; k++) vs[k] = v * (double)k + 0.0; /* no -0: written as 0 */
            ikd_emit_nums(&e, vs, n);
            msgpack_pack_array(&pk, n);
            for (size_t k = 0; k < n; k++) msgpack_pack_double(&pk, vs[k]);
            break;
        }
        case 3: { /* a map of strings, fixmap and map 16; fixstr and str 8 */
            size_t n = i % 20;
            ikd_emit_map(&e, n);
            msgpack_pack_map(&pk, n);
            for (size_t k = 0; k < n; k++) {
                const char *str = keys[k % nkeys];
                ikd_emit_key(&e, str);
                ikd_emit_str(&e, str);
                for (int twice = 0; twice < 2; twice++) {
                    msgpack_pack_str(&pk, strlen(str));
                    msgpack_pack_str_body(&pk, str, strlen(str));
                }
            }
            ikd_emit_end(&e);
            break;
        }
        case 4: /* integers around the fixint edges */
            ikd_emit_int(&e, (long long)(i % 300) - 150);
            msgpack_pack_int64(&pk, (long long)(i % 300) - 150);
            break;
        default:
            ikd_emit_bool(&e, i % 4 == 1);
            if (i % 4 == 1) msgpack_pack_true(&pk);
            else msgpack_pack_false(&pk);
        }
    }
    ikd_emit_end(&e);
    ck_assert(!ours.failed);
    ck_assert_uint_eq(ours.len, ref.size);
    ck_assert(memcmp(ours.data, ref.data, ref.size) == 0);
    msgpack_sbuffer_destroy(&ref);
    ikd_buf_destroy(&ours);
}
END_TEST

START_TEST(string_writer_escapes_and_repairs_utf8)
{
    ikd_buf b;
    ikd_buf_init(&b);
    ikd_buf_json_string(&b, "a\"b\\c\n\x01\xc3\xa9\xff\xe2\x82");
    ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\\ufffd\\ufffd\\ufffd\"");
    json_error_t e;
    json_t *v = json_loadb(b.data, b.len, JSON_DECODE_ANY, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
    ikd_buf_destroy(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("writers");
    tcase_set_timeout(tc, 60); /* the number writer and strtod checks take seconds (13 s under ASan) */
    tcase_add_test(tc, number_writer_shortest_and_exact);
    tcase_add_test(tc, strtod_is_interposed_and_matches_libc);
    tcase_add_test(tc, msgpack_emitter_matches_msgpack_c);
    tcase_add_test(tc, string_writer_escapes_and_repairs_utf8);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
