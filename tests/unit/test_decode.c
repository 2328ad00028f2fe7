/* test_decode.c - libcheck suite: the request fixtures through decoding and validation, in JSON and MessagePack. */
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
#include "service/api.h"
#include "jsonpack.h"
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
    ikd_api_limits lim = {64, 100000, 100, NULL, 0, 0, NULL, NULL};
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
    ikd_api_limits lim = {64, 100000, 100, NULL, 0, 0, NULL, NULL};
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
        tu_pack_json(&pk, json_object_get(c, "body"));
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
    ikd_api_limits lim = {64, 100000, 100, NULL, 0, 0, NULL, NULL};
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

/* Each kind of bad MessagePack says what is wrong; nesting up to the
 * unpacker's 32 levels is a document (then refused for its shape), 33 is
 * malformed; an integer beyond 64 bits is a JSON number; a joint name that is
 * not UTF-8 is refused with its field (JSON replies could not carry it). */
static int solve_msg(ikd_api_scratch *s, ikd_encoding enc, const char *body, size_t len, ikd_buf *out,
                     const char *want_code, const char *want_field, const char *want_text)
{
    ikd_api_limits lim = {64, 100000, 100, NULL, 0, 0, NULL, NULL};
    int st = ikd_api_solve(s, &lim, 0, enc, IKD_ENC_JSON, body, len, out, NULL);
    json_error_t e;
    json_t *d = json_loadb(out->data, out->len, 0, &e);
    ck_assert_ptr_nonnull(d);
    json_t *err = json_object_get(d, "error");
    if (want_code) {
        ck_assert_msg(!strcmp(json_string_value(json_object_get(err, "code")), want_code), "%s", out->data);
        ck_assert_msg(!strcmp(json_string_value(json_object_get(err, "field")), want_field), "%s", out->data);
        ck_assert_msg(strstr(json_string_value(json_object_get(err, "message")), want_text), "%s", out->data);
    } else {
        ck_assert_msg(!json_is_object(err), "%s", out->data); /* a solve: "error" is the distance */
    }
    json_decref(d);
    return st;
}

START_TEST(bad_documents_say_what_is_wrong)
{
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 64), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    ck_assert_int_eq(solve_msg(&s, IKD_ENC_MSGPACK, "", 0, &out, "malformed_request", "", "empty"), 400);
    ck_assert_int_eq(solve_msg(&s, IKD_ENC_MSGPACK, "\x81\xc1\x00", 3, &out, "malformed_request", "", "0xc1"), 400);
    ck_assert_int_eq(solve_msg(&s, IKD_ENC_MSGPACK, "\x81\xa1x\xdc\xff\xff", 6, &out, "malformed_request", "",
                               "runs past the body"), 400);
    char deep[40];
    for (int d = 1; d <= 33; d++) {
        memset(deep, 0x91, (size_t)d);
        deep[d] = 0;
        if (d <= 32)
            ck_assert_int_eq(solve_msg(&s, IKD_ENC_MSGPACK, deep, (size_t)d + 1, &out, "invalid_request", "",
                                       "must be an object"), 400);
        else
            ck_assert_int_eq(solve_msg(&s, IKD_ENC_MSGPACK, deep, (size_t)d + 1, &out, "malformed_request", "",
                                       "nested deeper than 32"), 400);
    }
    const char *big = "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,18446744073709551616]}";
    ck_assert_int_eq(solve_msg(&s, IKD_ENC_JSON, big, strlen(big), &out, NULL, NULL, NULL), 200);
    const char *bigopt = "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0],"
                         "\"options\":{\"max_iterations\":99999999999999999999}}";
    ck_assert_int_eq(solve_msg(&s, IKD_ENC_JSON, bigopt, strlen(bigopt), &out, "invalid_request",
                               "options.max_iterations", "integer"), 400);
    /* {"chain":{"joints":[{"name":"\xff","position":[0,0,0]},[0,1,0],[0,2,0]]},"target":[1,1,0]} */
    static const char badname[] = "\x82\xa5" "chain\x81\xa6" "joints\x93\x82\xa4" "name\xa1\xff\xa8" "position"
                                  "\x93\x00\x00\x00\x93\x00\x01\x00\x93\x00\x02\x00\xa6" "target\x93\x01\x01\x00";
    ck_assert_int_eq(solve_msg(&s, IKD_ENC_MSGPACK, badname, sizeof badname - 1, &out, "invalid_request",
                               "chain.joints[0].name", "UTF-8"), 400);
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
    ikd_api_limits lim3 = {3, 1000, 10, NULL, 0, 0, NULL, NULL};
    ck_assert_int_eq(ikd_api_solve(&s, &lim3, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, NULL), 400);
    ck_assert_ptr_nonnull(strstr(out.data, "\"field\":\"chain.joints\""));
    ck_assert_ptr_nonnull(strstr(out.data, "--max-joints"));
    ikd_buf_destroy(&out);
    ikd_api_scratch_destroy(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("fixtures");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fixtures_through_the_handler);
    tcase_add_test(tc, max_joints_limit);
    tcase_add_test(tc, fixtures_in_msgpack_give_the_same_replies);
    tcase_add_test(tc, malformed_msgpack);
    tcase_add_test(tc, bad_documents_say_what_is_wrong);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
