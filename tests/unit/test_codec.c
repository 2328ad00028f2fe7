/* test_codec.c - libcheck suite: data-driven request fixtures through the API handler, and the JSON writers. */
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
#include "codec/codec.h"
#include "codec/strtod.h"
#include "service/api.h"
#include "service/reply.h"
#include "service/route.h"
#include "testutil.h"

static json_t *load_cases(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/solve.json", tu_fixtures_dir());
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    ck_assert_msg(doc != NULL, "cannot load %s: %s", path, e.text);
    json_t *cases = json_object_get(doc, "cases");
    ck_assert(json_array_size(cases) >= 40);
    json_incref(cases);
    json_decref(doc);
    return cases;
}

/* The body of a case: "raw" text as is, else "body" serialised. Caller frees. */
static char *case_body(json_t *c)
{
    json_t *raw = json_object_get(c, "raw");
    if (raw) return strdup(json_string_value(raw));
    return json_dumps(json_object_get(c, "body"), JSON_COMPACT | JSON_ENCODE_ANY);
}

static void check_reply(json_t *c, int status, const char *reply, size_t len)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    json_error_t e;
    json_t *doc = json_loadb(reply, len, 0, &e);
    ck_assert_msg(doc != NULL, "%s: reply is not JSON: %s", name, reply);
    ck_assert_msg(status == json_integer_value(json_object_get(c, "status")), "%s: status %d, reply %s", name, status,
                  reply);
    if (status != 200) {
        json_t *err = json_object_get(doc, "error");
        ck_assert_msg(json_is_object(err), "%s: no error object", name);
        ck_assert_str_eq(json_string_value(json_object_get(err, "code")), json_string_value(json_object_get(c, "code")));
        ck_assert_msg(strcmp(json_string_value(json_object_get(err, "field")),
                             json_string_value(json_object_get(c, "field"))) == 0,
                      "%s: field '%s', expected '%s'", name, json_string_value(json_object_get(err, "field")),
                      json_string_value(json_object_get(c, "field")));
        ck_assert(strlen(json_string_value(json_object_get(err, "message"))) > 0);
    } else {
        json_t *expect = json_object_get(c, "expect");
        const char *key;
        json_t *v;
        json_object_foreach(expect, key, v) {
            if (strcmp(key, "names") == 0) continue;
            ck_assert_msg(json_equal(json_object_get(doc, key), v), "%s: %s differs in %s", name, key, reply);
        }
        json_t *joints = json_object_get(doc, "joints");
        json_t *body = json_object_get(c, "body");
        size_t n = json_array_size(json_object_get(json_object_get(body, "chain"), "joints"));
        ck_assert_uint_eq(json_array_size(joints), n);
        json_t *names = json_object_get(expect, "names");
        for (size_t i = 0; i < json_array_size(names); i++)
            ck_assert_str_eq(json_string_value(json_object_get(json_array_get(joints, i), "name")),
                             json_string_value(json_array_get(names, i)));
        ck_assert(json_is_number(json_object_get(doc, "error")));
        ck_assert(json_is_integer(json_object_get(doc, "iterations")));
        ck_assert(json_is_number(json_object_get(doc, "solve_us")));
    }
    json_decref(doc);
}

START_TEST(fixtures_through_the_handler)
{
    json_t *cases = load_cases();
    ikd_api_limits lim = {64, 100000, 100};
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 64), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        char *body = case_body(c);
        int status = ikd_api_solve(&s, &lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, NULL);
        check_reply(c, status, out.data, out.len);
        free(body);
    }
    ikd_buf_destroy(&out);
    ikd_api_scratch_destroy(&s);
    json_decref(cases);
}
END_TEST

/* jansson value -> MessagePack with msgpack-c (the same document shape). */
static void pack_json(msgpack_packer *pk, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        msgpack_pack_map(pk, json_object_size(v));
        json_object_foreach(v, k, x) {
            msgpack_pack_str(pk, strlen(k));
            msgpack_pack_str_body(pk, k, strlen(k));
            pack_json(pk, x);
        }
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        msgpack_pack_array(pk, json_array_size(v));
        json_array_foreach(v, i, x) pack_json(pk, x);
        break;
    }
    case JSON_STRING:
        msgpack_pack_str(pk, json_string_length(v));
        msgpack_pack_str_body(pk, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER: msgpack_pack_int64(pk, json_integer_value(v)); break;
    case JSON_REAL: msgpack_pack_double(pk, json_real_value(v)); break;
    case JSON_TRUE: msgpack_pack_true(pk); break;
    case JSON_FALSE: msgpack_pack_false(pk); break;
    default: msgpack_pack_nil(pk); break;
    }
}

/* MessagePack reply -> jansson, to compare with the JSON reply. */
static json_t *unpack_to_json(const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_MAP: {
        json_t *m = json_object();
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)o->via.map.ptr[i].key.via.str.size, o->via.map.ptr[i].key.via.str.ptr);
            json_object_set_new(m, key, unpack_to_json(&o->via.map.ptr[i].val));
        }
        return m;
    }
    case MSGPACK_OBJECT_ARRAY: {
        json_t *a = json_array();
        for (uint32_t i = 0; i < o->via.array.size; i++) json_array_append_new(a, unpack_to_json(&o->via.array.ptr[i]));
        return a;
    }
    case MSGPACK_OBJECT_STR: return json_stringn(o->via.str.ptr, o->via.str.size);
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return json_integer((json_int_t)o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return json_integer(o->via.i64);
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return json_real(o->via.f64);
    case MSGPACK_OBJECT_BOOLEAN: return json_boolean(o->via.boolean);
    default: return json_null();
    }
}

/* Equal documents, numbers compared as doubles (JSON writes 0 for 0.0). */
static int same_doc(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b)) return 0;
    if (json_is_object(a)) {
        const char *k;
        json_t *x;
        if (json_object_size(a) != json_object_size(b)) return 0;
        json_object_foreach(a, k, x) {
            json_t *y = json_object_get(b, k);
            if (!y || (strcmp(k, "solve_us") && !same_doc(x, y))) return 0;
        }
        return 1;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_doc(json_array_get(a, i), json_array_get(b, i))) return 0;
        return 1;
    }
    return json_equal(a, b);
}

/* The fixtures again, sent as MessagePack and answered in MessagePack: the
 * same status, code and field, and for solves the very same poses. */
START_TEST(fixtures_in_msgpack_give_the_same_replies)
{
    json_t *cases = load_cases();
    ikd_api_limits lim = {64, 100000, 100};
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 64), 0);
    ikd_buf jout, mout;
    ikd_buf_init(&jout);
    ikd_buf_init(&mout);
    size_t i, compared = 0;
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (json_object_get(c, "raw")) continue; /* not a JSON document: nothing to convert */
        const char *name = json_string_value(json_object_get(c, "name"));
        char *body = case_body(c);
        int js = ikd_api_solve(&s, &lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &jout, NULL);
        msgpack_sbuffer sb;
        msgpack_packer pk;
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        pack_json(&pk, json_object_get(c, "body"));
        int ms = ikd_api_solve(&s, &lim, 0, IKD_ENC_MSGPACK, IKD_ENC_MSGPACK, sb.data, sb.size, &mout, NULL);
        msgpack_sbuffer_destroy(&sb);
        ck_assert_msg(js == ms, "%s: json %d, msgpack %d", name, js, ms);
        msgpack_unpacked up;
        msgpack_unpacked_init(&up);
        size_t off = 0;
        ck_assert_int_eq(msgpack_unpack_next(&up, mout.data, mout.len, &off), MSGPACK_UNPACK_SUCCESS);
        ck_assert_uint_eq(off, mout.len);
        json_t *mdoc = unpack_to_json(&up.data);
        json_error_t e;
        json_t *jdoc = json_loadb(jout.data, jout.len, 0, &e);
        ck_assert_msg(same_doc(jdoc, mdoc), "%s: replies differ\n%s", name, jout.data);
        json_decref(mdoc);
        json_decref(jdoc);
        msgpack_unpacked_destroy(&up);
        free(body);
        compared++;
    }
    ck_assert_uint_ge(compared, 60);
    ikd_buf_destroy(&jout);
    ikd_buf_destroy(&mout);
    ikd_api_scratch_destroy(&s);
    json_decref(cases);
}
END_TEST

START_TEST(malformed_msgpack)
{
    ikd_api_limits lim = {64, 100000, 100};
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 64), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    static const struct {
        const char *name;
        const char *bytes;
        size_t len;
        const char *field;
    } cases[] = {
        {"empty", "", 0, ""},
        {"truncated map", "\x82\xa6solver", 8, ""},
        {"trailing bytes", "\x80\x00", 2, ""},
        {"reserved byte", "\xc1", 1, ""},
        {"not a map", "\x93\x01\x02\x03", 4, ""},
        {"non-string key", "\x81\x01\x02", 3, "(non-string key)"},
        {"binary target", "\x82\xa5" "chain\x81\xa6joints\x93\x93\x00\x00\x00\x93\x00\x01\x00\x93\x00\x02\x00"
                          "\xa6target\xc4\x01\x00", 38, "target"},
        {"duplicate key", "\x82\xa6solver\xa4" "auto\xa6solver\xa4" "auto", 25, "solver"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = ikd_api_solve(&s, &lim, 0, IKD_ENC_MSGPACK, IKD_ENC_JSON, cases[i].bytes, cases[i].len, &out, NULL);
        ck_assert_msg(st == 400, "%s: %d %s", cases[i].name, st, out.data);
        json_error_t e;
        json_t *d = json_loadb(out.data, out.len, 0, &e);
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(!strcmp(json_string_value(json_object_get(json_object_get(d, "error"), "field")), cases[i].field),
                      "%s: %s", cases[i].name, out.data);
        json_decref(d);
    }
    /* nesting deeper than the unpacker allows */
    char deep[4096];
    memset(deep, 0x91, sizeof deep - 1);
    deep[sizeof deep - 1] = 0x00;
    ck_assert_int_eq(ikd_api_solve(&s, &lim, 0, IKD_ENC_MSGPACK, IKD_ENC_JSON, deep, sizeof deep, &out, NULL), 400);
    ikd_buf_destroy(&out);
    ikd_api_scratch_destroy(&s);
}
END_TEST

START_TEST(max_joints_limit)
{
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 3), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    const char *body = "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0],[0,3,0]]},\"target\":[1,1,0]}";
    ikd_api_limits lim3 = {3, 1000, 10};
    ck_assert_int_eq(ikd_api_solve(&s, &lim3, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, NULL), 400);
    ck_assert_ptr_nonnull(strstr(out.data, "\"field\":\"chain.joints\""));
    ck_assert_ptr_nonnull(strstr(out.data, "--max-joints"));
    ikd_buf_destroy(&out);
    ikd_api_scratch_destroy(&s);
}
END_TEST

START_TEST(reply_round_trips_the_pose)
{
    /* The reply's numbers read back to exactly the solver's doubles. */
    ikd_joint j[3] = {{.position = {0, 0, 0}}, {.position = {0.1, 1, 0}}, {.position = {0, 2, 0.3}}};
    for (int i = 0; i < 3; i++) j[i].rotation = ikd_quat_identity();
    ikd_request req;
    ikd_request_init(&req);
    req.problem.joints = j;
    req.problem.joint_count = 3;
    req.problem.target = ikd_vec3_make(0.7, 1.1, 0.3);
    ikd_error err;
    ikd_result res;
    ikd_pose_joint pose[3];
    ck_assert_int_eq(ikd_validate(&req.problem, &err), 0);
    ck_assert_int_eq(ikd_solve(&req.problem, NULL, 0, pose, &res, &err), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    ikd_emitter em;
    ikd_emit_init(&em, IKD_ENC_JSON, &out);
    ikd_reply_solve(&em, &req, &res, pose, 1.5);
    ck_assert(!out.failed);
    json_error_t e;
    json_t *doc = json_loadb(out.data, out.len, 0, &e);
    ck_assert_ptr_nonnull(doc);
    json_t *joints = json_object_get(doc, "joints");
    for (size_t i = 0; i < 3; i++) {
        json_t *p = json_object_get(json_array_get(joints, i), "position");
        ck_assert(json_real_value(json_array_get(p, 0)) == pose[i].position.x ||
                  json_integer_value(json_array_get(p, 0)) == pose[i].position.x);
        ck_assert(json_number_value(json_array_get(p, 1)) == pose[i].position.y);
        ck_assert(json_number_value(json_array_get(p, 2)) == pose[i].position.z);
        json_t *q = json_object_get(json_array_get(joints, i), "rotation");
        ck_assert(json_number_value(json_array_get(q, 3)) == pose[i].rotation.w);
    }
    ck_assert_ptr_null(json_object_get(json_array_get(joints, 0), "name"));
    json_decref(doc);
    ikd_buf_destroy(&out);
}
END_TEST

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

START_TEST(content_type_and_routes)
{
    ck_assert_int_eq(ikd_encoding_from_content_type(NULL), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/json"), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_content_type("Application/JSON; charset=utf-8"), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/msgpack"), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/x-msgpack"), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/jsonx"), -1);
    ck_assert_int_eq(ikd_encoding_from_content_type("text/plain"), -1);
    ck_assert_int_eq(ikd_encoding_from_content_type("application/x-www-form-urlencoded"), -1);
    ck_assert_int_eq(ikd_encoding_from_accept(NULL, IKD_ENC_MSGPACK), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_accept("*/*", IKD_ENC_JSON), IKD_ENC_JSON);
    ck_assert_int_eq(ikd_encoding_from_accept("text/html, application/msgpack;q=0.9", IKD_ENC_JSON), IKD_ENC_MSGPACK);
    ck_assert_int_eq(ikd_encoding_from_accept("application/json", IKD_ENC_MSGPACK), IKD_ENC_JSON);
    const ikd_route *r = ikd_route_find("/v1/solve");
    ck_assert_ptr_nonnull(r);
    ck_assert(ikd_route_allows(r, "POST"));
    ck_assert(!ikd_route_allows(r, "GET"));
    ck_assert(!ikd_route_allows(r, "POS"));
    ck_assert_ptr_null(ikd_route_find("/v1/solve/"));
    ck_assert(ikd_route_allows(ikd_route_find("/healthz"), "HEAD"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("json");
    tcase_set_timeout(tc, 60); /* the number writer and strtod checks take seconds (13 s under ASan) */
    tcase_add_test(tc, fixtures_through_the_handler);
    tcase_add_test(tc, max_joints_limit);
    tcase_add_test(tc, fixtures_in_msgpack_give_the_same_replies);
    tcase_add_test(tc, malformed_msgpack);
    tcase_add_test(tc, reply_round_trips_the_pose);
    tcase_add_test(tc, number_writer_shortest_and_exact);
    tcase_add_test(tc, strtod_is_interposed_and_matches_libc);
    tcase_add_test(tc, msgpack_emitter_matches_msgpack_c);
    tcase_add_test(tc, string_writer_escapes_and_repairs_utf8);
    tcase_add_test(tc, content_type_and_routes);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
